#include "service/cli/deployment_flags.h"

#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::IsOk;
using ::capplan::testing::StatusIs;
using ::testing::Contains;
using ::testing::Eq;
using ::testing::StartsWith;

CliArgs Args(const std::vector<std::string>& argv) {
  absl::flat_hash_set<std::string> switches(DeploymentSwitches().begin(),
                                            DeploymentSwitches().end());
  absl::flat_hash_set<std::string> valued(DeploymentValuedFlags().begin(),
                                          DeploymentValuedFlags().end());
  for (const char* f : {"input-tokens", "output-tokens", "ttft-p95", "tpot", "e2e-p95"}) {
    valued.insert(f);
  }
  valued.insert(WorkloadShapeFlags().begin(), WorkloadShapeFlags().end());
  switches.insert("synchronized");
  absl::StatusOr<CliArgs> args = CliArgs::Parse(argv, switches, valued);
  EXPECT_TRUE(args.ok()) << args.status();
  return args.ok() ? *std::move(args) : *CliArgs::Parse({}, {}, {});
}

TEST(DeploymentFlags, NamedAsTheEnginesNameThem) {
  EXPECT_THAT(DeploymentValuedFlags(), Contains("gpu-memory-utilization"));
  EXPECT_THAT(DeploymentValuedFlags(), Contains("mem-fraction-static"));
  EXPECT_THAT(DeploymentValuedFlags(), Contains("max-model-len"));
  EXPECT_THAT(DeploymentValuedFlags(), Contains("hardware-file"));
  EXPECT_THAT(DeploymentValuedFlags(), Contains("kv-pool-tokens"));
  EXPECT_THAT(DeploymentValuedFlags(), Contains("sampler-backend"));
  EXPECT_THAT(DeploymentValuedFlags(), Contains("free-memory-gib"));
  EXPECT_EQ(DeploymentValuedFlags().size(), 26u);
  EXPECT_THAT(DeploymentSwitches(),
              ::testing::ElementsAre("enforce-eager", "dp-attention", "enable-prefix-caching",
                                     "no-enable-prefix-caching", "language-model-only"));
}

TEST(DeploymentFromFlags, LanguageModelOnlyLandsInTheEngineSettings) {
  absl::StatusOr<v1::Deployment> d = DeploymentFromFlags(
      Args({"--model", "qwen3.5-27b", "--gpu", "nvidia-h100-sxm-80gb", "--language-model-only"}));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->engine().language_model_only());
  d = DeploymentFromFlags(Args({"--model", "qwen3.5-27b", "--gpu", "nvidia-h100-sxm-80gb"}));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_FALSE(d->engine().has_language_model_only());
}

TEST(DeploymentFromFlags, SamplerBackendLandsInTheEngineSettings) {
  absl::StatusOr<v1::Deployment> d = DeploymentFromFlags(Args(
      {"--model", "qwen3-8b", "--gpu", "nvidia-h100-sxm-80gb", "--sampler-backend", "native"}));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->engine().sampler_backend(), v1::SAMPLER_BACKEND_NATIVE);
  d = DeploymentFromFlags(Args({"--model", "qwen3-8b", "--gpu", "nvidia-h100-sxm-80gb"}));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->engine().sampler_backend(), v1::SAMPLER_BACKEND_UNSPECIFIED);
}

TEST(DeploymentFromFlags, FreeMemoryAtStartIsGibPerGpuInBytes) {
  absl::StatusOr<v1::Deployment> d = DeploymentFromFlags(
      Args({"--model", "qwen3-8b", "--gpu", "nvidia-rtx-3090-24gb", "--free-memory-gib", "22.76"}));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(d->engine().free_memory_at_start_bytes(), 24438363914u);  // 22.76 x 2^30
  d = DeploymentFromFlags(Args({"--model", "qwen3-8b", "--gpu", "nvidia-rtx-3090-24gb"}));
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_FALSE(d->engine().has_free_memory_at_start_bytes());
}

TEST(DeploymentFromFlags, StatedKvPoolLandsInTheEngineSettings) {
  absl::StatusOr<v1::Deployment> d = DeploymentFromFlags(
      Args({"--model", "qwen3-8b", "--gpu", "nvidia-h100-sxm-80gb", "--kv-pool-tokens", "531372"}));
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_TRUE(d->engine().has_kv_pool_tokens());
  EXPECT_EQ(d->engine().kv_pool_tokens(), 531372u);
  absl::StatusOr<v1::Deployment> zero = DeploymentFromFlags(
      Args({"--model", "qwen3-8b", "--gpu", "nvidia-h100-sxm-80gb", "--kv-pool-tokens", "0"}));
  EXPECT_EQ(zero.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(zero.status().message()), ::testing::HasSubstr("--kv-pool-tokens"));
}

