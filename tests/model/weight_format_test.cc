#include "model/weight_format.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::model {
namespace {

using ::capplan::testing::IsOk;
using ::capplan::testing::StatusIs;
using ::testing::Eq;

struct BitsCase {
  std::string name;
  WeightFormat format;
  int64_t group_size;
  int64_t out_features;
  int64_t in_features;
  double expected_bits;
};

class BitsPerParameterTest : public ::testing::TestWithParam<BitsCase> {};

TEST_P(BitsPerParameterTest, MatchesHandCount) {
  const BitsCase& c = GetParam();
  EXPECT_NEAR(
      BitsPerParameter(c.format, c.group_size, c.out_features, c.in_features, NumberType::kBf16),
      c.expected_bits, 1e-9)
      << c.name;
}

// Hand counts (bits per weight = value bits + per-group metadata / group):
INSTANTIATE_TEST_SUITE_P(
    Formats, BitsPerParameterTest,
    ::testing::Values(
        // bf16 checkpoint stored natively.
        BitsCase{"native_bf16", WeightFormat::kNative, 0, 4096, 4096, 16.0},
        BitsCase{"fp32", WeightFormat::kFp32, 0, 4096, 4096, 32.0},
        // AWQ: fp16 scale + 4-bit zero per 128 inputs: 4 + 20/128.
        BitsCase{"awq_g128", WeightFormat::kInt4Awq, 128, 4096, 4096, 4.15625},
        // A partial last group still stores its scale: 200 inputs = 2 groups.
        BitsCase{"awq_partial_group", WeightFormat::kInt4Awq, 128, 64, 200, 4.0 + 20.0 * 2 / 200},
        // GPTQ adds an int32 g_idx per input row: + 32 / out.
        BitsCase{"gptq_g128", WeightFormat::kInt4Gptq, 128, 4096, 4096, 4.15625 + 32.0 / 4096},
        // compressed-tensors W4A16 symmetric, group 32: 4 + 16/32.
        BitsCase{"int4_sym_g32", WeightFormat::kInt4Symmetric, 32, 2048, 7168, 4.5},
        // NVFP4: fp8 scale per 16 + two fp32 per tensor.
        BitsCase{"nvfp4", WeightFormat::kNvfp4, 0, 1024, 1024, 4.5 + 64.0 / (1024.0 * 1024.0)},
        // MXFP4: e8m0 scale per 32.
        BitsCase{"mxfp4", WeightFormat::kMxfp4, 0, 5760, 2880, 4.25},
        // FP8 block 128: a 300x200 weight has 3x2 blocks of one fp32 scale.
        BitsCase{"fp8_block", WeightFormat::kFp8Block, 128, 300, 200, 8.0 + 32.0 * 6 / 60000},
        BitsCase{"fp8_per_tensor", WeightFormat::kFp8PerTensor, 0, 100, 100, 8.0 + 64.0 / 10000},
        // FP8 per channel: one fp32 per output row of 100 inputs.
        BitsCase{"fp8_per_channel", WeightFormat::kFp8PerChannel, 0, 10, 100, 8.32}),
    [](const auto& info) { return info.param.name; });

TEST(BitsPerParameter, NativeFollowsCheckpointDtype) {
  EXPECT_EQ(BitsPerParameter(WeightFormat::kNative, 0, 8, 8, NumberType::kFp16), 16.0);
  EXPECT_EQ(BitsPerParameter(WeightFormat::kNative, 0, 8, 8, NumberType::kFp32), 32.0);
}

TensorGroup Projection(Component c) {
  TensorGroup t;
  t.component = c;
  t.out_features = 128;
  t.in_features = 128;
  t.quantizable = true;
  return t;
}

TEST(IsQuantized, RespectsUnquantizedComponentsAndExpertsOnly) {
  Quantization q;
  q.format = WeightFormat::kInt4Awq;
  q.unquantized = {Component::kAttention};
  EXPECT_FALSE(IsQuantized(q, Projection(Component::kAttention)));
  EXPECT_TRUE(IsQuantized(q, Projection(Component::kDenseMlp)));
  TensorGroup norm = Projection(Component::kNorms);
  norm.quantizable = false;
  EXPECT_FALSE(IsQuantized(q, norm));
  q.experts_only = true;
  EXPECT_FALSE(IsQuantized(q, Projection(Component::kDenseMlp)));
  EXPECT_TRUE(IsQuantized(q, Projection(Component::kRoutedExperts)));
  q.format = WeightFormat::kNative;
  EXPECT_FALSE(IsQuantized(q, Projection(Component::kRoutedExperts)));
}

TEST(WeightBytes, UnquantizedTensorUsesNativeDtype) {
  Quantization q;
  q.format = WeightFormat::kMxfp4;
  q.unquantized = {Component::kAttention};
  const TensorGroup attn = Projection(Component::kAttention);
  EXPECT_DOUBLE_EQ(WeightBytes(q, NumberType::kBf16, attn, 128, 128, 1), 128.0 * 128 * 2);
  const TensorGroup experts = Projection(Component::kRoutedExperts);
  EXPECT_DOUBLE_EQ(WeightBytes(q, NumberType::kBf16, experts, 128, 128, 4),
                   4 * 128.0 * 128 * 4.25 / 8);
}

TEST(ValidateQuantization, NamesFieldValueAndRule) {
  Quantization q;
  q.format = WeightFormat::kInt4Gptq;
  q.group_size = -1;
  EXPECT_THAT(ValidateQuantization(q),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("Quantization.group_size = -1; must not be negative")));
  q.format = WeightFormat::kNvfp4;
  q.group_size = 32;
  EXPECT_THAT(ValidateQuantization(q),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("Quantization.group_size = 32; NVFP4 groups are 16 values")));
  q.group_size = 16;
  EXPECT_THAT(ValidateQuantization(q), IsOk());
}

}  // namespace
}  // namespace capplan::model
