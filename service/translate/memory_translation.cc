#include "service/translate/memory_translation.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"

namespace capplan::service {
namespace {

// Rounded; saturates instead of wrapping (2^53 bytes is 8 PiB: beyond any
// card, and exact in a double).
uint64_t Bytes(double v) {
  constexpr double kMax = 9007199254740992.0;  // 2^53
  if (!(v > 0)) return 0;
  return static_cast<uint64_t>(std::llround(std::min(v, kMax)));
}

void FillPerGpu(const model::MemoryPlan& m, v1::PerGpuMemory* g) {
  g->set_weights_bytes(Bytes(m.per_gpu.weights_bytes));
  g->set_activation_peak_bytes(Bytes(m.per_gpu.activation_peak_bytes));
  g->set_non_torch_bytes(Bytes(m.per_gpu.non_torch_bytes));
  g->set_cuda_graph_bytes(Bytes(m.per_gpu.cuda_graph_bytes));
  g->set_kv_pool_bytes(Bytes(m.per_gpu.kv_pool_bytes));
  g->set_state_pool_bytes(Bytes(m.per_gpu.state_pool_bytes));
  g->set_used_bytes(Bytes(m.per_gpu.used_bytes));
  g->set_capacity_bytes(Bytes(m.per_gpu.capacity_bytes));
}

void FillProvenance(const ResolvedDeployment& r, v1::PlanProvenance* provenance) {
  provenance->set_engine_preset_id(r.preset.preset->id());
  provenance->set_engine_version_newer_than_presets(r.preset.newer_than_newest);
  provenance->set_engine_version_assumed(r.preset.version_assumed);
  if (!r.preset.note.empty()) provenance->add_notes(r.preset.note);
  if (r.inline_hardware != nullptr) {
    provenance->add_notes(absl::StrCat("hardware '", r.inline_hardware->id(),
                                       "' is the request's own card (not a catalogue entry): its "
                                       "figures are as given"));
  }
}

}  // namespace

v1::MemoryBinding ToProtoMemoryBinding(model::BindingConstraint binding) {
  switch (binding) {
    case model::BindingConstraint::kNone:
      return v1::MEMORY_BINDING_NONE;
    case model::BindingConstraint::kWeights:
      return v1::MEMORY_BINDING_WEIGHTS;
    case model::BindingConstraint::kKvPool:
      return v1::MEMORY_BINDING_KV_POOL;
    case model::BindingConstraint::kStateSlots:
      return v1::MEMORY_BINDING_STATE_SLOTS;
    case model::BindingConstraint::kMaxNumSeqs:
      return v1::MEMORY_BINDING_MAX_NUM_SEQS;
    case model::BindingConstraint::kActivations:
      return v1::MEMORY_BINDING_ACTIVATIONS;
    case model::BindingConstraint::kCudaGraphs:
      return v1::MEMORY_BINDING_CUDA_GRAPHS;
    case model::BindingConstraint::kNonTorch:
      return v1::MEMORY_BINDING_NON_TORCH;
    case model::BindingConstraint::kOtherProcesses:
      return v1::MEMORY_BINDING_OTHER_PROCESSES;
  }
  return v1::MEMORY_BINDING_UNSPECIFIED;
}

v1::MemoryPlan ToApiMemoryPlan(const ResolvedDeployment& r, const model::MemoryPlan& m,
                               std::optional<uint64_t> mean_sequence_tokens) {
  v1::MemoryPlan plan;
  FillPerGpu(m, plan.mutable_per_gpu());
  FillWeightsByComponent(m, plan.mutable_weights_by_component());
  plan.set_kv_bytes_per_token(Bytes(m.kv_bytes_per_token));
  plan.set_kv_pool_tokens(m.kv_pool_tokens > 0 ? m.kv_pool_tokens : 0);
  if (m.reported_kv_pool_tokens > 0 && m.reported_kv_pool_tokens != m.kv_pool_tokens) {
    plan.set_engine_reported_kv_pool_tokens(m.reported_kv_pool_tokens);
  }
  plan.set_state_slots(m.state_slots > 0 ? m.state_slots : 0);
  plan.set_max_concurrency_at_max_model_len(m.max_concurrency_at_max_model_len);
  plan.set_fits(m.fits);
  plan.set_binding(ToProtoMemoryBinding(m.binding_constraint));
  plan.set_shortfall_bytes(Bytes(m.shortfall_bytes));
  for (const std::string& note : m.notes) plan.add_notes(note);

  v1::ResolvedDeployment* d = plan.mutable_deployment();
  FillResolvedDeploymentCommon(r, m, d);
  if (r.hardware != nullptr) d->set_hardware_id(r.hardware->id());
  d->set_memory_fraction(m.memory_fraction);
  d->set_max_model_len(m.max_model_len > 0 ? m.max_model_len : 0);
  d->set_block_size(m.block_size > 0 ? static_cast<uint32_t>(m.block_size) : 0);
  v1::KvCacheDtype kv_dtype = r.engine.kv_cache_dtype();
  if (kv_dtype == v1::KV_CACHE_DTYPE_UNSPECIFIED || kv_dtype == v1::KV_CACHE_DTYPE_AUTO) {
    // auto takes the dtype the checkpoint's quantization config states.
    if (r.quantization.kv_cache_dtype() != v1::KV_CACHE_DTYPE_UNSPECIFIED) {
      kv_dtype = r.quantization.kv_cache_dtype();
    }
  }
  d->set_kv_cache_dtype(kv_dtype);
  d->set_enforce_eager(r.engine.enforce_eager());
  FillProvenance(r, plan.mutable_provenance());
  if (mean_sequence_tokens.has_value() && *mean_sequence_tokens > 0 && plan.kv_pool_tokens() > 0) {
    plan.set_max_concurrency_at_mean_sequence(
        model::MaxConcurrencyAtSequence(m, static_cast<int64_t>(*mean_sequence_tokens)));
  }
  return plan;
}

v1::MemoryPlan WithheldMemoryPlan(const ResolvedDeployment& r, const model::MemoryPlan& m) {
  v1::MemoryPlan plan;
  FillWeightsByComponent(m, plan.mutable_weights_by_component());
  plan.mutable_per_gpu()->set_weights_bytes(Bytes(m.per_gpu.weights_bytes));
  plan.set_kv_bytes_per_token(Bytes(m.kv_bytes_per_token));
  plan.set_fits(true);
  plan.set_binding(v1::MEMORY_BINDING_NONE);
  FillResolvedDeploymentCommon(r, m, plan.mutable_deployment());
  plan.mutable_provenance()->set_tier(v1::TIER_ROOFLINE);
  if (r.baseline != nullptr) plan.mutable_provenance()->add_baseline_ids(r.baseline->id());
  plan.add_notes(
      "the baseline withholds its GPU: weights and KV bytes per token are the model's; the "
      "card's memory, hence the KV pool size, is unknown to the memory model");
  return plan;
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
  out->set_vision_encoder_bytes(of(model::Component::kVisionEncoder));
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
