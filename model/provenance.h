// How a predicted figure was obtained and how far to trust it (DESIGN §4):
// its tier and its relative error band, from where the fit came from and
// where the curve's points lie relative to the measured rows.
#ifndef CAPPLAN_MODEL_PROVENANCE_H_
#define CAPPLAN_MODEL_PROVENANCE_H_

#include <optional>

#include "absl/types/span.h"
#include "model/calibration.h"
#include "model/queueing.h"

namespace capplan::model {

enum class Tier {
  kMeasured,      // a measured row stands at every point of the curve
  kCalibrated,    // fitted on this configuration's rows, inside their range
  kExtrapolated,  // outside the measured range, or transferred from elsewhere
  kRoofline,      // no measured rows at all
};

// The figures of a curve, each with its own tier.
enum class CurveMetric { kThroughput, kTtft, kTpot, kE2e };
inline constexpr CurveMetric kCurveMetrics[] = {CurveMetric::kThroughput, CurveMetric::kTtft,
                                                CurveMetric::kTpot, CurveMetric::kE2e};
inline constexpr int kNumCurveMetrics = 4;
static_assert(sizeof(kCurveMetrics) / sizeof(kCurveMetrics[0]) == kNumCurveMetrics);
// "throughput", "ttft", "tpot", "e2e".
const char* CurveMetricName(CurveMetric metric);

// The observation kind whose misfit bands a metric: TTFT for TTFT, TPOT for
// the rest (throughput and end-to-end latency are decode-dominated).
ObservationKind BandingObservationKind(CurveMetric metric);

// Relative tolerance within which a measured row's workload or arrival rate
// counts as the request's.
inline constexpr double kSameWorkloadTolerance = 0.05;

// Whether two workloads' input and output lengths agree within
// kSameWorkloadTolerance.
bool SameWorkload(const Workload& a, const Workload& b);
// SameWorkload, and the same prefix-cache hit rate and arrival pattern
// (synchronized or not): rows whose residuals may stand for each other.
bool SameRunOfWorkload(const Workload& a, const Workload& b);

// A measured row of the configuration, as the tier policy sees it.
struct MeasuredRow {
  const MeasuredPoint* point = nullptr;
  bool speculative = false;
  int draft_tokens = 0;
};

// Whether `row` measured `metric` at curve point `p`: the same speculative
// setting, the same workload (kSameWorkloadTolerance) and the same load
// (concurrency and think time, or arrival rate).
bool RowMeasuresPoint(const MeasuredRow& row, const LoadPoint& p, CurveMetric metric,
                      bool speculative, int draft_tokens, const Workload& workload,
                      double think_time_seconds);

// In-service populations the measured rows span.
struct MeasuredRange {
  double min_in_service = 0;
  double max_in_service = 0;
};

struct MetricAssessment {
  Tier tier = Tier::kRoofline;
  double error_band_fraction = 0;
};

// The tier policy. `base` is kCalibrated when the fit used this
// configuration's rows, kExtrapolated when it was transferred, kRoofline
// without rows. A calibrated metric is kMeasured when a row stands at every
// point, kCalibrated when every point's population lies in `measured`, else
// kExtrapolated. The band is `fit_band` widened with distance from the
// measured range (RelativeErrorBandAt), the widest over the points.
MetricAssessment AssessMetric(Tier base, std::optional<double> fit_band,
                              std::optional<MeasuredRange> measured,
                              absl::Span<const double> point_in_service, bool every_point_measured);

// The population a curve point stands for: its concurrency in a closed
// loop, its mean batch (at least 1) in an open one.
double PointInService(const LoadPoint& p);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_PROVENANCE_H_
