#include "service/catalog/store.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <random>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "service/catalog/file_util.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

namespace fs = std::filesystem;
using ::capplan::testing::StatusIs;
using ::capplan::testing::TempDir;
using ::testing::HasSubstr;

// A baseline whose file is large enough (hundreds of kB) that a kill lands
// mid-write.
v1::Baseline BigBaseline(const std::string& id, int rows) {
  v1::Baseline b;
  b.set_id(id);
  b.set_title("fixture");
  b.mutable_provenance()->set_source_document("test fixture");
  v1::DeploymentConfig* d = b.mutable_deployment();
  d->set_hardware_id("test-gpu-24gb");
  d->set_gpu_count(1);
  d->set_model_id("test-model");
  v1::Sweep* s = b.add_sweeps();
  s->set_name("s");
  s->set_closed_loop(true);
  for (int i = 1; i <= rows; ++i) {
    v1::SweepRow* r = s->add_rows();
    r->set_concurrency(i);
    r->set_output_tokens_per_second(10.0 * i);
    r->set_note(std::string(200, 'x'));
  }
  return b;
}

TEST(DirectoryStore, PutWritesAParsableFileAndRefusesAnExistingId) {
  TempDir dir;
  capplan::testing::WriteMiniCatalogue(dir);
  auto store = DirectoryStore::Open(dir.path().string());
  ASSERT_TRUE(store.ok()) << store.status();
  absl::StatusOr<StoredEntity> put = (*store)->PutBaseline(BigBaseline("new-one", 3), false);
  ASSERT_TRUE(put.ok()) << put.status();
  EXPECT_EQ(put->location, "baselines/new-one.txtpb");
  EXPECT_FALSE(put->replaced);
  EXPECT_THAT((*store)->PutBaseline(BigBaseline("new-one", 3), false),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("replace")));
  absl::StatusOr<StoredEntity> replaced = (*store)->PutBaseline(BigBaseline("new-one", 4), true);
  ASSERT_TRUE(replaced.ok());
  EXPECT_TRUE(replaced->replaced);
  auto catalog = (*store)->Load();
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  ASSERT_NE((*catalog)->FindBaseline("new-one"), nullptr);
  EXPECT_EQ((*catalog)->FindBaseline("new-one")->sweeps(0).rows_size(), 4);
}

TEST(DirectoryStore, RefusesIdsThatAreNotKebabCaseOrEscapeTheFolder) {
  TempDir dir;
  capplan::testing::WriteMiniCatalogue(dir);
  auto store = DirectoryStore::Open(dir.path().string());
  ASSERT_TRUE(store.ok());
  for (const char* id : {"", "../escape", "Upper", "a/b", "-x", "a..b"}) {
    EXPECT_THAT((*store)->PutBaseline(BigBaseline(id, 1), false),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("kebab-case")))
        << id;
  }
}

TEST(WriteFileAtomically, RefusesASymlinkTarget) {
  TempDir dir;
  dir.Write("real", "keep");
  fs::create_symlink(dir.path() / "real", dir.path() / "link");
  EXPECT_THAT(WriteFileAtomically((dir.path() / "link").string(), "x"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("symbolic link")));
  std::string kept;
  ASSERT_TRUE(ReadFileLimited((dir.path() / "real").string(), 100).ok());
}

// kill -9 at random moments of a write loop (bounded: 25 kills): the folder
// holds only whole files, and opening the store removes every temporary.
TEST(DirectoryStore, KillDuringWritesLeavesOnlyWholeFiles) {
  TempDir dir;
  capplan::testing::WriteMiniCatalogue(dir);
  std::mt19937 random(20261201);
  for (int kill = 0; kill < 25; ++kill) {
    const pid_t child = fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
      auto store = DirectoryStore::Open(dir.path().string());
      if (!store.ok()) _exit(3);
      for (int i = 0;; ++i) {
        (void)(*store)->PutBaseline(BigBaseline("churn-" + std::to_string(i % 3), 2000), true);
      }
    }
    usleep(std::uniform_int_distribution<int>(2000, 40000)(random));
    ::kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "the writer exited by itself: " << status;
  }
  auto store = DirectoryStore::Open(dir.path().string());
  ASSERT_TRUE(store.ok()) << store.status();
  for (const fs::directory_entry& e : fs::directory_iterator(dir.path() / "baselines")) {
    EXPECT_FALSE(IsTemporaryFileName(e.path().filename().string())) << e.path();
  }
  auto catalog = (*store)->Load();
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  int churned = 0;
  for (const v1::Baseline& b : (*catalog)->baselines()) {
    if (b.id().rfind("churn-", 0) != 0) continue;
    ++churned;
    EXPECT_EQ(b.sweeps(0).rows_size(), 2000) << b.id() << " is torn";
  }
  EXPECT_GE(churned, 1) << "no write completed in 25 runs: the test proves nothing";
}

}  // namespace
}  // namespace capplan::service
