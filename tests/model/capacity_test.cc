#include "model/capacity.h"

#include <cmath>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/model/perf_scenarios.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::model {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

TEST(MonthlyCapacity, FromRequestsMatchesHandComputation) {
  // 1.5 req/s × (1000 + 500) tokens = 2250 tok/s; × 86,400 × 30.
  absl::StatusOr<MonthlyCapacity> c = MonthlyCapacityFromRequests(1.5, 1000, 500);
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(c->tokens_per_second_total, 2250);
  EXPECT_DOUBLE_EQ(c->output_tokens_per_second, 750);
  EXPECT_DOUBLE_EQ(c->tokens_per_month_total, 2250.0 * 86400 * 30);
  EXPECT_DOUBLE_EQ(c->output_tokens_per_month, 750.0 * 86400 * 30);
}

TEST(MonthlyCapacity, DutyFactorAndDaysScale) {
  CapacityPeriod p;
  p.days = 31;
  p.duty_factor = 0.25;
  absl::StatusOr<MonthlyCapacity> c = MonthlyCapacityFromTokenRates(400.0, 100.0, p);
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(c->tokens_per_month_total, 400.0 * 86400 * 31 * 0.25);
  EXPECT_DOUBLE_EQ(c->output_tokens_per_month, 100.0 * 86400 * 31 * 0.25);
  c = MonthlyCapacityFromTokenRates(std::nullopt, 100.0);
  ASSERT_TRUE(c.ok());
  EXPECT_DOUBLE_EQ(c->output_tokens_per_month, 100.0 * 86400 * 30);
}

TEST(MonthlyCapacity, RejectsBadPeriodAndRates) {
  CapacityPeriod p;
  p.duty_factor = 1.5;
  EXPECT_THAT(MonthlyCapacityFromRequests(1, 1, 1, p),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("CapacityPeriod.duty_factor = 1.5; must be in [0, 1]")));
  EXPECT_THAT(MonthlyCapacityFromRequests(-1, 1, 1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("requests_per_second = -1; must be finite and >= 0")));
  EXPECT_THAT(MonthlyCapacityFromTokenRates(50.0, 100.0),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("total_tokens_per_second = 50; must be >= "
                                 "output_tokens_per_second = 100")));
}

TEST(ReplicasForTarget, CeilOfTargetOverSafeLoad) {
  EXPECT_EQ(*ReplicasForTarget(10, 3), 4);
  EXPECT_EQ(*ReplicasForTarget(9, 3), 3);          // exact multiple
  EXPECT_EQ(*ReplicasForTarget(0.3 * 3, 0.3), 3);  // float noise not rounded up
  EXPECT_EQ(*ReplicasForTarget(0.1, 3), 1);
  EXPECT_THAT(ReplicasForTarget(1, 0),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("safe_load_per_replica = 0; must be finite and > 0")));
  // 1e12 / 1e-3 = 1e15 replicas, beyond the 1,000,000 cap.
  EXPECT_THAT(ReplicasForTarget(1e12, 1e-3),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("target_load = 1e+12; needs more than 1000000 replicas")));
}

TEST(MultiNodeScaling, EfficiencyAndTtftFlagsAgainstThresholdsFromData) {
  ScalingThresholds t;
  t.min_efficiency = 0.7;
  t.max_ttft_p99_degradation_fraction = 0.3;
  absl::StatusOr<ScalingAssessment> a = AssessMultiNodeScaling(2, 1300, 1000, 2.7, 2.0, t);
  ASSERT_TRUE(a.ok());
  EXPECT_DOUBLE_EQ(a->efficiency, 0.65);
  EXPECT_TRUE(a->efficiency_below_threshold);
  EXPECT_NEAR(*a->ttft_p99_degradation_fraction, 0.35, 1e-12);
  EXPECT_TRUE(a->ttft_p99_degraded);
  a = AssessMultiNodeScaling(4, 3600, 1000, std::nullopt, std::nullopt, t);
  ASSERT_TRUE(a.ok());
  EXPECT_DOUBLE_EQ(a->efficiency, 0.9);
  EXPECT_FALSE(a->efficiency_below_threshold);
  EXPECT_FALSE(a->ttft_p99_degradation_fraction.has_value());
  EXPECT_THAT(AssessMultiNodeScaling(1, 1, 1, std::nullopt, std::nullopt, t),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nodes = 1; must be >= 2")));
  EXPECT_THAT(AssessMultiNodeScaling(2, 1, 1, 2.0, std::nullopt, t),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ttft_p99_n_seconds and ttft_p99_1_seconds: give both or "
                                 "neither")));
}

TEST(KvRestore, BytesOverSlowerOfTierAndLinkPlusLatency) {
  KvTier tier;
  tier.bandwidth_bytes_per_second = 10e9;
  tier.latency_seconds = 0.002;
  // 4 GB over min(10 GB/s, 5 GB/s) + 2 ms = 0.802 s against 8 s of prefill.
  absl::StatusOr<KvRestoreEstimate> e = EstimateKvRestore(4e9, tier, 5e9, 8.0);
  ASSERT_TRUE(e.ok());
  EXPECT_NEAR(e->restore_seconds, 0.802, 1e-12);
  EXPECT_NEAR(e->speedup, 8.0 / 0.802, 1e-12);
  EXPECT_TRUE(e->restore_faster);
  e = EstimateKvRestore(4e9, tier, 5e9, 0.5);
  ASSERT_TRUE(e.ok());
  EXPECT_FALSE(e->restore_faster);
  EXPECT_THAT(EstimateKvRestore(4e9, KvTier{}, 5e9, 1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("KvTier.bandwidth_bytes_per_second = 0; must be finite and > 0")));
}

TEST(PrefillSeconds, GrowsFasterThanLinearlyWithContext) {
  PerformanceModel m;
  m.inputs = testing::DenseInputs();
  m.coefficients = testing::TypicalCoefficients();
  m.scheduler.max_batched_tokens = 8192;
  const double t1 = *PrefillSeconds(m, 8192);
  const double t16 = *PrefillSeconds(m, 16 * 8192);
  // 16 chunks, each attending to a longer prefix: more than 16×.
  EXPECT_GT(t16, 16 * t1);
  EXPECT_THAT(PrefillSeconds(m, 0), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("context_tokens = 0; must be >= 1")));
}

}  // namespace
}  // namespace capplan::model

namespace capplan::model {
namespace {

TEST(CostPerMillionOutputTokens, PaysEveryHourOfTheMonth) {
  // 4 GPUs × 720 h × 2.0 = 5,760 for 1.44e9 output tokens → 4.0 per million.
  absl::StatusOr<double> cost = CostPerMillionOutputTokens(2.0, 4, CapacityPeriod{30, 0.5}, 1.44e9);
  ASSERT_TRUE(cost.ok()) << cost.status();
  EXPECT_DOUBLE_EQ(*cost, 4.0);
}

TEST(CostPerMillionOutputTokens, RejectsNonPositiveInputsNamingThem) {
  EXPECT_THAT(CostPerMillionOutputTokens(0, 1, {}, 1e6),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("price_per_gpu_hour = 0; must be > 0")));
  EXPECT_THAT(CostPerMillionOutputTokens(1, 0, {}, 1e6),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("gpus = 0; must be > 0")));
  EXPECT_THAT(CostPerMillionOutputTokens(1, 1, {}, 0),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("output_tokens_per_month = 0; must be > 0")));
}

}  // namespace
}  // namespace capplan::model
