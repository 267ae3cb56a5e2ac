#include "model/architecture.h"

#include <cmath>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::model {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

// Architectures below are the public config.json of each model (Hugging Face);
// the expected totals are the parameter counts published on the model cards.

std::vector<LayerSpec> Uniform(int n, AttentionKind a, MlpKind m) {
  return std::vector<LayerSpec>(n, LayerSpec{a, m});
}

// meta-llama/Llama-3.1-8B config.json. Model card: 8.03B parameters
// (https://huggingface.co/meta-llama/Llama-3.1-8B, "Llama 3.1 8B ... 8.03B").
ModelArchitecture Llama31_8B() {
  ModelArchitecture a;
  a.hidden_size = 4096;
  a.intermediate_size = 14336;
  a.num_attention_heads = 32;
  a.num_kv_heads = 8;
  a.vocab_size = 128256;
  a.layers = Uniform(32, AttentionKind::kFull, MlpKind::kDense);
  return a;
}

// Qwen/Qwen3-235B-A22B config.json. Model card: "Number of Parameters: 235B
// in total and 22B activated" (https://huggingface.co/Qwen/Qwen3-235B-A22B).
ModelArchitecture Qwen3_235B() {
  ModelArchitecture a;
  a.hidden_size = 4096;
  a.intermediate_size = 12288;
  a.num_attention_heads = 64;
  a.num_kv_heads = 4;
  a.head_dim = 128;
  a.vocab_size = 151936;
  a.qk_norm = true;
  a.layers = Uniform(94, AttentionKind::kFull, MlpKind::kMoe);
  a.moe =
      MoeSpec{.num_routed_experts = 128, .experts_per_token = 8, .expert_intermediate_size = 1536};
  return a;
}

// deepseek-ai/DeepSeek-V3 config.json. Model card: "671B total parameters with
// 37B activated for each token"; the Hugging Face checkpoint is 685B = 671B
// main model + 14B of the MTP module (https://huggingface.co/deepseek-ai/DeepSeek-V3).
ModelArchitecture DeepSeekV3() {
  ModelArchitecture a;
  a.hidden_size = 7168;
  a.intermediate_size = 18432;
  a.num_attention_heads = 128;
  a.num_kv_heads = 128;
  a.vocab_size = 129280;
  a.layers = Uniform(3, AttentionKind::kMla, MlpKind::kDense);
  auto moe = Uniform(58, AttentionKind::kMla, MlpKind::kMoe);
  a.layers.insert(a.layers.end(), moe.begin(), moe.end());
  a.mla = MlaSpec{.q_lora_rank = 1536,
                  .kv_lora_rank = 512,
                  .qk_nope_head_dim = 128,
                  .qk_rope_head_dim = 64,
                  .v_head_dim = 128};
  a.moe = MoeSpec{.num_routed_experts = 256,
                  .experts_per_token = 8,
                  .num_shared_experts = 1,
                  .expert_intermediate_size = 2048};
  a.num_mtp_layers = 1;
  return a;
}

// openai/gpt-oss-120b config.json. Model card / gpt-oss paper table 1:
// 116.83B total, 5.13B active; OpenAI counts the unembedding but not the
// input embedding as active (https://huggingface.co/openai/gpt-oss-120b,
// https://arxiv.org/abs/2508.10925).
ModelArchitecture GptOss120B() {
  ModelArchitecture a;
  a.hidden_size = 2880;
  a.intermediate_size = 2880;
  a.num_attention_heads = 64;
  a.num_kv_heads = 8;
  a.head_dim = 64;
  a.vocab_size = 201088;
  a.sliding_window_tokens = 128;
  for (int i = 0; i < 36; ++i) {
    a.layers.push_back(LayerSpec{i % 2 == 0 ? AttentionKind::kSlidingWindow : AttentionKind::kFull,
                                 MlpKind::kMoe});
  }
  a.attention_bias = true;
  a.attention_output_bias = true;
  a.attention_sinks = true;
  a.moe = MoeSpec{.num_routed_experts = 128,
                  .experts_per_token = 4,
                  .expert_intermediate_size = 2880,
                  .router_bias = true,
                  .expert_bias = true};
  return a;
}