TEST(DeploymentFromFlags, EveryFlagLandsInItsField) {
  absl::StatusOr<v1::Deployment> d = DeploymentFromFlags(Args({"--model",
                                                               "qwen3-8b",
                                                               "--gpu",
                                                               "nvidia-h100-sxm-80gb",
                                                               "--gpus",
                                                               "8",
                                                               "--tp",
                                                               "2",
                                                               "--pp",
                                                               "2",
                                                               "--ep",
                                                               "4",
                                                               "--dp-attention",
                                                               "--engine",
                                                               "SGLang",
                                                               "--engine-version",
                                                               "0.4.9",
                                                               "--gpu-memory-utilization",
                                                               "0.85",
                                                               "--mem-fraction-static",
                                                               "0.8",
                                                               "--max-model-len",
                                                               "8192",
                                                               "--max-num-batched-tokens",
                                                               "4096",
                                                               "--max-num-seqs",
                                                               "64",
                                                               "--block-size",
                                                               "16",
                                                               "--max-cudagraph-batch-size",
                                                               "32",
                                                               "--kv-cache-dtype",
                                                               "fp8",
                                                               "--speculative-method",
                                                               "eagle",
                                                               "--num-speculative-tokens",
                                                               "0",
                                                               "--enforce-eager",
                                                               "--quantization",
                                                               "awq"}));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->model_id(), "qwen3-8b");
  EXPECT_FALSE(d->has_model_config_json());
  EXPECT_EQ(d->baseline_id(), "");
  EXPECT_EQ(d->hardware_id(), "nvidia-h100-sxm-80gb");
  EXPECT_EQ(d->gpu_count(), 8u);
  EXPECT_EQ(d->parallelism().tp(), 2u);
  EXPECT_EQ(d->parallelism().pp(), 2u);
  EXPECT_EQ(d->parallelism().ep(), 4u);
  EXPECT_TRUE(d->parallelism().dp_attention());
  const v1::EngineSettings& e = d->engine();
  EXPECT_EQ(e.kind(), v1::ENGINE_KIND_SGLANG);
  EXPECT_EQ(e.version(), "0.4.9");
  EXPECT_EQ(e.gpu_memory_utilization(), 0.85);
  EXPECT_EQ(e.mem_fraction_static(), 0.8);
  EXPECT_EQ(e.max_model_len(), 8192u);
  EXPECT_EQ(e.max_num_batched_tokens(), 4096u);
  EXPECT_EQ(e.max_num_seqs(), 64u);
  EXPECT_EQ(e.block_size(), 16u);
  EXPECT_EQ(e.max_cudagraph_batch_size(), 32u);
  EXPECT_EQ(e.kv_cache_dtype(), v1::KV_CACHE_DTYPE_FP8);
  EXPECT_EQ(e.speculative_method(), v1::SPECULATIVE_METHOD_EAGLE);
  // 0 is a value (speculation off), not "absent".
  ASSERT_TRUE(e.has_num_speculative_tokens());
  EXPECT_EQ(e.num_speculative_tokens(), 0u);
  EXPECT_TRUE(e.enforce_eager());
  EXPECT_EQ(d->weight_format(), v1::WEIGHT_FORMAT_INT4_AWQ);
}

TEST(DeploymentFromFlags, AbsentFlagsStayAbsent) {
  absl::StatusOr<v1::Deployment> d =
      DeploymentFromFlags(Args({"--baseline", testing::k002, "--gpus", "8"}));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->baseline_id(), testing::k002);
  EXPECT_EQ(d->gpu_count(), 8u);
  EXPECT_FALSE(d->has_model_id());
  EXPECT_FALSE(d->parallelism().has_tp());
  EXPECT_FALSE(d->engine().has_max_model_len());
  EXPECT_FALSE(d->engine().has_gpu_memory_utilization());
  EXPECT_FALSE(d->engine().has_num_speculative_tokens());
  EXPECT_EQ(d->engine().kind(), v1::ENGINE_KIND_UNSPECIFIED);
  EXPECT_EQ(d->weight_format(), v1::WEIGHT_FORMAT_UNSPECIFIED);
  EXPECT_FALSE(d->engine().enforce_eager());
}

