#include "model/provenance.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace capplan::model {
namespace {

TEST(CurveMetricName, EveryMetric) {
  EXPECT_STREQ(CurveMetricName(CurveMetric::kThroughput), "throughput");
  EXPECT_STREQ(CurveMetricName(CurveMetric::kTtft), "ttft");
  EXPECT_STREQ(CurveMetricName(CurveMetric::kTpot), "tpot");
  EXPECT_STREQ(CurveMetricName(CurveMetric::kE2e), "e2e");
}

TEST(BandingObservationKind, TtftForTtftTpotForTheRest) {
  EXPECT_EQ(BandingObservationKind(CurveMetric::kTtft), ObservationKind::kTtft);
  EXPECT_EQ(BandingObservationKind(CurveMetric::kTpot), ObservationKind::kTpot);
  EXPECT_EQ(BandingObservationKind(CurveMetric::kThroughput), ObservationKind::kTpot);
  EXPECT_EQ(BandingObservationKind(CurveMetric::kE2e), ObservationKind::kTpot);
}

// --------------------------------------------------------- RowMeasuresPoint

MeasuredPoint Row() {
  MeasuredPoint m;
  m.concurrency = 4;
  m.workload.input_tokens = 1000;
  m.workload.output_tokens = 200;
  m.ttft_seconds = 0.3;
  m.output_tokens_per_second = 100;
  return m;
}

Workload Request(double input, double output) {
  Workload w;
  w.input_tokens = input;
  w.output_tokens = output;
  return w;
}

LoadPoint AtUsers(int n) {
  LoadPoint p;
  p.concurrency = n;
  return p;
}

TEST(RowMeasuresPoint, SameLoadWorkloadAndMetric) {
  const MeasuredPoint m = Row();
  const MeasuredRow row{&m, false, 0};
  const Workload w = Request(1000, 200);
  EXPECT_TRUE(RowMeasuresPoint(row, AtUsers(4), CurveMetric::kTtft, false, 0, w, 0));
  EXPECT_TRUE(RowMeasuresPoint(row, AtUsers(4), CurveMetric::kThroughput, false, 0, w, 0));
  // The row states no TPOT or end-to-end figure.
  EXPECT_FALSE(RowMeasuresPoint(row, AtUsers(4), CurveMetric::kTpot, false, 0, w, 0));
  EXPECT_FALSE(RowMeasuresPoint(row, AtUsers(4), CurveMetric::kE2e, false, 0, w, 0));
  // Another concurrency, another think time.
  EXPECT_FALSE(RowMeasuresPoint(row, AtUsers(8), CurveMetric::kTtft, false, 0, w, 0));
  EXPECT_FALSE(RowMeasuresPoint(row, AtUsers(4), CurveMetric::kTtft, false, 0, w, 1.0));
  EXPECT_FALSE(RowMeasuresPoint(MeasuredRow{}, AtUsers(4), CurveMetric::kTtft, false, 0, w, 0));
}

TEST(RowMeasuresPoint, WorkloadWithinFivePercentOfTheLarger) {
  const MeasuredPoint m = Row();
  const MeasuredRow row{&m, false, 0};
  // |1040 − 1000| = 40 <= 0.05 · 1040 = 52; |1060 − 1000| = 60 > 53.
  EXPECT_TRUE(
      RowMeasuresPoint(row, AtUsers(4), CurveMetric::kTtft, false, 0, Request(1040, 200), 0));
  EXPECT_FALSE(
      RowMeasuresPoint(row, AtUsers(4), CurveMetric::kTtft, false, 0, Request(1060, 200), 0));
  // |190 − 200| = 10 <= 10; |189 − 200| = 11 > 10.
  EXPECT_TRUE(
      RowMeasuresPoint(row, AtUsers(4), CurveMetric::kTtft, false, 0, Request(1000, 190), 0));
  EXPECT_FALSE(
      RowMeasuresPoint(row, AtUsers(4), CurveMetric::kTtft, false, 0, Request(1000, 189), 0));
}

TEST(RowMeasuresPoint, SpeculativeSettingMustBeTheSame) {
  const MeasuredPoint m = Row();
  const Workload w = Request(1000, 200);
  const MeasuredRow plain{&m, false, 0};
  const MeasuredRow spec3{&m, true, 3};
  EXPECT_FALSE(RowMeasuresPoint(plain, AtUsers(4), CurveMetric::kTtft, true, 3, w, 0));
  EXPECT_FALSE(RowMeasuresPoint(spec3, AtUsers(4), CurveMetric::kTtft, false, 0, w, 0));
  EXPECT_FALSE(RowMeasuresPoint(spec3, AtUsers(4), CurveMetric::kTtft, true, 2, w, 0));
  EXPECT_TRUE(RowMeasuresPoint(spec3, AtUsers(4), CurveMetric::kTtft, true, 3, w, 0));
}

TEST(RowMeasuresPoint, ArrivalRatesWithinFivePercent) {
  MeasuredPoint m = Row();
  m.concurrency.reset();
  m.arrival_rate_rps = 2.0;
  const MeasuredRow row{&m, false, 0};
  const Workload w = Request(1000, 200);
  LoadPoint p;
  p.arrival_rate_rps = 2.08;  // 0.08 <= 0.05 · 2.08 = 0.104
  EXPECT_TRUE(RowMeasuresPoint(row, p, CurveMetric::kTtft, false, 0, w, 0));
  p.arrival_rate_rps = 2.2;  // 0.2 > 0.11
  EXPECT_FALSE(RowMeasuresPoint(row, p, CurveMetric::kTtft, false, 0, w, 0));
  // An open-loop row does not measure a closed-loop point.
  EXPECT_FALSE(RowMeasuresPoint(row, AtUsers(4), CurveMetric::kTtft, false, 0, w, 0));
}

TEST(PointInService, ConcurrencyOrMeanBatchOfAtLeastOne) {
  EXPECT_EQ(PointInService(AtUsers(12)), 12);
  LoadPoint open;
  open.arrival_rate_rps = 1;
  open.mean_batch_size = 3.5;
  EXPECT_EQ(PointInService(open), 3.5);
  open.mean_batch_size = 0.2;
  EXPECT_EQ(PointInService(open), 1.0);
}

// ----------------------------------------------------------- AssessMetric

// A roofline answer keeps the band it is given (the global prior's held-out
// error), unwidened: there is no measured range to be far from.
TEST(AssessMetric, RooflineKeepsItsBandUnwidened) {
  const std::vector<double> n = {1, 64};
  const MetricAssessment a =
      AssessMetric(Tier::kRoofline, 0.08, MeasuredRange{1, 8}, n, /*every_point_measured=*/true);
  EXPECT_EQ(a.tier, Tier::kRoofline);
  EXPECT_EQ(a.error_band_fraction, 0.08);
  EXPECT_EQ(AssessMetric(Tier::kRoofline, std::nullopt, std::nullopt, n, false).error_band_fraction,
            0);
}

TEST(AssessMetric, CalibratedInsideTheMeasuredRangeKeepsTheFitsBand) {
  const std::vector<double> n = {1, 4, 8};
  const MetricAssessment a = AssessMetric(Tier::kCalibrated, 0.08, MeasuredRange{1, 8}, n, false);
  EXPECT_EQ(a.tier, Tier::kCalibrated);
  EXPECT_DOUBLE_EQ(a.error_band_fraction, 0.08);
}

TEST(AssessMetric, EveryPointMeasuredIsMeasured) {
  const std::vector<double> n = {1, 4, 8};
  EXPECT_EQ(AssessMetric(Tier::kCalibrated, 0.08, MeasuredRange{1, 8}, n, true).tier,
            Tier::kMeasured);
  // Only a calibrated fit can be measured: a transfer stays extrapolated.
  EXPECT_EQ(AssessMetric(Tier::kExtrapolated, 0.08, MeasuredRange{1, 8}, n, true).tier,
            Tier::kExtrapolated);
}

TEST(AssessMetric, PointsOutsideTheRangeExtrapolateAndWidenTheBand) {
  // 32 is two doublings past 8: 0.08 · (1 + 0.5 · 2) = 0.16, the widest.
  std::vector<double> n = {1, 4, 32};
  MetricAssessment a = AssessMetric(Tier::kCalibrated, 0.08, MeasuredRange{1, 8}, n, false);
  EXPECT_EQ(a.tier, Tier::kExtrapolated);
  EXPECT_DOUBLE_EQ(a.error_band_fraction, 0.16);
  // 0.5 is one doubling below 1: 0.08 · 1.5 = 0.12.
  n = {0.5, 2};
  a = AssessMetric(Tier::kCalibrated, 0.08, MeasuredRange{1, 8}, n, false);
  EXPECT_EQ(a.tier, Tier::kExtrapolated);
  EXPECT_DOUBLE_EQ(a.error_band_fraction, 0.12);
}

TEST(AssessMetric, WithoutARangeOrABand) {
  const std::vector<double> n = {64};
  // No measured range (a transferred fit): extrapolated at the fit's band.
  MetricAssessment a = AssessMetric(Tier::kCalibrated, 0.08, std::nullopt, n, false);
  EXPECT_EQ(a.tier, Tier::kExtrapolated);
  EXPECT_DOUBLE_EQ(a.error_band_fraction, 0.08);
  // No band: 0, whatever the distance.
  a = AssessMetric(Tier::kCalibrated, std::nullopt, MeasuredRange{1, 8}, n, false);
  EXPECT_EQ(a.tier, Tier::kExtrapolated);
  EXPECT_EQ(a.error_band_fraction, 0);
}

}  // namespace
}  // namespace capplan::model