// mistralai/Mixtral-8x7B-v0.1 config.json. Mistral's announcement: "46.7B total
// parameters but only uses 12.9B parameters per token"
// (https://mistral.ai/news/mixtral-of-experts).
ModelArchitecture Mixtral8x7B() {
  ModelArchitecture a;
  a.hidden_size = 4096;
  a.num_attention_heads = 32;
  a.num_kv_heads = 8;
  a.vocab_size = 32000;
  a.layers = Uniform(32, AttentionKind::kFull, MlpKind::kMoe);
  a.moe =
      MoeSpec{.num_routed_experts = 8, .experts_per_token = 2, .expert_intermediate_size = 14336};
  return a;
}

// Qwen/Qwen3-Next-80B-A3B-Instruct config.json: 48 layers, every 4th full
// attention (gated output), the rest gated DeltaNet. Model card: "80B in total
// and 3B activated" (https://huggingface.co/Qwen/Qwen3-Next-80B-A3B-Instruct).
ModelArchitecture Qwen3Next80B() {
  ModelArchitecture a;
  a.hidden_size = 2048;
  a.intermediate_size = 5120;
  a.num_attention_heads = 16;
  a.num_kv_heads = 2;
  a.head_dim = 256;
  a.vocab_size = 151936;
  a.qk_norm = true;
  a.gated_attention_output = true;
  for (int i = 0; i < 48; ++i) {
    a.layers.push_back(
        LayerSpec{(i + 1) % 4 == 0 ? AttentionKind::kFull : AttentionKind::kLinear, MlpKind::kMoe});
  }
  a.linear_attention = LinearAttentionSpec{.num_key_heads = 16,
                                           .num_value_heads = 32,
                                           .key_head_dim = 128,
                                           .value_head_dim = 128,
                                           .conv_kernel_size = 4};
  a.moe = MoeSpec{.num_routed_experts = 512,
                  .experts_per_token = 10,
                  .num_shared_experts = 1,
                  .expert_intermediate_size = 512,
                  .shared_expert_intermediate_size = 512,
                  .shared_expert_gate = true};
  a.num_mtp_layers = 1;
  return a;
}

struct PublishedCase {
  std::string name;
  ModelArchitecture (*build)();
  double total;
  double total_tolerance;  // relative
  double active;           // 0 = not checked
  double active_tolerance;
  // 0: active as we count it; 1: without the input embedding; 2: without
  // the input embedding and the LM head.
  int active_excludes;
};

class PublishedCountsTest : public ::testing::TestWithParam<PublishedCase> {};

TEST_P(PublishedCountsTest, MatchesModelCard) {
  const PublishedCase& c = GetParam();
  const ModelArchitecture arch = c.build();
  ASSERT_TRUE(ValidateArchitecture(arch).ok()) << ValidateArchitecture(arch);
  const ParameterCounts counts = ComputeParameterCounts(arch);
  EXPECT_NEAR(counts.total / c.total, 1.0, c.total_tolerance)
      << c.name << " total " << counts.total;
  if (c.active > 0) {
    double active = counts.active_per_token;
    if (c.active_excludes >= 1) active -= counts.embeddings;
    if (c.active_excludes >= 2) active -= counts.Of(Component::kLmHead);
    EXPECT_NEAR(active / c.active, 1.0, c.active_tolerance) << c.name << " active " << active;
  }
}

