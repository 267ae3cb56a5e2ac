#include "service/catalog/catalog_validator.h"

#include <string>

#include "capplan/v1/catalog.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace capplan::service {
namespace {

using ::testing::HasSubstr;

struct BadCase {
  std::string name;
  std::string text;        // a Baseline in text format
  std::string field_path;  // the finding's path
  std::string message;     // a part of its message
};

class BaselineValidation : public ::testing::TestWithParam<BadCase> {};

constexpr char kGoodBaseline[] = R"(
id: "ok-baseline"
provenance { source_document: "doc" }
deployment { hardware_id: "gpu" model_id: "m" gpu_count: 2 parallelism { tp: 2 } }
)";

TEST(BaselineValidationGood, DefaultFixtureIsValid) {
  v1::Baseline b;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kGoodBaseline, &b));
  EXPECT_TRUE(ValidateEntity(b).empty());
}

TEST_P(BaselineValidation, ReportsFieldPathAndRule) {
  v1::Baseline b;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kGoodBaseline, &b));
  // Merge lets the case override singular fields of the good baseline.
  ASSERT_TRUE(google::protobuf::TextFormat::MergeFromString(GetParam().text, &b));
  std::vector<Finding> findings = ValidateEntity(b);
  ASSERT_FALSE(findings.empty());
  bool found = false;
  for (const Finding& f : findings) {
    if (f.field_path == GetParam().field_path) {
      found = true;
      EXPECT_THAT(f.message, HasSubstr(GetParam().message));
    }
  }
  EXPECT_TRUE(found) << "no finding at " << GetParam().field_path
                     << "; first: " << findings[0].field_path << ": " << findings[0].message;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, BaselineValidation,
    ::testing::Values(
        BadCase{"BadId", R"(id: "Bad_Id")", "id", "kebab-case"},
        BadCase{"FractionAboveOne", "deployment { engine { mem_fraction_static: 1.2 } }",
                "deployment.engine.mem_fraction_static", "= 1.2; must be in (0, 1]"},
        BadCase{"NegativeSeconds", "sweeps { rows { concurrency: 1 ttft { p50_seconds: -1 } } }",
                "sweeps[0].rows[0].ttft.p50_seconds", "must be > 0"},
        BadCase{"NegativeRowLength", "sweeps { rows { concurrency: 1 mean_input_tokens: -751 } }",
                "sweeps[0].rows[0].mean_input_tokens", "= -751; must be > 0"},
        BadCase{"RowWithoutLoad", "sweeps { rows { output_tokens_per_second: 3 } }",
                "sweeps[0].rows[0]", "none of concurrency, arrival_rate_rps and burst_requests"},
        BadCase{"BurstWithAConcurrency", "sweeps { rows { burst_requests: 10 concurrency: 4 } }",
                "sweeps[0].rows[0].burst_requests", "a burst has neither"},
        BadCase{"TpNotDividingGpus", "deployment { parallelism { tp: 3 } }",
                "deployment.parallelism.tp", "must divide gpu_count = 2"},
        // 65536 × 65536 wraps a 32-bit product to 0 (a division by zero).
        BadCase{"TpTimesPpBeyond32Bits", "deployment { parallelism { tp: 65536 pp: 65536 } }",
                "deployment.parallelism.tp", "must divide gpu_count = 2"},
        BadCase{"ZeroKvPool", "kv_pools { name: \"x\" tokens: 0 }", "kv_pools[0].tokens",
                "must be > 0"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

TEST(HardwareValidation, UncitedFigureIsReported) {
  v1::Hardware h;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
id: "gpu" vendor: "V" name: "N"
memory_bytes: 25769803776 usable_memory_bytes: 24000000000
memory_bandwidth_bytes_per_second: 3e11
sources { fields: "memory_bytes" fields: "usable_memory_bytes" document: "d" }
)",
                                                            &h));
  std::vector<Finding> findings = ValidateEntity(h);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].field_path, "memory_bandwidth_bytes_per_second");
  EXPECT_THAT(findings[0].message, HasSubstr("has no citation"));
}

TEST(HardwareValidation, UsableAboveMarketedIsReported) {
  v1::Hardware h;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
id: "gpu" vendor: "V" name: "N"
memory_bytes: 25769803776 usable_memory_bytes: 51539607552
memory_bandwidth_bytes_per_second: 3e11
sources { fields: "memory_bytes" fields: "usable_memory_bytes"
          fields: "memory_bandwidth_bytes_per_second" document: "d" }
)",
                                                            &h));
  std::vector<Finding> findings = ValidateEntity(h);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].field_path, "usable_memory_bytes");
}

