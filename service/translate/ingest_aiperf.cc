// AIPerf profile_export_aiperf.json and GenAI-Perf profile_export_genai_perf.json:
// one run, each metric an object {unit, avg, p1 … p99, min, max, std}
// (ai-dynamo/aiperf aiperf/common/models/export_models.py at db4f639; AIPerf
// ≤ 0.1.1 nests them under "records"; triton-inference-server/perf_analyzer
// genai-perf/genai_perf/export_data/json_exporter.py at 263c5f6).
//
//   time_to_first_token → TTFT; inter_token_latency → TPOT (both tools define
//   it per request as (request_latency − TTFT)/(output tokens − 1), capplan's
//   TPOT); inter_chunk_latency (AIPerf) → ITL; request_latency → E2E. Every
//   value is converted by its metric's stated unit (ns, us, ms, s/sec).
//   request_throughput, output_token_throughput, total_token_throughput,
//   output_token_throughput_per_user (GenAI-Perf ≤ 2025-03:
//   …_per_request), request_count, error_request_count, benchmark_duration,
//   input/output_sequence_length (means), total_output_tokens,
//   effective_concurrency (AIPerf's measured mean in flight).
//   Load: input_config.loadgen.{concurrency, request_rate, request_count} (AIPerf),
//   input_config.{concurrency, request_rate} (GenAI-Perf flat) or
//   input_config.perf_analyzer.stimulus (GenAI-Perf config files).

#include <cmath>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "service/translate/ingest_internal.h"

namespace capplan::service::ingest_internal {
namespace {

using google::protobuf::Value;

constexpr uint64_t kMaxCount = 0xffffffffu;

std::optional<double> SecondsPerUnit(absl::string_view unit) {
  if (unit == "ms") return 1e-3;
  if (unit == "s" || unit == "sec" || unit == "secs" || unit == "seconds") return 1.0;
  if (unit == "us" || unit == "\xC2\xB5s" || unit == "\xCE\xBCs") return 1e-6;
  if (unit == "ns") return 1e-9;
  return std::nullopt;
}

// Per-second scale of a rate unit: "tokens/sec", "requests/sec", "tokens/sec/user".
std::optional<double> PerSecondScale(absl::string_view unit) {
  const std::string u = absl::AsciiStrToLower(unit);
  for (absl::string_view s : {"/sec", "/s", "per sec", "/second"}) {
    if (absl::StrContains(u, absl::StrCat(s, "/")) || absl::EndsWith(u, s)) return 1.0;
  }
  if (absl::EndsWith(u, "/min")) return 1.0 / 60.0;
  if (absl::EndsWith(u, "/ms")) return 1000.0;
  return std::nullopt;
}

absl::StatusOr<std::optional<JsonObject>> MetricWithUnit(const JsonObject& metrics,
                                                         absl::string_view name,
                                                         std::string& unit) {
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> m, metrics.Object(name));
  if (!m) return m;
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<std::string> u, m->String("unit"));
  if (!u) {
    return absl::InvalidArgumentError(
        absl::StrCat(m->where(), ": key \"", m->Path("unit"), "\" is missing"));
  }
  unit = *u;
  return m;
}

absl::Status ReadLatency(const JsonObject& metrics, absl::string_view name, LatencyMetric metric,
                         RunBuilder& b) {
  std::string unit;
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> m, MetricWithUnit(metrics, name, unit));
  if (!m) return absl::OkStatus();
  const std::optional<double> scale = SecondsPerUnit(unit);
  if (!scale) {
    return m->Error("unit", *m->Find("unit"), "must be a time unit (ns, us, ms, s, sec)");
  }
  for (const std::string& key : m->SortedKeys()) {
    const bool stat = key == "avg" || key == "min" || key == "max" || key == "std" ||
                      (key.size() > 1 && key[0] == 'p' && ParseDecimal(key.substr(1)));
    if (!stat) continue;
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> x, m->Figure(key));
    if (x) b.SetLatency(metric, key == "avg" ? "mean" : key, *x * *scale);
  }
  return absl::OkStatus();
}

