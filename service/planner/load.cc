#include "service/planner/load.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "model/cost.h"
#include "model/load_grid.h"
#include "model/provenance.h"
#include "model/simulator.h"
#include "service/planner/bands.h"
#include "service/translate/enum_names.h"
#include "service/translate/request_validation.h"

namespace capplan::service {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

void AddUniqueNote(std::vector<std::string>* notes, std::string note) {
  if (std::find(notes->begin(), notes->end(), note) == notes->end()) {
    notes->push_back(std::move(note));
  }
}

// The gate in front of the engine: the query's, else the baseline's.
std::optional<int> GateFor(const PreparedDeployment& d, const LoadQuery& q,
                           std::vector<std::string>* notes) {
  if (q.operator_concurrency_gate.has_value()) {
    return static_cast<int>(*q.operator_concurrency_gate);
  }
  const v1::Baseline* b = d.resolved.baseline;
  if (b == nullptr || !BaselineGate(*b).has_value()) return std::nullopt;
  notes->push_back(absl::StrFormat("operator concurrency gate %d from baseline '%s'",
                                   *BaselineGate(*b), b->id()));
  return BaselineGate(*b);
}

// The deployment's speculation with its acceptance rate: stated, else fitted.
absl::Status ResolveSpeculation(const PreparedLoad& load, model::PerformanceModel* m,
                                std::vector<std::string>* notes) {
  const DeploymentPerformance& perf = load.deployment->performance;
  if (!perf.speculative.has_value()) return absl::OkStatus();
  double a = perf.speculative->acceptance_rate;
  if (!(a > 0)) {
    const std::optional<model::StepTimeFit>& fit = load.source.fit;
    if (!fit.has_value() || !fit->acceptance_rate.has_value()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s.deployment: speculative decoding with %d draft tokens, but no acceptance rate is "
          "known (no measured speculative rows for this model); turn speculation off "
          "(speculative_method NONE) or calibrate with a speculative sweep",
          load.query.path, perf.speculative->draft_tokens));
    }
    a = *fit->acceptance_rate;
    notes->push_back(absl::StrFormat(
        "speculative acceptance rate %.3f per draft token, fitted on the measured speculative rows",
        a));
  }
  m->speculative = SpeculationFor(perf, perf.speculative->draft_tokens, a);
  return absl::OkStatus();
}

// The in-service populations of this configuration's rows with the
// request's speculative setting.
std::optional<model::MeasuredRange> MeasuredRangeOf(const FitSource& src, bool spec_on) {
  std::optional<model::MeasuredRange> range;
  for (const std::vector<SourcedPoint>* set : {&src.own_points, &src.inline_points}) {
    for (const SourcedPoint& sp : *set) {
      if (sp.speculative != spec_on || !sp.point.concurrency.has_value()) continue;
      const double n = *sp.point.concurrency;
      if (!range.has_value()) range = model::MeasuredRange{n, n};
      range->min_in_service = std::min(range->min_in_service, n);
      range->max_in_service = std::max(range->max_in_service, n);
    }
  }
  return range;
}

// A figure's raw band: the fit's misfit of the metric's observation kind;
// for a metric the measured rows correct, the correction's own
// leave-one-row-out error where every point lies within the rows' loads
// (also at a measured load: the band is about another run, and ScaledBand
// adds the run-to-run term), and the larger of the two beyond them, where
// the figure fades back to the model's.
std::optional<double> RawBand(const FitSource& src, const model::MeasuredCorrection& correction,
                              model::CurveMetric metric, const model::LoadCurve& curve) {
  std::optional<double> fit_band;
  if (src.fit.has_value()) {
    fit_band =
        model::ObservationKindBand(src.fit->calibration, model::BandingObservationKind(metric));
  }
  const std::optional<double> loo = correction.LeaveOneRowOutBand(metric);
  const std::optional<std::pair<double, double>> range = correction.MeasuredRange(metric);
  if (!loo.has_value() || !range.has_value()) return fit_band;
  const bool inside =
      std::all_of(curve.points.begin(), curve.points.end(), [&](const model::LoadPoint& p) {
        return p.load() >= range->first && p.load() <= range->second;
      });
  if (inside || !fit_band.has_value()) return loo;
  return std::max(*loo, *fit_band);
}

