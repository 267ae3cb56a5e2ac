#include "model/step_time.h"

#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/model/perf_scenarios.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::model {
namespace {

using ::capplan::testing::IsOk;
using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

using testing::DenseInputs;
using testing::MoeInputs;
using testing::TypicalCoefficients;

TEST(ExpertsTouched, MatchesHandComputedValues) {
  EXPECT_DOUBLE_EQ(ExpertsTouched(8, 2, 0), 0.0);
  EXPECT_NEAR(ExpertsTouched(8, 2, 1), 2.0, 1e-12);
  // 8 · (1 − (6/8)^2) = 3.5
  EXPECT_NEAR(ExpertsTouched(8, 2, 2), 3.5, 1e-12);
  // 256 experts, 8 per token, 16 tokens: 256 · (1 − (248/256)^16)
  EXPECT_NEAR(ExpertsTouched(256, 8, 16), 256 * (1 - std::pow(248.0 / 256.0, 16)), 1e-9);
  EXPECT_NEAR(ExpertsTouched(8, 8, 3), 8.0, 1e-12);
  EXPECT_NEAR(ExpertsTouched(128, 8, 1e5), 128.0, 1e-9);
}

TEST(WeightBytesRead, DenseIsIndependentOfBatchMoeGrowsAndSaturates) {
  const StepTimeInputs dense = DenseInputs();
  EXPECT_EQ(WeightBytesRead(dense, 1), WeightBytesRead(dense, 64));
  const StepTimeInputs moe = MoeInputs();
  double prev = 0;
  for (double n : {1.0, 2.0, 4.0, 16.0, 64.0, 256.0}) {
    const double w = WeightBytesRead(moe, n);
    EXPECT_GT(w, prev) << n;
    prev = w;
  }
  EXPECT_NEAR(WeightBytesRead(moe, 1e6),
              moe.dense_weight_bytes_per_gpu + moe.routed_expert_weight_bytes_per_gpu, 1.0);
  // One token reads k/E of the routed experts.
  EXPECT_NEAR(WeightBytesRead(moe, 1),
              moe.dense_weight_bytes_per_gpu + moe.routed_expert_weight_bytes_per_gpu * 8.0 / 128.0,
              1.0);
}

TEST(ExpectedTokensPerStep, MatchesClosedForm) {
  EXPECT_DOUBLE_EQ(ExpectedTokensPerStep(3, 0.0), 1.0);
  EXPECT_DOUBLE_EQ(ExpectedTokensPerStep(3, 1.0), 4.0);
  // (1 − 0.5^4) / 0.5 = 1.875
  EXPECT_NEAR(ExpectedTokensPerStep(3, 0.5), 1.875, 1e-12);
  // 1 + a + a² for k = 2
  EXPECT_NEAR(ExpectedTokensPerStep(2, 0.7), 1 + 0.7 + 0.49, 1e-12);
}

TEST(ComputeStepFeatures, MatchesHandComputedRoofline) {
  StepTimeInputs in;
  in.dense_weight_bytes_per_gpu = 1000;
  in.routed_expert_weight_bytes_per_gpu = 800;
  in.routed_experts = 4;
  in.experts_per_token = 1;
  in.kv_bytes_per_token_per_gpu = 2;
  in.state_bytes_per_sequence_per_gpu = 10;
  in.active_parameters_per_token_per_gpu = 50;
  in.attention_flops_per_token_per_context_token_per_gpu = 3;
  in.allreduce_bytes_per_token_per_gpu = 4;
  in.memory_bandwidth_bytes_per_second = 100;
  in.peak_flops_per_second = 1000;
  in.link_bandwidth_bytes_per_second = 8;
  StepShape s;
  s.decode_sequences = 2;
  s.decode_context_tokens = 10;
  s.prefill_tokens = 3;
  s.prefill_sequences = 1;
  s.prefill_context_tokens = 4;
  const StepFeatures f = ComputeStepFeatures(in, s);
  // 5 tokens: experts touched 4·(1 − 0.75^5); weights 1000 + 800·that/4.
  const double touched = 4 * (1 - std::pow(0.75, 5));
  EXPECT_NEAR(f(kAlphaFeature), 1.0, 0);
  EXPECT_NEAR(f(kWeightsFeature), (1000 + 800 * touched / 4) / 100, 1e-12);
  // KV: 2 B × (2·10 + 1·4) tokens + 10 B × 3 sequences.
  EXPECT_NEAR(f(kKvFeature), (2.0 * 24 + 30) / 100, 1e-12);
  // FLOPs: 2·50·5 + 3·(2·10 + 3·4).
  EXPECT_NEAR(f(kFlopsFeature), (500.0 + 3 * 32) / 1000, 1e-12);
  EXPECT_NEAR(f(kCommFeature), 4.0 * 5 / 8, 1e-12);
  const StepTimeCoefficients c{0.5, 1, 2, 3, 4};
  EXPECT_NEAR(StepSeconds(c, f), 0.5 + f(1) + 2 * f(2) + 3 * f(3) + 4 * f(4), 1e-12);
}

TEST(ComputeEngineStepFeatures, SpeculativeVerifiesKPlusOneTokensPerSequence) {
  const StepTimeInputs in = MoeInputs();
  SpeculativeDecoding spec;
  spec.draft_tokens = 3;
  spec.acceptance_rate = 0.7;
  spec.draft_weight_bytes_per_gpu = 1e9;
  spec.draft_active_parameters_per_token_per_gpu = 2e8;
  StepShape s;
  s.decode_sequences = 4;
  s.decode_context_tokens = 1000;
  const StepFeatures with = ComputeEngineStepFeatures(in, spec, s);
  StepShape plain = s;
  plain.decode_tokens_per_sequence = 4;
  const StepFeatures verify = ComputeStepFeatures(in, plain);
  // Weights: the verification pass over 16 tokens plus 3 draft passes.
  EXPECT_NEAR(with(kWeightsFeature),
              verify(kWeightsFeature) + 3 * 1e9 / in.memory_bandwidth_bytes_per_second, 1e-12);
  EXPECT_NEAR(with(kFlopsFeature),
              verify(kFlopsFeature) + 3 * 2 * 2e8 * 4 / in.peak_flops_per_second, 1e-12);
  EXPECT_EQ(with(kAlphaFeature), 1.0);
}

// Per-token decode time with and without speculation at batch b.
double PerTokenSeconds(const StepTimeInputs& in, const std::optional<SpeculativeDecoding>& spec,
                       double b) {
  StepShape s;
  s.decode_sequences = b;
  s.decode_context_tokens = 2000;
  const double step = StepSeconds(TypicalCoefficients(), ComputeEngineStepFeatures(in, spec, s));
  const double tau = spec ? ExpectedTokensPerStep(spec->draft_tokens, spec->acceptance_rate) : 1.0;
  return step / tau;
}

TEST(Speculative, HelpsAtLowBatchAndLosesOnMoeAtHighBatch) {
  StepTimeInputs in = MoeInputs();
  SpeculativeDecoding spec;
  spec.draft_tokens = 3;
  spec.acceptance_rate = 0.6;
  spec.draft_weight_bytes_per_gpu = 0.5e9;
  spec.draft_active_parameters_per_token_per_gpu = 1e8;
  EXPECT_LT(PerTokenSeconds(in, spec, 1), PerTokenSeconds(in, std::nullopt, 1));
  EXPECT_GT(PerTokenSeconds(in, spec, 1024), PerTokenSeconds(in, std::nullopt, 1024));
  // A single crossover.
  int crossings = 0;
  bool prev = true;
  for (int b = 1; b <= 1024; ++b) {
    const bool better = PerTokenSeconds(in, spec, b) < PerTokenSeconds(in, std::nullopt, b);
    if (better != prev) ++crossings;
    prev = better;
  }
  EXPECT_EQ(crossings, 1);
}

TEST(StepTime, MoeDecodeSlowsWithBatchMoreThanDense) {
  const StepTimeCoefficients c = TypicalCoefficients();
  auto ratio = [&c](const StepTimeInputs& in) {
    StepShape one;
    one.decode_sequences = 1;
    one.decode_context_tokens = 1000;
    StepShape many = one;
    many.decode_sequences = 16;
    return StepSeconds(c, ComputeStepFeatures(in, many)) /
           StepSeconds(c, ComputeStepFeatures(in, one));
  };
  EXPECT_GT(ratio(MoeInputs()), 1.5 * ratio(DenseInputs()));
}

TEST(RequestPhases, SingleRequestIsPrefillThenDecodeSteps) {
  const StepTimeInputs in = DenseInputs();
  const StepTimeCoefficients c = TypicalCoefficients();
  Workload w;
  w.input_tokens = 1000;
  w.output_tokens = 101;
  const RequestPhaseFeatures f =
      ComputeRequestPhaseFeatures(in, SchedulerConfig{4096}, std::nullopt, w, 1);
  StepShape prefill;
  prefill.prefill_tokens = 1000;
  prefill.prefill_sequences = 1;
  prefill.prefill_context_tokens = 500;
  StepShape decode;
  decode.decode_sequences = 1;
  decode.decode_context_tokens = 1000 + 101 / 2.0;
  const RequestPhaseTimes t = ToPhaseTimes(f, c, w.output_tokens);
  EXPECT_NEAR(t.prefill_seconds, StepSeconds(c, ComputeStepFeatures(in, prefill)), 1e-12);
  EXPECT_NEAR(t.tpot_seconds, StepSeconds(c, ComputeStepFeatures(in, decode)), 1e-12);
  EXPECT_NEAR(t.life_seconds, t.prefill_seconds + 100 * t.tpot_seconds, 1e-12);
  EXPECT_DOUBLE_EQ(f.prefill_steps, 1);
}

TEST(RequestPhases, ChunkedPrefillTakesCeilInputOverBudgetSteps) {
  Workload w;
  w.input_tokens = 10000;
  w.output_tokens = 10;
  const RequestPhaseFeatures f =
      ComputeRequestPhaseFeatures(DenseInputs(), SchedulerConfig{4096}, std::nullopt, w, 1);
  EXPECT_DOUBLE_EQ(f.prefill_steps, 3);
  // A prefix-cache hit removes recomputed tokens.
  w.prefix_cache_hit_rate = 0.8;
  const RequestPhaseFeatures g =
      ComputeRequestPhaseFeatures(DenseInputs(), SchedulerConfig{4096}, std::nullopt, w, 1);
  EXPECT_DOUBLE_EQ(g.prefill_steps, 1);
}

TEST(RequestPhases, TpotGrowsWithPopulation) {
  Workload w;
  w.input_tokens = 2000;
  w.output_tokens = 300;
  double prev = 0;
  for (int n : {1, 2, 4, 8, 16, 32}) {
    const RequestPhaseTimes t = ToPhaseTimes(
        ComputeRequestPhaseFeatures(MoeInputs(), SchedulerConfig{8192}, std::nullopt, w, n),
        TypicalCoefficients(), w.output_tokens);
    EXPECT_GT(t.tpot_seconds, prev) << n;
    prev = t.tpot_seconds;
  }
}

struct BadInputCase {
  std::string name;
  void (*mutate)(StepTimeInputs&);
  std::string expected;
};

class StepTimeInputsValidation : public ::testing::TestWithParam<BadInputCase> {};

TEST_P(StepTimeInputsValidation, RejectsWithFieldPathValueAndRule) {
  StepTimeInputs in = MoeInputs();
  GetParam().mutate(in);
  StepShape s;
  s.decode_sequences = 1;
  EXPECT_THAT(StepTimeSeconds(in, TypicalCoefficients(), s),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().expected)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, StepTimeInputsValidation,
    ::testing::Values(
        BadInputCase{"ZeroBandwidth",
                     [](StepTimeInputs& in) { in.memory_bandwidth_bytes_per_second = 0; },
                     "StepTimeInputs.memory_bandwidth_bytes_per_second = 0; "
                     "must be finite and > 0"},
        BadInputCase{"NanPeak", [](StepTimeInputs& in) { in.peak_flops_per_second = std::nan(""); },
                     "StepTimeInputs.peak_flops_per_second = nan"},
        BadInputCase{"TooManyExpertsPerToken",
                     [](StepTimeInputs& in) { in.experts_per_token = 200; },
                     "StepTimeInputs.experts_per_token = 200; must be in [1, "
                     "routed_experts = 128]"},
        BadInputCase{"NegativeKv", [](StepTimeInputs& in) { in.kv_bytes_per_token_per_gpu = -1; },
                     "StepTimeInputs.kv_bytes_per_token_per_gpu = -1"},
        BadInputCase{"CommWithoutLink",
                     [](StepTimeInputs& in) { in.link_bandwidth_bytes_per_second.reset(); },
                     "StepTimeInputs.link_bandwidth_bytes_per_second is "
                     "absent"},
        BadInputCase{"DenseWithRoutedBytes",
                     [](StepTimeInputs& in) {
                       in.routed_experts = 0;
                       in.experts_per_token = 0;
                     },
                     "StepTimeInputs.routed_expert_weight_bytes_per_gpu"}),
    [](const ::testing::TestParamInfo<BadInputCase>& info) { return info.param.name; });

TEST(StepTimeValidation, DefaultInputsAreInvalidAndTypicalAreValid) {
  // The first check: dense 0 + routed-expert 0 weight bytes is not > 0.
  EXPECT_THAT(ValidateStepTimeInputs(StepTimeInputs{}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("StepTimeInputs.dense_weight_bytes_per_gpu = 0; dense plus "
                                 "routed-expert weight bytes must be > 0")));
  EXPECT_THAT(ValidateStepTimeInputs(DenseInputs()), IsOk());
  EXPECT_THAT(ValidateStepTimeInputs(MoeInputs()), IsOk());
  EXPECT_THAT(ValidateCoefficients(TypicalCoefficients()), IsOk());
}

TEST(StepTimeValidation, NegativeCoefficientNamed) {
  StepTimeCoefficients c = TypicalCoefficients();
  c.beta_kv = -0.1;
  EXPECT_THAT(ValidateCoefficients(c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("StepTimeCoefficients.beta_kv = -0.1; must be finite and >= 0")));
}

TEST(StepTimeValidation, EmptyStepRejected) {
  EXPECT_THAT(StepTimeSeconds(DenseInputs(), TypicalCoefficients(), StepShape{}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("StepShape.decode_sequences = 0; a step needs decode sequences "
                                 "or prefill tokens")));
}

TEST(WorkloadValidation, RejectsNonPositiveTokensAndBadRates) {
  Workload w;
  w.input_tokens = 100;
  w.output_tokens = 0;
  EXPECT_THAT(ValidateWorkload(w), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("Workload.output_tokens = 0; must be >= 1")));
  w.output_tokens = 10;
  w.prefix_cache_hit_rate = 1.5;
  EXPECT_THAT(ValidateWorkload(w),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Workload.prefix_cache_hit_rate = 1.5; must be in [0, 1]")));
}

TEST(SpeculativeValidation, RejectsBadDraftAndAcceptance) {
  SpeculativeDecoding s;
  s.draft_tokens = 0;
  s.acceptance_rate = 0.5;
  EXPECT_THAT(ValidateSpeculative(s),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("SpeculativeDecoding.draft_tokens = 0; must be in [1, 64]")));
  s.draft_tokens = 2;
  s.acceptance_rate = 1.2;
  EXPECT_THAT(ValidateSpeculative(s),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("SpeculativeDecoding.acceptance_rate = 1.2; must be in [0, 1]")));
}

}  // namespace
}  // namespace capplan::model
