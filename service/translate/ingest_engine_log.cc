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
//   | model weights take X GiB                      → weights_bytes
//   Available KV cache memory: X GiB (V1, per worker) | the rest of the memory
//   reserved for KV Cache is X GiB (V0 ≥ 0.6.5) | kv_cache_size=X GiB (V0
//   0.6.4)                                         → kv_cache_bytes
//   V0 memory profiling, ≥ 0.6.5: "the current vLLM instance can use
//   total_gpu_memory (T GiB) x gpu_memory_utilization (U) = …" → gpu_total_bytes,
//   gpu_memory_utilization; "The current --gpu-memory-utilization=U is
//   equivalent to …" (V1 with CUDA-graph profiling) → gpu_memory_utilization;
//   "non_torch_memory takes N GiB; PyTorch activation
//   peak memory takes A GiB" → non_torch_bytes, activation_peak_bytes.
//   0.6.4: "Memory profiling results: total_gpu_memory=T initial_memory_usage=…
//   peak_torch_memory=P … non_torch_memory=N kv_cache_size=K
//   gpu_memory_utilization=U" → gpu_total_bytes, non_torch_bytes, kv_cache_bytes,
//   gpu_memory_utilization, and profiled_peak_bytes = P + N (P is torch's peak
//   with the weights in it, not an activation peak; P + N is the peak_memory
//   vLLM subtracts from T × U).
//   GPU KV cache size: 464,848 tokens (V1)        → kv_pool_tokens
//   Maximum concurrency for 16,384 tokens per request: 28.37x
//                          → max_concurrency, at 16384 tokens = max_model_len
//   # GPU blocks: N | GPU blocks: N, # CPU blocks: M | # cuda blocks: N |
//   # CUDA blocks: N (0.7.x: the platform's device name, upper case) |
//   num_gpu_blocks is: N                           → gpu_blocks
//   Graph capturing finished in T secs, took X GiB → cuda_graph_bytes
//   … maximum number of tokens that can be stored in KV cache (N)  (V0 refusal)
//   Initializing a V1 LLM engine (v0.10.1.1) with config: … / Initializing an
//   LLM engine (v0.6.4) with config: …; vLLM API server version X;
//   non-default args: {…}; args: Namespace(…); Chunked prefill is enabled with
//   max_num_batched_tokens=N
//   FlashInfer is not available. Falling back to the PyTorch-native
//   implementation of top-p & top-k sampling (V1 0.9-0.10) → native_sampler
// SGLang (model_executor/model_runner.py, mem_cache/memory_pool.py,
// managers/scheduler.py; "GB" there is 2^30 bytes):
//   Load weight begin. avail mem=X GB → free_memory_at_start_bytes (the smallest
//   over the ranks: the budget reduces it with MIN over the TP group)
//   Load weight end. … avail mem=A GB, mem usage=X GB → weights (X); the free
//   memory at start A + X when the begin line is missing
//   KV Cache is allocated. [dtype: D, ]#tokens: N, K size: X GB, V size: Y GB
//   (MLA: KV size: X GB)
//   max_total_num_tokens=N, chunked_prefill_size=C, …, max_running_requests=R,
//   context_len=L;  Capture cuda graph end. … mem usage=X GB;  server_args=ServerArgs(…)
// TensorRT-LLM (cpp/tensorrt_llm/batch_manager/kvCacheManager.cpp; the PyTorch
// backend's tensorrt_llm/_torch/pyexecutor/_util.py and model_engine.py):
//   [MemUsageChange] Allocated X GiB for max tokens in paged KV cache (N)
//   Using N tokens in paged KV cache;  Allocate B bytes for k/v cache
//   Number of tokens per block: T;  Number of blocks in KV cache primary pool: B
//   Memory usage when calculating max tokens in paged kv cache: total: X GiB
//   Use X GB for model weights | Rank 0 uses X GB for model weights → weights_bytes
//   Peak memory during memory usage profiling (torch + non-torch): X GiB, …,
//   fraction is set F, … device total memory T GiB → profiled_peak_bytes,
//   kv_cache_free_gpu_memory_fraction, gpu_total_bytes
//   Memory dynamically allocated during inference (inside torch) …: X GiB
//   → activation_peak_bytes;  Memory used outside torch (e.g., NCCL and CUDA
//   graphs) …: X GiB → non_torch_bytes
//   Estimated max tokens in KV cache : N | Estimated max memory in KV cache : X GiB
//   max_seq_len=S, max_num_requests=R, max_num_tokens=M[, max_batch_size=B];
//   "Using heuristics …: max_batch_size=B, max_num_tokens=M"; the KvCacheConfig
//   dump's free_gpu_memory_fraction=F, tokens_per_block=T → max_model_len = S,
//   max_num_seqs = B (or R), max_num_batched_tokens = M
//   trtllm-bench / TRT engines: TP Size, PP Size, KV Memory Percentage (a
//   percentage), KV Cache Dtype, Quantization, Max Runtime Batch Size, Max
//   Runtime Tokens, TRTGptModel maxSequenceLen / maxNumTokens / maxNumSequences
//   The PyTorch backend sizes the pool twice: a small temporary pool for its
//   memory profiling, then the estimate, then the real pool. An allocation
//   followed by an estimate line is that temporary pool (kept in `notes`, not
//   a conflict); the pool is the allocation after the estimate, or the
//   estimate itself when the engine stopped before allocating (a note says so).
// Launch commands in a record ("(cmd: python3 -m sglang.launch_server …)",
// "vllm serve …", a docker line with vllm/vllm-openai, a bare "--flag value"
// list): --tp/--tp-size/--tensor-parallel-size, --pp-size, --mem-fraction-static,
// --gpu-memory-utilization, --kv-cache-free-gpu-memory-fraction,
// --max-model-len/--context-length/--max-seq-len,
// --max-num-batched-tokens/--chunked-prefill-size/--max-num-tokens,
// --max-num-seqs/--max-running-requests/--max-batch-size, --block-size/--page-size,
// --kv-cache-dtype, --quantization, --dtype, --enforce-eager/--disable-cuda-graph,
// --[no-]enable-prefix-caching, --disable-radix-cache (underscores accepted).
// The model argument is not read from a command (paths, not repo ids).
//
// Records: " | " separates records like a line break (excerpts pasted joined).
// A physical line that starts with a lower-case letter, with one of ":,)]}=._"
// or with a single blank may continue the record above it:
//   - a file hard-wrapped at a fixed width (a width at least two lines of 40
//     bytes or more end at, each followed by such a line) continues the record
//     without a separator when the line above ends at that width;
//   - otherwise a line that states a fact on its own (an unprefixed
//     "non-default args: {…}", "distributed_gpu_executor.py:57] # GPU blocks:
//     2987") is a record of its own;
//   - otherwise it is joined to the record above with one space.
// When a fact is stated twice with different values the last one is kept (a
// restarted engine) and the conflict is recorded.

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
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "service/translate/ingest_internal.h"