void AddProvenance(const PreparedLoad& load, const model::LoadCurve& curve,
                   const model::MeasuredCorrection& correction, double think_time_seconds,
                   v1::LoadCurve* out) {
  const FitSource& src = load.source;
  const bool spec_on = load.performance_model.speculative.has_value();
  const int draft = spec_on ? load.performance_model.speculative->draft_tokens : 0;
  const std::optional<model::MeasuredRange> range = MeasuredRangeOf(src, spec_on);
  std::vector<double> in_service;
  for (const model::LoadPoint& p : curve.points) in_service.push_back(model::PointInService(p));
  for (model::CurveMetric metric : model::kCurveMetrics) {
    v1::MetricProvenance* mp = out->add_provenance();
    mp->set_metric(model::CurveMetricName(metric));
    for (const std::string& id : src.baseline_ids) mp->add_baseline_ids(id);
    const bool every_point_measured =
        std::all_of(curve.points.begin(), curve.points.end(), [&](const model::LoadPoint& p) {
          return std::any_of(src.own_points.begin(), src.own_points.end(),
                             [&](const SourcedPoint& sp) {
                               return model::RowMeasuresPoint(sp.AsRow(), p, metric, spec_on, draft,
                                                              load.workload, think_time_seconds);
                             });
        });
    const std::optional<double> band = RawBand(src, correction, metric, curve);
    const model::MetricAssessment a =
        model::AssessMetric(src.base_tier, band, range, in_service, every_point_measured);
    mp->set_tier(ToProtoTier(a.tier));
    if (a.error_band_fraction > 0) {
      mp->set_error_band_fraction(
          ScaledBand(load.band_scales, ToProtoTier(a.tier), model::CurveMetricName(metric),
                     a.error_band_fraction,
                     src.fit.has_value() && !src.fit->calibration.observations.empty()));
    }
  }
}

// Whether a row ran the query's workload (model::kSameWorkloadTolerance,
// the same prefix-cache hit rate and arrival pattern) and the deployment's
// speculative setting (a stated acceptance rate other than the fitted one:
// not the rows' run).
bool RowOfQuery(const SourcedPoint& sp, const PreparedLoad& load) {
  const model::PerformanceModel& m = load.performance_model;
  if (sp.speculative != m.speculative.has_value()) return false;
  if (sp.speculative) {
    if (sp.draft_tokens != m.speculative->draft_tokens) return false;
    const std::optional<model::SpeculativeDecoding>& stated =
        load.deployment->performance.speculative;
    if (stated.has_value() && stated->acceptance_rate > 0) return false;
  }
  return model::SameRunOfWorkload(sp.point.workload, load.workload);
}

// Each of the query's rows predicted as the fit sees it (its own load,
// workload and gate, the fitted acceptance rate), and its residuals against
// that. None when the query puts the deployment behind another gate than the
// rows ran behind: their queueing is not the query's.
absl::StatusOr<std::vector<model::RowResidual>> RowResiduals(const PreparedLoad& load,
                                                             std::vector<std::string>* notes) {
  std::vector<model::RowResidual> out;
  const FitSource& src = load.source;
  if (!src.fit.has_value() || (src.own_points.empty() && src.inline_points.empty())) return out;
  // The catalogue's rows ran behind their baselines' gate; a request's own
  // calibration rows behind the request's.
  const std::optional<int> rows_gate = src.own_points.empty() ? load.gate : src.rows_gate;
  if (load.gate != rows_gate) {
    notes->push_back(
        "figures not corrected by the measured rows: they ran behind another operator gate");
    return out;
  }
  const DeploymentPerformance& perf = load.deployment->performance;
  for (const std::vector<SourcedPoint>* set : {&src.own_points, &src.inline_points}) {
    for (const SourcedPoint& sp : *set) {
      if (!RowOfQuery(sp, load)) continue;
      model::MeasuredPoint row = sp.point;
      if (sp.speculative) {
        if (!src.fit->acceptance_rate.has_value()) continue;
        row.speculative = SpeculationFor(perf, sp.draft_tokens, *src.fit->acceptance_rate);
      }
      absl::StatusOr<model::CalibrationContext> ctx =
          CalibrationContextFor(perf, row.workload, rows_gate);
      if (!ctx.ok()) continue;  // the row's request does not fit the pool: no residual
      absl::StatusOr<model::LoadPoint> predicted =
          model::PredictPoint(*ctx, row, src.fit->calibration.coefficients);
      CAPPLAN_RETURN_IF_ERROR(model::BudgetStatus(load.query.budget));
      if (!predicted.ok()) continue;
      out.push_back(model::ResidualOf(sp.point, *predicted));
    }
  }
  return out;
}

