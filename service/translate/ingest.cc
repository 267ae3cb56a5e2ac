// Entry point of the ingest parsers: format names, the input checks every
// format shares (size cap, empty, binary), detection by content, dispatch.

#include "service/translate/ingest.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "service/translate/ingest_internal.h"

namespace capplan::service {
namespace {

using ingest_internal::JsonDocument;

struct FormatName {
  IngestFormat format;
  absl::string_view name;
};

constexpr FormatName kFormatNames[] = {
    {IngestFormat::kAuto, "auto"},
    {IngestFormat::kVllmJson, "vllm-json"},
    {IngestFormat::kVllmConsole, "vllm-console"},
    {IngestFormat::kSglangJsonl, "sglang-jsonl"},
    {IngestFormat::kSglangConsole, "sglang-console"},
    {IngestFormat::kGuidellmJson, "guidellm-json"},
    {IngestFormat::kAiperfJson, "aiperf-json"},
    {IngestFormat::kEngineLog, "engine-log"},
};

bool IsJsonFormat(IngestFormat f) {
  return f == IngestFormat::kVllmJson || f == IngestFormat::kSglangJsonl ||
         f == IngestFormat::kGuidellmJson || f == IngestFormat::kAiperfJson;
}

// Length of the valid UTF-8 sequence at text[i], 0 when invalid.
size_t Utf8SequenceLength(absl::string_view text, size_t i) {
  const unsigned char c = static_cast<unsigned char>(text[i]);
  size_t n = 0;
  unsigned int min = 0;
  if (c < 0x80) return 1;
  if ((c & 0xE0) == 0xC0) {
    n = 2, min = 0x80;
  } else if ((c & 0xF0) == 0xE0) {
    n = 3, min = 0x800;
  } else if ((c & 0xF8) == 0xF0) {
    n = 4, min = 0x10000;
  } else {
    return 0;
  }
  if (i + n > text.size()) return 0;
  unsigned int code = c & (0x7F >> n);
  for (size_t k = 1; k < n; ++k) {
    const unsigned char d = static_cast<unsigned char>(text[i + k]);
    if ((d & 0xC0) != 0x80) return 0;
    code = (code << 6) | (d & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return n;
}

// Refuses what no format can be: too long, empty, binary. Returns the text
// without a UTF-8 byte-order mark.
absl::StatusOr<absl::string_view> CheckText(absl::string_view file_name, absl::string_view text) {
  if (text.size() > kMaxIngestFileBytes) {
    return absl::OutOfRangeError(absl::StrCat(file_name, ": ", text.size(),
                                              " bytes; ingest reads at most ", kMaxIngestFileBytes,
                                              " (16 MiB)"));
  }
  absl::ConsumePrefix(&text, "\xEF\xBB\xBF");
  if (absl::StripAsciiWhitespace(text).empty()) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": the file is empty"));
  }
  size_t controls = 0;
  for (size_t i = 0; i < text.size();) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          file_name, ": binary data (a NUL byte at offset ", i, "); expected JSON or text"));
    }
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != 0x1B) ++controls;
    const size_t n = Utf8SequenceLength(text, i);
    if (n == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: not UTF-8 text (byte 0x%02X at offset %d); expected JSON or text", file_name, c, i));
    }
    i += n;
  }
  if (controls * 20 > text.size()) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": binary data (", controls,
                                                   " control bytes); expected JSON or text"));
  }
  return text;
}

bool StartsLikeJson(absl::string_view text) {
  const absl::string_view t = absl::StripLeadingAsciiWhitespace(text);
  return !t.empty() && (t[0] == '{' || t[0] == '[');
}

absl::StatusOr<IngestFormat> DetectChecked(absl::string_view file_name, absl::string_view text,
                                           std::optional<std::vector<JsonDocument>>& docs) {
  if (StartsLikeJson(text)) {
    absl::StatusOr<std::vector<JsonDocument>> parsed =
        ingest_internal::ParseJsonDocuments(file_name, text);
    if (!parsed.ok()) {
      // Log lines start with "[2025-03-27 21:33:30 TP0]" or "[TensorRT-LLM]".
      if (std::optional<IngestFormat> f = ingest_internal::ConsoleFormatOf(text)) return *f;
      if (ingest_internal::LooksLikeEngineLog(text)) return IngestFormat::kEngineLog;
      return parsed.status();
    }
    docs = *std::move(parsed);
    if (std::optional<IngestFormat> f = ingest_internal::JsonFormatOf(docs->front())) return *f;
    return absl::InvalidArgumentError(absl::StrCat(
        file_name,
        ": JSON of no known benchmark format (looked for vLLM/SGLang *_ttft_ms keys, GuideLLM "
        "benchmarks[], AIPerf {unit, avg} metrics); pass the format"));
  }
  if (std::optional<IngestFormat> f = ingest_internal::ConsoleFormatOf(text)) return *f;
  if (ingest_internal::LooksLikeEngineLog(text)) return IngestFormat::kEngineLog;
  return absl::InvalidArgumentError(absl::StrCat(
      file_name,
      ": neither JSON nor a \"Serving Benchmark Result\" block nor an engine start-up log "
      "(no line such as \"GPU KV cache size:\" or \"KV Cache is allocated\")"));
}

}  // namespace

