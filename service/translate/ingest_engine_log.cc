// Engine start-up logs: the lines where vLLM, SGLang and TensorRT-LLM state
// their weights, KV-cache memory and capacity, matched by their stable
// wording wherever they sit in a record (any prefix: "(EngineCore_DP0 pid=1)
// INFO 09-04 01:29:26 [kv_cache_utils.py:849] ", "[2025-03-27 21:33:31 TP0] ",
// "[TensorRT-LLM][INFO] ", a k8s viewer's "│ ").
//
// vLLM (V0 and V1; wording by version in vllm/worker/model_runner.py,
// vllm/v1/worker/gpu_model_runner.py, gpu_worker.py, v1/core/kv_cache_utils.py,
// worker/worker.py, executor/executor_base.py):
//   Loading model weights took X GB | Model loading took X GiB [memory] and …
//   Available KV cache memory: X GiB          (V1, per worker)
//   the rest of the memory reserved for KV Cache is X GiB   (V0 ≥ 0.6.5)
//   kv_cache_size=X GiB, total_gpu_memory=X GiB   (V0 0.6.4 summary)
//   GPU KV cache size: 464,848 tokens          (V1, thousands separators)
//   Maximum concurrency for 16,384 tokens per request: 28.37x
//   # GPU blocks: N | # cuda blocks: N, # CPU blocks: M | num_gpu_blocks is: N
//   Graph capturing finished in T secs, took X GiB
//   … maximum number of tokens that can be stored in KV cache (N)  (V0 refusal)
//   Initializing a V1 LLM engine (v0.10.1.1) with config: … / Initializing an
//   LLM engine (v0.6.4) with config: …; vLLM API server version X;
//   non-default args: {…}; Chunked prefill is enabled with max_num_batched_tokens=N
// SGLang (model_executor/model_runner.py, mem_cache/memory_pool.py,
// managers/scheduler.py; "GB" there is 2^30 bytes):
//   Load weight end. … mem usage=X GB
//   KV Cache is allocated. [dtype: D, ]#tokens: N, K size: X GB, V size: Y GB
//   (MLA: KV size: X GB)
//   max_total_num_tokens=N, chunked_prefill_size=C, …, max_running_requests=R,
//   context_len=L;  Capture cuda graph end. … mem usage=X GB;  server_args=ServerArgs(…)
// TensorRT-LLM (cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp):
//   [MemUsageChange] Allocated X GiB for max tokens in paged KV cache (N)
//   Using N tokens in paged KV cache;  Allocate B bytes for k/v cache
//   Number of tokens per block: T;  Number of blocks in KV cache primary pool: B
//   Memory usage when calculating max tokens in paged kv cache: total: X GiB
//
// Records: " | " separates records like a line break (excerpts pasted joined).
// A physical line that starts with a lower-case letter, with one of ":,)]}=._"
// or with a single blank continues the record above it (logs hard-wrapped at a
// fixed width; vLLM's multi-line messages pasted without their prefixes) and is
// joined to it without a separator. When a fact is stated twice with different
// values the last one is kept (a restarted engine, TensorRT-LLM's estimate pass
// before the real allocation) and the conflict is recorded.

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "service/translate/ingest_internal.h"

