#include "service/translate/enum_names.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::Eq;

// ------------------------------------------------------------ weight format

struct FormatCase {
  const char* text;
  v1::WeightFormat format;
};

class WeightFormatFromNameTest : public ::testing::TestWithParam<FormatCase> {};

TEST_P(WeightFormatFromNameTest, EveryNameInTheTableMapsToItsFormat) {
  absl::StatusOr<v1::WeightFormat> format =
      WeightFormatFromName("--weight-format", GetParam().text);
  ASSERT_TRUE(format.ok()) << format.status();
  EXPECT_EQ(*format, GetParam().format) << GetParam().text;
}

INSTANTIATE_TEST_SUITE_P(
    Table, WeightFormatFromNameTest,
    ::testing::Values(FormatCase{"bf16", v1::WEIGHT_FORMAT_BF16},
                      FormatCase{"fp16", v1::WEIGHT_FORMAT_FP16},
                      FormatCase{"fp32", v1::WEIGHT_FORMAT_FP32},
                      FormatCase{"fp8", v1::WEIGHT_FORMAT_FP8_PER_TENSOR},
                      FormatCase{"fp8-block", v1::WEIGHT_FORMAT_FP8_BLOCK},
                      FormatCase{"fp8-channel", v1::WEIGHT_FORMAT_FP8_PER_CHANNEL},
                      FormatCase{"int8", v1::WEIGHT_FORMAT_INT8},
                      FormatCase{"awq", v1::WEIGHT_FORMAT_INT4_AWQ},
                      FormatCase{"gptq", v1::WEIGHT_FORMAT_INT4_GPTQ},
                      FormatCase{"int4", v1::WEIGHT_FORMAT_INT4_SYMMETRIC},
                      // vLLM's quantization name for the same symmetric INT4 layout.
                      FormatCase{"moe_wna16", v1::WEIGHT_FORMAT_INT4_SYMMETRIC},
                      FormatCase{"nvfp4", v1::WEIGHT_FORMAT_NVFP4},
                      FormatCase{"mxfp4", v1::WEIGHT_FORMAT_MXFP4}));

TEST(WeightFormatFromName, IgnoresCase) {
  EXPECT_EQ(*WeightFormatFromName("f", "AWQ"), v1::WEIGHT_FORMAT_INT4_AWQ);
  EXPECT_EQ(*WeightFormatFromName("f", "NvFp4"), v1::WEIGHT_FORMAT_NVFP4);
}

TEST(WeightFormatFromName, UnknownNameListsEveryNameInTableOrder) {
  EXPECT_THAT(WeightFormatFromName("--weight-format", "Q4_K"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("--weight-format = Q4_K; must be one of bf16, fp16, fp32, fp8, "
                          "fp8-block, fp8-channel, int8, awq, gptq, int4, moe_wna16, nvfp4, "
                          "mxfp4")));
}

TEST(WeightFormatFromName, EmptyTextIsNotAName) {
  EXPECT_THAT(WeightFormatFromName("ingest.quantization", ""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr("ingest.quantization = ; must be one of bf16,")));
}

// ------------------------------------------------------------------- engine

TEST(EngineKindFromName, VllmAndSglangInAnyCase) {
  EXPECT_EQ(*EngineKindFromName("--engine", "vllm"), v1::ENGINE_KIND_VLLM);
  EXPECT_EQ(*EngineKindFromName("--engine", "SGLang"), v1::ENGINE_KIND_SGLANG);
}

TEST(EngineKindFromName, UnknownEngineNamesFieldValueAndChoices) {
  EXPECT_THAT(EngineKindFromName("--engine", "tgi"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("--engine = tgi; must be one of vllm, sglang, trtllm")));
}

// ----------------------------------------------------------- KV cache dtype

TEST(KvCacheDtypeFromName, EveryName) {
  EXPECT_EQ(*KvCacheDtypeFromName("--kv-cache-dtype", "auto"), v1::KV_CACHE_DTYPE_AUTO);
  EXPECT_EQ(*KvCacheDtypeFromName("--kv-cache-dtype", "bf16"), v1::KV_CACHE_DTYPE_BF16);
  EXPECT_EQ(*KvCacheDtypeFromName("--kv-cache-dtype", "fp16"), v1::KV_CACHE_DTYPE_FP16);
  EXPECT_EQ(*KvCacheDtypeFromName("--kv-cache-dtype", "FP8"), v1::KV_CACHE_DTYPE_FP8);
}