namespace capplan::service::ingest_internal {
namespace {

constexpr size_t kMaxKeptLineBytes = 1000;
constexpr size_t kMaxKeptLines = 2000;
// A hard-wrapped file's width: at least this many bytes, reached by at least
// kMinWrappedLines lines that a continuation line follows.
constexpr size_t kMinWrapWidth = 40;
constexpr int kMinWrappedLines = 2;

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

// A number right after `pos` (blanks skipped): digits with '.', ',' and a
// leading '-'; returns it as written and moves `pos` past it.
absl::string_view NumberAt(absl::string_view text, size_t& pos) {
  while (pos < text.size() && (text[pos] == ' ' || text[pos] == '\t')) ++pos;
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

// A whole number written as `key=N` (a sentence's final '.' dropped).
std::optional<uint64_t> WholeOfKey(absl::string_view text, absl::string_view key) {
  std::optional<std::string> v = ValueOfKey(text, key);
  if (!v) return std::nullopt;
  absl::string_view n = *v;
  absl::ConsumeSuffix(&n, ".");
  return ParseGroupedInteger(n);
}

std::optional<bool> ParseBool(absl::string_view s) {
  if (s == "True" || s == "true") return true;
  if (s == "False" || s == "false") return false;
  return std::nullopt;
}

// TensorRT-LLM prints its float32 fractions at double precision
// (0.8999999761581421): the float32 value's shortest decimal.
double Float32Digits(double x) { return ParseDecimal(absl::StrFormat("%.7g", x)).value_or(x); }

// What a launch flag sets, by its engine spelling (dashes, lower case).
enum class Flag {
  kTp,
  kPp,
  kMemFraction,
  kGpuUtilization,
  kFreeFraction,
  kMaxModelLen,
  kBatchedTokens,
  kMaxSeqs,
  kBlockSize,
  kKvDtype,
  kQuantization,
  kDtype,
  kEager,
  kPrefixOn,
  kPrefixOff,
};

std::optional<Flag> FlagOf(absl::string_view name) {
  struct Name {
    absl::string_view name;
    Flag flag;
  };
  static constexpr Name kNames[] = {
      {"--tp", Flag::kTp},
      {"--tp-size", Flag::kTp},
      {"--tensor-parallel-size", Flag::kTp},
      {"-tp", Flag::kTp},
      {"--pp-size", Flag::kPp},
      {"--pipeline-parallel-size", Flag::kPp},
      {"-pp", Flag::kPp},
      {"--mem-fraction-static", Flag::kMemFraction},
      {"--gpu-memory-utilization", Flag::kGpuUtilization},
      {"--kv-cache-free-gpu-memory-fraction", Flag::kFreeFraction},
      {"--max-model-len", Flag::kMaxModelLen},
      {"--context-length", Flag::kMaxModelLen},
      {"--max-seq-len", Flag::kMaxModelLen},
      {"--max-num-batched-tokens", Flag::kBatchedTokens},
      {"--chunked-prefill-size", Flag::kBatchedTokens},
      {"--max-num-tokens", Flag::kBatchedTokens},
      {"--max-num-seqs", Flag::kMaxSeqs},
      {"--max-running-requests", Flag::kMaxSeqs},
      {"--max-batch-size", Flag::kMaxSeqs},
      {"--block-size", Flag::kBlockSize},
      {"--page-size", Flag::kBlockSize},
      {"--kv-cache-dtype", Flag::kKvDtype},
      {"--quantization", Flag::kQuantization},
      {"-q", Flag::kQuantization},
      {"--dtype", Flag::kDtype},
      {"--enforce-eager", Flag::kEager},
      {"--disable-cuda-graph", Flag::kEager},
      {"--enable-prefix-caching", Flag::kPrefixOn},
      {"--no-enable-prefix-caching", Flag::kPrefixOff},
      {"--disable-radix-cache", Flag::kPrefixOff},
  };
  for (const Name& n : kNames) {
    if (n.name == name) return n.flag;
  }
  return std::nullopt;
}

bool IsSwitch(Flag f) { return f == Flag::kEager || f == Flag::kPrefixOn || f == Flag::kPrefixOff; }

// A record that holds an engine launch command (or a bare list of its flags).
bool HoldsLaunchCommand(absl::string_view t) {
  if (absl::StartsWith(t, "--")) return true;
  for (absl::string_view marker : {"(cmd:", "sglang.launch_server", "vllm serve ",
                                   "vllm.entrypoints", "vllm/vllm-openai", "trtllm-serve "}) {
    if (absl::StrContains(t, marker)) return true;
  }
  return false;
}

class LogReader {
 public:
  explicit LogReader(IngestedFile& out) : out_(out), facts_(out.engine_log.emplace()) {}

  absl::Status Read(const Record& r);
  // After the last record: what the order of the lines says.
  void Finish();
  size_t matched_records() const { return matched_records_; }

 private:
  absl::Status Refuse(const Record& r, absl::string_view what, absl::string_view rule) const {
    return absl::InvalidArgumentError(
        absl::StrCat(out_.file_name, ":", r.line, ": ", what, "; ", rule));
  }
  template <typename T>
  void Set(std::optional<T>& field, T value, absl::string_view name, const Record& r);
  // SGLang's free memory at start: every rank prints its own ("[... TP1]"),
  // from its "Load weight begin" line or else its end line's sum; the budget
  // takes the smallest over the group (get_available_gpu_memory reduces with
  // MIN), which Finish() keeps. A rank that states two figures is a conflict.
  void SetFreeAtStart(uint64_t value, bool from_begin_line, const Record& r);
  void Engine(absl::string_view engine, const Record& r);
  // A fraction in (0, 1], refused with its words otherwise.
  absl::Status Fraction(std::optional<double>& field, double value, absl::string_view name,
                        absl::string_view shown, const Record& r);

  // A size in bytes after `anchor`: "Available KV cache memory: 24.83 GiB".
  absl::StatusOr<std::optional<uint64_t>> Bytes(const Record& r, absl::string_view anchor,
                                                size_t from = 0);
  // A whole number after `anchor`: "GPU KV cache size: 464,848".
  absl::StatusOr<std::optional<uint64_t>> Whole(const Record& r, absl::string_view anchor,
                                                size_t from = 0);
  // A decimal after `anchor`, nullopt when none follows.
  std::optional<double> Decimal(const Record& r, absl::string_view anchor) const;

  absl::Status ReadVllm(const Record& r);
  absl::Status ReadVllmProfile(const Record& r);
  absl::Status ReadVllmCapacity(const Record& r);
  absl::Status ReadVllmConfig(const Record& r);
  absl::Status ReadSglang(const Record& r);
  absl::Status ReadTrtllm(const Record& r);
  absl::Status ReadTrtllmPool(const Record& r);
  absl::Status ReadTrtllmProfile(const Record& r);
  absl::Status ReadTrtllmSettings(const Record& r);
  absl::Status ReadTrtllmSummary(const Record& r);
  absl::Status ReadSettings(const Record& r);
  absl::Status ReadLaunchFlags(const Record& r);
  absl::Status SetFlag(Flag flag, absl::string_view shown, absl::string_view value,
                       const Record& r);
  // TensorRT-LLM's sizing passes (see the header).
  void PoolAllocated(const Record& r);
  void PoolEstimated(const Record& r);

  IngestedFile& out_;
  EngineLogFacts& facts_;
  std::map<std::string, int> fact_lines_;
  std::set<std::string> mixed_engine_reported_;
  bool matched_ = false;
  size_t matched_records_ = 0;
  // The last "Allocated … for max tokens in paged KV cache" and estimate.
  std::optional<Record> allocation_;
  std::optional<Record> estimate_;
  bool pool_is_estimate_ = false;
  // Per TP rank (the "TPn" tag; -1 untagged): the begin line's figure and
  // the end line's sum, with their lines.
  struct RankFree {
    std::optional<uint64_t> begin, end_sum;
    int begin_line = 0, end_line = 0;
  };
  std::map<int, RankFree> free_at_start_by_rank_;
  // TensorRT-LLM's "max_seq_len is not specified, using inferred value N".
  std::optional<uint64_t> trtllm_inferred_seq_len_;
};

// One name per dtype, so that a launch flag's alias ('half') and the
// engine's config print (torch.float16) are the same fact, not a conflict.
std::string CanonicalDtype(absl::string_view v) {
  absl::ConsumePrefix(&v, "torch.");
  const std::string d = absl::AsciiStrToLower(v);
  if (d == "half" || d == "fp16") return "float16";
  if (d == "bf16") return "bfloat16";
  if (d == "float" || d == "fp32") return "float32";
  return d;
}

// One name per KV cache dtype: vLLM's "fp8" is e4m3 (its launch flag and
// its config print may spell it either way), torch's float8_e4m3fn the
// same; e5m2 stays apart (another format).
std::string CanonicalKvDtype(absl::string_view v) {
  absl::ConsumePrefix(&v, "torch.");
  const std::string d = absl::AsciiStrToLower(v);
  if (d == "fp8" || d == "fp8_e4m3" || d == "float8_e4m3fn" || d == "float8_e4m3") {
    return "fp8_e4m3";
  }
  if (d == "float8_e5m2") return "fp8_e5m2";
  if (d == "bf16" || d == "bfloat16") return "bfloat16";
  if (d == "half" || d == "fp16" || d == "float16") return "float16";
  return d;
}

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

// The TP rank an SGLang line names ("[2025-03-08 12:29:21 TP1] ..."), -1 if none.
int SglangRank(absl::string_view text) {
  const size_t at = text.find(" TP");
  if (at == absl::string_view::npos) return -1;
  size_t pos = at + 3;
  int rank = 0;
  bool digits = false;
  while (pos < text.size() && absl::ascii_isdigit(text[pos]) && rank < 100000) {
    rank = rank * 10 + (text[pos++] - '0');
    digits = true;
  }
  return digits && pos < text.size() && text[pos] == ']' ? rank : -1;
}

void LogReader::SetFreeAtStart(uint64_t value, bool from_begin_line, const Record& r) {
  matched_ = true;
  RankFree& rank = free_at_start_by_rank_[SglangRank(r.text)];
  std::optional<uint64_t>& field = from_begin_line ? rank.begin : rank.end_sum;
  int& line = from_begin_line ? rank.begin_line : rank.end_line;
  if (field && *field != value) {
    facts_.conflicts.push_back(absl::StrCat("free_memory_at_start_bytes: line ", line, " says ",
                                            *field, ", line ", r.line, " says ", value,
                                            " for the same rank; the last is kept"));
  }
  field = value;
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

absl::Status LogReader::Fraction(std::optional<double>& field, double value, absl::string_view name,
                                 absl::string_view shown, const Record& r) {
  if (!(value > 0) || value > 1) return Refuse(r, shown, "must be a fraction in (0, 1]");
  Set(field, value, name, r);
  return absl::OkStatus();
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

std::optional<double> LogReader::Decimal(const Record& r, absl::string_view anchor) const {
  const size_t at = absl::string_view(r.text).find(anchor);
  if (at == absl::string_view::npos) return std::nullopt;
  size_t pos = at + anchor.size();
  return ParseDecimal(NumberAt(r.text, pos));
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
    const size_t took = t.find(", took", at);
    size_t pos = took == absl::string_view::npos ? t.size() : took + 6;
    if (absl::StartsWith(NumberAt(t, pos), "-")) {
      // V1 prints the free-memory change: the capture can free more than it takes.
      matched_ = true;
      facts_.notes.push_back(absl::StrCat("line ", r.line, ": the CUDA graph capture \"took ",
                                          t.substr(took + 7),
                                          "\" as printed (memory freed "
                                          "while capturing); no CUDA graph figure"));
    } else {
      CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, ", took", at));
      if (b) Set(facts_.cuda_graph_bytes, *b, "cuda_graph_bytes", r);
    }
  }
  if (absl::StrContains(t, "Falling back to the PyTorch-native implementation of top-p & top-k")) {
    Set(facts_.native_sampler, true, "native_sampler", r);
    Engine("vllm", r);
  }
  CAPPLAN_RETURN_IF_ERROR(ReadVllmProfile(r));
  CAPPLAN_RETURN_IF_ERROR(ReadVllmCapacity(r));
  return ReadVllmConfig(r);
}

// V0's memory-profiling summary (see the header for what maps to what).
absl::Status LogReader::ReadVllmProfile(const Record& r) {
  const absl::string_view t = r.text;
  std::optional<uint64_t> non_torch, peak, b;
  for (absl::string_view anchor : {"non_torch_memory takes", "non_torch_memory="}) {
    CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, anchor));
    if (b) non_torch = b;
  }
  if (non_torch) Set(facts_.non_torch_bytes, *non_torch, "non_torch_bytes", r);
  CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, "PyTorch activation peak memory takes"));
  if (b) Set(facts_.activation_peak_bytes, *b, "activation_peak_bytes", r);
  CAPPLAN_ASSIGN_OR_RETURN(peak, Bytes(r, "peak_torch_memory="));
  if (peak && non_torch) {
    Set(facts_.profiled_peak_bytes, *peak + *non_torch, "profiled_peak_bytes", r);
    facts_.notes.push_back(
        absl::StrCat("line ", r.line,
                     ": profiled peak = peak_torch_memory + non_torch_memory (the peak_memory vLLM "
                     "subtracts from total_gpu_memory × gpu_memory_utilization)"));
  }
  // V1 0.19+ with CUDA-graph memory profiling states the fraction in effect,
  // the release's default when the user set none: "The current
  // --gpu-memory-utilization=0.9200 is equivalent to ...".
  if (std::optional<double> current = Decimal(r, "The current --gpu-memory-utilization=")) {
    Engine("vllm", r);
    CAPPLAN_RETURN_IF_ERROR(Fraction(facts_.gpu_memory_utilization, *current,
                                     "gpu_memory_utilization",
                                     absl::StrCat("\"--gpu-memory-utilization=", *current, "\""),
                                     r));
  }
  const bool profile = absl::StrContains(t, "Memory profiling results:") ||
                       absl::StrContains(t, "the current vLLM instance can use");
  if (!profile) return absl::OkStatus();
  Engine("vllm", r);
  std::optional<double> u = Decimal(r, "gpu_memory_utilization (");
  if (!u) u = Decimal(r, "gpu_memory_utilization=");
  if (u) {
    CAPPLAN_RETURN_IF_ERROR(Fraction(facts_.gpu_memory_utilization, *u, "gpu_memory_utilization",
                                     absl::StrCat("\"gpu_memory_utilization ", *u, "\""), r));
  }
  return absl::OkStatus();
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
        // vLLM prints its max_model_len there (V0 executor_base, V1 kv_cache_utils).
        Set(facts_.max_model_len, *len, "max_model_len", r);
        Engine("vllm", r);
      }
    }
  }
  for (absl::string_view anchor :
       {"# GPU blocks:", "# cuda blocks:", "# CUDA blocks:", "# TPU blocks:", "# HPU blocks:",
        "# XPU blocks:",
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
       {"Initializing a V1 LLM engine (v", "Initializing a V0 LLM engine (v",
        "Initializing an LLM engine (v"}) {
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
  if (const size_t at = t.find("Load weight begin."); at != absl::string_view::npos) {
    CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, "avail mem=", at));
    if (b) SetFreeAtStart(*b, /*from_begin_line=*/true, r);
    Engine("sglang", r);
  }
  if (const size_t at = t.find("Load weight end."); at != absl::string_view::npos) {
    CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, "mem usage=", at));
    if (b) Set(facts_.weights_bytes, *b, "weights_bytes", r);
    // The free memory before loading is what is left plus what loading took
    // (SGLang prints mem usage as the drop in available memory), unless a
    // "Load weight begin" line stated it.
    std::optional<uint64_t> left;
    CAPPLAN_ASSIGN_OR_RETURN(left, Bytes(r, "avail mem=", at));
    if (b && left && *left <= UINT64_MAX - *b) {
      SetFreeAtStart(*b + *left, /*from_begin_line=*/false, r);
    }
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
  if (absl::StrContains(t, "ServerArgs(") || absl::StrContains(t, "sglang.launch_server")) {
    Engine("sglang", r);
  }
  return absl::OkStatus();
}

