#include "service/planner/prepared.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "model/step_inputs.h"
#include "service/planner/memory.h"
#include "service/translate/memory_translation.h"
#include "service/translate/model_translation.h"

namespace capplan::service {
namespace {

// A card whose memory is unknown (the baseline withholds it): the memory
// model is asked for weights and KV bytes per token only, with no memory
// limit; the pool comes from the baseline's own statement.
constexpr double kUnboundedMemoryBytes = 1e15;

absl::Status Invalid(const std::string& field, double value, const std::string& rule) {
  return absl::InvalidArgumentError(absl::StrCat(field, " = ", value, "; ", rule));
}

absl::Status CheckPositive(const std::string& field, double value) {
  if (!std::isfinite(value) || !(value > 0)) return Invalid(field, value, "must be > 0");
  return absl::OkStatus();
}

absl::StatusOr<model::MemoryPlan> CountedPlanMemory(const model::MemoryPlanInput& input,
                                                    WorkCounters* counters) {
  if (counters != nullptr) ++counters->memory_plans;
  return model::PlanMemory(input);
}

// The intra-node link a TP group all-reduces over: the card's, or the
// baseline's own machine where it states one.
absl::StatusOr<double> AllReduceBandwidth(const ResolvedDeployment& r, int tp,
                                          std::vector<std::string>* notes) {
  const v1::Hardware& hw = *r.hardware;
  v1::Interconnect link = hw.intra_node();
  if (r.baseline != nullptr && r.baseline->deployment().has_interconnect() &&
      r.baseline->deployment().hardware_id() == hw.id()) {
    const v1::Interconnect& own = r.baseline->deployment().interconnect();
    if (own.kind() != v1::LINK_KIND_UNSPECIFIED) link.set_kind(own.kind());
    if (own.bandwidth_bytes_per_second() > 0) {
      link.set_bandwidth_bytes_per_second(own.bandwidth_bytes_per_second());
    }
    link.set_peer_to_peer(own.peer_to_peer());
  }
  if (!(link.bandwidth_bytes_per_second() > 0)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "hardware '%s' states no intra-node link bandwidth; tp = %d needs it", hw.id(), tp));
  }
  // A TP group wider than a node all-reduces over the network between nodes
  // too; the ring runs at its slowest hop.
  if (hw.max_gpus_per_node() > 0 && static_cast<uint32_t>(tp) > hw.max_gpus_per_node()) {
    const double network = hw.inter_node().bandwidth_bytes_per_second();
    if (!(network > 0)) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "hardware '%s' states no network between nodes; tp = %d spans %d-GPU nodes", hw.id(), tp,
          hw.max_gpus_per_node()));
    }
    notes->push_back(absl::StrFormat(
        "tp = %d spans nodes of %d GPUs: all-reduces cross the %s network at %.0f GB/s per GPU", tp,
        hw.max_gpus_per_node(), hw.inter_node().kind(), network / 1e9));
    return std::min(network, link.bandwidth_bytes_per_second());
  }
  const bool staged = link.kind() == v1::LINK_KIND_PCIE && !link.peer_to_peer();
  if (staged) {
    notes->push_back(
        "PCIe without peer-to-peer: all-reduce traffic staged through host memory (half the "
        "link bandwidth)");
  }
  return model::AllReduceLinkBandwidth(link.bandwidth_bytes_per_second(), staged);
}

