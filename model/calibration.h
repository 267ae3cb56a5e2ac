// Calibration of the step-time coefficients (α, β) from measured load points
// (DESIGN §4): every measured sweep row becomes one or more *linear*
// observations of step time — the row's figure (seconds) against the
// feature vector the model predicts for it — fitted by robust non-negative
// least squares (robust_fit.h) in relative terms (each row divided by its
// observed value), optionally regularised towards a hardware-class prior.
//
// Observations per row (the request's phases at the row's in-service
// population n, from ComputeRequestPhaseFeatures):
//   * TPOT: tpot, else (e2e − ttft)/(o − 1), else (o / per-user tok/s − ttft)
//     /(o − 1) [closed loop: per-user tok/s = o / e2e]; predicted by the
//     decode iteration at batch n including the others' prefills, ÷ tokens per
//     step;
//   * TTFT (only where no request waits for a slot: closed loop with
//     concurrency <= S): predicted by the request's prefill iterations;
//   * prefill throughput (aggregate input tok/s of a cold-prefill run): an
//     iteration with a full token budget of prefill takes budget ÷ rate.
// n = min(concurrency, S) in a closed loop without think time; otherwise
// Little's law n = req/s × e2e, capped at S.
//
// Nothing here holds a measured figure or a hardware constant: rows, the
// deployment's inputs and the prior all come from the caller.
#ifndef CAPPLAN_MODEL_CALIBRATION_H_
#define CAPPLAN_MODEL_CALIBRATION_H_

#include <array>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "model/queueing.h"
#include "model/robust_fit.h"
#include "model/step_time.h"

