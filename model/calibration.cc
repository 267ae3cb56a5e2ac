#include "model/calibration.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "model/perf_checks.h"
#include "model/queueing.h"

namespace capplan::model {

using perf_internal::CheckNonNegative;
using perf_internal::CheckPositive;
using perf_internal::Invalid;

const char* ObservationKindName(ObservationKind kind) {
  switch (kind) {
    case ObservationKind::kTpot:
      return "TPOT";
    case ObservationKind::kTtft:
      return "TTFT";
    case ObservationKind::kPrefillThroughput:
      return "PREFILL_THROUGHPUT";
  }
  return "UNKNOWN";
}

namespace {

absl::Status ValidatePoint(const MeasuredPoint& p, int index) {
  const std::string f = absl::StrCat("MeasuredPoint[", index, "]");
  if (p.concurrency.has_value() == p.arrival_rate_rps.has_value()) {
    return absl::InvalidArgumentError(
        absl::StrCat(f, ": set exactly one of concurrency and arrival_rate_rps"));
  }
  if (p.concurrency.has_value() && *p.concurrency < 1) {
    return Invalid(absl::StrCat(f, ".concurrency"), *p.concurrency, "must be >= 1");
  }
  if (p.arrival_rate_rps.has_value()) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckPositive(absl::StrCat(f, ".arrival_rate_rps"), *p.arrival_rate_rps));
  }
  CAPPLAN_RETURN_IF_ERROR(
      CheckNonNegative(absl::StrCat(f, ".think_time_seconds"), p.think_time_seconds));
  absl::Status w = ValidateWorkload(p.workload);
  if (!w.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(f, ".", w.message()));
  }
  const std::pair<const char*, const std::optional<double>*> fields[] = {
      {"output_tokens_per_second", &p.output_tokens_per_second},
      {"requests_per_second", &p.requests_per_second},
      {"per_user_output_tokens_per_second", &p.per_user_output_tokens_per_second},
      {"ttft_seconds", &p.ttft_seconds},
      {"tpot_seconds", &p.tpot_seconds},
      {"e2e_seconds", &p.e2e_seconds},
      {"prefill_tokens_per_second", &p.prefill_tokens_per_second},
  };
  for (const auto& [name, value] : fields) {
    if (value->has_value()) {
      CAPPLAN_RETURN_IF_ERROR(CheckPositive(absl::StrCat(f, ".", name), **value));
    }
  }
  if (p.speculative.has_value()) {
    absl::Status s = ValidateSpeculative(*p.speculative);
    if (!s.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(f, ".", s.message()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<Observation>> PointObservations(const CalibrationContext& ctx,
                                                           const MeasuredPoint& p, int index) {
  CAPPLAN_RETURN_IF_ERROR(ValidatePoint(p, index));
  std::vector<Observation> out;
  const std::optional<SpeculativeDecoding>& spec =
      p.speculative.has_value() ? p.speculative : ctx.speculative;
  const double s = ctx.slots;
  const double o = p.workload.output_tokens;
  // In-service population.
  std::optional<double> n;
  if (p.concurrency.has_value() && p.think_time_seconds == 0) {
    n = std::min<double>(*p.concurrency, s);
  } else if (p.requests_per_second.has_value() && p.e2e_seconds.has_value()) {
    n = std::clamp(*p.requests_per_second * *p.e2e_seconds, 1.0, s);
  } else if (p.concurrency.has_value()) {
    n = std::min<double>(*p.concurrency, s);
  }
  if (n.has_value()) {
    const RequestPhaseFeatures f =
        ComputeRequestPhaseFeatures(ctx.inputs, ctx.scheduler, spec, p.workload, *n);
    // TPOT.
    std::optional<double> tpot = p.tpot_seconds;
    if (!tpot.has_value() && o > 1) {
      if (p.e2e_seconds.has_value() && p.ttft_seconds.has_value()) {
        tpot = (*p.e2e_seconds - *p.ttft_seconds) / (o - 1);
      } else if (p.per_user_output_tokens_per_second.has_value()) {
        tpot = (o / *p.per_user_output_tokens_per_second - p.ttft_seconds.value_or(0.0)) / (o - 1);
      }
    }
    if (tpot.has_value() && *tpot > 0) {
      Observation ob;
      ob.source = p.source;
      ob.kind = ObservationKind::kTpot;
      ob.in_service = *n;
      ob.observed_seconds = *tpot;
      ob.features = f.per_decode_step / f.tokens_per_decode_step;
      out.push_back(ob);
    }
    // TTFT, only where nobody waits for a slot. In a closed loop without
    // think time a request arrives with co-arrivals and waits for the
    // prefills of E[U] = others·q/2 of them (CoArrivalPositions): q, the
    // chance another user arrives at the same iteration, is 1 in waves and
    // one iteration ÷ one life otherwise.
    if (p.ttft_seconds.has_value() && p.concurrency.has_value() && *p.concurrency <= ctx.slots) {
      Observation ob;
      ob.source = p.source;
      ob.kind = ObservationKind::kTtft;
      ob.in_service = *n;
      ob.observed_seconds = *p.ttft_seconds;
      ob.features = f.prefill;
      // With others in service it waits for the batches launched ahead
      // (an overlap scheduler's one decode step).
      // (the others' decode step: n − 1 in service, as the queueing model
      // takes it).
      if (*n > 1 && ctx.scheduler.batches_launched_ahead > 0) {
        const RequestPhaseFeatures others =
            ComputeRequestPhaseFeatures(ctx.inputs, ctx.scheduler, spec, p.workload, *n - 1);
        ob.features += ctx.scheduler.batches_launched_ahead * others.per_decode_step;
      }
      if (p.think_time_seconds == 0 && *n > 1) {
        const double life_steps =
            f.prefill_steps + std::max(0.0, o - 1.0) / f.tokens_per_decode_step;
        // The mean position's q: a wave's share at 1, the rest apart.
        const double wave =
            SynchronizedWaveShare(p.workload, ctx.scheduler.waves_every_round, *n);
        const double q = wave + (1.0 - wave) / std::max(1.0, life_steps);
        ob.features += (*n - 1) * q / 2 * f.prefill_marginal;
      }
      out.push_back(ob);
    }
  }
  if (p.prefill_tokens_per_second.has_value()) {
    const double budget = ctx.scheduler.max_batched_tokens;
    StepShape shape;
    shape.prefill_tokens = budget;
    shape.prefill_sequences = std::max(1.0, budget / p.workload.input_tokens);
    shape.prefill_context_tokens = 0.5 * std::min(budget, p.workload.input_tokens);
    Observation ob;
    ob.source = p.source;
    ob.kind = ObservationKind::kPrefillThroughput;
    ob.observed_seconds = budget / *p.prefill_tokens_per_second;
    ob.features = ComputeEngineStepFeatures(ctx.inputs, std::nullopt, shape);
    out.push_back(ob);
  }
  return out;
}

namespace {

absl::Status ValidateCalibrationInputs(const CalibrationContext& ctx,
                                       const std::optional<CoefficientPrior>& prior) {
  CAPPLAN_RETURN_IF_ERROR(ValidateStepTimeInputs(ctx.inputs));
  if (ctx.scheduler.max_batched_tokens < 1) {
    return Invalid("CalibrationContext.scheduler.max_batched_tokens",
                   ctx.scheduler.max_batched_tokens, "must be >= 1");
  }
  if (ctx.slots < 1 || ctx.slots > kMaxSlots) {
    return Invalid("CalibrationContext.slots", ctx.slots,
                   absl::StrCat("must be in [1, ", kMaxSlots, "]"));
  }
  if (ctx.speculative.has_value()) {
    CAPPLAN_RETURN_IF_ERROR(ValidateSpeculative(*ctx.speculative));
  }
  if (prior.has_value()) {
    CAPPLAN_RETURN_IF_ERROR(ValidateCoefficients(prior->coefficients));
    CAPPLAN_RETURN_IF_ERROR(CheckPositive("CoefficientPrior.weight", prior->weight));
  }
  return absl::OkStatus();
}

// Every point's observations, in order.
absl::StatusOr<std::vector<Observation>> CollectObservations(
    const CalibrationContext& ctx, absl::Span<const MeasuredPoint> points) {
  std::vector<Observation> out;
  for (size_t i = 0; i < points.size(); ++i) {
    absl::StatusOr<std::vector<Observation>> obs =
        PointObservations(ctx, points[i], static_cast<int>(i));
    if (!obs.ok()) return obs.status();
    for (Observation& o : *obs) out.push_back(std::move(o));
  }
  return out;
}

// The fit in relative terms: one row f_i / y_i · c ≈ 1 per observation over
// the identified coefficients (a feature non-zero in some observation); with
// a prior, one more row per coefficient, √weight · g_k · c_k ≈ √weight · g_k ·
// prior_k, g_k the column's mean |entry|, so the prior counts as `weight`
// observations.
struct RelativeSystem {
  Eigen::MatrixXd a;
  Eigen::VectorXd b;
  std::vector<int> active;  // the feature of each column
  int prior_rows = 0;       // trailing rows, unweighted in the fit
};

// With a floor c₀ the unknowns are c' = c − c₀ >= 0 and each row's target
// is 1 − f_i / y_i · c₀ (what the floor does not already explain).
RelativeSystem BuildRelativeSystem(const std::vector<Observation>& obs,
                                   const std::optional<CoefficientPrior>& prior,
                                   const StepFeatures& prior_vec, const StepFeatures& floor_vec,
                                   std::array<bool, kNumStepFeatures>& identified) {
  const int rows = static_cast<int>(obs.size());
  Eigen::MatrixXd rel(rows, kNumStepFeatures);
  for (int i = 0; i < rows; ++i) {
    rel.row(i) = obs[i].features.transpose() / obs[i].observed_seconds;
  }
  RelativeSystem sys;
  for (int j = 0; j < kNumStepFeatures; ++j) {
    identified[j] = rel.col(j).cwiseAbs().maxCoeff() > 0;
    if (identified[j]) sys.active.push_back(j);
  }
  const int cols = static_cast<int>(sys.active.size());
  sys.prior_rows = prior.has_value() ? cols : 0;
  sys.a = Eigen::MatrixXd::Zero(rows + sys.prior_rows, cols);
  sys.b = Eigen::VectorXd::Ones(rows + sys.prior_rows);
  sys.b.head(rows) -= rel * floor_vec;
  for (int k = 0; k < cols; ++k) sys.a.block(0, k, rows, 1) = rel.col(sys.active[k]);
  if (prior.has_value()) {
    const double sw = std::sqrt(prior->weight);
    for (int k = 0; k < cols; ++k) {
      const double g = rel.col(sys.active[k]).cwiseAbs().mean();
      sys.a(rows + k, k) = sw * g;
      sys.b(rows + k) = sw * g * std::max(0.0, prior_vec(sys.active[k]) - floor_vec(sys.active[k]));
    }
  }
  return sys;
}

// The fitted coefficients (the prior's, or 0, where unidentified), the fit's
// figures, and each observation's fitted time and Huber weight.
void SetFit(const RobustFitResult& fit, const RelativeSystem& sys, const StepFeatures& prior_vec,
            const StepFeatures& floor_vec, bool used_prior, CalibrationResult& result) {
  const int cols = static_cast<int>(sys.active.size());
  StepFeatures coef = prior_vec.cwiseMax(floor_vec);
  for (int k = 0; k < cols; ++k) {
    coef(sys.active[k]) = floor_vec(sys.active[k]) + fit.coefficients(k);
  }
  result.coefficients = StepTimeCoefficients::FromVector(coef);
  result.used_prior = used_prior;
  result.rank = fit.rank;
  result.rank_deficient = fit.rank < cols;
  result.relative_error_band = fit.relative_error_band;
  result.relative_rms_residual = fit.relative_rms_residual;
  for (size_t i = 0; i < result.observations.size(); ++i) {
    Observation& o = result.observations[i];
    o.fitted_seconds = StepSeconds(result.coefficients, o.features);
    o.huber_weight = fit.weights(i);
  }
}

}  // namespace

StepTimeCoefficients PhysicalFloor() { return StepTimeCoefficients::Roofline(); }

namespace {

// Fits the coefficients on observations already collected.
absl::StatusOr<CalibrationResult> FitObservations(std::vector<Observation> observations,
                                                  const std::optional<CoefficientPrior>& prior,
                                                  bool floored,
                                                  const CalibrationOptions& calibration_options) {
  CalibrationResult result;
  result.observations = std::move(observations);
  const StepFeatures floor_vec = floored ? PhysicalFloor().AsVector() : StepFeatures::Zero().eval();
  if (result.observations.empty()) {
    if (!prior.has_value()) {
      return absl::FailedPreconditionError(
          "Calibrate: no usable measured points and no hardware-class prior; "
          "nothing to take coefficients from");
    }
    result.coefficients =
        StepTimeCoefficients::FromVector(prior->coefficients.AsVector().cwiseMax(floor_vec));
    result.used_prior = true;
    return result;
  }
  const StepFeatures prior_vec =
      prior.has_value() ? prior->coefficients.AsVector() : StepFeatures::Zero().eval();
  const RelativeSystem sys =
      BuildRelativeSystem(result.observations, prior, prior_vec, floor_vec, result.identified);
  RobustFitOptions options;
  options.residual_scale = 1.0;
  options.unweighted_trailing_rows = sys.prior_rows;
  options.require_full_rank = !prior.has_value() && calibration_options.require_identifiable;
  absl::StatusOr<RobustFitResult> fit = RobustNonNegativeLeastSquares(sys.a, sys.b, options);
  if (!fit.ok()) {
    return absl::Status(fit.status().code(),
                        absl::StrCat("Calibrate (", result.observations.size(),
                                     " observations): ", fit.status().message()));
  }
  SetFit(*fit, sys, prior_vec, floor_vec, prior.has_value(), result);
  return result;
}

}  // namespace

absl::StatusOr<CalibrationResult> Calibrate(const CalibrationContext& ctx,
                                            absl::Span<const MeasuredPoint> points,
                                            const std::optional<CoefficientPrior>& prior,
                                            const CalibrationOptions& calibration_options) {
  CAPPLAN_RETURN_IF_ERROR(ValidateCalibrationInputs(ctx, prior));
  absl::StatusOr<std::vector<Observation>> observations = CollectObservations(ctx, points);
  if (!observations.ok()) return observations.status();
  return FitObservations(*std::move(observations), prior,
                         calibration_options.physical_floor && ctx.speeds_known,
                         calibration_options);
}

absl::StatusOr<CalibrationResult> CalibratePooled(absl::Span<const CalibrationGroup> groups,
                                                  const std::optional<CoefficientPrior>& prior,
                                                  const CalibrationOptions& options) {
  std::vector<Observation> all;
  for (const CalibrationGroup& g : groups) {
    if (!g.context.speeds_known) {
      return absl::InvalidArgumentError(absl::StrCat(
          "CalibratePooled: group '", g.name,
          "' is in unit speeds (a withheld card); its coefficients are not efficiencies"));
    }
    CAPPLAN_RETURN_IF_ERROR(ValidateCalibrationInputs(g.context, prior));
    absl::StatusOr<std::vector<Observation>> obs = CollectObservations(g.context, g.points);
    if (!obs.ok()) {
      return absl::Status(obs.status().code(),
                          absl::StrCat("group '", g.name, "': ", obs.status().message()));
    }
    for (Observation& o : *obs) all.push_back(std::move(o));
  }
  return FitObservations(std::move(all), prior, options.physical_floor, options);
}

absl::StatusOr<LoadPoint> PredictPoint(const CalibrationContext& ctx, const MeasuredPoint& p,
                                       const StepTimeCoefficients& c) {
  CAPPLAN_RETURN_IF_ERROR(ValidatePoint(p, 0));
  PerformanceModel m;
  m.inputs = ctx.inputs;
  m.coefficients = c;
  m.scheduler = ctx.scheduler;
  m.speculative = p.speculative.has_value() ? p.speculative : ctx.speculative;
  absl::StatusOr<LoadDependentServer> server =
      LoadDependentServer::Create(m, p.workload, Slots{ctx.slots, SlotBound::kRunningRequestLimit});
  if (!server.ok()) return server.status();
  absl::StatusOr<std::vector<LoadPoint>> curve =
      p.concurrency.has_value() ? ClosedLoopCurve(*server, {*p.concurrency}, p.think_time_seconds)
                                : OpenLoopCurve(*server, {*p.arrival_rate_rps});
  if (!curve.ok()) return curve.status();
  return curve->front();
}

absl::StatusOr<std::optional<double>> RelativeErrorBandAt(const CalibrationResult& fit, double load,
                                                          double min_measured_load,
                                                          double max_measured_load,
                                                          const ErrorBandOptions& options) {
  CAPPLAN_RETURN_IF_ERROR(CheckPositive("load", load));
  CAPPLAN_RETURN_IF_ERROR(CheckPositive("min_measured_load", min_measured_load));
  if (!std::isfinite(max_measured_load) || max_measured_load < min_measured_load) {
    return Invalid("max_measured_load", max_measured_load,
                   absl::StrCat("must be >= min_measured_load = ", min_measured_load));
  }
  CAPPLAN_RETURN_IF_ERROR(
      CheckNonNegative("ErrorBandOptions.widening_per_doubling", options.widening_per_doubling));
  std::optional<double> band = fit.relative_error_band;
  if (!band.has_value()) band = options.fallback_relative_band;
  if (!band.has_value()) return std::optional<double>();
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("relative_error_band", *band));
  double doublings = 0;
  if (load < min_measured_load) doublings = std::log2(min_measured_load / load);
  if (load > max_measured_load) doublings = std::log2(load / max_measured_load);
  return std::optional<double>(*band * (1 + options.widening_per_doubling * doublings));
}

double MinimiseOnUnitInterval(const std::function<double(double)>& f) {
  // Grid, then golden-section search around the best grid point.
  constexpr int kGrid = 40;
  double best_x = 0.5, best = std::numeric_limits<double>::infinity();
  for (int i = 1; i < kGrid; ++i) {
    double x = static_cast<double>(i) / kGrid;
    double v = f(x);
    if (v < best) best = v, best_x = x;
  }
  double lo = std::max(0.0, best_x - 1.0 / kGrid), hi = std::min(1.0, best_x + 1.0 / kGrid);
  const double g = (std::sqrt(5.0) - 1) / 2;
  double x1 = hi - g * (hi - lo), x2 = lo + g * (hi - lo);
  double f1 = f(x1), f2 = f(x2);
  for (int it = 0; it < 30; ++it) {
    if (f1 < f2) {
      hi = x2, x2 = x1, f2 = f1, x1 = hi - g * (hi - lo), f1 = f(x1);
    } else {
      lo = x1, x1 = x2, f1 = f2, x2 = lo + g * (hi - lo), f2 = f(x2);
    }
  }
  double x = (lo + hi) / 2;
  return f(x) <= best ? x : best_x;
}

}  // namespace capplan::model
