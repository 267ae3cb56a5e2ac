#include "service/planner/memory_calibration.h"

#include <cmath>
#include <optional>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "service/translate/deployment_resolver.h"
#include "service/translate/model_translation.h"

namespace capplan::service {
namespace {

bool PerGpu(const std::string& scope) { return absl::StrContains(scope, "per GPU"); }

bool SpeculationMatches(const v1::KvPool& pool, const v1::DeploymentConfig& d) {
  const v1::SpeculativeMethod pool_method = pool.speculative().method();
  const v1::SpeculativeMethod method = d.engine().speculative().method();
  auto none = [](v1::SpeculativeMethod m) {
    return m == v1::SPECULATIVE_METHOD_UNSPECIFIED || m == v1::SPECULATIVE_METHOD_NONE;
  };
  if (pool_method == v1::SPECULATIVE_METHOD_UNSPECIFIED) return true;
  return none(pool_method) ? none(method) : pool_method == method;
}

// The pool's tokens: stated, or (a plain paged pool, one group) its
// concurrency × length.
std::optional<int64_t> PoolTokens(const v1::KvPool& pool, const model::MemoryPlanInput& input) {
  if (pool.has_tokens() && pool.tokens() > 0) return static_cast<int64_t>(pool.tokens());
  if (!pool.has_max_concurrent_sequences() || !pool.has_at_sequence_tokens()) return std::nullopt;
  for (const model::LayerSpec& l : input.arch.layers) {
    if (l.attention != model::AttentionKind::kFull && l.attention != model::AttentionKind::kMla) {
      return std::nullopt;
    }
  }
  return static_cast<int64_t>(std::llround(pool.max_concurrent_sequences() *
                                           static_cast<double>(pool.at_sequence_tokens())));
}

std::optional<double> StatedWeights(const v1::Baseline& b) {
  for (const v1::WeightFootprint& w : b.weight_footprints()) {
    if (PerGpu(w.scope()) && w.bytes() > 0) return static_cast<double>(w.bytes());
  }
  for (const v1::MemoryAccount& a : b.memory_accounts()) {
    if (PerGpu(a.scope()) && a.has_weights_bytes()) return static_cast<double>(a.weights_bytes());
  }
  return std::nullopt;
}

// An account whose scope names a non-driver worker ("per GPU, non-driver
// worker"): its activation peak has no sampler (vLLM V0 samples on rank 0
// only).
bool ItemisedOnWorker(const v1::Baseline& b) {
  for (const v1::MemoryAccount& a : b.memory_accounts()) {
    if (PerGpu(a.scope()) && absl::StrContains(a.scope(), "non-driver worker")) return true;
  }
  return false;
}

std::optional<double> StatedAccountField(const v1::Baseline& b, bool activation) {
  for (const v1::MemoryAccount& a : b.memory_accounts()) {
    if (!PerGpu(a.scope())) continue;
    if (activation && a.has_activation_peak_bytes()) {
      return static_cast<double>(a.activation_peak_bytes());
    }
    if (!activation && a.has_non_torch_bytes()) return static_cast<double>(a.non_torch_bytes());
  }
  return std::nullopt;
}

std::optional<double> StatedGraphs(const v1::Baseline& b) {
  for (const v1::MemoryAccount& a : b.memory_accounts()) {
    if (PerGpu(a.scope()) && a.has_cuda_graph_bytes()) {
      return static_cast<double>(a.cuda_graph_bytes());
    }
  }
  return std::nullopt;
}

}  // namespace

absl::StatusOr<StartupLogCorpus> StartupLogsOf(const Catalog& catalog) {
  StartupLogCorpus out;
  for (const v1::Baseline& b : catalog.baselines()) {
    const v1::DeploymentConfig& d = b.deployment();
    const v1::KvPool* pool = nullptr;
    for (const v1::KvPool& p : b.kv_pools()) {
      if (SpeculationMatches(p, d) && (p.has_tokens() || p.has_max_concurrent_sequences())) {
        pool = &p;
        break;
      }
    }
    if (pool == nullptr) continue;
    auto exclude = [&](const std::string& why) { out.excluded.emplace_back(b.id(), why); };
    if (d.hardware_id().empty()) {
      exclude("the source withholds the GPU");
      continue;
    }
    if (d.engine().kind() == v1::ENGINE_KIND_UNSPECIFIED) {
      exclude("the source does not state the engine");
      continue;
    }
    v1::Deployment request;
    request.set_baseline_id(b.id());
    absl::StatusOr<ResolvedDeployment> r = ResolveDeployment(catalog, request, b.id());
    if (!r.ok()) {
      exclude(absl::StrCat("the deployment does not resolve: ", r.status().message()));
      continue;
    }
    const std::optional<int64_t> tokens = PoolTokens(*pool, r->input);
    if (!tokens.has_value()) {
      exclude("the pool states a concurrency on a layout that does not give its tokens");
      continue;
    }
    model::StartupLog log;
    log.id = b.id();
    log.preset_id = r->preset.preset->id();
    log.input = r->input;
    log.kv_pool_tokens = *tokens;
    log.weights_bytes = StatedWeights(b);
    log.cuda_graph_bytes = StatedGraphs(b);
    log.activation_bytes = StatedAccountField(b, /*activation=*/true);
    log.non_torch_bytes = StatedAccountField(b, /*activation=*/false);
    log.itemised_on_worker = ItemisedOnWorker(b);
    out.logs.push_back(std::move(log));
  }
  return out;
}

absl::StatusOr<std::map<std::string, model::EngineBehaviour>> PresetBehaviours(
    const Catalog& catalog) {
  std::map<std::string, model::EngineBehaviour> out;
  for (const v1::EnginePreset& p : catalog.engine_presets()) {
    absl::StatusOr<model::EngineBehaviour> e = ToEngineBehaviour(p);
    if (!e.ok()) return e.status();
    out[p.id()] = *std::move(e);
  }
  return out;
}

}  // namespace capplan::service
