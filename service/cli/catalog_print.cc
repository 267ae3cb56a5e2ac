#include "service/cli/catalog_print.h"

#include <algorithm>
#include <optional>
#include <sstream>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/strings/str_split.h"
#include "service/cli/context.h"
#include "service/cli/format.h"

namespace capplan::service {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

std::string EnumTail(const std::string& name) {
  return absl::AsciiStrToLower(name.substr(name.rfind('_') + 1));
}

std::string WeightFormatText(v1::WeightFormat f) {
  const std::string name = v1::WeightFormat_Name(f);
  return absl::AsciiStrToLower(name.substr(std::string("WEIGHT_FORMAT_").size()));
}

std::string GiBText(uint64_t bytes) { return absl::StrFormat("%.2f GiB", bytes / kGiB); }

std::string Secs(double s) { return absl::StrFormat("%.4g s", s); }

// "<key> <value>" pairs joined by ", ", skipping the absent ones.
class Parts {
 public:
  void Add(bool has, const std::string& text) {
    if (has) parts_.push_back(text);
  }
  bool empty() const { return parts_.empty(); }
  std::string Join() const { return absl::StrJoin(parts_, ", "); }

 private:
  std::vector<std::string> parts_;
};

void Note(const std::string& note, std::ostream& out) {
  if (!note.empty()) out << "      note: " << note << "\n";
}

void Heading(const char* title, int count, std::ostream& out) {
  if (count > 0) out << "\n  " << title << " (" << count << "):\n";
}

std::string WorkloadText(const v1::Workload& w) {
  Parts p;
  p.Add(w.has_input_tokens(), absl::StrFormat("%s input tokens", FormatCount(w.input_tokens())));
  p.Add(w.has_output_tokens(), absl::StrFormat("%s output tokens", FormatCount(w.output_tokens())));
  p.Add(w.has_prefix_cache_hit_rate(),
        absl::StrFormat("prefix-cache hits %.0f%%", 100 * w.prefix_cache_hit_rate()));
  p.Add(w.synchronized(), "synchronized waves");
  p.Add(!w.input_description().empty(), w.input_description());
  p.Add(!w.output_tokens_note().empty(), w.output_tokens_note());
  return p.empty() ? "not stated" : p.Join();
}

void PrintHeader(const v1::Baseline& b, std::ostream& out) {
  const v1::Provenance& p = b.provenance();
  const v1::DeploymentConfig& d = b.deployment();
  out << b.id() << ": " << b.title() << "\n"
      << "  source:      " << p.source_document() << (p.section().empty() ? "" : ", " + p.section())
      << "\n";
  if (!p.date().empty()) out << "  date:        " << p.date() << "\n";
  if (!p.measured_by().empty()) out << "  measured by: " << p.measured_by() << "\n";
  if (!p.benchmark_tool().empty()) out << "  tool:        " << p.benchmark_tool() << "\n";
  if (!p.tpot_definition().empty()) out << "  TPOT:        " << p.tpot_definition() << "\n";
  if (!p.notes().empty()) out << "  notes:       " << p.notes() << "\n";
  out << "  model:       " << d.model_id();
  if (d.has_quantization())
    out << " (weights " << WeightFormatText(d.quantization().format()) << ")";
  out << "\n  hardware:    " << Plural(d.gpu_count(), "GPU", "GPUs") << " × "
      << (d.hardware_id().empty() ? "(GPU not named)" : d.hardware_id());
  if (d.node_count() > 1) out << " on " << Plural(d.node_count(), "node", "nodes");
  out << "\n";
  if (!d.hardware_description().empty())
    out << "               " << d.hardware_description() << "\n";
  if (d.has_interconnect()) out << "  link:        " << LinkName(d.interconnect()) << "\n";
}

void PrintEngine(const v1::DeploymentConfig& d, std::ostream& out) {
  const v1::EngineConfig& e = d.engine();
  const v1::Parallelism& p = d.parallelism();
  out << "  engine:      "
      << (e.kind() == v1::ENGINE_KIND_UNSPECIFIED ? "not stated" : EngineName(e.kind()))
      << (e.version().empty() ? "" : " " + e.version());
  Parts par;
  par.Add(p.tp() > 0, absl::StrCat("tp ", p.tp()));
  par.Add(p.pp() > 0, absl::StrCat("pp ", p.pp()));
  par.Add(p.ep() > 1, absl::StrCat("ep ", p.ep()));
  par.Add(p.dp() > 0, absl::StrCat("dp ", p.dp()));
  par.Add(p.dp_attention(), "dp-attention");
  if (!par.empty()) out << "; " << par.Join();
  out << "\n";
  Parts s;
  s.Add(e.gpu_memory_utilization() > 0,
        absl::StrFormat("gpu_memory_utilization %.2f", e.gpu_memory_utilization()));
  s.Add(e.mem_fraction_static() > 0,
        absl::StrFormat("mem_fraction_static %.2f", e.mem_fraction_static()));
  s.Add(e.kv_cache_free_gpu_memory_fraction() > 0,
        absl::StrFormat("kv_cache_free_gpu_memory_fraction %.2f",
                        e.kv_cache_free_gpu_memory_fraction()));
  s.Add(e.max_model_len() > 0,
        absl::StrCat("max_model_len ", FormatCount(e.max_model_len()), " tokens"));
  s.Add(
      e.max_num_batched_tokens() > 0,
      absl::StrCat("max_num_batched_tokens ", FormatCount(e.max_num_batched_tokens()), " tokens"));
  s.Add(e.max_num_seqs() > 0, absl::StrCat("max_num_seqs ", e.max_num_seqs(), " requests"));
  s.Add(e.block_size() > 0, absl::StrCat("block ", e.block_size(), " tokens"));
  s.Add(e.kv_cache_dtype() != v1::KV_CACHE_DTYPE_UNSPECIFIED,
        absl::StrCat("KV cache ", EnumTail(v1::KvCacheDtype_Name(e.kv_cache_dtype()))));
  s.Add(e.enforce_eager(), "eager (no CUDA graphs)");
  s.Add(e.sampler_backend() == v1::SAMPLER_BACKEND_NATIVE,
        "PyTorch-native top-k/top-p sampler (no FlashInfer)");
  s.Add(d.cuda_graphs_piecewise_only(), "piecewise CUDA graphs only");
  s.Add(e.language_model_only(), "language model only (no vision tower)");
  s.Add(e.has_free_memory_at_start_bytes(),
        absl::StrFormat("%.2f GiB free at start", e.free_memory_at_start_bytes() / 1073741824.0));
  s.Add(e.enable_prefix_caching(), "prefix caching");
  s.Add(e.has_speculative(), absl::StrCat("speculative ", SpeculationText(e.speculative())));
  s.Add(!e.extra_flags().empty(), absl::StrCat("flags: ", e.extra_flags()));
  if (!s.empty()) out << "  settings:    " << s.Join() << "\n";
  if (d.has_concurrency_gate()) {
    out << "  gate:        " << Plural(d.concurrency_gate(), "request", "requests")
        << " at once (operator's concurrency gate)\n";
  }
}

void PrintMemoryAccounts(const v1::Baseline& b, std::ostream& out) {
  Heading("memory accounts", b.memory_accounts_size(), out);
  for (const v1::MemoryAccount& m : b.memory_accounts()) {
    Parts p;
    p.Add(m.has_weights_bytes(), "weights " + GiBText(m.weights_bytes()));
    p.Add(m.has_weights_and_non_torch_bytes(),
          "weights + non-torch " + GiBText(m.weights_and_non_torch_bytes()));
    p.Add(m.has_activation_peak_bytes(), "activation peak " + GiBText(m.activation_peak_bytes()));
    p.Add(m.has_non_torch_bytes(), "non-torch " + GiBText(m.non_torch_bytes()));
    p.Add(m.has_cuda_graph_bytes(), "CUDA graphs " + GiBText(m.cuda_graph_bytes()));
    p.Add(m.has_kv_cache_bytes(), "KV cache " + GiBText(m.kv_cache_bytes()));
    p.Add(m.has_used_bytes(), "used " + GiBText(m.used_bytes()));
    p.Add(m.has_capacity_bytes(), "of " + GiBText(m.capacity_bytes()));
    p.Add(m.has_used_fraction(), absl::StrFormat("%.1f%% used", 100 * m.used_fraction()));
    out << "    " << m.name() << " (" << (m.scope().empty() ? "scope not stated" : m.scope())
        << "): " << (p.empty() ? "no figures" : p.Join()) << "\n";
    Note(m.note(), out);
  }
}

void PrintKvPools(const v1::Baseline& b, std::ostream& out) {
  Heading("KV pools", b.kv_pools_size(), out);
  for (const v1::KvPool& pool : b.kv_pools()) {
    out << "    " << pool.name() << ": ";
    if (pool.has_tokens()) {
      out << FormatCount(static_cast<double>(pool.tokens())) << " tokens";
    } else {
      out << "size in tokens not stated";
    }
    if (pool.has_max_concurrent_sequences()) {
      out << absl::StrFormat("; %g sequences", pool.max_concurrent_sequences());
      if (pool.has_at_sequence_tokens()) {
        out << " of " << FormatCount(static_cast<double>(pool.at_sequence_tokens())) << " tokens";
      }
      out << " at once";
    }
    if (pool.has_speculative()) out << "; speculative " << SpeculationText(pool.speculative());
    if (pool.expert_parallel()) out << "; expert parallel";
    out << "\n";
    Note(pool.note(), out);
  }
}

void PrintWeightFootprints(const v1::Baseline& b, std::ostream& out) {
  Heading("weights", b.weight_footprints_size(), out);
  for (const v1::WeightFootprint& w : b.weight_footprints()) {
    out << "    " << w.name() << " (" << (w.scope().empty() ? "scope not stated" : w.scope())
        << "): " << GiBText(w.bytes()) << absl::StrFormat(" (%.1f GB)", w.bytes() / 1e9)
        << (w.expert_parallel() ? ", expert parallel" : "") << "\n";
    Note(w.note(), out);
  }
}

std::string Opt(bool has, double v, const char* format) {
  return has ? absl::StrFormat(format, v) : std::string("-");
}

std::string LoadOf(const v1::SweepRow& row) {
  if (row.has_concurrency()) return Plural(row.concurrency(), "user", "users");
  if (row.has_arrival_rate_rps()) return absl::StrFormat("%g req/s", row.arrival_rate_rps());
  if (row.has_burst_requests()) return absl::StrCat("burst of ", row.burst_requests());
  return "-";
}

void PrintSweep(const v1::Sweep& sweep, std::ostream& out) {
  out << "    " << sweep.name() << " (" << (sweep.closed_loop() ? "closed loop" : "open loop")
      << "; workload: " << WorkloadText(sweep.workload());
  if (sweep.has_speculative()) out << "; speculative " << SpeculationText(sweep.speculative());
  out << ")\n";
  if (!sweep.description().empty()) out << "      " << sweep.description() << "\n";
  TextTable table({"LOAD", "OUTPUT (tok/s)", "PER USER (tok/s)", "REQ/S (req/s)", "TTFT", "TPOT",
                   "ITL", "E2E", "REQUESTS (ok/all)", "LABEL"});
  for (const v1::SweepRow& row : sweep.rows()) {
    std::string requests = "-";
    if (row.has_requests()) {
      requests = absl::StrCat(row.requests() - std::min(row.requests(), row.failed_requests()), "/",
                              row.requests());
    }
    table.AddRow({LoadOf(row),
                  Opt(row.has_output_tokens_per_second(), row.output_tokens_per_second(), "%.1f"),
                  Opt(row.has_per_user_output_tokens_per_second(),
                      row.per_user_output_tokens_per_second(), "%.2f"),
                  Opt(row.has_requests_per_second(), row.requests_per_second(), "%.3f"),
                  LatencyText(row.ttft()), LatencyText(row.tpot()), LatencyText(row.itl()),
                  LatencyText(row.e2e()), requests, row.label()});
  }
  std::ostringstream text;
  table.Print(text);
  for (absl::string_view line : absl::StrSplit(text.str(), '\n', absl::SkipEmpty())) {
    out << "      " << line << "\n";
  }
  for (const v1::SweepRow& row : sweep.rows()) {
    if (!row.note().empty()) out << "      note (" << LoadOf(row) << "): " << row.note() << "\n";
  }
}

void PrintSustainedRuns(const v1::Baseline& b, std::ostream& out) {
  Heading("sustained runs", b.sustained_runs_size(), out);
  for (const v1::SustainedRun& r : b.sustained_runs()) {
    Parts p;
    p.Add(r.requests() > 0, absl::StrFormat("%d of %s succeeded", r.succeeded(),
                                            Plural(r.requests(), "request", "requests")));
    p.Add(r.has_arrival_rate_rps(), absl::StrFormat("%.2f req/s", r.arrival_rate_rps()));
    p.Add(r.has_output_tokens_per_second(),
          absl::StrFormat("%.1f output tok/s", r.output_tokens_per_second()));
    p.Add(r.has_ttft(), "TTFT " + LatencyText(r.ttft()));
    p.Add(r.has_duration_seconds(), absl::StrFormat("%.0f s", r.duration_seconds()));
    out << "    " << r.name() << ": " << p.Join() << "\n"
        << "      workload: " << WorkloadText(r.workload()) << "\n";
    Note(r.note(), out);
  }
}

void PrintSpeculativeVariants(const v1::Baseline& b, std::ostream& out) {
  Heading("speculative variants", b.speculative_variants_size(), out);
  for (const v1::SpeculativeVariant& v : b.speculative_variants()) {
    Parts p;
    p.Add(true, "speculative " + SpeculationText(v.speculative()));
    p.Add(v.expert_parallel(), "expert parallel");
    p.Add(v.has_concurrency(), Plural(v.concurrency(), "user", "users"));
    p.Add(v.has_output_tokens_per_second(),
          absl::StrFormat("%.2f output tok/s", v.output_tokens_per_second()));
    p.Add(v.has_ttft(), "TTFT " + LatencyText(v.ttft()));
    out << "    " << v.name() << ": " << p.Join() << "\n";
    Note(v.note(), out);
  }
}

// The one figure of a latency the source gives, whatever its statistic.
std::optional<double> OneFigure(const v1::LatencyFigures& f) {
  if (f.has_p50_seconds()) return f.p50_seconds();
  if (f.has_mean_seconds()) return f.mean_seconds();
  if (f.has_reported_seconds()) return f.reported_seconds();
  return std::nullopt;
}

void PrintLongContextRuns(const v1::Baseline& b, std::ostream& out) {
  Heading("long-context runs", b.long_context_runs_size(), out);
  for (const v1::LongContextRun& r : b.long_context_runs()) {
    Parts p;
    p.Add(true, "speculative " + SpeculationText(r.speculative()));
    p.Add(r.expert_parallel(), "expert parallel");
    p.Add(r.has_concurrency(), Plural(r.concurrency(), "user", "users"));
    p.Add(r.has_ttft(), "TTFT " + LatencyText(r.ttft()));
    p.Add(r.has_decode_tokens_per_second(),
          absl::StrFormat("decode %.1f tok/s per user (after the first token, TTFT excluded)",
                          r.decode_tokens_per_second()));
    p.Add(r.has_tpot(), "TPOT " + LatencyText(r.tpot()));
    const std::optional<double> ttft = OneFigure(r.ttft());
    p.Add(
        r.workload().has_output_tokens() && ttft.has_value() && r.has_decode_tokens_per_second(),
        absl::StrFormat("per-user rate %.1f tok/s including TTFT (output ÷ (TTFT + output ÷ "
                        "decode rate))",
                        r.workload().output_tokens() /
                            (ttft.value_or(0) + r.workload().output_tokens() /
                                                    std::max(1e-9, r.decode_tokens_per_second()))));
    p.Add(r.has_input_tokens_per_second(),
          absl::StrFormat("input %s tok/s", FormatCount(r.input_tokens_per_second())));
    p.Add(r.has_succeeded() || r.has_failed(),
          absl::StrFormat("%d succeeded, %d failed", r.succeeded(), r.failed()));
    out << "    " << r.name() << ": " << p.Join() << "\n"
        << "      workload: " << WorkloadText(r.workload()) << "\n";
    Note(r.note(), out);
  }
}

std::string Range(bool has_min, double lo, bool has_max, double hi, const char* format) {
  if (has_min && has_max && lo != hi) {
    return absl::StrCat(absl::StrFormat(format, lo), "–", absl::StrFormat(format, hi));
  }
  return absl::StrFormat(format, has_min ? lo : hi);
}

std::string TierText(v1::StorageTier tier) {
  switch (tier) {
    case v1::STORAGE_TIER_HBM:
      return "HBM";
    case v1::STORAGE_TIER_HOST_DRAM:
      return "host DRAM";
    case v1::STORAGE_TIER_LOCAL_NVME:
      return "local NVMe";
    case v1::STORAGE_TIER_NVME_OF:
      return "NVMe-oF";
    case v1::STORAGE_TIER_NONE:
      return "none: recompute by prefill";
    default:
      return "tier not stated";
  }
}

// "-32% to -26%" (a range of signed changes reads badly with a dash).
std::string ChangeRange(bool has_min, double lo, bool has_max, double hi) {
  if (has_min && has_max && lo != hi) return absl::StrFormat("%+.0f%% to %+.0f%%", lo, hi);
  return absl::StrFormat("%+.0f%%", has_min ? lo : hi);
}

void PrintKvTierRuns(const v1::Baseline& b, std::ostream& out) {
  Heading("KV-tier runs", b.kv_tier_runs_size(), out);
  for (const v1::KvTierRun& r : b.kv_tier_runs()) {
    Parts p;
    p.Add(r.has_output_tokens_per_second(),
          absl::StrFormat("%s tok/s", FormatCount(r.output_tokens_per_second())));
    p.Add(r.has_throughput_gain_fraction_min() || r.has_throughput_gain_fraction_max(),
          "throughput +" +
              Range(r.has_throughput_gain_fraction_min(), 100 * r.throughput_gain_fraction_min(),
                    r.has_throughput_gain_fraction_max(), 100 * r.throughput_gain_fraction_max(),
                    "%.0f") +
              "%");
    p.Add(r.has_restore_speedup_min() || r.has_restore_speedup_max(),
          "restore " +
              Range(r.has_restore_speedup_min(), r.restore_speedup_min(),
                    r.has_restore_speedup_max(), r.restore_speedup_max(), "%g") +
              "× faster than recompute");
    p.Add(r.has_ttft_before(), "TTFT before " + LatencyText(r.ttft_before()));
    p.Add(r.has_ttft_after(), "after " + LatencyText(r.ttft_after()));
    p.Add(r.has_ttft_p50_before_min_seconds() || r.has_ttft_p50_before_max_seconds(),
          "TTFT p50 before " +
              Range(r.has_ttft_p50_before_min_seconds(), r.ttft_p50_before_min_seconds(),
                    r.has_ttft_p50_before_max_seconds(), r.ttft_p50_before_max_seconds(), "%.2f") +
              " s");
    p.Add(r.has_ttft_p50_after_min_seconds() || r.has_ttft_p50_after_max_seconds(),
          "after " +
              Range(r.has_ttft_p50_after_min_seconds(), r.ttft_p50_after_min_seconds(),
                    r.has_ttft_p50_after_max_seconds(), r.ttft_p50_after_max_seconds(), "%.2f") +
              " s");
    p.Add(r.has_ttft_change_fraction_min() || r.has_ttft_change_fraction_max(),
          "TTFT change " +
              ChangeRange(r.has_ttft_change_fraction_min(), 100 * r.ttft_change_fraction_min(),
                          r.has_ttft_change_fraction_max(), 100 * r.ttft_change_fraction_max()));
    out << "    " << r.name() << " (" << TierText(r.tier())
        << (r.tier_description().empty() ? "" : ": " + r.tier_description())
        << "): " << (p.empty() ? "no figures" : p.Join()) << "\n";
    if (!r.model_note().empty()) out << "      model: " << r.model_note() << "\n";
    Note(r.note(), out);
  }
}

void PrintMultiNode(const v1::Baseline& b, std::ostream& out) {
  if (!b.has_multi_node_method()) return;
  const v1::MultiNodeMethod& m = b.multi_node_method();
  out << "\n  multi-node method:\n"
      << absl::StrFormat(
             "    scaling efficiency X_N ÷ (N × X_1) of at least %.0f%%; TTFT p99 at most %.0f%% "
             "worse than one node\n",
             100 * m.min_scaling_efficiency(), 100 * m.max_ttft_p99_degradation_fraction());
  Parts gate;
  gate.Add(m.has_gate_ttft_change_fraction(),
           absl::StrFormat("TTFT change %+.0f%% or better", 100 * m.gate_ttft_change_fraction()));
  gate.Add(m.has_gate_throughput_gain_fraction_min() || m.has_gate_throughput_gain_fraction_max(),
           "throughput +" +
               Range(m.has_gate_throughput_gain_fraction_min(),
                     100 * m.gate_throughput_gain_fraction_min(),
                     m.has_gate_throughput_gain_fraction_max(),
                     100 * m.gate_throughput_gain_fraction_max(), "%.0f") +
               "%");
  if (!gate.empty()) out << "    gate: " << gate.Join() << "\n";
  Note(m.note(), out);
}

void PrintQualityGates(const v1::Baseline& b, std::ostream& out) {
  Heading("quality gates", b.quality_gates_size(), out);
  for (const v1::QualityGate& g : b.quality_gates()) {
    Parts p;
    p.Add(!g.checks().empty(), absl::StrCat("checks ", absl::StrJoin(g.checks(), ", ")));
    p.Add(g.has_input_tokens(), absl::StrCat(FormatCount(g.input_tokens()), " input tokens"));
    p.Add(g.has_output_tokens(), absl::StrCat(FormatCount(g.output_tokens()), " output tokens"));
    p.Add(g.has_duration_seconds(), absl::StrFormat("%.0f s", g.duration_seconds()));
    p.Add(g.has_total_count(),
          absl::StrFormat("%d of %d passed", g.passed_count(), g.total_count()));
    p.Add(!g.figures().empty(), g.figures());
    out << "    " << g.name() << ": " << (g.passed() ? "PASS" : "FAIL")
        << (p.empty() ? "" : " (" + p.Join() + ")") << "\n";
    if (!g.description().empty()) out << "      " << g.description() << "\n";
  }
}

std::string TokensText(double v) {
  if (v >= 1e9) return absl::StrFormat("%.3g billion", v / 1e9);
  if (v >= 1e6) return absl::StrFormat("%.3g million", v / 1e6);
  return FormatCount(v);
}

void PrintCapacityClaims(const v1::Baseline& b, std::ostream& out) {
  Heading("capacity claims", b.capacity_claims_size(), out);
  for (const v1::CapacityClaim& c : b.capacity_claims()) {
    Parts p;
    p.Add(c.has_requests_per_second(), absl::StrFormat("%.2f req/s", c.requests_per_second()));
    p.Add(c.has_input_tokens() && c.has_output_tokens(),
          absl::StrFormat("× (%s + %s) tokens", FormatCount(c.input_tokens()),
                          FormatCount(c.output_tokens())));
    p.Add(c.has_tokens_per_second(), absl::StrFormat("%.0f tok/s", c.tokens_per_second()));
    p.Add(c.has_tokens_per_month(), TokensText(c.tokens_per_month()) + " tokens/month");
    p.Add(c.has_output_tokens_per_month(),
          TokensText(c.output_tokens_per_month()) + " output tokens/month");
    p.Add(c.has_days_per_month(), absl::StrFormat("%.0f-day month", c.days_per_month()));
    p.Add(c.extrapolated(), "extrapolated by the source, not measured");
    out << "    " << c.name() << ": " << p.Join() << "\n";
    Note(c.note(), out);
  }
}

void PrintTexts(const char* title, const google::protobuf::RepeatedPtrField<std::string>& texts,
                std::ostream& out) {
  Heading(title, texts.size(), out);
  for (const std::string& t : texts) out << "    - " << t << "\n";
}

}  // namespace

