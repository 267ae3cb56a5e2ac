// GuideLLM benchmarks.json (`guidellm benchmark --output-path benchmarks.json`),
// v0.2.x–v0.3.x and v0.4+ layouts (vllm-project/guidellm
// src/guidellm/benchmark/benchmark.py at cff0799 (v0.2.1), schemas/ at 3938355
// (v0.7.3)): {"benchmarks": [benchmark, ...]}, one run per benchmark.
//
//   load        benchmark.args.strategy (v0.2–0.3) or benchmark.config.strategy
//               (v0.4+): type_ synchronous (one request at a time: concurrency 1),
//               concurrent (streams), throughput (max_concurrency when set,
//               otherwise everything at once), constant / poisson (rate)
//   metrics     benchmark.metrics.<name>.successful, a distribution summary
//               {mean, median, min, max, std_dev, percentiles {p001 … p999}}:
//               time_to_first_token_ms → TTFT, inter_token_latency_ms → ITL,
//               request_latency (SECONDS) → E2E, requests_per_second,
//               output_tokens_per_second, tokens_per_second, request_concurrency
//               (measured), prompt_token_count, output_token_count (means)
//   totals      request_totals {successful, errored, incomplete} (benchmark or
//               metrics), duration (s)
//   TPOT        GuideLLM's time_per_output_token_ms divides by all output tokens
//               (v0.4+ also counts the time to the first token), so it is not
//               capplan's TPOT. When benchmark.requests.successful holds every
//               successful request, TPOT = (request_latency − ttft)/(output_tokens
//               − 1) per request with more than one output token, summarised as
//               numpy does (mean, linear-interpolated percentiles). Otherwise TPOT
//               stays absent; GuideLLM's own TPOT goes into the note.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "service/translate/ingest_internal.h"

namespace capplan::service::ingest_internal {
namespace {

using google::protobuf::Value;

constexpr uint64_t kMaxCount = 0xffffffffu;

// numpy.percentile's default (linear interpolation between closest ranks).
double Percentile(const std::vector<double>& sorted, double p) {
  const double rank = p / 100.0 * static_cast<double>(sorted.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(rank));
  const size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (rank - static_cast<double>(lo)) * (sorted[hi] - sorted[lo]);
}

// Civil date (UTC) of a Unix time, Howard Hinnant's days_from_civil inverse.
std::string UtcDate(double unix_seconds) {
  const int64_t z = static_cast<int64_t>(std::floor(unix_seconds / 86400.0)) + 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t d = doy - (153 * mp + 2) / 5 + 1;
  const int64_t m = mp < 10 ? mp + 3 : mp - 9;
  const int64_t y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02d", static_cast<int>(y), static_cast<int>(m),
                static_cast<int>(d));
  return buf;
}

// metrics.<key>.successful, when present.
absl::StatusOr<std::optional<JsonObject>> Successful(const JsonObject& metrics,
                                                     absl::string_view key) {
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> m, metrics.Object(key));
  if (!m) return std::optional<JsonObject>();
  return m->Object("successful");
}

absl::StatusOr<std::optional<double>> SuccessfulStat(const JsonObject& metrics,
                                                     absl::string_view key,
                                                     absl::string_view stat) {
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> d, Successful(metrics, key));
  if (!d) return std::optional<double>();
  return d->Figure(stat);
}

absl::Status ReadDistribution(const JsonObject& metrics, absl::string_view key,
                              LatencyMetric metric, double to_seconds, RunBuilder& b) {
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> d, Successful(metrics, key));
  if (!d) return absl::OkStatus();
  for (absl::string_view stat : {"mean", "median", "min", "max", "std_dev"}) {
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> x, d->Figure(stat));
    if (x) b.SetLatency(metric, stat == "std_dev" ? "std" : stat, *x * to_seconds);
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> p, d->Object("percentiles"));
  if (!p) return absl::OkStatus();
  for (const std::string& name : p->SortedKeys()) {
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> x, p->Figure(name));
    if (x) b.SetLatency(metric, name, *x * to_seconds);
  }
  return absl::OkStatus();
}

