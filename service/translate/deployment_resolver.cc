#include "service/translate/deployment_resolver.h"

#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "service/catalog/catalog_validator.h"
#include "service/catalog/entity_checks.h"
#include "service/catalog/suggest.h"
#include "service/translate/hf_config.h"

namespace capplan::service {
namespace {

absl::Status Invalid(const std::string& path, const std::string& rest) {
  return absl::InvalidArgumentError(absl::StrCat(path, rest));
}

}  // namespace

namespace {

bool IsFraction(double v) { return std::isfinite(v) && v > 0 && v <= 1; }

// Applies the request's engine overrides to the merged configuration.
absl::Status MergeEngine(const v1::EngineSettings& in, const std::string& path,
                         v1::EngineConfig* out) {
  if (in.kind() != v1::ENGINE_KIND_UNSPECIFIED) out->set_kind(in.kind());
  if (!in.version().empty()) out->set_version(in.version());
  if (in.has_gpu_memory_utilization()) {
    if (!IsFraction(in.gpu_memory_utilization())) {
      return Invalid(path, absl::StrFormat(".gpu_memory_utilization = %g; must be in (0, 1]",
                                           in.gpu_memory_utilization()));
    }
    out->set_gpu_memory_utilization(in.gpu_memory_utilization());
  }
  if (in.has_mem_fraction_static()) {
    if (!IsFraction(in.mem_fraction_static())) {
      return Invalid(path, absl::StrFormat(".mem_fraction_static = %g; must be in (0, 1]",
                                           in.mem_fraction_static()));
    }
    out->set_mem_fraction_static(in.mem_fraction_static());
  }
  if (in.has_kv_cache_free_gpu_memory_fraction()) {
    if (!IsFraction(in.kv_cache_free_gpu_memory_fraction())) {
      return Invalid(path, absl::StrFormat(".kv_cache_free_gpu_memory_fraction = %g; must be in "
                                           "(0, 1]",
                                           in.kv_cache_free_gpu_memory_fraction()));
    }
    out->set_kv_cache_free_gpu_memory_fraction(in.kv_cache_free_gpu_memory_fraction());
  }
  if (in.has_max_model_len()) {
    if (in.max_model_len() == 0) return Invalid(path, ".max_model_len = 0; must be > 0");
    out->set_max_model_len(in.max_model_len());
  }
  if (in.has_max_num_batched_tokens()) {
    if (in.max_num_batched_tokens() == 0) {
      return Invalid(path, ".max_num_batched_tokens = 0; must be > 0");
    }
    out->set_max_num_batched_tokens(in.max_num_batched_tokens());
  }
  if (in.has_max_num_seqs()) {
    if (in.max_num_seqs() == 0) return Invalid(path, ".max_num_seqs = 0; must be > 0");
    out->set_max_num_seqs(in.max_num_seqs());
  }
  if (in.has_enforce_eager()) out->set_enforce_eager(in.enforce_eager());
  if (in.has_enable_prefix_caching()) out->set_enable_prefix_caching(in.enable_prefix_caching());
  if (in.has_max_cudagraph_batch_size()) {
    out->set_max_cudagraph_batch_size(in.max_cudagraph_batch_size());
  }
  if (in.has_block_size()) {
    uint32_t b = in.block_size();
    if (b == 0 || b > 4096) {
      return Invalid(path, absl::StrFormat(".block_size = %d; must be in [1, 4096]", b));
    }
    out->set_block_size(b);
  }
  if (in.kv_cache_dtype() != v1::KV_CACHE_DTYPE_UNSPECIFIED) {
    out->set_kv_cache_dtype(in.kv_cache_dtype());
  }
  if (in.sampler_backend() != v1::SAMPLER_BACKEND_UNSPECIFIED) {
    out->set_sampler_backend(in.sampler_backend());
  }
  if (in.has_language_model_only()) out->set_language_model_only(in.language_model_only());
  if (in.has_free_memory_at_start_bytes()) {
    if (in.free_memory_at_start_bytes() == 0) {
      return Invalid(path, ".free_memory_at_start_bytes = 0; must be > 0 (bytes free on each GPU)");
    }
    out->set_free_memory_at_start_bytes(in.free_memory_at_start_bytes());
  }
  if (in.speculative_method() != v1::SPECULATIVE_METHOD_UNSPECIFIED) {
    out->mutable_speculative()->set_method(in.speculative_method());
    if (in.speculative_method() == v1::SPECULATIVE_METHOD_NONE) {
      out->mutable_speculative()->set_num_speculative_tokens(0);
    }
  }
  if (in.has_num_speculative_tokens()) {
    if (in.num_speculative_tokens() > 16) {
      return Invalid(path, absl::StrFormat(".num_speculative_tokens = %d; must be in [0, 16]",
                                           in.num_speculative_tokens()));
    }
    out->mutable_speculative()->set_num_speculative_tokens(in.num_speculative_tokens());
    if (in.num_speculative_tokens() == 0) {
      out->mutable_speculative()->set_method(v1::SPECULATIVE_METHOD_NONE);
    }
  }
  return absl::OkStatus();
}

}  // namespace

bool SpeculationOn(const v1::SpeculativeDecoding& s) {
  return s.method() != v1::SPECULATIVE_METHOD_UNSPECIFIED &&
         s.method() != v1::SPECULATIVE_METHOD_NONE;
}

namespace {

// The baseline the deployment starts from (its configuration is the base
// the request's fields override).
absl::Status ResolveBaseline(const Catalog& catalog, const v1::Deployment& d, ResolvedDeployment* r,
                             v1::DeploymentConfig* base) {
  if (d.baseline_id().empty()) return absl::OkStatus();
  r->baseline = catalog.FindBaseline(d.baseline_id());
  if (r->baseline == nullptr) {
    return absl::NotFoundError(absl::StrFormat(
        "%s.baseline_id = \"%s\"; no such baseline in the catalogue%s (ListBaselines lists them)",
        r->path, d.baseline_id(), DidYouMean(SuggestBaselines(catalog, d.baseline_id()))));
  }
  *base = r->baseline->deployment();
  return absl::OkStatus();
}

// The model: the request's config.json, else a catalogue id (the request's
// or the baseline's).
absl::Status ResolveModel(const Catalog& catalog, const v1::Deployment& d,
                          const v1::DeploymentConfig& base, ResolvedDeployment* r) {
  const std::string& path = r->path;
  if (d.has_model_config_json()) {
    absl::StatusOr<v1::Model> parsed = ModelFromHfConfig(d.model_config_json());
    if (!parsed.ok()) {
      return absl::Status(parsed.status().code(),
                          absl::StrCat(path, ".model_config_json: ", parsed.status().message()));
    }
    r->model = *std::move(parsed);
  } else {
    const std::string id = d.has_model_id() ? d.model_id() : base.model_id();
    if (id.empty()) {
      return Invalid(path,
                     ".model_id is empty; set model_id (a catalogue or Hugging Face id), "
                     "model_config_json or baseline_id");
    }
    const v1::Model* model = catalog.FindModel(id);
    if (model == nullptr) {
      return absl::NotFoundError(absl::StrFormat(
          "%s.model_id = \"%s\"; not in the catalogue%s (ListModels lists them; or send the "
          "model's config.json as model_config_json)",
          path, id, DidYouMean(SuggestModels(catalog, id))));
    }
    r->model = *model;
    r->model_id = model->id();
  }
  CAPPLAN_ASSIGN_OR_RETURN(r->input.arch, ToArchitecture(r->model));
  return absl::OkStatus();
}

// A card the request gives whole: validated as a catalogue entry is, and its
// id must not shadow a catalogue card.
absl::Status ResolveInlineHardware(const Catalog& catalog, const v1::Deployment& d,
                                   ResolvedDeployment* r) {
  if (!d.hardware_id().empty()) {
    return Invalid(r->path, absl::StrFormat(".hardware_id = \"%s\" is set with hardware; give the "
                                            "catalogue id or the inline card, not both",
                                            d.hardware_id()));
  }
  CAPPLAN_RETURN_IF_ERROR(CheckInlineHardware(catalog, d.hardware(), r->path + ".hardware"));
  r->inline_hardware = std::make_shared<const v1::Hardware>(d.hardware());
  r->hardware = r->inline_hardware.get();
  CAPPLAN_ASSIGN_OR_RETURN(r->input.hardware, ToHardwareSpec(*r->hardware));
  return absl::OkStatus();
}

// The card (the request's inline one, or a catalogue id); a baseline that
// withholds it resolves without one when allowed.
absl::Status ResolveHardware(const Catalog& catalog, const v1::Deployment& d,
                             const v1::DeploymentConfig& base, bool allow_withheld,
                             ResolvedDeployment* r) {
  if (d.has_hardware()) return ResolveInlineHardware(catalog, d, r);
  const std::string& path = r->path;
  const std::string hardware_id = d.hardware_id().empty() ? base.hardware_id() : d.hardware_id();
  if (hardware_id.empty() && allow_withheld && r->baseline != nullptr) {
    r->input.hardware.name = "withheld";
    return absl::OkStatus();
  }
  if (hardware_id.empty()) {
    if (r->baseline != nullptr) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "%s.hardware_id is empty and baseline '%s' does not name its GPU (%s); set hardware_id",
          path, r->baseline->id(), base.hardware_description()));
    }
    return Invalid(path, ".hardware_id is empty; must name a GPU (ListHardware lists them)");
  }
  r->hardware = catalog.FindHardware(hardware_id);
  if (r->hardware == nullptr) {
    return absl::NotFoundError(
        absl::StrFormat("%s.hardware_id = \"%s\"; not in the catalogue%s (ListHardware lists them)",
                        path, hardware_id, DidYouMean(SuggestHardware(catalog, hardware_id))));
  }
  CAPPLAN_ASSIGN_OR_RETURN(r->input.hardware, ToHardwareSpec(*r->hardware));
  return absl::OkStatus();
}