INSTANTIATE_TEST_SUITE_P(
    ModelCards, PublishedCountsTest,
    ::testing::Values(PublishedCase{"llama31_8b", Llama31_8B, 8.03e9, 0.005, 8.03e9, 0.005, 0},
                      PublishedCase{"qwen3_235b", Qwen3_235B, 235e9, 0.01, 22e9, 0.03, 0},
                      PublishedCase{"deepseek_v3", DeepSeekV3, 671e9, 0.01, 37e9, 0.03, 0},
                      PublishedCase{"gpt_oss_120b", GptOss120B, 116.83e9, 0.005, 5.13e9, 0.01, 1},
                      PublishedCase{"mixtral_8x7b", Mixtral8x7B, 46.7e9, 0.005, 12.9e9, 0.01, 0},
                      // "A3B": a rounded label for the non-embedding active count.
                      PublishedCase{"qwen3_next_80b", Qwen3Next80B, 80e9, 0.01, 3e9, 0.1, 2}),
    [](const auto& info) { return info.param.name; });

// Sizes past int64 saturate instead of wrapping (no undefined behaviour on
// a hostile file), and the validator refuses them by name first.
TEST(TensorGroup, ParametersSaturateInsteadOfOverflowing) {
  TensorGroup t;
  t.out_features = int64_t{1} << 40;
  t.in_features = int64_t{1} << 30;
  EXPECT_EQ(t.Parameters(), std::numeric_limits<int64_t>::max());
  t.in_features = 3;
  t.copies = 2;
  EXPECT_EQ(t.Parameters(), int64_t{6} << 40);
  ModelArchitecture a = Llama31_8B();
  a.vocab_size = int64_t{1} << 52;  // x hidden 4096 = 2^64 per embedding table
  const absl::Status s = ValidateArchitecture(a);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("vocab_size"), std::string::npos) << s;
  EXPECT_EQ(ComputeParameterCounts(a).total, std::numeric_limits<int64_t>::max());
}

TEST(ComputeParameterCounts, DeepSeekV3MtpModuleIsAboutFourteenBillion) {
  // 685B checkpoint − 671B main model; our MTP count leaves out the shared
  // embedding and head (≈1.85B) that the checkpoint stores again.
  const ParameterCounts counts = ComputeParameterCounts(DeepSeekV3());
  EXPECT_NEAR(counts.draft / 1e9, 14.0 - 1.85, 0.6);
}

TEST(ComputeParameterCounts, ComponentsSumToTotal) {
  for (auto build : {Llama31_8B, Qwen3_235B, DeepSeekV3, GptOss120B, Qwen3Next80B}) {
    const ParameterCounts c = ComputeParameterCounts(build());
    int64_t sum = 0;
    for (int i = 0; i < kNumComponents; ++i) sum += c.by_component[i];
    EXPECT_EQ(sum - c.draft, c.total);
  }
}

// Hand-computed per-layer parameter counts for one layer of each kind on a
// small model (hidden 64, 4 heads of 16, 2 KV heads, vocab 100, tied).
struct LayerCase {
  std::string name;
  LayerSpec spec;
  int64_t expected_layer_params;  // everything but embeddings and final norm
};

ModelArchitecture Tiny(LayerSpec spec) {
  ModelArchitecture a;
  a.hidden_size = 64;
  a.intermediate_size = 128;
  a.num_attention_heads = 4;
  a.num_kv_heads = 2;
  a.head_dim = 16;
  a.vocab_size = 100;
  a.tie_word_embeddings = true;
  a.sliding_window_tokens = 8;
  a.layers = {spec};
  a.mla = MlaSpec{.q_lora_rank = 32,
                  .kv_lora_rank = 24,
                  .qk_nope_head_dim = 8,
                  .qk_rope_head_dim = 4,
                  .v_head_dim = 8};
  a.linear_attention = LinearAttentionSpec{.num_key_heads = 2,
                                           .num_value_heads = 4,
                                           .key_head_dim = 8,
                                           .value_head_dim = 8,
                                           .conv_kernel_size = 4};
  a.mamba = MambaSpec{
      .num_heads = 4, .head_dim = 8, .state_size = 16, .num_groups = 1, .conv_kernel_size = 4};
  a.moe = MoeSpec{.num_routed_experts = 4,
                  .experts_per_token = 2,
                  .num_shared_experts = 1,
                  .expert_intermediate_size = 32};
  return a;
}

