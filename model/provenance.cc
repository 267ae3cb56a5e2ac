#include "model/provenance.h"

#include <algorithm>
#include <cmath>

namespace capplan::model {
namespace {

bool Near(double a, double b) { return std::abs(a - b) <= kSameWorkloadTolerance * std::max(a, b); }

bool RowHas(const MeasuredPoint& p, CurveMetric metric) {
  switch (metric) {
    case CurveMetric::kThroughput:
      return p.output_tokens_per_second.has_value() ||
             p.per_user_output_tokens_per_second.has_value() || p.requests_per_second.has_value();
    case CurveMetric::kTtft:
      return p.ttft_seconds.has_value();
    case CurveMetric::kTpot:
      return p.tpot_seconds.has_value();
    case CurveMetric::kE2e:
      return p.e2e_seconds.has_value();
  }
  return false;
}

}  // namespace

const char* CurveMetricName(CurveMetric metric) {
  switch (metric) {
    case CurveMetric::kThroughput:
      return "throughput";
    case CurveMetric::kTtft:
      return "ttft";
    case CurveMetric::kTpot:
      return "tpot";
    case CurveMetric::kE2e:
      return "e2e";
  }
  return "unknown";
}

ObservationKind BandingObservationKind(CurveMetric metric) {
  return metric == CurveMetric::kTtft ? ObservationKind::kTtft : ObservationKind::kTpot;
}

bool SameWorkload(const Workload& a, const Workload& b) {
  return Near(a.input_tokens, b.input_tokens) && Near(a.output_tokens, b.output_tokens);
}

bool SameRunOfWorkload(const Workload& a, const Workload& b) {
  return SameWorkload(a, b) && a.prefix_cache_hit_rate == b.prefix_cache_hit_rate &&
         a.synchronized == b.synchronized;
}

bool RowMeasuresPoint(const MeasuredRow& row, const LoadPoint& p, CurveMetric metric,
                      bool speculative, int draft_tokens, const Workload& workload,
                      double think_time_seconds) {
  if (row.point == nullptr) return false;
  if (row.speculative != speculative || (speculative && row.draft_tokens != draft_tokens)) {
    return false;
  }
  const MeasuredPoint& m = *row.point;
  if (!RowHas(m, metric) || !SameWorkload(m.workload, workload)) {
    return false;
  }
  if (p.concurrency.has_value() && m.concurrency == p.concurrency &&
      think_time_seconds == m.think_time_seconds) {
    return true;
  }
  return p.arrival_rate_rps.has_value() && m.arrival_rate_rps.has_value() &&
         Near(*m.arrival_rate_rps, *p.arrival_rate_rps);
}

double PointInService(const LoadPoint& p) {
  return p.concurrency.has_value() ? *p.concurrency : std::max(1.0, p.mean_batch_size);
}

MetricAssessment AssessMetric(Tier base, std::optional<double> fit_band,
                              std::optional<MeasuredRange> measured,
                              absl::Span<const double> point_in_service,
                              bool every_point_measured) {
  MetricAssessment out;
  out.tier = base;
  if (base == Tier::kRoofline) {
    out.error_band_fraction = fit_band.value_or(0);
    return out;
  }
  bool every_point_inside = base == Tier::kCalibrated && measured.has_value();
  double widest = fit_band.value_or(0);
  for (double n : point_in_service) {
    if (!measured.has_value()) continue;
    if (n < measured->min_in_service || n > measured->max_in_service) every_point_inside = false;
    if (!fit_band.has_value()) continue;
    CalibrationResult band_only;  // RelativeErrorBandAt reads only the band
    band_only.relative_error_band = fit_band;
    absl::StatusOr<std::optional<double>> band = RelativeErrorBandAt(
        band_only, std::max(n, 1e-9), measured->min_in_service, measured->max_in_service, {});
    if (band.ok() && band->has_value()) widest = std::max(widest, **band);
  }
  out.error_band_fraction = widest;
  if (base == Tier::kCalibrated) {
    out.tier = every_point_measured ? Tier::kMeasured
               : every_point_inside ? Tier::kCalibrated
                                    : Tier::kExtrapolated;
  }
  return out;
}

}  // namespace capplan::model