absl::string_view IngestFormatName(IngestFormat format) {
  for (const FormatName& f : kFormatNames) {
    if (f.format == format) return f.name;
  }
  return "auto";
}

absl::StatusOr<IngestFormat> IngestFormatFromName(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(absl::StripAsciiWhitespace(name));
  std::vector<absl::string_view> names;
  for (const FormatName& f : kFormatNames) {
    if (f.name == lower) return f.format;
    names.push_back(f.name);
  }
  return absl::InvalidArgumentError(
      absl::StrCat("format = \"", absl::CHexEscape(name.substr(0, 40)), "\"; must be one of ",
                   absl::StrJoin(names, ", ")));
}

absl::StatusOr<IngestFormat> DetectIngestFormat(absl::string_view file_name,
                                                absl::string_view text) {
  CAPPLAN_ASSIGN_OR_RETURN(absl::string_view body, CheckText(file_name, text));
  std::optional<std::vector<JsonDocument>> docs;
  return DetectChecked(file_name, body, docs);
}

absl::StatusOr<IngestedFile> ParseMeasurementFile(absl::string_view file_name,
                                                  absl::string_view text, IngestFormat format) {
  CAPPLAN_ASSIGN_OR_RETURN(absl::string_view body, CheckText(file_name, text));
  std::optional<std::vector<JsonDocument>> docs;
  if (format == IngestFormat::kAuto) {
    CAPPLAN_ASSIGN_OR_RETURN(format, DetectChecked(file_name, body, docs));
  }
  IngestedFile out;
  out.file_name = std::string(file_name);
  out.format = format;
  if (IsJsonFormat(format) && !docs) {
    CAPPLAN_ASSIGN_OR_RETURN(docs, ingest_internal::ParseJsonDocuments(file_name, body));
  }
  switch (format) {
    case IngestFormat::kVllmJson:
    case IngestFormat::kSglangJsonl:
      CAPPLAN_RETURN_IF_ERROR(ingest_internal::ParseBenchJson(*docs, out));
      break;
    case IngestFormat::kGuidellmJson:
      CAPPLAN_RETURN_IF_ERROR(ingest_internal::ParseGuidellmJson(*docs, out));
      break;
    case IngestFormat::kAiperfJson:
      CAPPLAN_RETURN_IF_ERROR(ingest_internal::ParseAiperfJson(*docs, out));
      break;
    case IngestFormat::kVllmConsole:
    case IngestFormat::kSglangConsole:
      CAPPLAN_RETURN_IF_ERROR(ingest_internal::ParseBenchConsole(body, out));
      break;
    case IngestFormat::kEngineLog:
      CAPPLAN_RETURN_IF_ERROR(ingest_internal::ParseEngineLog(body, out));
      break;
    case IngestFormat::kAuto:
      return absl::InternalError("format detection returned auto");
  }
  if (out.runs.size() > kMaxIngestRunsPerFile) {
    return absl::OutOfRangeError(
        absl::StrCat(file_name, ": ", out.runs.size(), " runs; at most ", kMaxIngestRunsPerFile));
  }
  return out;
}

namespace ingest_internal {

std::string DocumentWhere(absl::string_view file_name, const std::vector<JsonDocument>& docs,
                          const JsonDocument& doc) {
  if (docs.size() == 1) return std::string(file_name);
  return absl::StrCat(file_name, ":", doc.line);
}

std::optional<IngestFormat> JsonFormatOf(const JsonDocument& first) {
  if (first.value.kind_case() != google::protobuf::Value::kStructValue) return std::nullopt;
  const auto& fields = first.value.struct_value().fields();
  auto has = [&](const char* key) { return fields.find(key) != fields.end(); };
  if (has("benchmarks")) return IngestFormat::kGuidellmJson;
  if (has("aiperf_version") || has("genai_perf_version")) return IngestFormat::kAiperfJson;
  auto records = fields.find("records");  // AIPerf <= 0.1.1 nests its metrics
  const auto& metrics = records != fields.end() && records->second.has_struct_value()
                            ? records->second.struct_value().fields()
                            : fields;
  for (const char* key :
       {"time_to_first_token", "request_latency", "request_throughput", "inter_token_latency"}) {
    auto it = metrics.find(key);
    if (it != metrics.end() && it->second.has_struct_value() &&
        it->second.struct_value().fields().count("unit") > 0) {
      return IngestFormat::kAiperfJson;
    }
  }
  bool bench = has("completed") || has("request_throughput") || has("output_throughput");
  for (const auto& [key, value] : fields) {
    if (absl::EndsWith(key, "_ttft_ms") || absl::EndsWith(key, "_tpot_ms") ||
        absl::EndsWith(key, "_itl_ms") || absl::EndsWith(key, "_e2el_ms")) {
      bench = true;
    }
  }
  if (!bench) return std::nullopt;
  for (const char* key :
       {"total_output_tokens_retokenized", "mean_e2e_latency_ms", "median_e2e_latency_ms",
        "accept_length", "concurrency", "sharegpt_output_len"}) {
    if (has(key)) return IngestFormat::kSglangJsonl;
  }
  return IngestFormat::kVllmJson;
}

}  // namespace ingest_internal
}  // namespace capplan::service