model::LoadCurveRequest CurveRequest(const PreparedLoad& load, const LoadAxis& axis) {
  model::LoadCurveRequest req;
  // The knee on the median TTFT: at the lightest load the p95 has no
  // contention in it at all, so the p95's rise from its lightest-load value
  // is mostly prefill contention, not the slot queue the knee is about.
  req.knee.metric = model::KneeMetric::kTtftP50;
  req.model = load.performance_model;
  req.workload = load.workload;
  req.limits = load.limits;
  if (axis.closed_loop.has_value()) {
    for (uint32_t c : axis.closed_loop->concurrencies()) {
      req.concurrencies.push_back(static_cast<int>(c));
    }
    req.think_time_seconds = axis.closed_loop->think_time_seconds();
  } else {
    for (double x : axis.open_loop->arrival_rates_rps()) req.arrival_rates_rps.push_back(x);
  }
  const v1::Slo& slo = load.query.slo;
  if (slo.has_ttft_p95_seconds()) req.slo.ttft_p95_seconds = slo.ttft_p95_seconds();
  if (slo.has_tpot_seconds()) req.slo.tpot_seconds = slo.tpot_seconds();
  if (slo.has_e2e_p95_seconds()) req.slo.e2e_p95_seconds = slo.e2e_p95_seconds();
  return req;
}

// RESOURCE_EXHAUSTED when the curve's estimated work is above the budget's
// cap: names the axis the request gave (or the slots, for the grids Plan and
// Validate search) and the cap.
absl::Status AdmitCurve(const PreparedLoad& load, const LoadAxis& axis,
                        const model::LoadCurveRequest& req, const std::string& axis_field) {
  const model::Budget* budget = load.query.budget;
  if (budget == nullptr) return absl::OkStatus();
  absl::StatusOr<model::LoadCurveWork> work = model::EstimateLoadCurveWork(req);
  // The grids Plan and Validate search are the server's choice, not the
  // client's: they get kSearchGridWorkFactor times the cap.
  const double cap = budget->max_work_units() * (axis_field.empty() ? kSearchGridWorkFactor : 1);
  if (!work.ok() || work->total_units <= cap) return absl::OkStatus();
  const bool closed = axis.closed_loop.has_value();
  const int points =
      closed ? axis.closed_loop->concurrencies_size() : axis.open_loop->arrival_rates_rps_size();
  const std::string what =
      closed ? absl::StrFormat("%d points up to %d users, think time %g s", points,
                               axis.closed_loop->concurrencies(points - 1),
                               axis.closed_loop->think_time_seconds())
             : absl::StrFormat("%d arrival rates", points);
  const std::string field =
      !axis_field.empty()
          ? absl::StrCat(axis_field, closed ? ".concurrencies" : ".arrival_rates_rps")
          : absl::StrCat(load.query.path, ".deployment (its ", work->slots.slots,
                         " slots, bound by ", model::SlotBoundName(work->slots.bound), ")");
  return absl::ResourceExhaustedError(absl::StrFormat(
      "%s: the load curve (%s over %d slots) is estimated at %.3g work units, above the cap of "
      "%.3g per curve; ask for fewer or lower points, a shorter think time or fewer slots "
      "(max_num_seqs)",
      field, what, work->slots.slots, work->total_units, cap));
}

}  // namespace

