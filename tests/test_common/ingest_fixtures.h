#ifndef CAPPLAN_TESTS_TEST_COMMON_INGEST_FIXTURES_H_
#define CAPPLAN_TESTS_TEST_COMMON_INGEST_FIXTURES_H_

// The ingest parser fixtures of tests/data/ingest/ (see its README): read one
// as bytes, or parse it as capplan ingest would (by its file name).

#include <fstream>
#include <sstream>
#include <string>

#include "gtest/gtest.h"
#include "service/translate/ingest.h"

namespace capplan::testing {

inline std::string IngestFixture(const std::string& path) {
  std::ifstream in(std::string(CAPPLAN_SOURCE_DIR) + "/tests/data/ingest/" + path,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline service::IngestedFile ParseIngestFixture(const std::string& path) {
  const std::string name = path.substr(path.rfind('/') + 1);
  absl::StatusOr<service::IngestedFile> f =
      service::ParseMeasurementFile(name, IngestFixture(path));
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : service::IngestedFile();
}

}  // namespace capplan::testing

#endif  // CAPPLAN_TESTS_TEST_COMMON_INGEST_FIXTURES_H_
