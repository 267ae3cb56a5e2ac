#ifndef CAPPLAN_SERVICE_TRANSLATE_INGEST_INTERNAL_H_
#define CAPPLAN_SERVICE_TRANSLATE_INGEST_INTERNAL_H_

// Shared pieces of the ingest parsers (ingest*.cc); not part of the API.

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "capplan/v1/catalog.pb.h"
#include "google/protobuf/struct.pb.h"
#include "service/translate/ingest.h"

namespace capplan::service::ingest_internal {

// ------------------------------------------------------------------ JSON

// One top-level JSON value of a file and the line it starts on.
struct JsonDocument {
  google::protobuf::Value value;
  int line = 1;
};

// The top-level values of `text`: one for a JSON file, one per line for JSON
// lines, several for concatenated files. The syntax is checked first, so an
// error names the line and column (a truncated file: where it ends early);
// the bare literals NaN, Infinity and -Infinity that Python's json module
// writes become the strings "NaN", "Infinity", "-Infinity" (refused later
// wherever a figure is expected). Nesting deeper than 64 is refused. More
// than kMaxIngestRunsPerFile values is OUT_OF_RANGE.
absl::StatusOr<std::vector<JsonDocument>> ParseJsonDocuments(absl::string_view file_name,
                                                             absl::string_view text);

// A JSON value as an error message shows it: numbers as written, strings
// quoted and cut at 80 bytes, objects and lists abbreviated.
std::string ShowJson(const google::protobuf::Value& value);

// Typed access to one JSON object; errors name `where` (file or file:line)
// and the key's full path:
//   run.json: key "median_ttft_ms" = "abc"; must be a number
class JsonObject {
 public:
  JsonObject(const google::protobuf::Struct& object, std::string where, std::string path);

  const std::string& where() const { return where_; }
  const std::string& path() const { return path_; }
  std::string Path(absl::string_view key) const;
  // nullptr when the key is absent or null.
  const google::protobuf::Value* Find(absl::string_view key) const;
  // The keys, sorted (protobuf maps iterate in no fixed order).
  std::vector<std::string> SortedKeys() const;

  absl::Status Error(absl::string_view key, const google::protobuf::Value& value,
                     absl::string_view rule) const;

  // A finite number >= 0 ("figure"), absent when the key is absent or null.
  absl::StatusOr<std::optional<double>> Figure(absl::string_view key) const;
  // A whole number in [min, max].
  absl::StatusOr<std::optional<uint64_t>> Count(absl::string_view key, uint64_t min,
                                                uint64_t max) const;
  absl::StatusOr<std::optional<std::string>> String(absl::string_view key) const;
  // A nested object; absent when the key is absent or null.
  absl::StatusOr<std::optional<JsonObject>> Object(absl::string_view key) const;
  absl::StatusOr<const google::protobuf::ListValue*> List(absl::string_view key) const;

 private:
  const google::protobuf::Struct* object_;
  std::string where_;
  std::string path_;
};

// A JSON value that must be an object (the root of a document).
absl::StatusOr<JsonObject> RootObject(const JsonDocument& doc, std::string where,
                                      absl::string_view what);

// ------------------------------------------------------------- run rows

enum class LatencyMetric { kTtft, kTpot, kItl, kE2e };

// "TTFT", "TPOT", "ITL", "E2E".
absl::string_view LatencyMetricLabel(LatencyMetric metric);

// Builds one run: statistics go to their LatencyFigures field or, without
// one, into the note under their own name.
class RunBuilder {
 public:
  explicit RunBuilder(std::string source);

  IngestedRun& run() { return run_; }
  // `stat` as the file names it: mean, avg, median, p50, p90, p95, p99, min,
  // max go to fields; anything else (std, p99.9, p25, …) to the note.
  void SetLatency(LatencyMetric metric, absl::string_view stat, double seconds);
  void AddNote(std::string note);
  // Total tokens over the completed requests: output goes to the row, both
  // give the mean tokens per request in Finish().
  void SetTokenTotals(std::optional<uint64_t> input, std::optional<uint64_t> output);
  // The file states request_rate = inf (all at once, or as fast as the
  // concurrency cap lets them in).
  void SetInfiniteRate() { infinite_rate_ = true; }
  // Fills mean tokens per request from totals, the load kind from the
  // settings (unless set), the row's load fields and the note. Call once, at
  // the end.
  IngestedRun Finish();