// The card's speeds into the step-time inputs (or 1s for a withheld card).
absl::Status SetHardwareSpeeds(const ResolvedDeployment& r, bool withheld, int tp,
                               model::StepTimeInputs* in, std::vector<std::string>* notes) {
  if (withheld) {
    in->memory_bandwidth_bytes_per_second = 1;
    in->peak_flops_per_second = 1;
    if (tp > 1) in->link_bandwidth_bytes_per_second = 1;
    notes->push_back(
        "the baseline withholds its GPU: bandwidths and peak FLOP/s are taken as 1 (unknown "
        "units), so the fitted β's carry the card's own speeds; figures hold for that card only");
    return absl::OkStatus();
  }
  const v1::Hardware& hw = *r.hardware;
  in->memory_bandwidth_bytes_per_second = hw.memory_bandwidth_bytes_per_second();
  const GemmPeak peak = GemmPeakFor(hw, r.input.quantization.format, r.input.arch.native_dtype);
  if (!(in->memory_bandwidth_bytes_per_second > 0) || !(peak.flops_per_second > 0)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "hardware '%s' states no memory bandwidth or 16-bit peak compute; the step-time model "
        "needs both",
        hw.id()));
  }
  in->peak_flops_per_second = peak.flops_per_second;
  notes->push_back(absl::StrFormat("GEMMs counted at the card's dense %s peak", peak.format_name));
  if (tp > 1) {
    CAPPLAN_ASSIGN_OR_RETURN(double bw, AllReduceBandwidth(r, tp, notes));
    in->link_bandwidth_bytes_per_second = bw;
  }
  return absl::OkStatus();
}

// The KV pool a withheld card's baseline states (tokens, or sequences × length).
std::optional<double> StatedPool(const v1::Baseline& b, std::vector<std::string>* notes) {
  for (const v1::KvPool& pool : b.kv_pools()) {
    if (pool.has_tokens() && pool.tokens() > 0) return static_cast<double>(pool.tokens());
    if (pool.has_max_concurrent_sequences() && pool.has_at_sequence_tokens()) {
      const double tokens =
          pool.max_concurrent_sequences() * static_cast<double>(pool.at_sequence_tokens());
      notes->push_back(absl::StrFormat(
          "KV pool taken as %s's %g sequences × %d tokens = %.0f tokens (derived from its "
          "statement '%s')",
          b.id(), pool.max_concurrent_sequences(), pool.at_sequence_tokens(), tokens, pool.name()));
      return tokens;
    }
  }
  return std::nullopt;
}

// The engine's rule for holding KV (its preset; reserve-full without one).
void SetKvAdmission(const v1::EnginePreset* preset, model::SlotLimits* limits) {
  if (preset == nullptr) return;
  switch (preset->kv_admission()) {
    case v1::KV_ADMISSION_RULE_INCREMENTAL:
      limits->kv_admission = model::KvAdmission::kIncremental;
      break;
    case v1::KV_ADMISSION_RULE_RESERVE_REMAINING_SHARE:
      limits->kv_admission = model::KvAdmission::kReserveRemainingShare;
      limits->kv_remaining_share = preset->kv_remaining_share();
      break;
    default:
      limits->kv_admission = model::KvAdmission::kReserveFixed;
      break;
  }
}

// The pool's pages when vLLM's hybrid allocator shares blocks between
// groups of layers (recurrent-state or sliding-window groups): a request then
// takes whole blocks in every group, its state blocks included, which the
// pool's token count alone does not say.
std::optional<model::KvPages> PagesOf(const model::MemoryPlan& m) {
  const model::KvLayout& l = m.layout;
  if (l.groups <= 1 || (l.state_groups == 0 && l.window_groups == 0)) return std::nullopt;
  if (l.state_slots.has_value() || l.window_pool_tokens.has_value()) return std::nullopt;
  return model::KvPages{l.block_size,    l.full_groups,  l.window_groups,
                        l.window_blocks, l.state_groups, l.groups};
}