TEST(DeploymentFromFlags, ModelConfigFileIsReadIntoTheRequest) {
  testing::TempDir dir;
  dir.Write("config.json", R"({"model_type": "llama"})");
  absl::StatusOr<v1::Deployment> d = DeploymentFromFlags(
      Args({"--model-config", (dir.path() / "config.json").string(), "--gpu", "nvidia-l4-24gb"}));
  ASSERT_THAT(d, IsOk());
  EXPECT_EQ(d->model_config_json(), R"({"model_type": "llama"})");
  EXPECT_FALSE(d->has_model_id());
}

struct BadFlags {
  std::string name;
  std::vector<std::string> argv;
  std::string message;
};

class DeploymentFromFlagsErrors : public ::testing::TestWithParam<BadFlags> {};

TEST_P(DeploymentFromFlagsErrors, NameTheFlagTheValueAndTheRule) {
  EXPECT_THAT(DeploymentFromFlags(Args(GetParam().argv)),
              StatusIs(absl::StatusCode::kInvalidArgument, Eq(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, DeploymentFromFlagsErrors,
    ::testing::Values(
        BadFlags{"ModelAndModelConfig",
                 {"--model", "a", "--model-config", "b"},
                 "--model and --model-config exclude each other"},
        BadFlags{"NoModel",
                 {"--gpu", "nvidia-l4-24gb"},
                 "give the model: --model ID (catalogue or Hugging Face id), --model-config FILE "
                 "(a config.json) or --baseline ID"},
        BadFlags{
            "ZeroGpus", {"--model", "m", "--gpus", "0"}, "--gpus = 0; must be a whole number >= 1"},
        BadFlags{
            "TextTp", {"--model", "m", "--tp", "two"}, "--tp = two; must be a whole number >= 1"},
        BadFlags{
            "NegativePp", {"--model", "m", "--pp", "-1"}, "--pp = -1; must be a whole number >= 1"},
        BadFlags{"ZeroEp", {"--model", "m", "--ep", "0"}, "--ep = 0; must be a whole number >= 1"},
        // 2^30 = 1,073,741,824 is the largest count taken.
        BadFlags{"HugeMaxModelLen",
                 {"--model", "m", "--max-model-len", "1073741825"},
                 "--max-model-len = 1073741825; too large"},
        BadFlags{"BeyondThirtyTwoBits",
                 {"--model", "m", "--max-num-seqs", "4294967296"},
                 "--max-num-seqs = 4294967296; must be at most 4294967295"},
        BadFlags{"ZeroBlockSize",
                 {"--model", "m", "--block-size", "0"},
                 "--block-size = 0; must be a whole number >= 1"},
        BadFlags{"NegativeDraftTokens",
                 {"--model", "m", "--num-speculative-tokens", "-1"},
                 "--num-speculative-tokens = -1; must be a whole number >= 0"},
        BadFlags{"ZeroFreeMemory",
                 {"--model", "m", "--free-memory-gib", "0"},
                 "--free-memory-gib = 0; must be in (0, 1048576] GiB (memory free on each GPU at "
                 "start)"},
        BadFlags{"UnknownEngine",
                 {"--model", "m", "--engine", "tgi"},
                 "--engine = tgi; must be one of vllm, sglang, trtllm"},
        BadFlags{"TextFraction",
                 {"--model", "m", "--gpu-memory-utilization", "most"},
                 "--gpu-memory-utilization = most; must be a finite number"},
        BadFlags{"InfiniteFraction",
                 {"--model", "m", "--mem-fraction-static", "inf"},
                 "--mem-fraction-static = inf; must be a finite number"},
        BadFlags{"UnknownKvDtype",
                 {"--model", "m", "--kv-cache-dtype", "int4"},
                 "--kv-cache-dtype = int4; must be one of auto, bf16, fp16, fp8"},
        BadFlags{"UnknownSpeculativeMethod",
                 {"--model", "m", "--speculative-method", "medusa"},
                 "--speculative-method = medusa; must be one of none, mtp, eagle, draft, ngram"},
        BadFlags{"MissingModelConfig",
                 {"--model-config", "/nonexistent-capplan/config.json"},
                 "--model-config = /nonexistent-capplan/config.json; cannot open the file"}),
    [](const ::testing::TestParamInfo<BadFlags>& info) { return info.param.name; });

TEST(DeploymentFromFlags, UnknownQuantizationListsTheNames) {
  EXPECT_THAT(DeploymentFromFlags(Args({"--model", "m", "--quantization", "q4_k"})),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       StartsWith("--quantization = q4_k; must be one of bf16, fp16,")));
}

TEST(ReadFileForFlag, AFileAbove4MiBIsRefused) {
  testing::TempDir dir;
  dir.Write("big.json", std::string(4 * 1024 * 1024 + 1, ' '));
  const std::string path = (dir.path() / "big.json").string();
  EXPECT_THAT(ReadFileForFlag("model-config", path),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("--model-config = " + path + "; the file is larger than 4 MiB")));
  dir.Write("edge.json", std::string(4 * 1024 * 1024, ' '));
  EXPECT_THAT(ReadFileForFlag("model-config", (dir.path() / "edge.json").string()), IsOk());
}

TEST(ReadFileForFlag, ADirectoryCannotBeRead) {
  // A directory opens but does not read (EISDIR): not an empty file.
  testing::TempDir dir;
  const std::string path = dir.path().string();
  EXPECT_THAT(ReadFileForFlag("model-config", path),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("--model-config = " + path + "; cannot read the file")));
}

