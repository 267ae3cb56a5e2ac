// From parsed files to catalogue messages: the runs of one configuration as
// sweeps (closed loop, open loop and bursts apart), and an engine log's facts
// as KvPool / MemoryAccount / WeightFootprint / EngineConfig.

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "service/translate/ingest.h"
#include "service/translate/ingest_internal.h"
#include "service/translate/launch_line.h"

namespace capplan::service {
namespace {

using ingest_internal::FormatFigure;

// Runs whose mean tokens per request differ by at most this fraction share
// one workload figure.
constexpr double kWorkloadAgreement = 0.01;
constexpr size_t kMaxNoteBytes = 4000;

struct Placed {
  const IngestedFile* file;
  const IngestedRun* run;
  double key;  // concurrency, rate or number of prompts
};

absl::string_view KindName(LoadKind kind) {
  switch (kind) {
    case LoadKind::kClosedLoop:
      return "closed-loop";
    case LoadKind::kOpenLoop:
      return "open-loop";
    case LoadKind::kBurst:
      return "burst";
    case LoadKind::kUnknown:
      break;
  }
  return "unknown-load";
}

std::optional<double> LoadKey(const IngestedRun& run) {
  switch (run.load) {
    case LoadKind::kClosedLoop:
      return run.max_concurrency ? std::optional<double>(*run.max_concurrency) : std::nullopt;
    case LoadKind::kOpenLoop:
      return run.request_rate_rps;
    case LoadKind::kBurst:
      if (std::optional<uint32_t> n = ingest_internal::BurstSize(run)) return *n;
      return std::nullopt;
    case LoadKind::kUnknown:
      break;
  }
  return std::nullopt;
}

// One workload figure when every run states it and they agree.
std::optional<double> Agreed(const std::vector<Placed>& runs,
                             std::optional<double> IngestedRun::*field, std::string& why) {
  double lo = 0, hi = 0, weighted = 0, weight = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const std::optional<double>& v = runs[i].run->*field;
    if (!v) {
      why = absl::StrCat("not stated by ", runs[i].run->source);
      return std::nullopt;
    }
    lo = i == 0 ? *v : std::min(lo, *v);
    hi = i == 0 ? *v : std::max(hi, *v);
    const double w = runs[i].run->row.requests() > 0 ? runs[i].run->row.requests() : 1.0;
    weighted += *v * w;
    weight += w;
  }
  if (hi - lo > kWorkloadAgreement * hi) {
    why = absl::StrCat("differs between runs: ", FormatFigure(lo), " to ", FormatFigure(hi),
                       " tokens per request");
    return std::nullopt;
  }
  return weighted / weight;
}

v1::Workload WorkloadOf(const std::vector<Placed>& runs) {
  v1::Workload w;
  std::string why;
  if (auto in = Agreed(runs, &IngestedRun::mean_input_tokens, why)) {
    w.set_input_tokens(*in);
    w.set_input_description(absl::StrCat("mean input tokens per request over ", runs.size(),
                                         " runs (completed-request weighted)"));
  } else {
    w.set_input_description(absl::StrCat("input tokens per request ", why));
  }
  why.clear();
  if (auto out = Agreed(runs, &IngestedRun::mean_output_tokens, why)) {
    w.set_output_tokens(*out);
    w.set_output_tokens_note(absl::StrCat("mean output tokens per request over ", runs.size(),
                                          " runs (completed-request weighted)"));
  } else {
    w.set_output_tokens_note(absl::StrCat("output tokens per request ", why));
  }
  return w;
}

absl::StatusOr<v1::Sweep> SweepOf(LoadKind kind, std::vector<Placed> runs,
                                  const CombineOptions& options) {
  std::stable_sort(runs.begin(), runs.end(),
                   [](const Placed& a, const Placed& b) { return a.key < b.key; });
  for (size_t i = 1; i < runs.size(); ++i) {
    if (runs[i].key == runs[i - 1].key) {
      return absl::InvalidArgumentError(absl::StrCat(
          runs[i - 1].run->source, " and ", runs[i].run->source, " are both ", KindName(kind),
          " runs at ", FormatFigure(runs[i].key), "; a sweep holds one run per load point"));
    }
  }
  v1::Sweep sweep;
  sweep.set_name(absl::StrCat(options.name, "-", KindName(kind)));
  sweep.set_closed_loop(kind == LoadKind::kClosedLoop);
  std::vector<std::string> files;
  for (const Placed& p : runs) {
    *sweep.add_rows() = p.run->row;
    if (files.empty() || files.back() != p.file->file_name) files.push_back(p.file->file_name);
  }
  const absl::string_view axis = kind == LoadKind::kClosedLoop ? "concurrency"
                                 : kind == LoadKind::kOpenLoop ? "request rate (req/s)"
                                                               : "number of prompts sent at once";
  sweep.set_description(
      absl::StrCat(KindName(kind), " runs by ", axis, " ", FormatFigure(runs.front().key), " to ",
                   FormatFigure(runs.back().key), ", from ", absl::StrJoin(files, ", ")));
  *sweep.mutable_workload() = WorkloadOf(runs);
  return sweep;
}

absl::Status CheckOneModel(const std::vector<Placed>& all) {
  const Placed* first = nullptr;
  for (const Placed& p : all) {
    if (!p.run->model_id) continue;
    if (first == nullptr) {
      first = &p;
    } else if (*p.run->model_id != *first->run->model_id) {
      return absl::InvalidArgumentError(absl::StrCat(
          first->run->source, " names model \"", *first->run->model_id, "\", ", p.run->source,
          " names \"", *p.run->model_id, "\"; combine the runs of one configuration only"));
    }
  }
  return absl::OkStatus();
}

v1::Provenance ProvenanceOf(absl::Span<const IngestedFile> files) {
  std::set<std::string> tools, definitions, dates;
  std::vector<std::string> notes;
  for (const IngestedFile& f : files) {
    if (f.runs.empty()) continue;
    if (f.tool)
      tools.insert(f.tool_version ? absl::StrCat(*f.tool, " ", *f.tool_version) : *f.tool);
    if (f.tpot_definition) definitions.insert(*f.tpot_definition);
    if (f.date) dates.insert(*f.date);
    for (const std::string& n : f.notes) notes.push_back(absl::StrCat(f.file_name, ": ", n));
  }
  v1::Provenance p;
  p.set_benchmark_tool(absl::StrJoin(tools, ", "));
  p.set_tpot_definition(absl::StrJoin(definitions, "; "));
  if (!dates.empty()) p.set_date(*dates.begin());
  if (dates.size() > 1) {
    notes.push_back(absl::StrCat("files dated ", *dates.begin(), " to ", *dates.rbegin()));
  }
  p.set_notes(absl::StrJoin(notes, "; ").substr(0, kMaxNoteBytes));
  return p;
}

}  // namespace

