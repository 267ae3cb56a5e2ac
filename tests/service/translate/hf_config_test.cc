#include "service/translate/hf_config.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/architecture.h"
#include "service/translate/model_translation.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

std::string Config(const std::string& name) {
  std::ifstream in(std::string(CAPPLAN_SOURCE_DIR) + "/tests/data/configs/" + name);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

v1::Model Parse(const std::string& json) {
  absl::StatusOr<v1::Model> m = ModelFromHfConfig(json);
  EXPECT_TRUE(m.ok()) << m.status();
  return m.ok() ? *m : v1::Model();
}

model::ModelArchitecture Arch(const v1::Model& m) {
  absl::StatusOr<model::ModelArchitecture> a = ToArchitecture(m);
  EXPECT_TRUE(a.ok()) << a.status();
  return a.ok() ? *a : model::ModelArchitecture();
}

bool Unquantized(const v1::Model& m, v1::ModelComponent c) {
  for (int x : m.quantization().unquantized()) {
    if (x == c) return true;
  }
  return false;
}

// The KV cache dtype a checkpoint's quantization config states: ModelOpt's
// kv_cache_scheme object (nvidia/Qwen3.5-397B-A17B-NVFP4) and
// compressed-tensors' (poolside/Laguna-XS.2-FP8) both say FP8.
TEST(ModelFromHfConfig, KvCacheSchemeStatesFp8Kv) {
  const v1::Model nvfp4 = Parse(Config("nvidia__Qwen3.5-397B-A17B-NVFP4.json"));
  EXPECT_EQ(nvfp4.quantization().format(), v1::WEIGHT_FORMAT_NVFP4);
  EXPECT_EQ(nvfp4.quantization().kv_cache_dtype(), v1::KV_CACHE_DTYPE_FP8);
  const v1::Model fp8 = Parse(Config("poolside__Laguna-XS.2-FP8.json"));
  EXPECT_EQ(fp8.quantization().kv_cache_dtype(), v1::KV_CACHE_DTYPE_FP8);
  // A checkpoint that states none leaves it unspecified (the engine's auto
  // then means the model's dtype).
  const v1::Model none = Parse(Config("Qwen__Qwen3-235B-A22B-FP8.json"));
  EXPECT_EQ(none.quantization().kv_cache_dtype(), v1::KV_CACHE_DTYPE_UNSPECIFIED);
}

TEST(ModelFromHfConfig, Qwen2DenseWithQkvBias) {
  const v1::Model m = Parse(Config("Qwen__Qwen2-7B-Instruct.json"));
  EXPECT_EQ(m.num_kv_heads(), 4u);
  EXPECT_TRUE(m.attention_bias());
  EXPECT_EQ(m.native_context_tokens(), 32768u);
  const model::ModelArchitecture a = Arch(m);
  EXPECT_EQ(a.layers.size(), 28u);
  // Qwen2-7B model card: 7.61B parameters.
  EXPECT_NEAR(model::ComputeParameterCounts(a).total / 7.61e9, 1.0, 0.005);
}

TEST(ModelFromHfConfig, GptOssSlidingWindowAndMxfp4ExpertsOnly) {
  const v1::Model m = Parse(Config("huihui-ai__Huihui-gpt-oss-20b-mxfp4-abliterated-v2.json"));
  const model::ModelArchitecture a = Arch(m);
  ASSERT_EQ(a.layers.size(), 24u);
  EXPECT_EQ(a.layers[0].attention, model::AttentionKind::kSlidingWindow);
  EXPECT_EQ(a.layers[1].attention, model::AttentionKind::kFull);
  EXPECT_EQ(a.sliding_window_tokens, 128);
  EXPECT_EQ(m.quantization().format(), v1::WEIGHT_FORMAT_MXFP4);
  EXPECT_TRUE(Unquantized(m, v1::MODEL_COMPONENT_ATTENTION));
  EXPECT_FALSE(Unquantized(m, v1::MODEL_COMPONENT_EXPERTS));
  // gpt-oss-20b model card: 21B parameters (20.9B), 3.6B active.
  const model::ParameterCounts c = model::ComputeParameterCounts(a);
  EXPECT_NEAR(c.total / 20.9e9, 1.0, 0.01);
  EXPECT_NEAR((c.active_per_token - c.embeddings) / 3.6e9, 1.0, 0.03);
}

TEST(ModelFromHfConfig, KimiK2MlaAndCompressedTensorsIgnoreList) {
  const v1::Model m = Parse(Config("moonshotai__Kimi-K2-Thinking.json"));
  EXPECT_EQ(m.mla().kv_lora_rank(), 512u);
  EXPECT_EQ(m.mla().qk_rope_head_dim(), 64u);
  EXPECT_EQ(m.moe().num_routed_experts(), 384u);
  EXPECT_TRUE(m.moe().router_bias());
  EXPECT_EQ(m.quantization().format(), v1::WEIGHT_FORMAT_INT4_SYMMETRIC);
  EXPECT_EQ(m.quantization().group_size(), 32u);
  for (auto c : {v1::MODEL_COMPONENT_ATTENTION, v1::MODEL_COMPONENT_SHARED_EXPERTS,
                 v1::MODEL_COMPONENT_DENSE_MLP, v1::MODEL_COMPONENT_LM_HEAD}) {
    EXPECT_TRUE(Unquantized(m, c)) << v1::ModelComponent_Name(c);
  }
  const model::ModelArchitecture a = Arch(m);
  EXPECT_EQ(a.layers[0].mlp, model::MlpKind::kDense);
  EXPECT_EQ(a.layers[1].mlp, model::MlpKind::kMoe);
  EXPECT_EQ(a.layers[1].attention, model::AttentionKind::kMla);
  // Kimi K2 model card: 1T total (1.04T), 32B activated.
  const model::ParameterCounts c = model::ComputeParameterCounts(a);
  EXPECT_NEAR(c.total / 1.04e12, 1.0, 0.02);
  EXPECT_NEAR(c.active_per_token / 32.6e9, 1.0, 0.05);
}

TEST(ModelFromHfConfig, QuantizationMethods) {
  const v1::Model fp8 = Parse(Config("Qwen__Qwen3-235B-A22B-FP8.json"));
  EXPECT_EQ(fp8.quantization().format(), v1::WEIGHT_FORMAT_FP8_BLOCK);
  EXPECT_EQ(fp8.quantization().group_size(), 128u);
  EXPECT_TRUE(fp8.qk_norm());
  const v1::Model awq = Parse(Config("TheBloke__Mixtral-8x7B-Instruct-v0.1-AWQ.json"));
  EXPECT_EQ(awq.quantization().format(), v1::WEIGHT_FORMAT_INT4_AWQ);
  EXPECT_EQ(awq.moe().num_routed_experts(), 8u);
  EXPECT_EQ(awq.moe().expert_intermediate_size(), 14336u);
  EXPECT_EQ(awq.native_dtype(), v1::NUMBER_FORMAT_FP16);
  const v1::Model gptq = Parse(Config("Qwen__Qwen1.5-7B-Chat-GPTQ-Int4.json"));
  EXPECT_EQ(gptq.quantization().format(), v1::WEIGHT_FORMAT_INT4_GPTQ);
  const v1::Model nvfp4 = Parse(R"({"model_type": "llama", "hidden_size": 64,
      "intermediate_size": 128, "num_hidden_layers": 2, "num_attention_heads": 4,
      "vocab_size": 100, "quantization_config": {"quant_method": "modelopt",
      "quant_algo": "NVFP4", "exclude_modules": ["lm_head", "model.layers.*.self_attn*"]}})");
  EXPECT_EQ(nvfp4.quantization().format(), v1::WEIGHT_FORMAT_NVFP4);
  EXPECT_EQ(nvfp4.quantization().group_size(), 16u);
  EXPECT_TRUE(Unquantized(nvfp4, v1::MODEL_COMPONENT_ATTENTION));
}

