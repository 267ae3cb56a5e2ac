#include "service/planner/plan.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "model/capacity.h"
#include "service/planner/kv_tier.h"
#include "service/planner/load.h"
#include "service/planner/prepared.h"
#include "service/translate/deployment_resolver.h"
#include "service/translate/enum_names.h"
#include "service/translate/load_translation.h"
#include "service/translate/request_validation.h"

namespace capplan::service {
namespace {

v1::OperatingPoint ToOperatingPoint(const v1::SafeOperatingPoint& safe) {
  v1::OperatingPoint out;
  out.set_found(safe.found());
  out.set_binding(safe.binding());
  if (!safe.found()) return out;
  const v1::LoadCurvePoint& p = safe.point();
  if (p.has_concurrency()) out.set_concurrent_users(p.concurrency());
  out.set_requests_per_second(p.requests_per_second());
  if (p.has_ttft_p50_seconds()) out.set_ttft_p50_seconds(p.ttft_p50_seconds());
  if (p.has_ttft_p95_seconds()) out.set_ttft_p95_seconds(p.ttft_p95_seconds());
  if (p.has_ttft_p99_seconds()) out.set_ttft_p99_seconds(p.ttft_p99_seconds());
  if (p.has_tpot_seconds()) out.set_tpot_seconds(p.tpot_seconds());
  out.set_output_tokens_per_second(p.output_tokens_per_second());
  return out;
}

v1::Capacity ToCapacity(const model::MonthlyCapacity& m, const model::CapacityPeriod& period,
                        const std::string& at) {
  v1::Capacity c;
  c.set_tokens_per_month_total(m.tokens_per_month_total);
  c.set_output_tokens_per_month(m.output_tokens_per_month);
  c.set_tokens_per_second_total(m.tokens_per_second_total);
  c.set_output_tokens_per_second(m.output_tokens_per_second);
  c.set_at(at);
  c.set_days_per_month(period.days);
  c.set_duty_factor(period.duty_factor);
  return c;
}

absl::Status CheckRequest(const v1::PlanRequest& r) {
  auto positive = [](const char* field, double v) -> absl::Status {
    if (!(std::isfinite(v) && v > 0)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("PlanRequest.%s = %g; must be > 0", field, v));
    }
    return absl::OkStatus();
  };
  if (!r.has_workload() && r.deployment().baseline_id().empty()) {
    return absl::InvalidArgumentError(
        "PlanRequest.workload.input_tokens and PlanRequest.workload.output_tokens are not set; "
        "give the request shape (or start from a baseline, whose measured workload is then "
        "used)");
  }
  if (r.kv_tier_id().empty()) {
    CAPPLAN_RETURN_IF_ERROR(CheckKvRestoreContexts(r.kv_restore_context_tokens(), false, 0,
                                                   "PlanRequest", "the deployment's"));
  }
  if (r.has_duty_factor() && !(r.duty_factor() > 0 && r.duty_factor() <= 1)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("PlanRequest.duty_factor = %g; must be in (0, 1]", r.duty_factor()));
  }
  if (r.has_price_per_gpu_hour()) {
    CAPPLAN_RETURN_IF_ERROR(positive("price_per_gpu_hour", r.price_per_gpu_hour()));
  }
  if (r.has_think_time_seconds() &&
      !(std::isfinite(r.think_time_seconds()) && r.think_time_seconds() >= 0)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "PlanRequest.think_time_seconds = %g; must be >= 0", r.think_time_seconds()));
  }
  switch (r.target_case()) {
    case v1::PlanRequest::kTargetRequestsPerSecond:
      return positive("target_requests_per_second", r.target_requests_per_second());
    case v1::PlanRequest::kTargetConcurrentUsers:
      return positive("target_concurrent_users", r.target_concurrent_users());
    case v1::PlanRequest::kTargetTokensPerMonth:
      return positive("target_tokens_per_month", r.target_tokens_per_month());
    default:
      return absl::OkStatus();
  }
}