absl::StatusOr<PreparedLoad> PrepareLoad(const Catalog& catalog, const PreparedDeployment& d,
                                         const LoadQuery& query, WorkCounters* counters) {
  CAPPLAN_RETURN_IF_ERROR(ValidateLoadQuery(query));
  CAPPLAN_RETURN_IF_ERROR(d.performance_status);
  PreparedLoad load;
  load.deployment = &d;
  load.query = query;
  load.notes = d.performance.notes;
  load.workload = ToModelWorkload(query.workload);
  load.gate = GateFor(d, query, &load.notes);
  CAPPLAN_ASSIGN_OR_RETURN(load.source,
                           ChooseFit(catalog, d, query, load.gate, &load.notes, counters));
  // A deployment that cannot start serves nothing: no curve to draw.
  if (!d.hardware_withheld && !d.memory.fits()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s.deployment does not fit: %s is short by %.2f GiB per GPU (PlanMemory shows the "
        "account); there is no load to predict",
        query.path, ShortName(d.memory.binding()),
        static_cast<double>(d.memory.shortfall_bytes()) / kGiB));
  }
  model::PerformanceModel& m = load.performance_model;
  m.inputs = d.performance.inputs;
  m.scheduler = d.performance.scheduler;
  m.coefficients = load.source.fit.has_value() ? load.source.fit->calibration.coefficients
                                               : model::StepTimeCoefficients::Roofline();
  CAPPLAN_RETURN_IF_ERROR(ResolveSpeculation(load, &m, &load.notes));
  load.limits = SlotLimitsFor(d.performance, load.gate);
  load.band_scales = CatalogBandScales(catalog);
  if (load.source.inline_calibration) {
    load.notes.push_back("fitted on the request's calibration sweeps too");
  }
  CAPPLAN_ASSIGN_OR_RETURN(load.residuals, RowResiduals(load, &load.notes));
  return load;
}

absl::StatusOr<v1::LoadCurve> DrawCurve(const PreparedLoad& load, const LoadAxis& axis,
                                        const std::string& axis_field, CurveFigures figures) {
  CAPPLAN_RETURN_IF_ERROR(ValidateLoadAxis(axis, load.query.path));
  model::LoadCurveRequest req = CurveRequest(load, axis);
  req.latencies_until_unsafe = figures == CurveFigures::kToSafePoint;
  const model::MeasuredCorrection correction =
      model::MeasuredCorrection::FromRows(load.residuals, axis.closed_loop.has_value(),
                                          req.think_time_seconds, load.workload.output_tokens);
  std::vector<std::string> correction_notes;
  if (!correction.empty()) {
    req.adjust = &correction;
    std::vector<std::string> metrics;
    for (model::CurveMetric m : model::kCurveMetrics) {
      if (correction.Corrects(m)) metrics.push_back(model::CurveMetricName(m));
    }
    correction_notes.push_back(absl::StrFormat(
        "%s %s of this workload's measured rows: the measurement at a measured load, the "
        "model's shape between, fading to the model alone beyond (halved per doubling of load); "
        "the knee is the model's own",
        absl::StrJoin(metrics, ", "), kMeasuredCorrectionNote));
  }
  CAPPLAN_RETURN_IF_ERROR(AdmitCurve(load, axis, req, axis_field));
  req.budget = load.query.budget;
  absl::StatusOr<model::LoadCurve> curve = model::PredictLoadCurve(req, &load.server);
  // A stopped budget's status is the answer (its code and reason as they are).
  CAPPLAN_RETURN_IF_ERROR(model::BudgetStatus(load.query.budget));
  if (!curve.ok()) {
    return absl::Status(curve.status().code(),
                        absl::StrCat(load.query.path, ": ", curve.status().message()));
  }
  v1::LoadCurve out;
  for (const model::LoadPoint& p : curve->points) FillCurvePoint(p, out.add_points());
  if (curve->knee.has_value()) {
    FillKnee(*curve->knee, axis.closed_loop.has_value(), out.mutable_knee());
  }
  FillSafePoint(*curve, out.mutable_safe_operating_point());
  out.mutable_slots()->set_slots(static_cast<uint32_t>(curve->slots.slots));
  out.mutable_slots()->set_bound(ToProtoSlotBound(curve->slots.bound));
  std::optional<model::CalibrationResult> fit;
  if (load.source.fit.has_value()) fit = load.source.fit->calibration;
  FillStepTimeFit(req.model.coefficients, fit, out.mutable_coefficients());
  AddProvenance(load, *curve, correction, req.think_time_seconds, &out);
  *out.mutable_memory() = load.deployment->memory;
  std::vector<std::string> notes;
  for (const std::string& n : load.notes) AddUniqueNote(&notes, n);
  for (std::string& n : correction_notes) AddUniqueNote(&notes, std::move(n));
  for (std::string& n : notes) out.add_notes(std::move(n));
  return out;
}