void LogReader::PoolAllocated(const Record& r) {
  if (pool_is_estimate_) {
    facts_.notes.push_back(absl::StrCat("line ", estimate_->line, ": the estimate; line ", r.line,
                                        ": the allocation after it is the pool kept"));
    facts_.kv_pool_tokens.reset();
    facts_.kv_cache_bytes.reset();
    pool_is_estimate_ = false;
  }
  allocation_ = r;
}

void LogReader::PoolEstimated(const Record& r) {
  if (allocation_ && !pool_is_estimate_) {
    facts_.notes.push_back(absl::StrCat(
        "line ", allocation_->line,
        ": the temporary KV pool TensorRT-LLM allocates for its memory profiling (an estimate "
        "follows at line ",
        r.line, "), not the pool it serves with"));
    facts_.kv_pool_tokens.reset();
    facts_.kv_cache_bytes.reset();
    facts_.gpu_blocks.reset();
  }
  pool_is_estimate_ = true;
  estimate_ = r;
}

void LogReader::Finish() {
  for (const auto& [rank, f] : free_at_start_by_rank_) {
    const std::optional<uint64_t> v = f.begin ? f.begin : f.end_sum;
    if (!v) continue;
    if (!facts_.free_memory_at_start_bytes || *v < *facts_.free_memory_at_start_bytes) {
      facts_.free_memory_at_start_bytes = *v;
      fact_lines_["free_memory_at_start_bytes"] = f.begin ? f.begin_line : f.end_line;
    }
  }
  if (!pool_is_estimate_) return;
  facts_.notes.push_back(
      absl::StrCat("the engine stopped before allocating its KV pool (no allocation after line ",
                   estimate_->line, "): the pool is TensorRT-LLM's estimate there"));
}

