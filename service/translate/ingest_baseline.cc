#include "service/translate/ingest_baseline.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"

namespace capplan::service {
namespace {

v1::EngineConfig ToEngineConfig(const v1::EngineSettings& e) {
  v1::EngineConfig out;
  out.set_kind(e.kind());
  out.set_version(e.version());
  if (e.has_gpu_memory_utilization()) out.set_gpu_memory_utilization(e.gpu_memory_utilization());
  if (e.has_mem_fraction_static()) out.set_mem_fraction_static(e.mem_fraction_static());
  if (e.has_kv_cache_free_gpu_memory_fraction()) {
    out.set_kv_cache_free_gpu_memory_fraction(e.kv_cache_free_gpu_memory_fraction());
  }
  if (e.has_max_model_len()) out.set_max_model_len(e.max_model_len());
  if (e.has_max_num_batched_tokens()) out.set_max_num_batched_tokens(e.max_num_batched_tokens());
  if (e.has_max_num_seqs()) out.set_max_num_seqs(e.max_num_seqs());
  if (e.has_enforce_eager()) out.set_enforce_eager(e.enforce_eager());
  if (e.has_enable_prefix_caching()) out.set_enable_prefix_caching(e.enable_prefix_caching());
  if (e.has_max_cudagraph_batch_size()) {
    out.set_max_cudagraph_batch_size(e.max_cudagraph_batch_size());
  }
  if (e.has_block_size()) out.set_block_size(e.block_size());
  out.set_kv_cache_dtype(e.kv_cache_dtype());
  out.set_sampler_backend(e.sampler_backend());
  if (e.has_language_model_only()) out.set_language_model_only(e.language_model_only());
  if (e.has_free_memory_at_start_bytes()) {
    out.set_free_memory_at_start_bytes(e.free_memory_at_start_bytes());
  }
  if (e.speculative_method() != v1::SPECULATIVE_METHOD_UNSPECIFIED) {
    out.mutable_speculative()->set_method(e.speculative_method());
    out.mutable_speculative()->set_num_speculative_tokens(e.num_speculative_tokens());
  }
  return out;
}

// Fills what the user left unset from what the log states.
void MergeEngine(const v1::EngineConfig& from_log, v1::EngineConfig* e) {
  if (e->kv_cache_free_gpu_memory_fraction() == 0) {
    e->set_kv_cache_free_gpu_memory_fraction(from_log.kv_cache_free_gpu_memory_fraction());
  }
  if (e->kind() == v1::ENGINE_KIND_UNSPECIFIED) e->set_kind(from_log.kind());
  if (e->version().empty()) e->set_version(from_log.version());
  if (e->gpu_memory_utilization() == 0) {
    e->set_gpu_memory_utilization(from_log.gpu_memory_utilization());
  }
  if (e->mem_fraction_static() == 0) e->set_mem_fraction_static(from_log.mem_fraction_static());
  if (e->max_model_len() == 0) e->set_max_model_len(from_log.max_model_len());
  if (e->max_num_batched_tokens() == 0) {
    e->set_max_num_batched_tokens(from_log.max_num_batched_tokens());
  }
  if (e->max_num_seqs() == 0) e->set_max_num_seqs(from_log.max_num_seqs());
  if (e->block_size() == 0) e->set_block_size(from_log.block_size());
  if (e->kv_cache_dtype() == v1::KV_CACHE_DTYPE_UNSPECIFIED) {
    e->set_kv_cache_dtype(from_log.kv_cache_dtype());
  }
  if (!e->enforce_eager()) e->set_enforce_eager(from_log.enforce_eager());
  if (e->sampler_backend() == v1::SAMPLER_BACKEND_UNSPECIFIED) {
    e->set_sampler_backend(from_log.sampler_backend());
  }
  if (!e->language_model_only()) e->set_language_model_only(from_log.language_model_only());
  if (!e->has_free_memory_at_start_bytes() && from_log.has_free_memory_at_start_bytes()) {
    e->set_free_memory_at_start_bytes(from_log.free_memory_at_start_bytes());
  }
  if (!e->has_enable_prefix_caching() && from_log.has_enable_prefix_caching()) {
    e->set_enable_prefix_caching(from_log.enable_prefix_caching());
  }
}

// The weight format a model entry holds: its quantization, else its dtype.
v1::WeightFormat EntryFormat(const v1::Model& m) {
  if (m.has_quantization() && m.quantization().format() != v1::WEIGHT_FORMAT_UNSPECIFIED) {
    return m.quantization().format();
  }
  switch (m.native_dtype()) {
    case v1::NUMBER_FORMAT_FP16:
      return v1::WEIGHT_FORMAT_FP16;
    case v1::NUMBER_FORMAT_FP32:
      return v1::WEIGHT_FORMAT_FP32;
    default:
      return v1::WEIGHT_FORMAT_BF16;
  }
}

// An engine's method name covers several of capplan's formats: vLLM's "fp8"
// runs a block-scaled checkpoint as such, "gptq" an 8-bit one.
bool SameMethod(v1::WeightFormat a, v1::WeightFormat b) {
  auto family = [](v1::WeightFormat f) {
    switch (f) {
      case v1::WEIGHT_FORMAT_FP8_BLOCK:
      case v1::WEIGHT_FORMAT_FP8_PER_CHANNEL:
        return v1::WEIGHT_FORMAT_FP8_PER_TENSOR;
      case v1::WEIGHT_FORMAT_INT8:
        return v1::WEIGHT_FORMAT_INT4_GPTQ;
      default:
        return f;
    }
  };
  return family(a) == family(b);
}

// The log's weight format against the user's and the model entry's (see the
// header); what was decided goes to other_findings.
void MergeWeightFormat(const IngestSpec& spec, const IngestedFile& file,
                       const EngineLogCatalogParts& parts, v1::Baseline* b) {
  if (!parts.weight_format) return;
  v1::DeploymentConfig* d = b->mutable_deployment();
  const std::string format = v1::WeightFormat_Name(*parts.weight_format);
  const std::string said =
      absl::StrCat(file.file_name, " states ", parts.weight_format_source, " (", format, ")");
  if (d->has_quantization()) {
    if (d->quantization().format() != *parts.weight_format) {
      b->add_other_findings(absl::StrCat(said, "; the deployment keeps the quantization given, ",
                                         v1::WeightFormat_Name(d->quantization().format())));
    }
    return;
  }
  if (!spec.model.has_value()) {
    b->add_other_findings(absl::StrCat(
        said, "; the model entry is not known here, so the deployment keeps the entry's own"));
    return;
  }
  const v1::WeightFormat entry = EntryFormat(*spec.model);
  if (entry == *parts.weight_format) return;
  if (!parts.weight_format_from_dtype && SameMethod(entry, *parts.weight_format)) return;
  d->mutable_quantization()->set_format(*parts.weight_format);
  b->add_other_findings(absl::StrCat(said, "; the model entry ", spec.model->id(), " holds ",
                                     v1::WeightFormat_Name(entry),
                                     ", so the deployment records the log's format"));
}

void AddLogFacts(const IngestSpec& spec, const IngestedFile& file, v1::Baseline* b) {
  const uint32_t given_block_size = b->deployment().engine().block_size();
  EngineLogCatalogParts parts = EngineLogToCatalog(
      *file.engine_log,
      given_block_size > 0 ? std::optional<uint32_t>(given_block_size) : std::nullopt);
  // The log's lines are kept once, in other_findings; each figure points there.
  std::string from =
      absl::StrCat("from the start-up log ", file.file_name, " (its lines are in other_findings)");
  if (!parts.remarks.empty()) absl::StrAppend(&from, "; ", absl::StrJoin(parts.remarks, "; "));
  if (parts.kv_pool.has_value()) parts.kv_pool->set_note(from);
  if (parts.memory_account.has_value()) parts.memory_account->set_note(from);
  if (parts.weight_footprint.has_value()) parts.weight_footprint->set_note(from);
  if (parts.kv_pool.has_value()) *b->add_kv_pools() = *parts.kv_pool;
  if (parts.memory_account.has_value()) *b->add_memory_accounts() = *parts.memory_account;
  if (parts.weight_footprint.has_value()) *b->add_weight_footprints() = *parts.weight_footprint;
  v1::DeploymentConfig* d = b->mutable_deployment();
  MergeEngine(parts.engine, d->mutable_engine());
  if (parts.parallelism.has_value()) {
    v1::Parallelism* p = d->mutable_parallelism();
    if (p->tp() == 0) p->set_tp(parts.parallelism->tp());
    if (p->pp() == 0) p->set_pp(parts.parallelism->pp());
  }
  for (const std::string& line : parts.raw_lines) {
    b->add_other_findings(absl::StrCat(file.file_name, " ", line));
  }
  MergeWeightFormat(spec, file, parts, b);
}

// The files must not name two different models (as the tools print them).
absl::Status CheckOneModel(absl::Span<const IngestedFile> files) {
  std::string first, first_file;
  for (const IngestedFile& f : files) {
    std::vector<std::string> names;
    for (const IngestedRun& r : f.runs) {
      if (r.model_id.has_value()) names.push_back(*r.model_id);
    }
    if (f.engine_log.has_value() && f.engine_log->model.has_value()) {
      names.push_back(*f.engine_log->model);
    }
    for (const std::string& n : names) {
      if (first.empty()) {
        first = n, first_file = f.file_name;
      } else if (absl::AsciiStrToLower(n) != absl::AsciiStrToLower(first)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "%s names model \"%s\" but %s names \"%s\": one baseline is one configuration",
            first_file, first, f.file_name, n));
      }
    }
  }
  return absl::OkStatus();
}