// A valid card with every figure cited; the cases below break one thing.
constexpr char kCitedCard[] = R"(
id: "gpu" vendor: "V" name: "N"
memory_bytes: 25769803776 usable_memory_bytes: 24000000000
memory_bandwidth_bytes_per_second: 3e11
peak_compute { format: NUMBER_FORMAT_BF16 dense_flops_per_second: 1.2e14 }
intra_node { kind: LINK_KIND_PCIE bandwidth_bytes_per_second: 3.2e10 pcie_generation: 4 }
power_watts: 72 max_gpus_per_node: 8
sources { fields: "memory_bytes" fields: "usable_memory_bytes" fields: "max_gpus_per_node"
          fields: "memory_bandwidth_bytes_per_second" fields: "peak_compute"
          fields: "intra_node" fields: "power_watts" document: "d" }
)";

TEST(HardwareValidation, CitedCardIsValid) {
  v1::Hardware h;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kCitedCard, &h));
  EXPECT_TRUE(ValidateEntity(h).empty());
}

class HardwareRanges : public ::testing::TestWithParam<BadCase> {};

TEST_P(HardwareRanges, FigureOutsideAnyRealCardIsReported) {
  v1::Hardware h;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kCitedCard, &h));
  ASSERT_TRUE(google::protobuf::TextFormat::MergeFromString(GetParam().text, &h));
  std::vector<Finding> findings = ValidateEntity(h);
  ASSERT_EQ(findings.size(), 1u) << findings[0].message;
  EXPECT_EQ(findings[0].field_path, GetParam().field_path);
  EXPECT_THAT(findings[0].message, HasSubstr(GetParam().message));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, HardwareRanges,
    ::testing::Values(
        // 24 written as GB instead of bytes.
        BadCase{"UsableInGigabytes", "usable_memory_bytes: 24", "usable_memory_bytes",
                "usable_memory_bytes = 24; must be in [1.07374e+09, 1.1259e+15] bytes"},
        BadCase{"BandwidthInGigabytes", "memory_bandwidth_bytes_per_second: 300",
                "memory_bandwidth_bytes_per_second", "= 300; must be in [1e+10, 1e+15] bytes/s"},
        BadCase{"PeakInTeraflops",
                "peak_compute { format: NUMBER_FORMAT_FP8 dense_flops_per_second: 242 }",
                "peak_compute[1].dense_flops_per_second",
                "= 242; must be in [1e+11, 1e+18] FLOP/s"},
        BadCase{"PeakWithoutFigure", "peak_compute { format: NUMBER_FORMAT_FP8 }",
                "peak_compute[1].dense_flops_per_second", "= 0; must be > 0"},
        BadCase{"LinkInGigabytes", "intra_node { bandwidth_bytes_per_second: 32 }",
                "intra_node.bandwidth_bytes_per_second", "= 32; must be in [1e+08, 1e+14]"},
        BadCase{"PcieGeneration", "intra_node { pcie_generation: 40 }",
                "intra_node.pcie_generation", "= 40; must be in [1, 8]"},
        BadCase{"PowerInMilliwatts", "power_watts: 72000000", "power_watts",
                "= 7.2e+07; must be in [1, 100000] W"},
        BadCase{"GpusPerNode", "max_gpus_per_node: 100000", "max_gpus_per_node",
                "= 100000; must be in [1, 4096]"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

TEST(HardwareValidation, ALongBadIdIsCutInTheMessage) {
  v1::Hardware h;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kCitedCard, &h));
  h.set_id(std::string(100000, 'X'));
  std::vector<Finding> findings = ValidateEntity(h);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].field_path, "id");
  EXPECT_THAT(findings[0].message, HasSubstr(std::string(80, 'X') + "...\"; must be lowercase"));
  EXPECT_LT(findings[0].message.size(), 300u);
}

TEST(HardwareValidation, CitationsAreOptionalOnlyWhenTheRulesSaySo) {
  v1::Hardware h;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kCitedCard, &h));
  h.clear_sources();
  const ValidationRules inline_card{.require_citations = false};
  EXPECT_TRUE(ValidateEntity(h, inline_card).empty());
  std::vector<Finding> findings = ValidateEntity(h);
  // memory, usable memory, bandwidth, the peak, the link's bandwidth and
  // generation, watts, GPUs per node.
  ASSERT_EQ(findings.size(), 8u);
  for (const Finding& f : findings) EXPECT_THAT(f.message, HasSubstr("has no citation"));
  // A citation given must still name its document.
  h.add_sources()->add_fields("memory_bytes");
  findings = ValidateEntity(h, inline_card);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].field_path, "sources[0].document");
}

