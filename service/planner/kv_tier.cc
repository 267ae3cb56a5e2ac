#include "service/planner/kv_tier.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "model/capacity.h"
#include "model/queueing.h"
#include "service/catalog/suggest.h"

namespace capplan::service {
namespace {

// Default context lengths: the workload's input (the request's, or the
// baseline's it starts from) and these, up to the deployment's
// max_model_len, which is itself one when none of these fits under it.
constexpr uint64_t kDefaultContexts[] = {8192, 32768, 131072};

absl::StatusOr<std::vector<uint64_t>> Contexts(const v1::PlanRequest& request,
                                               double workload_input_tokens,
                                               int64_t max_model_len) {
  CAPPLAN_RETURN_IF_ERROR(CheckKvRestoreContexts(request.kv_restore_context_tokens(), true,
                                                 max_model_len, "PlanRequest", "the deployment's"));
  std::vector<uint64_t> out(request.kv_restore_context_tokens().begin(),
                            request.kv_restore_context_tokens().end());
  if (out.empty()) {
    if (workload_input_tokens >= 1) {
      out.push_back(static_cast<uint64_t>(std::llround(workload_input_tokens)));
    }
    bool longer = false;
    for (uint64_t l : kDefaultContexts) {
      if (max_model_len <= 0 || l <= static_cast<uint64_t>(max_model_len)) {
        out.push_back(l);
        longer = true;
      }
    }
    if (!longer && max_model_len > 0) out.push_back(static_cast<uint64_t>(max_model_len));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// What one GPU reads from the tier at with `readers` GPUs of a node reading
// at once: the tier's share (its read bandwidth, or a narrower node-wide
// path, split between the readers) and, as the link, the GPU's own path
// (path_per_gpu) or that same share.
struct GpuPath {
  model::KvTier tier;
  double link_bytes_per_second = 0;
  double BytesPerSecond() const {
    return std::min(tier.bandwidth_bytes_per_second, link_bytes_per_second);
  }
};
GpuPath PathFor(const v1::KvStorageTierSpec& t, double readers) {
  double shared = t.read_bandwidth_bytes_per_second();
  if (!t.path_per_gpu() && t.path_bandwidth_bytes_per_second() > 0) {
    shared = std::min(shared, t.path_bandwidth_bytes_per_second());
  }
  GpuPath p;
  p.tier.bandwidth_bytes_per_second = shared / readers;
  p.tier.latency_seconds = t.latency_seconds();
  p.link_bytes_per_second =
      t.path_per_gpu() ? t.path_bandwidth_bytes_per_second() : p.tier.bandwidth_bytes_per_second;
  return p;
}

// Peak request rate of the prepared deployment at `w` (μ(S) of the load model).
absl::StatusOr<double> PeakRequestsPerSecond(const PreparedLoad& load, const model::Workload& w) {
  CAPPLAN_ASSIGN_OR_RETURN(model::Slots slots, model::ComputeSlots(load.limits, w));
  CAPPLAN_ASSIGN_OR_RETURN(
      model::LoadDependentServer server,
      model::LoadDependentServer::Create(load.performance_model, w, slots, load.query.budget));
  return server.SaturationRate();
}

}  // namespace

absl::Status CheckKvRestoreContexts(const google::protobuf::RepeatedField<uint64_t>& contexts,
                                    bool tier_named, int64_t max_model_len, absl::string_view path,
                                    absl::string_view whose) {
  if (!tier_named && !contexts.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(path,
                     ".kv_restore_context_tokens is set without kv_tier_id; name the tier "
                     "(data/tiers/) the contexts are restored from"));
  }
  if (contexts.size() > kMaxKvRestoreContexts) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s.kv_restore_context_tokens has %d entries; must have at most %d", path,
                        contexts.size(), kMaxKvRestoreContexts));
  }
  for (int i = 0; i < contexts.size(); ++i) {
    const uint64_t l = contexts[i];
    if (l < 1 || (max_model_len > 0 && l > static_cast<uint64_t>(max_model_len))) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s.kv_restore_context_tokens[%d] = %d; must be in [1, %d] (%s max_model_len)", path, i,
          l, max_model_len, whose));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckKvTierId(const Catalog& catalog, absl::string_view id, absl::string_view path) {
  if (catalog.FindKvTier(id) != nullptr) return absl::OkStatus();
  std::vector<SuggestionCandidate> candidates;
  std::string known;
  for (const v1::KvStorageTierSpec& t : catalog.kv_tiers()) {
    candidates.push_back({t.id(), {t.name()}});
    absl::StrAppend(&known, known.empty() ? "" : ", ", t.id());
  }
  return absl::NotFoundError(absl::StrFormat(
      "%s = \"%s\"; no such tier in the catalogue's tiers/ (%s)%s", path, id.substr(0, 96),
      known.empty() ? "it has none" : known, DidYouMean(SuggestIds(id, candidates))));
}

