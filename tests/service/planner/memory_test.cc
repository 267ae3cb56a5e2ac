#include "service/planner/memory.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::IsOk;
using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

const Catalog& Bundled() { return testing::BundledCatalogue(); }

v1::PlanMemoryRequest Request(const std::string& text) {
  v1::PlanMemoryRequest request;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &request)) << text;
  return request;
}

const v1::Baseline& Seed002() {
  for (const v1::Baseline& b : Bundled().baselines()) {
    if (b.provenance().source_document().find("002_") == 0) return b;
  }
  ADD_FAILURE() << "no 002 baseline";
  return Bundled().baselines().front();
}

uint64_t PoolTokens(const v1::Baseline& b, bool speculation) {
  for (const v1::KvPool& pool : b.kv_pools()) {
    bool on = pool.speculative().method() == v1::SPECULATIVE_METHOD_MTP;
    if (on == speculation && pool.has_tokens()) return pool.tokens();
  }
  return 0;
}

TEST(PlanMemory, BaselineConfigurationReturnsMeasuredPoolBesideTheModel) {
  const v1::Baseline& seed = Seed002();
  auto plan = PlanMemory(Bundled(), Request("deployment { baseline_id: \"" + seed.id() + "\" }"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->provenance().tier(), v1::TIER_MEASURED);
  EXPECT_EQ(plan->kv_pool_tokens(), PoolTokens(seed, /*speculation=*/true));
  ASSERT_GE(plan->provenance().measured_size(), 1);
  const v1::MeasuredFigure& m = plan->provenance().measured(0);
  EXPECT_EQ(m.name(), "kv_pool_tokens");
  EXPECT_GT(m.predicted(), 0);
  EXPECT_NEAR(m.deviation_fraction(), (m.predicted() - m.measured()) / m.measured(), 1e-12);
}

TEST(PlanMemory, SpeculationOffPicksTheOtherMeasuredPool) {
  const v1::Baseline& seed = Seed002();
  auto plan = PlanMemory(Bundled(), Request("deployment { baseline_id: \"" + seed.id() +
                                            "\" engine { speculative_method: "
                                            "SPECULATIVE_METHOD_NONE } }"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->kv_pool_tokens(), PoolTokens(seed, /*speculation=*/false));
  EXPECT_EQ(plan->deployment().speculative_method(), v1::SPECULATIVE_METHOD_NONE);
}

TEST(PlanMemory, ChangedConfigurationIsNotMeasured) {
  auto plan = PlanMemory(
      Bundled(), Request("deployment { baseline_id: \"" + Seed002().id() + "\" gpu_count: 8 }"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_NE(plan->provenance().tier(), v1::TIER_MEASURED);
  EXPECT_EQ(plan->deployment().gpu_count(), 8u);
  EXPECT_EQ(plan->deployment().tp(), 8u);
}

TEST(PlanMemory, ModelThatDoesNotFitIsAnAnswerNotAnError) {
  auto plan = PlanMemory(Bundled(), Request(R"(deployment {
      model_id: "llama-3.1-70b-instruct" hardware_id: "nvidia-rtx-4090-24gb" })"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->fits());
  EXPECT_EQ(plan->binding(), v1::MEMORY_BINDING_WEIGHTS);
  EXPECT_GT(plan->shortfall_bytes(), 0u);
}

TEST(PlanMemory, HuggingFaceRepoIdFindsTheCatalogueModel) {
  auto plan = PlanMemory(Bundled(), Request(R"(deployment {
      model_id: "meta-llama/Llama-3.1-8B-Instruct" hardware_id: "nvidia-h100-sxm-80gb"
      engine { max_model_len: 8192 } })"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->deployment().model_id(), "llama-3.1-8b-instruct");
  EXPECT_TRUE(plan->fits());
  EXPECT_GT(plan->kv_pool_tokens(), 8192u);
}

TEST(PlanMemory, MeanSequenceGivesConcurrencyAtWorkloadLength) {
  auto plan = PlanMemory(Bundled(), Request(R"(deployment {
      model_id: "qwen3-8b" hardware_id: "nvidia-h100-sxm-80gb" engine { max_model_len: 32768 } }
      mean_sequence_tokens: 2048)"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->has_max_concurrency_at_mean_sequence());
  EXPECT_GT(plan->max_concurrency_at_mean_sequence(), plan->max_concurrency_at_max_model_len());
}

struct BadRequest {
  std::string name;
  std::string text;
  absl::StatusCode code;
  std::string message;
};

class PlanMemoryErrors : public ::testing::TestWithParam<BadRequest> {};

TEST_P(PlanMemoryErrors, NameFieldValueAndRule) {
  EXPECT_THAT(PlanMemory(Bundled(), Request(GetParam().text)),
              StatusIs(GetParam().code, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PlanMemoryErrors,
    ::testing::Values(
        BadRequest{"TpNotDividingHeads",
                   R"(deployment { model_id: "llama-3.1-8b-instruct" hardware_id: "nvidia-l4-24gb"
                      gpu_count: 3 parallelism { tp: 3 } })",
                   absl::StatusCode::kInvalidArgument,
                   "PlanMemoryRequest.deployment.parallelism.tp = 3; must divide "
                   "num_attention_heads = 32"},
        BadRequest{"EpNotDividingExperts",
                   R"(deployment { model_id: "mixtral-8x7b-instruct" hardware_id: "nvidia-l4-24gb"
                      gpu_count: 3 parallelism { tp: 1 ep: 3 } })",
                   absl::StatusCode::kInvalidArgument,
                   "PlanMemoryRequest.deployment.parallelism.ep = 3; must divide "
                   "num_routed_experts = 8"},
        BadRequest{"FractionAboveOne",
                   R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb"
                      engine { gpu_memory_utilization: 1.5 } })",
                   absl::StatusCode::kInvalidArgument,
                   "PlanMemoryRequest.deployment.engine.gpu_memory_utilization = 1.5; must be "
                   "at most 1"},
        BadRequest{"ZeroFraction",
                   R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb"
                      engine { kind: ENGINE_KIND_SGLANG mem_fraction_static: 0 } })",
                   absl::StatusCode::kInvalidArgument,
                   "PlanMemoryRequest.deployment.engine.mem_fraction_static = 0; must be > 0"},
        BadRequest{"ContextBeyondNative",
                   R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-h100-sxm-80gb"
                      engine { max_model_len: 1000000 } })",
                   absl::StatusCode::kInvalidArgument,
                   "PlanMemoryRequest.deployment.engine.max_model_len = 1000000; must not exceed"},
        BadRequest{"MalformedConfigJson",
                   R"(deployment { model_config_json: "{\"hidden_size\": \"big\"}"
                      hardware_id: "nvidia-l4-24gb" })",
                   absl::StatusCode::kInvalidArgument,
                   "PlanMemoryRequest.deployment.model_config_json: "},
        BadRequest{"VllmKnobOnSglang",
                   R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb"
                      engine { kind: ENGINE_KIND_SGLANG gpu_memory_utilization: 0.8 } })",
                   absl::StatusCode::kInvalidArgument, "gpu_memory_utilization is vLLM's knob"},
        BadRequest{"MtpWithoutMtpLayers",
                   R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb"
                      engine { speculative_method: SPECULATIVE_METHOD_MTP } })",
                   absl::StatusCode::kInvalidArgument, "ships no MTP layers"},
        BadRequest{"NoModel", R"(deployment { hardware_id: "nvidia-l4-24gb" })",
                   absl::StatusCode::kInvalidArgument,
                   "PlanMemoryRequest.deployment.model_id is empty"},
        BadRequest{"UnknownModel",
                   R"(deployment { model_id: "no-such-model" hardware_id: "nvidia-l4-24gb" })",
                   absl::StatusCode::kNotFound,
                   "PlanMemoryRequest.deployment.model_id = \"no-such-model\""},
        BadRequest{"UnknownGpu", R"(deployment { model_id: "qwen3-8b" hardware_id: "gpu-x" })",
                   absl::StatusCode::kNotFound,
                   "PlanMemoryRequest.deployment.hardware_id = \"gpu-x\""},
        BadRequest{"UnknownBaseline", R"(deployment { baseline_id: "nope" })",
                   absl::StatusCode::kNotFound,
                   "PlanMemoryRequest.deployment.baseline_id = \"nope\""},
        BadRequest{"ZeroMeanSequence",
                   R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb" }
                      mean_sequence_tokens: 0)",
                   absl::StatusCode::kInvalidArgument, "mean_sequence_tokens = 0"}),
    [](const ::testing::TestParamInfo<BadRequest>& info) { return info.param.name; });