namespace {

// "NVLink 900 GB/s"; "xGMI (bandwidth not stated)" for a card whose source
// gives no link bandwidth.
std::string LinkWithBandwidth(const char* kind, double bytes_per_second) {
  if (!(bytes_per_second > 0)) return absl::StrCat(kind, " (bandwidth not stated)");
  return absl::StrFormat("%s %s GB/s", kind, FormatScaled(bytes_per_second, 1e9, 0));
}

}  // namespace

std::string LinkName(const v1::Interconnect& link) {
  switch (link.kind()) {
    case v1::LINK_KIND_NVLINK:
      return LinkWithBandwidth("NVLink", link.bandwidth_bytes_per_second());
    case v1::LINK_KIND_XGMI:
      return LinkWithBandwidth("xGMI", link.bandwidth_bytes_per_second());
    case v1::LINK_KIND_PCIE:
      return absl::StrCat(
          "PCIe", link.pcie_generation() > 0 ? absl::StrCat(" ", link.pcie_generation()) : "",
          link.peer_to_peer() ? "" : " no-P2P");
    case v1::LINK_KIND_NVLINK_C2C:
      return "NVLink-C2C";
    case v1::LINK_KIND_NONE:
      return "none";
    default:
      return "-";
  }
}

std::string SpeculationText(const v1::SpeculativeDecoding& s) {
  if (s.method() == v1::SPECULATIVE_METHOD_UNSPECIFIED) return "not stated";
  if (s.method() == v1::SPECULATIVE_METHOD_NONE) return "none";
  std::string method = v1::SpeculativeMethod_Name(s.method());
  std::string out = absl::AsciiStrToLower(method.substr(std::string("SPECULATIVE_METHOD_").size()));
  absl::StrAppend(&out, s.num_speculative_tokens() > 0
                            ? absl::StrCat(", ", Plural(s.num_speculative_tokens(), "draft token",
                                                        "draft tokens"))
                            : ", draft tokens not stated");
  if (s.acceptance_rate() > 0) {
    absl::StrAppend(&out, absl::StrFormat(", acceptance %.2f", s.acceptance_rate()));
  }
  return out;
}