absl::Status LogReader::ReadTrtllmPool(const Record& r) {
  const absl::string_view t = r.text;
  std::optional<uint64_t> b, n;
  const size_t alloc = t.find("for max tokens in paged KV cache (");
  if (alloc != absl::string_view::npos) {
    CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, "Allocated"));
    CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, "for max tokens in paged KV cache ("));
    if (b || n) PoolAllocated(r);
    if (b) Set(facts_.kv_cache_bytes, *b, "kv_cache_bytes", r);
    if (n) Set(facts_.kv_pool_tokens, *n, "kv_pool_tokens", r);
    Engine("tensorrt-llm", r);
  }
  CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, "Estimated max tokens in KV cache :"));
  CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, "Estimated max memory in KV cache :"));
  if (n || b) {
    PoolEstimated(r);
    if (n) Set(facts_.kv_pool_tokens, *n, "kv_pool_tokens", r);
    if (b) Set(facts_.kv_cache_bytes, *b, "kv_cache_bytes", r);
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
  for (absl::string_view anchor :
       {"Number of tokens per block:", "tokens per block=", "tokens_per_block="}) {
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
  return absl::OkStatus();
}

// The PyTorch backend's weights and memory-profiling lines.
absl::Status LogReader::ReadTrtllmProfile(const Record& r) {
  const absl::string_view t = r.text;
  std::optional<uint64_t> b;
  if (absl::StrContains(t, "GB for model weights")) {
    for (absl::string_view anchor : {" uses ", "Use "}) {
      CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, anchor));
      if (!b) continue;
      Set(facts_.weights_bytes, *b, "weights_bytes", r);
      Engine("tensorrt-llm", r);
      break;
    }
  }
  struct Figure {
    absl::string_view anchor;
    std::optional<uint64_t> EngineLogFacts::*field;
    absl::string_view name;
  };
  static constexpr Figure kFigures[] = {
      {"Peak memory during memory usage profiling (torch + non-torch):",
       &EngineLogFacts::profiled_peak_bytes, "profiled_peak_bytes"},
      {"Memory dynamically allocated during inference (inside torch) in memory usage profiling:",
       &EngineLogFacts::activation_peak_bytes, "activation_peak_bytes"},
      {"Memory used outside torch (e.g., NCCL and CUDA graphs) in memory usage profiling:",
       &EngineLogFacts::non_torch_bytes, "non_torch_bytes"},
      {"device total memory", &EngineLogFacts::gpu_total_bytes, "gpu_total_bytes"},
  };
  for (const Figure& f : kFigures) {
    CAPPLAN_ASSIGN_OR_RETURN(b, Bytes(r, f.anchor));
    if (!b) continue;
    Set(facts_.*f.field, *b, f.name, r);
    Engine("tensorrt-llm", r);
  }
  return absl::OkStatus();
}

