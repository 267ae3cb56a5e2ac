#include "service/catalog/file_util.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::testing::HasSubstr;

TEST(ReadFileLimited, ReadsWholeFilesUpToTheLimit) {
  capplan::testing::TempDir dir;
  const std::string text(100000, 'x');
  dir.Write("a.txt", text);
  const std::string path = (dir.path() / "a.txt").string();
  absl::StatusOr<std::string> whole = ReadFileLimited(path, 100000);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(*whole, text);
  absl::StatusOr<std::string> over = ReadFileLimited(path, 99999);
  EXPECT_EQ(over.status().code(), absl::StatusCode::kOutOfRange);
  EXPECT_THAT(std::string(over.status().message()), HasSubstr(path));
}

TEST(ReadFileLimited, EndlessDeviceStopsAtTheLimit) {
  absl::StatusOr<std::string> zero = ReadFileLimited("/dev/zero", 1 << 20);
  EXPECT_EQ(zero.status().code(), absl::StatusCode::kOutOfRange);
}

TEST(ReadFileLimited, MissingFileIsNotFound) {
  absl::StatusOr<std::string> missing = ReadFileLimited("/nonexistent-capplan/x", 10);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("cannot open"));
}

}  // namespace
}  // namespace capplan::service