// Qwen/Qwen3-Next-80B-A3B-Instruct config.json (public), abridged.
constexpr char kQwen3Next[] = R"({
  "architectures": ["Qwen3NextForCausalLM"], "model_type": "qwen3_next",
  "hidden_size": 2048, "intermediate_size": 5120, "num_hidden_layers": 48,
  "num_attention_heads": 16, "num_key_value_heads": 2, "head_dim": 256,
  "vocab_size": 151936, "max_position_embeddings": 262144, "full_attention_interval": 4,
  "linear_num_key_heads": 16, "linear_num_value_heads": 32, "linear_key_head_dim": 128,
  "linear_value_head_dim": 128, "linear_conv_kernel_dim": 4, "num_experts": 512,
  "num_experts_per_tok": 10, "moe_intermediate_size": 512,
  "shared_expert_intermediate_size": 512, "decoder_sparse_step": 1, "mlp_only_layers": [],
  "tie_word_embeddings": false, "torch_dtype": "bfloat16"})";

TEST(ModelFromHfConfig, Qwen3NextHybridLinearAttention) {
  const v1::Model m = Parse(kQwen3Next);
  const model::ModelArchitecture a = Arch(m);
  ASSERT_EQ(a.layers.size(), 48u);
  EXPECT_EQ(a.layers[0].attention, model::AttentionKind::kLinear);
  EXPECT_EQ(a.layers[3].attention, model::AttentionKind::kFull);
  EXPECT_EQ(m.num_mtp_layers(), 1u);
  EXPECT_TRUE(m.gated_attention_output());
  // Model card: 80B total.
  EXPECT_NEAR(model::ComputeParameterCounts(a).total / 80e9, 1.0, 0.01);
}