void FillProvenance(const v1::Provenance& from_files, v1::Provenance* p) {
  if (p->date().empty()) p->set_date(from_files.date());
  if (p->benchmark_tool().empty()) p->set_benchmark_tool(from_files.benchmark_tool());
  if (p->tpot_definition().empty()) p->set_tpot_definition(from_files.tpot_definition());
  if (!from_files.notes().empty()) {
    p->set_notes(p->notes().empty() ? from_files.notes()
                                    : absl::StrCat(p->notes(), "\n", from_files.notes()));
  }
}

std::string DefaultTitle(const v1::DeploymentConfig& d) {
  std::string engine = d.engine().kind() == v1::ENGINE_KIND_SGLANG   ? "SGLang"
                       : d.engine().kind() == v1::ENGINE_KIND_VLLM   ? "vLLM"
                       : d.engine().kind() == v1::ENGINE_KIND_TRTLLM ? "TensorRT-LLM"
                                                                     : "engine";
  return absl::StrFormat(
      "%s on %d × %s (%s %s)", d.model_id(), std::max<uint32_t>(1, d.gpu_count()),
      d.hardware_id().empty() ? "unnamed GPU" : d.hardware_id(), engine,
      d.engine().version().empty() ? "version not stated" : d.engine().version());
}

}  // namespace