class LayerParamsTest : public ::testing::TestWithParam<LayerCase> {};

TEST_P(LayerParamsTest, MatchesHandCount) {
  const ModelArchitecture a = Tiny(GetParam().spec);
  ASSERT_TRUE(ValidateArchitecture(a).ok()) << ValidateArchitecture(a);
  const ParameterCounts c = ComputeParameterCounts(a);
  EXPECT_EQ(c.total - 100 * 64 - 64, GetParam().expected_layer_params);
}

// Dense MLP 3·64·128 = 24,576; layer norms 2·64 = 128.
// Full attention: q 64·64 + k,v 2·64·32 + o 64·64 = 12,288.
// MLA: q_a 64·32 + norm 32 + q_b 32·4·12 + kv_a 64·28 + norm 24 + kv_b 24·4·16
//      + o 4·8·64 = 2048+32+1536+1792+24+1536+2048 = 9,016.
// GDN: qkvz 64·(2·16+2·32) = 6144, ba 64·8 = 512, conv (32+32)·4 = 256,
//      dt/A 8, norm 8, out 32·64 = 2048 → 8,976.
// Mamba2: inner 32, in_proj 64·(64+32+4) = 6400, conv (32+32)·5 = 320,
//      dt/A/D 12, norm 32, out 32·64 = 2048 → 8,812.
// MoE: router 4·64 = 256, experts 4·3·64·32 = 24,576, shared 3·64·32 = 6,144.
INSTANTIATE_TEST_SUITE_P(
    LayerKinds, LayerParamsTest,
    ::testing::Values(
        LayerCase{"full_dense", {AttentionKind::kFull, MlpKind::kDense}, 12288 + 24576 + 128},
        LayerCase{
            "swa_dense", {AttentionKind::kSlidingWindow, MlpKind::kDense}, 12288 + 24576 + 128},
        LayerCase{"mla_dense", {AttentionKind::kMla, MlpKind::kDense}, 9016 + 24576 + 128},
        LayerCase{"gdn_dense", {AttentionKind::kLinear, MlpKind::kDense}, 8976 + 24576 + 128},
        LayerCase{"mamba_dense", {AttentionKind::kMamba, MlpKind::kDense}, 8812 + 24576 + 128},
        LayerCase{
            "full_moe", {AttentionKind::kFull, MlpKind::kMoe}, 12288 + 256 + 24576 + 6144 + 128}),
    [](const auto& info) { return info.param.name; });

TEST(ComputeParameterCounts, MoeActiveCountsExpertsPerToken) {
  const ParameterCounts c = ComputeParameterCounts(Tiny({AttentionKind::kFull, MlpKind::kMoe}));
  // Half of the 4 experts (2 per token) are active: 24,576 / 2 fewer.
  EXPECT_EQ(c.total - c.active_per_token, 24576 / 2);
}

TEST(KvBytesPerToken, PerLayerKind) {
  // Qwen2-7B: 28 layers · 2 · 4 KV heads · 128 · 2 B = 57,344 B.
  ModelArchitecture q;
  q.hidden_size = 3584;
  q.num_attention_heads = 28;
  q.num_kv_heads = 4;
  q.layers = Uniform(28, AttentionKind::kFull, MlpKind::kDense);
  EXPECT_DOUBLE_EQ(KvBytesPerToken(q, 2.0), 57344.0);
  // DeepSeek-V3 MLA: 61 · (512 + 64) · 2 B = 70,272 B, independent of heads.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(DeepSeekV3(), 2.0), 70272.0);
  // gpt-oss-120b: 36 · 2 · 8 · 64 · 1 B (fp8) = 36,864 B.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(GptOss120B(), 1.0), 36864.0);
  // Qwen3-Next: only the 12 full layers: 12 · 2 · 2 · 256 · 2 = 24,576 B.
  EXPECT_DOUBLE_EQ(KvBytesPerToken(Qwen3Next80B(), 2.0), 24576.0);
}