std::string IngestConfig(const std::string& name) {
  std::ifstream in(std::string(CAPPLAN_SOURCE_DIR) + "/tests/data/ingest/hf-config/" + name);
  EXPECT_TRUE(in.good()) << name;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The same stack with one LayerSpec per layer, in one block: what compaction
// must not change.
v1::Model Uncompacted(const v1::Model& m) {
  v1::Model flat = m;
  flat.clear_layer_blocks();
  v1::LayerBlock* block = flat.add_layer_blocks();
  block->set_repeat(1);
  for (const v1::LayerBlock& b : m.layer_blocks()) {
    for (uint32_t r = 0; r < b.repeat(); ++r) {
      for (const v1::LayerSpec& spec : b.layers()) {
        for (uint32_t i = 0; i < spec.count(); ++i) {
          v1::LayerSpec* one = block->add_layers();
          *one = spec;
          one->set_count(1);
        }
      }
    }
  }
  return flat;
}

TEST(ModelFromHfConfig, Qwen35MoeHybridIsOneRepeatedBlockWithGatedAttention) {
  const v1::Model m = Parse(IngestConfig("Qwen__Qwen3.5-35B-A3B.json"));
  ASSERT_EQ(m.layer_blocks_size(), 1);
  const v1::LayerBlock& b = m.layer_blocks(0);
  EXPECT_EQ(b.repeat(), 10u);  // 40 layers: 3 linear-attention + 1 full attention, × 10
  ASSERT_EQ(b.layers_size(), 2);
  EXPECT_EQ(b.layers(0).count(), 3u);
  EXPECT_EQ(b.layers(0).attention(), v1::ATTENTION_KIND_LINEAR);
  EXPECT_EQ(b.layers(0).mlp(), v1::MLP_KIND_MOE);
  EXPECT_EQ(b.layers(1).count(), 1u);
  EXPECT_EQ(b.layers(1).attention(), v1::ATTENTION_KIND_FULL);
  EXPECT_TRUE(m.gated_attention_output());  // model_type qwen3_5_moe_text, attn_output_gate
  EXPECT_TRUE(m.qk_norm());
  EXPECT_EQ(m.num_mtp_layers(), 1u);
  EXPECT_EQ(m.moe().num_routed_experts(), 256u);
  EXPECT_EQ(m.moe().experts_per_token(), 8u);
  EXPECT_EQ(m.linear_attention().num_value_heads(), 32u);
  EXPECT_EQ(Arch(m).layers.size(), 40u);
}

TEST(ModelFromHfConfig, Qwen35DenseGatesAttentionByItsModelType) {
  std::string json = IngestConfig("Qwen__Qwen3.5-27B.json");
  const v1::Model m = Parse(json);
  ASSERT_EQ(m.layer_blocks_size(), 1);
  EXPECT_EQ(m.layer_blocks(0).repeat(), 16u);
  EXPECT_TRUE(m.gated_attention_output());
  // Without attn_output_gate the model type qwen3_5_text says it.
  const size_t key = json.find("\"attn_output_gate\": true,");
  ASSERT_NE(key, std::string::npos);
  json.erase(key, std::string("\"attn_output_gate\": true,").size());
  EXPECT_TRUE(Parse(json).gated_attention_output());
}

// Qwen3.5's config states its recurrent state in fp32 (mamba_ssm_dtype),
// which vLLM takes over its bf16 default: twice the state page.
TEST(ModelFromHfConfig, Qwen35ReadsTheRecurrentStateDtype) {
  std::string json = IngestConfig("Qwen__Qwen3.5-27B.json");
  const v1::Model m = Parse(json);
  EXPECT_EQ(m.linear_attention().recurrent_state_dtype(), v1::NUMBER_FORMAT_FP32);
  ASSERT_TRUE(Arch(m).linear_attention.has_value());
  EXPECT_EQ(Arch(m).linear_attention->recurrent_state_bytes, 4);
  const std::string key = "\"mamba_ssm_dtype\": \"float32\"";
  const size_t at = json.find(key);
  ASSERT_NE(at, std::string::npos);
  std::string bf16 = json;
  bf16.replace(at, key.size(), "\"mamba_ssm_dtype\": \"bfloat16\"");
  EXPECT_EQ(Parse(bf16).linear_attention().recurrent_state_dtype(), v1::NUMBER_FORMAT_BF16);
  std::string bad = json;
  bad.replace(at, key.size(), "\"mamba_ssm_dtype\": \"int4\"");
  EXPECT_THAT(
      ModelFromHfConfig(bad),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("mamba_ssm_dtype = \"int4\"; must be float32, bfloat16 or float16")));
}