std::string LatencyText(const v1::LatencyFigures& f) {
  Parts p;
  p.Add(f.has_p50_seconds(), "p50 " + Secs(f.p50_seconds()));
  p.Add(f.has_p90_seconds(), "p90 " + Secs(f.p90_seconds()));
  p.Add(f.has_p95_seconds(), "p95 " + Secs(f.p95_seconds()));
  p.Add(f.has_p99_seconds(), "p99 " + Secs(f.p99_seconds()));
  p.Add(f.has_mean_seconds(), "mean " + Secs(f.mean_seconds()));
  p.Add(f.has_min_seconds(), "min " + Secs(f.min_seconds()));
  p.Add(f.has_max_seconds(), "max " + Secs(f.max_seconds()));
  p.Add(f.has_reported_seconds(), Secs(f.reported_seconds()) + " (statistic not stated)");
  return p.empty() ? "-" : p.Join();
}

void PrintHardware(const v1::Hardware& h, std::ostream& out) {
  TextTable table({"FIELD", "VALUE"});
  table.AddRow({"id", h.id()});
  table.AddRow({"name", VendorAndName(h.vendor(), h.name())});
  table.AddRow({"architecture", h.architecture()});
  table.AddRow({"memory", FormatGiB(h.memory_bytes()) + " GiB"});
  table.AddRow({"usable memory", FormatGiB(h.usable_memory_bytes()) + " GiB"});
  table.AddRow(
      {"memory bandwidth", FormatScaled(h.memory_bandwidth_bytes_per_second(), 1e12, 2) + " TB/s"});
  for (const v1::PeakCompute& peak : h.peak_compute()) {
    std::string format = v1::NumberFormat_Name(peak.format());
    table.AddRow({absl::StrCat("dense ", format.substr(format.rfind('_') + 1)),
                  FormatScaled(peak.dense_flops_per_second(), 1e12, 1) + " TFLOP/s"});
  }
  table.AddRow({"intra-node link", LinkName(h.intra_node())});
  if (h.has_inter_node()) {
    table.AddRow(
        {"network", absl::StrCat(h.inter_node().kind(), " ",
                                 FormatScaled(h.inter_node().bandwidth_bytes_per_second(), 1e9, 0),
                                 " GB/s per GPU")});
  }
  if (h.max_gpus_per_node() > 0) {
    table.AddRow({"GPUs per node", absl::StrCat("up to ", h.max_gpus_per_node())});
  }
  if (h.power_watts() > 0) table.AddRow({"power", absl::StrFormat("%.0f W", h.power_watts())});
  table.AddRow({"unified memory", h.unified_memory() ? "yes" : "no"});
  table.Print(out);
  out << "\nsources:\n";
  for (const v1::Citation& c : h.sources()) {
    out << "  " << absl::StrJoin(c.fields(), ", ") << ": " << c.document()
        << (c.note().empty() ? "" : " (" + c.note() + ")") << "\n";
  }
}