absl::Status ReadStrategy(const JsonObject& bench, RunBuilder& b) {
  std::optional<JsonObject> strategy;
  for (absl::string_view holder : {"config", "args"}) {
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> h, bench.Object(holder));
    if (h && !strategy) {
      CAPPLAN_ASSIGN_OR_RETURN(strategy, h->Object("strategy"));
    }
  }
  if (!strategy) {
    b.AddNote("no strategy in the benchmark (args.strategy / config.strategy)");
    return absl::OkStatus();
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<std::string> type, strategy->String("type_"));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> streams,
                           strategy->Count("streams", 1, kMaxCount));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> cap,
                           strategy->Count("max_concurrency", 1, kMaxCount));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> rate, strategy->Figure("rate"));
  IngestedRun& run = b.run();
  const std::string t = type.value_or("");
  run.row.set_label(t);
  if (cap) run.max_concurrency = static_cast<uint32_t>(*cap);
  if (t == "synchronous") {
    run.max_concurrency = 1;
    b.AddNote("GuideLLM synchronous: one request at a time");
  } else if (t == "concurrent") {
    if (streams) run.max_concurrency = static_cast<uint32_t>(*streams);
  } else if (t == "throughput") {
    if (!cap) b.SetInfiniteRate();
    b.AddNote("GuideLLM throughput: requests sent as fast as the concurrency cap lets them");
  } else if (t == "constant" || t == "poisson") {
    if (!rate || *rate <= 0) {
      return strategy->Error("rate", strategy->Find("rate") ? *strategy->Find("rate") : Value(),
                             "must be a positive request rate");
    }
    run.request_rate_rps = *rate;
    b.AddNote(t == "poisson" ? "GuideLLM poisson arrivals" : "GuideLLM constant arrival spacing");
  } else {
    b.AddNote(absl::StrCat("GuideLLM strategy \"", t, "\" not known: load not read"));
  }
  return absl::OkStatus();
}

absl::Status ReadTotals(const JsonObject& bench, const JsonObject& metrics, RunBuilder& b) {
  std::optional<JsonObject> totals;
  CAPPLAN_ASSIGN_OR_RETURN(totals, metrics.Object("request_totals"));
  if (!totals) {
    CAPPLAN_ASSIGN_OR_RETURN(totals, bench.Object("request_totals"));
  }
  v1::SweepRow& row = b.run().row;
  if (totals) {
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> ok, totals->Count("successful", 0, kMaxCount));
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> err, totals->Count("errored", 0, kMaxCount));
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> inc,
                             totals->Count("incomplete", 0, kMaxCount));
    if (ok) row.set_requests(static_cast<uint32_t>(*ok));
    if (err) row.set_failed_requests(static_cast<uint32_t>(*err));
    if (inc && *inc > 0) b.AddNote(absl::StrCat(*inc, " requests incomplete at the end"));
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> duration, bench.Figure("duration"));
  if (duration) row.set_wall_seconds(*duration);
  std::optional<double> x;
  CAPPLAN_ASSIGN_OR_RETURN(x, SuccessfulStat(metrics, "requests_per_second", "mean"));
  if (x) row.set_requests_per_second(*x);
  CAPPLAN_ASSIGN_OR_RETURN(x, SuccessfulStat(metrics, "output_tokens_per_second", "mean"));
  if (x) row.set_output_tokens_per_second(*x);
  CAPPLAN_ASSIGN_OR_RETURN(x, SuccessfulStat(metrics, "tokens_per_second", "mean"));
  if (x) row.set_total_tokens_per_second(*x);
  CAPPLAN_ASSIGN_OR_RETURN(b.run().measured_mean_in_flight,
                           SuccessfulStat(metrics, "request_concurrency", "mean"));
  CAPPLAN_ASSIGN_OR_RETURN(b.run().mean_input_tokens,
                           SuccessfulStat(metrics, "prompt_token_count", "mean"));
  CAPPLAN_ASSIGN_OR_RETURN(b.run().mean_output_tokens,
                           SuccessfulStat(metrics, "output_token_count", "mean"));
  CAPPLAN_ASSIGN_OR_RETURN(x, SuccessfulStat(metrics, "output_token_count", "total_sum"));
  if (x && std::floor(*x) == *x && *x < 9e15) {
    row.set_output_tokens_total(static_cast<uint64_t>(*x));
  }
  return absl::OkStatus();
}

