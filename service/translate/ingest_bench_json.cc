// vLLM `vllm bench serve --save-result` / benchmarks/benchmark_serving.py
// JSON and SGLang `python -m sglang.bench_serving --output-file` JSON lines:
// one flat object per run with the same naming scheme.
//
// Keys read (vLLM vllm/benchmarks/serve.py; SGLang python/sglang/bench_serving.py
// at 0033168f0f58b2bc05aa0273bd475d9c01bafb1c, `result = {...}`):
//   load        max_concurrency, request_rate (number, "inf", or Python's bare
//               Infinity), burstiness, num_prompts
//   totals      duration (s), completed, failed, total_input_tokens,
//               total_output_tokens
//   throughput  request_throughput, output_throughput, total_token_throughput
//               (SGLang total_throughput); input_throughput, request_goodput,
//               max_output_tokens_per_s, max_concurrent_requests into the note
//   latency     {mean,median,std,min,max,pN}_{ttft,tpot,itl,e2el}_ms; the older
//               vLLM `*_latency_ms` and SGLang `*_e2e_latency_ms` are E2E
//   measured    SGLang `concurrency` (mean requests in flight over the run: a
//               measurement, never the setting), accept_length
//   strings     date, model_id, backend, label, dataset_name
// Per-request lists (ttfts, itls, input_lens, …) are not read.

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "service/translate/ingest_internal.h"