absl::StatusOr<v1::KvTierReport> KvTierReportFor(const Catalog& catalog,
                                                 const v1::PlanRequest& request,
                                                 const PreparedLoad& load) {
  CAPPLAN_RETURN_IF_ERROR(CheckKvTierId(catalog, request.kv_tier_id(), "PlanRequest.kv_tier_id"));
  const v1::KvStorageTierSpec* tier = catalog.FindKvTier(request.kv_tier_id());
  const PreparedDeployment& d = *load.deployment;
  if (d.hardware_withheld || d.resolved.hardware == nullptr) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "PlanRequest.kv_tier_id = \"%s\": the deployment's card is withheld by its baseline's "
        "source, so there is no card to restore into or to recompute on; name the card "
        "(deployment.hardware_id)",
        tier->id()));
  }
  const model::MemoryPlan& memory = d.model_memory;
  CAPPLAN_ASSIGN_OR_RETURN(std::vector<uint64_t> contexts,
                           Contexts(request, load.workload.input_tokens, memory.max_model_len));
  const double gpus = std::max<uint32_t>(1, d.resolved.gpu_count);
  const uint32_t per_node =
      d.resolved.hardware != nullptr ? d.resolved.hardware->max_gpus_per_node() : 0;
  // Alone: the replica's GPUs on one node read at once; under load, every
  // GPU of a node full of replicas.
  const double alone_readers = per_node > 0 ? std::min<double>(gpus, per_node) : gpus;
  // Whole replicas that fit a node (one, for a replica of a node or more).
  const uint32_t sharing =
      per_node > 0 && gpus < per_node ? per_node / static_cast<uint32_t>(gpus) : 1;
  const double loaded_readers = sharing * alone_readers;
  const GpuPath alone = PathFor(*tier, alone_readers);
  const GpuPath loaded = PathFor(*tier, loaded_readers);

  v1::KvTierReport report;
  report.set_tier_id(tier->id());
  report.set_tier_name(tier->name());
  report.set_effective_bandwidth_bytes_per_second(gpus * alone.BytesPerSecond());
  report.set_latency_seconds(tier->latency_seconds());
  // Sliding-window layers hold (and restore) at most the window's tokens.
  const double window = static_cast<double>(d.resolved.input.arch.sliding_window_tokens);
  auto gpu_bytes = [&memory, window](double tokens) {
    const double windowed = window > 0 ? std::min(tokens, window) : tokens;
    return tokens * (memory.kv_bytes_per_token - memory.window_kv_bytes_per_token) +
           windowed * memory.window_kv_bytes_per_token + memory.state_bytes_per_request;
  };
  // Recompute is the prefill's GPU time: the request's way in and out
  // (request_latency_seconds) is the same for a restored request.
  model::PerformanceModel prefill_only = load.performance_model;
  prefill_only.coefficients.request_latency_seconds = 0;
  for (uint64_t l : contexts) {
    CAPPLAN_ASSIGN_OR_RETURN(double recompute,
                             model::PrefillSeconds(prefill_only, static_cast<double>(l)));
    CAPPLAN_ASSIGN_OR_RETURN(
        model::KvRestoreEstimate e,
        model::EstimateKvRestore(gpu_bytes(l), alone.tier, alone.link_bytes_per_second, recompute));
    v1::KvRestorePoint* p = report.add_points();
    p->set_context_tokens(l);
    p->set_kv_bytes(gpu_bytes(l) * gpus);
    p->set_restore_seconds(e.restore_seconds);
    p->set_recompute_seconds(e.recompute_seconds);
    p->set_speedup(e.speedup);
  }

  // The cold-restore workload: the request's, every input restored.
  const model::Workload& w = load.workload;
  const double out = w.output_tokens;
  CAPPLAN_ASSIGN_OR_RETURN(double recompute_rps, PeakRequestsPerSecond(load, w));
  model::Workload restored = w;
  // All but the last input token come from the tier (the engine computes
  // the last one to produce the first output token).
  if (w.input_tokens > 1) {
    restored.prefix_cache_hit_rate = std::max(w.prefix_cache_hit_rate, 1.0 - 1.0 / w.input_tokens);
  }
  CAPPLAN_ASSIGN_OR_RETURN(double gpu_rps, PeakRequestsPerSecond(load, restored));
  const double tier_rps = loaded.BytesPerSecond() / gpu_bytes(w.input_tokens);
  report.set_recompute_output_tokens_per_second(recompute_rps * out);
  report.set_restore_gpu_output_tokens_per_second(gpu_rps * out);
  report.set_restore_tier_output_tokens_per_second(tier_rps * out);
  report.set_restore_output_tokens_per_second(std::min(gpu_rps, tier_rps) * out);
  report.set_throughput_gain_fraction(std::min(gpu_rps, tier_rps) / recompute_rps - 1.0);
  report.set_tier_bound(tier_rps < gpu_rps);
  report.set_replicas_sharing_tier(sharing);
  report.set_note(absl::StrFormat(
      "restore = KV bytes per GPU x max(1 / per-GPU path, GPUs reading / shared bandwidth) + "
      "latency; alone: %.0f GPU(s) reading; the throughputs assume a node full of replicas "
      "restoring at once (%.0f GPUs sharing the tier's node-wide path and read bandwidth) and a "
      "restore that overlaps the others' decoding; recompute = the load model's prefill on an "
      "idle replica; peak rates, not SLO-bound ones",
      alone_readers, loaded_readers));
  return report;
}

}  // namespace capplan::service