// max_seq_len / max_num_tokens / max_batch_size and the memory fraction, as
// the PyTorch backend prints them.
absl::Status LogReader::ReadTrtllmSettings(const Record& r) {
  const absl::string_view t = r.text;
  const bool runtime =
      absl::StrContains(t, "max_seq_len=") &&
      (absl::StrContains(t, "max_num_tokens=") || absl::StrContains(t, "max_num_requests="));
  const bool sizes =
      absl::StrContains(t, "max_batch_size=") && absl::StrContains(t, "max_num_tokens=");
  if (absl::StrContains(t, "max_seq_len is not specified, using inferred value")) {
    if (std::optional<double> v = Decimal(r, "using inferred value"); v && *v >= 1 && *v < 1e12) {
      trtllm_inferred_seq_len_ = static_cast<uint64_t>(*v);
      Engine("tensorrt-llm", r);
      Set(facts_.max_model_len, *trtllm_inferred_seq_len_, "max_model_len", r);
    }
  }
  if (runtime || sizes) {
    Engine("tensorrt-llm", r);
    if (auto v = WholeOfKey(t, "max_seq_len")) {
      // The runtime holds one token more than the inferred length (INFERRED:
      // the overlap scheduler's extra token); the length a request may have
      // is the inferred one.
      const bool inferred_plus_one =
          trtllm_inferred_seq_len_.has_value() && *v == *trtllm_inferred_seq_len_ + 1;
      Set(facts_.max_model_len, inferred_plus_one ? *trtllm_inferred_seq_len_ : *v,
          "max_model_len", r);
    }
    if (auto v = WholeOfKey(t, "max_num_tokens")) {
      Set(facts_.max_num_batched_tokens, *v, "max_num_batched_tokens", r);
    }
    std::optional<uint64_t> seqs = WholeOfKey(t, "max_batch_size");
    if (!seqs) seqs = WholeOfKey(t, "max_num_requests");
    if (seqs && *seqs <= 0xffffffffu) {
      Set(facts_.max_num_seqs, static_cast<uint32_t>(*seqs), "max_num_seqs", r);
    }
  }
  std::optional<double> f = Decimal(r, "free_gpu_memory_fraction and max_tokens are set (to");
  if (!f) f = Decimal(r, "fraction is set");
  if (!f) {
    if (auto v = ValueOfKey(t, "free_gpu_memory_fraction")) f = ParseDecimal(*v);
  }
  if (f) {
    Engine("tensorrt-llm", r);
    CAPPLAN_RETURN_IF_ERROR(Fraction(facts_.kv_cache_free_gpu_memory_fraction, Float32Digits(*f),
                                     "kv_cache_free_gpu_memory_fraction",
                                     absl::StrCat("\"free_gpu_memory_fraction ", *f, "\""), r));
  }
  return absl::OkStatus();
}