namespace capplan::service::ingest_internal {
namespace {

constexpr size_t kMaxKeptLineBytes = 1000;
constexpr size_t kMaxKeptLines = 2000;

struct Record {
  int line = 0;
  std::string text;
};

bool ContinuesRecord(absl::string_view line) {
  if (line.empty()) return false;
  const char c = line[0];
  if (c == ' ') return line.size() > 1 && line[1] != ' ' && line[1] != '\t';
  return absl::ascii_islower(static_cast<unsigned char>(c)) || absl::StrContains(":,)]}=._", c);
}

// Strips a k8s viewer's box characters and surrounding blanks.
absl::string_view CleanLogLine(absl::string_view line) {
  line = absl::StripTrailingAsciiWhitespace(line);
  absl::ConsumePrefix(&line, "\xE2\x94\x82");  // │
  absl::ConsumeSuffix(&line, "\xE2\x94\x82");
  return absl::StripAsciiWhitespace(line);
}

// Physical lines into records; " | " also separates records (excerpts of
// several log lines are often pasted joined that way).
std::vector<Record> SplitRecords(absl::string_view text) {
  std::vector<Record> records;
  int n = 0;
  for (absl::string_view physical : absl::StrSplit(text, '\n')) {
    ++n;
    bool first = true;
    for (absl::string_view raw : absl::StrSplit(physical, " | ")) {
      raw = absl::StripTrailingAsciiWhitespace(raw);
      const bool continues = first && !records.empty() && ContinuesRecord(raw);
      first = false;
      if (continues) {
        records.back().text.append(raw.data(), raw.size());
        continue;
      }
      const absl::string_view line = CleanLogLine(raw);
      if (line.empty()) continue;
      records.push_back(Record{n, std::string(line)});
    }
  }
  return records;
}

// A number right after `pos` (blanks skipped): digits with '.', ',' and a
// leading '-'; returns it as written and moves `pos` past it.
absl::string_view NumberAt(absl::string_view text, size_t& pos) {
  while (pos < text.size() && text[pos] == ' ') ++pos;
  const size_t start = pos;
  if (pos < text.size() && text[pos] == '-') ++pos;
  while (pos < text.size() && (absl::ascii_isdigit(static_cast<unsigned char>(text[pos])) ||
                               text[pos] == '.' || text[pos] == ',')) {
    ++pos;
  }
  absl::string_view number = text.substr(start, pos - start);
  while (!number.empty() && (number.back() == '.' || number.back() == ',')) {
    number.remove_suffix(1);
    --pos;
  }
  return number;
}

// Bytes per unit as the engines print them; GB and MB are the engines' GiB
// and MiB (all three engines divide by 2^30 / 2^20 before printing).
std::optional<double> UnitBytes(absl::string_view text, size_t& pos) {
  while (pos < text.size() && text[pos] == ' ') ++pos;
  struct Unit {
    absl::string_view name;
    double bytes;
  };
  static constexpr Unit kUnits[] = {
      {"TiB", 1099511627776.0}, {"GiB", 1073741824.0},   {"MiB", 1048576.0},
      {"KiB", 1024.0},          {"TB", 1099511627776.0}, {"GB", 1073741824.0},
      {"MB", 1048576.0},        {"KB", 1024.0},          {"bytes", 1.0},
  };
  for (const Unit& u : kUnits) {
    if (absl::StartsWith(text.substr(pos), u.name)) {
      pos += u.name.size();
      return u.bytes;
    }
  }
  return std::nullopt;
}

// The value of `key=V`, `key: V` or `'key': V` in a record, quotes removed.
std::optional<std::string> ValueOfKey(absl::string_view text, absl::string_view key) {
  for (size_t at = text.find(key); at != absl::string_view::npos; at = text.find(key, at + 1)) {
    if (at > 0 && !absl::StrContains(" ,({'\"", text[at - 1])) continue;
    size_t p = at + key.size();
    if (p < text.size() && (text[p] == '\'' || text[p] == '"')) ++p;
    while (p < text.size() && text[p] == ' ') ++p;
    if (p >= text.size() || (text[p] != '=' && text[p] != ':')) continue;
    ++p;
    while (p < text.size() && text[p] == ' ') ++p;
    if (p < text.size() && (text[p] == '\'' || text[p] == '"')) {
      const size_t close = text.find(text[p], p + 1);
      if (close == absl::string_view::npos) return std::nullopt;
      return std::string(text.substr(p + 1, close - p - 1));
    }
    const size_t end = text.find_first_of(",)} ", p);
    return std::string(text.substr(p, end == absl::string_view::npos ? end : end - p));
  }
  return std::nullopt;
}

std::optional<bool> ParseBool(absl::string_view s) {
  if (s == "True" || s == "true") return true;
  if (s == "False" || s == "false") return false;
  return std::nullopt;
}

class LogReader {
 public:
  explicit LogReader(IngestedFile& out) : out_(out), facts_(out.engine_log.emplace()) {}