absl::StatusOr<CombinedMeasurements> CombineMeasurements(absl::Span<const IngestedFile> files,
                                                         const CombineOptions& options) {
  std::vector<Placed> by_kind[3];
  std::vector<Placed> all;
  for (const IngestedFile& f : files) {
    for (const IngestedRun& r : f.runs) {
      const std::optional<double> key = LoadKey(r);
      if (r.load == LoadKind::kUnknown || !key) {
        return absl::InvalidArgumentError(
            absl::StrCat(r.source,
                         ": the run states neither a concurrency nor a request rate (nor, for a "
                         "burst, its number of prompts); it has no place on a load axis"));
      }
      const Placed p{&f, &r, *key};
      all.push_back(p);
      by_kind[r.load == LoadKind::kClosedLoop ? 0
              : r.load == LoadKind::kOpenLoop ? 1
                                              : 2]
          .push_back(p);
    }
  }
  if (all.empty()) {
    return absl::InvalidArgumentError("no measurement runs to combine (engine logs hold none)");
  }
  if (absl::Status s = CheckOneModel(all); !s.ok()) return s;
  std::vector<const Placed*> firsts;
  for (const auto& kind : by_kind) {
    if (!kind.empty()) firsts.push_back(&kind.front());
  }
  if (!options.split_load_kinds && firsts.size() > 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(KindName(firsts[0]->run->load), " runs (", firsts[0]->run->source, ") and ",
                     KindName(firsts[1]->run->load), " runs (", firsts[1]->run->source,
                     ") cannot share a sweep; pass them separately or let them split"));
  }
  CombinedMeasurements out;
  for (const auto& kind : by_kind) {
    if (kind.empty()) continue;
    absl::StatusOr<v1::Sweep> sweep = SweepOf(kind.front().run->load, kind, options);
    if (!sweep.ok()) return sweep.status();
    out.sweeps.push_back(*std::move(sweep));
  }
  out.provenance = ProvenanceOf(files);
  return out;
}