// trtllm-bench's summary and the TRT engine's TRTGptModel lines.
absl::Status LogReader::ReadTrtllmSummary(const Record& r) {
  const absl::string_view t = r.text;
  std::optional<uint64_t> n;
  for (absl::string_view label : {"TP Size:", "PP Size:"}) {
    if (!absl::StartsWith(t, label)) continue;
    CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, label));
    if (n && *n <= 0xffffffffu) {
      Set(label[0] == 'T' ? facts_.tp : facts_.pp, static_cast<uint32_t>(*n),
          label[0] == 'T' ? "tp" : "pp", r);
    }
  }
  if (absl::StartsWith(t, "KV Memory Percentage:")) {
    const std::optional<double> pct = Decimal(r, "KV Memory Percentage:");
    if (pct) {
      Engine("tensorrt-llm", r);
      CAPPLAN_RETURN_IF_ERROR(Fraction(facts_.kv_cache_free_gpu_memory_fraction, *pct / 100,
                                       "kv_cache_free_gpu_memory_fraction",
                                       absl::StrCat("\"KV Memory Percentage ", *pct, "%\""), r));
    }
  }
  for (absl::string_view label : {"KV Cache Dtype:", "Quantization:"}) {
    if (!absl::StartsWith(t, label)) continue;
    const std::string v(absl::StripAsciiWhitespace(t.substr(label.size())));
    if (v.empty()) continue;
    if (label[0] == 'K') {
      Set(facts_.kv_cache_dtype, CanonicalKvDtype(v), "kv_cache_dtype", r);
    } else {
      Set(facts_.quantization, v, "quantization", r);
    }
  }
  struct Count {
    absl::string_view anchor;
    int field;  // 0 max_model_len, 1 max_num_batched_tokens, 2 max_num_seqs
  };
  static constexpr Count kCounts[] = {
      {"TRTGptModel maxSequenceLen:", 0}, {"TRTGptModel maxNumTokens:", 1},
      {"Max Runtime Tokens:", 1},         {"TRTGptModel maxNumSequences:", 2},
      {"Max Runtime Batch Size:", 2},
  };
  for (const Count& c : kCounts) {
    CAPPLAN_ASSIGN_OR_RETURN(n, Whole(r, c.anchor));
    if (!n) continue;
    Engine("tensorrt-llm", r);
    if (c.field == 0) Set(facts_.max_model_len, *n, "max_model_len", r);
    if (c.field == 1) Set(facts_.max_num_batched_tokens, *n, "max_num_batched_tokens", r);
    if (c.field == 2 && *n <= 0xffffffffu) {
      Set(facts_.max_num_seqs, static_cast<uint32_t>(*n), "max_num_seqs", r);
    }
  }
  return absl::OkStatus();
}