  absl::Status Read(const Record& r);
  size_t matched_records() const { return matched_records_; }

 private:
  absl::Status Refuse(const Record& r, absl::string_view what, absl::string_view rule) const {
    return absl::InvalidArgumentError(
        absl::StrCat(out_.file_name, ":", r.line, ": ", what, "; ", rule));
  }
  template <typename T>
  void Set(std::optional<T>& field, T value, absl::string_view name, const Record& r);
  void Engine(absl::string_view engine, const Record& r);

  // A size in bytes after `anchor`: "Available KV cache memory: 24.83 GiB".
  absl::StatusOr<std::optional<uint64_t>> Bytes(const Record& r, absl::string_view anchor,
                                                size_t from = 0);
  // A whole number after `anchor`: "GPU KV cache size: 464,848".
  absl::StatusOr<std::optional<uint64_t>> Whole(const Record& r, absl::string_view anchor,
                                                size_t from = 0);

  absl::Status ReadVllm(const Record& r);
  absl::Status ReadVllmCapacity(const Record& r);
  absl::Status ReadVllmConfig(const Record& r);
  absl::Status ReadSglang(const Record& r);
  absl::Status ReadTrtllm(const Record& r);
  absl::Status ReadSettings(const Record& r);

  IngestedFile& out_;
  EngineLogFacts& facts_;
  std::map<std::string, int> fact_lines_;
  std::set<std::string> mixed_engine_reported_;
  bool matched_ = false;
  size_t matched_records_ = 0;
};

std::string ShowFact(bool v) { return v ? "true" : "false"; }
std::string ShowFact(double v) { return FormatFigure(v); }
std::string ShowFact(uint64_t v) { return absl::StrCat(v); }
std::string ShowFact(uint32_t v) { return absl::StrCat(v); }
std::string ShowFact(const std::string& v) { return absl::StrCat("\"", v, "\""); }

template <typename T>
void LogReader::Set(std::optional<T>& field, T value, absl::string_view name, const Record& r) {
  matched_ = true;
  int& line = fact_lines_[std::string(name)];
  if (field && *field != value) {
    facts_.conflicts.push_back(absl::StrCat(name, ": line ", line, " says ", ShowFact(*field),
                                            ", line ", r.line, " says ", ShowFact(value),
                                            "; the last is kept"));
  }
  field = std::move(value);
  line = r.line;
}

void LogReader::Engine(absl::string_view engine, const Record& r) {
  if (!facts_.engine) {
    facts_.engine = std::string(engine);
    fact_lines_["engine"] = r.line;
    return;
  }
  if (*facts_.engine == engine || !mixed_engine_reported_.insert(std::string(engine)).second) {
    return;
  }
  facts_.conflicts.push_back(absl::StrCat("engine: line ", fact_lines_["engine"], " is ",
                                          *facts_.engine, ", line ", r.line, " is ", engine,
                                          "; the first is kept"));
}

absl::StatusOr<std::optional<uint64_t>> LogReader::Bytes(const Record& r, absl::string_view anchor,
                                                         size_t from) {
  const size_t at = absl::string_view(r.text).find(anchor, from);
  if (at == absl::string_view::npos) return std::optional<uint64_t>();
  size_t pos = at + anchor.size();
  const absl::string_view number = NumberAt(r.text, pos);
  const std::optional<double> unit = UnitBytes(r.text, pos);
  const std::optional<double> x = ParseDecimal(number);
  if (!x || !unit) return std::optional<uint64_t>();
  const std::string shown =
      absl::StrCat("\"", absl::StripAsciiWhitespace(anchor), " ", number, "\"");
  if (*x < 0) return Refuse(r, shown, "must not be negative");
  const double bytes = *x * *unit;
  if (bytes >= 1.8e19) return Refuse(r, shown, "must be below 2^64 bytes");
  return std::optional<uint64_t>(static_cast<uint64_t>(bytes + 0.5));
}

absl::StatusOr<std::optional<uint64_t>> LogReader::Whole(const Record& r, absl::string_view anchor,
                                                         size_t from) {
  const size_t at = absl::string_view(r.text).find(anchor, from);
  if (at == absl::string_view::npos) return std::optional<uint64_t>();
  size_t pos = at + anchor.size();
  const absl::string_view number = NumberAt(r.text, pos);
  if (number.empty()) return std::optional<uint64_t>();
  const std::string shown =
      absl::StrCat("\"", absl::StripAsciiWhitespace(anchor), " ", number, "\"");
  if (number[0] == '-') return Refuse(r, shown, "must not be negative");
  const std::optional<uint64_t> n = ParseGroupedInteger(number);
  if (!n) return Refuse(r, shown, "must be a whole number below 2^64");
  return n;
}

absl::Status LogReader::ReadVllm(const Record& r) {
  const absl::string_view t = r.text;
  std::optional<uint64_t> b;
  for (absl::string_view anchor : {"Model loading took", "Loading model weights took",
                                   "model weights take", "weights memory:"}) {
    CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, anchor));
    if (b) {
      Set(facts_.weights_bytes, *b, "weights_bytes", r);
      Engine("vllm", r);
      break;
    }
  }
  for (absl::string_view anchor :
       {"Available KV cache memory:", "the rest of the memory reserved for KV Cache is",
        "kv_cache_size="}) {
    CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, anchor));
    if (b) {
      Set(facts_.kv_cache_bytes, *b, "kv_cache_bytes", r);
      Engine("vllm", r);
    }
  }
  for (absl::string_view anchor : {"total_gpu_memory (", "total_gpu_memory="}) {
    CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, anchor));
    if (b) Set(facts_.gpu_total_bytes, *b, "gpu_total_bytes", r);
  }
  if (const size_t at = t.find("Graph capturing finished"); at != absl::string_view::npos) {
    CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, ", took", at));
    if (b) Set(facts_.cuda_graph_bytes, *b, "cuda_graph_bytes", r);
  }
  CAPPLAN_RETURN_IF_ERROR(ReadVllmCapacity(r));
  return ReadVllmConfig(r);
}