namespace capplan::model {

// One measured point (a baseline sweep row or a user's calibration point).
struct MeasuredPoint {
  std::string source;  // provenance, e.g. "<baseline-id>/<sweep>/c=8"
  // Exactly one of concurrency (closed loop) and arrival_rate_rps (open).
  std::optional<int> concurrency;
  std::optional<double> arrival_rate_rps;
  double think_time_seconds = 0;
  Workload workload;  // the row's input/output tokens (means)
  std::optional<double> output_tokens_per_second;
  std::optional<double> requests_per_second;
  std::optional<double> per_user_output_tokens_per_second;
  std::optional<double> ttft_seconds;  // p50 (or the figure reported)
  // ttft_seconds is the row's mean (it states no median).
  bool ttft_is_mean = false;
  // The row's TTFT p95, where it states one (the SLO's percentile).
  std::optional<double> ttft_p95_seconds;
  std::optional<double> tpot_seconds;
  std::optional<double> e2e_seconds;  // p50 / mean
  // Aggregate cold-prefill input tokens per second.
  std::optional<double> prefill_tokens_per_second;
  // Speculative decoding the row ran with (overrides the context's).
  std::optional<SpeculativeDecoding> speculative;
};

// What the deployment is: the same inputs the queueing model will use.
struct CalibrationContext {
  StepTimeInputs inputs;
  SchedulerConfig scheduler;
  std::optional<SpeculativeDecoding> speculative;
  int slots = 1;  // S of the measured deployment (ComputeSlots)
  // False for a card whose speeds are unknown (inputs in unit speeds): no
  // physical floor applies to its coefficients.
  bool speeds_known = true;
};

// A hardware-class prior: coefficients from data (e.g. fitted on other
// models of the same GPU class) and how many observations' worth it counts.
struct CoefficientPrior {
  StepTimeCoefficients coefficients;
  double weight = 1.0;
};

enum class ObservationKind { kTpot, kTtft, kPrefillThroughput };
const char* ObservationKindName(ObservationKind kind);

struct Observation {
  std::string source;
  ObservationKind kind = ObservationKind::kTpot;
  double in_service = 0;  // n used
  double observed_seconds = 0;
  StepFeatures features = StepFeatures::Zero();
  double fitted_seconds = 0;  // after the fit
  double huber_weight = 1;    // final IRLS weight (< 1: down-weighted)
};

struct CalibrationOptions {
  // When the observations cannot separate every identified coefficient
  // (e.g. FLOPs and all-reduce bytes both scale with tokens on one
  // deployment) and there is no prior: true = FAILED_PRECONDITION; false =
  // return the minimum-norm non-negative fit, flagged rank_deficient (its
  // predictions hold for deployments like the measured one).
  bool require_identifiable = false;
  // No coefficient may beat the hardware: α >= 0 and every β >= 1 (an
  // efficiency η = 1/β in (0, 1]), so every step costs at least its bytes ÷
  // bandwidth plus its FLOPs ÷ peak plus its all-reduce bytes ÷ link. Off
  // only for a card whose speeds are unknown (features in unknown units,
  // where β carries 1 / the card's speed).
  bool physical_floor = true;
};

// The floor of physical_floor: α = 0, every β = 1 (the roofline).
StepTimeCoefficients PhysicalFloor();

struct CalibrationResult {
  StepTimeCoefficients coefficients;
  // False for a coefficient whose feature is zero in every observation: its
  // value is the prior's, or 0 without a prior.
  std::array<bool, kNumStepFeatures> identified{};
  std::vector<Observation> observations;
  bool used_prior = false;
  int rank = 0;
  // The fit could not separate some coefficients (see CalibrationOptions).
  bool rank_deficient = false;
  // Relative error band of the fit (robust_fit.h); absent without spare
  // degrees of freedom or when only the prior was used.
  std::optional<double> relative_error_band;
  std::optional<double> relative_rms_residual;
};

// The observations a point yields (empty when it carries nothing usable);
// INVALID_ARGUMENT names the field (MeasuredPoint[<index>].<field>).
absl::StatusOr<std::vector<Observation>> PointObservations(const CalibrationContext& context,
                                                           const MeasuredPoint& point, int index);

// Fits α and the β's. With no points the prior is returned as is
// (used_prior, nothing identified); with neither, FAILED_PRECONDITION.
// Rank deficiency without a prior: see CalibrationOptions.
absl::StatusOr<CalibrationResult> Calibrate(const CalibrationContext& context,
                                            absl::Span<const MeasuredPoint> points,
                                            const std::optional<CoefficientPrior>& prior,
                                            const CalibrationOptions& options = {});

// The measured points of one deployment, for a pooled fit.
struct CalibrationGroup {
  std::string name;  // e.g. the baseline id, in errors
  CalibrationContext context;
  std::vector<MeasuredPoint> points;
};

// One set of coefficients fitted on the observations of several deployments
// together (their features are each deployment's own, so the coefficients
// are efficiencies shared by all): how a hardware class's prior is learned.
// Every group must have known speeds.
absl::StatusOr<CalibrationResult> CalibratePooled(absl::Span<const CalibrationGroup> groups,
                                                  const std::optional<CoefficientPrior>& prior,
                                                  const CalibrationOptions& options = {});

// The model's prediction for a measured point's load with the given
// coefficients (closed or open loop at the point's load, S = context.slots):
// what leave-one-out accuracy checks compare against the row.
absl::StatusOr<LoadPoint> PredictPoint(const CalibrationContext& context,
                                       const MeasuredPoint& point, const StepTimeCoefficients& c);

// Widening of a fit's relative error band with extrapolation distance.
struct ErrorBandOptions {
  // Band used when the fit has none (prior only, or no spare degrees of
  // freedom); a caller's choice, e.g. the hardware class's typical error.
  std::optional<double> fallback_relative_band;
  // Multiplier per doubling of load beyond the measured range.
  double widening_per_doubling = 0.5;
};

// band × (1 + widening · |log2(load / nearest measured load)|) outside the
// measured [min_load, max_load], band inside it. Absent when neither the fit
// nor the options give a band.
absl::StatusOr<std::optional<double>> RelativeErrorBandAt(const CalibrationResult& fit, double load,
                                                          double min_measured_load,
                                                          double max_measured_load,
                                                          const ErrorBandOptions& options = {});

// The minimiser of a one-parameter objective on [0, 1] (e.g. a speculative
// acceptance rate fitted jointly with the step-time coefficients): a grid of
// 39 interior points, then golden-section search around the best of them.
double MinimiseOnUnitInterval(const std::function<double(double)>& f);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_CALIBRATION_H_