absl::Status LogReader::ReadTrtllm(const Record& r) {
  const absl::string_view t = r.text;
  CAPPLAN_RETURN_IF_ERROR(ReadTrtllmPool(r));
  CAPPLAN_RETURN_IF_ERROR(ReadTrtllmProfile(r));
  CAPPLAN_RETURN_IF_ERROR(ReadTrtllmSettings(r));
  CAPPLAN_RETURN_IF_ERROR(ReadTrtllmSummary(r));
  for (absl::string_view anchor : {"TensorRT-LLM version: ", "TensorRT LLM version: "}) {
    const size_t version = t.find(anchor);
    if (version == absl::string_view::npos) continue;
    Set(facts_.engine_version,
        std::string(absl::StripAsciiWhitespace(t.substr(version + anchor.size()))),
        "engine_version", r);
    Engine("tensorrt-llm", r);
  }
  return absl::OkStatus();
}

// Settings in config lines: vLLM's "with config:", "non-default args:" and
// "args: Namespace(", SGLang's ServerArgs(...) and its scheduler line.
absl::Status LogReader::ReadSettings(const Record& r) {
  const absl::string_view t = r.text;
  if (!absl::StrContains(t, "with config:") && !absl::StrContains(t, "non-default args:") &&
      !absl::StrContains(t, "args: Namespace(") && !absl::StrContains(t, "ServerArgs(") &&
      !absl::StrContains(t, "max_total_num_tokens=")) {
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
  for (absl::string_view key : {"gpu_memory_utilization", "mem_fraction_static"}) {
    const std::optional<std::string> v = ValueOfKey(t, key);
    const std::optional<double> x = v ? ParseDecimal(*v) : std::nullopt;
    if (!x) continue;
    CAPPLAN_RETURN_IF_ERROR(
        Fraction(key[0] == 'g' ? facts_.gpu_memory_utilization : facts_.mem_fraction_static, *x,
                 key, absl::StrCat(key, " = ", *v), r));
  }
  if (auto v = ValueOfKey(t, "kv_cache_dtype"); v && !v->empty() && *v != "None") {
    Set(facts_.kv_cache_dtype, CanonicalKvDtype(*v), "kv_cache_dtype", r);
  }
  if (auto v = ValueOfKey(t, "dtype"); v && !v->empty() && *v != "None") {
    Set(facts_.dtype, CanonicalDtype(*v), "dtype", r);
  }
  if (auto v = ValueOfKey(t, "quantization"); v && !v->empty()) {
    Set(facts_.quantization, *v, "quantization", r);
  }
  for (absl::string_view key : {"enforce_eager", "disable_cuda_graph"}) {
    if (auto v = ValueOfKey(t, key); v && ParseBool(*v)) {
      Set(facts_.enforce_eager, *ParseBool(*v), "enforce_eager", r);
    }
  }
  if (auto v = ValueOfKey(t, "enable_prefix_caching"); v && ParseBool(*v)) {
    Set(facts_.enable_prefix_caching, *ParseBool(*v), "enable_prefix_caching", r);
  }
  if (auto v = ValueOfKey(t, "language_model_only"); v && ParseBool(*v)) {
    Set(facts_.language_model_only, *ParseBool(*v), "language_model_only", r);
  }
  if (auto v = ValueOfKey(t, "disable_radix_cache"); v && ParseBool(*v)) {
    Set(facts_.enable_prefix_caching, !*ParseBool(*v), "enable_prefix_caching", r);
  }
  for (absl::string_view key : {"model", "model_path"}) {
    if (auto v = ValueOfKey(t, key); v && !v->empty()) Set(facts_.model, *v, "model", r);
  }
  return absl::OkStatus();
}

absl::Status LogReader::SetFlag(Flag flag, absl::string_view shown, absl::string_view value,
                                const Record& r) {
  const std::optional<double> x = ParseDecimal(value);
  const std::optional<uint64_t> n = ParseGroupedInteger(value);
  const std::optional<uint32_t> small =
      n && *n <= 0xffffffffu ? std::optional<uint32_t>(static_cast<uint32_t>(*n)) : std::nullopt;
  const std::string v(value);
  switch (flag) {
    case Flag::kTp:
      if (small) Set(facts_.tp, *small, "tp", r);
      break;
    case Flag::kPp:
      if (small) Set(facts_.pp, *small, "pp", r);
      break;
    case Flag::kMemFraction:
      if (x) return Fraction(facts_.mem_fraction_static, *x, "mem_fraction_static", shown, r);
      break;
    case Flag::kGpuUtilization:
      if (x) return Fraction(facts_.gpu_memory_utilization, *x, "gpu_memory_utilization", shown, r);
      break;
    case Flag::kFreeFraction:
      if (x) {
        return Fraction(facts_.kv_cache_free_gpu_memory_fraction, *x,
                        "kv_cache_free_gpu_memory_fraction", shown, r);
      }
      break;
    case Flag::kMaxModelLen:
      if (n) Set(facts_.max_model_len, *n, "max_model_len", r);
      break;
    case Flag::kBatchedTokens:
      if (n) Set(facts_.max_num_batched_tokens, *n, "max_num_batched_tokens", r);
      break;
    case Flag::kMaxSeqs:
      if (small) Set(facts_.max_num_seqs, *small, "max_num_seqs", r);
      break;
    case Flag::kBlockSize:
      if (small) Set(facts_.block_size, *small, "block_size", r);
      break;
    case Flag::kKvDtype:
      if (!v.empty()) Set(facts_.kv_cache_dtype, CanonicalKvDtype(v), "kv_cache_dtype", r);
      break;
    case Flag::kQuantization:
      if (!v.empty()) Set(facts_.quantization, v, "quantization", r);
      break;
    case Flag::kDtype:
      if (!v.empty()) Set(facts_.dtype, CanonicalDtype(v), "dtype", r);
      break;
    case Flag::kEager:
      Set(facts_.enforce_eager, true, "enforce_eager", r);
      break;
    case Flag::kPrefixOn:
    case Flag::kPrefixOff:
      Set(facts_.enable_prefix_caching, flag == Flag::kPrefixOn, "enable_prefix_caching", r);
      break;
  }
  return absl::OkStatus();
}

absl::Status LogReader::ReadLaunchFlags(const Record& r) {
  if (!HoldsLaunchCommand(r.text)) return absl::OkStatus();
  const std::vector<absl::string_view> words =
      absl::StrSplit(r.text, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  for (size_t i = 0; i < words.size(); ++i) {
    if (!absl::StartsWith(words[i], "-")) continue;
    absl::string_view word = words[i];
    absl::string_view value;
    const size_t eq = word.find('=');
    if (eq != absl::string_view::npos) {
      value = word.substr(eq + 1);
      word = word.substr(0, eq);
    }
    std::string name = absl::AsciiStrToLower(word);
    for (size_t k = 2; k < name.size(); ++k) {
      if (name[k] == '_') name[k] = '-';
    }
    const std::optional<Flag> flag = FlagOf(name);
    if (!flag) continue;
    if (!IsSwitch(*flag) && eq == absl::string_view::npos) {
      if (i + 1 >= words.size() || absl::StartsWith(words[i + 1], "--")) continue;
      value = words[++i];
    }
    value = absl::StripSuffix(absl::StripSuffix(value, ")"), ",");
    value = absl::StripPrefix(absl::StripSuffix(value, "'"), "'");
    value = absl::StripPrefix(absl::StripSuffix(value, "\""), "\"");
    CAPPLAN_RETURN_IF_ERROR(SetFlag(*flag, absl::StrCat(word, " ", value), value, r));
  }
  return absl::OkStatus();
}

absl::Status LogReader::Read(const Record& r) {
  matched_ = false;
  CAPPLAN_RETURN_IF_ERROR(ReadVllm(r));
  CAPPLAN_RETURN_IF_ERROR(ReadSglang(r));
  CAPPLAN_RETURN_IF_ERROR(ReadTrtllm(r));
  CAPPLAN_RETURN_IF_ERROR(ReadSettings(r));
  CAPPLAN_RETURN_IF_ERROR(ReadLaunchFlags(r));
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

// Whether `line` alone states a fact (a refused figure counts: it is read,
// and refused, as a record of its own).
bool StatesAFact(absl::string_view line) {
  IngestedFile scratch;
  LogReader probe(scratch);
  return !probe.Read(Record{0, std::string(line)}).ok() || probe.matched_records() > 0;
}

// The widths a file is hard-wrapped at (see the header).
std::set<size_t> WrapWidths(const std::vector<absl::string_view>& lines) {
  std::map<size_t, int> wrapped;
  for (size_t i = 0; i + 1 < lines.size(); ++i) {
    if (lines[i].size() < kMinWrapWidth) continue;
    const absl::string_view next = absl::StripTrailingAsciiWhitespace(lines[i + 1]);
    if (ContinuesRecord(next.substr(0, next.find(" | ")))) ++wrapped[lines[i].size()];
  }
  std::set<size_t> widths;
  for (const auto& [width, count] : wrapped) {
    if (count >= kMinWrappedLines) widths.insert(width);
  }
  return widths;
}

// Physical lines into records (see the header); " | " also separates
// records (excerpts of several log lines are often pasted joined that way).
std::vector<Record> SplitRecords(absl::string_view text) {
  std::vector<absl::string_view> lines = absl::StrSplit(text, '\n');
  for (absl::string_view& l : lines) absl::ConsumeSuffix(&l, "\r");
  const std::set<size_t> widths = WrapWidths(lines);
  std::vector<Record> records;
  for (size_t i = 0; i < lines.size(); ++i) {
    const bool wrapped_above = i > 0 && widths.count(lines[i - 1].size()) > 0;
    bool first = true;
    for (absl::string_view raw : absl::StrSplit(lines[i], " | ")) {
      raw = absl::StripTrailingAsciiWhitespace(raw);
      const bool continues = first && !records.empty() && ContinuesRecord(raw);
      first = false;
      const absl::string_view line = CleanLogLine(raw);
      if (continues && wrapped_above) {
        records.back().text.append(raw.data(), raw.size());
        continue;
      }
      if (continues && !StatesAFact(line)) {
        absl::StrAppend(&records.back().text, " ", line);
        continue;
      }
      if (line.empty()) continue;
      records.push_back(Record{static_cast<int>(i + 1), std::string(line)});
    }
  }
  return records;
}

}  // namespace

bool LooksLikeEngineLog(absl::string_view text) {
  for (absl::string_view anchor : {"GPU KV cache size:",
                                   "Available KV cache memory:",
                                   "Model loading took",
                                   "Loading model weights took",
                                   "KV Cache is allocated",
                                   "max_total_num_tokens=",
                                   "paged KV cache",
                                   "GPU blocks:",
                                   "cuda blocks:",
                                   "Maximum concurrency for",
                                   "Initializing a V1 LLM engine",
                                   "Initializing an LLM engine",
                                   "Load weight end",
                                   "reserved for KV Cache is",
                                   "stored in KV cache (",
                                   "paged kv cache",
                                   "bytes for k/v cache",
                                   "KV cache primary pool",
                                   "GB for model weights",
                                   "Estimated max tokens in KV cache",
                                   "KV Memory Percentage:"}) {
    if (absl::StrContains(text, anchor)) return true;
  }
  return false;
}

absl::Status ParseEngineLog(absl::string_view text, IngestedFile& out) {
  LogReader reader(out);
  for (const Record& r : SplitRecords(text)) CAPPLAN_RETURN_IF_ERROR(reader.Read(r));
  reader.Finish();
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