void SetSlotLimits(const PreparedDeployment& d, DeploymentPerformance* perf,
                   v1::MemoryPlan* memory) {
  const model::MemoryPlan& m = d.model_memory;
  SetKvAdmission(d.resolved.preset.preset, &perf->limits);
  perf->scheduler.max_batched_tokens =
      static_cast<int>(std::max<int64_t>(1, m.max_num_batched_tokens));
  if (d.resolved.preset.preset != nullptr) {
    perf->scheduler.batches_launched_ahead =
        static_cast<int>(d.resolved.preset.preset->batches_launched_ahead());
    perf->scheduler.waves_every_round = d.resolved.preset.preset->waves_every_round();
  }
  if (m.max_num_seqs > 0) perf->limits.max_running_requests = static_cast<int>(m.max_num_seqs);
  if (m.state_slots > 0 && m.state_bytes_per_request > 0) {
    perf->limits.state_slots = static_cast<int>(std::min<int64_t>(m.state_slots, model::kMaxSlots));
  }
  if (!d.hardware_withheld) {
    if (memory->kv_pool_tokens() > 0) {
      perf->limits.kv_pool_tokens = static_cast<double>(memory->kv_pool_tokens());
      // A stated pool is a token count as the engine printed it: no pages.
      if (!d.resolved.stated_kv_pool_tokens.has_value()) perf->limits.kv_pages = PagesOf(m);
      perf->notes.push_back(
          absl::StrCat("KV admission: ", model::KvAdmissionName(perf->limits.kv_admission),
                       d.resolved.preset.preset != nullptr
                           ? absl::StrCat(" (engine preset ", d.resolved.preset.preset->id(), ")")
                           : std::string(" (no engine preset: the conservative rule)")));
    }
    return;
  }
  if (d.resolved.stated_kv_pool_tokens.has_value()) {
    perf->limits.kv_pool_tokens = static_cast<double>(*d.resolved.stated_kv_pool_tokens);
    return;
  }
  if (d.resolved.baseline == nullptr) return;
  perf->limits.kv_pool_tokens = StatedPool(*d.resolved.baseline, &perf->notes);
  if (perf->limits.kv_pool_tokens.has_value()) {
    memory->set_kv_pool_tokens(static_cast<uint64_t>(std::llround(*perf->limits.kv_pool_tokens)));
  }
}

// The deployment's speculation, and what a draft pass of the model's own
// draft layers costs.
void SetSpeculation(const PreparedDeployment& d, const model::MemoryPlanInput& input,
                    WorkCounters* counters, DeploymentPerformance* perf) {
  const model::ModelArchitecture& arch = d.resolved.input.arch;
  const int tp = static_cast<int>(std::max<uint32_t>(1, d.resolved.parallelism.tp()));
  const v1::SpeculativeDecoding& spec = d.resolved.engine.speculative();
  if (SpeculationOn(spec)) {
    model::SpeculativeDecoding s = model::DraftPassFromMemoryPlan(arch, d.model_memory, tp);
    s.draft_tokens = DraftTokens(spec);
    s.acceptance_rate = spec.acceptance_rate();
    perf->speculative = s;
    if (spec.method() == v1::SPECULATIVE_METHOD_MTP) perf->draft = s;
    return;
  }
  if (arch.num_mtp_layers == 0) return;
  // The deployment does not speculate, but the model ships MTP layers: what a
  // draft pass would cost, for fitting measured MTP rows.
  model::MemoryPlanInput with_mtp = input;
  with_mtp.settings.speculative_method = model::SpeculativeMethod::kMtp;
  with_mtp.settings.num_speculative_tokens = 1;
  absl::StatusOr<model::MemoryPlan> mtp_plan = CountedPlanMemory(with_mtp, counters);
  if (mtp_plan.ok()) perf->draft = model::DraftPassFromMemoryPlan(arch, *mtp_plan, tp);
}

absl::StatusOr<DeploymentPerformance> DescribePerformance(PreparedDeployment* d,
                                                          const model::MemoryPlanInput& input,
                                                          WorkCounters* counters) {
  DeploymentPerformance perf;
  const ResolvedDeployment& r = d->resolved;
  const int tp = static_cast<int>(std::max<uint32_t>(1, r.parallelism.tp()));
  const int pp = static_cast<int>(std::max<uint32_t>(1, r.parallelism.pp()));
  perf.inputs = model::StepInputsFromMemoryPlan(r.input.arch, d->model_memory, tp, pp);
  perf.speeds_known = !d->hardware_withheld;
  CAPPLAN_RETURN_IF_ERROR(
      SetHardwareSpeeds(r, d->hardware_withheld, tp, &perf.inputs, &perf.notes));
  SetSlotLimits(*d, &perf, &d->memory);
  SetSpeculation(*d, input, counters, &perf);
  return perf;
}