// The request's tp, pp, ep and DP attention over the baseline's.
absl::Status MergeParallelism(const v1::DeploymentParallelism& p, const std::string& pp_path,
                              v1::Parallelism* out) {
  auto positive = [&](const char* name, uint32_t v) -> absl::Status {
    if (v == 0 || v > 4096) {
      return Invalid(pp_path, absl::StrFormat(".%s = %d; must be in [1, 4096]", name, v));
    }
    return absl::OkStatus();
  };
  if (p.has_tp()) {
    CAPPLAN_RETURN_IF_ERROR(positive("tp", p.tp()));
    out->set_tp(p.tp());
  }
  if (p.has_pp()) {
    CAPPLAN_RETURN_IF_ERROR(positive("pp", p.pp()));
    out->set_pp(p.pp());
  }
  if (p.has_ep()) {
    CAPPLAN_RETURN_IF_ERROR(positive("ep", p.ep()));
    out->set_ep(p.ep());
  }
  if (p.has_dp_attention()) out->set_dp_attention(p.dp_attention());
  return absl::OkStatus();
}

// Parallelism and GPU count. The model's own rules (TP against heads, PP
// against layers, EP against experts and TP × DP, the context limit) are
// checked by the memory model (model::ValidateMemoryPlanInput); its messages
// come back with this path (PrepareDeployment).
absl::Status ResolveParallelism(const v1::Deployment& d, const v1::DeploymentConfig& base,
                                ResolvedDeployment* r) {
  const std::string pp_path = r->path + ".parallelism";
  r->parallelism = base.parallelism();
  const v1::DeploymentParallelism& p = d.parallelism();
  CAPPLAN_RETURN_IF_ERROR(MergeParallelism(p, pp_path, &r->parallelism));
  const uint32_t pp = std::max<uint32_t>(1, r->parallelism.pp());
  if (d.has_gpu_count()) {
    if (d.gpu_count() == 0 || d.gpu_count() > 4096) {
      return Invalid(r->path,
                     absl::StrFormat(".gpu_count = %d; must be in [1, 4096]", d.gpu_count()));
    }
    r->gpu_count = d.gpu_count();
  } else if (base.gpu_count() > 0) {
    r->gpu_count = base.gpu_count();
  } else {
    r->gpu_count = std::max<uint32_t>(1, r->parallelism.tp()) * pp;
  }
  // No TP given (or a new GPU count without one): one TP group over the
  // GPUs, as engines are usually launched.
  if (!p.has_tp() && (d.has_gpu_count() || r->parallelism.tp() == 0)) {
    r->parallelism.set_tp(std::max<uint32_t>(1, r->gpu_count / pp));
    r->tp_from_gpu_count = d.has_gpu_count();
  }
  const uint32_t tp = std::max<uint32_t>(1, r->parallelism.tp());
  r->parallelism.set_tp(tp);
  r->parallelism.set_pp(pp);
  if (r->gpu_count % (tp * pp) != 0 && r->tp_from_gpu_count) {
    return Invalid(r->path, absl::StrFormat(".gpu_count = %d; must be a multiple of pp = %d "
                                            "(no tp given: tp = gpu_count ÷ pp)",
                                            r->gpu_count, pp));
  }
  if (r->gpu_count % (tp * pp) != 0) {
    return Invalid(pp_path,
                   absl::StrFormat(".tp = %d (pp = %d); tp × pp must divide gpu_count = %d", tp, pp,
                                   r->gpu_count));
  }
  r->parallelism.set_dp(r->gpu_count / (tp * pp));
  r->parallelism.set_ep(std::max<uint32_t>(1, r->parallelism.ep()));
  r->input.parallelism = ToParallelism(r->parallelism);
  return absl::OkStatus();
}