namespace capplan::service::ingest_internal {
namespace {

using google::protobuf::Value;

constexpr uint64_t kMaxCount = std::numeric_limits<uint32_t>::max();
constexpr uint64_t kMaxTokens = uint64_t{1} << 53;

struct LatencyKey {
  LatencyMetric metric;
  std::string stat;
};

bool IsStatName(absl::string_view stat) {
  if (stat == "mean" || stat == "median" || stat == "std" || stat == "min" || stat == "max") {
    return true;
  }
  if (stat.size() < 2 || stat[0] != 'p') return false;
  bool dot = false;
  for (char c : stat.substr(1)) {
    if (c == '.' && !dot) {
      dot = true;
    } else if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) {
      return false;
    }
  }
  return absl::ascii_isdigit(static_cast<unsigned char>(stat.back()));
}

// "p99.9_ttft_ms" → {TTFT, "p99.9"}.
std::optional<LatencyKey> SplitLatencyKey(absl::string_view key) {
  if (!absl::ConsumeSuffix(&key, "_ms")) return std::nullopt;
  const size_t us = key.find('_');
  if (us == absl::string_view::npos) return std::nullopt;
  const absl::string_view stat = key.substr(0, us);
  const absl::string_view metric = key.substr(us + 1);
  if (!IsStatName(stat)) return std::nullopt;
  LatencyKey out{LatencyMetric::kE2e, std::string(stat)};
  if (metric == "ttft") {
    out.metric = LatencyMetric::kTtft;
  } else if (metric == "tpot") {
    out.metric = LatencyMetric::kTpot;
  } else if (metric == "itl") {
    out.metric = LatencyMetric::kItl;
  } else if (metric != "e2el" && metric != "latency" && metric != "e2e_latency") {
    return std::nullopt;
  }
  return out;
}

absl::Status ReadLoad(const JsonObject& o, RunBuilder& b) {
  IngestedRun& run = b.run();
  std::optional<uint64_t> n;
  CAPPLAN_ASSIGN_OR_RETURN(n, o.Count("max_concurrency", 1, kMaxCount));
  if (n) run.max_concurrency = static_cast<uint32_t>(*n);
  CAPPLAN_ASSIGN_OR_RETURN(n, o.Count("num_prompts", 1, kMaxCount));
  if (n) run.num_prompts = static_cast<uint32_t>(*n);
  CAPPLAN_ASSIGN_OR_RETURN(run.burstiness, o.Figure("burstiness"));
  if (run.burstiness && *run.burstiness <= 0) {
    return o.Error("burstiness", *o.Find("burstiness"), "must be positive");
  }
  if (const Value* v = o.Find("request_rate")) {
    if (v->kind_case() == Value::kStringValue) {
      const std::string s = absl::AsciiStrToLower(v->string_value());
      if (s == "trace") {
        b.AddNote("request_rate \"trace\": arrivals replayed from a trace, no load setting");
        return absl::OkStatus();
      }
      if (s != "inf" && s != "infinity") {
        return o.Error("request_rate", *v, "must be a number of requests per second or \"inf\"");
      }
      b.SetInfiniteRate();
    } else if (v->kind_case() != Value::kNumberValue) {
      return o.Error("request_rate", *v, "must be a number of requests per second or \"inf\"");
    } else if (!(v->number_value() > 0)) {
      return o.Error("request_rate", *v, "must be positive (or \"inf\")");
    } else {
      run.request_rate_rps = v->number_value();
    }
  }
  return absl::OkStatus();
}

absl::Status ReadTotals(const JsonObject& o, RunBuilder& b) {
  v1::SweepRow& row = b.run().row;
  std::optional<uint64_t> n;
  CAPPLAN_ASSIGN_OR_RETURN(n, o.Count("completed", 0, kMaxCount));
  if (n) row.set_requests(static_cast<uint32_t>(*n));
  CAPPLAN_ASSIGN_OR_RETURN(n, o.Count("failed", 0, kMaxCount));
  if (n) row.set_failed_requests(static_cast<uint32_t>(*n));
  std::optional<double> x;
  CAPPLAN_ASSIGN_OR_RETURN(x, o.Figure("duration"));
  if (x) row.set_wall_seconds(*x);
  std::optional<uint64_t> in, out;
  CAPPLAN_ASSIGN_OR_RETURN(in, o.Count("total_input_tokens", 0, kMaxTokens));
  CAPPLAN_ASSIGN_OR_RETURN(out, o.Count("total_output_tokens", 0, kMaxTokens));
  b.SetTokenTotals(in, out);
  CAPPLAN_ASSIGN_OR_RETURN(x, o.Figure("request_throughput"));
  if (x) row.set_requests_per_second(*x);
  CAPPLAN_ASSIGN_OR_RETURN(x, o.Figure("output_throughput"));
  if (x) row.set_output_tokens_per_second(*x);
  for (absl::string_view key : {"total_token_throughput", "total_throughput"}) {
    CAPPLAN_ASSIGN_OR_RETURN(x, o.Figure(key));
    if (x && !row.has_total_tokens_per_second()) row.set_total_tokens_per_second(*x);
  }
  return absl::OkStatus();
}

// Figures without a SweepRow field, kept in the note by name.
absl::Status ReadNoteFigures(const JsonObject& o, RunBuilder& b) {
  struct Extra {
    absl::string_view key;
    absl::string_view label;
    absl::string_view unit;
  };
  static constexpr Extra kExtras[] = {
      {"input_throughput", "input throughput", " tok/s"},
      {"request_goodput", "request goodput", " req/s"},
      {"request_goodput:", "request goodput", " req/s"},
      {"max_output_tokens_per_s", "peak output throughput", " tok/s"},
      {"max_concurrent_requests", "peak concurrent requests", ""},
      {"accept_length", "speculative accept length", " tokens/step"},
  };
  for (const Extra& e : kExtras) {
    std::optional<double> x;
    CAPPLAN_ASSIGN_OR_RETURN(x, o.Figure(e.key));
    if (x) b.AddNote(absl::StrCat(e.label, " ", FormatFigure(*x), e.unit));
  }
  std::optional<double> measured;
  CAPPLAN_ASSIGN_OR_RETURN(measured, o.Figure("concurrency"));
  b.run().measured_mean_in_flight = measured;
  std::vector<std::string> asked;
  for (absl::string_view key :
       {"random_input_len", "random_output_len", "random_range_ratio", "sharegpt_output_len"}) {
    const Value* v = o.Find(key);
    if (v != nullptr && v->kind_case() == Value::kNumberValue) {
      asked.push_back(absl::StrCat(key, " ", ShowJson(*v)));
    }
  }
  if (!asked.empty()) {
    b.AddNote(absl::StrCat("requested ", absl::StrJoin(asked, ", "), " (settings, not means)"));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> ReadLatencies(const JsonObject& o, RunBuilder& b) {
  int count = 0;
  for (const std::string& key : o.SortedKeys()) {
    const std::optional<LatencyKey> k = SplitLatencyKey(key);
    if (!k) continue;
    std::optional<double> ms;
    CAPPLAN_ASSIGN_OR_RETURN(ms, o.Figure(key));
    if (!ms) continue;
    b.SetLatency(k->metric, k->stat, *ms / 1000.0);
    ++count;
  }
  return count;
}

absl::Status ReadStrings(const JsonObject& o, RunBuilder& b, std::optional<std::string>& date) {
  std::optional<std::string> s;
  CAPPLAN_ASSIGN_OR_RETURN(b.run().model_id, o.String("model_id"));
  CAPPLAN_ASSIGN_OR_RETURN(s, o.String("label"));
  if (s && !s->empty()) b.run().row.set_label(*s);
  for (absl::string_view key : {"backend", "endpoint_type", "dataset_name"}) {
    CAPPLAN_ASSIGN_OR_RETURN(s, o.String(key));
    if (s && !s->empty()) b.AddNote(absl::StrCat(key, " ", *s));
  }
  CAPPLAN_ASSIGN_OR_RETURN(s, o.String("date"));
  if (s) date = NormalizeDate(*s);
  return absl::OkStatus();
}

absl::StatusOr<IngestedRun> ReadRun(const JsonObject& o, std::optional<std::string>& date) {
  RunBuilder b(o.where());
  CAPPLAN_RETURN_IF_ERROR(ReadLoad(o, b));
  CAPPLAN_RETURN_IF_ERROR(ReadTotals(o, b));
  CAPPLAN_RETURN_IF_ERROR(ReadNoteFigures(o, b));
  CAPPLAN_RETURN_IF_ERROR(ReadStrings(o, b, date));
  int latencies = 0;
  CAPPLAN_ASSIGN_OR_RETURN(latencies, ReadLatencies(o, b));
  const v1::SweepRow& row = b.run().row;
  if (latencies == 0 && !row.has_requests() && !row.has_output_tokens_per_second()) {
    return absl::InvalidArgumentError(absl::StrCat(
        o.where(), ": no benchmark figures (completed, output_throughput, *_ttft_ms, ...)"));
  }
  return b.Finish();
}

}  // namespace

absl::Status ParseBenchJson(const std::vector<JsonDocument>& docs, IngestedFile& out) {
  const bool sglang = out.format == IngestFormat::kSglangJsonl;
  // Both vLLM tools write the same keys: the file cannot tell them apart.
  out.tool = sglang ? "sglang.bench_serving" : std::string(kVllmToolEither);
  out.tpot_definition =
      sglang ? "SGLang bench_serving: (e2e - ttft) / (output tokens - 1) per request, first "
               "token excluded"
             : "vLLM benchmark_serving: (e2e - ttft) / (output tokens - 1) per request, first "
               "token excluded";
  std::vector<std::string> dates;
  for (const JsonDocument& doc : docs) {
    const std::string where = DocumentWhere(out.file_name, docs, doc);
    CAPPLAN_ASSIGN_OR_RETURN(JsonObject o, RootObject(doc, where, "a benchmark run"));
    std::optional<std::string> date;
    IngestedRun run;
    CAPPLAN_ASSIGN_OR_RETURN(run, ReadRun(o, date));
    if (date) dates.push_back(*date);
    out.runs.push_back(std::move(run));
  }
  if (!dates.empty()) {
    std::sort(dates.begin(), dates.end());
    out.date = dates.front();
    if (dates.back() != dates.front()) {
      out.notes.push_back(absl::StrCat("runs dated ", dates.front(), " to ", dates.back()));
    }
  }
  return absl::OkStatus();
}

}  // namespace capplan::service::ingest_internal