TEST(ModelValidation, KvHeadsMustDivideHeads) {
  v1::Model m;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
id: "m" hidden_size: 64 intermediate_size: 128 num_attention_heads: 8
num_kv_heads: 3 vocab_size: 10 native_context_tokens: 100
native_dtype: NUMBER_FORMAT_BF16
layer_blocks { repeat: 1 layers { count: 1 attention: ATTENTION_KIND_FULL mlp: MLP_KIND_DENSE } }
sources { fields: "hidden_size" fields: "intermediate_size" fields: "num_attention_heads"
          fields: "num_kv_heads" fields: "vocab_size" fields: "native_context_tokens"
          fields: "layer_blocks" document: "d" }
)",
                                                            &m));
  std::vector<Finding> findings = ValidateEntity(m);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].field_path, "num_kv_heads");
  EXPECT_THAT(findings[0].message,
              HasSubstr("num_kv_heads = 3; must divide num_attention_heads = 8"));
}

TEST(ModelValidation, MoeLayersNeedExpertsPerTokenWithinExperts) {
  v1::Model m;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
id: "m" hidden_size: 64 num_attention_heads: 8 num_kv_heads: 8 vocab_size: 10
native_context_tokens: 100 native_dtype: NUMBER_FORMAT_BF16
layer_blocks { repeat: 2 layers { count: 1 attention: ATTENTION_KIND_FULL mlp: MLP_KIND_MOE } }
moe { num_routed_experts: 4 experts_per_token: 8 expert_intermediate_size: 32 }
sources { fields: "hidden_size" fields: "num_attention_heads" fields: "num_kv_heads"
          fields: "vocab_size" fields: "native_context_tokens" fields: "layer_blocks"
          fields: "moe" document: "d" }
)",
                                                            &m));
  std::vector<Finding> findings = ValidateEntity(m);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].field_path, "moe.experts_per_token");
}

TEST(IsValidId, AcceptsKebabCaseWithVersionDots) {
  EXPECT_TRUE(IsValidId("qwen2.5-7b-instruct"));
  EXPECT_TRUE(IsValidId("nvidia-h100-sxm-80gb"));
  EXPECT_FALSE(IsValidId("Qwen2.5"));
  EXPECT_FALSE(IsValidId("a--b"));
  EXPECT_FALSE(IsValidId("-a"));
  EXPECT_FALSE(IsValidId("a-"));
  EXPECT_FALSE(IsValidId("a_b"));
  EXPECT_FALSE(IsValidId(""));
}

}  // namespace
// An engine queues a batch or two ahead at most; more is a typo.
TEST(EnginePresetValidation, BatchesLaunchedAheadAreBounded) {
  v1::EnginePreset e;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "id: \"test-engine\" engine: ENGINE_KIND_SGLANG batches_launched_ahead: 1", &e));
  EXPECT_TRUE(ValidateEntity(e).empty());
  e.set_batches_launched_ahead(40);
  std::vector<Finding> findings = ValidateEntity(e);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].field_path, "batches_launched_ahead");
  EXPECT_THAT(findings[0].message, ::testing::HasSubstr("= 40; must be in [0, 4]"));
}

}  // namespace capplan::service

namespace capplan::service {
namespace {

// The fall-back rule comes as a pair: the capability and the preset for
// cards below it; a card's capability is major.minor.
TEST(EnginePresetValidation, ComputeCapabilityFallBackComesAsAPair) {
  v1::EnginePreset e;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "id: \"test-engine\" engine: ENGINE_KIND_VLLM min_compute_capability: \"8.0\" "
      "below_compute_capability_preset: \"test-engine-old\"",
      &e));
  EXPECT_TRUE(ValidateEntity(e).empty());
  e.clear_below_compute_capability_preset();
  std::vector<Finding> findings = ValidateEntity(e);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].field_path, "min_compute_capability");
  EXPECT_THAT(findings[0].message, ::testing::HasSubstr("is set alone"));
  e.set_min_compute_capability("eight");
  findings = ValidateEntity(e);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_THAT(findings[0].message, ::testing::HasSubstr("must be dotted numbers"));
}

// An exact native-sampler count is a count the fit holds: it needs one, in
// the fit's bounds on sampler copies.
TEST(EnginePresetValidation, AnExactNativeSamplerCountNeedsACountInBounds) {
  v1::EnginePreset e;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "id: \"test-engine\" engine: ENGINE_KIND_VLLM native_sampler_fit_group: \"g\" "
      "native_sampler_logit_copies_prior: 9.5 native_sampler_logit_copies_exact: true",
      &e));
  EXPECT_TRUE(ValidateEntity(e).empty());
  for (double bad : {0.0, 12.0}) {
    e.set_native_sampler_logit_copies_prior(bad);
    const std::vector<Finding> findings = ValidateEntity(e);
    ASSERT_EQ(findings.size(), 1u) << bad;
    EXPECT_EQ(findings[0].field_path, "native_sampler_logit_copies_exact");
    EXPECT_THAT(findings[0].message, ::testing::HasSubstr("must be in [1, 10]"));
  }
}