// The checkpoint's format, the baseline's, or the request's override.
absl::Status ResolveWeightFormat(const v1::Deployment& d, const v1::DeploymentConfig& base,
                                 ResolvedDeployment* r) {
  r->quantization = base.has_quantization() ? base.quantization() : r->model.quantization();
  if (d.weight_format() != v1::WEIGHT_FORMAT_UNSPECIFIED) {
    v1::Quantization q;
    q.set_format(d.weight_format());
    if (d.has_weight_group_size()) q.set_group_size(d.weight_group_size());
    r->quantization = q;
  } else if (d.has_weight_group_size()) {
    r->quantization.set_group_size(d.weight_group_size());
  }
  absl::StatusOr<model::Quantization> q = ToQuantization(r->quantization);
  if (!q.ok() && r->quantization.format() != v1::WEIGHT_FORMAT_UNSPECIFIED) {
    return absl::Status(q.status().code(),
                        absl::StrCat(r->path, ".weight_format: ", q.status().message()));
  }
  if (!q.ok()) return q.status();
  r->input.quantization = *q;
  return absl::OkStatus();
}

// The engine, its knobs and its version's preset.
absl::Status ResolveEngine(const Catalog& catalog, const v1::Deployment& d,
                           const v1::DeploymentConfig& base, ResolvedDeployment* r) {
  const std::string& path = r->path;
  r->engine = base.engine();
  CAPPLAN_RETURN_IF_ERROR(MergeEngine(d.engine(), path + ".engine", &r->engine));
  if (d.engine().has_kv_pool_tokens()) {
    constexpr uint64_t kMaxStatedPoolTokens = uint64_t{1} << 40;
    if (d.engine().kv_pool_tokens() < 1 || d.engine().kv_pool_tokens() > kMaxStatedPoolTokens) {
      return Invalid(path, absl::StrFormat(".engine.kv_pool_tokens = %d; must be in [1, 2^40]",
                                           d.engine().kv_pool_tokens()));
    }
    r->stated_kv_pool_tokens = d.engine().kv_pool_tokens();
  }
  if (r->engine.kind() == v1::ENGINE_KIND_UNSPECIFIED) r->engine.set_kind(v1::ENGINE_KIND_VLLM);
  if (r->engine.kind() == v1::ENGINE_KIND_VLLM && d.engine().has_mem_fraction_static()) {
    return Invalid(path,
                   ".engine.mem_fraction_static is SGLang's knob; vLLM takes "
                   "gpu_memory_utilization");
  }
  if (r->engine.kind() == v1::ENGINE_KIND_SGLANG && d.engine().has_gpu_memory_utilization()) {
    return Invalid(path,
                   ".engine.gpu_memory_utilization is vLLM's knob; SGLang takes "
                   "mem_fraction_static");
  }
  v1::SpeculativeDecoding* spec = r->engine.mutable_speculative();
  if (SpeculationOn(*spec) && spec->num_speculative_tokens() == 0) {
    spec->set_num_speculative_tokens(1);
  }
  if (spec->method() == v1::SPECULATIVE_METHOD_MTP && r->model.num_mtp_layers() == 0) {
    return Invalid(
        path,
        absl::StrFormat(
            ".engine.speculative_method = MTP; model '%s' ships no MTP layers (num_mtp_layers = 0)",
            r->model.id().empty() ? "config.json" : r->model.id()));
  }
  absl::StatusOr<PresetChoice> preset =
      ChoosePreset(catalog.engine_presets(), r->engine.kind(), r->engine.version(),
                   r->hardware != nullptr ? r->hardware->compute_capability() : "");
  if (!preset.ok()) {
    return absl::Status(preset.status().code(),
                        absl::StrCat(path, ".engine.version: ", preset.status().message()));
  }
  r->preset = *preset;
  CAPPLAN_ASSIGN_OR_RETURN(r->input.engine, ToEngineBehaviour(*r->preset.preset));
  r->input.settings = ToEngineSettings(r->engine);
  // Served text-only: the tower is not loaded (nor profiled).
  if (r->input.settings.language_model_only) r->input.arch.vision_encoder.reset();
  return absl::OkStatus();
}

