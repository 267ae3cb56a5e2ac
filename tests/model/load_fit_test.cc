#include "model/load_fit.h"

#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/simulator.h"
#include "tests/model/perf_scenarios.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::model {
namespace {

using ::capplan::testing::IsOk;
using ::capplan::testing::StatusIs;
using testing::DenseInputs;
using ::testing::Eq;
using testing::MoeInputs;

constexpr int kSlots = 16;

CalibrationContext Context(const StepTimeInputs& in) {
  CalibrationContext ctx;
  ctx.inputs = in;
  ctx.scheduler.max_batched_tokens = 8192;
  ctx.slots = kSlots;
  return ctx;
}

Workload SweepWorkload() {
  Workload w;
  w.input_tokens = 1500;
  w.output_tokens = 256;
  return w;
}

StepTimeCoefficients Truth() {
  StepTimeCoefficients c;
  c.alpha_seconds = 0.006;
  c.beta_weights = 1.3;
  c.beta_kv = 1.6;
  c.beta_flops = 2.2;
  c.beta_comm = 1.2;
  return c;
}

// What one MTP draft pass costs on the synthetic MoE: a small layer.
SpeculativeDecoding Draft(int tokens, double acceptance) {
  SpeculativeDecoding s;
  s.draft_tokens = tokens;
  s.acceptance_rate = acceptance;
  s.draft_weight_bytes_per_gpu = 4e8;
  s.draft_active_parameters_per_token_per_gpu = 2e8;
  return s;
}

// A row measured on the simulator (the oracle) with hidden coefficients.
MeasuredPoint Measure(const StepTimeInputs& in, int concurrency,
                      std::optional<SpeculativeDecoding> speculative = std::nullopt) {
  SimulationConfig sim;
  sim.model.inputs = in;
  sim.model.coefficients = Truth();
  sim.model.scheduler.max_batched_tokens = 8192;
  sim.model.speculative = speculative;
  sim.workload = SweepWorkload();
  sim.limits.max_running_requests = kSlots;
  sim.concurrency = concurrency;
  sim.measured_requests = 800;
  sim.warmup_requests = 80;
  sim.seed = 7000 + concurrency + (speculative.has_value() ? 100 : 0);
  absl::StatusOr<SimulationResult> r = Simulate(sim);
  EXPECT_TRUE(r.ok()) << r.status();
  MeasuredPoint p;
  p.source = "sim/c=" + std::to_string(concurrency) + (speculative.has_value() ? "/spec" : "");
  p.concurrency = concurrency;
  p.workload = SweepWorkload();
  if (!r.ok()) return p;
  p.requests_per_second = r->requests_per_second;
  p.output_tokens_per_second = r->output_tokens_per_second;
  p.ttft_seconds = r->ttft.p50_seconds;
  p.tpot_seconds = r->tpot_mean_seconds;
  if (speculative.has_value()) {
    p.speculative = *speculative;
    p.speculative->acceptance_rate = 0;  // unknown to the fit
  }
  return p;
}

std::vector<MeasuredPoint> Sweep(const StepTimeInputs& in, const std::vector<int>& cs) {
  std::vector<MeasuredPoint> out;
  for (int c : cs) out.push_back(Measure(in, c));
  return out;
}

// --------------------------------------------------------- SquaredLogError

TEST(SquaredLogError, SquaredLogRatioOrALargeConstant) {
  EXPECT_EQ(SquaredLogError(0.5, 0.5), 0);
  EXPECT_DOUBLE_EQ(SquaredLogError(2, 1), std::log(2.0) * std::log(2.0));
  EXPECT_DOUBLE_EQ(SquaredLogError(1, 2), std::log(2.0) * std::log(2.0));  // symmetric
  EXPECT_EQ(SquaredLogError(0, 1), 1e6);
  EXPECT_EQ(SquaredLogError(1, -1), 1e6);
  EXPECT_EQ(SquaredLogError(std::nan(""), 1), 1e6);
}

// ------------------------------------------------- CalibrateOrRegularise

// An MoE on one GPU: no all-reduce, and the weights read per step grow with
// the experts the batch touches, so they are not a per-step constant like α.
StepTimeInputs SingleGpuMoe() {
  StepTimeInputs in = MoeInputs();
  in.allreduce_bytes_per_token_per_gpu = 0;
  in.link_bandwidth_bytes_per_second.reset();
  return in;
}

TEST(CalibrateOrRegularise, IdentifiedRowsAreFittedWithoutAPrior) {
  absl::StatusOr<CalibrationResult> fit =
      CalibrateOrRegularise(Context(SingleGpuMoe()), Sweep(SingleGpuMoe(), {1, 2, 4, 8, 16}));
  ASSERT_THAT(fit, IsOk());
  EXPECT_FALSE(fit->used_prior);
  EXPECT_FALSE(fit->rank_deficient);
  EXPECT_FALSE(fit->identified[kCommFeature]);
}

TEST(CalibrateOrRegularise, CollinearRowsAreRegularisedTowardsTheRoofline) {
  // On one MoE deployment FLOPs and all-reduce bytes both scale with
  // tokens: a strict fit refuses (rank 4 < 5), so the roofline prior decides.
  const std::vector<MeasuredPoint> rows = Sweep(MoeInputs(), {1, 2, 4, 8, 16});
  CalibrationOptions strict;
  strict.require_identifiable = true;
  ASSERT_THAT(Calibrate(Context(MoeInputs()), rows, std::nullopt, strict),
              StatusIs(absl::StatusCode::kFailedPrecondition));
  absl::StatusOr<CalibrationResult> fit = CalibrateOrRegularise(Context(MoeInputs()), rows);
  ASSERT_THAT(fit, IsOk());
  EXPECT_TRUE(fit->used_prior);
  EXPECT_GE(fit->coefficients.AsVector().minCoeff(), 0.0);
  // Invalid rows are not regularised away.
  std::vector<MeasuredPoint> bad = rows;
  bad[2].ttft_seconds = -1;
  EXPECT_THAT(CalibrateOrRegularise(Context(MoeInputs()), bad),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::HasSubstr("MeasuredPoint[2].ttft_seconds = -1")));
}