v1::ClosedLoopAxis ConcurrencyGridAxis(uint32_t top, std::optional<uint32_t> include) {
  std::optional<int> inc;
  if (include.has_value()) inc = static_cast<int>(*include);
  v1::ClosedLoopAxis axis;
  for (int c : model::ConcurrencyGrid(static_cast<int>(top), inc)) axis.add_concurrencies(c);
  return axis;
}

v1::OpenLoopAxis RateGridAxis(double unit_rps, int sixty_fourths) {
  v1::OpenLoopAxis axis;
  for (double r : model::RateGrid(unit_rps, sixty_fourths)) axis.add_arrival_rates_rps(r);
  return axis;
}

namespace {

// A request prepared once: the deployment (which the load points into) and
// the axis.
struct PreparedRequest {
  std::unique_ptr<PreparedDeployment> deployment;
  PreparedLoad load;
  LoadAxis axis;
};

absl::StatusOr<PreparedRequest> PrepareRequest(const Catalog& catalog,
                                               const v1::PredictLoadRequest& request,
                                               const std::string& path, WorkCounters* counters,
                                               model::Budget* budget) {
  LoadQuery q;
  q.path = path;
  q.budget = budget;
  q.workload = request.workload();
  q.slo = request.slo();
  if (request.has_operator_concurrency_gate()) {
    q.operator_concurrency_gate = request.operator_concurrency_gate();
  }
  LoadAxis axis;
  if (request.has_closed_loop()) axis.closed_loop = request.closed_loop();
  if (request.has_open_loop()) axis.open_loop = request.open_loop();
  const bool from_baseline = !request.has_workload() && !request.deployment().baseline_id().empty();
  if (!from_baseline) CAPPLAN_RETURN_IF_ERROR(ValidateLoadQuery(q));
  CAPPLAN_RETURN_IF_ERROR(ValidateLoadAxis(axis, q.path));
  CAPPLAN_ASSIGN_OR_RETURN(ResolvedDeployment r,
                           ResolveDeploymentAllowingWithheldHardware(catalog, request.deployment(),
                                                                     path + ".deployment"));
  std::vector<std::string> notes;
  if (!request.has_workload() && r.baseline != nullptr && !r.baseline->sweeps().empty()) {
    CAPPLAN_ASSIGN_OR_RETURN(q.workload, SweepWorkload(*r.baseline, r.baseline->sweeps(0), &notes));
  }
  q.calibration.assign(request.calibration().begin(), request.calibration().end());
  q.no_catalog_calibration = request.no_catalog_calibration();
  PreparedRequest out;
  CAPPLAN_ASSIGN_OR_RETURN(PreparedDeployment d,
                           PrepareDeployment(catalog, std::move(r), std::nullopt, counters));
  if (request.has_workload()) {
    CAPPLAN_RETURN_IF_ERROR(CheckWorkloadWithinContext(request.workload(), d, q.path));
  }
  out.deployment = std::make_unique<PreparedDeployment>(std::move(d));
  CAPPLAN_ASSIGN_OR_RETURN(out.load, PrepareLoad(catalog, *out.deployment, q, counters));
  for (std::string& n : notes) out.load.notes.push_back(std::move(n));
  out.axis = std::move(axis);
  return out;
}

// The request's axis field, for the work cap's message.
std::string AxisField(const v1::PredictLoadRequest& request, const std::string& path) {
  return absl::StrCat(path, request.has_closed_loop() ? ".closed_loop" : ".open_loop");
}

// One simulated point as the curve reports it.
void FillSimulatedPoint(const model::SimulationResult& r, const model::SimulationConfig& c,
                        v1::LoadCurvePoint* out) {
  out->Clear();
  if (c.concurrency.has_value()) out->set_concurrency(static_cast<uint32_t>(*c.concurrency));
  if (c.arrival_rate_rps.has_value()) out->set_arrival_rate_rps(*c.arrival_rate_rps);
  out->set_output_tokens_per_second(r.output_tokens_per_second);
  out->set_requests_per_second(r.requests_per_second);
  out->set_mean_batch_size(r.mean_batch_size);
  out->set_slot_wait_probability(r.slot_wait_fraction);
  out->set_stable(!r.saturated);
  if (r.saturated) return;
  out->set_ttft_p50_seconds(r.ttft.p50_seconds);
  out->set_ttft_p90_seconds(r.ttft.p90_seconds);
  out->set_ttft_p95_seconds(r.ttft.p95_seconds);
  out->set_ttft_p99_seconds(r.ttft.p99_seconds);
  out->set_tpot_seconds(r.tpot_mean_seconds);
  out->set_e2e_p50_seconds(r.e2e.p50_seconds);
  out->set_e2e_p95_seconds(r.e2e.p95_seconds);
  out->set_mean_queue_length(r.mean_queue_length);
}

}  // namespace