TEST(ModelFromHfConfig, Gemma4MoeReadsTopKExpertsAndTheDenseMlpBesideThem) {
  const v1::Model m = Parse(IngestConfig("google__gemma-4-26B-A4B.json"));
  EXPECT_EQ(m.moe().num_routed_experts(), 128u);
  EXPECT_EQ(m.moe().experts_per_token(), 8u);  // top_k_experts
  EXPECT_EQ(m.moe().expert_intermediate_size(), 704u);
  EXPECT_EQ(m.moe().num_shared_experts(), 1u);  // enable_moe_block: dense MLP ‖ experts
  EXPECT_EQ(m.moe().shared_expert_intermediate_size(), 2112u);
  EXPECT_EQ(m.sliding_window_tokens(), 1024u);
  ASSERT_EQ(m.layer_blocks_size(), 1);
  EXPECT_EQ(m.layer_blocks(0).repeat(), 5u);  // 5 sliding + 1 full, × 5
  const model::ParameterCounts c = model::ComputeParameterCounts(Arch(m));
  // "26B-A4B": about 26B total, 4B active.
  EXPECT_NEAR(c.total / 26e9, 1.0, 0.05);
  EXPECT_NEAR(c.active_per_token / 4e9, 1.0, 0.1);
}

class CompactionTest : public ::testing::TestWithParam<std::string> {};

