#include "service/translate/memory_translation.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::testing::ElementsAre;

const Catalog& Bundled() { return testing::BundledCatalogue(); }

ResolvedDeployment Resolve(const std::string& text, bool allow_withheld = false) {
  v1::Deployment d;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &d)) << text;
  absl::StatusOr<ResolvedDeployment> r =
      allow_withheld ? ResolveDeploymentAllowingWithheldHardware(Bundled(), d, "T.deployment")
                     : ResolveDeployment(Bundled(), d, "T.deployment");
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *std::move(r) : ResolvedDeployment();
}

constexpr char kQwenOnL4[] = R"(model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb"
    engine { version: "0.11.0" kv_cache_dtype: KV_CACHE_DTYPE_FP8 enforce_eager: true })";

// A plan with figures chosen to show the mapping (not the memory model's).
model::MemoryPlan HandMadePlan() {
  model::MemoryPlan m;
  m.per_gpu.weights_bytes = 16e9 + 0.4;  // rounds to 16,000,000,000
  m.per_gpu.activation_peak_bytes = -5;  // negative: 0
  m.per_gpu.non_torch_bytes = 1.5;       // llround: 2
  m.per_gpu.cuda_graph_bytes = 300;
  m.per_gpu.kv_pool_bytes = 4e9;
  m.per_gpu.state_pool_bytes = 0;
  m.per_gpu.used_bytes = 22e9;
  m.per_gpu.capacity_bytes = 24e9;
  for (int c = 0; c < model::kNumComponents; ++c) {
    m.weights_by_component_bytes[c] = 1000.0 * (c + 1);
  }
  m.kv_bytes_per_token = 73728.4;
  m.kv_pool_tokens = -1;  // not computed: reported as 0
  m.state_slots = 3;
  m.max_concurrency_at_max_model_len = 2.5;
  m.fits = false;
  m.binding_constraint = model::BindingConstraint::kKvPool;
  m.shortfall_bytes = 1024.6;
  m.memory_fraction = 0.9;
  m.max_model_len = 8192;
  m.max_num_batched_tokens = 2048;
  m.max_num_seqs = 256;
  m.block_size = 16;
  m.notes = {"first", "second"};
  // 1,000 blocks of 16 tokens, one full-attention group.
  m.layout.blocks = 1000;
  m.layout.block_size = 16;
  return m;
}

TEST(ToApiMemoryPlan, MapsEveryFigureInWholeBytes) {
  const ResolvedDeployment r = Resolve(kQwenOnL4);
  const v1::MemoryPlan plan = ToApiMemoryPlan(r, HandMadePlan(), std::nullopt);
  EXPECT_EQ(plan.per_gpu().weights_bytes(), 16000000000u);
  EXPECT_EQ(plan.per_gpu().activation_peak_bytes(), 0u);
  EXPECT_EQ(plan.per_gpu().non_torch_bytes(), 2u);
  EXPECT_EQ(plan.per_gpu().cuda_graph_bytes(), 300u);
  EXPECT_EQ(plan.per_gpu().kv_pool_bytes(), 4000000000u);
  EXPECT_EQ(plan.per_gpu().state_pool_bytes(), 0u);
  EXPECT_EQ(plan.per_gpu().used_bytes(), 22000000000u);
  EXPECT_EQ(plan.per_gpu().capacity_bytes(), 24000000000u);
  EXPECT_EQ(plan.kv_bytes_per_token(), 73728u);
  EXPECT_EQ(plan.kv_pool_tokens(), 0u);
  EXPECT_EQ(plan.state_slots(), 3u);
  EXPECT_EQ(plan.max_concurrency_at_max_model_len(), 2.5);
  EXPECT_FALSE(plan.fits());
  EXPECT_EQ(plan.binding(), v1::MEMORY_BINDING_KV_POOL);
  EXPECT_EQ(plan.shortfall_bytes(), 1025u);
  EXPECT_THAT(plan.notes(), ElementsAre("first", "second"));
  EXPECT_FALSE(plan.has_max_concurrency_at_mean_sequence());
}