absl::StatusOr<ResolvedDeployment> Resolve(const Catalog& catalog, const v1::Deployment& d,
                                           const std::string& path, bool allow_withheld) {
  ResolvedDeployment r;
  r.path = path;
  v1::DeploymentConfig base;
  CAPPLAN_RETURN_IF_ERROR(ResolveBaseline(catalog, d, &r, &base));
  CAPPLAN_RETURN_IF_ERROR(ResolveModel(catalog, d, base, &r));
  CAPPLAN_RETURN_IF_ERROR(ResolveHardware(catalog, d, base, allow_withheld, &r));
  CAPPLAN_RETURN_IF_ERROR(ResolveParallelism(d, base, &r));
  CAPPLAN_RETURN_IF_ERROR(ResolveWeightFormat(d, base, &r));
  CAPPLAN_RETURN_IF_ERROR(ResolveEngine(catalog, d, base, &r));
  return r;
}

}  // namespace

absl::StatusOr<ResolvedDeployment> ResolveDeployment(const Catalog& catalog,
                                                     const v1::Deployment& d,
                                                     const std::string& path) {
  return Resolve(catalog, d, path, /*allow_withheld=*/false);
}

absl::StatusOr<ResolvedDeployment> ResolveDeploymentAllowingWithheldHardware(
    const Catalog& catalog, const v1::Deployment& d, const std::string& path) {
  return Resolve(catalog, d, path, /*allow_withheld=*/true);
}