TEST_P(CompactionTest, ParameterCountsAndLayersEqualTheUncompactedStack) {
  const std::string& name = GetParam();
  const std::string json =
      absl::StartsWith(name, "ingest:") ? IngestConfig(name.substr(7)) : Config(name);
  const v1::Model m = Parse(json);
  const v1::Model flat = Uncompacted(m);
  const model::ModelArchitecture a = Arch(m), b = Arch(flat);
  ASSERT_EQ(a.layers.size(), b.layers.size());
  for (size_t i = 0; i < a.layers.size(); ++i) {
    EXPECT_EQ(a.layers[i].attention, b.layers[i].attention) << i;
    EXPECT_EQ(a.layers[i].mlp, b.layers[i].mlp) << i;
  }
  const model::ParameterCounts x = model::ComputeParameterCounts(a);
  const model::ParameterCounts y = model::ComputeParameterCounts(b);
  EXPECT_EQ(x.total, y.total);
  EXPECT_EQ(x.active_per_token, y.active_per_token);
  EXPECT_EQ(x.embeddings, y.embeddings);
  EXPECT_EQ(x.draft, y.draft);
  EXPECT_EQ(x.by_component, y.by_component);
  int specs = 0;
  for (const v1::LayerBlock& block : m.layer_blocks()) specs += block.layers_size();
  EXPECT_LE(specs, flat.layer_blocks(0).layers_size());
}

INSTANTIATE_TEST_SUITE_P(
    Configs, CompactionTest,
    ::testing::Values("ingest:Qwen__Qwen3.5-35B-A3B.json", "ingest:Qwen__Qwen3.5-27B.json",
                      "ingest:google__gemma-4-26B-A4B.json",
                      "huihui-ai__Huihui-gpt-oss-20b-mxfp4-abliterated-v2.json",
                      "moonshotai__Kimi-K2-Thinking.json", "Qwen__Qwen3-235B-A22B-FP8.json",
                      "meta-llama__Llama-3.1-8B-Instruct.json"),
    [](const auto& info) {
      std::string n;
      for (char ch : info.param) n.push_back(absl::ascii_isalnum(ch) ? ch : '_');
      return n;
    });

TEST(ModelFromHfConfig, IrregularStackKeepsItsRunsInOneBlock) {
  const v1::Model m = Parse(Config("moonshotai__Kimi-K2-Thinking.json"));
  ASSERT_EQ(m.layer_blocks_size(), 1);  // 1 dense layer, then 60 MoE: nothing repeats
  EXPECT_EQ(m.layer_blocks(0).repeat(), 1u);
  ASSERT_EQ(m.layer_blocks(0).layers_size(), 2);
  EXPECT_EQ(m.layer_blocks(0).layers(1).count(), 60u);
}

TEST(ModelFromHfConfig, AlternatingSlidingWindowIsOneBlockOfTwo) {
  const v1::Model m = Parse(Config("huihui-ai__Huihui-gpt-oss-20b-mxfp4-abliterated-v2.json"));
  ASSERT_EQ(m.layer_blocks_size(), 1);
  EXPECT_EQ(m.layer_blocks(0).repeat(), 12u);
  EXPECT_EQ(m.layer_blocks(0).layers_size(), 2);
}

struct BadConfig {
  std::string name;
  std::string json;
  std::string message;
};

class MalformedConfigTest : public ::testing::TestWithParam<BadConfig> {};