v1::DeploymentConfig ToDeploymentConfig(const v1::Deployment& d) {
  v1::DeploymentConfig out;
  out.set_hardware_id(d.hardware_id());
  if (d.has_gpu_count()) out.set_gpu_count(d.gpu_count());
  out.set_model_id(d.model_id());
  if (d.weight_format() != v1::WEIGHT_FORMAT_UNSPECIFIED) {
    out.mutable_quantization()->set_format(d.weight_format());
    if (d.has_weight_group_size())
      out.mutable_quantization()->set_group_size(d.weight_group_size());
  }
  *out.mutable_engine() = ToEngineConfig(d.engine());
  v1::Parallelism* p = out.mutable_parallelism();
  if (d.parallelism().has_tp()) p->set_tp(d.parallelism().tp());
  if (d.parallelism().has_pp()) p->set_pp(d.parallelism().pp());
  if (d.parallelism().has_ep()) p->set_ep(d.parallelism().ep());
  if (d.parallelism().has_dp_attention()) p->set_dp_attention(d.parallelism().dp_attention());
  return out;
}

std::string ModelIdFromRepo(absl::string_view repo_id) {
  const size_t slash = repo_id.rfind('/');
  const std::string name =
      absl::AsciiStrToLower(slash == absl::string_view::npos ? repo_id : repo_id.substr(slash + 1));
  std::string id;
  for (char c : name) {
    const bool keep = absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '.';
    if (keep) {
      id.push_back(c);
    } else if (!id.empty() && id.back() != '-') {
      id.push_back('-');
    }
  }
  while (!id.empty() && (id.back() == '-' || id.back() == '.')) id.pop_back();
  return id;
}

absl::StatusOr<v1::Baseline> AssembleBaseline(const IngestSpec& spec,
                                              absl::Span<const IngestedFile> files) {
  CAPPLAN_RETURN_IF_ERROR(CheckOneModel(files));
  v1::Baseline b;
  b.set_id(spec.id);
  *b.mutable_provenance() = spec.provenance;
  *b.mutable_deployment() = ToDeploymentConfig(spec.deployment);
  bool any_runs = false;
  for (const IngestedFile& f : files) {
    if (f.engine_log.has_value()) AddLogFacts(spec, f, &b);
    any_runs |= !f.runs.empty();
  }
  if (any_runs) {
    CAPPLAN_ASSIGN_OR_RETURN(CombinedMeasurements combined, CombineMeasurements(files));
    for (v1::Sweep& sweep : combined.sweeps) {
      v1::Workload* w = sweep.mutable_workload();
      if (!w->has_input_tokens() && spec.input_tokens.has_value()) {
        w->set_input_tokens(*spec.input_tokens);
      }
      if (!w->has_output_tokens() && spec.output_tokens.has_value()) {
        w->set_output_tokens(*spec.output_tokens);
      }
      *b.add_sweeps() = std::move(sweep);
    }
    FillProvenance(combined.provenance, b.mutable_provenance());
  }
  if (b.sweeps_size() == 0 && b.kv_pools_size() == 0 && b.memory_accounts_size() == 0 &&
      b.weight_footprints_size() == 0) {
    return absl::InvalidArgumentError(
        "the files hold nothing to ingest: no benchmark run and no memory figure of a start-up "
        "log");
  }
  v1::DeploymentConfig* d = b.mutable_deployment();
  if (d->gpu_count() == 0 && d->parallelism().tp() > 0) {
    d->set_gpu_count(d->parallelism().tp() * std::max<uint32_t>(1, d->parallelism().pp()));
  }
  b.set_title(spec.title.empty() ? DefaultTitle(*d) : spec.title);
  return b;
}

}  // namespace capplan::service