absl::Status LogReader::ReadVllmCapacity(const Record& r) {
  const absl::string_view t = r.text;
  std::optional<uint64_t> n;
  CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, "GPU KV cache size:"));
  if (n) {
    Set(facts_.kv_pool_tokens, *n, "kv_pool_tokens", r);
    Engine("vllm", r);
    if (!facts_.engine_generation) facts_.engine_generation = "V1";
  }
  CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, "tokens that can be stored in KV cache ("));
  if (n) {
    Set(facts_.kv_pool_tokens, *n, "kv_pool_tokens", r);
    Engine("vllm", r);
  }
  const size_t at = t.find("Maximum concurrency for ");
  if (at != absl::string_view::npos) {
    size_t pos = at + 24;
    const std::optional<uint64_t> len = ParseGroupedInteger(NumberAt(t, pos));
    const size_t colon = t.find("tokens per request:", pos);
    if (len && colon != absl::string_view::npos) {
      pos = colon + 19;
      const absl::string_view number = NumberAt(t, pos);
      const std::optional<double> c = ParseDecimal(number);
      if (c && *c < 0) return Refuse(r, "\"Maximum concurrency\"", "must not be negative");
      if (c) {
        Set(facts_.max_concurrency, *c, "max_concurrency", r);
        Set(facts_.max_concurrency_at_tokens, *len, "max_concurrency_at_tokens", r);
        Engine("vllm", r);
      }
    }
  }
  for (absl::string_view anchor :
       {"# GPU blocks:", "# cuda blocks:", "# TPU blocks:", "# HPU blocks:", "# XPU blocks:",
        "GPU blocks:", "num_gpu_blocks is:"}) {
    CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, anchor));
    if (!n) continue;
    Set(facts_.gpu_blocks, *n, "gpu_blocks", r);
    Engine("vllm", r);
    if (!facts_.engine_generation && absl::StrContains(t, "CPU blocks:")) {
      facts_.engine_generation = "V0";
    }
    break;
  }
  return absl::OkStatus();
}