// Capacity from the measured sustained runs of the baselines behind the plan.
void AddMeasuredCapacity(const Catalog& catalog, const ResolvedDeployment& r,
                         const v1::Deployment& request_deployment,
                         const model::CapacityPeriod& period, v1::PlanResponse* response) {
  std::vector<const v1::Baseline*> baselines;
  // The baseline the plan starts from counts only while nothing was changed.
  v1::Deployment overrides = request_deployment;
  overrides.clear_baseline_id();
  if (overrides.parallelism().ByteSizeLong() == 0) overrides.clear_parallelism();
  if (overrides.engine().ByteSizeLong() == 0) overrides.clear_engine();
  if (r.baseline != nullptr && overrides.ByteSizeLong() == 0) baselines.push_back(r.baseline);
  for (const v1::Baseline& b : catalog.baselines()) {
    if (&b != r.baseline && r.hardware != nullptr && BaselineMatches(b, r)) baselines.push_back(&b);
  }
  for (const v1::Baseline* b : baselines) {
    double days = period.days;
    for (const v1::CapacityClaim& claim : b->capacity_claims()) {
      if (claim.has_days_per_month()) days = claim.days_per_month();
    }
    model::CapacityPeriod measured_period{days, period.duty_factor};
    for (const v1::SustainedRun& run : b->sustained_runs()) {
      v1::MeasuredCapacity* m = response->add_measured_capacity();
      m->set_baseline_id(b->id());
      m->set_run(run.name());
      if (run.has_arrival_rate_rps() && run.workload().has_input_tokens() &&
          run.workload().has_output_tokens()) {
        auto from_requests = model::MonthlyCapacityFromRequests(
            run.arrival_rate_rps(), run.workload().input_tokens(), run.workload().output_tokens(),
            measured_period);
        if (from_requests.ok()) {
          *m->mutable_from_requests() = ToCapacity(
              *from_requests, measured_period,
              absl::StrFormat("measured %s: %.2f req/s × (%.0f + %.0f) tokens", run.name(),
                              run.arrival_rate_rps(), run.workload().input_tokens(),
                              run.workload().output_tokens()));
        }
      }
      if (run.has_output_tokens_per_second()) {
        auto from_rate = model::MonthlyCapacityFromTokenRates(
            std::nullopt, run.output_tokens_per_second(), measured_period);
        if (from_rate.ok()) {
          v1::Capacity* c = m->mutable_from_output_rate();
          *c = ToCapacity(*from_rate, measured_period,
                          absl::StrFormat("measured %s: %.0f output tok/s", run.name(),
                                          run.output_tokens_per_second()));
          // The run measured output only: no input+output figure to give.
          c->clear_tokens_per_month_total();
          c->clear_tokens_per_second_total();
        }
      }
      m->set_note(absl::StrFormat(
          "%.0f-day month%s, duty factor %.2f; a sustained run's rate extrapolated to a month "
          "is an upper reference, not a committed capacity",
          days, days == 30 ? " (the source report's)" : "", period.duty_factor));
    }
  }
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

// A deployment that does not fit is an answer: its memory plan, no safe
// point, no capacity (and no replicas can reach a target).
absl::StatusOr<v1::PlanResponse> NotFitting(const v1::PlanRequest& request,
                                            const v1::MemoryPlan& memory,
                                            const model::CapacityPeriod& period,
                                            v1::PlanResponse response) {
  if (request.target_case() != v1::PlanRequest::TARGET_NOT_SET) {
    return absl::FailedPreconditionError(
        "PlanRequest: the deployment does not fit, so no number of replicas reaches the "
        "target; PlanMemory shows the account");
  }
  *response.mutable_memory() = memory;
  for (v1::OperatingPoint* p :
       {response.mutable_safe_closed_loop(), response.mutable_safe_open_loop()}) {
    p->set_found(false);
    p->set_binding(v1::LOAD_BINDING_DOES_NOT_FIT);
  }
  for (v1::Capacity* c : {response.mutable_capacity(), response.mutable_capacity_at_peak()}) {
    c->set_at("the deployment does not fit: it serves nothing");
    c->set_days_per_month(period.days);
    c->set_duty_factor(period.duty_factor);
  }
  response.add_notes(absl::StrFormat("does not fit: %s is short by %.2f GiB per GPU; see memory",
                                     ShortName(memory.binding()),
                                     static_cast<double>(memory.shortfall_bytes()) / kGiB));
  return response;
}

// The most a closed loop gets out of the deployment.
absl::StatusOr<double> PeakRequestRate(const v1::LoadCurve& closed) {
  double peak_rps = 0;
  for (const v1::LoadCurvePoint& p : closed.points()) {
    peak_rps = std::max(peak_rps, p.requests_per_second());
  }
  if (!(peak_rps > 0)) {
    return absl::FailedPreconditionError(
        "the load model gives no throughput for this deployment (does it fit? see memory)");
  }
  return peak_rps;
}

// Monthly capacity at the open-loop safe point and, labelled, at peak.
absl::Status AddCapacity(const v1::WorkloadSpec& workload, double peak_rps,
                         const model::CapacityPeriod& period, v1::PlanResponse* response) {
  const double in = workload.input_tokens();
  const double out = workload.output_tokens();
  const v1::OperatingPoint& safe = response->safe_open_loop();
  const double safe_rps = safe.found() ? safe.requests_per_second() : 0.0;
  if (safe_rps > 0) {
    CAPPLAN_ASSIGN_OR_RETURN(model::MonthlyCapacity at_safe,
                             model::MonthlyCapacityFromRequests(safe_rps, in, out, period));
    *response->mutable_capacity() = ToCapacity(
        at_safe, period,
        absl::StrFormat("safe operating point: %.3f req/s of %.0f + %.0f tokens under the SLO "
                        "(binding: %s)",
                        safe_rps, in, out, ShortName(safe.binding())));
  } else {
    // What fails at the lightest load: the SLO, stability, or the 1% cap on
    // requests waiting for a slot (which binds with no SLO at all).
    const std::string why =
        absl::StrFormat("no safe operating point: even the lightest load fails (binding: %s)",
                        ShortName(safe.binding()));
    response->add_notes(why + "; the capacity at the safe point is zero");
    v1::Capacity* c = response->mutable_capacity();
    c->set_at(why);
    c->set_days_per_month(period.days);
    c->set_duty_factor(period.duty_factor);
  }
  CAPPLAN_ASSIGN_OR_RETURN(model::MonthlyCapacity at_peak,
                           model::MonthlyCapacityFromRequests(peak_rps, in, out, period));
  *response->mutable_capacity_at_peak() = ToCapacity(
      at_peak, period,
      absl::StrFormat("PEAK throughput %.3f req/s, ignoring the SLO: not a capacity to promise",
                      peak_rps));
  return absl::OkStatus();
}

}  // namespace