TEST(ToApiMemoryPlan, ResolvedDeploymentAndProvenance) {
  const ResolvedDeployment r = Resolve(kQwenOnL4);
  const v1::MemoryPlan plan = ToApiMemoryPlan(r, HandMadePlan(), std::nullopt);
  const v1::ResolvedDeployment& d = plan.deployment();
  EXPECT_EQ(d.model_id(), "qwen3-8b");
  EXPECT_EQ(d.hardware_id(), "nvidia-l4-24gb");
  EXPECT_EQ(d.gpu_count(), 1u);
  EXPECT_EQ(d.tp(), 1u);
  EXPECT_EQ(d.pp(), 1u);
  EXPECT_EQ(d.ep(), 1u);
  EXPECT_EQ(d.engine(), v1::ENGINE_KIND_VLLM);
  EXPECT_EQ(d.engine_version(), "0.11.0");
  EXPECT_EQ(d.memory_fraction(), 0.9);
  EXPECT_EQ(d.max_model_len(), 8192u);
  EXPECT_EQ(d.max_num_batched_tokens(), 2048u);
  EXPECT_EQ(d.max_num_seqs(), 256u);
  EXPECT_EQ(d.block_size(), 16u);
  EXPECT_EQ(d.kv_cache_dtype(), v1::KV_CACHE_DTYPE_FP8);
  EXPECT_TRUE(d.enforce_eager());
  EXPECT_EQ(d.weight_format(), r.quantization.format());
  EXPECT_EQ(d.speculative_method(), v1::SPECULATIVE_METHOD_UNSPECIFIED);
  EXPECT_EQ(d.num_speculative_tokens(), 0u);
  ASSERT_NE(r.preset.preset, nullptr);
  EXPECT_EQ(plan.provenance().engine_preset_id(), r.preset.preset->id());
  EXPECT_FALSE(plan.provenance().engine_version_assumed());  // 0.11.0 was given
  // The tier is the caller's (MemoryPlanWithBaselines): none set here.
  EXPECT_EQ(plan.provenance().tier(), v1::TIER_UNSPECIFIED);
}

TEST(ToApiMemoryPlan, UnsetKnobsAreZeroNotNegative) {
  model::MemoryPlan m = HandMadePlan();
  m.max_model_len = -1;
  m.block_size = 0;
  m.max_num_batched_tokens = -3;
  m.max_num_seqs = -1;
  const v1::MemoryPlan plan = ToApiMemoryPlan(Resolve(kQwenOnL4), m, std::nullopt);
  EXPECT_EQ(plan.deployment().max_model_len(), 0u);
  EXPECT_EQ(plan.deployment().block_size(), 0u);
  EXPECT_EQ(plan.deployment().max_num_batched_tokens(), 0u);
  EXPECT_EQ(plan.deployment().max_num_seqs(), 0u);
}

TEST(ToApiMemoryPlan, ConcurrencyAtTheMeanSequenceOnlyWithAPool) {
  const ResolvedDeployment r = Resolve(kQwenOnL4);
  model::MemoryPlan m = HandMadePlan();
  m.kv_pool_tokens = 16000;
  m.state_slots = 0;
  // 2,000 tokens need ceil(2000 / 16) = 125 blocks: 1,000 / 125 = 8 requests
  // (below max_num_seqs = 256).
  v1::MemoryPlan plan = ToApiMemoryPlan(r, m, 2000);
  ASSERT_TRUE(plan.has_max_concurrency_at_mean_sequence());
  EXPECT_DOUBLE_EQ(plan.max_concurrency_at_mean_sequence(), 8.0);
  // The state slots cap it: min(8, 5).
  m.state_slots = 5;
  plan = ToApiMemoryPlan(r, m, 2000);
  EXPECT_DOUBLE_EQ(plan.max_concurrency_at_mean_sequence(), 5.0);
  // A zero length or an empty pool: not reported.
  EXPECT_FALSE(ToApiMemoryPlan(r, m, 0).has_max_concurrency_at_mean_sequence());
  m.kv_pool_tokens = 0;
  EXPECT_FALSE(ToApiMemoryPlan(r, m, 2000).has_max_concurrency_at_mean_sequence());
}