// The memory model's error under the request's path. When tp was derived
// from gpu_count (none given), an error about tp is the GPU count's: it
// names gpu_count, which the request set, and says what to set.
absl::Status WithRequestPath(const ResolvedDeployment& r, const absl::Status& status) {
  constexpr absl::string_view kTp = "parallelism.tp = ";
  const absl::string_view message = status.message();
  const size_t rule_at = message.find("; ");
  if (!r.tp_from_gpu_count || !absl::StartsWith(message, kTp) || rule_at == message.npos) {
    return absl::Status(status.code(), absl::StrCat(r.path, ".", message));
  }
  const uint32_t tp = r.parallelism.tp();
  return absl::Status(
      status.code(),
      absl::StrFormat("%s.gpu_count = %d; with no tp given the GPUs form tensor-parallel groups "
                      "of gpu_count ÷ pp, and that size, %d, %s: set %s.parallelism.tp (and "
                      "%s.parallelism.pp) so that tp × pp divides gpu_count",
                      r.path, r.gpu_count, tp, message.substr(rule_at + 2), r.path, r.path));
}

}  // namespace

namespace {

// The user's measured pool replaces the memory model's (and what follows
// from it).
// The stated figure is what the engine printed; it stands for the pool (where
// the engine prints a derived figure, vLLM 0.21+ on hybrid models, an
// approximation).
void ApplyStatedPool(const ResolvedDeployment& r, model::MemoryPlan* m) {
  const uint64_t stated = *r.stated_kv_pool_tokens;
  m->notes.push_back(absl::StrFormat(
      "KV pool %d tokens as stated (engine.kv_pool_tokens); the memory model gives %d", stated,
      m->reported_kv_pool_tokens > 0 ? m->reported_kv_pool_tokens : m->kv_pool_tokens));
  m->kv_pool_tokens = static_cast<int64_t>(stated);
  m->reported_kv_pool_tokens = static_cast<int64_t>(stated);
  if (m->max_model_len > 0) {
    m->max_concurrency_at_max_model_len =
        static_cast<double>(stated) / static_cast<double>(m->max_model_len);
  }
}

}  // namespace

absl::StatusOr<PreparedDeployment> PrepareDeployment(const Catalog& catalog,
                                                     ResolvedDeployment resolved,
                                                     std::optional<uint64_t> mean_sequence_tokens,
                                                     WorkCounters* counters,
                                                     const model::MemoryPlan* model_plan) {
  PreparedDeployment d;
  d.resolved = std::move(resolved);
  d.hardware_withheld = d.resolved.hardware == nullptr;
  model::MemoryPlanInput input = d.resolved.input;
  if (d.hardware_withheld) input.hardware.memory_bytes = kUnboundedMemoryBytes;
  absl::StatusOr<model::MemoryPlan> plan = model_plan != nullptr && !d.hardware_withheld
                                               ? absl::StatusOr<model::MemoryPlan>(*model_plan)
                                               : CountedPlanMemory(input, counters);
  if (!plan.ok()) return WithRequestPath(d.resolved, plan.status());
  d.model_memory = *std::move(plan);
  if (d.resolved.stated_kv_pool_tokens.has_value()) ApplyStatedPool(d.resolved, &d.model_memory);
  d.memory = d.hardware_withheld ? WithheldMemoryPlan(d.resolved, d.model_memory)
                                 : MemoryPlanWithBaselines(catalog, d.resolved, d.model_memory,
                                                           mean_sequence_tokens);
  // A stated pool wins over a matching baseline's too.
  if (d.resolved.stated_kv_pool_tokens.has_value()) {
    d.memory.set_kv_pool_tokens(*d.resolved.stated_kv_pool_tokens);
    d.memory.clear_engine_reported_kv_pool_tokens();
  }
  absl::StatusOr<DeploymentPerformance> perf = DescribePerformance(&d, input, counters);
  if (perf.ok()) {
    d.performance = *std::move(perf);
  } else {
    d.performance_status = perf.status();
  }
  return d;
}

