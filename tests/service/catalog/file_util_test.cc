#include "service/catalog/file_util.h"

#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

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

TEST(ReadRegularFile, ReadsARegularFileAndASymlinkInsideTheTree) {
  capplan::testing::TempDir dir;
  dir.Write("data/a.txtpb", "abc");
  fs::create_symlink(dir.path() / "data/a.txtpb", dir.path() / "data/link.txtpb");
  const std::string root = (dir.path() / "data").string();
  absl::StatusOr<std::string> direct = ReadRegularFile(root + "/a.txtpb", 3, root);
  ASSERT_TRUE(direct.ok()) << direct.status();
  EXPECT_EQ(*direct, "abc");
  absl::StatusOr<std::string> linked = ReadRegularFile(root + "/link.txtpb", 3, root);
  ASSERT_TRUE(linked.ok()) << linked.status();
  EXPECT_EQ(*linked, "abc");
}

TEST(ReadRegularFile, FifoIsRefusedWithoutBlocking) {
  capplan::testing::TempDir dir;
  const std::string fifo = (dir.path() / "f.txtpb").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  // No writer ever opens it: a blocking open would wait forever.
  EXPECT_THAT(ReadRegularFile(fifo, 100),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(fifo + ": is a FIFO; must be a regular file")));
}

TEST(ReadRegularFile, DeviceIsRefusedBeforeReading) {
  EXPECT_THAT(ReadRegularFile("/dev/zero", 100),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("/dev/zero: is a character device; must be a regular file")));
}

TEST(ReadRegularFile, SymlinkOutOfTheTreeIsRefused) {
  capplan::testing::TempDir dir;
  dir.Write("outside.txt", "secret");
  fs::create_directories(dir.path() / "data");
  fs::create_symlink(dir.path() / "outside.txt", dir.path() / "data/a.txtpb");
  fs::create_symlink("/dev/zero", dir.path() / "data/zero.txtpb");
  const std::string root = (dir.path() / "data").string();
  EXPECT_THAT(
      ReadRegularFile(root + "/a.txtpb", 100, root),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               HasSubstr(root + "/a.txtpb: resolves to " + (dir.path() / "outside.txt").string() +
                         ", outside the directory " + root)));
  EXPECT_THAT(ReadRegularFile(root + "/zero.txtpb", 100, root),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("resolves to /dev/zero, outside the directory")));
}

TEST(ReadRegularFile, SizeIsCheckedBeforeReading) {
  capplan::testing::TempDir dir;
  const std::string path = (dir.path() / "big").string();
  // A sparse 100 MB file: refused from fstat's size, nothing is read.
  { std::ofstream create(path); }
  ASSERT_EQ(::truncate(path.c_str(), 100 << 20), 0);
  EXPECT_THAT(ReadRegularFile(path, 4 << 20),
              StatusIs(absl::StatusCode::kOutOfRange,
                       HasSubstr(path + ": is 104857600 bytes; the limit is 4194304 bytes")));
  dir.Write("exact", std::string(10, 'x'));
  EXPECT_TRUE(ReadRegularFile((dir.path() / "exact").string(), 10).ok());
  EXPECT_THAT(ReadRegularFile((dir.path() / "exact").string(), 9),
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("is 10 bytes; the limit is 9")));
}

TEST(ReadRegularFile, DirectoryAndMissingFile) {
  capplan::testing::TempDir dir;
  EXPECT_THAT(ReadRegularFile(dir.path().string(), 100),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("is a directory")));
  EXPECT_THAT(ReadRegularFile((dir.path() / "absent").string(), 100),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("absent: cannot open")));
}

// A writer killed in the middle of writing its data (SIGXFSZ from a file
// size limit below the data's size, so the kill lands mid-write every time)
// leaves nothing in the folder: not the target, not a temporary.
TEST(WriteFileAtomically, KillMidWriteLeavesNoFile) {
  capplan::testing::TempDir dir;
  const std::string target = (dir.path() / "report.xml").string();
  for (WriteMode mode : {WriteMode::kReplace, WriteMode::kCreateOnly}) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      rlimit limit{1 << 16, 1 << 16};
      setrlimit(RLIMIT_FSIZE, &limit);
      (void)WriteFileAtomically(target, std::string(1 << 20, 'x'), mode);
      _exit(0);
    }
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer was not killed: " << status;
    EXPECT_EQ(WTERMSIG(status), SIGXFSZ);
    std::vector<std::string> left;
    for (const fs::directory_entry& e : fs::directory_iterator(dir.path())) {
      left.push_back(e.path().filename().string());
    }
    EXPECT_THAT(left, ::testing::IsEmpty());
  }
}

TEST(WriteFileAtomically, CreateOnlyRefusesAnExistingFileAndKeepsIt) {
  capplan::testing::TempDir dir;
  dir.Write("a", "first");
  const std::string path = (dir.path() / "a").string();
  EXPECT_THAT(WriteFileAtomically(path, "second", WriteMode::kCreateOnly),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("it exists")));
  EXPECT_EQ(*ReadFileLimited(path, 100), "first");
  ASSERT_TRUE(WriteFileAtomically(path, "third").ok());
  EXPECT_EQ(*ReadFileLimited(path, 100), "third");
  std::vector<std::string> names;
  for (const fs::directory_entry& e : fs::directory_iterator(dir.path())) {
    names.push_back(e.path().filename().string());
  }
  EXPECT_THAT(names, ::testing::ElementsAre("a"));
}

}  // namespace
}  // namespace capplan::service