std::string BillionsText(uint64_t params) {
  return params == 0 ? "-" : absl::StrFormat("%.2f", params / 1e9);
}

std::string WeightsText(const v1::Model& m) {
  if (!m.has_quantization()) return EnumTail(v1::NumberFormat_Name(m.native_dtype()));
  return WeightFormatText(m.quantization().format());
}

namespace {

// "48 layers: 36 linear attention + 12 full attention; 48 MoE".
std::string LayerText(const v1::Model& m, uint32_t num_layers) {
  std::vector<std::pair<v1::AttentionKind, uint64_t>> attention;
  uint64_t moe = 0;
  for (const v1::LayerBlock& block : m.layer_blocks()) {
    for (const v1::LayerSpec& spec : block.layers()) {
      const uint64_t n =
          static_cast<uint64_t>(std::max<uint32_t>(1, block.repeat())) * spec.count();
      auto it = std::find_if(attention.begin(), attention.end(),
                             [&](const auto& e) { return e.first == spec.attention(); });
      if (it == attention.end()) {
        attention.emplace_back(spec.attention(), n);
      } else {
        it->second += n;
      }
      if (spec.mlp() == v1::MLP_KIND_MOE) moe += n;
    }
  }
  std::vector<std::string> kinds;
  for (const auto& [kind, n] : attention) {
    std::string name = v1::AttentionKind_Name(kind);
    name = absl::AsciiStrToLower(name.substr(std::string("ATTENTION_KIND_").size()));
    absl::StrReplaceAll({{"_", " "}}, &name);
    kinds.push_back(absl::StrCat(n, " ", name == "unspecified" ? "full" : name));
  }
  std::string out = Plural(num_layers, "layer", "layers");
  if (!kinds.empty()) absl::StrAppend(&out, ": ", absl::StrJoin(kinds, " + "), " attention");
  if (moe > 0) absl::StrAppend(&out, "; ", moe, " with MoE");
  return out;
}

}  // namespace

