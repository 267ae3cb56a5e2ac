// The fitting half of prepared.h: which rows a prediction is fitted on and
// the fit itself (model::FitStepTime).
#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "service/planner/prepared.h"
#include "service/planner/priors.h"

namespace capplan::service {
namespace {

// The deployment's slot limits behind `gate`; with no limit at all (a
// withheld card without a stated pool), the model's largest slot count.
model::SlotLimits LimitsWithGate(const DeploymentPerformance& perf, std::optional<int> gate) {
  model::SlotLimits limits = perf.limits;
  limits.operator_concurrency_gate = gate;
  if (!limits.max_running_requests.has_value() && !gate.has_value() &&
      !limits.kv_pool_tokens.has_value() && !limits.state_slots.has_value()) {
    limits.max_running_requests = model::kMaxSlots;
  }
  return limits;
}

bool OwnBaseline(const v1::Baseline& b, const ResolvedDeployment& r) {
  if (r.hardware == nullptr) return r.baseline == &b;
  return BaselineMatches(b, r);
}

void AddUnique(std::vector<std::string>* ids, const std::string& id) {
  if (!id.empty() && std::find(ids->begin(), ids->end(), id) == ids->end()) ids->push_back(id);
}

// The rows of this configuration's baselines; the gate the fit runs behind
// becomes a baseline's own unless the query sets one.
absl::StatusOr<std::vector<SourcedPoint>> OwnPoints(const Catalog& catalog,
                                                    const ResolvedDeployment& r, const LoadQuery& q,
                                                    FitSource* src, std::optional<int>* fit_gate,
                                                    std::vector<std::string>* notes) {
  std::vector<SourcedPoint> points;
  // A deployment named by its baseline (and not changed away from it) is
  // fitted on that baseline's rows: another run of the same configuration may
  // have measured other conditions (a CC-mode card, another driver), and it
  // already speaks through the class prior.
  const bool named = r.baseline != nullptr && OwnBaseline(*r.baseline, r);
  for (const v1::Baseline& b : catalog.baselines()) {
    if (named ? &b != r.baseline : !OwnBaseline(b, r)) continue;
    CAPPLAN_ASSIGN_OR_RETURN(std::vector<SourcedPoint> ps, BaselinePoints(b, true, notes));
    if (ps.empty()) continue;
    AddUnique(&src->baseline_ids, b.id());
    if (BaselineGate(b).has_value()) src->rows_gate = BaselineGate(b);
    if (!q.operator_concurrency_gate.has_value() && BaselineGate(b).has_value()) {
      *fit_gate = BaselineGate(b);
    }
    for (SourcedPoint& p : ps) points.push_back(std::move(p));
  }
  return points;
}

// The prior of the deployment's hardware class (absent for a withheld card or
// a catalogue without priors).
// A class prior learned only on the other model family (dense / mixture of
// experts) gives way to the level above (priors.h LearnedOnFamily).
std::optional<v1::EfficiencyPrior> PriorOf(const Catalog& catalog, const PreparedDeployment& d,
                                           std::vector<std::string>* notes) {
  if (d.hardware_withheld || d.resolved.hardware == nullptr) return std::nullopt;
  const v1::Parallelism& p = d.resolved.parallelism;
  const HardwareClassKey key = ClassKeyOf(
      *d.resolved.hardware, std::max<uint32_t>(1, p.tp()) * std::max<uint32_t>(1, p.pp()),
      d.resolved.engine.kind());
  const bool moe = d.resolved.model.moe().num_routed_experts() > 0;
  std::vector<std::string> passed;
  std::optional<v1::EfficiencyPrior> prior =
      ClosestPrior(catalog.priors(), key, [&](const v1::EfficiencyPrior& p) {
        const bool same = LearnedOnFamily(catalog, p, moe);
        if (!same) passed.push_back(p.id());
        return same;
      });
  if (notes != nullptr && prior.has_value() && !passed.empty()) {
    notes->push_back(absl::StrFormat(
        "the hardware-class prior '%s' was learned only on %s models: its per-token "
        "efficiencies are not lent to a %s model; '%s' instead",
        absl::StrJoin(passed, "', '"), moe ? "dense" : "mixture-of-experts",
        moe ? "mixture-of-experts" : "dense", prior->id()));
  }
  return prior;
}

// The global prior: the roofline with the corpus' typical efficiencies.
std::optional<v1::EfficiencyPrior> GlobalPrior(const Catalog& catalog,
                                               const PreparedDeployment& d) {
  if (d.hardware_withheld) return std::nullopt;
  for (const v1::EfficiencyPrior& p : catalog.priors()) {
    if (p.level() == v1::PRIOR_LEVEL_GLOBAL) return p;
  }
  return std::nullopt;
}

// No rows of this configuration: the prior's coefficients as they are.
// `roofline`: the global prior under no_catalog_calibration, which names no
// baseline (no measured configuration stands behind the answer).
void FromPrior(const v1::EfficiencyPrior& prior, bool roofline, FitSource* src,
               std::vector<std::string>* notes) {
  model::StepTimeFit fit;
  fit.calibration.coefficients = CoefficientsOf(prior);
  fit.calibration.used_prior = true;
  if (prior.leave_one_out_relative_error() > 0) {
    fit.calibration.relative_error_band = prior.leave_one_out_relative_error();
  }
  src->fit = fit;
  src->base_tier = roofline ? model::Tier::kRoofline : model::Tier::kExtrapolated;
  if (!roofline) {
    for (const std::string& id : prior.baseline_ids()) src->baseline_ids.push_back(id);
  }
  src->prior_id = prior.id();
  notes->push_back(absl::StrFormat(
      "%s: step-time efficiencies of the %s prior '%s' (learned from %d baselines; %s)",
      roofline ? "the roofline with the corpus' typical efficiencies (no catalogue rows asked "
                 "for)"
               : "no baseline measured this configuration",
      prior.level() == v1::PRIOR_LEVEL_GLOBAL  ? "global"
      : prior.level() == v1::PRIOR_LEVEL_CLASS ? "hardware-class"
                                               : "architecture",
      prior.id(), prior.baseline_ids_size(),
      prior.leave_one_out_relative_error() > 0
          ? absl::StrFormat("%.0f%% relative error on baselines it was fitted without",
                            100 * prior.leave_one_out_relative_error())
          : "a single baseline: no held-out error"));
}

}  // namespace

std::optional<int> BaselineGate(const v1::Baseline& b) {
  if (!b.deployment().has_concurrency_gate()) return std::nullopt;
  return static_cast<int>(b.deployment().concurrency_gate());
}

model::SpeculativeDecoding SpeculationFor(const DeploymentPerformance& perf, int draft_tokens,
                                          double acceptance_rate) {
  model::SpeculativeDecoding s;
  if (perf.speculative.has_value()) {
    s = *perf.speculative;
  } else if (perf.draft.has_value()) {
    s = *perf.draft;
  }
  s.draft_tokens = draft_tokens;
  s.acceptance_rate = std::clamp(acceptance_rate, 0.0, 1.0);
  return s;
}

absl::StatusOr<model::CalibrationContext> CalibrationContextFor(const DeploymentPerformance& perf,
                                                                const model::Workload& workload,
                                                                std::optional<int> gate) {
  CAPPLAN_ASSIGN_OR_RETURN(model::Slots slots,
                           model::ComputeSlots(LimitsWithGate(perf, gate), workload));
  model::CalibrationContext ctx;
  ctx.inputs = perf.inputs;
  ctx.scheduler = perf.scheduler;
  ctx.slots = slots.slots;
  ctx.speeds_known = perf.speeds_known;
  return ctx;
}

model::SlotLimits SlotLimitsFor(const DeploymentPerformance& perf, std::optional<int> gate) {
  return LimitsWithGate(perf, gate);
}

absl::StatusOr<model::StepTimeFit> FitOnPoints(
    const model::CalibrationContext& ctx, const DeploymentPerformance& perf,
    const std::vector<SourcedPoint>& points, WorkCounters* counters,
    const std::optional<model::CoefficientPrior>& prior) {
  std::vector<model::MeasuredPoint> plain, spec;
  for (const SourcedPoint& sp : points) {
    if (!sp.speculative) {
      plain.push_back(sp.point);
      continue;
    }
    model::MeasuredPoint p = sp.point;
    p.speculative = SpeculationFor(perf, sp.draft_tokens, 0.0);
    spec.push_back(std::move(p));
  }
  if (counters != nullptr) ++counters->fits;
  const bool can_model = perf.speculative.has_value() || perf.draft.has_value();
  return model::FitStepTime(ctx, std::move(plain), std::move(spec), can_model, prior);
}

absl::StatusOr<BaselineFitSetup> PrepareBaselineFit(const Catalog& catalog, const v1::Baseline& b,
                                                    bool allow_withheld_hardware, size_t min_rows,
                                                    absl::string_view purpose,
                                                    WorkCounters* counters) {
  v1::Deployment d;
  d.set_baseline_id(b.id());
  CAPPLAN_ASSIGN_OR_RETURN(ResolvedDeployment r,
                           allow_withheld_hardware
                               ? ResolveDeploymentAllowingWithheldHardware(catalog, d, "baseline")
                               : ResolveDeployment(catalog, d, "baseline"));
  BaselineFitSetup setup;
  CAPPLAN_ASSIGN_OR_RETURN(setup.deployment,
                           PrepareDeployment(catalog, std::move(r), std::nullopt, counters));
  CAPPLAN_RETURN_IF_ERROR(setup.deployment.performance_status);
  std::vector<std::string> ignored;
  CAPPLAN_ASSIGN_OR_RETURN(setup.points, BaselinePoints(b, true, &ignored));
  if (setup.points.size() < std::max<size_t>(min_rows, 1)) {
    return absl::FailedPreconditionError(
        absl::StrFormat("baseline '%s' has %d measured rows; %s needs at least %d", b.id(),
                        setup.points.size(), std::string(purpose), min_rows));
  }
  CAPPLAN_ASSIGN_OR_RETURN(
      setup.context, CalibrationContextFor(setup.deployment.performance,
                                           setup.points.front().point.workload, BaselineGate(b)));
  return setup;
}

absl::StatusOr<FitSource> ChooseFit(const Catalog& catalog, const PreparedDeployment& d,
                                    const LoadQuery& q, std::optional<int> gate,
                                    std::vector<std::string>* notes, WorkCounters* counters) {
  FitSource src;
  std::optional<int> fit_gate = gate;
  std::vector<SourcedPoint> points;
  if (!q.no_catalog_calibration) {
    CAPPLAN_ASSIGN_OR_RETURN(points, OwnPoints(catalog, d.resolved, q, &src, &fit_gate, notes));
    src.own_points = points;
  }
  CAPPLAN_ASSIGN_OR_RETURN(src.inline_points, InlinePoints(q.calibration, q.workload, q.path));
  src.inline_calibration = !src.inline_points.empty();
  points.insert(points.end(), src.inline_points.begin(), src.inline_points.end());
  if (!points.empty()) {
    CAPPLAN_ASSIGN_OR_RETURN(
        model::CalibrationContext ctx,
        CalibrationContextFor(d.performance, points.front().point.workload, fit_gate));
    const std::optional<v1::EfficiencyPrior> prior = PriorOf(catalog, d, notes);
    std::optional<model::CoefficientPrior> shrink;
    if (prior.has_value()) {
      shrink = AsCoefficientPrior(*prior, kOwnRowsPriorWeight);
      src.prior_id = prior->id();
    }
    absl::StatusOr<model::StepTimeFit> fit =
        FitOnPoints(ctx, d.performance, points, counters, shrink);
    if (!fit.ok()) {
      return absl::Status(fit.status().code(),
                          absl::StrCat("fitting the step-time model on ", points.size(),
                                       " measured rows: ", fit.status().message()));
    }
    src.fit = *std::move(fit);
    src.base_tier = model::Tier::kCalibrated;
    return src;
  }
  const std::optional<v1::EfficiencyPrior> prior =
      q.no_catalog_calibration ? GlobalPrior(catalog, d) : PriorOf(catalog, d, notes);
  if (prior.has_value()) {
    FromPrior(*prior, q.no_catalog_calibration, &src, notes);
    return src;
  }
  notes->push_back(
      "no measured rows apply: roofline step times (α = 0, every β = 1), an optimistic bound");
  return src;
}

}  // namespace capplan::service