// Per-request TPOT in ms from benchmark.requests.successful; nullopt (and
// why in `why`) when the records are not all there.
absl::StatusOr<std::optional<std::vector<double>>> RequestTpotsMs(const JsonObject& bench,
                                                                  uint32_t successful,
                                                                  std::string& why) {
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> requests, bench.Object("requests"));
  const google::protobuf::ListValue* list = nullptr;
  if (requests) {
    CAPPLAN_ASSIGN_OR_RETURN(list, requests->List("successful"));
  }
  const int n = list == nullptr ? 0 : list->values_size();
  if (n == 0 || static_cast<uint32_t>(n) != successful) {
    why = absl::StrCat("the file holds ", n, " of ", successful, " successful request records");
    return std::optional<std::vector<double>>();
  }
  std::vector<double> tpots;
  for (int i = 0; i < n; ++i) {
    const Value& v = list->values(i);
    const std::string path = absl::StrCat("requests.successful[", i, "]");
    if (v.kind_case() != Value::kStructValue) return bench.Error(path, v, "must be an object");
    const JsonObject r(v.struct_value(), bench.where(), bench.Path(path));
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> e2e_s, r.Figure("request_latency"));
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> ttft_ms, r.Figure("time_to_first_token_ms"));
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> out, r.Count("output_tokens", 0, 1ull << 40));
    if (!e2e_s || !ttft_ms || !out) {
      why = absl::StrCat("request record ", i,
                         " lacks request_latency, time_to_first_token_ms "
                         "or output_tokens");
      return std::optional<std::vector<double>>();
    }
    if (*out > 1) {
      tpots.push_back((*e2e_s * 1000.0 - *ttft_ms) / static_cast<double>(*out - 1));
    }
  }
  return std::optional<std::vector<double>>(std::move(tpots));
}