void PrintModelInfo(const v1::ModelInfo& info, std::ostream& out) {
  const v1::Model& m = info.model();
  const v1::ModelDerived& d = info.derived();
  TextTable table({"FIELD", "VALUE"});
  table.AddRow({"id", m.id().empty() ? "(not in the catalogue)" : m.id()});
  table.AddRow({"hf repo", m.hf_repo_id().empty() ? "-" : m.hf_repo_id()});
  if (!m.family().empty()) table.AddRow({"family", m.family()});
  if (!m.architecture_class().empty()) table.AddRow({"architecture", m.architecture_class()});
  table.AddRow({"layers", LayerText(m, d.num_layers())});
  table.AddRow({"hidden size", FormatCount(static_cast<double>(m.hidden_size()))});
  table.AddRow({"attention heads / KV heads",
                absl::StrCat(m.num_attention_heads(), " / ", m.num_kv_heads())});
  if (m.sliding_window_tokens() > 0) {
    table.AddRow({"sliding window", FormatCount(m.sliding_window_tokens()) + " tokens"});
  }
  if (m.has_mla()) {
    table.AddRow({"MLA (kv_lora_rank, rope dim)",
                  absl::StrCat(m.mla().kv_lora_rank(), ", ", m.mla().qk_rope_head_dim())});
  }
  if (m.has_moe()) {
    table.AddRow({"experts (routed, per token, shared)",
                  absl::StrCat(m.moe().num_routed_experts(), ", ", m.moe().experts_per_token(),
                               ", ", m.moe().num_shared_experts())});
  }
  if (m.num_mtp_layers() > 0) table.AddRow({"MTP layers", absl::StrCat(m.num_mtp_layers())});
  table.AddRow({"parameters (computed)", BillionsText(d.total_parameters()) + " billion"});
  table.AddRow(
      {"active per token (computed)", BillionsText(d.active_parameters_per_token()) + " billion"});
  table.AddRow({"KV cache per token at 16 bit",
                d.kv_bytes_per_token_bf16() == 0
                    ? "- (no attention KV)"
                    : FormatCount(static_cast<double>(d.kv_bytes_per_token_bf16())) +
                          " bytes (whole model, no parallelism)"});
  if (d.state_bytes_per_request() > 0) {
    table.AddRow({"state per request",
                  FormatCount(static_cast<double>(d.state_bytes_per_request())) + " bytes"});
  }
  table.AddRow(
      {"native context", FormatCount(static_cast<double>(m.native_context_tokens())) + " tokens"});
  std::string weights = WeightsText(m);
  if (m.has_quantization()) {
    const v1::Quantization& q = m.quantization();
    if (q.group_size() > 0) absl::StrAppend(&weights, ", group ", q.group_size());
    if (!q.method().empty()) absl::StrAppend(&weights, " (", q.method(), ")");
  }
  table.AddRow({"weights", weights});
  table.Print(out);
}

void PrintBaseline(const v1::Baseline& b, std::ostream& out) {
  PrintHeader(b, out);
  PrintEngine(b.deployment(), out);
  PrintMemoryAccounts(b, out);
  PrintKvPools(b, out);
  PrintWeightFootprints(b, out);
  Heading("sweeps", b.sweeps_size(), out);
  for (const v1::Sweep& sweep : b.sweeps()) PrintSweep(sweep, out);
  PrintSustainedRuns(b, out);
  PrintSpeculativeVariants(b, out);
  PrintLongContextRuns(b, out);
  PrintKvTierRuns(b, out);
  PrintMultiNode(b, out);
  PrintQualityGates(b, out);
  PrintCapacityClaims(b, out);
  PrintTexts("other findings", b.other_findings(), out);
  PrintTexts("consistency notes", b.consistency_notes(), out);
  out << "\n(--json prints the baseline message itself)\n";
}

}  // namespace capplan::service