absl::Status AddSizing(const v1::PlanRequest& request, uint32_t gpus_per_replica,
                       v1::PlanResponse* response) {
  std::string target, unit;
  double value = 0, per_replica = 0;
  switch (request.target_case()) {
    case v1::PlanRequest::kTargetRequestsPerSecond:
      value = request.target_requests_per_second();
      target = absl::StrFormat("%g req/s", value);
      unit = "req/s";
      per_replica = response->safe_open_loop().found()
                        ? response->safe_open_loop().requests_per_second()
                        : 0.0;
      break;
    case v1::PlanRequest::kTargetConcurrentUsers:
      value = request.target_concurrent_users();
      target = absl::StrFormat("%d concurrent users", request.target_concurrent_users());
      unit = "users";
      per_replica = response->safe_closed_loop().found()
                        ? response->safe_closed_loop().concurrent_users()
                        : 0;
      break;
    case v1::PlanRequest::kTargetTokensPerMonth:
      value = request.target_tokens_per_month();
      target = absl::StrFormat("%g tokens/month", value);
      unit = "tokens/month";
      per_replica = response->capacity().tokens_per_month_total();
      break;
    default:
      return absl::OkStatus();
  }
  v1::Sizing* s = response->mutable_sizing();
  s->set_target(target);
  s->set_unit(unit);
  s->set_safe_load_per_replica(per_replica);
  if (!(per_replica > 0)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "PlanRequest: no safe operating point under the SLO, so no number of replicas reaches %s",
        target));
  }
  CAPPLAN_ASSIGN_OR_RETURN(int replicas, model::ReplicasForTarget(value, per_replica));
  s->set_replicas(replicas);
  s->set_gpus(static_cast<uint32_t>(replicas) * gpus_per_replica);
  return absl::OkStatus();
}

