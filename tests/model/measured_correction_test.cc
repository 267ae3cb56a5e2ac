#include "model/measured_correction.h"

#include <cmath>
#include <vector>

#include "gtest/gtest.h"

namespace capplan::model {
namespace {

// A closed-loop row at `users` whose figures are `ratio` times the model's.
RowResidual ClosedRow(double users, double ratio, double think = 0) {
  RowResidual r;
  r.closed_loop = true;
  r.think_time_seconds = think;
  r.load = users;
  for (auto& lr : r.log_ratio) lr = std::log(ratio);
  return r;
}

LoadPoint ClosedPoint(int users) {
  LoadPoint p;
  p.concurrency = users;
  p.output_tokens_per_second = 1000;
  p.requests_per_second = 5;
  p.ttft = LatencyPercentiles{0.2, 0.1, 0.3, 0.4, 0.5};
  p.e2e = EndToEndPercentiles{2.0, 1.8, 2.5};
  p.tpot_seconds = 0.02;
  return p;
}

TEST(ResidualOf, MeasuredOverModelPerFigure) {
  MeasuredPoint row;
  row.concurrency = 8;
  row.workload.input_tokens = 1000;
  row.workload.output_tokens = 200;
  row.requests_per_second = 6;  // no tok/s: req/s x output tokens = 1,200
  row.ttft_seconds = 0.15;
  row.tpot_seconds = 0.01;
  const RowResidual r = ResidualOf(row, ClosedPoint(8));
  EXPECT_TRUE(r.closed_loop);
  EXPECT_EQ(r.load, 8);
  EXPECT_NEAR(*r.log_ratio[static_cast<int>(CurveMetric::kThroughput)], std::log(1200.0 / 1000),
              1e-12);
  EXPECT_NEAR(*r.log_ratio[static_cast<int>(CurveMetric::kTtft)], std::log(0.15 / 0.1),
              1e-12);  // against the p50
  EXPECT_NEAR(*r.log_ratio[static_cast<int>(CurveMetric::kTpot)], std::log(0.5), 1e-12);
  EXPECT_FALSE(r.log_ratio[static_cast<int>(CurveMetric::kE2e)].has_value());  // no e2e stated
}

TEST(ResidualOf, OpenLoopRowsCorrectNoThroughput) {
  MeasuredPoint row;
  row.arrival_rate_rps = 2;
  row.workload.output_tokens = 200;
  row.output_tokens_per_second = 400;
  row.ttft_seconds = 0.2;
  LoadPoint p = ClosedPoint(1);
  p.concurrency.reset();
  p.arrival_rate_rps = 2;
  const RowResidual r = ResidualOf(row, p);
  EXPECT_FALSE(r.closed_loop);
  EXPECT_FALSE(r.log_ratio[static_cast<int>(CurveMetric::kThroughput)].has_value());
  EXPECT_NEAR(*r.log_ratio[static_cast<int>(CurveMetric::kTtft)], std::log(2.0), 1e-12);
}

TEST(MeasuredCorrection, ExactAtARowLinearInLogLoadBetweenHalvedPerDoublingBeyond) {
  const MeasuredCorrection c =
      MeasuredCorrection::FromRows({ClosedRow(4, 1.2), ClosedRow(16, 0.9)}, true, 0);
  ASSERT_FALSE(c.empty());
  EXPECT_NEAR(c.Factor(CurveMetric::kTtft, 4), 1.2, 1e-12);
  EXPECT_NEAR(c.Factor(CurveMetric::kTtft, 16), 0.9, 1e-12);
  // 8 users: halfway in log load.
  EXPECT_NEAR(c.Factor(CurveMetric::kTtft, 8), std::exp(0.5 * (std::log(1.2) + std::log(0.9))),
              1e-12);
  // Two doublings above the last row: a quarter of its log residual.
  EXPECT_NEAR(c.Factor(CurveMetric::kThroughput, 64), std::exp(0.25 * std::log(0.9)), 1e-12);
  // One doubling below the first: half.
  EXPECT_NEAR(c.Factor(CurveMetric::kTpot, 2), std::exp(0.5 * std::log(1.2)), 1e-12);
}

TEST(MeasuredCorrection, RowsOfAnotherKindOfRunDoNotApply) {
  const std::vector<RowResidual> rows = {ClosedRow(4, 1.5, /*think=*/2.0)};
  EXPECT_TRUE(MeasuredCorrection::FromRows(rows, true, 0).empty());
  EXPECT_TRUE(MeasuredCorrection::FromRows(rows, false, 0).empty());
  EXPECT_FALSE(MeasuredCorrection::FromRows(rows, true, 2.0).empty());
  // A closed-loop correction leaves an open-loop point alone.
  const MeasuredCorrection c = MeasuredCorrection::FromRows(rows, true, 2.0);
  LoadPoint open = ClosedPoint(4);
  open.concurrency.reset();
  open.arrival_rate_rps = 4;
  c.Apply(&open);
  EXPECT_EQ(open.ttft->p50_seconds, 0.1);
}

TEST(MeasuredCorrection, RowsAtOneLoadAreAveragedInLogSpace) {
  const MeasuredCorrection c =
      MeasuredCorrection::FromRows({ClosedRow(8, 2.0), ClosedRow(8, 0.5)}, true, 0);
  EXPECT_NEAR(c.Factor(CurveMetric::kTtft, 8), 1.0, 1e-12);
}

TEST(MeasuredCorrection, ApplyScalesEveryFigureOfTheMetric) {
  const MeasuredCorrection c = MeasuredCorrection::FromRows({ClosedRow(8, 1.1)}, true, 0);
  LoadPoint p = ClosedPoint(8);
  c.Apply(&p);
  EXPECT_NEAR(p.output_tokens_per_second, 1100, 1e-9);
  EXPECT_NEAR(p.requests_per_second, 5.5, 1e-12);
  EXPECT_NEAR(p.ttft->p99_seconds, 0.55, 1e-12);
  EXPECT_NEAR(p.e2e->p95_seconds, 2.75, 1e-12);
  EXPECT_NEAR(*p.tpot_seconds, 0.022, 1e-12);
}

TEST(MeasuredCorrection, LeaveOneRowOutBandFromThreeRowsOrMore) {
  // Two rows: no band.
  EXPECT_FALSE(MeasuredCorrection::FromRows({ClosedRow(4, 1.2), ClosedRow(16, 0.9)}, true, 0)
                   .LeaveOneRowOutBand(CurveMetric::kTtft)
                   .has_value());
  // Three rows on a straight line in log load: the middle one is predicted
  // exactly; each end from the other two's nearest, decayed by its distance.
  const MeasuredCorrection c = MeasuredCorrection::FromRows(
      {ClosedRow(2, 1.0), ClosedRow(4, 1.1), ClosedRow(8, 1.21)}, true, 0);
  const std::optional<double> band = c.LeaveOneRowOutBand(CurveMetric::kTtft);
  ASSERT_TRUE(band.has_value());
  // Row at 2 from the row at 4, one doubling away: exp(0.5 ln 1.1) / 1.0 - 1.
  const double e_low = std::sqrt(1.1) - 1;
  // Row at 8 from the row at 4: exp(0.5 ln 1.1) / 1.21 - 1.
  const double e_high = std::sqrt(1.1) / 1.21 - 1;
  EXPECT_NEAR(*band, std::sqrt((e_low * e_low + e_high * e_high) / 3), 1e-12);
}

TEST(MeasuredCorrection, TtftTailFromTheRowsP95AndAMeanAgainstTheMean) {
  MeasuredPoint row;
  row.concurrency = 8;
  row.workload.output_tokens = 200;
  row.ttft_seconds = 0.4;  // a mean: against the model's mean (0.2)
  row.ttft_is_mean = true;
  row.ttft_p95_seconds = 0.6;  // against the model's p95 (0.4)
  const RowResidual r = ResidualOf(row, ClosedPoint(8));
  EXPECT_NEAR(*r.log_ratio[static_cast<int>(CurveMetric::kTtft)], std::log(2.0), 1e-12);
  EXPECT_NEAR(*r.ttft_p95_log_ratio, std::log(1.5), 1e-12);
  const MeasuredCorrection c = MeasuredCorrection::FromRows({r}, true, 0);
  LoadPoint p = ClosedPoint(8);
  c.Apply(&p);
  EXPECT_NEAR(p.ttft->mean_seconds, 0.4, 1e-12);
  EXPECT_NEAR(p.ttft->p50_seconds, 0.2, 1e-12);
  EXPECT_NEAR(p.ttft->p95_seconds, 0.6, 1e-12);  // the row's p95
  // p90 by the tail's factor, but not below the corrected median.
  EXPECT_NEAR(p.ttft->p90_seconds, std::max(0.2, 0.3 * 1.5), 1e-12);
}

TEST(MeasuredCorrection, EndToEndRecomposedFromTheCorrectedPartsWithoutItsOwnRows) {
  RowResidual r;
  r.load = 8;
  r.log_ratio[static_cast<int>(CurveMetric::kTtft)] = std::log(2.0);
  r.log_ratio[static_cast<int>(CurveMetric::kTpot)] = std::log(1.5);
  const MeasuredCorrection c = MeasuredCorrection::FromRows({r}, true, 0, /*output_tokens=*/101);
  LoadPoint p = ClosedPoint(8);
  c.Apply(&p);
  // Δ mean TTFT 0.2 + 100 × Δ TPOT 0.01 = 1.2 s onto each end-to-end figure.
  EXPECT_NEAR(p.e2e->mean_seconds, 2.0 + 1.2, 1e-12);
  EXPECT_NEAR(p.e2e->p95_seconds, 2.5 + 1.2, 1e-12);
}

}  // namespace
}  // namespace capplan::model