 private:
  IngestedRun run_;
  std::optional<uint64_t> total_input_tokens_;
  bool infinite_rate_ = false;
  std::vector<std::string> stat_notes_;
  std::vector<std::string> notes_;
};

// The number of requests a burst sends at once: num_prompts when stated,
// else the completed requests plus the failed ones.
std::optional<uint32_t> BurstSize(const IngestedRun& run);

// The row's load fields from the run's load kind and settings: concurrency
// (closed loop), arrival_rate_rps (open loop) or burst_requests (burst, see
// BurstSize); the others cleared.
void SetRowLoad(IngestedRun& run);

// The load note a row's note starts with ("closed loop: concurrency 8, 100
// prompts").
std::string LoadNote(const IngestedRun& run);

// The load kind the stated settings describe (see LoadKind): a concurrency
// with no finite rate is closed loop, a finite rate open loop, an infinite
// rate without a concurrency a burst.
LoadKind ClassifyLoad(std::optional<uint32_t> max_concurrency, bool infinite_rate,
                      std::optional<double> finite_rate);

// A figure for notes: 7 significant digits.
std::string FormatFigure(double value);

// "20260314-190304", "2026-03-14T01:20:03", "2026-03-14" → "2026-03-14";
// nullopt when the text does not start with a date.
std::optional<std::string> NormalizeDate(absl::string_view text);

// ------------------------------------------------------------------ text

// A decimal number as the tools print it: optional sign, digits with an
// optional fraction and exponent; "inf"/"nan" are not numbers here.
std::optional<double> ParseDecimal(absl::string_view text);
// Digits with optional thousands separators ("464,848"); nullopt beyond 2^64.
std::optional<uint64_t> ParseGroupedInteger(absl::string_view text);

// ----------------------------------------------------------- the parsers

// The JSON formats take the file's parsed documents; each fills the runs,
// tool, date and notes of `out` (file_name and format are set by the caller).
absl::Status ParseBenchJson(const std::vector<JsonDocument>& docs, IngestedFile& out);
absl::Status ParseGuidellmJson(const std::vector<JsonDocument>& docs, IngestedFile& out);
absl::Status ParseAiperfJson(const std::vector<JsonDocument>& docs, IngestedFile& out);
absl::Status ParseBenchConsole(absl::string_view text, IngestedFile& out);
absl::Status ParseEngineLog(absl::string_view text, IngestedFile& out);

// vLLM's benchmark tool when a file does not say which: `vllm bench serve`
// and benchmarks/benchmark_serving.py print the same block and write the same
// JSON.
inline constexpr absl::string_view kVllmToolEither = "vllm bench serve / benchmark_serving.py";
// "vllm bench serve" or "benchmark_serving.py" when the text's command line
// names one of them (and not the other), else kVllmToolEither.
std::string VllmToolOf(absl::string_view text);

// Content sniffing used by DetectIngestFormat.
// The JSON format of the first document; nullopt when none fits.
std::optional<IngestFormat> JsonFormatOf(const JsonDocument& first);
// kVllmConsole or kSglangConsole when the text holds a result block.
std::optional<IngestFormat> ConsoleFormatOf(absl::string_view text);
bool LooksLikeEngineLog(absl::string_view text);

// "c8.json" for a file of one document, "online.jsonl:3" for one of several.
std::string DocumentWhere(absl::string_view file_name, const std::vector<JsonDocument>& docs,
                          const JsonDocument& doc);

}  // namespace capplan::service::ingest_internal

#endif  // CAPPLAN_SERVICE_TRANSLATE_INGEST_INTERNAL_H_