TEST(WithheldMemoryPlan, WeightsAndKvPerTokenOnlyAtTheRooflineTier) {
  const ResolvedDeployment r =
      Resolve(absl::StrCat("baseline_id: \"", testing::k000, "\""), /*allow_withheld=*/true);
  ASSERT_EQ(r.hardware, nullptr);
  const v1::MemoryPlan plan = WithheldMemoryPlan(r, HandMadePlan());
  EXPECT_EQ(plan.per_gpu().weights_bytes(), 16000000000u);
  EXPECT_EQ(plan.per_gpu().capacity_bytes(), 0u);  // the card is unknown
  EXPECT_EQ(plan.per_gpu().kv_pool_bytes(), 0u);
  EXPECT_EQ(plan.kv_bytes_per_token(), 73728u);
  EXPECT_EQ(plan.kv_pool_tokens(), 0u);
  EXPECT_EQ(plan.weights_by_component().attention_bytes(), 1000u);
  EXPECT_TRUE(plan.fits());
  EXPECT_EQ(plan.binding(), v1::MEMORY_BINDING_NONE);
  EXPECT_EQ(plan.shortfall_bytes(), 0u);
  EXPECT_EQ(plan.provenance().tier(), v1::TIER_ROOFLINE);
  EXPECT_THAT(plan.provenance().baseline_ids(), ElementsAre(testing::k000));
  ASSERT_EQ(plan.notes_size(), 1);
  EXPECT_EQ(plan.notes(0),
            "the baseline withholds its GPU: weights and KV bytes per token are the model's; the "
            "card's memory, hence the KV pool size, is unknown to the memory model");
  EXPECT_EQ(plan.deployment().hardware_id(), "");
  EXPECT_EQ(plan.deployment().model_id(), "seed-000-122b-a10b");
  EXPECT_EQ(plan.deployment().gpu_count(), 4u);
  EXPECT_EQ(plan.deployment().tp(), 4u);
  EXPECT_EQ(plan.deployment().engine(), v1::ENGINE_KIND_SGLANG);
}

TEST(ToProtoMemoryBinding, EveryConstraint) {
  EXPECT_EQ(ToProtoMemoryBinding(model::BindingConstraint::kNone), v1::MEMORY_BINDING_NONE);
  EXPECT_EQ(ToProtoMemoryBinding(model::BindingConstraint::kWeights), v1::MEMORY_BINDING_WEIGHTS);
  EXPECT_EQ(ToProtoMemoryBinding(model::BindingConstraint::kKvPool), v1::MEMORY_BINDING_KV_POOL);
  EXPECT_EQ(ToProtoMemoryBinding(model::BindingConstraint::kStateSlots),
            v1::MEMORY_BINDING_STATE_SLOTS);
  EXPECT_EQ(ToProtoMemoryBinding(model::BindingConstraint::kMaxNumSeqs),
            v1::MEMORY_BINDING_MAX_NUM_SEQS);
}

TEST(FillWeightsByComponent, EachComponentToItsOwnField) {
  // Component c holds 1000·(c + 1) bytes, in model::Component order.
  v1::WeightsByComponent w;
  FillWeightsByComponent(HandMadePlan(), &w);
  EXPECT_EQ(w.attention_bytes(), 1000u);
  EXPECT_EQ(w.dense_mlp_bytes(), 2000u);
  EXPECT_EQ(w.experts_bytes(), 3000u);
  EXPECT_EQ(w.shared_experts_bytes(), 4000u);
  EXPECT_EQ(w.router_bytes(), 5000u);
  EXPECT_EQ(w.embeddings_bytes(), 6000u);
  EXPECT_EQ(w.lm_head_bytes(), 7000u);
  EXPECT_EQ(w.norms_bytes(), 8000u);
  EXPECT_EQ(w.draft_bytes(), 9000u);
  EXPECT_EQ(w.linear_attention_bytes(), 10000u);
}

TEST(FillResolvedDeploymentCommon, SpeculationAndFormatOfTheResolvedDeployment) {
  const ResolvedDeployment r = Resolve(absl::StrCat("baseline_id: \"", testing::k002, "\""));
  v1::ResolvedDeployment d;
  FillResolvedDeploymentCommon(r, HandMadePlan(), &d);
  EXPECT_EQ(d.model_id(), "qwen3.8-flash-next-nvfp4");
  EXPECT_EQ(d.gpu_count(), 4u);
  EXPECT_EQ(d.tp(), 4u);
  EXPECT_EQ(d.ep(), 4u);
  EXPECT_EQ(d.weight_format(), v1::WEIGHT_FORMAT_NVFP4);
  EXPECT_EQ(d.speculative_method(), v1::SPECULATIVE_METHOD_MTP);
  EXPECT_EQ(d.num_speculative_tokens(), 3u);
  // Card-dependent fields are left to the callers.
  EXPECT_EQ(d.hardware_id(), "");
  EXPECT_EQ(d.memory_fraction(), 0);
}

}  // namespace
}  // namespace capplan::service