std::string ConfigText(const std::string& name) {
  std::ifstream in(std::string(CAPPLAN_SOURCE_DIR) + "/tests/data/configs/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Issue 12: a checkpoint whose quantization config states an FP8 KV cache
// (nvidia/Qwen3.5-397B-A17B-NVFP4: ModelOpt NVFP4, kv_cache_scheme
// {num_bits: 8, type: float}) is planned with FP8 KV when the engine's
// kv_cache_dtype is auto, exactly as with an explicit --kv-cache-dtype fp8;
// an explicit bf16 still overrides.
TEST(PlanMemory, CheckpointStatingFp8KvIsPlannedWithFp8Kv) {
  const std::string config = ConfigText("nvidia__Qwen3.5-397B-A17B-NVFP4.json");
  ASSERT_FALSE(config.empty());
  auto plan_with = [&](const std::string& kv_dtype) {
    v1::PlanMemoryRequest request = Request(
        "deployment { hardware_id: \"nvidia-b200-180gb\" gpu_count: 4 parallelism { tp: 4 } "
        "engine { kind: ENGINE_KIND_VLLM version: \"0.11.0\" max_model_len: 8192 " +
        kv_dtype + " } }");
    request.mutable_deployment()->set_model_config_json(config);
    return PlanMemory(Bundled(), request);
  };
  auto from_checkpoint = plan_with("");
  auto stated_auto = plan_with("kv_cache_dtype: KV_CACHE_DTYPE_AUTO");
  auto explicit_fp8 = plan_with("kv_cache_dtype: KV_CACHE_DTYPE_FP8");
  auto explicit_bf16 = plan_with("kv_cache_dtype: KV_CACHE_DTYPE_BF16");
  ASSERT_THAT(from_checkpoint, IsOk());
  ASSERT_THAT(stated_auto, IsOk());
  ASSERT_THAT(explicit_fp8, IsOk());
  ASSERT_THAT(explicit_bf16, IsOk());
  EXPECT_EQ(from_checkpoint->deployment().kv_cache_dtype(), v1::KV_CACHE_DTYPE_FP8);
  EXPECT_EQ(stated_auto->deployment().kv_cache_dtype(), v1::KV_CACHE_DTYPE_FP8);
  EXPECT_EQ(explicit_bf16->deployment().kv_cache_dtype(), v1::KV_CACHE_DTYPE_BF16);
  // The config's attention: 15 full-attention layers of 60 (every fourth),
  // 2 KV heads of head_dim 256; at TP4 each rank holds one KV head
  // (replicated), so FP8 K and V take 15 x 2 x 1 x 256 x 1 B per token.
  constexpr uint64_t kFp8BytesPerToken = 15 * 2 * 1 * 256 * 1;
  EXPECT_EQ(from_checkpoint->kv_bytes_per_token(), kFp8BytesPerToken);
  EXPECT_EQ(explicit_fp8->kv_bytes_per_token(), kFp8BytesPerToken);
  EXPECT_EQ(explicit_bf16->kv_bytes_per_token(), 2 * kFp8BytesPerToken);
  EXPECT_EQ(from_checkpoint->kv_pool_tokens(), explicit_fp8->kv_pool_tokens());
  EXPECT_EQ(stated_auto->kv_pool_tokens(), explicit_fp8->kv_pool_tokens());
  EXPECT_GT(from_checkpoint->kv_pool_tokens(), explicit_bf16->kv_pool_tokens());
}

TEST(PlanMemory, BaselineWithoutGpuNeedsOne) {
  std::string id;
  for (const v1::Baseline& b : Bundled().baselines()) {
    if (b.deployment().hardware_id().empty()) id = b.id();
  }
  ASSERT_FALSE(id.empty()) << "the 000 baseline withholds its GPU";
  EXPECT_THAT(PlanMemory(Bundled(), Request("deployment { baseline_id: \"" + id + "\" }")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("PlanMemoryRequest.deployment.hardware_id is empty and "
                                 "baseline '" +
                                 id + "' does not name its GPU")));
  auto with_gpu = PlanMemory(Bundled(), Request("deployment { baseline_id: \"" + id +
                                                "\" hardware_id: \"nvidia-l40s-48gb\" }"));
  EXPECT_THAT(with_gpu, IsOk());
}

}  // namespace
}  // namespace capplan::service