absl::Status ReadTpot(const JsonObject& bench, const JsonObject& metrics, RunBuilder& b) {
  std::string why;
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<std::vector<double>> tpots,
                           RequestTpotsMs(bench, b.run().row.requests(), why));
  if (tpots && !tpots->empty()) {
    std::vector<double>& v = *tpots;
    std::sort(v.begin(), v.end());
    double sum = 0;
    for (double x : v) sum += x;
    b.SetLatency(LatencyMetric::kTpot, "mean", sum / static_cast<double>(v.size()) / 1000.0);
    for (double p : {50.0, 90.0, 95.0, 99.0}) {
      b.SetLatency(LatencyMetric::kTpot, absl::StrCat("p", p), Percentile(v, p) / 1000.0);
    }
    b.SetLatency(LatencyMetric::kTpot, "min", v.front() / 1000.0);
    b.SetLatency(LatencyMetric::kTpot, "max", v.back() / 1000.0);
    b.AddNote(absl::StrCat("TPOT computed from ", v.size(),
                           " request records as (request_latency - time_to_first_token) / "
                           "(output_tokens - 1)"));
  } else {
    b.AddNote(
        absl::StrCat("TPOT absent: GuideLLM's time_per_output_token_ms counts the first "
                     "token and ",
                     why.empty() ? "no request has more than one output token" : why,
                     "; ITL is GuideLLM's inter_token_latency_ms, (last - first token) / "
                     "(output tokens - 1) per request"));
  }
  for (absl::string_view stat : {"mean", "median"}) {
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> x,
                             SuccessfulStat(metrics, "time_per_output_token_ms", stat));
    if (x) {
      b.AddNote(absl::StrCat("GuideLLM time_per_output_token_ms ", stat, " ",
                             FormatFigure(*x / 1000.0), " s (first token counted)"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<IngestedRun> ReadBenchmark(const JsonObject& bench, const JsonObject& root,
                                          std::optional<std::string>& date) {
  RunBuilder b(absl::StrCat(bench.where(), " ", bench.path()));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> metrics, bench.Object("metrics"));
  if (!metrics) {
    return absl::InvalidArgumentError(
        absl::StrCat(bench.where(), ": key \"", bench.Path("metrics"), "\" is missing"));
  }
  CAPPLAN_RETURN_IF_ERROR(ReadStrategy(bench, b));
  CAPPLAN_RETURN_IF_ERROR(ReadTotals(bench, *metrics, b));
  CAPPLAN_RETURN_IF_ERROR(
      ReadDistribution(*metrics, "time_to_first_token_ms", LatencyMetric::kTtft, 1e-3, b));
  CAPPLAN_RETURN_IF_ERROR(
      ReadDistribution(*metrics, "inter_token_latency_ms", LatencyMetric::kItl, 1e-3, b));
  CAPPLAN_RETURN_IF_ERROR(
      ReadDistribution(*metrics, "request_latency", LatencyMetric::kE2e, 1.0, b));
  CAPPLAN_RETURN_IF_ERROR(ReadTpot(bench, *metrics, b));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> worker, bench.Object("worker"));
  if (worker) {
    CAPPLAN_ASSIGN_OR_RETURN(b.run().model_id, worker->String("backend_model"));
  }
  if (!b.run().model_id) {
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> args, root.Object("args"));
    if (args) {
      CAPPLAN_ASSIGN_OR_RETURN(b.run().model_id, args->String("model"));
    }
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> start, bench.Figure("start_time"));
  if (start && !date) date = UtcDate(*start);
  return b.Finish();
}

}  // namespace

absl::Status ParseGuidellmJson(const std::vector<JsonDocument>& docs, IngestedFile& out) {
  out.tool = "guidellm";
  out.tpot_definition =
      "capplan TPOT (e2e - ttft) / (output tokens - 1) per request, computed from GuideLLM's "
      "request records where all are present; GuideLLM's own time_per_output_token_ms counts "
      "the first token";
  if (docs.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(out.file_name, ": ", docs.size(), " JSON values; a GuideLLM file has one"));
  }
  CAPPLAN_ASSIGN_OR_RETURN(JsonObject root, RootObject(docs[0], out.file_name, "the report"));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> metadata, root.Object("metadata"));
  if (metadata) {
    CAPPLAN_ASSIGN_OR_RETURN(out.tool_version, metadata->String("guidellm_version"));
  }
  CAPPLAN_ASSIGN_OR_RETURN(const google::protobuf::ListValue* benchmarks, root.List("benchmarks"));
  if (benchmarks == nullptr || benchmarks->values_size() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(out.file_name, ": key \"benchmarks\" holds no benchmark"));
  }
  if (static_cast<size_t>(benchmarks->values_size()) > kMaxIngestRunsPerFile) {
    return absl::OutOfRangeError(
        absl::StrCat(out.file_name, ": more than ", kMaxIngestRunsPerFile, " benchmarks"));
  }
  std::optional<std::string> date;
  for (int i = 0; i < benchmarks->values_size(); ++i) {
    const std::string path = absl::StrCat("benchmarks[", i, "]");
    const Value& v = benchmarks->values(i);
    if (v.kind_case() != Value::kStructValue) return root.Error(path, v, "must be an object");
    const JsonObject bench(v.struct_value(), out.file_name, path);
    CAPPLAN_ASSIGN_OR_RETURN(IngestedRun run, ReadBenchmark(bench, root, date));
    out.runs.push_back(std::move(run));
  }
  out.date = date;
  return absl::OkStatus();
}

}  // namespace capplan::service::ingest_internal