// ------------------------------------------------------------ FitStepTime

TEST(FitStepTime, NoRowsIsAFailedPrecondition) {
  EXPECT_THAT(FitStepTime(Context(DenseInputs()), {}, {}, true),
              StatusIs(absl::StatusCode::kFailedPrecondition, Eq("no measured rows to fit on")));
}

TEST(FitStepTime, ASpeculativeRowMustStateItsSetting) {
  MeasuredPoint p = Measure(DenseInputs(), 2);
  p.source = "b/mtp/c=2";
  EXPECT_THAT(FitStepTime(Context(DenseInputs()), {}, {p}, true),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("speculative row b/mtp/c=2 states no speculative setting")));
}

TEST(FitStepTime, PlainRowsAloneFitNoAcceptanceRate) {
  absl::StatusOr<StepTimeFit> fit =
      FitStepTime(Context(DenseInputs()), Sweep(DenseInputs(), {1, 4, 16}), {}, true);
  ASSERT_THAT(fit, IsOk());
  EXPECT_FALSE(fit->acceptance_rate.has_value());
  EXPECT_EQ(fit->calibration.observations.size(),
            CalibrateOrRegularise(Context(DenseInputs()), Sweep(DenseInputs(), {1, 4, 16}))
                ->observations.size());
}

TEST(FitStepTime, SpeculativeRowsIgnoredWhenTheyCannotBeModelled) {
  std::vector<MeasuredPoint> spec = {Measure(MoeInputs(), 4, Draft(2, 0.6))};
  absl::StatusOr<StepTimeFit> fit =
      FitStepTime(Context(MoeInputs()), Sweep(MoeInputs(), {1, 4, 16}), spec, false);
  ASSERT_THAT(fit, IsOk());
  EXPECT_FALSE(fit->acceptance_rate.has_value());
}

TEST(FitStepTime, JointFitRecoversTheAcceptanceRate) {
  // Rows at 1, 4 and 16 users without speculation and with 2 drafts
  // accepted at 0.6 each (hidden from the fit).
  std::vector<MeasuredPoint> spec;
  for (int c : {1, 4, 16}) spec.push_back(Measure(MoeInputs(), c, Draft(2, 0.6)));
  absl::StatusOr<StepTimeFit> fit =
      FitStepTime(Context(MoeInputs()), Sweep(MoeInputs(), {1, 2, 4, 8, 16}), spec, true);
  ASSERT_THAT(fit, IsOk());
  ASSERT_TRUE(fit->acceptance_rate.has_value());
  EXPECT_NEAR(*fit->acceptance_rate, 0.6, 0.1);
  // Every row, plain and speculative, was fitted.
  EXPECT_GE(fit->calibration.observations.size(), 8u);
}

// ---------------------------------------------------- ObservationKindBand

Observation Obs(ObservationKind kind, double fitted, double observed, double weight = 1) {
  Observation o;
  o.kind = kind;
  o.fitted_seconds = fitted;
  o.observed_seconds = observed;
  o.huber_weight = weight;
  return o;
}

TEST(ObservationKindBand, RelativeRmsOfTheKindsWellFittedObservations) {
  CalibrationResult fit;
  fit.relative_error_band = 0.5;
  // TPOT: 1.1 / 1 − 1 = 0.1 and 0.9 / 1 − 1 = −0.1: RMS 0.1. The third is
  // down-weighted (0.4 < 1/2) and left out.
  fit.observations = {Obs(ObservationKind::kTpot, 1.1, 1.0), Obs(ObservationKind::kTpot, 0.9, 1.0),
                      Obs(ObservationKind::kTpot, 3.0, 1.0, 0.4),
                      Obs(ObservationKind::kTtft, 2.0, 1.0)};
  EXPECT_NEAR(*ObservationKindBand(fit, ObservationKind::kTpot), 0.1, 1e-12);
  // One TTFT observation: the fit's overall band.
  EXPECT_EQ(ObservationKindBand(fit, ObservationKind::kTtft), 0.5);
  // None of the kind and no overall band: absent.
  fit.relative_error_band.reset();
  EXPECT_FALSE(ObservationKindBand(fit, ObservationKind::kPrefillThroughput).has_value());
}

}  // namespace
}  // namespace capplan::model