// The avg of a metric, scaled: kind 't' time (to seconds), 'r' rate (per
// second), 'c' count (unit not converted).
absl::StatusOr<std::optional<double>> Avg(const JsonObject& metrics, absl::string_view name,
                                          char kind) {
  std::string unit;
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> m, MetricWithUnit(metrics, name, unit));
  if (!m) return std::optional<double>();
  std::optional<double> scale = 1.0;
  if (kind == 't') scale = SecondsPerUnit(unit);
  if (kind == 'r') scale = PerSecondScale(unit);
  if (!scale) {
    return m->Error("unit", *m->Find("unit"),
                    kind == 't' ? "must be a time unit (ns, us, ms, s, sec)"
                                : "must be a rate per second (requests/sec, tokens/sec)");
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> x, m->Figure("avg"));
  if (!x) return x;
  return std::optional<double>(*x * *scale);
}

absl::StatusOr<std::optional<uint32_t>> WholeAvg(const JsonObject& metrics,
                                                 absl::string_view name) {
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> x, Avg(metrics, name, 'c'));
  if (!x) return std::optional<uint32_t>();
  if (std::floor(*x) != *x || *x > kMaxCount) {
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> m, metrics.Object(name));
    return m->Error("avg", *m->Find("avg"), "must be a whole number of requests");
  }
  return std::optional<uint32_t>(static_cast<uint32_t>(*x));
}

absl::Status ReadFigures(const JsonObject& metrics, RunBuilder& b) {
  IngestedRun& run = b.run();
  v1::SweepRow& row = run.row;
  std::optional<double> x;
  CAPPLAN_ASSIGN_OR_RETURN(x, Avg(metrics, "request_throughput", 'r'));
  if (x) row.set_requests_per_second(*x);
  CAPPLAN_ASSIGN_OR_RETURN(x, Avg(metrics, "output_token_throughput", 'r'));
  if (x) row.set_output_tokens_per_second(*x);
  CAPPLAN_ASSIGN_OR_RETURN(x, Avg(metrics, "total_token_throughput", 'r'));
  if (x) row.set_total_tokens_per_second(*x);
  for (absl::string_view name :
       {"output_token_throughput_per_user", "output_token_throughput_per_request"}) {
    CAPPLAN_ASSIGN_OR_RETURN(x, Avg(metrics, name, 'r'));
    if (x && !row.has_per_user_output_tokens_per_second()) {
      row.set_per_user_output_tokens_per_second(*x);
    }
  }
  CAPPLAN_ASSIGN_OR_RETURN(x, Avg(metrics, "benchmark_duration", 't'));
  if (x) row.set_wall_seconds(*x);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<uint32_t> n, WholeAvg(metrics, "request_count"));
  if (n) row.set_requests(*n);
  CAPPLAN_ASSIGN_OR_RETURN(n, WholeAvg(metrics, "error_request_count"));
  if (n) row.set_failed_requests(*n);
  CAPPLAN_ASSIGN_OR_RETURN(run.mean_input_tokens, Avg(metrics, "input_sequence_length", 'c'));
  CAPPLAN_ASSIGN_OR_RETURN(run.mean_output_tokens, Avg(metrics, "output_sequence_length", 'c'));
  CAPPLAN_ASSIGN_OR_RETURN(run.measured_mean_in_flight, Avg(metrics, "effective_concurrency", 'c'));
  for (absl::string_view name : {"total_output_tokens", "total_osl"}) {
    CAPPLAN_ASSIGN_OR_RETURN(x, Avg(metrics, name, 'c'));
    if (x && std::floor(*x) == *x && *x < 9e15 && !row.has_output_tokens_total()) {
      row.set_output_tokens_total(static_cast<uint64_t>(*x));
    }
  }
  CAPPLAN_ASSIGN_OR_RETURN(x, Avg(metrics, "time_to_second_token", 't'));
  if (x) b.AddNote(absl::StrCat("mean time to second token ", FormatFigure(*x), " s"));
  return absl::OkStatus();
}

