#include "service/catalog/catalog.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <future>
#include <iostream>
#include <sstream>
#include <string>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::capplan::testing::TempDir;
using ::capplan::testing::WriteMiniCatalogue;
using ::testing::AllOf;
using ::testing::HasSubstr;
namespace fs = std::filesystem;

TEST(Catalog, LoadsMiniCatalogueAndIndexesIds) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ((*catalog)->hardware().size(), 1u);
  ASSERT_NE((*catalog)->FindHardware("test-gpu-24gb"), nullptr);
  EXPECT_EQ((*catalog)->FindHardware("nope"), nullptr);
  EXPECT_EQ((*catalog)->OriginOf("test-model"), "models/test-model.txtpb");
}

TEST(Catalog, FindsModelByRepoIdCaseInsensitively) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  const v1::Model* model = (*catalog)->FindModel("test/test-model-1b");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->id(), "test-model");
}

TEST(Catalog, ParseErrorNamesFileLineAndColumn) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  dir.Write("hardware/test-gpu-24gb.txtpb", R"(# proto-file: capplan/v1/catalog.proto
# proto-message: Hardware
id: "test-gpu-24gb"
vendr: "Test"
)");
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  EXPECT_THAT(catalog,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("hardware/test-gpu-24gb.txtpb:4:6:"), HasSubstr("vendr"))));
}

TEST(Catalog, ValidationErrorPointsAtTheField) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  dir.Write("baselines/test-baseline.txtpb", R"(# proto-file: capplan/v1/catalog.proto
# proto-message: Baseline
id: "test-baseline"
provenance { source_document: "x" }
deployment {
  hardware_id: "test-gpu-24gb"
  model_id: "test-model"
  gpu_count: 1
  engine { gpu_memory_utilization: 1.5 }
}
)");
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  EXPECT_THAT(catalog, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("baselines/test-baseline.txtpb:9:12: "
                                          "deployment.engine.gpu_memory_utilization = 1.5; must "
                                          "be in (0, 1]")));
}

TEST(Catalog, KvTiersLoadAndAreValidatedAtTheirField) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  const char* kTier = R"(# proto-file: capplan/v1/catalog.proto
# proto-message: KvStorageTierSpec
id: "test-nvme"
tier: STORAGE_TIER_LOCAL_NVME
name: "a drive"
read_bandwidth_bytes_per_second: %s
sources { fields: "read_bandwidth_bytes_per_second" document: "https://example.com/drive" }
)";
  dir.Write("tiers/test-nvme.txtpb", absl::StrFormat(kTier, "6.5e9"));
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  ASSERT_NE((*catalog)->FindKvTier("test-nvme"), nullptr);
  EXPECT_EQ((*catalog)->FindKvTier("test-nvme")->read_bandwidth_bytes_per_second(), 6.5e9);
  EXPECT_EQ((*catalog)->OriginOf("test-nvme"), "tiers/test-nvme.txtpb");
  // 6.5e15 bytes/s: a unit slip (GB/s written as MB/s), refused at its line.
  dir.Write("tiers/test-nvme.txtpb", absl::StrFormat(kTier, "6.5e15"));
  EXPECT_THAT(Catalog::LoadFromDirectory(dir.path().string()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("tiers/test-nvme.txtpb:6:"),
                             HasSubstr("read_bandwidth_bytes_per_second = 6.5e+15; must be in"))));
  // A figure without a citation is refused.
  dir.Write("tiers/test-nvme.txtpb", R"(# proto-file: capplan/v1/catalog.proto
# proto-message: KvStorageTierSpec
id: "test-nvme"
tier: STORAGE_TIER_LOCAL_NVME
read_bandwidth_bytes_per_second: 6.5e9
latency_seconds: 0.0001
sources { fields: "read_bandwidth_bytes_per_second" document: "https://example.com/drive" }
)");
  EXPECT_THAT(
      Catalog::LoadFromDirectory(dir.path().string()),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("latency_seconds has no citation")));
}

// An engine preset's rule for older cards names another preset of its engine.
TEST(Catalog, AComputeCapabilityFallBackToAMissingPresetIsAnError) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  dir.Write("engines/test-v1.txtpb", R"(# proto-file: capplan/v1/catalog.proto
# proto-message: EnginePreset
id: "test-v1"
engine: ENGINE_KIND_VLLM
min_compute_capability: "8.0"
below_compute_capability_preset: "test-v0"
)");
  EXPECT_THAT(Catalog::LoadFromDirectory(dir.path().string()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("engines/test-v1.txtpb: below_compute_capability_preset = "
                                 "\"test-v0\"; must name another preset of the same engine")));
  dir.Write("engines/test-v0.txtpb", R"(# proto-file: capplan/v1/catalog.proto
# proto-message: EnginePreset
id: "test-v0"
engine: ENGINE_KIND_VLLM
)");
  EXPECT_TRUE(Catalog::LoadFromDirectory(dir.path().string()).ok());
}