namespace {

absl::Status AddCost(const v1::PlanRequest& request, uint32_t gpus_per_replica,
                     const model::CapacityPeriod& period, v1::PlanResponse* response) {
  if (!request.has_price_per_gpu_hour() || !(response->capacity().output_tokens_per_month() > 0)) {
    return absl::OkStatus();
  }
  CAPPLAN_ASSIGN_OR_RETURN(
      double cost, model::CostPerMillionOutputTokens(
                       request.price_per_gpu_hour(), static_cast<int>(gpus_per_replica), period,
                       response->capacity().output_tokens_per_month()));
  if (!std::isfinite(cost) || !(cost > 0)) {
    // A price and capacity whose ratio leaves the doubles: no cost to state.
    response->add_notes(absl::StrFormat(
        "no cost per million output tokens: %g per GPU-hour over %g output tokens a month "
        "gives %g",
        request.price_per_gpu_hour(), response->capacity().output_tokens_per_month(), cost));
    return absl::OkStatus();
  }
  response->set_cost_per_million_output_tokens(cost);
  return absl::OkStatus();
}

// The query both curves share: the request's workload (or the baseline's),
// SLO and calibration.
absl::StatusOr<LoadQuery> QueryOf(const v1::PlanRequest& request, const ResolvedDeployment& r,
                                  v1::PlanResponse* response) {
  LoadQuery query;
  query.path = "PlanRequest";
  if (request.has_workload()) {
    query.workload = request.workload();
  } else {
    std::vector<std::string> notes;
    CAPPLAN_ASSIGN_OR_RETURN(query.workload,
                             BaselineWorkload(*r.baseline, "PlanRequest.workload", &notes));
    for (std::string& note : notes) response->add_notes(std::move(note));
  }
  query.slo = request.slo();
  query.calibration.assign(request.calibration().begin(), request.calibration().end());
  query.no_catalog_calibration = request.no_catalog_calibration();
  CAPPLAN_RETURN_IF_ERROR(ValidateLoadQuery(query));
  return query;
}

LoadAxis UsersAxis(const v1::PlanRequest& request) {
  LoadAxis axis;
  axis.closed_loop = ConcurrencyGridAxis(4096);
  if (request.has_think_time_seconds()) {
    axis.closed_loop->set_think_time_seconds(request.think_time_seconds());
  }
  return axis;
}

// The third report's thresholds, from the catalogue baseline that states them.
const v1::Baseline* ScalingMethodBaseline(const Catalog& catalog) {
  for (const v1::Baseline& b : catalog.baselines()) {
    if (b.has_multi_node_method() && b.multi_node_method().min_scaling_efficiency() > 0) return &b;
  }
  return nullptr;
}

double StableOutputRate(const v1::PlanResponse& r) {
  return r.safe_open_loop().found() ? r.safe_open_loop().output_tokens_per_second()
                                    : r.capacity_at_peak().output_tokens_per_second();
}

// One replica over several nodes: X_N ÷ (N·X_1) against the same deployment
// on one node (TP over the node's GPUs), and TTFT p99 against it.
void AddScaling(const Catalog& catalog, const v1::PlanRequest& request, const ResolvedDeployment& r,
                WorkCounters* counters, v1::PlanResponse* response) {
  if (r.hardware == nullptr || r.hardware->max_gpus_per_node() == 0) return;
  const uint32_t per_node = r.hardware->max_gpus_per_node();
  if (r.gpu_count <= per_node || r.parallelism.tp() * r.parallelism.pp() <= per_node) return;
  v1::ScalingAssessment* s = response->mutable_scaling();
  s->set_nodes((r.gpu_count + per_node - 1) / per_node);
  s->set_gpus_per_node(per_node);
  s->set_throughput(StableOutputRate(*response));
  v1::PlanRequest one = request;
  one.clear_target();
  one.clear_kv_tier_id();
  one.clear_kv_restore_context_tokens();
  one.mutable_deployment()->set_gpu_count(per_node);
  one.mutable_deployment()->mutable_parallelism()->set_tp(per_node);
  one.mutable_deployment()->mutable_parallelism()->set_pp(1);
  absl::StatusOr<v1::PlanResponse> single = Plan(catalog, one, counters);
  if (!single.ok() || !single->memory().fits() || !(StableOutputRate(*single) > 0)) {
    s->set_note("the same deployment does not serve on one node, so X_1 is unknown");
    return;
  }
  s->set_throughput_one_node(StableOutputRate(*single));
  const v1::Baseline* method = ScalingMethodBaseline(catalog);
  model::ScalingThresholds t;
  if (method != nullptr) {
    t.min_efficiency = method->multi_node_method().min_scaling_efficiency();
    t.max_ttft_p99_degradation_fraction =
        method->multi_node_method().max_ttft_p99_degradation_fraction();
    s->set_threshold_source(method->id());
  }
  std::optional<double> p99_n, p99_1;
  if (response->safe_open_loop().has_ttft_p99_seconds()) {
    p99_n = response->safe_open_loop().ttft_p99_seconds();
  }
  if (single->safe_open_loop().has_ttft_p99_seconds()) {
    p99_1 = single->safe_open_loop().ttft_p99_seconds();
  }
  if (!p99_n.has_value() || !p99_1.has_value()) p99_n = p99_1 = std::nullopt;
  absl::StatusOr<model::ScalingAssessment> a = model::AssessMultiNodeScaling(
      static_cast<int>(s->nodes()), s->throughput(), s->throughput_one_node(), p99_n, p99_1, t);
  if (!a.ok()) {
    s->set_note(std::string(a.status().message()));
    return;
  }
  s->set_efficiency(a->efficiency);
  s->set_efficiency_below_threshold(a->efficiency_below_threshold);
  if (a->ttft_p99_degradation_fraction.has_value()) {
    s->set_ttft_p99_degradation_fraction(*a->ttft_p99_degradation_fraction);
  }
  s->set_ttft_p99_degraded(a->ttft_p99_degraded);
  s->set_min_efficiency(t.min_efficiency);
  s->set_max_ttft_p99_degradation_fraction(t.max_ttft_p99_degradation_fraction);
  s->set_note(
      "throughputs at the open-loop safe points (the stable working point), TTFT p99 there; "
      "one node = the same deployment with TP over one node's GPUs");
}

}  // namespace

