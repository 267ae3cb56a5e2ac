#include "service/planner/memory.h"

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
        BadRequest{
            "ZeroFraction",
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