TEST(Catalog, UnknownReferenceIsAnError) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  dir.Write("baselines/other.txtpb", R"(# proto-file: capplan/v1/catalog.proto
# proto-message: Baseline
id: "other"
provenance { source_document: "x" }
deployment { hardware_id: "no-such-gpu" model_id: "test-model" gpu_count: 1 }
)");
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  EXPECT_THAT(catalog, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("baselines/other.txtpb: deployment.hardware_id = "
                                          "\"no-such-gpu\"; must name a hardware entry")));
}

TEST(Catalog, IdMustMatchFileName) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  std::ifstream original(dir.path() / "models/test-model.txtpb");
  std::stringstream text;
  text << original.rdbuf();
  dir.Write("models/renamed.txtpb", text.str());
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  EXPECT_THAT(catalog, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("models/renamed.txtpb:1:1: id = \"test-model\"; must "
                                          "equal the file name")));
}

TEST(Catalog, WrongHeaderMessageIsAnError) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  dir.Write("models/x.txtpb",
            "# proto-file: capplan/v1/catalog.proto\n"
            "# proto-message: Hardware\nid: \"x\"\n");
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  EXPECT_THAT(catalog, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("models/x.txtpb:2:3: header names message 'Hardware'")));
}

TEST(Catalog, DuplicateRepoIdIsAnError) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  std::string copy = R"(# proto-file: capplan/v1/catalog.proto
# proto-message: Model
id: "test-model-copy"
aliases: "TEST/test-model-1b"
hidden_size: 2048
intermediate_size: 8192
num_attention_heads: 16
num_kv_heads: 4
vocab_size: 32000
layer_blocks { repeat: 1 layers { count: 2 attention: ATTENTION_KIND_FULL mlp: MLP_KIND_DENSE } }
native_context_tokens: 8192
native_dtype: NUMBER_FORMAT_BF16
sources { fields: "hidden_size" fields: "intermediate_size" fields: "num_attention_heads"
          fields: "num_kv_heads" fields: "vocab_size" fields: "layer_blocks"
          fields: "native_context_tokens" document: "x" }
)";
  dir.Write("models/test-model-copy.txtpb", copy);
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  EXPECT_THAT(catalog, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("aliases = \"test/test-model-1b\"; must be unique")));
}

TEST(Catalog, MissingDirectoryIsNotFound) {
  auto catalog = Catalog::LoadFromDirectory("/nonexistent/capplan/data");
  EXPECT_THAT(catalog, StatusIs(absl::StatusCode::kNotFound,
                                HasSubstr("catalogue directory '/nonexistent/capplan/data' does "
                                          "not exist")));
}

// LoadFromDirectory on its own thread, failing (and ending the binary: a hung
// thread cannot be stopped) when it takes longer than 20 s.
absl::StatusOr<std::shared_ptr<const Catalog>> LoadWithin20s(const TempDir& dir,
                                                             const CatalogLimits& limits = {}) {
  const std::string path = dir.path().string();
  auto pending = std::async(std::launch::async,
                            [path, limits] { return Catalog::LoadFromDirectory(path, limits); });
  if (pending.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    ADD_FAILURE() << "Catalog::LoadFromDirectory hung on " << path;
    std::cerr << "the load hung; ending the test binary\n";
    std::_Exit(1);
  }
  return pending.get();
}

TEST(Catalog, EmptyFolderIsRefused) {
  TempDir dir;
  EXPECT_THAT(LoadWithin20s(dir), StatusIs(absl::StatusCode::kFailedPrecondition,
                                           HasSubstr("catalogue '" + dir.path().string() +
                                                     "' holds 0 hardware and 0 model entries")));
}

TEST(Catalog, CatalogueWithoutModelsIsRefused) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  fs::remove_all(dir.path() / "baselines");
  fs::remove_all(dir.path() / "models");
  EXPECT_THAT(LoadWithin20s(dir), StatusIs(absl::StatusCode::kFailedPrecondition,
                                           HasSubstr("holds 1 hardware and 0 model entries")));
}

TEST(Catalog, FifoIsRefusedWithoutHanging) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  const std::string fifo = (dir.path() / "hardware/pipe.txtpb").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_THAT(LoadWithin20s(dir),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(fifo + ": is a FIFO; must be a regular file")));
}

TEST(Catalog, SymlinkToDevZeroIsRefusedBeforeReading) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  fs::create_symlink("/dev/zero", dir.path() / "baselines/zero.txtpb");
  EXPECT_THAT(LoadWithin20s(dir),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("zero.txtpb: resolves to /dev/zero, outside the directory")));
}