absl::StatusOr<v1::LoadCurve> PredictLoad(const Catalog& catalog,
                                          const v1::PredictLoadRequest& request,
                                          WorkCounters* counters, model::Budget* budget) {
  CAPPLAN_RETURN_IF_ERROR(ValidatePredictLoadRequest(request));
  const std::string path = "PredictLoadRequest";
  CAPPLAN_ASSIGN_OR_RETURN(PreparedRequest p,
                           PrepareRequest(catalog, request, path, counters, budget));
  return DrawCurve(p.load, p.axis, AxisField(request, path));
}

absl::StatusOr<v1::LoadCurve> SimulateLoad(const Catalog& catalog,
                                           const v1::PredictLoadRequest& request,
                                           model::Budget* budget) {
  CAPPLAN_RETURN_IF_ERROR(ValidatePredictLoadRequest(request));
  const int points =
      request.closed_loop().concurrencies_size() + request.open_loop().arrival_rates_rps_size();
  if (points > kMaxSimulatedPoints) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "PredictLoadRequest: %d load points; the simulator takes at most %d (each runs %d "
        "requests)",
        points, kMaxSimulatedPoints, kSimulatedRequestsPerPoint));
  }
  const std::string path = "PredictLoadRequest";
  CAPPLAN_ASSIGN_OR_RETURN(PreparedRequest p,
                           PrepareRequest(catalog, request, path, nullptr, budget));
  // The analytical curve gives the fit, slots, memory and provenance; its
  // points are replaced by the simulator's, its knee and safe point dropped.
  // The simulator replays the model alone: no measured rows' correction in
  // the curve it stands in for (nor in its bands and notes).
  p.load.residuals.clear();
  CAPPLAN_ASSIGN_OR_RETURN(v1::LoadCurve out, DrawCurve(p.load, p.axis, AxisField(request, path)));
  out.clear_knee();
  out.clear_safe_operating_point();
  model::SimulationConfig c;
  c.model = p.load.performance_model;
  c.workload = p.load.workload;
  c.limits = p.load.limits;
  c.measured_requests = kSimulatedRequestsPerPoint;
  c.warmup_requests = kSimulatedRequestsPerPoint / 10;
  c.budget = budget;
  for (int i = 0; i < out.points_size(); ++i) {
    c.seed = 1 + static_cast<uint64_t>(i);
    c.concurrency.reset();
    c.arrival_rate_rps.reset();
    if (p.axis.closed_loop.has_value()) {
      c.concurrency = static_cast<int>(p.axis.closed_loop->concurrencies(i));
      c.think_time_seconds = p.axis.closed_loop->think_time_seconds();
    } else {
      c.arrival_rate_rps = p.axis.open_loop->arrival_rates_rps(i);
    }
    absl::StatusOr<model::SimulationResult> r = model::Simulate(c);
    // A stopped budget's status is the answer (its code and reason as they are).
    CAPPLAN_RETURN_IF_ERROR(model::BudgetStatus(budget));
    if (!r.ok()) {
      return absl::Status(r.status().code(), absl::StrCat("PredictLoadRequest: simulating point ",
                                                          i, ": ", r.status().message()));
    }
    FillSimulatedPoint(*r, c, out.mutable_points(i));
  }
  out.add_notes(absl::StrFormat(
      "simulated: an iteration-level replay of the engine's scheduler with the same step-time "
      "model, %d measured requests per point after %d warm-up ones (seeded, reproducible); no "
      "knee or safe point (capplan sweep gives them)",
      kSimulatedRequestsPerPoint, kSimulatedRequestsPerPoint / 10));
  return out;
}

}  // namespace capplan::service