TEST_P(MalformedConfigTest, NamesKeyValueAndRule) {
  EXPECT_THAT(ModelFromHfConfig(GetParam().json),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

#define BASE \
  R"("model_type": "llama", "hidden_size": 64, "intermediate_size": 128, "num_hidden_layers": 2, "vocab_size": 100)"

INSTANTIATE_TEST_SUITE_P(
    Keys, MalformedConfigTest,
    ::testing::Values(
        BadConfig{"kv_heads_zero",
                  "{" BASE R"(, "num_attention_heads": 4, "num_key_value_heads": 0})",
                  "config.json: num_key_value_heads = 0; must be positive"},
        BadConfig{"kv_heads_not_dividing",
                  "{" BASE R"(, "num_attention_heads": 4, "num_key_value_heads": 3})",
                  "config.json: num_key_value_heads = 3; must divide num_attention_heads = 4"},
        BadConfig{"hidden_not_a_number",
                  R"({"model_type": "llama", "hidden_size": "abc", "num_hidden_layers": 2,
                      "num_attention_heads": 4, "vocab_size": 100})",
                  "config.json: hidden_size = \"abc\"; must be an integer"},
        BadConfig{"layers_missing",
                  R"({"model_type": "llama", "hidden_size": 64, "num_attention_heads": 4,
                      "vocab_size": 100})",
                  "config.json: num_hidden_layers is missing; required"},
        BadConfig{"not_json", "{not json", "config.json: not a JSON object"},
        BadConfig{
            "unknown_quant_method",
            "{" BASE
            R"(, "num_attention_heads": 4, "quantization_config": {"quant_method": "bitsandbytes"}})",
            "config.json: quantization_config.quant_method = \"bitsandbytes\"; supported:"},
        BadConfig{
            "awq_three_bits",
            "{" BASE
            R"(, "num_attention_heads": 4, "quantization_config": {"quant_method": "awq", "bits": 3}})",
            "config.json: quantization_config.bits = 3; awq supports 4 bits"},
        BadConfig{"layer_types_length",
                  "{" BASE R"(, "num_attention_heads": 4, "layer_types": ["full_attention"]})",
                  "layer_types has 1 entries; must have num_hidden_layers = 2"},
        BadConfig{
            "sliding_without_window",
            "{" BASE
            R"(, "num_attention_heads": 4, "layer_types": ["sliding_attention", "full_attention"]})",
            "config.json: sliding_window is missing"},
        BadConfig{
            "experts_per_token_too_many",
            R"({"model_type": "mixtral", "hidden_size": 64, "intermediate_size": 128,
                      "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
                      "num_local_experts": 4, "num_experts_per_tok": 8})",
            "config.json: num_experts_per_tok = 8; must not exceed the number of experts = 4"},
        BadConfig{"gpt_oss_experts_per_token_too_many",
                  R"({"model_type": "gpt_oss", "hidden_size": 64, "intermediate_size": 128,
                      "num_hidden_layers": 2, "num_attention_heads": 4, "vocab_size": 100,
                      "num_local_experts": 4, "experts_per_token": 8})",
                  "config.json: experts_per_token = 8; must not exceed the number of experts = 4"},
        BadConfig{"heads_beyond_32_bits", "{" BASE R"(, "num_attention_heads": 4294967304})",
                  "config.json: num_attention_heads = 4294967304; must be at most 4294967295"},
        BadConfig{"mlp_only_layer_out_of_range",
                  R"({"model_type": "qwen3_moe", "hidden_size": 64, "num_hidden_layers": 2,
                      "num_attention_heads": 4, "vocab_size": 100, "num_experts": 4,
                      "num_experts_per_tok": 2, "moe_intermediate_size": 32,
                      "mlp_only_layers": [0, 1e300]})",
                  "config.json: mlp_only_layers[1] = 1e+300; must be a layer index in [0, 2)"},
        BadConfig{"dtype_key_named_as_given",
                  "{" BASE R"(, "num_attention_heads": 4, "dtype": "Int8"})",
                  "config.json: dtype = \"Int8\"; must be bfloat16, float16 or float32"},
        BadConfig{"negative_layers",
                  R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": -2,
                      "num_attention_heads": 4, "vocab_size": 100})",
                  "config.json: num_hidden_layers = -2; must be positive"},
        BadConfig{"huge_layers",
                  R"({"model_type": "llama", "hidden_size": 64, "num_hidden_layers": 1e12,
                      "num_attention_heads": 4, "vocab_size": 100})",
                  "config.json: num_hidden_layers = 1000000000000; must be at most"}),
    [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace capplan::service