TEST(Catalog, SymlinksInsideTheTreeLoadAsAConfigMapMountsThem) {
  // A Kubernetes ConfigMap volume: <dir>/..data -> ..2025_01_01, files are
  // links through ..data.
  TempDir dir;
  TempDir staging;
  WriteMiniCatalogue(staging);
  fs::create_directories(dir.path() / "..2025_01_01");
  fs::copy(staging.path(), dir.path() / "..2025_01_01", fs::copy_options::recursive);
  fs::create_directory_symlink("..2025_01_01", dir.path() / "..data");
  for (const char* folder : {"hardware", "models", "baselines"}) {
    fs::create_directory_symlink(std::string("..data/") + folder, dir.path() / folder);
  }
  auto catalog = LoadWithin20s(dir);
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ((*catalog)->baselines().size(), 1u);
}

TEST(Catalog, FileAboveTheSizeCapIsRefusedBeforeReading) {
  // The reported case: 100 MB of duplicate entries took 6 s and 661 MiB.
  // A sparse file of that size is refused from its size alone.
  TempDir dir;
  WriteMiniCatalogue(dir);
  const fs::path big = dir.path() / "baselines/huge.txtpb";
  std::ofstream(big) << "";
  ASSERT_EQ(::truncate(big.c_str(), 100 << 20), 0);
  const auto start = std::chrono::steady_clock::now();
  EXPECT_THAT(LoadWithin20s(dir),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("huge.txtpb: is 104857600 bytes; the limit is 4194304 bytes")));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
}

TEST(Catalog, TotalSizeAndFileCountAreCapped) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  CatalogLimits limits;
  limits.max_total_bytes = 1000;  // the mini catalogue is about 2 KB
  EXPECT_THAT(LoadWithin20s(dir, limits),
              StatusIs(absl::StatusCode::kOutOfRange,
                       HasSubstr("the catalogue's files exceed 1000 bytes in all")));
  limits = CatalogLimits();
  limits.max_files = 2;
  EXPECT_THAT(
      LoadWithin20s(dir, limits),
      StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("the catalogue holds more than 2 files")));
}

TEST(Catalog, InvalidUtf8IsRefusedAtItsLine) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  dir.Write("hardware/test-gpu-24gb.txtpb", R"(# proto-file: capplan/v1/catalog.proto
# proto-message: Hardware
id: "test-gpu-24gb"
vendor: "Test"
name: "Test GPU )"
                                            "\xff\xfe"
                                            R"("
memory_bytes: 25769803776
)");
  EXPECT_THAT(LoadWithin20s(dir),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hardware/test-gpu-24gb.txtpb:5:1: name = \"Test GPU "
                                 "\\xff\\xfe\"; must be valid UTF-8 (byte 10 is not)")));
}

TEST(Catalog, EscapedInvalidUtf8IsRefusedToo) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  dir.Write("hardware/test-gpu-24gb.txtpb", R"(# proto-file: capplan/v1/catalog.proto
# proto-message: Hardware
id: "test-gpu-24gb"
vendor: "Test"
aliases: "ok"
aliases: "bad\300\257"
)");
  EXPECT_THAT(LoadWithin20s(dir),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("hardware/test-gpu-24gb.txtpb:6:1: aliases[1] = ")));
}

TEST(Catalog, DuplicateEntriesAreRefusedAtTheirLine) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  dir.Write("baselines/test-baseline.txtpb", R"(# proto-file: capplan/v1/catalog.proto
# proto-message: Baseline
id: "test-baseline"
title: "fixture"
provenance { source_document: "test fixture" }
deployment {
  hardware_id: "test-gpu-24gb"
  gpu_count: 1
  model_id: "test-model"
  engine { kind: ENGINE_KIND_VLLM version: "0.11.0" }
}
sweeps { name: "s" closed_loop: true
  rows { concurrency: 1 output_tokens_per_second: 50 ttft { p50_seconds: 0.1 } } }
sweeps { name: "s" closed_loop: true
  rows { concurrency: 4 output_tokens_per_second: 180 ttft { p50_seconds: 0.12 } }
  rows { concurrency: 4 output_tokens_per_second: 180 ttft { p50_seconds: 0.12 } } }
)");
  EXPECT_THAT(LoadWithin20s(dir),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("baselines/test-baseline.txtpb:14:10: sweeps[1].name = "
                                       "\"s\"; must be unique (sweeps[0].name has it)"),
                             HasSubstr("baselines/test-baseline.txtpb:16:3: sweeps[1].rows[1]; "
                                       "must not repeat sweeps[1].rows[0]"))));
}

TEST(Catalog, BundledCatalogueHasNoDuplicatesAndOnlyValidUtf8) {
  auto catalog = Catalog::LoadFromDirectory(capplan::testing::BundledDataDir());
  ASSERT_TRUE(catalog.ok()) << catalog.status();
}

}  // namespace
}  // namespace capplan::service
