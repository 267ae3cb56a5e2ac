#include "model/search.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/queueing.h"
#include "tests/model/perf_scenarios.h"

namespace capplan::model {
namespace {

using ::testing::ElementsAre;

TEST(ParetoFront, KeepsOnlyUndominatedPointsSortedByLower) {
  // (cost, speed): 1 dominates 3 (cheaper and faster); 0 and 2 trade off.
  std::vector<FrontPoint> points = {{2.0, 30}, {1.0, 10}, {4.0, 50}, {3.0, 20}, {1.0, 5}};
  EXPECT_THAT(ParetoFront(points), ElementsAre(1, 0, 2));
}

TEST(ParetoFront, EqualPointsKeepTheFirst) {
  std::vector<FrontPoint> points = {{1, 1}, {1, 1}, {2, 2}};
  EXPECT_THAT(ParetoFront(points), ElementsAre(0, 2));
  EXPECT_TRUE(ParetoFront({}).empty());
}

TEST(Dominated, NeedsBothCoordinatesAtLeastAsGood) {
  std::vector<FrontPoint> front = {{1, 10}, {3, 30}};
  EXPECT_TRUE(Dominated(front, {2, 10}));   // (1, 10) is as fast and cheaper
  EXPECT_TRUE(Dominated(front, {3, 30}));   // equal
  EXPECT_FALSE(Dominated(front, {2, 11}));  // faster than anything that cheap
  EXPECT_FALSE(Dominated(front, {0.5, 1}));
  EXPECT_FALSE(Dominated({}, {1, 1}));
}

PerformanceModel Moe() {
  PerformanceModel m;
  m.inputs = testing::MoeInputs();
  m.coefficients = testing::TypicalCoefficients();
  m.scheduler.max_batched_tokens = 8192;
  return m;
}

Workload Load() {
  Workload w;
  w.input_tokens = 2048;
  w.output_tokens = 256;
  return w;
}

// The bounds are floors and ceilings of the calibrated model: its TPOT at
// batch 1 is no lower, its saturation rate no higher.
TEST(RooflineBounds, BoundTheCalibratedModel) {
  const int slots = 64;
  absl::StatusOr<RooflineBounds> b =
      ComputeRooflineBounds(Moe(), Load(), slots, std::nullopt, std::nullopt);
  ASSERT_TRUE(b.ok()) << b.status();
  absl::StatusOr<LoadDependentServer> s =
      LoadDependentServer::Create(Moe(), Load(), Slots{slots, SlotBound::kKvPool});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_GT(b->tpot_lower_seconds, 0);
  EXPECT_LE(b->tpot_lower_seconds, s->Phase(1).tpot_seconds);
  EXPECT_LE(b->ttft_lower_seconds, s->Phase(1).prefill_seconds);
  EXPECT_GE(b->max_requests_per_second, s->SaturationRate());
  EXPECT_EQ(b->max_users, slots);
  EXPECT_DOUBLE_EQ(b->max_output_tokens_per_second, b->max_requests_per_second * 256);
  EXPECT_FALSE(b->slo_missed);
}

TEST(RooflineBounds, TpotSloCapsTheUsers) {
  absl::StatusOr<RooflineBounds> free =
      ComputeRooflineBounds(Moe(), Load(), 256, std::nullopt, std::nullopt);
  ASSERT_TRUE(free.ok());
  // An SLO between the batch-1 floor and the batch-256 one.
  absl::StatusOr<LoadDependentServer> s =
      LoadDependentServer::Create(Moe(), Load(), Slots{256, SlotBound::kKvPool});
  ASSERT_TRUE(s.ok());
  const double slo = 1.5 * free->tpot_lower_seconds;
  absl::StatusOr<RooflineBounds> capped = ComputeRooflineBounds(Moe(), Load(), 256, std::nullopt, slo);
  ASSERT_TRUE(capped.ok());
  EXPECT_LT(capped->max_users, 256);
  EXPECT_GE(capped->max_users, 1);
  EXPECT_LT(capped->max_requests_per_second, free->max_requests_per_second);
}

TEST(RooflineBounds, FloorAboveTheSloMisses) {
  absl::StatusOr<RooflineBounds> b = ComputeRooflineBounds(Moe(), Load(), 8, 1e-4, std::nullopt);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->slo_missed);
  b = ComputeRooflineBounds(Moe(), Load(), 8, std::nullopt, 1e-6);
  ASSERT_TRUE(b.ok());
  EXPECT_TRUE(b->slo_missed);
}

TEST(RooflineBounds, RefusesNoSlots) {
  EXPECT_EQ(ComputeRooflineBounds(Moe(), Load(), 0, std::nullopt, std::nullopt).status().code(),
            absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace capplan::model