absl::StatusOr<BoundInputs> BoundInputsFor(const ResolvedDeployment& r,
                                           const model::MemoryPlanInput& input,
                                           const model::MemoryPlan& plan,
                                           const model::ParameterCounts* counts) {
  if (r.hardware == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(r.path, ": no card to bound on"));
  }
  BoundInputs out;
  const int tp = static_cast<int>(std::max<int64_t>(1, input.parallelism.tp));
  const int pp = static_cast<int>(std::max<int64_t>(1, input.parallelism.pp));
  out.model.inputs = counts != nullptr
                         ? model::StepInputsFromMemoryPlan(input.arch, plan, tp, pp, *counts)
                         : model::StepInputsFromMemoryPlan(input.arch, plan, tp, pp);
  std::vector<std::string> notes;
  CAPPLAN_RETURN_IF_ERROR(SetHardwareSpeeds(r, false, tp, &out.model.inputs, &notes));
  out.model.scheduler.max_batched_tokens =
      static_cast<int>(std::max<int64_t>(1, plan.max_num_batched_tokens));
  if (plan.max_num_seqs > 0) out.limits.max_running_requests = static_cast<int>(plan.max_num_seqs);
  if (plan.state_slots > 0 && plan.state_bytes_per_request > 0) {
    out.limits.state_slots =
        static_cast<int>(std::min<int64_t>(plan.state_slots, model::kMaxSlots));
  }
  if (plan.kv_pool_tokens > 0) {
    out.limits.kv_pool_tokens = static_cast<double>(plan.kv_pool_tokens);
    out.limits.kv_pages = PagesOf(plan);
  }
  return out;
}

// ------------------------------------------------------------------ validation

absl::Status CheckWorkloadWithinContext(const v1::WorkloadSpec& w, const PreparedDeployment& d,
                                        const std::string& path) {
  const int64_t context = d.model_memory.max_model_len;
  const double sequence = w.input_tokens() + w.output_tokens();
  if (context <= 0 || !(sequence > static_cast<double>(context))) return absl::OkStatus();
  const bool prompt_alone = w.input_tokens() > static_cast<double>(context);
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s.workload.%s = %g; input_tokens + output_tokens = %g must not exceed the deployment's "
      "context of %d tokens (max_model_len%s)",
      path, prompt_alone ? "input_tokens" : "output_tokens",
      prompt_alone ? w.input_tokens() : w.output_tokens(), sequence, context,
      d.resolved.engine.max_model_len() > 0 ? "" : ", the model's native context"));
}