bool BaselineMatches(const v1::Baseline& baseline, const ResolvedDeployment& r) {
  const v1::DeploymentConfig& b = baseline.deployment();
  if (r.model_id.empty() || b.model_id() != r.model_id) return false;
  if (r.hardware == nullptr || b.hardware_id() != r.hardware->id()) return false;
  if (b.gpu_count() != r.gpu_count) return false;
  // An unstated TP means one TP group over the GPUs, as ResolveDeployment assumes.
  uint32_t pp = std::max<uint32_t>(1, b.parallelism().pp());
  uint32_t tp =
      b.parallelism().tp() > 0 ? b.parallelism().tp() : std::max<uint32_t>(1, b.gpu_count() / pp);
  if (tp != r.parallelism.tp() || pp != r.parallelism.pp()) return false;
  v1::EngineKind kind = b.engine().kind();
  if (kind != v1::ENGINE_KIND_UNSPECIFIED && kind != r.engine.kind()) return false;
  const v1::Quantization& q = b.has_quantization() ? b.quantization() : r.model.quantization();
  if (q.format() != r.quantization.format()) return false;
  // Memory knobs the baseline states must be the request's.
  const v1::EngineConfig& e = b.engine();
  if (e.gpu_memory_utilization() > 0 &&
      e.gpu_memory_utilization() != r.engine.gpu_memory_utilization()) {
    return false;
  }
  if (e.mem_fraction_static() > 0 && e.mem_fraction_static() != r.engine.mem_fraction_static()) {
    return false;
  }
  if (e.max_model_len() > 0 && e.max_model_len() != r.engine.max_model_len()) return false;
  if (e.kv_cache_dtype() > v1::KV_CACHE_DTYPE_AUTO &&
      e.kv_cache_dtype() != r.engine.kv_cache_dtype()) {
    return false;
  }
  return true;
}

absl::Status CheckInlineHardware(const Catalog& catalog, const v1::Hardware& card,
                                 const std::string& path) {
  // Encoding and duplicates first, as for a catalogue file.
  std::vector<Finding> findings = CheckEntityStructure(card);
  if (findings.empty()) {
    findings = ValidateEntity(card, ValidationRules{.require_citations = false});
  }
  if (!findings.empty()) {
    std::string message = absl::StrCat(path, ".", findings[0].message);
    if (findings.size() > 1) {
      absl::StrAppend(&message, absl::StrFormat(" (and %d more)", findings.size() - 1));
    }
    return absl::InvalidArgumentError(message);
  }
  if (catalog.FindHardware(card.id()) != nullptr) {
    return Invalid(path, absl::StrFormat(".id = \"%s\"; names a catalogue card: send it as "
                                         "hardware_id, or give the inline card an id of its own",
                                         card.id()));
  }
  return absl::OkStatus();
}

}  // namespace capplan::service
