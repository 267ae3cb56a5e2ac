#include "model/load_fit.h"

#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"

namespace capplan::model {

double SquaredLogError(double predicted_seconds, double measured_seconds) {
  if (!(predicted_seconds > 0) || !(measured_seconds > 0)) return 1e6;
  const double e = std::log(predicted_seconds / measured_seconds);
  return e * e;
}

absl::StatusOr<CalibrationResult> CalibrateOrRegularise(const CalibrationContext& context,
                                                        absl::Span<const MeasuredPoint> points) {
  CalibrationOptions strict;
  strict.require_identifiable = true;
  absl::StatusOr<CalibrationResult> r = Calibrate(context, points, std::nullopt, strict);
  if (r.ok() || r.status().code() != absl::StatusCode::kFailedPrecondition) return r;
  CoefficientPrior prior;
  prior.coefficients = StepTimeCoefficients::Roofline();
  prior.weight = kRooflinePriorWeight;
  return Calibrate(context, points, prior);
}

namespace {

// Huber-weighted squared log residuals of a fit.
double FitLoss(const CalibrationResult& r) {
  double loss = 0;
  for (const Observation& o : r.observations) {
    loss += o.huber_weight * SquaredLogError(o.fitted_seconds, o.observed_seconds);
  }
  return loss;
}

// The fit on `points`: towards the prior when there is one, else towards
// the roofline only where the rows leave a direction open.
absl::StatusOr<CalibrationResult> FitOn(const CalibrationContext& context,
                                        absl::Span<const MeasuredPoint> points,
                                        const std::optional<CoefficientPrior>& prior) {
  if (prior.has_value()) return Calibrate(context, points, prior);
  return CalibrateOrRegularise(context, points);
}

absl::StatusOr<StepTimeFit> FitJointly(const CalibrationContext& context,
                                       const std::vector<MeasuredPoint>& plain,
                                       const std::vector<MeasuredPoint>& speculative,
                                       const std::optional<CoefficientPrior>& prior) {
  std::optional<CalibrationResult> best;
  double best_loss = std::numeric_limits<double>::infinity();
  double best_rate = 0;
  auto fit_at = [&](double rate) -> double {
    std::vector<MeasuredPoint> points = plain;
    for (MeasuredPoint p : speculative) {
      p.speculative->acceptance_rate = rate;
      points.push_back(std::move(p));
    }
    absl::StatusOr<CalibrationResult> r = FitOn(context, points, prior);
    if (!r.ok()) return std::numeric_limits<double>::infinity();
    const double loss = FitLoss(*r);
    if (loss < best_loss) best_loss = loss, best = *std::move(r), best_rate = rate;
    return loss;
  };
  MinimiseOnUnitInterval(fit_at);
  if (!best.has_value()) {
    return absl::FailedPreconditionError(
        "the measured rows cannot determine the step-time coefficients at any acceptance rate");
  }
  return StepTimeFit{*std::move(best), best_rate};
}

}  // namespace

absl::StatusOr<StepTimeFit> FitStepTime(const CalibrationContext& context,
                                        std::vector<MeasuredPoint> plain,
                                        std::vector<MeasuredPoint> speculative,
                                        bool can_model_speculation,
                                        const std::optional<CoefficientPrior>& prior) {
  for (const MeasuredPoint& p : speculative) {
    if (!p.speculative.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("speculative row ", p.source, " states no speculative setting"));
    }
  }
  if (!speculative.empty() && (can_model_speculation || plain.empty())) {
    return FitJointly(context, plain, speculative, prior);
  }
  if (plain.empty()) return absl::FailedPreconditionError("no measured rows to fit on");
  StepTimeFit out;
  CAPPLAN_ASSIGN_OR_RETURN(out.calibration, FitOn(context, plain, prior));
  return out;
}

std::optional<double> ObservationKindBand(const CalibrationResult& fit, ObservationKind kind) {
  double sum_squares = 0;
  int n = 0;
  for (const Observation& o : fit.observations) {
    if (o.kind != kind || o.huber_weight < 0.5) continue;
    const double e = o.fitted_seconds / o.observed_seconds - 1;
    sum_squares += e * e;
    ++n;
  }
  if (n < 2) return fit.relative_error_band;
  return std::sqrt(sum_squares / n);
}

}  // namespace capplan::model
