#include "service/catalog/file_util.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

TEST(ReadFileLimited, ReadsWholeFilesUpToTheLimit) {
  capplan::testing::TempDir dir;
  const std::string text(100000, 'x');
  dir.Write("a.txt", text);
  const std::string path = (dir.path() / "a.txt").string();
  absl::StatusOr<std::string> whole = ReadFileLimited(path, 100000);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(*whole, text);
  EXPECT_THAT(
      ReadFileLimited(path, 99999),
      StatusIs(absl::StatusCode::kOutOfRange, HasSubstr(path + ": larger than 99999 bytes")));
}

TEST(ReadFileLimited, EndlessDeviceStopsAtTheLimit) {
  // 1 << 20 = 1048576.
  EXPECT_THAT(
      ReadFileLimited("/dev/zero", 1 << 20),
      StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("/dev/zero: larger than 1048576 bytes")));
}

TEST(ReadFileLimited, MissingFileIsNotFound) {
  EXPECT_THAT(
      ReadFileLimited("/nonexistent-capplan/x", 10),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("/nonexistent-capplan/x: cannot open")));
}

}  // namespace
}  // namespace capplan::service
