#include "service/planner/memory.h"

#include <string>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "service/translate/memory_translation.h"
#include "service/translate/request_validation.h"

namespace capplan::service {
namespace {

void AddMeasured(v1::PlanProvenance* provenance, const std::string& name,
                 const std::string& baseline_id, const std::string& figure, double measured,
                 double predicted) {
  v1::MeasuredFigure* m = provenance->add_measured();
  m->set_name(name);
  m->set_baseline_id(baseline_id);
  m->set_baseline_figure(figure);
  m->set_measured(measured);
  m->set_predicted(predicted);
  m->set_deviation_fraction(measured > 0 ? (predicted - measured) / measured : 0);
}

// Puts the figures of one matching baseline beside the model's; true when
// it had any.
bool AttachBaseline(const v1::Baseline& baseline, bool speculation, bool expert_parallel,
                    v1::MemoryPlan* plan) {
  v1::PlanProvenance* provenance = plan->mutable_provenance();
  bool used = false;
  for (const v1::KvPool& pool : baseline.kv_pools()) {
    if (!pool.has_tokens() || SpeculationOn(pool.speculative()) != speculation ||
        pool.expert_parallel() != expert_parallel) {
      continue;
    }
    // A baseline's pool is what its engine printed: beside the model's
    // printed figure. It then stands for the pool (as a measured figure
    // always has; where the engine prints a derived figure, vLLM 0.21+ on
    // hybrid models, this is an approximation the notes name).
    const uint64_t predicted = plan->has_engine_reported_kv_pool_tokens()
                                   ? plan->engine_reported_kv_pool_tokens()
                                   : plan->kv_pool_tokens();
    AddMeasured(provenance, "kv_pool_tokens", baseline.id(), pool.name(),
                static_cast<double>(pool.tokens()), static_cast<double>(predicted));
    if (plan->has_engine_reported_kv_pool_tokens()) {
      plan->add_notes(absl::StrFormat(
          "baseline %s states the pool the engine printed (%d tokens); this engine prints the "
          "concurrency at max_model_len x max_model_len for hybrid models, which is taken as the "
          "pool",
          baseline.id(), pool.tokens()));
      plan->clear_engine_reported_kv_pool_tokens();
    }
    plan->set_kv_pool_tokens(pool.tokens());
    used = true;
  }
  for (const v1::WeightFootprint& w : baseline.weight_footprints()) {
    if (w.scope() != "per GPU" || w.expert_parallel() != expert_parallel) continue;
    AddMeasured(provenance, "per_gpu.weights_bytes", baseline.id(), w.name(),
                static_cast<double>(w.bytes()),
                static_cast<double>(plan->per_gpu().weights_bytes()));
    used = true;
  }
  return used;
}

}  // namespace

v1::MemoryPlan MemoryPlanWithBaselines(const Catalog& catalog, const ResolvedDeployment& r,
                                       const model::MemoryPlan& m,
                                       std::optional<uint64_t> mean_sequence_tokens) {
  v1::MemoryPlan plan = ToApiMemoryPlan(r, m, mean_sequence_tokens);
  const bool speculation = SpeculationOn(r.engine.speculative());
  const bool expert_parallel = r.parallelism.ep() > 1;
  v1::PlanProvenance* provenance = plan.mutable_provenance();
  for (const v1::Baseline& baseline : catalog.baselines()) {
    if (!BaselineMatches(baseline, r)) continue;
    if (AttachBaseline(baseline, speculation, expert_parallel, &plan)) {
      provenance->add_baseline_ids(baseline.id());
    }
  }
  provenance->set_tier(provenance->measured_size() > 0 ? v1::TIER_MEASURED : v1::TIER_ROOFLINE);
  return plan;
}

absl::StatusOr<v1::MemoryPlan> PlanMemory(const Catalog& catalog,
                                          const v1::PlanMemoryRequest& request,
                                          WorkCounters* counters) {
  CAPPLAN_RETURN_IF_ERROR(ValidatePlanMemoryRequest(request));
  CAPPLAN_ASSIGN_OR_RETURN(
      ResolvedDeployment resolved,
      ResolveDeployment(catalog, request.deployment(), "PlanMemoryRequest.deployment"));
  std::optional<uint64_t> mean;
  if (request.has_mean_sequence_tokens()) mean = request.mean_sequence_tokens();
  CAPPLAN_ASSIGN_OR_RETURN(PreparedDeployment prepared,
                           PrepareDeployment(catalog, std::move(resolved), mean, counters));
  const int64_t context = prepared.model_memory.max_model_len;
  if (mean.has_value() && context > 0 && *mean > static_cast<uint64_t>(context)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "PlanMemoryRequest.mean_sequence_tokens = %d; must not exceed the deployment's "
        "max_model_len = %d (no request is longer)",
        *mean, context));
  }
  return std::move(prepared.memory);
}

}  // namespace capplan::service