namespace {

v1::KvCacheDtype KvDtypeOf(absl::string_view text) {
  const std::string t = absl::AsciiStrToLower(text);
  if (t == "auto") return v1::KV_CACHE_DTYPE_AUTO;
  if (absl::StartsWith(t, "fp8")) return v1::KV_CACHE_DTYPE_FP8;
  if (t == "bf16" || t == "bfloat16") return v1::KV_CACHE_DTYPE_BF16;
  if (t == "fp16" || t == "float16" || t == "half") return v1::KV_CACHE_DTYPE_FP16;
  return v1::KV_CACHE_DTYPE_UNSPECIFIED;
}

v1::EngineConfig EngineOf(const EngineLogFacts& f) {
  v1::EngineConfig e;
  if (f.engine == "vllm") e.set_kind(v1::ENGINE_KIND_VLLM);
  if (f.engine == "sglang") e.set_kind(v1::ENGINE_KIND_SGLANG);
  if (f.engine == "tensorrt-llm") e.set_kind(v1::ENGINE_KIND_TRTLLM);
  if (f.engine_version) e.set_version(*f.engine_version);
  if (f.gpu_memory_utilization) e.set_gpu_memory_utilization(*f.gpu_memory_utilization);
  if (f.mem_fraction_static) e.set_mem_fraction_static(*f.mem_fraction_static);
  if (f.kv_cache_free_gpu_memory_fraction) {
    e.set_kv_cache_free_gpu_memory_fraction(*f.kv_cache_free_gpu_memory_fraction);
  }
  if (f.max_model_len) e.set_max_model_len(*f.max_model_len);
  if (f.max_num_batched_tokens) e.set_max_num_batched_tokens(*f.max_num_batched_tokens);
  if (f.max_num_seqs) e.set_max_num_seqs(*f.max_num_seqs);
  if (f.enforce_eager) e.set_enforce_eager(*f.enforce_eager);
  if (f.block_size) e.set_block_size(*f.block_size);
  if (f.kv_cache_dtype) e.set_kv_cache_dtype(KvDtypeOf(*f.kv_cache_dtype));
  if (f.enable_prefix_caching) e.set_enable_prefix_caching(*f.enable_prefix_caching);
  if (f.language_model_only) e.set_language_model_only(*f.language_model_only);
  if (f.native_sampler.value_or(false)) e.set_sampler_backend(v1::SAMPLER_BACKEND_NATIVE);
  if (f.free_memory_at_start_bytes) {
    e.set_free_memory_at_start_bytes(*f.free_memory_at_start_bytes);
  }
  return e;
}

// The power-of-two block size that reproduces vLLM's "Maximum concurrency
// for L tokens per request: C" (C = blocks × block size / L, printed to two
// decimals); nullopt unless exactly one does.
std::optional<uint32_t> BlockSizeFromConcurrency(uint64_t blocks, uint64_t tokens, double c) {
  if (blocks == 0 || tokens == 0 || c < 0.01) return std::nullopt;
  std::optional<uint32_t> found;
  for (uint32_t size = 1; size <= 256; size *= 2) {
    const double printed = std::round(static_cast<double>(blocks) * size / tokens * 100) / 100;
    if (std::abs(printed - c) > 1e-9) continue;
    if (found) return std::nullopt;
    found = size;
  }
  return found;
}

// The pool in tokens from GPU blocks when no line states the tokens; the
// note says how (or why not).
void PoolFromBlocks(const EngineLogFacts& f, std::optional<uint32_t> stated_block_size,
                    v1::KvPool& kv, std::vector<std::string>& notes) {
  if (f.kv_pool_tokens || !f.gpu_blocks) return;
  const uint64_t blocks = *f.gpu_blocks;
  if (f.block_size) {
    kv.set_tokens(blocks * *f.block_size);
    notes.push_back(absl::StrCat("pool tokens = ", blocks, " GPU blocks × block size ",
                                 *f.block_size, " (both stated)"));
    return;
  }
  std::optional<uint32_t> size;
  if (f.engine == "vllm" && f.max_concurrency && f.max_concurrency_at_tokens) {
    size = BlockSizeFromConcurrency(blocks, *f.max_concurrency_at_tokens, *f.max_concurrency);
  }
  if (!size && stated_block_size && *stated_block_size > 0) {
    kv.set_tokens(blocks * *stated_block_size);
    notes.push_back(absl::StrCat("pool tokens = ", blocks, " GPU blocks × block size ",
                                 *stated_block_size,
                                 "; the log states no block size: it is the one the ingest was "
                                 "given (--block-size)"));
    return;
  }
  if (!size) {
    notes.push_back(absl::StrCat(blocks,
                                 " GPU blocks; the block size is not stated, so the "
                                 "pool has no token count"));
    return;
  }
  kv.set_tokens(blocks * *size);
  notes.push_back(absl::StrFormat(
      "pool tokens = %d GPU blocks × block size %d; the block size is not printed: it is the only "
      "power of two that reproduces \"Maximum concurrency for %d tokens per request: %sx\" "
      "(%d × %d / %d = %.4f)",
      blocks, *size, *f.max_concurrency_at_tokens, FormatFigure(*f.max_concurrency), blocks, *size,
      *f.max_concurrency_at_tokens,
      static_cast<double>(blocks) * *size / *f.max_concurrency_at_tokens));
}

// Only positive byte figures become fields (the catalogue's are > 0).
void SetBytes(const std::optional<uint64_t>& v, absl::string_view name, v1::MemoryAccount& m,
              void (v1::MemoryAccount::*setter)(uint64_t), std::vector<std::string>& notes) {
  if (!v) return;
  if (*v == 0) {
    notes.push_back(absl::StrCat(name, " 0 bytes as printed (not a field: they are positive)"));
    return;
  }
  (m.*setter)(*v);
}

v1::MemoryAccount AccountOf(const EngineLogFacts& f, std::vector<std::string>& notes) {
  v1::MemoryAccount m;
  m.set_name("engine start-up log");
  m.set_scope("per GPU");
  using M = v1::MemoryAccount;
  SetBytes(f.weights_bytes, "weights", m, &M::set_weights_bytes, notes);
  SetBytes(f.kv_cache_bytes, "KV cache", m, &M::set_kv_cache_bytes, notes);
  SetBytes(f.cuda_graph_bytes, "CUDA graphs", m, &M::set_cuda_graph_bytes, notes);
  SetBytes(f.activation_peak_bytes, "activation peak", m, &M::set_activation_peak_bytes, notes);
  SetBytes(f.non_torch_bytes, "non-torch memory", m, &M::set_non_torch_bytes, notes);
  SetBytes(f.profiled_peak_bytes, "profiled peak", m, &M::set_profiled_peak_bytes, notes);
  SetBytes(f.gpu_total_bytes, "GPU total", m, &M::set_capacity_bytes, notes);
  return m;
}

// The weight format the log's quantization method or dtype names.
void WeightFormatOf(const EngineLogFacts& f, EngineLogCatalogParts& parts) {
  const std::string method = f.quantization ? absl::AsciiStrToLower(*f.quantization) : "";
  if (!method.empty() && method != "none") {
    parts.weight_format = WeightFormatOfQuantizationMethod(method);
    if (parts.weight_format) parts.weight_format_source = "quantization " + *f.quantization;
    return;
  }
  if (!f.dtype) return;
  const std::string d = absl::AsciiStrToLower(*f.dtype);
  if (d == "float16" || d == "half" || d == "fp16") parts.weight_format = v1::WEIGHT_FORMAT_FP16;
  if (d == "bfloat16" || d == "bf16") parts.weight_format = v1::WEIGHT_FORMAT_BF16;
  if (d == "float32" || d == "float" || d == "fp32") parts.weight_format = v1::WEIGHT_FORMAT_FP32;
  if (parts.weight_format) {
    parts.weight_format_from_dtype = true;
    parts.weight_format_source =
        absl::StrCat("dtype ", *f.dtype,
                     method.empty() ? " (no quantization stated)" : " with quantization None");
  }
}

}  // namespace