absl::Status LogReader::ReadVllmConfig(const Record& r) {
  const absl::string_view t = r.text;
  for (absl::string_view anchor :
       {"Initializing a V1 LLM engine (v", "Initializing an LLM engine (v"}) {
    const size_t at = t.find(anchor);
    if (at == absl::string_view::npos) continue;
    const size_t start = at + anchor.size();
    const size_t close = t.find(')', start);
    if (close == absl::string_view::npos) continue;
    Set(facts_.engine_version, std::string(t.substr(start, close - start)), "engine_version", r);
    facts_.engine_generation = absl::StrContains(anchor, "V1") ? "V1" : "V0";
    Engine("vllm", r);
  }
  const size_t api = t.find("vLLM API server version ");
  if (api != absl::string_view::npos) {
    size_t pos = api + 24;
    const size_t end = t.find_first_of(" \t", pos);
    Set(facts_.engine_version,
        std::string(t.substr(pos, end == absl::string_view::npos ? end : end - pos)),
        "engine_version", r);
    Engine("vllm", r);
  }
  std::optional<uint64_t> n;
  CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, "Chunked prefill is enabled with max_num_batched_tokens="));
  if (n) Set(facts_.max_num_batched_tokens, *n, "max_num_batched_tokens", r);
  CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, "Using max model len"));
  if (n) Set(facts_.max_model_len, *n, "max_model_len", r);
  const size_t gpu = t.find("NVIDIA GPU: ");
  if (gpu != absl::string_view::npos) {
    Set(facts_.gpu_name, std::string(absl::StripAsciiWhitespace(t.substr(gpu + 12))), "gpu_name",
        r);
  }
  return absl::OkStatus();
}

absl::Status LogReader::ReadSglang(const Record& r) {
  const absl::string_view t = r.text;
  std::optional<uint64_t> b, n;
  if (const size_t at = t.find("Load weight end."); at != absl::string_view::npos) {
    CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, "mem usage=", at));
    if (b) Set(facts_.weights_bytes, *b, "weights_bytes", r);
    Engine("sglang", r);
  }
  if (const size_t at = t.find("KV Cache is allocated."); at != absl::string_view::npos) {
    Engine("sglang", r);
    CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, "#tokens:", at));
    if (n) Set(facts_.kv_pool_tokens, *n, "kv_pool_tokens", r);
    std::optional<uint64_t> k, v;
    CAPPLAN_ASSIGN_OR_RETURN(k, Bytes(r, " K size:", at));
    CAPPLAN_ASSIGN_OR_RETURN(v, Bytes(r, " V size:", at));
    CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, " KV size:", at));
    if (k && v) b = *k + *v;
    if (b) Set(facts_.kv_cache_bytes, *b, "kv_cache_bytes", r);
  }
  CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, "max_total_num_tokens="));
  if (n) {
    Set(facts_.kv_pool_tokens, *n, "kv_pool_tokens", r);
    Engine("sglang", r);
  }
  size_t capture = t.find("Capture cuda graph end.");
  if (capture == absl::string_view::npos) capture = t.find("CUDA graph end.");
  if (capture != absl::string_view::npos && !absl::StrContains(t, "draft")) {
    CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, "mem usage=", capture));
    if (b) Set(facts_.cuda_graph_bytes, *b, "cuda_graph_bytes", r);
    Engine("sglang", r);
  }
  if (absl::StrContains(t, "ServerArgs(")) Engine("sglang", r);
  return absl::OkStatus();
}