// Concurrency and rate settings from an object holding them.
absl::Status ReadLoadFrom(const JsonObject& o, RunBuilder& b) {
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> c, o.Count("concurrency", 1, kMaxCount));
  if (c) b.run().max_concurrency = static_cast<uint32_t>(*c);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> rate, o.Figure("request_rate"));
  if (rate && *rate <= 0) {
    return o.Error("request_rate", *o.Find("request_rate"), "must be a positive request rate");
  }
  if (rate) b.run().request_rate_rps = *rate;
  // GenAI-Perf writes request_count 0 for "not set".
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<uint64_t> n, o.Count("request_count", 0, kMaxCount));
  if (n && *n > 0) b.run().num_prompts = static_cast<uint32_t>(*n);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<std::string> mode, o.String("request_rate_mode"));
  if (mode) b.AddNote(absl::StrCat("request_rate_mode ", *mode));
  return absl::OkStatus();
}

absl::Status ReadInputConfig(const JsonObject& root, RunBuilder& b, bool& aiperf) {
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> config, root.Object("input_config"));
  if (!config) {
    b.AddNote("no input_config: load settings not stated");
    return absl::OkStatus();
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> loadgen, config->Object("loadgen"));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> pa, config->Object("perf_analyzer"));
  std::optional<JsonObject> stimulus;
  if (pa) {
    CAPPLAN_ASSIGN_OR_RETURN(stimulus, pa->Object("stimulus"));
  }
  if (loadgen) aiperf = true;
  CAPPLAN_RETURN_IF_ERROR(ReadLoadFrom(loadgen ? *loadgen : stimulus ? *stimulus : *config, b));
  std::optional<std::string>& model = b.run().model_id;
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> endpoint, config->Object("endpoint"));
  const Value* names = endpoint ? endpoint->Find("model_names") : config->Find("model");
  if (names != nullptr && names->kind_case() == Value::kStringValue) {
    model = names->string_value();
  } else if (names != nullptr && names->kind_case() == Value::kListValue &&
             names->list_value().values_size() > 0 &&
             names->list_value().values(0).kind_case() == Value::kStringValue) {
    model = names->list_value().values(0).string_value();
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ParseAiperfJson(const std::vector<JsonDocument>& docs, IngestedFile& out) {
  if (docs.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        out.file_name, ": ", docs.size(), " JSON values; an AIPerf / GenAI-Perf export has one"));
  }
  CAPPLAN_ASSIGN_OR_RETURN(JsonObject root, RootObject(docs[0], out.file_name, "the export"));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<JsonObject> records, root.Object("records"));
  const JsonObject& metrics = records ? *records : root;
  RunBuilder b(out.file_name);
  bool aiperf = records.has_value();
  CAPPLAN_ASSIGN_OR_RETURN(out.tool_version, root.String("aiperf_version"));
  if (out.tool_version || root.Find("schema_version") != nullptr) aiperf = true;
  CAPPLAN_RETURN_IF_ERROR(ReadInputConfig(root, b, aiperf));
  CAPPLAN_RETURN_IF_ERROR(ReadLatency(metrics, "time_to_first_token", LatencyMetric::kTtft, b));
  CAPPLAN_RETURN_IF_ERROR(ReadLatency(metrics, "inter_token_latency", LatencyMetric::kTpot, b));
  CAPPLAN_RETURN_IF_ERROR(ReadLatency(metrics, "inter_chunk_latency", LatencyMetric::kItl, b));
  CAPPLAN_RETURN_IF_ERROR(ReadLatency(metrics, "request_latency", LatencyMetric::kE2e, b));
  CAPPLAN_RETURN_IF_ERROR(ReadFigures(metrics, b));
  out.tool = aiperf ? "aiperf" : "genai-perf";
  out.tpot_definition = absl::StrCat(*out.tool,
                                     " inter_token_latency: (request_latency - ttft) / (output "
                                     "tokens - 1) per request, first token excluded");
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<std::string> start, root.String("start_time"));
  if (start) out.date = NormalizeDate(*start);
  const v1::SweepRow& row = b.run().row;
  if (!row.has_ttft() && !row.has_e2e() && !row.has_requests_per_second()) {
    return absl::InvalidArgumentError(absl::StrCat(
        out.file_name, ": no metrics (time_to_first_token, request_latency, request_throughput)"));
  }
  out.runs.push_back(b.Finish());
  return absl::OkStatus();
}

}  // namespace capplan::service::ingest_internal
