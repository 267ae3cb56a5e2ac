#include "service/planner/memory.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace capplan::service {
namespace {

uint64_t Bytes(double v) { return v > 0 ? static_cast<uint64_t>(std::llround(v)) : 0; }


void AddMeasured(v1::PlanProvenance* provenance, const std::string& name,
                 const std::string& baseline_id, const std::string& figure,
                 double measured, double predicted) {
  v1::MeasuredFigure* m = provenance->add_measured();
  m->set_name(name);
  m->set_baseline_id(baseline_id);
  m->set_baseline_figure(figure);
  m->set_measured(measured);
  m->set_predicted(predicted);
  m->set_deviation_fraction(measured > 0 ? (predicted - measured) / measured : 0);
}

// Puts the figures of matching baselines beside the model's.
void AttachBaselines(const Catalog& catalog, const ResolvedDeployment& r,
                     v1::MemoryPlan* plan) {
  v1::PlanProvenance* provenance = plan->mutable_provenance();
  bool speculation = SpeculationOn(r.engine.speculative());
  bool expert_parallel = r.parallelism.ep() > 1;
  for (const v1::Baseline& baseline : catalog.baselines()) {
    if (!BaselineMatches(baseline, r)) continue;
    bool used = false;
    for (const v1::KvPool& pool : baseline.kv_pools()) {
      if (!pool.has_tokens() || SpeculationOn(pool.speculative()) != speculation ||
          pool.expert_parallel() != expert_parallel) {
        continue;
      }
      AddMeasured(provenance, "kv_pool_tokens", baseline.id(), pool.name(),
                  static_cast<double>(pool.tokens()),
                  static_cast<double>(plan->kv_pool_tokens()));
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
    if (used) provenance->add_baseline_ids(baseline.id());
  }
  provenance->set_tier(provenance->measured_size() > 0 ? v1::TIER_MEASURED
                                                       : v1::TIER_ROOFLINE);
}

}  // namespace

absl::StatusOr<v1::MemoryPlan> PlanMemoryFor(
    const Catalog& catalog, const ResolvedDeployment& r,
    std::optional<uint64_t> mean_sequence_tokens) {
  CAPPLAN_ASSIGN_OR_RETURN(model::MemoryPlan m, model::PlanMemory(r.input));
  v1::MemoryPlan plan;
  v1::PerGpuMemory* g = plan.mutable_per_gpu();
  g->set_weights_bytes(Bytes(m.per_gpu.weights_bytes));
  g->set_activation_peak_bytes(Bytes(m.per_gpu.activation_peak_bytes));
  g->set_non_torch_bytes(Bytes(m.per_gpu.non_torch_bytes));
  g->set_cuda_graph_bytes(Bytes(m.per_gpu.cuda_graph_bytes));
  g->set_kv_pool_bytes(Bytes(m.per_gpu.kv_pool_bytes));
  g->set_state_pool_bytes(Bytes(m.per_gpu.state_pool_bytes));
  g->set_used_bytes(Bytes(m.per_gpu.used_bytes));
  g->set_capacity_bytes(Bytes(m.per_gpu.capacity_bytes));
  FillWeightsByComponent(m, plan.mutable_weights_by_component());
  plan.set_kv_bytes_per_token(Bytes(m.kv_bytes_per_token));
  plan.set_kv_pool_tokens(m.kv_pool_tokens > 0 ? m.kv_pool_tokens : 0);
  plan.set_state_slots(m.state_slots > 0 ? m.state_slots : 0);
  plan.set_max_concurrency_at_max_model_len(m.max_concurrency_at_max_model_len);
  plan.set_fits(m.fits);
  plan.set_binding_constraint(absl::AsciiStrToUpper(model::BindingConstraintName(m.binding_constraint)));
  plan.set_shortfall_bytes(Bytes(m.shortfall_bytes));
  for (const std::string& note : m.notes) plan.add_notes(note);

  v1::ResolvedDeployment* d = plan.mutable_deployment();
  FillResolvedDeploymentCommon(r, m, d);
  d->set_hardware_id(r.hardware->id());
  d->set_memory_fraction(m.memory_fraction);
  d->set_max_model_len(m.max_model_len > 0 ? m.max_model_len : 0);
  d->set_block_size(m.block_size > 0 ? static_cast<uint32_t>(m.block_size) : 0);
  d->set_kv_cache_dtype(r.engine.kv_cache_dtype());
  d->set_enforce_eager(r.engine.enforce_eager());

  v1::PlanProvenance* provenance = plan.mutable_provenance();
  provenance->set_engine_preset_id(r.preset.preset->id());
  provenance->set_engine_version_newer_than_presets(r.preset.newer_than_newest);
  provenance->set_engine_version_assumed(r.preset.version_assumed);
  if (!r.preset.note.empty()) provenance->add_notes(r.preset.note);
  AttachBaselines(catalog, r, &plan);

  if (mean_sequence_tokens.has_value() && *mean_sequence_tokens > 0 &&
      plan.kv_pool_tokens() > 0) {
    double slots = model::MaxConcurrencyAt(m.layout, static_cast<int64_t>(*mean_sequence_tokens));
    if (m.max_num_seqs > 0) slots = std::min(slots, static_cast<double>(m.max_num_seqs));
    if (plan.state_slots() > 0) slots = std::min(slots, static_cast<double>(plan.state_slots()));
    plan.set_max_concurrency_at_mean_sequence(slots);
  }
  return plan;
}

absl::StatusOr<v1::MemoryPlan> PlanMemory(const Catalog& catalog,
                                          const v1::PlanMemoryRequest& request) {
  if (request.has_mean_sequence_tokens() && request.mean_sequence_tokens() == 0) {
    return absl::InvalidArgumentError(
        "PlanMemoryRequest.mean_sequence_tokens = 0; must be > 0");
  }
  CAPPLAN_ASSIGN_OR_RETURN(
      ResolvedDeployment resolved,
      ResolveDeployment(catalog, request.deployment(), "PlanMemoryRequest.deployment"));
  std::optional<uint64_t> mean;
  if (request.has_mean_sequence_tokens()) mean = request.mean_sequence_tokens();
  return PlanMemoryFor(catalog, resolved, mean);
}

void FillWeightsByComponent(const model::MemoryPlan& plan, v1::WeightsByComponent* out) {
  auto of = [&](model::Component c) {
    return Bytes(plan.weights_by_component_bytes[static_cast<int>(c)]);
  };
  out->set_attention_bytes(of(model::Component::kAttention));
  out->set_dense_mlp_bytes(of(model::Component::kDenseMlp));
  out->set_experts_bytes(of(model::Component::kRoutedExperts));
  out->set_shared_experts_bytes(of(model::Component::kSharedExperts));
  out->set_router_bytes(of(model::Component::kRouter));
  out->set_embeddings_bytes(of(model::Component::kEmbeddings));
  out->set_lm_head_bytes(of(model::Component::kLmHead));
  out->set_norms_bytes(of(model::Component::kNorms));
  out->set_draft_bytes(of(model::Component::kDraft));
  out->set_linear_attention_bytes(of(model::Component::kLinearAttention));
}

void FillResolvedDeploymentCommon(const ResolvedDeployment& r, const model::MemoryPlan& m,
                                  v1::ResolvedDeployment* d) {
  d->set_model_id(r.model_id);
  d->set_gpu_count(r.gpu_count);
  d->set_tp(r.parallelism.tp());
  d->set_pp(r.parallelism.pp());
  d->set_ep(r.parallelism.ep());
  d->set_engine(r.engine.kind());
  d->set_engine_version(r.engine.version());
  d->set_max_num_batched_tokens(m.max_num_batched_tokens > 0 ? m.max_num_batched_tokens : 0);
  d->set_max_num_seqs(m.max_num_seqs > 0 ? static_cast<uint32_t>(m.max_num_seqs) : 0);
  d->set_weight_format(r.quantization.format());
  d->set_speculative_method(r.engine.speculative().method());
  d->set_num_speculative_tokens(r.engine.speculative().num_speculative_tokens());
}

}  // namespace capplan::service