absl::Status LogReader::ReadTrtllm(const Record& r) {
  const absl::string_view t = r.text;
  std::optional<uint64_t> b, n;
  const size_t alloc = t.find("for max tokens in paged KV cache (");
  if (alloc != absl::string_view::npos) {
    CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, "Allocated"));
    CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, "for max tokens in paged KV cache ("));
    if (b) Set(facts_.kv_cache_bytes, *b, "kv_cache_bytes", r);
    if (n) Set(facts_.kv_pool_tokens, *n, "kv_pool_tokens", r);
    Engine("tensorrt-llm", r);
  }
  const size_t using_at = t.find("tokens in paged KV cache");
  if (using_at != absl::string_view::npos && absl::StrContains(t, "Using ")) {
    CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, "Using"));
    if (n) Set(facts_.kv_pool_tokens, *n, "kv_pool_tokens", r);
    Engine("tensorrt-llm", r);
  }
  if (absl::StrContains(t, "bytes for k/v cache")) {
    CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, "Allocate"));
    if (n) Set(facts_.kv_cache_bytes, *n, "kv_cache_bytes", r);
    Engine("tensorrt-llm", r);
  }
  for (absl::string_view anchor : {"Number of tokens per block:", "tokens per block="}) {
    CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, anchor));
    if (n && *n <= 0xffffffffu) {
      Set(facts_.block_size, static_cast<uint32_t>(*n), "block_size", r);
      Engine("tensorrt-llm", r);
    }
  }
  for (absl::string_view anchor :
       {"Number of blocks in KV cache primary pool:", "primary blocks="}) {
    CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, anchor));
    if (n) Set(facts_.gpu_blocks, *n, "gpu_blocks", r);
  }
  CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, "max tokens in paged kv cache: total:"));
  if (b) Set(facts_.gpu_total_bytes, *b, "gpu_total_bytes", r);
  const size_t version = t.find("TensorRT-LLM version: ");
  if (version != absl::string_view::npos) {
    Set(facts_.engine_version, std::string(absl::StripAsciiWhitespace(t.substr(version + 22))),
        "engine_version", r);
    Engine("tensorrt-llm", r);
  }
  return absl::OkStatus();
}

// Settings in config lines: vLLM's "with config:" and "non-default args:",
// SGLang's ServerArgs(...) and its scheduler line.
absl::Status LogReader::ReadSettings(const Record& r) {
  const absl::string_view t = r.text;
  if (!absl::StrContains(t, "with config:") && !absl::StrContains(t, "non-default args:") &&
      !absl::StrContains(t, "ServerArgs(") && !absl::StrContains(t, "max_total_num_tokens=")) {
    return absl::OkStatus();
  }
  auto whole = [&](std::initializer_list<absl::string_view> keys) -> std::optional<uint64_t> {
    for (absl::string_view key : keys) {
      if (auto v = ValueOfKey(t, key)) return ParseGroupedInteger(*v);
    }
    return std::nullopt;
  };
  auto small = [&](std::optional<uint64_t> v) -> std::optional<uint32_t> {
    if (v && *v <= 0xffffffffu) return static_cast<uint32_t>(*v);
    return std::nullopt;
  };
  if (auto v = small(whole({"tensor_parallel_size", "tp_size"}))) Set(facts_.tp, *v, "tp", r);
  if (auto v = small(whole({"pipeline_parallel_size", "pp_size"}))) Set(facts_.pp, *v, "pp", r);
  if (auto v = whole({"max_model_len", "max_seq_len", "context_length", "context_len"})) {
    Set(facts_.max_model_len, *v, "max_model_len", r);
  }
  if (auto v = whole({"max_num_batched_tokens", "chunked_prefill_size"})) {
    Set(facts_.max_num_batched_tokens, *v, "max_num_batched_tokens", r);
  }
  if (auto v = small(whole({"max_num_seqs", "max_running_requests"}))) {
    Set(facts_.max_num_seqs, *v, "max_num_seqs", r);
  }
  if (auto v = small(whole({"block_size", "page_size"}))) {
    Set(facts_.block_size, *v, "block_size", r);
  }
  if (auto v = ValueOfKey(t, "gpu_memory_utilization"); v && ParseDecimal(*v)) {
    Set(facts_.gpu_memory_utilization, *ParseDecimal(*v), "gpu_memory_utilization", r);
  }
  if (auto v = ValueOfKey(t, "mem_fraction_static"); v && ParseDecimal(*v)) {
    Set(facts_.mem_fraction_static, *ParseDecimal(*v), "mem_fraction_static", r);
  }
  if (auto v = ValueOfKey(t, "kv_cache_dtype"); v && !v->empty() && *v != "None") {
    Set(facts_.kv_cache_dtype, *v, "kv_cache_dtype", r);
  }
  if (auto v = ValueOfKey(t, "enforce_eager"); v && ParseBool(*v)) {
    Set(facts_.enforce_eager, *ParseBool(*v), "enforce_eager", r);
  }
  if (auto v = ValueOfKey(t, "disable_cuda_graph"); v && ParseBool(*v)) {
    Set(facts_.enforce_eager, *ParseBool(*v), "enforce_eager", r);
  }
  if (auto v = ValueOfKey(t, "enable_prefix_caching"); v && ParseBool(*v)) {
    Set(facts_.enable_prefix_caching, *ParseBool(*v), "enable_prefix_caching", r);
  }
  if (auto v = ValueOfKey(t, "disable_radix_cache"); v && ParseBool(*v)) {
    Set(facts_.enable_prefix_caching, !*ParseBool(*v), "enable_prefix_caching", r);
  }
  for (absl::string_view key : {"model", "model_path"}) {
    if (auto v = ValueOfKey(t, key); v && !v->empty()) Set(facts_.model, *v, "model", r);
  }
  return absl::OkStatus();
}

