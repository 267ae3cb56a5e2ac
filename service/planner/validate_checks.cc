#include "service/planner/validate_checks.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "service/planner/findings.h"
#include "service/planner/load.h"
#include "service/planner/prepared.h"
#include "service/translate/enum_names.h"

namespace capplan::service {
namespace {

constexpr char kSafeCheck[] = "expected users within the safe concurrency";
constexpr char kTtftCheck[] = "TTFT p95 within the SLO at the expected load";
constexpr char kTpotCheck[] = "TPOT within the SLO at the expected load";
constexpr char kE2eCheck[] = "end-to-end p95 within the SLO at the expected load";
constexpr char kStableCheck[] = "expected request rate below saturation";

const v1::LoadCurvePoint* PointAt(const v1::LoadCurve& curve, std::optional<uint32_t> users,
                                  std::optional<double> rps) {
  for (const v1::LoadCurvePoint& p : curve.points()) {
    if (users.has_value() && p.has_concurrency() && p.concurrency() == *users) return &p;
    if (rps.has_value() && p.has_arrival_rate_rps() &&
        std::abs(p.arrival_rate_rps() - *rps) <= 1e-12 * std::max(1.0, *rps)) {
      return &p;
    }
  }
  return nullptr;
}

void SloChecks(const v1::Slo& slo, const v1::LoadCurvePoint& p, const std::string& load,
               FindingList* findings) {
  auto check = [&](const char* name, const char* code, const char* field, bool has_slo,
                   double limit, bool has_value, double value, const char* what) {
    if (!has_slo) {
      findings->Skip(name, code, "no SLO given");
      return;
    }
    bool ok = has_value && value <= limit;
    findings->Check(name, code, ok,
                    has_value
                        ? absl::StrFormat("%s %.3f s at %s; SLO %.3f s", what, value, load, limit)
                        : absl::StrFormat("no %s at %s", what, load));
    if (!ok) {
      findings->Add(
          v1::SEVERITY_ERROR, code, field,
          absl::StrFormat("%s at %s is %.3f s, above the SLO of %.3f s", what, load, value, limit),
          {{"predicted_seconds", value}, {"slo_seconds", limit}});
    }
  };
  check(kTtftCheck, kTtftSloMissed, "ValidateRequest.slo.ttft_p95_seconds",
        slo.has_ttft_p95_seconds(), slo.ttft_p95_seconds(), p.has_ttft_p95_seconds(),
        p.ttft_p95_seconds(), "TTFT p95");
  check(kTpotCheck, kTpotSloMissed, "ValidateRequest.slo.tpot_seconds", slo.has_tpot_seconds(),
        slo.tpot_seconds(), p.has_tpot_seconds(), p.tpot_seconds(), "TPOT");
  check(kE2eCheck, kE2eSloMissed, "ValidateRequest.slo.e2e_p95_seconds", slo.has_e2e_p95_seconds(),
        slo.e2e_p95_seconds(), p.has_e2e_p95_seconds(), p.e2e_p95_seconds(), "end-to-end p95");
}

// The tiers of the figures at the expected load alone: a grid's provenance
// covers all its points, and the grid reaches past the load (to find the
// safe concurrency), often past the measured range.
absl::Status AddTiersAt(const PreparedLoad& load, LoadAxis at, std::vector<v1::Tier>* tiers) {
  CAPPLAN_ASSIGN_OR_RETURN(v1::LoadCurve curve, DrawCurve(load, at));
  for (const v1::MetricProvenance& m : curve.provenance()) tiers->push_back(m.tier());
  return absl::OkStatus();
}

void SkipLoadChecks(const std::string& why, FindingList* findings) {
  findings->Skip(kSafeCheck, kConcurrencyAboveSafe, why);
  findings->Skip(kStableCheck, kUnstableLoad, why);
  findings->Skip(kTtftCheck, kTtftSloMissed, why);
  findings->Skip(kTpotCheck, kTpotSloMissed, why);
  findings->Skip(kE2eCheck, kE2eSloMissed, why);
}

// Concurrent users against the safe concurrency, and the SLOs at that load.
absl::Status CheckUsers(const PreparedLoad& load, const v1::ValidateRequest& request,
                        FindingList* findings, v1::ValidateResponse* response,
                        std::vector<v1::Tier>* tiers) {
  const uint32_t users = request.expected_load().concurrent_users();
  LoadAxis axis;
  // Concurrencies 1..2·users, always including `users`.
  axis.closed_loop = ConcurrencyGridAxis(
      std::min<uint32_t>(std::max<uint32_t>(2 * users, 16), model::kMaxClosedLoopConcurrency),
      users);
  CAPPLAN_ASSIGN_OR_RETURN(v1::LoadCurve curve, DrawCurve(load, axis));
  LoadAxis at_users;
  at_users.closed_loop = v1::ClosedLoopAxis();
  at_users.closed_loop->add_concurrencies(users);
  CAPPLAN_RETURN_IF_ERROR(AddTiersAt(load, std::move(at_users), tiers));
  const v1::SafeOperatingPoint& safe = curve.safe_operating_point();
  const uint32_t safe_users = safe.found() && safe.has_concurrency() ? safe.concurrency() : 0;
  const bool within = users <= safe_users;
  findings->Check(kSafeCheck, kConcurrencyAboveSafe, within,
                  absl::StrFormat("%d users expected; safe up to %d (limit: %s)", users, safe_users,
                                  ShortName(safe.binding())));
  if (!within) {
    findings->Add(v1::SEVERITY_ERROR, kConcurrencyAboveSafe,
                  "ValidateRequest.expected_load.concurrent_users",
                  absl::StrFormat("%d concurrent users exceed the safe concurrency of %d (bound "
                                  "by %s; %d slots bound by %s)",
                                  users, safe_users, ShortName(safe.binding()),
                                  curve.slots().slots(), ShortName(curve.slots().bound())),
                  {{"expected_users", static_cast<double>(users)},
                   {"safe_users", static_cast<double>(safe_users)},
                   {"slots", static_cast<double>(curve.slots().slots())}});
  }
  const v1::LoadCurvePoint* p = PointAt(curve, users, std::nullopt);
  if (p != nullptr) SloChecks(request.slo(), *p, absl::StrFormat("%d users", users), findings);
  *response->mutable_load() = std::move(curve);
  return absl::OkStatus();
}

// The request rate against saturation (and the SLOs when no users are given).
absl::Status CheckRate(const PreparedLoad& load, const v1::ValidateRequest& request,
                       FindingList* findings, v1::ValidateResponse* response,
                       std::vector<v1::Tier>* tiers) {
  const double rps = request.expected_load().requests_per_second();
  const bool with_users = request.expected_load().has_concurrent_users();
  LoadAxis axis;
  axis.open_loop = RateGridAxis(rps, 128);  // rps/64 .. 2·rps, including rps
  CAPPLAN_ASSIGN_OR_RETURN(v1::LoadCurve curve, DrawCurve(load, axis));
  LoadAxis at_rate;
  at_rate.open_loop = v1::OpenLoopAxis();
  at_rate.open_loop->add_arrival_rates_rps(rps);
  CAPPLAN_RETURN_IF_ERROR(AddTiersAt(load, std::move(at_rate), tiers));
  const v1::LoadCurvePoint* p = PointAt(curve, std::nullopt, rps);
  const bool stable = p != nullptr && p->stable();
  const double utilization = p != nullptr ? p->utilization() : 0.0;
  findings->Check(kStableCheck, kUnstableLoad, stable,
                  absl::StrFormat("%.3f req/s expected; utilization %.2f", rps, utilization));
  if (!stable) {
    findings->Add(v1::SEVERITY_ERROR, kUnstableLoad,
                  "ValidateRequest.expected_load.requests_per_second",
                  absl::StrFormat("%.3f req/s is at or past the deployment's saturation: the "
                                  "queue grows without bound",
                                  rps),
                  {{"expected_rps", rps}, {"utilization", utilization}});
  } else if (!with_users) {
    SloChecks(request.slo(), *p, absl::StrFormat("%.3f req/s", rps), findings);
  }
  if (!stable && !with_users) {
    findings->Skip(kTtftCheck, kTtftSloMissed, "unstable: no latency figures");
    findings->Skip(kTpotCheck, kTpotSloMissed, "unstable: no latency figures");
    findings->Skip(kE2eCheck, kE2eSloMissed, "unstable: no latency figures");
  }
  if (!with_users) *response->mutable_load() = std::move(curve);
  return absl::OkStatus();
}

}  // namespace

absl::Status AddLoadChecks(const Catalog& catalog, const PreparedDeployment& deployment,
                           const v1::ValidateRequest& request, FindingList* findings,
                           v1::ValidateResponse* response, std::vector<v1::Tier>* tiers,
                           WorkCounters* counters, model::Budget* budget) {
  const v1::ExpectedLoad& load = request.expected_load();
  const bool any_load = load.has_concurrent_users() || load.has_requests_per_second();
  if (!response->memory().fits()) {
    SkipLoadChecks(response->memory().binding() == v1::MEMORY_BINDING_KV_POOL
                       ? "the KV pool cannot hold one request of max_model_len: the engine "
                         "would not start"
                       : "the weights and overheads do not fit the GPU",
                   findings);
    return absl::OkStatus();
  }
  if (!request.has_workload() || !any_load) {
    SkipLoadChecks("no expected load (workload and users or req/s) given", findings);
    return absl::OkStatus();
  }
  const double sequence = request.workload().input_tokens() + request.workload().output_tokens();
  const uint64_t max_len = response->memory().deployment().max_model_len();
  if (max_len > 0 && sequence > static_cast<double>(max_len)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ValidateRequest.workload: input_tokens + output_tokens = %g; must not exceed the "
        "deployment's max_model_len = %d",
        sequence, max_len));
  }
  LoadQuery query;
  query.workload = request.workload();
  query.slo = request.slo();
  query.path = "ValidateRequest";
  query.budget = budget;
  CAPPLAN_ASSIGN_OR_RETURN(PreparedLoad prepared,
                           PrepareLoad(catalog, deployment, query, counters));
  if (load.has_concurrent_users()) {
    CAPPLAN_RETURN_IF_ERROR(CheckUsers(prepared, request, findings, response, tiers));
  } else {
    findings->Skip(kSafeCheck, kConcurrencyAboveSafe, "no expected concurrent users given");
  }
  if (!load.has_requests_per_second()) {
    findings->Skip(kStableCheck, kUnstableLoad, "closed loop (users): always stable");
    return absl::OkStatus();
  }
  return CheckRate(prepared, request, findings, response, tiers);
}

}  // namespace capplan::service