absl::StatusOr<v1::PlanResponse> Plan(const Catalog& catalog, const v1::PlanRequest& request,
                                      WorkCounters* counters, model::Budget* budget) {
  CAPPLAN_RETURN_IF_ERROR(ValidatePlanRequest(request));
  CAPPLAN_RETURN_IF_ERROR(CheckRequest(request));
  CAPPLAN_ASSIGN_OR_RETURN(ResolvedDeployment r,
                           ResolveDeploymentAllowingWithheldHardware(catalog, request.deployment(),
                                                                     "PlanRequest.deployment"));
  v1::PlanResponse response;
  model::CapacityPeriod period;
  if (request.has_duty_factor()) period.duty_factor = request.duty_factor();
  if (!request.kv_tier_id().empty()) {
    CAPPLAN_RETURN_IF_ERROR(CheckKvTierId(catalog, request.kv_tier_id(), "PlanRequest.kv_tier_id"));
  }
  CAPPLAN_ASSIGN_OR_RETURN(LoadQuery query, QueryOf(request, r, &response));
  query.budget = budget;
  CAPPLAN_ASSIGN_OR_RETURN(PreparedDeployment d,
                           PrepareDeployment(catalog, std::move(r), std::nullopt, counters));
  if (request.has_workload()) {
    CAPPLAN_RETURN_IF_ERROR(CheckWorkloadWithinContext(request.workload(), d, query.path));
  }
  if (!d.hardware_withheld && !d.memory.fits())
    return NotFitting(request, d.memory, period, std::move(response));
  CAPPLAN_ASSIGN_OR_RETURN(PreparedLoad load, PrepareLoad(catalog, d, query, counters));
  // Plan reports the safe points, the peak and the capacity, never a whole
  // curve: latency figures past the first unsafe point are not computed.
  CAPPLAN_ASSIGN_OR_RETURN(v1::LoadCurve closed,
                           DrawCurve(load, UsersAxis(request), "", CurveFigures::kToSafePoint));
  *response.mutable_memory() = d.memory;
  *response.mutable_safe_closed_loop() = ToOperatingPoint(closed.safe_operating_point());
  CAPPLAN_ASSIGN_OR_RETURN(double peak_rps, PeakRequestRate(closed));
  LoadAxis rates;
  rates.open_loop = RateGridAxis(peak_rps, 64);  // 1/64 .. 1 of saturation
  CAPPLAN_ASSIGN_OR_RETURN(v1::LoadCurve open,
                           DrawCurve(load, rates, "", CurveFigures::kToSafePoint));
  *response.mutable_safe_open_loop() = ToOperatingPoint(open.safe_operating_point());
  for (const v1::MetricProvenance& m : open.provenance()) *response.add_provenance() = m;
  for (const std::string& note : open.notes()) response.add_notes(note);
  auto corrected = [](const v1::LoadCurve& c) {
    return std::any_of(c.notes().begin(), c.notes().end(), [](const std::string& n) {
      return n.find(kMeasuredCorrectionNote) != std::string::npos;
    });
  };
  if (corrected(closed)) {
    response.add_notes(
        corrected(open)
            ? "the closed-loop safe point, the peak behind the capacity and the rate curve are "
              "corrected by this workload's measured rows"
            : "the closed-loop safe point and the peak behind the capacity are corrected by this "
              "workload's measured rows (closed loops); the rate (open-loop) figures are the "
              "model alone: no open-loop row measured this workload");
  }
  CAPPLAN_RETURN_IF_ERROR(AddCapacity(query.workload, peak_rps, period, &response));
  CAPPLAN_RETURN_IF_ERROR(AddSizing(request, d.resolved.gpu_count, &response));
  CAPPLAN_RETURN_IF_ERROR(AddCost(request, d.resolved.gpu_count, period, &response));
  AddMeasuredCapacity(catalog, d.resolved, request.deployment(), period, &response);
  AddScaling(catalog, request, d.resolved, counters, &response);
  if (!request.kv_tier_id().empty()) {
    CAPPLAN_ASSIGN_OR_RETURN(*response.mutable_kv_tier(), KvTierReportFor(catalog, request, load));
  }
  return response;
}

}  // namespace capplan::service