// ---------------------------------------------------------- workload, SLO

TEST(ApplyWorkloadFlags, BothOrNeither) {
  v1::WorkloadSpec workload;
  int asked = 0;
  auto get = [&]() {
    ++asked;
    return &workload;
  };
  EXPECT_THAT(ApplyWorkloadFlags(Args({}), get), IsOk());
  EXPECT_EQ(asked, 0);  // an absent workload stays absent
  EXPECT_THAT(ApplyWorkloadFlags(Args({"--input-tokens", "100"}), get),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("--input-tokens and --output-tokens go together")));
  EXPECT_THAT(ApplyWorkloadFlags(Args({"--output-tokens", "100"}), get),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("--input-tokens and --output-tokens go together")));
  EXPECT_EQ(asked, 0);
  EXPECT_THAT(ApplyWorkloadFlags(Args({"--input-tokens", "1000", "--output-tokens", "200.5"}), get),
              IsOk());
  EXPECT_EQ(workload.input_tokens(), 1000);
  EXPECT_EQ(workload.output_tokens(), 200.5);
  EXPECT_THAT(ApplyWorkloadFlags(Args({"--input-tokens", "x", "--output-tokens", "1"}), get),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("--input-tokens = x; must be a finite number")));
}

// --num-prompts counts a synchronized benchmark's prompts: alone it is refused.
TEST(ApplyWorkloadFlags, NumPromptsGoesWithSynchronized) {
  v1::WorkloadSpec workload;
  auto get = [&]() { return &workload; };
  EXPECT_THAT(
      ApplyWorkloadFlags(
          Args({"--input-tokens", "1000", "--output-tokens", "200", "--num-prompts", "640"}), get),
      StatusIs(absl::StatusCode::kInvalidArgument,
               Eq("--num-prompts is a synchronized benchmark's prompt count: add --synchronized")));
  EXPECT_THAT(ApplyWorkloadFlags(Args({"--input-tokens", "1000", "--output-tokens", "200",
                                       "--synchronized", "--num-prompts", "640"}),
                                 get),
              IsOk());
  EXPECT_TRUE(workload.synchronized());
  EXPECT_EQ(workload.num_prompts(), 640u);
  EXPECT_THAT(ApplyWorkloadFlags(Args({"--input-tokens", "1000", "--output-tokens", "200",
                                       "--synchronized", "--num-prompts", "0"}),
                                 get),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr("--num-prompts = 0")));
}

TEST(ApplySloFlags, EachOnlyWhenGiven) {
  v1::Slo slo;
  int asked = 0;
  auto get = [&]() {
    ++asked;
    return &slo;
  };
  EXPECT_THAT(ApplySloFlags(Args({}), get), IsOk());
  EXPECT_EQ(asked, 0);
  EXPECT_THAT(ApplySloFlags(Args({"--ttft-p95", "1.5", "--e2e-p95", "30"}), get), IsOk());
  EXPECT_EQ(slo.ttft_p95_seconds(), 1.5);
  EXPECT_FALSE(slo.has_tpot_seconds());
  EXPECT_EQ(slo.e2e_p95_seconds(), 30);
  EXPECT_THAT(
      ApplySloFlags(Args({"--tpot", "fast"}), get),
      StatusIs(absl::StatusCode::kInvalidArgument, Eq("--tpot = fast; must be a finite number")));
}

}  // namespace
}  // namespace capplan::service