EngineLogCatalogParts EngineLogToCatalog(const EngineLogFacts& f,
                                         std::optional<uint32_t> stated_block_size) {
  EngineLogCatalogParts parts;
  for (const EngineLogLine& l : f.matched_lines) {
    parts.raw_lines.push_back(absl::StrCat("line ", l.line_number, ": ", l.text));
  }
  std::vector<std::string> notes = f.notes;
  std::optional<v1::KvPool> kv;
  if (f.kv_pool_tokens || f.max_concurrency || f.gpu_blocks) {
    kv.emplace();
    kv->set_name("engine start-up log");
    if (f.kv_pool_tokens) kv->set_tokens(*f.kv_pool_tokens);
    PoolFromBlocks(f, stated_block_size, *kv, notes);
    if (f.max_concurrency) kv->set_max_concurrent_sequences(*f.max_concurrency);
    if (f.max_concurrency_at_tokens) kv->set_at_sequence_tokens(*f.max_concurrency_at_tokens);
  }
  const bool memory = f.weights_bytes || f.kv_cache_bytes || f.cuda_graph_bytes ||
                      f.gpu_total_bytes || f.activation_peak_bytes || f.non_torch_bytes ||
                      f.profiled_peak_bytes;
  std::optional<v1::MemoryAccount> account;
  if (memory) account = AccountOf(f, notes);
  parts.remarks = f.conflicts;
  parts.remarks.insert(parts.remarks.end(), notes.begin(), notes.end());
  std::string note = absl::StrCat("engine log: ", absl::StrJoin(parts.raw_lines, " | "));
  if (!parts.remarks.empty()) absl::StrAppend(&note, " | ", absl::StrJoin(parts.remarks, " | "));
  if (note.size() > kMaxNoteBytes) note = absl::StrCat(note.substr(0, kMaxNoteBytes), "…");
  if (kv) {
    kv->set_note(note);
    parts.kv_pool = *std::move(kv);
  }
  if (account) {
    account->set_note(note);
    parts.memory_account = *std::move(account);
  }
  if (f.weights_bytes && *f.weights_bytes > 0) {
    v1::WeightFootprint& w = parts.weight_footprint.emplace();
    w.set_name("engine start-up log");
    w.set_scope("per GPU");
    w.set_bytes(*f.weights_bytes);
    w.set_note(note);
  }
  parts.engine = EngineOf(f);
  WeightFormatOf(f, parts);
  if (f.tp || f.pp) {
    v1::Parallelism& p = parts.parallelism.emplace();
    if (f.tp) p.set_tp(*f.tp);
    if (f.pp) p.set_pp(*f.pp);
  }
  return parts;
}

}  // namespace capplan::service