TEST(KvCacheDtypeFromName, Fp8E5m2IsNotInTheTable) {
  // The table holds the four names only; engine spellings such as fp8_e5m2
  // are refused, not guessed.
  EXPECT_THAT(KvCacheDtypeFromName("--kv-cache-dtype", "fp8_e5m2"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("--kv-cache-dtype = fp8_e5m2; must be one of auto, bf16, fp16, fp8")));
}

// ----------------------------------------------------------- sampler backend

TEST(SamplerBackendFromName, EveryNameAndARefusal) {
  EXPECT_EQ(*SamplerBackendFromName("--sampler-backend", "native"), v1::SAMPLER_BACKEND_NATIVE);
  EXPECT_EQ(*SamplerBackendFromName("--sampler-backend", "Default"),
            v1::SAMPLER_BACKEND_UNSPECIFIED);
  EXPECT_THAT(SamplerBackendFromName("--sampler-backend", "flashinfer"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("--sampler-backend = flashinfer; must be one of default, native")));
}

// --------------------------------------------------------------- speculative

TEST(SpeculativeMethodFromName, EveryName) {
  EXPECT_EQ(*SpeculativeMethodFromName("m", "none"), v1::SPECULATIVE_METHOD_NONE);
  EXPECT_EQ(*SpeculativeMethodFromName("m", "MTP"), v1::SPECULATIVE_METHOD_MTP);
  EXPECT_EQ(*SpeculativeMethodFromName("m", "eagle"), v1::SPECULATIVE_METHOD_EAGLE);
  EXPECT_EQ(*SpeculativeMethodFromName("m", "draft"), v1::SPECULATIVE_METHOD_DRAFT_MODEL);
  EXPECT_EQ(*SpeculativeMethodFromName("m", "ngram"), v1::SPECULATIVE_METHOD_NGRAM);
}

TEST(SpeculativeMethodFromName, UnknownMethodNamesTheChoices) {
  EXPECT_THAT(SpeculativeMethodFromName("--speculative-method", "medusa"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("--speculative-method = medusa; must be one of none, mtp, eagle, "
                          "draft, ngram")));
}

// --------------------------------------------------------------- short names

TEST(ShortName, DropsTheEnumPrefix) {
  EXPECT_EQ(ShortName(v1::MEMORY_BINDING_WEIGHTS), "WEIGHTS");
  EXPECT_EQ(ShortName(v1::MEMORY_BINDING_KV_POOL), "KV_POOL");
  EXPECT_EQ(ShortName(v1::MEMORY_BINDING_MAX_NUM_SEQS), "MAX_NUM_SEQS");
  EXPECT_EQ(ShortName(v1::LOAD_BINDING_SLOT_WAIT), "SLOT_WAIT");
  EXPECT_EQ(ShortName(v1::LOAD_BINDING_DOES_NOT_FIT), "DOES_NOT_FIT");
  EXPECT_EQ(ShortName(v1::SLOT_BOUND_OPERATOR_GATE), "OPERATOR_GATE");
  EXPECT_EQ(ShortName(v1::SLOT_BOUND_RUNNING_REQUEST_LIMIT), "RUNNING_REQUEST_LIMIT");
}

TEST(ShortName, UnspecifiedAndOutOfRangeValuesReadUnspecified) {
  EXPECT_EQ(ShortName(v1::MEMORY_BINDING_UNSPECIFIED), "UNSPECIFIED");
  EXPECT_EQ(ShortName(v1::LOAD_BINDING_UNSPECIFIED), "UNSPECIFIED");
  EXPECT_EQ(ShortName(v1::SLOT_BOUND_UNSPECIFIED), "UNSPECIFIED");
  // A value no name exists for (a newer peer's enum): the _Name lookup is
  // empty, and the short name says so rather than printing nothing.
  EXPECT_EQ(ShortName(static_cast<v1::SlotBound>(99)), "UNSPECIFIED");
}

}  // namespace
}  // namespace capplan::service
