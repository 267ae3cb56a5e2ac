// The fit PredictLoad runs on a configuration's measured rows (DESIGN §4):
// the step-time coefficients, and with speculative rows the acceptance rate
// jointly, plus the per-kind misfit that becomes a figure's error band.
#ifndef CAPPLAN_MODEL_LOAD_FIT_H_
#define CAPPLAN_MODEL_LOAD_FIT_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/calibration.h"

namespace capplan::model {

// Weight, in observations, of the roofline regulariser that decides only what
// a rank-deficient fit leaves open.
inline constexpr double kRooflinePriorWeight = 0.1;

// The loss of one observation in the joint acceptance fit: squared log
// ratio, and a large constant when either side is not positive.
double SquaredLogError(double predicted_seconds, double measured_seconds);

// Calibrates without a prior; when the rows leave a direction of the
// coefficients undetermined (e.g. FLOPs and all-reduce bytes both grow with
// tokens on one deployment), regularises towards the roofline (α = 0, every
// β = 1) with kRooflinePriorWeight.
absl::StatusOr<CalibrationResult> CalibrateOrRegularise(const CalibrationContext& context,
                                                        absl::Span<const MeasuredPoint> points);

struct StepTimeFit {
  CalibrationResult calibration;
  // Fitted on the speculative rows; absent when none were fitted.
  std::optional<double> acceptance_rate;
};

// Fits on `plain` rows (no speculation) and `speculative` rows (each with
// its `speculative` set; the acceptance rate in them is ignored). When there
// are speculative rows and `can_model_speculation` (the deployment has
// draft layers to model them with), the coefficients and the acceptance rate
// are fitted together: for each rate the coefficients are fitted on every
// row, and the rate whose fit leaves the smallest Huber-weighted squared log
// residuals wins. Otherwise the plain rows alone. FAILED_PRECONDITION
// without rows or when no rate gives a fit.
// With `prior` (the configuration's hardware class), every fit shrinks
// towards it instead of being regularised towards the bare roofline.
absl::StatusOr<StepTimeFit> FitStepTime(
    const CalibrationContext& context, std::vector<MeasuredPoint> plain,
    std::vector<MeasuredPoint> speculative, bool can_model_speculation,
    const std::optional<CoefficientPrior>& prior = std::nullopt);

// Relative RMS misfit of the fit's observations of one kind (those the
// robust fit kept at Huber weight >= 1/2); the fit's overall band when fewer
// than two such observations exist.
std::optional<double> ObservationKindBand(const CalibrationResult& fit, ObservationKind kind);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_LOAD_FIT_H_