absl::Status LogReader::Read(const Record& r) {
  matched_ = false;
  CAPPLAN_RETURN_IF_ERROR(ReadVllm(r));
  CAPPLAN_RETURN_IF_ERROR(ReadSglang(r));
  CAPPLAN_RETURN_IF_ERROR(ReadTrtllm(r));
  CAPPLAN_RETURN_IF_ERROR(ReadSettings(r));
  if (!matched_) return absl::OkStatus();
  if (absl::StrContains(r.text, "[TensorRT-LLM]") || absl::StrContains(r.text, "[TRT-LLM]")) {
    Engine("tensorrt-llm", r);
  }
  ++matched_records_;
  if (facts_.matched_lines.size() < kMaxKeptLines) {
    EngineLogLine kept{r.line, r.text.substr(0, kMaxKeptLineBytes)};
    if (r.text.size() > kMaxKeptLineBytes) kept.text += "…";
    facts_.matched_lines.push_back(std::move(kept));
  }
  return absl::OkStatus();
}

}  // namespace

bool LooksLikeEngineLog(absl::string_view text) {
  for (absl::string_view anchor :
       {"GPU KV cache size:", "Available KV cache memory:", "Model loading took",
        "Loading model weights took", "KV Cache is allocated",
        "max_total_num_tokens=", "paged KV cache",
        "GPU blocks:", "cuda blocks:", "Maximum concurrency for", "Initializing a V1 LLM engine",
        "Initializing an LLM engine", "Load weight end", "reserved for KV Cache is",
        "stored in KV cache (", "paged kv cache", "bytes for k/v cache", "KV cache primary pool"}) {
    if (absl::StrContains(text, anchor)) return true;
  }
  return false;
}

absl::Status ParseEngineLog(absl::string_view text, IngestedFile& out) {
  LogReader reader(out);
  for (const Record& r : SplitRecords(text)) CAPPLAN_RETURN_IF_ERROR(reader.Read(r));
  if (reader.matched_records() == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(out.file_name,
                     ": no engine start-up facts (looked for vLLM \"GPU KV cache size:\", "
                     "\"Model loading took\", SGLang \"KV Cache is allocated\", TensorRT-LLM "
                     "\"paged KV cache\" lines)"));
  }
  if (reader.matched_records() > kMaxKeptLines) {
    out.notes.push_back(absl::StrCat(reader.matched_records(), " matching lines; the first ",
                                     kMaxKeptLines, " are kept"));
  }
  return absl::OkStatus();
}

}  // namespace capplan::service::ingest_internal