absl::Status ValidateLoadQuery(const LoadQuery& q) {
  const std::string& p = q.path;
  const v1::WorkloadSpec& w = q.workload;
  CAPPLAN_RETURN_IF_ERROR(CheckPositive(p + ".workload.input_tokens", w.input_tokens()));
  CAPPLAN_RETURN_IF_ERROR(CheckPositive(p + ".workload.output_tokens", w.output_tokens()));
  if (w.output_tokens() < 1 || w.input_tokens() < 1) {
    return Invalid(
        p + (w.input_tokens() < 1 ? ".workload.input_tokens" : ".workload.output_tokens"),
        w.input_tokens() < 1 ? w.input_tokens() : w.output_tokens(), "must be >= 1 token");
  }
  for (const auto& [name, has, value] :
       {std::make_tuple("input_tokens_cv", w.has_input_tokens_cv(), w.input_tokens_cv()),
        std::make_tuple("output_tokens_cv", w.has_output_tokens_cv(), w.output_tokens_cv())}) {
    if (has && (!std::isfinite(value) || value < 0 || value > 4)) {
      return Invalid(absl::StrCat(p, ".workload.", name), value, "must be in [0, 4]");
    }
  }
  if (w.has_num_prompts()) {
    if (!w.synchronized()) {
      return Invalid(p + ".workload.num_prompts", w.num_prompts(),
                     "describes a synchronized benchmark: set workload.synchronized too");
    }
    if (w.num_prompts() < 1 || w.num_prompts() > model::kMaxBenchmarkPrompts) {
      return absl::InvalidArgumentError(absl::StrCat(p, ".workload.num_prompts = ", w.num_prompts(),
                                                     "; must be in [1, ",
                                                     model::kMaxBenchmarkPrompts, "]"));
    }
  }
  if (w.has_prefix_cache_hit_rate() &&
      (!std::isfinite(w.prefix_cache_hit_rate()) || w.prefix_cache_hit_rate() < 0 ||
       w.prefix_cache_hit_rate() >= 1)) {
    return Invalid(p + ".workload.prefix_cache_hit_rate", w.prefix_cache_hit_rate(),
                   "must be in [0, 1)");
  }
  const v1::Slo& slo = q.slo;
  if (slo.has_ttft_p95_seconds()) {
    CAPPLAN_RETURN_IF_ERROR(CheckPositive(p + ".slo.ttft_p95_seconds", slo.ttft_p95_seconds()));
  }
  if (slo.has_tpot_seconds()) {
    CAPPLAN_RETURN_IF_ERROR(CheckPositive(p + ".slo.tpot_seconds", slo.tpot_seconds()));
  }
  if (slo.has_e2e_p95_seconds()) {
    CAPPLAN_RETURN_IF_ERROR(CheckPositive(p + ".slo.e2e_p95_seconds", slo.e2e_p95_seconds()));
  }
  if (q.operator_concurrency_gate.has_value() && *q.operator_concurrency_gate == 0) {
    return Invalid(p + ".operator_concurrency_gate", 0, "must be >= 1");
  }
  return absl::OkStatus();
}

namespace {

// Each entry in range and greater than the one before it.
template <typename List, typename Check>
absl::Status CheckIncreasing(const std::string& f, const List& values, Check check) {
  if (values.empty()) return absl::InvalidArgumentError(f + " is empty; give at least one");
  if (values.size() > model::kMaxLoadPoints) {
    return absl::InvalidArgumentError(absl::StrFormat("%s has %d entries; must be at most %d", f,
                                                      values.size(), model::kMaxLoadPoints));
  }
  for (int i = 0; i < values.size(); ++i) {
    CAPPLAN_RETURN_IF_ERROR(check(absl::StrCat(f, "[", i, "]"), values[i]));
    if (i > 0 && values[i] <= values[i - 1]) {
      return Invalid(absl::StrCat(f, "[", i, "]"), values[i],
                     absl::StrCat("must be greater than ", f, "[", i - 1, "] = ", values[i - 1],
                                  " (strictly increasing)"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateLoadAxis(const LoadAxis& axis, const std::string& p) {
  if (axis.closed_loop.has_value() == axis.open_loop.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        p, ".load: ", axis.closed_loop.has_value() ? "both" : "neither",
        " of closed_loop and open_loop set; set exactly one (closed_loop.concurrencies or "
        "open_loop.arrival_rates_rps)"));
  }
  if (axis.open_loop.has_value()) {
    return CheckIncreasing(p + ".open_loop.arrival_rates_rps", axis.open_loop->arrival_rates_rps(),
                           CheckPositive);
  }
  CAPPLAN_RETURN_IF_ERROR(CheckIncreasing(
      p + ".closed_loop.concurrencies", axis.closed_loop->concurrencies(),
      [](const std::string& field, uint32_t c) {
        if (c < 1 || c > static_cast<uint32_t>(model::kMaxClosedLoopConcurrency)) {
          return Invalid(field, c,
                         absl::StrCat("must be in [1, ", model::kMaxClosedLoopConcurrency, "]"));
        }
        return absl::OkStatus();
      }));
  if (axis.closed_loop->has_think_time_seconds()) {
    const double z = axis.closed_loop->think_time_seconds();
    if (!std::isfinite(z) || z < 0) {
      return Invalid(p + ".closed_loop.think_time_seconds", z, "must be >= 0");
    }
  }
  return absl::OkStatus();
}

}  // namespace capplan::service