TEST(HardwareValidation, ComputeCapabilityIsMajorDotMinor) {
  v1::Hardware h;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(kCitedCard, &h));
  h.set_compute_capability("7.5");
  EXPECT_TRUE(ValidateEntity(h).empty());
  for (const char* bad : {"7", "7.5.1", "x.5", "0.5", "7.-1"}) {
    h.set_compute_capability(bad);
    std::vector<Finding> findings = ValidateEntity(h);
    ASSERT_EQ(findings.size(), 1u) << bad;
    EXPECT_EQ(findings[0].field_path, "compute_capability") << bad;
    EXPECT_THAT(findings[0].message, ::testing::HasSubstr("must be major.minor like 8.0")) << bad;
  }
}

}  // namespace
}  // namespace capplan::service

namespace capplan::service {
namespace {

TEST(ModelValidation, RecurrentStateDtypeIsAFloatFormatAStateCanBeHeldIn) {
  v1::Model m;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
id: "m" hidden_size: 64 intermediate_size: 128 num_attention_heads: 8
num_kv_heads: 8 vocab_size: 10 native_context_tokens: 100
native_dtype: NUMBER_FORMAT_BF16
layer_blocks { repeat: 1 layers { count: 1 attention: ATTENTION_KIND_LINEAR mlp: MLP_KIND_DENSE } }
linear_attention { num_key_heads: 2 num_value_heads: 4 key_head_dim: 8 value_head_dim: 8
                   conv_kernel_size: 4 recurrent_state_dtype: NUMBER_FORMAT_FP32 }
sources { fields: "hidden_size" fields: "intermediate_size" fields: "num_attention_heads"
          fields: "num_kv_heads" fields: "vocab_size" fields: "native_context_tokens"
          fields: "layer_blocks" fields: "linear_attention" document: "d" }
)",
                                                            &m));
  EXPECT_TRUE(ValidateEntity(m).empty());
  m.mutable_linear_attention()->set_recurrent_state_dtype(v1::NUMBER_FORMAT_FP8);
  std::vector<Finding> findings = ValidateEntity(m);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].field_path, "linear_attention.recurrent_state_dtype");
  EXPECT_THAT(findings[0].message, HasSubstr("= NUMBER_FORMAT_FP8; must be NUMBER_FORMAT_FP32"));
}

TEST(EnginePresetValidation, HybridAllocatorFactsNeedTheHybridAllocatorAndABound) {
  v1::EnginePreset e;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "id: \"test-engine\" engine: ENGINE_KIND_VLLM hybrid_kv_cache_groups: true "
      "hybrid_tokens_from_concurrency: true state_blocks_with_prefix_caching: 2",
      &e));
  EXPECT_TRUE(ValidateEntity(e).empty());
  e.set_state_blocks_with_prefix_caching(20000);
  std::vector<Finding> findings = ValidateEntity(e);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_THAT(findings[0].message, HasSubstr("= 20000; must be in [0, 8]"));
  e.set_state_blocks_with_prefix_caching(2);
  e.set_hybrid_kv_cache_groups(false);
  findings = ValidateEntity(e);
  ASSERT_EQ(findings.size(), 2u);
  EXPECT_EQ(findings[0].field_path, "hybrid_tokens_from_concurrency");
  EXPECT_THAT(findings[1].message, HasSubstr("set hybrid_kv_cache_groups too"));
}

// The catalogue's walk over every *_bytes field covers the new fitted one.
TEST(EnginePresetValidation, FittedAmountsOfMemoryAreNotNegative) {
  v1::EnginePreset e;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      "id: \"test-engine\" engine: ENGINE_KIND_SGLANG non_torch_flat_on_fast_link: true "
      "fast_link_multi_gpu_non_torch_bytes: 1.4e9",
      &e));
  EXPECT_TRUE(ValidateEntity(e).empty());
  e.set_fast_link_multi_gpu_non_torch_bytes(-1);
  const std::vector<Finding> findings = ValidateEntity(e);
  ASSERT_EQ(findings.size(), 1u);
  EXPECT_EQ(findings[0].field_path, "fast_link_multi_gpu_non_torch_bytes");
  EXPECT_THAT(findings[0].message, HasSubstr("= -1; must be > 0"));
}

}  // namespace
}  // namespace capplan::service