TEST(StateBytesPerRequest, GatedDeltaNetAndMamba) {
  // Qwen3-Next, 36 GDN layers: conv channels 2·16·128 + 32·128 = 8192 over
  // 3 columns at 2 B, SSM 32·128·128 at 4 B → 36 · (49,152 + 2,097,152).
  EXPECT_DOUBLE_EQ(StateBytesPerRequest(Qwen3Next80B(), 2.0, 4.0), 36.0 * (49152.0 + 2097152.0));
  // Tiny Mamba2 layer: channels 32 + 32 over 3 columns, SSM 32·16.
  EXPECT_DOUBLE_EQ(StateBytesPerRequest(Tiny({AttentionKind::kMamba, MlpKind::kDense}), 2.0, 4.0),
                   64.0 * 3 * 2 + 32.0 * 16 * 4);
  EXPECT_DOUBLE_EQ(StateBytesPerRequest(Llama31_8B(), 2.0, 4.0), 0.0);
}

struct InvalidCase {
  std::string name;
  void (*mutate)(ModelArchitecture&);
  std::string expected_message;
};

class ValidateArchitectureTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(ValidateArchitectureTest, NamesFieldValueAndRule) {
  ModelArchitecture a = Llama31_8B();
  GetParam().mutate(a);
  EXPECT_THAT(ValidateArchitecture(a),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().expected_message)));
}

INSTANTIATE_TEST_SUITE_P(
    Rules, ValidateArchitectureTest,
    ::testing::Values(InvalidCase{"kv_zero", [](ModelArchitecture& a) { a.num_kv_heads = 0; },
                                  "ModelArchitecture.num_kv_heads = 0; must be positive"},
                      InvalidCase{"kv_not_dividing",
                                  [](ModelArchitecture& a) { a.num_kv_heads = 5; },
                                  "num_kv_heads = 5; must divide num_attention_heads = 32"},
                      InvalidCase{"swa_without_window",
                                  [](ModelArchitecture& a) {
                                    a.layers[0].attention = AttentionKind::kSlidingWindow;
                                  },
                                  "sliding_window_tokens = 0; must be positive: layers[0]"},
                      InvalidCase{"moe_without_config",
                                  [](ModelArchitecture& a) { a.layers[3].mlp = MlpKind::kMoe; },
                                  "moe.num_routed_experts = 0; must be positive: layers[3] is MoE"},
                      InvalidCase{"no_layers", [](ModelArchitecture& a) { a.layers.clear(); },
                                  "layers.size() = 0"}),
    [](const auto& info) { return info.param.name; });

TEST(ValidateArchitecture, AcceptsAllPublishedModels) {
  for (auto build : {Llama31_8B, Qwen3_235B, DeepSeekV3, GptOss120B, Mixtral8x7B, Qwen3Next80B}) {
    EXPECT_TRUE(ValidateArchitecture(build()).ok());
  }
}

}  // namespace
}  // namespace capplan::model

namespace capplan::model {
namespace {

TEST(ContextLimitTokens, FollowsVllmsRopeScalingRule) {
  ModelArchitecture a;
  a.native_context_tokens = 40960;
  EXPECT_EQ(ContextLimitTokens(a), 40960);  // no scaling
  // YaRN with its original length (Qwen3: factor 4 over 32,768).
  a.rope_scaling_factor = 4;
  a.rope_original_context_tokens = 32768;
  EXPECT_EQ(ContextLimitTokens(a), 131072);
  // Llama 3.1's llama3 type: the native length is already the scaled one.
  a.native_context_tokens = 131072;
  a.rope_scaling_factor = 8;
  a.rope_original_context_tokens = 8192;
  EXPECT_EQ(ContextLimitTokens(a), 131072);
  // Linear scaling without an original length: factor × native.
  a.native_context_tokens = 4096;
  a.rope_scaling_factor = 2;
  a.rope_original_context_tokens = 0;
  EXPECT_EQ(ContextLimitTokens(a), 8192);
}

}  // namespace
}  // namespace capplan::model
