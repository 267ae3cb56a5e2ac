#include "model/step_inputs.h"

#include "gtest/gtest.h"

namespace capplan::model {
namespace {

ModelArchitecture Dense() {
  ModelArchitecture a;
  a.hidden_size = 1024;
  a.intermediate_size = 4096;
  a.num_attention_heads = 16;
  a.num_kv_heads = 4;
  a.head_dim = 64;
  a.vocab_size = 1000;
  a.native_context_tokens = 4096;
  a.layers.assign(8, LayerSpec{AttentionKind::kFull, MlpKind::kDense});
  return a;
}

TEST(AttentionFlopsPerContextToken, HandComputedForFullAndLinearLayers) {
  ModelArchitecture a = Dense();
  // 2 · (16/2 heads) · (64 + 64) per layer, 8 layers.
  EXPECT_DOUBLE_EQ(AttentionFlopsPerContextToken(a, 2), 8 * 2.0 * 8 * 128);
  a.layers[0].attention = AttentionKind::kLinear;
  EXPECT_DOUBLE_EQ(AttentionFlopsPerContextToken(a, 2), 7 * 2.0 * 8 * 128);
}

TEST(AttentionFlopsPerContextToken, MlaUsesItsHeadDims) {
  ModelArchitecture a = Dense();
  a.mla = MlaSpec{0, 512, 128, 64, 128};
  a.layers.assign(2, LayerSpec{AttentionKind::kMla, MlpKind::kDense});
  EXPECT_DOUBLE_EQ(AttentionFlopsPerContextToken(a, 1), 2 * 2.0 * 16 * (128 + 64 + 128));
}

TEST(AllReduceBytesPerToken, RingAllReduceOfTwoActivationsPerLayer) {
  ModelArchitecture a = Dense();
  EXPECT_EQ(AllReduceBytesPerToken(a, 1), 0);
  // 8 layers · 2 all-reduces · 1024 · 2 bytes · 2 · 3/4 (tp = 4, bf16).
  EXPECT_DOUBLE_EQ(AllReduceBytesPerToken(a, 4), 8 * 2.0 * 1024 * 2 * 2 * 3.0 / 4);
}

TEST(StepInputsFromMemoryPlan, SplitsRoutedExpertsAndScalesByPipelineStages) {
  ModelArchitecture a = Dense();
  a.moe = MoeSpec{8, 2, 0, 512, 0};
  MemoryPlan plan;
  plan.weights_by_component_bytes[static_cast<int>(Component::kAttention)] = 100;
  plan.weights_by_component_bytes[static_cast<int>(Component::kRoutedExperts)] = 1000;
  plan.weights_by_component_bytes[static_cast<int>(Component::kDraft)] = 7;
  plan.weights_by_component_bytes[static_cast<int>(Component::kEmbeddings)] = 10;
  plan.kv_bytes_per_token = 64;
  StepTimeInputs in = StepInputsFromMemoryPlan(a, plan, 1, 2);
  EXPECT_DOUBLE_EQ(in.dense_weight_bytes_per_gpu, 2 * 110);  // draft excluded
  EXPECT_DOUBLE_EQ(in.routed_expert_weight_bytes_per_gpu, 2 * 1000);
  EXPECT_EQ(in.routed_experts, 8);
  EXPECT_EQ(in.experts_per_token, 2);
  EXPECT_DOUBLE_EQ(in.kv_bytes_per_token_per_gpu, 128);
  EXPECT_EQ(in.memory_bandwidth_bytes_per_second, 0) << "hardware is the caller's";
}

// A search bounds many candidates of one model with its counts computed
// once: the active parameters per GPU come from the counts it is given.
TEST(StepInputsFromMemoryPlan, GivenCountsAreTheOnesUsed) {
  ModelArchitecture a = Dense();
  a.moe = MoeSpec{8, 2, 0, 512, 0};
  MemoryPlan plan;
  plan.weights_by_component_bytes[static_cast<int>(Component::kAttention)] = 100;
  const ParameterCounts counts = ComputeParameterCounts(a);
  ASSERT_GT(counts.active_per_token, 0);
  const StepTimeInputs once = StepInputsFromMemoryPlan(a, plan, 4, 1, counts);
  const StepTimeInputs each = StepInputsFromMemoryPlan(a, plan, 4, 1);
  EXPECT_DOUBLE_EQ(once.active_parameters_per_token_per_gpu,
                   each.active_parameters_per_token_per_gpu);
  EXPECT_DOUBLE_EQ(once.active_parameters_per_token_per_gpu, counts.active_per_token / 4.0);
  ParameterCounts other = counts;
  other.active_per_token *= 2;
  EXPECT_DOUBLE_EQ(
      StepInputsFromMemoryPlan(a, plan, 4, 1, other).active_parameters_per_token_per_gpu,
      2 * each.active_parameters_per_token_per_gpu);
}

TEST(GemmFormatPreference, LowPrecisionCheckpointsFirstThen16Bit) {
  using G = GemmFormat;
  EXPECT_EQ(GemmFormatPreference(WeightFormat::kFp8Block, NumberType::kBf16),
            (std::vector<G>{G::kFp8, G::kBf16, G::kFp16}));
  EXPECT_EQ(GemmFormatPreference(WeightFormat::kNvfp4, NumberType::kBf16),
            (std::vector<G>{G::kFp4, G::kBf16, G::kFp16}));
  // Weight-only int4 dequantizes to the activation format; fp16 checkpoints
  // prefer fp16 tensor cores.
  EXPECT_EQ(GemmFormatPreference(WeightFormat::kInt4Awq, NumberType::kFp16),
            (std::vector<G>{G::kFp16, G::kBf16, G::kFp16}));
}

TEST(AllReduceLinkBandwidth, PcieWithoutPeerToPeerHalves) {
  EXPECT_DOUBLE_EQ(AllReduceLinkBandwidth(64e9, true), 32e9);
  EXPECT_DOUBLE_EQ(AllReduceLinkBandwidth(64e9, false), 64e9);
}

TEST(DraftPassFromMemoryPlan, DraftAtTheActiveShareAndTheLmHead) {
  ModelArchitecture a = Dense();
  a.num_mtp_layers = 1;
  const ParameterCounts counts = ComputeParameterCounts(a);
  ASSERT_EQ(counts.active_per_token, counts.total) << "dense: every parameter is active";
  ASSERT_GT(counts.draft, 0);
  MemoryPlan plan;
  plan.weights_by_component_bytes[static_cast<int>(Component::kDraft)] = 300;
  plan.weights_by_component_bytes[static_cast<int>(Component::kLmHead)] = 50;
  SpeculativeDecoding s = DraftPassFromMemoryPlan(a, plan, 2);
  EXPECT_EQ(s.draft_tokens, 1);
  EXPECT_DOUBLE_EQ(s.draft_weight_bytes_per_gpu, 350);
  // LM head: vocab × hidden = 1000 × 1024 parameters (untied).
  EXPECT_DOUBLE_EQ(s.draft_active_parameters_per_token_per_gpu, (counts.draft + 1000.0 * 1024) / 2);
}

}  // namespace
}  // namespace capplan::model
