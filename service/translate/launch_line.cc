#include "service/translate/launch_line.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "service/translate/enum_names.h"

namespace capplan::service {
namespace {

constexpr uint64_t kMaxCount = 1u << 20;            // parallel sizes, batch sizes
constexpr uint64_t kMaxTokens = uint64_t{1} << 40;  // context and batched tokens

absl::Status Invalid(const std::string& message) { return absl::InvalidArgumentError(message); }

// ------------------------------------------------------------ shell words

struct Word {
  std::string text;
  bool any_quoted = false;   // some part of it was quoted or escaped
  bool is_operator = false;  // | || & && ; or a redirection, in `text`
  size_t start = 0;          // operators: where in the line (0-based)
};

// What a line holds beyond words: the first command substitution ($(…) or a
// backquote outside single quotes), as a 0-based position.
struct LineShape {
  std::vector<Word> words;
  std::optional<size_t> substitution_at;
};

// Splits a line into words as a POSIX shell would, one construct per method.
class WordSplitter {
 public:
  explicit WordSplitter(absl::string_view line) : line_(line) {}

  absl::StatusOr<LineShape> Split() {
    while (i_ < line_.size()) {
      const char c = line_[i_];
      NoteSubstitution();
      if (c == '\\') {
        Backslash();
      } else if (c == '\'') {
        CAPPLAN_RETURN_IF_ERROR(SingleQuoted());
      } else if (c == '"') {
        CAPPLAN_RETURN_IF_ERROR(DoubleQuoted());
      } else if (c == '\n') {  // a newline ends a command, as ; does
        Finish();
        Word w;
        w.text = "\n";
        w.is_operator = true;
        w.start = i_++;
        words_.push_back(std::move(w));
      } else if (c == ' ' || c == '\t' || c == '\r') {
        Finish();
        ++i_;
      } else if (c == '#' && !in_word_) {  // a comment runs to the end of its line
        const size_t end = line_.find('\n', i_);
        i_ = end == absl::string_view::npos ? line_.size() : end;
      } else if (c == '|' || c == '&' || c == ';' || c == '<' || c == '>') {
        Operator(c);
      } else {
        current_.text.push_back(c);
        in_word_ = true;
        ++i_;
      }
    }
    Finish();
    return LineShape{std::move(words_), substitution_at_};
  }

 private:
  // `...` or $( at i_ (outside single quotes: the callers skip those).
  void NoteSubstitution() {
    if (substitution_at_.has_value()) return;
    if (line_[i_] == '`' || (line_[i_] == '$' && i_ + 1 < line_.size() && line_[i_ + 1] == '(')) {
      substitution_at_ = i_;
    }
  }

  void Finish() {
    if (in_word_) words_.push_back(std::move(current_));
    current_ = Word();
    in_word_ = false;
  }

  // An escaped character, or a line continuation.
  void Backslash() {
    if (i_ + 1 >= line_.size()) {  // a trailing backslash continues into nothing
      ++i_;
      return;
    }
    const char next = line_[i_ + 1];
    i_ += 2;
    if (next == '\n') return;  // continuation
    if (next == '\r' && i_ < line_.size() && line_[i_] == '\n') {
      ++i_;
      return;
    }
    current_.text.push_back(next);
    current_.any_quoted = true;
    in_word_ = true;
  }

  absl::Status SingleQuoted() {
    const size_t end = line_.find('\'', i_ + 1);
    if (end == absl::string_view::npos) {
      return Invalid(
          absl::StrFormat("launch line: unterminated ' quote starting at character %d", i_ + 1));
    }
    absl::StrAppend(&current_.text, line_.substr(i_ + 1, end - i_ - 1));
    current_.any_quoted = true;
    in_word_ = true;
    i_ = end + 1;
    return absl::OkStatus();
  }

  // Inside double quotes a backslash escapes only $ ` " \ and newline.
  absl::Status DoubleQuoted() {
    const size_t start = i_++;
    while (i_ < line_.size() && line_[i_] != '"') {
      NoteSubstitution();
      const char d = line_[i_];
      if (d == '\\' && i_ + 1 < line_.size()) {
        const char next = line_[i_ + 1];
        if (next == '\n') {
          i_ += 2;
          continue;
        }
        if (next == '$' || next == '`' || next == '"' || next == '\\') {
          current_.text.push_back(next);
          i_ += 2;
          continue;
        }
      }
      current_.text.push_back(d);
      ++i_;
    }
    if (i_ >= line_.size()) {
      return Invalid(absl::StrFormat("launch line: unterminated \" quote starting at character %d",
                                     start + 1));
    }
    ++i_;  // the closing quote
    current_.any_quoted = true;
    in_word_ = true;
    return absl::OkStatus();
  }

  // Operators end a word: | || & && ; and redirections < > (with an optional
  // leading file-descriptor number already in the word).
  void Operator(char c) {
    const bool fd_prefix = in_word_ && !current_.any_quoted &&
                           std::all_of(current_.text.begin(), current_.text.end(),
                                       [](char x) { return absl::ascii_isdigit(x); }) &&
                           (c == '<' || c == '>');
    std::string op;
    const size_t start = fd_prefix ? i_ - current_.text.size() : i_;
    if (fd_prefix) {
      op = current_.text;
      current_ = Word();
      in_word_ = false;
    } else {
      Finish();
    }
    op.push_back(c);
    ++i_;
    while (i_ < line_.size() && (line_[i_] == c || (op.back() == '>' && line_[i_] == '&') ||
                                 (op.back() == '<' && line_[i_] == '&'))) {
      op.push_back(line_[i_]);
      ++i_;
    }
    Word w;
    w.text = op;
    w.is_operator = true;
    w.start = start;
    words_.push_back(std::move(w));
  }

  absl::string_view line_;
  size_t i_ = 0;
  std::vector<Word> words_;
  Word current_;
  bool in_word_ = false;
  std::optional<size_t> substitution_at_;
};

absl::StatusOr<LineShape> ShellWords(absl::string_view line) { return WordSplitter(line).Split(); }

bool IsOperator(const Word& w) { return w.is_operator; }

// Keeps the first command: stops at | || && ; &, drops redirections and their
// targets (a redirection ending in & takes a descriptor: 2>&1).
std::vector<std::string> FirstCommand(const std::vector<Word>& words) {
  std::vector<std::string> out;
  for (size_t i = 0; i < words.size(); ++i) {
    const Word& w = words[i];
    if (!IsOperator(w)) {
      out.push_back(w.text);
      continue;
    }
    absl::string_view op = w.text;
    if (op == "\n" && out.empty()) continue;  // blank or comment lines before it
    bool redirect = absl::StrContains(op, '<') || absl::StrContains(op, '>');
    if (!redirect) break;
    if (absl::EndsWith(op, "&")) {
      // 2>&1: the target is the next word when it is a descriptor number.
      if (i + 1 < words.size() && !IsOperator(words[i + 1])) ++i;
      continue;
    }
    if (i + 1 < words.size() && !IsOperator(words[i + 1])) ++i;  // the file
  }
  return out;
}

// ------------------------------------------------------------------ flags

enum class Knob {
  kModel,
  kTp,
  kPp,
  kDp,
  kEp,
  kEnableExpertParallel,  // vLLM switch
  kEnableEpMoe,           // older SGLang switch: ep = tp
  kDpAttention,
  kMaxModelLen,
  kGpuMemoryUtilization,
  kMemFractionStatic,
  kKvCacheFreeFraction,  // TensorRT-LLM
  kMaxNumBatchedTokens,
  kChunkedPrefillSize,
  kMaxNumSeqs,
  kKvCacheDtype,
  kQuantization,
  kEnforceEager,
  kDisableCudaGraph,
  kBlockSize,
  kCudaGraphMax,    // one number
  kCudaGraphSizes,  // one or more numbers; the largest counts
  kSpeculativeConfig,
  kCompilationConfig,  // vLLM --compilation-config / -O: JSON or a level
  kSpeculativeModel,
  kNumSpeculativeTokens,
  kSpeculativeAlgorithm,
  kSpeculativeNumSteps,
  kSpeculativeNumDraftTokens,
  kDtype,
  kPrefixCaching,
  kDisableRadixCache,
  kIgnoredSwitch,
  kIgnoredValue,
  kIgnoredValues,  // nargs="+" (vLLM --served-model-name)
  kUnmodelledValue,
};

enum class Arity { kSwitch, kOne, kMany };

Arity ArityOf(Knob k) {
  switch (k) {
    case Knob::kEnableExpertParallel:
    case Knob::kEnableEpMoe:
    case Knob::kDpAttention:
    case Knob::kEnforceEager:
    case Knob::kDisableCudaGraph:
    case Knob::kPrefixCaching:
    case Knob::kDisableRadixCache:
    case Knob::kIgnoredSwitch:
      return Arity::kSwitch;
    case Knob::kCudaGraphSizes:
    case Knob::kIgnoredValues:
      return Arity::kMany;
    default:
      return Arity::kOne;
  }
}

struct FlagName {
  const char* name;
  Knob knob;
};

// vLLM: vllm/engine/arg_utils.py (EngineArgs.add_cli_args) and the
// OpenAI server's own --host/--port.
constexpr FlagName kVllmFlags[] = {
    {"--model", Knob::kModel},
    {"--tensor-parallel-size", Knob::kTp},
    {"-tp", Knob::kTp},
    {"--pipeline-parallel-size", Knob::kPp},
    {"-pp", Knob::kPp},
    {"--data-parallel-size", Knob::kDp},
    {"-dp", Knob::kDp},
    {"--enable-expert-parallel", Knob::kEnableExpertParallel},
    {"--max-model-len", Knob::kMaxModelLen},
    {"--gpu-memory-utilization", Knob::kGpuMemoryUtilization},
    {"--max-num-batched-tokens", Knob::kMaxNumBatchedTokens},
    {"--max-num-seqs", Knob::kMaxNumSeqs},
    {"--kv-cache-dtype", Knob::kKvCacheDtype},
    {"--quantization", Knob::kQuantization},
    {"-q", Knob::kQuantization},
    {"--enforce-eager", Knob::kEnforceEager},
    {"--block-size", Knob::kBlockSize},
    {"--max-cudagraph-capture-size", Knob::kCudaGraphMax},
    {"--max-seq-len-to-capture", Knob::kUnmodelledValue},
    {"--cuda-graph-sizes", Knob::kCudaGraphSizes},
    {"--cudagraph-capture-sizes", Knob::kCudaGraphSizes},
    {"--compilation-config", Knob::kCompilationConfig},
    {"-O", Knob::kCompilationConfig},
    {"--speculative-config", Knob::kSpeculativeConfig},
    {"--speculative-model", Knob::kSpeculativeModel},
    {"--num-speculative-tokens", Knob::kNumSpeculativeTokens},
    {"--dtype", Knob::kDtype},
    {"--enable-prefix-caching", Knob::kPrefixCaching},
    {"--trust-remote-code", Knob::kIgnoredSwitch},
    {"--host", Knob::kIgnoredValue},
    {"--port", Knob::kIgnoredValue},
    {"--served-model-name", Knob::kIgnoredValues},
};

// SGLang: python/sglang/srt/server_args.py (ServerArgs.add_cli_args). --tp,
// --dp and --ep are the unique prefixes of --tp-size, --dp-size and
// --ep-size that argparse's abbreviation rule lets users type.
constexpr FlagName kSglangFlags[] = {
    {"--model-path", Knob::kModel},
    {"--model", Knob::kModel},
    {"--tp-size", Knob::kTp},
    {"--tensor-parallel-size", Knob::kTp},
    {"--tp", Knob::kTp},
    {"--pp-size", Knob::kPp},
    {"--pipeline-parallel-size", Knob::kPp},
    {"--dp-size", Knob::kDp},
    {"--data-parallel-size", Knob::kDp},
    {"--dp", Knob::kDp},
    {"--ep-size", Knob::kEp},
    {"--expert-parallel-size", Knob::kEp},
    {"--ep", Knob::kEp},
    {"--enable-ep-moe", Knob::kEnableEpMoe},
    {"--enable-dp-attention", Knob::kDpAttention},
    {"--context-length", Knob::kMaxModelLen},
    {"--mem-fraction-static", Knob::kMemFractionStatic},
    {"--chunked-prefill-size", Knob::kChunkedPrefillSize},
    {"--max-running-requests", Knob::kMaxNumSeqs},
    {"--max-total-tokens", Knob::kUnmodelledValue},
    {"--max-prefill-tokens", Knob::kUnmodelledValue},
    {"--kv-cache-dtype", Knob::kKvCacheDtype},
    {"--quantization", Knob::kQuantization},
    {"--disable-cuda-graph", Knob::kDisableCudaGraph},
    {"--cuda-graph-max-bs", Knob::kCudaGraphMax},
    {"--cuda-graph-bs", Knob::kCudaGraphSizes},
    {"--page-size", Knob::kBlockSize},
    {"--speculative-algorithm", Knob::kSpeculativeAlgorithm},
    {"--speculative-num-steps", Knob::kSpeculativeNumSteps},
    {"--speculative-num-draft-tokens", Knob::kSpeculativeNumDraftTokens},
    {"--speculative-eagle-topk", Knob::kUnmodelledValue},
    {"--speculative-draft-model-path", Knob::kUnmodelledValue},
    {"--dtype", Knob::kDtype},
    {"--disable-radix-cache", Knob::kDisableRadixCache},
    {"--trust-remote-code", Knob::kIgnoredSwitch},
    {"--host", Knob::kIgnoredValue},
    {"--port", Knob::kIgnoredValue},
    {"--served-model-name", Knob::kIgnoredValue},
};

// TensorRT-LLM: tensorrt_llm/commands/serve.py (trtllm-serve's click
// options, written with underscores; read here with dashes). The backend and
// the YAML of extra LLM API options are kept verbatim as unmodelled.
constexpr FlagName kTrtllmFlags[] = {
    {"--tp-size", Knob::kTp},
    {"--pp-size", Knob::kPp},
    {"--ep-size", Knob::kEp},
    {"--max-seq-len", Knob::kMaxModelLen},
    {"--max-batch-size", Knob::kMaxNumSeqs},
    {"--max-num-tokens", Knob::kMaxNumBatchedTokens},
    {"--kv-cache-free-gpu-memory-fraction", Knob::kKvCacheFreeFraction},
    {"--backend", Knob::kUnmodelledValue},
    {"--extra-llm-api-options", Knob::kUnmodelledValue},
    {"--max-beam-width", Knob::kUnmodelledValue},
    {"--gpus-per-node", Knob::kUnmodelledValue},
    {"--cluster-size", Knob::kUnmodelledValue},
    {"--trust-remote-code", Knob::kIgnoredSwitch},
    {"--host", Knob::kIgnoredValue},
    {"--port", Knob::kIgnoredValue},
    {"--tokenizer", Knob::kIgnoredValue},
    {"--log-level", Knob::kIgnoredValue},
    {"--reasoning-parser", Knob::kIgnoredValue},
    {"--num-postprocess-workers", Knob::kIgnoredValue},
};

template <size_t N>
std::optional<Knob> FindKnob(const FlagName (&table)[N], absl::string_view name) {
  for (const FlagName& f : table) {
    if (name == f.name) return f.knob;
  }
  return std::nullopt;
}

// A word that starts a flag rather than a value: "-x"/"--x", not "-1"/"-0.5".
bool LooksLikeFlag(absl::string_view w) {
  if (w.size() < 2 || w[0] != '-') return false;
  double ignored = 0;
  return !absl::SimpleAtod(w, &ignored);
}

// Flags both engines define as switches (no value) that capplan does not
// model; with the --enable-/--disable-/--no- families they are what keeps an
// unknown switch from taking the next word as its value.
constexpr const char* kKnownSwitches[] = {
    "--skip-tokenizer-init",
    "--async-scheduling",
    "--is-embedding",
    "--stream-output",
    "--log-requests",
    "--show-time-cost",
    "--allow-auto-truncate",
    "--skip-server-warmup",
    "--headless",
    "--trust-request-chat-template",
};

bool LooksLikeSwitch(absl::string_view canonical) {
  if (absl::StartsWith(canonical, "--enable-") || absl::StartsWith(canonical, "--disable-") ||
      absl::StartsWith(canonical, "--no-")) {
    return true;
  }
  for (const char* s : kKnownSwitches) {
    if (canonical == s) return true;
  }
  return false;
}

// ------------------------------------------------------------- values

absl::StatusOr<uint64_t> WholeNumber(absl::string_view flag, absl::string_view text,
                                     uint64_t min_value, uint64_t max_value, bool human_readable) {
  std::string rule = absl::StrFormat("must be a whole number ≥ %d", min_value);
  auto bad = [&] { return Invalid(absl::StrFormat("%s = %s; %s", flag, text, rule)); };
  auto too_large = [&] {
    return Invalid(absl::StrFormat("%s = %s; must be at most %d", flag, text, max_value));
  };
  absl::string_view t = absl::StripAsciiWhitespace(text);
  uint64_t value = 0;
  if (human_readable && t.size() >= 2 && absl::ascii_isalpha(t.back())) {
    // vLLM's human_readable_int: k m g t = powers of 1000 (decimals allowed),
    // K M G T = powers of 1024 (whole numbers only).
    char suffix = t.back();
    absl::string_view number = t.substr(0, t.size() - 1);
    const std::string decimal = "kmgt", binary = "KMGT";
    if (size_t p = decimal.find(suffix); p != std::string::npos) {
      double x = 0;
      if (!absl::SimpleAtod(number, &x) || !std::isfinite(x) || x < 0 ||
          !absl::ascii_isdigit(number.front())) {
        return bad();
      }
      const double scaled = x * std::pow(1000.0, p + 1);
      // Past what 64 bits hold (the cast would be undefined): above any bound.
      if (!(scaled < 0x1p64)) return too_large();
      value = static_cast<uint64_t>(scaled);
    } else if (size_t q = binary.find(suffix); q != std::string::npos) {
      uint64_t x = 0;
      if (!absl::SimpleAtoi(number, &x) || !absl::ascii_isdigit(number.front()) ||
          x > (uint64_t{1} << 40)) {
        return bad();
      }
      value = x << (10 * (q + 1));
    } else {
      return bad();
    }
  } else {
    int64_t signed_value = 0;
    if (t.empty() || !absl::SimpleAtoi(t, &signed_value) || signed_value < 0) return bad();
    value = static_cast<uint64_t>(signed_value);
  }
  if (value < min_value) return bad();
  if (value > max_value) return too_large();
  return value;
}

absl::StatusOr<double> Fraction(absl::string_view flag, absl::string_view text) {
  double value = 0;
  if (!absl::SimpleAtod(absl::StripAsciiWhitespace(text), &value) || !std::isfinite(value) ||
      value <= 0 || value > 1) {
    return Invalid(absl::StrFormat("%s = %s; must be a fraction in (0, 1]", flag, text));
  }
  return value;
}

absl::StatusOr<bool> Boolean(absl::string_view flag, absl::string_view text) {
  std::string lower = absl::AsciiStrToLower(text);
  if (lower == "true" || lower == "1" || lower == "yes") return true;
  if (lower == "false" || lower == "0" || lower == "no") return false;
  return Invalid(absl::StrFormat("%s = %s; must be true or false", flag, text));
}

absl::StatusOr<v1::KvCacheDtype> KvCacheDtype(absl::string_view flag, absl::string_view text) {
  std::string t = absl::AsciiStrToLower(text);
  if (t == "auto") return v1::KV_CACHE_DTYPE_AUTO;
  if (t == "fp8" || t == "fp8_e4m3" || t == "fp8_e5m2" || t == "fp8_inc" || t == "fp8_ds_mla") {
    return v1::KV_CACHE_DTYPE_FP8;
  }
  if (t == "bf16" || t == "bfloat16") return v1::KV_CACHE_DTYPE_BF16;
  if (t == "fp16" || t == "float16" || t == "half") return v1::KV_CACHE_DTYPE_FP16;
  return Invalid(absl::StrFormat(
      "%s = %s; must be auto, fp8 (fp8_e4m3, fp8_e5m2), bf16 (bfloat16) or fp16 (float16)", flag,
      text));
}

// The engine's quantization method → the name WeightFormatFromName reads;
// empty = the method defers to the checkpoint's own quantization_config.
struct QuantAlias {
  const char* engine_name;
  const char* format_name;
};
constexpr QuantAlias kQuantAliases[] = {
    {"awq", "awq"},
    {"awq_marlin", "awq"},
    {"gptq", "gptq"},
    {"gptq_marlin", "gptq"},
    {"marlin", "gptq"},
    {"fp8", "fp8"},
    {"fbgemm_fp8", "fp8-channel"},
    {"ptpc_fp8", "fp8-channel"},
    {"w8a8_fp8", "fp8-channel"},
    {"w8a8_int8", "int8"},
    {"experts_int8", "int8"},
    {"modelopt_fp4", "nvfp4"},
    {"nvfp4", "nvfp4"},
    {"mxfp4", "mxfp4"},
    {"moe_wna16", "moe_wna16"},
    {"compressed-tensors", ""},
    {"compressed_tensors", ""},
    {"modelopt", ""},
};

absl::StatusOr<std::optional<v1::WeightFormat>> Quantization(absl::string_view flag,
                                                             absl::string_view text) {
  std::string t = absl::AsciiStrToLower(text);
  std::vector<std::string> names;
  for (const QuantAlias& a : kQuantAliases) {
    names.push_back(a.engine_name);
    if (t != a.engine_name) continue;
    if (a.format_name[0] == '\0') return std::optional<v1::WeightFormat>();
    CAPPLAN_ASSIGN_OR_RETURN(v1::WeightFormat f,
                             WeightFormatFromName("--quantization", a.format_name));
    return std::optional<v1::WeightFormat>(f);
  }
  return Invalid(absl::StrFormat("%s = %s; must be a quantization method capplan models: %s", flag,
                                 text, absl::StrJoin(names, ", ")));
}

// vLLM speculative methods: "mtp" and the per-architecture "*_mtp" names;
// eagle/eagle3; ngram; draft_model; medusa and mlp_speculator are small
// draft networks and are planned as a draft model.
absl::StatusOr<v1::SpeculativeMethod> VllmSpeculativeMethod(absl::string_view flag,
                                                            absl::string_view text) {
  std::string t = absl::AsciiStrToLower(text);
  if (t == "mtp" || absl::EndsWith(t, "_mtp")) return v1::SPECULATIVE_METHOD_MTP;
  if (t == "eagle" || t == "eagle3") return v1::SPECULATIVE_METHOD_EAGLE;
  if (t == "ngram" || t == "[ngram]") return v1::SPECULATIVE_METHOD_NGRAM;
  if (t == "draft_model" || t == "medusa" || t == "mlp_speculator") {
    return v1::SPECULATIVE_METHOD_DRAFT_MODEL;
  }
  return Invalid(absl::StrFormat(
      "%s = %s; must be mtp (or <arch>_mtp), eagle, eagle3, ngram, draft_model, medusa or "
      "mlp_speculator",
      flag, text));
}

absl::StatusOr<v1::SpeculativeMethod> SglangSpeculativeAlgorithm(absl::string_view flag,
                                                                 absl::string_view text) {
  std::string t = absl::AsciiStrToUpper(text);
  if (t == "EAGLE" || t == "EAGLE3") return v1::SPECULATIVE_METHOD_EAGLE;
  if (t == "NEXTN" || t == "MTP") return v1::SPECULATIVE_METHOD_MTP;
  if (t == "STANDALONE") return v1::SPECULATIVE_METHOD_DRAFT_MODEL;
  if (t == "NGRAM" || t == "LOOKAHEAD") return v1::SPECULATIVE_METHOD_NGRAM;
  return Invalid(absl::StrFormat(
      "%s = %s; must be EAGLE, EAGLE3, NEXTN, MTP, STANDALONE, NGRAM or LOOKAHEAD", flag, text));
}

// The largest of one or more whole numbers, given as separate words or as
// one word holding a list ("1,2,4,8", "[1, 2, 4]").
absl::StatusOr<uint64_t> LargestOfList(absl::string_view flag,
                                       const std::vector<std::string>& values) {
  uint64_t largest = 0;
  for (const std::string& value : values) {
    absl::string_view body = absl::StripAsciiWhitespace(value);
    absl::ConsumePrefix(&body, "[");
    absl::ConsumeSuffix(&body, "]");
    for (absl::string_view part :
         absl::StrSplit(body, absl::ByAnyChar(", "), absl::SkipWhitespace())) {
      CAPPLAN_ASSIGN_OR_RETURN(uint64_t n, WholeNumber(flag, part, 1, kMaxCount, false));
      largest = std::max(largest, n);
    }
  }
  if (largest == 0) return Invalid(absl::StrFormat("%s: expects a value", flag));
  return largest;
}

// A JSON value as the text a command line would carry ("[1,2,4]" for lists).
std::string JsonValueText(const google::protobuf::Value& value) {
  switch (value.kind_case()) {
    case google::protobuf::Value::kStringValue:
      return value.string_value();
    case google::protobuf::Value::kNumberValue:
      return absl::StrCat(value.number_value());
    case google::protobuf::Value::kBoolValue:
      return value.bool_value() ? "true" : "false";
    case google::protobuf::Value::kListValue: {
      std::vector<std::string> parts;
      for (const auto& v : value.list_value().values()) parts.push_back(JsonValueText(v));
      return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
    }
    case google::protobuf::Value::kNullValue:
      return "null";
    default:
      return "(object)";
  }
}

absl::StatusOr<google::protobuf::Struct> JsonObject(const std::string& flag,
                                                    const std::string& text) {
  google::protobuf::Struct object;
  google::protobuf::util::JsonParseOptions options;
  auto status = google::protobuf::util::JsonStringToMessage(text, &object, options);
  if (!status.ok()) {
    return Invalid(absl::StrFormat("%s = %s; must be a JSON object (%s)", flag, text,
                                   std::string(status.message())));
  }
  return object;
}

std::vector<std::string> SortedKeys(const google::protobuf::Struct& object) {
  std::vector<std::string> keys;  // sorted: map order is unspecified
  for (const auto& field : object.fields()) keys.push_back(field.first);
  std::sort(keys.begin(), keys.end());
  return keys;
}

// ---------------------------------------------------------------- parser

enum class Engine { kVllm, kSglang, kTrtllm };

std::optional<Knob> FindEngineKnob(Engine engine, absl::string_view name) {
  switch (engine) {
    case Engine::kVllm:
      return FindKnob(kVllmFlags, name);
    case Engine::kSglang:
      return FindKnob(kSglangFlags, name);
    case Engine::kTrtllm:
      return FindKnob(kTrtllmFlags, name);
  }
  return std::nullopt;
}

struct Pending {
  std::optional<uint64_t> tp, pp, dp, ep;
  std::optional<bool> expert_parallel;  // vLLM switch
  bool ep_moe = false;                  // SGLang --enable-ep-moe
  // Speculative decoding, gathered from every flag that sets a part of it.
  std::optional<std::string> spec_method;  // vLLM method name or SGLang algorithm
  std::string spec_method_flag;
  std::optional<std::string> spec_model;
  std::optional<uint64_t> spec_tokens;
  std::string spec_tokens_flag;
  std::optional<uint64_t> spec_steps;
  std::optional<uint64_t> spec_draft_tokens;
  std::vector<std::string> spec_counts_verbatim;  // SGLang step/draft flags as written
  std::optional<uint64_t> cuda_graph_max;
  std::vector<std::string> model_flags;  // --model values, for the conflict check
};

class Parser {
 public:
  Parser(Engine engine, std::vector<std::string> words, size_t first)
      : engine_(engine), words_(std::move(words)), pos_(first) {}

  // vllm serve takes the model as its first positional word.
  void AllowPositionalModel() { positional_ok_ = true; }

  absl::StatusOr<LaunchLine> Run(std::vector<std::string> environment,
                                 std::optional<std::string> positional_model);

 private:
  absl::Status HandleFlag(const std::string& word);
  absl::Status Apply(Knob knob, const std::string& flag, const std::string& as_written,
                     std::optional<std::string> inline_value, bool negated);
  absl::StatusOr<std::string> TakeValue(const std::string& flag,
                                        std::optional<std::string> inline_value);
  absl::Status SpeculativeJson(const std::string& flag, const std::string& text);
  absl::Status CompilationJson(const std::string& flag, const std::string& text);
  absl::Status CompilationKey(const std::string& flag, const std::string& key,
                              const std::string& value);
  absl::Status SpeculativeKey(const std::string& flag, const std::string& key,
                              const std::string& value);
  absl::Status Finish();

  Engine engine_;
  std::vector<std::string> words_;
  size_t pos_;
  bool positional_ok_ = false;
  LaunchLine out_;
  Pending p_;
};

absl::StatusOr<std::string> Parser::TakeValue(const std::string& flag,
                                              std::optional<std::string> inline_value) {
  if (inline_value.has_value()) return *inline_value;
  if (pos_ >= words_.size() || LooksLikeFlag(words_[pos_])) {
    return Invalid(absl::StrFormat("%s: expects a value", flag));
  }
  return words_[pos_++];
}

absl::Status Parser::HandleFlag(const std::string& word) {
  std::string name = word;
  std::optional<std::string> inline_value;
  if (size_t eq = name.find('='); eq != std::string::npos) {
    inline_value = name.substr(eq + 1);
    name = name.substr(0, eq);
  }
  // vLLM's FlexibleArgumentParser reads --max_model_len as --max-model-len;
  // accepted for both engines (the spelling is unambiguous).
  std::string canonical = name;
  if (absl::StartsWith(canonical, "--")) {
    size_t dot = canonical.find('.');
    for (size_t i = 2; i < canonical.size() && i < dot; ++i) {
      if (canonical[i] == '_') canonical[i] = '-';
    }
  }
  // vLLM dotted JSON keys: --speculative-config.method mtp.
  if (engine_ == Engine::kVllm && absl::StartsWith(canonical, "--speculative-config.")) {
    CAPPLAN_ASSIGN_OR_RETURN(std::string value, TakeValue(name, inline_value));
    return SpeculativeKey(name, canonical.substr(std::string("--speculative-config.").size()),
                          value);
  }
  if (engine_ == Engine::kVllm && (absl::StartsWith(canonical, "--compilation-config.") ||
                                   absl::StartsWith(canonical, "-O."))) {
    CAPPLAN_ASSIGN_OR_RETURN(std::string value, TakeValue(name, inline_value));
    return CompilationKey(name, canonical.substr(canonical.find('.') + 1), value);
  }
  // vLLM -O3: the compilation level, written compactly.
  if (engine_ == Engine::kVllm && absl::StartsWith(canonical, "-O") && canonical.size() > 2) {
    out_.unmodelled_flags.push_back(word);
    return absl::OkStatus();
  }
  std::optional<Knob> knob = FindEngineKnob(engine_, canonical);
  bool negated = false;
  if (!knob.has_value() && absl::StartsWith(canonical, "--no-")) {
    std::string positive = "--" + canonical.substr(5);
    std::optional<Knob> k = FindEngineKnob(engine_, positive);
    if (k.has_value() && ArityOf(*k) == Arity::kSwitch) {
      knob = k;
      negated = true;
      canonical = positive;
    }
  }
  if (!knob.has_value()) {
    // Not modelled: keep the flag and, when one follows, its value — unless
    // the flag is a switch, which must not swallow vllm serve's model.
    std::string verbatim = word;
    if (!inline_value.has_value() && pos_ < words_.size() && !LooksLikeFlag(words_[pos_])) {
      std::string next = absl::AsciiStrToLower(words_[pos_]);
      if (!LooksLikeSwitch(canonical) || next == "true" || next == "false") {
        absl::StrAppend(&verbatim, " ", words_[pos_++]);
      }
    }
    out_.unmodelled_flags.push_back(verbatim);
    return absl::OkStatus();
  }
  return Apply(*knob, name, word, inline_value, negated);
}

absl::Status Parser::Apply(Knob knob, const std::string& flag, const std::string& as_written,
                           std::optional<std::string> inline_value, bool negated) {
  v1::Deployment& d = out_.deployment;
  v1::EngineSettings* e = d.mutable_engine();
  bool vllm = engine_ == Engine::kVllm;
  bool on = !negated;
  if (ArityOf(knob) == Arity::kSwitch && inline_value.has_value()) {
    CAPPLAN_ASSIGN_OR_RETURN(bool v, Boolean(flag, *inline_value));
    on = negated ? !v : v;
  }
  auto one = [&]() { return TakeValue(flag, inline_value); };
  auto count = [&](uint64_t min_value, uint64_t max_value) -> absl::StatusOr<uint64_t> {
    CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
    return WholeNumber(flag, v, min_value, max_value, /*human_readable=*/false);
  };
  auto tokens = [&]() -> absl::StatusOr<uint64_t> {
    CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
    return WholeNumber(flag, v, 1, kMaxTokens, /*human_readable=*/vllm);
  };
  switch (knob) {
    case Knob::kModel: {
      CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
      if (v.empty()) return Invalid(absl::StrFormat("%s = ''; must name a model", flag));
      p_.model_flags.push_back(v);
      return absl::OkStatus();
    }
    case Knob::kTp: {
      CAPPLAN_ASSIGN_OR_RETURN(p_.tp, count(1, kMaxCount));
      return absl::OkStatus();
    }
    case Knob::kPp: {
      CAPPLAN_ASSIGN_OR_RETURN(p_.pp, count(1, kMaxCount));
      return absl::OkStatus();
    }
    case Knob::kDp: {
      CAPPLAN_ASSIGN_OR_RETURN(p_.dp, count(1, kMaxCount));
      return absl::OkStatus();
    }
    case Knob::kEp: {
      CAPPLAN_ASSIGN_OR_RETURN(p_.ep, count(1, kMaxCount));
      return absl::OkStatus();
    }
    case Knob::kEnableExpertParallel:
      p_.expert_parallel = on;
      return absl::OkStatus();
    case Knob::kEnableEpMoe:
      p_.ep_moe = on;
      return absl::OkStatus();
    case Knob::kDpAttention:
      d.mutable_parallelism()->set_dp_attention(on);
      return absl::OkStatus();
    case Knob::kMaxModelLen: {
      CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
      std::string lower = absl::AsciiStrToLower(v);
      if (vllm && (lower == "auto" || lower == "-1")) {
        // Newer vLLM: fit the context to memory. Nothing to plan against.
        out_.unmodelled_flags.push_back(inline_value ? as_written : as_written + " " + v);
        return absl::OkStatus();
      }
      CAPPLAN_ASSIGN_OR_RETURN(uint64_t n, WholeNumber(flag, v, 1, kMaxTokens, vllm));
      e->set_max_model_len(n);
      return absl::OkStatus();
    }
    case Knob::kGpuMemoryUtilization: {
      CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
      CAPPLAN_ASSIGN_OR_RETURN(double f, Fraction(flag, v));
      e->set_gpu_memory_utilization(f);
      return absl::OkStatus();
    }
    case Knob::kMemFractionStatic: {
      CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
      CAPPLAN_ASSIGN_OR_RETURN(double f, Fraction(flag, v));
      e->set_mem_fraction_static(f);
      return absl::OkStatus();
    }
    case Knob::kKvCacheFreeFraction: {
      CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
      CAPPLAN_ASSIGN_OR_RETURN(double f, Fraction(flag, v));
      e->set_kv_cache_free_gpu_memory_fraction(f);
      return absl::OkStatus();
    }
    case Knob::kMaxNumBatchedTokens: {
      CAPPLAN_ASSIGN_OR_RETURN(uint64_t n, tokens());
      e->set_max_num_batched_tokens(n);
      return absl::OkStatus();
    }
    case Knob::kChunkedPrefillSize: {
      CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
      if (absl::StripAsciiWhitespace(v) == "-1") {  // SGLang: chunked prefill off
        out_.unmodelled_flags.push_back(inline_value ? as_written : as_written + " " + v);
        return absl::OkStatus();
      }
      CAPPLAN_ASSIGN_OR_RETURN(uint64_t n, WholeNumber(flag, v, 1, kMaxTokens, false));
      e->set_max_num_batched_tokens(n);
      return absl::OkStatus();
    }
    case Knob::kMaxNumSeqs: {
      CAPPLAN_ASSIGN_OR_RETURN(uint64_t n, count(1, kMaxCount));
      e->set_max_num_seqs(static_cast<uint32_t>(n));
      return absl::OkStatus();
    }
    case Knob::kKvCacheDtype: {
      CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
      CAPPLAN_ASSIGN_OR_RETURN(v1::KvCacheDtype t, KvCacheDtype(flag, v));
      e->set_kv_cache_dtype(t);
      return absl::OkStatus();
    }
    case Knob::kQuantization: {
      CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
      CAPPLAN_ASSIGN_OR_RETURN(std::optional<v1::WeightFormat> f, Quantization(flag, v));
      if (f.has_value()) {
        d.set_weight_format(*f);
      } else {
        out_.unmodelled_flags.push_back(inline_value ? as_written : as_written + " " + v);
      }
      return absl::OkStatus();
    }
    case Knob::kEnforceEager:
      e->set_enforce_eager(on);
      return absl::OkStatus();
    case Knob::kDisableCudaGraph:
      e->set_enforce_eager(on);
      return absl::OkStatus();
    case Knob::kBlockSize: {
      CAPPLAN_ASSIGN_OR_RETURN(uint64_t n, count(1, kMaxCount));
      e->set_block_size(static_cast<uint32_t>(n));
      return absl::OkStatus();
    }
    case Knob::kCudaGraphMax: {
      CAPPLAN_ASSIGN_OR_RETURN(uint64_t n, count(1, kMaxCount));
      p_.cuda_graph_max = n;
      return absl::OkStatus();
    }
    case Knob::kCudaGraphSizes: {
      std::vector<std::string> values;
      if (inline_value.has_value()) {
        values.push_back(*inline_value);
      } else {
        while (pos_ < words_.size() && !LooksLikeFlag(words_[pos_])) {
          values.push_back(words_[pos_++]);
        }
      }
      CAPPLAN_ASSIGN_OR_RETURN(p_.cuda_graph_max, LargestOfList(flag, values));
      return absl::OkStatus();
    }
    case Knob::kCompilationConfig: {
      CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
      return CompilationJson(flag, v);
    }
    case Knob::kSpeculativeConfig: {
      CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
      return SpeculativeJson(flag, v);
    }
    case Knob::kSpeculativeModel: {
      CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
      p_.spec_model = v;
      return absl::OkStatus();
    }
    case Knob::kNumSpeculativeTokens: {
      CAPPLAN_ASSIGN_OR_RETURN(p_.spec_tokens, count(1, 64));
      p_.spec_tokens_flag = flag;
      return absl::OkStatus();
    }
    case Knob::kSpeculativeAlgorithm: {
      CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
      p_.spec_method = v;
      p_.spec_method_flag = flag;
      return absl::OkStatus();
    }
    case Knob::kSpeculativeNumSteps: {
      CAPPLAN_ASSIGN_OR_RETURN(p_.spec_steps, count(1, 64));
      p_.spec_counts_verbatim.push_back(
          inline_value ? as_written : absl::StrCat(as_written, " ", *p_.spec_steps));
      return absl::OkStatus();
    }
    case Knob::kSpeculativeNumDraftTokens: {
      CAPPLAN_ASSIGN_OR_RETURN(p_.spec_draft_tokens, count(1, 1024));
      p_.spec_counts_verbatim.push_back(
          inline_value ? as_written : absl::StrCat(as_written, " ", *p_.spec_draft_tokens));
      return absl::OkStatus();
    }
    case Knob::kDtype: {
      CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
      // The engines' --dtype choices (vLLM and SGLang accept the same).
      static constexpr absl::string_view kDtypes[] = {"auto",     "half",  "float16",
                                                      "bfloat16", "float", "float32"};
      if (std::find(std::begin(kDtypes), std::end(kDtypes), v) == std::end(kDtypes)) {
        return Invalid(
            absl::StrFormat("%s = %s; must be one of auto, half, float16, bfloat16, float, float32",
                            as_written, v.size() > 64 ? absl::StrCat(v.substr(0, 64), "…") : v));
      }
      out_.dtype = v;
      return absl::OkStatus();
    }
    case Knob::kPrefixCaching:
      out_.prefix_caching = on;
      out_.deployment.mutable_engine()->set_enable_prefix_caching(on);
      return absl::OkStatus();
    case Knob::kDisableRadixCache:
      out_.prefix_caching = !on;
      out_.deployment.mutable_engine()->set_enable_prefix_caching(!on);
      return absl::OkStatus();
    case Knob::kIgnoredSwitch:
      out_.ignored_flags.push_back(as_written);
      return absl::OkStatus();
    case Knob::kIgnoredValue: {
      CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
      out_.ignored_flags.push_back(inline_value ? as_written : as_written + " " + v);
      return absl::OkStatus();
    }
    case Knob::kIgnoredValues: {
      std::string verbatim = as_written;
      if (!inline_value.has_value()) {
        size_t before = pos_;
        while (pos_ < words_.size() && !LooksLikeFlag(words_[pos_])) {
          absl::StrAppend(&verbatim, " ", words_[pos_++]);
        }
        if (pos_ == before) return Invalid(absl::StrFormat("%s: expects a value", flag));
      }
      out_.ignored_flags.push_back(verbatim);
      return absl::OkStatus();
    }
    case Knob::kUnmodelledValue: {
      CAPPLAN_ASSIGN_OR_RETURN(std::string v, one());
      out_.unmodelled_flags.push_back(inline_value ? as_written : as_written + " " + v);
      return absl::OkStatus();
    }
  }
  return absl::OkStatus();
}

absl::Status Parser::SpeculativeKey(const std::string& flag, const std::string& key,
                                    const std::string& value) {
  std::string path = absl::StrCat(flag.substr(0, flag.find('.')), ".", key);
  if (key == "method") {
    p_.spec_method = value;
    p_.spec_method_flag = path;
  } else if (key == "model") {
    p_.spec_model = value;
  } else if (key == "num_speculative_tokens") {
    CAPPLAN_ASSIGN_OR_RETURN(p_.spec_tokens, WholeNumber(path, value, 1, 64, false));
    p_.spec_tokens_flag = path;
  } else {
    out_.unmodelled_flags.push_back(absl::StrCat(path, "=", value));
  }
  return absl::OkStatus();
}

absl::Status Parser::SpeculativeJson(const std::string& flag, const std::string& text) {
  CAPPLAN_ASSIGN_OR_RETURN(google::protobuf::Struct config, JsonObject(flag, text));
  for (const std::string& key : SortedKeys(config)) {
    const google::protobuf::Value& value = config.fields().at(key);
    std::string path = absl::StrCat(flag, ".", key);
    std::string as_text;
    switch (value.kind_case()) {
      case google::protobuf::Value::kStringValue:
        as_text = value.string_value();
        break;
      case google::protobuf::Value::kNumberValue: {
        double x = value.number_value();
        if (key == "num_speculative_tokens" &&
            (!std::isfinite(x) || x != std::floor(x) || x < 1 || x > 64)) {
          return Invalid(absl::StrFormat("%s = %g; must be a whole number ≥ 1", path, x));
        }
        as_text = absl::StrCat(x);
        break;
      }
      case google::protobuf::Value::kNullValue:
        continue;
      case google::protobuf::Value::kBoolValue:
        as_text = value.bool_value() ? "true" : "false";
        break;
      default:
        as_text = "(object)";
        break;
    }
    if ((key == "method" || key == "model") &&
        value.kind_case() != google::protobuf::Value::kStringValue) {
      return Invalid(absl::StrFormat("%s = %s; must be a string", path, as_text));
    }
    if (key == "num_speculative_tokens" &&
        value.kind_case() != google::protobuf::Value::kNumberValue) {
      // vLLM's dataclass wants an int; a quoted number is refused there too.
      return Invalid(absl::StrFormat("%s = %s; must be a whole number ≥ 1", path, as_text));
    }
    CAPPLAN_RETURN_IF_ERROR(SpeculativeKey(flag + "." + key, key, as_text));
  }
  return absl::OkStatus();
}

absl::Status Parser::CompilationJson(const std::string& flag, const std::string& text) {
  uint64_t level = 0;
  if (absl::SimpleAtoi(text, &level)) {  // -O 3: the compilation level alone
    out_.unmodelled_flags.push_back(absl::StrCat(flag, " ", text));
    return absl::OkStatus();
  }
  CAPPLAN_ASSIGN_OR_RETURN(google::protobuf::Struct config, JsonObject(flag, text));
  for (const std::string& key : SortedKeys(config)) {
    CAPPLAN_RETURN_IF_ERROR(
        CompilationKey(absl::StrCat(flag, ".", key), key, JsonValueText(config.fields().at(key))));
  }
  return absl::OkStatus();
}

// vLLM CompilationConfig keys that decide CUDA-graph memory; the others are
// reported as unmodelled.
absl::Status Parser::CompilationKey(const std::string& flag, const std::string& key,
                                    const std::string& value) {
  std::string path = absl::StrCat(flag.substr(0, flag.find('.')), ".", key);
  if (key == "cudagraph_capture_sizes") {
    CAPPLAN_ASSIGN_OR_RETURN(p_.cuda_graph_max, LargestOfList(path, {value}));
  } else if (key == "max_cudagraph_capture_size" || key == "max_capture_size") {
    CAPPLAN_ASSIGN_OR_RETURN(p_.cuda_graph_max, WholeNumber(path, value, 1, kMaxCount, false));
  } else if (key == "cudagraph_mode") {
    std::string mode = absl::AsciiStrToUpper(value);
    if (mode == "NONE") {
      out_.deployment.mutable_engine()->set_enforce_eager(true);
    } else if (mode == "PIECEWISE" || mode == "FULL" || mode == "FULL_DECODE_ONLY" ||
               mode == "FULL_AND_PIECEWISE") {
      // Graphs on; which kind is not modelled.
      out_.unmodelled_flags.push_back(absl::StrCat(path, "=", value));
    } else {
      return Invalid(absl::StrFormat(
          "%s = %s; must be NONE, PIECEWISE, FULL, FULL_DECODE_ONLY or FULL_AND_PIECEWISE", path,
          value));
    }
  } else {
    out_.unmodelled_flags.push_back(absl::StrCat(path, "=", value));
  }
  return absl::OkStatus();
}

absl::Status Parser::Finish() {
  v1::Deployment& d = out_.deployment;
  v1::DeploymentParallelism* par = d.mutable_parallelism();
  v1::EngineSettings* e = d.mutable_engine();
  uint64_t tp = p_.tp.value_or(1), pp = p_.pp.value_or(1), dp = p_.dp.value_or(1);
  if (p_.tp.has_value()) par->set_tp(static_cast<uint32_t>(tp));
  if (p_.pp.has_value()) par->set_pp(static_cast<uint32_t>(pp));
  if (p_.dp.has_value()) out_.data_parallel_size = static_cast<uint32_t>(dp);
  if (tp * pp * dp > kMaxCount) {  // each ≤ 2^20, so the product fits in 64 bits
    return Invalid(
        absl::StrFormat("launch line: tp × pp × dp = %d × %d × %d GPUs; must be at most %d", tp, pp,
                        dp, kMaxCount));
  }
  if (engine_ == Engine::kVllm) {
    if (p_.expert_parallel.has_value()) {
      par->set_ep(*p_.expert_parallel ? static_cast<uint32_t>(tp * dp) : 1);
    }
    if (p_.dp.has_value()) d.set_gpu_count(static_cast<uint32_t>(tp * pp * dp));
  } else {
    if (p_.ep.has_value()) {
      par->set_ep(static_cast<uint32_t>(*p_.ep));
    } else if (p_.ep_moe) {
      par->set_ep(static_cast<uint32_t>(tp));
    }
    bool dp_attention = par->has_dp_attention() && par->dp_attention();
    if (p_.dp.has_value() && !dp_attention) d.set_gpu_count(static_cast<uint32_t>(tp * pp * dp));
  }
  if (par->ByteSizeLong() == 0) d.clear_parallelism();
  if (p_.cuda_graph_max.has_value()) {
    e->set_max_cudagraph_batch_size(static_cast<uint32_t>(*p_.cuda_graph_max));
  }

  // Speculative decoding.
  std::optional<v1::SpeculativeMethod> method;
  if (p_.spec_method.has_value()) {
    if (engine_ == Engine::kVllm) {
      CAPPLAN_ASSIGN_OR_RETURN(method, VllmSpeculativeMethod(p_.spec_method_flag, *p_.spec_method));
    } else {
      CAPPLAN_ASSIGN_OR_RETURN(method,
                               SglangSpeculativeAlgorithm(p_.spec_method_flag, *p_.spec_method));
    }
  } else if (p_.spec_model.has_value()) {
    // Older vLLM named the method through the draft model.
    std::string m = absl::AsciiStrToLower(*p_.spec_model);
    if (m == "[ngram]" || m == "ngram") {
      method = v1::SPECULATIVE_METHOD_NGRAM;
    } else if (absl::StrContains(m, "eagle")) {
      method = v1::SPECULATIVE_METHOD_EAGLE;
    } else {
      method = v1::SPECULATIVE_METHOD_DRAFT_MODEL;
    }
  } else if (p_.spec_tokens.has_value() && engine_ == Engine::kVllm) {
    // vLLM with tokens but no draft: the target's own MTP layers.
    method = v1::SPECULATIVE_METHOD_MTP;
  }
  std::optional<uint64_t> spec_tokens = p_.spec_tokens;
  if (engine_ == Engine::kSglang) {
    if (p_.spec_steps.has_value()) {
      spec_tokens = p_.spec_steps;
    } else if (p_.spec_draft_tokens.has_value() && *p_.spec_draft_tokens >= 2) {
      spec_tokens = *p_.spec_draft_tokens - 1;
    }
    if (!method.has_value()) {
      // SGLang ignores the counts without an algorithm; so does the plan.
      for (const std::string& v : p_.spec_counts_verbatim) out_.unmodelled_flags.push_back(v);
    }
  }
  if (method.has_value()) {
    e->set_speculative_method(*method);
    // Without a count the planner's engine defaults decide it.
    if (spec_tokens.has_value()) {
      e->set_num_speculative_tokens(static_cast<uint32_t>(*spec_tokens));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<LaunchLine> Parser::Run(std::vector<std::string> environment,
                                       std::optional<std::string> positional_model) {
  out_.environment = std::move(environment);
  out_.deployment.mutable_engine()->set_kind(engine_ == Engine::kVllm     ? v1::ENGINE_KIND_VLLM
                                             : engine_ == Engine::kSglang ? v1::ENGINE_KIND_SGLANG
                                                                          : v1::ENGINE_KIND_TRTLLM);
  bool only_positional = false;
  while (pos_ < words_.size()) {
    std::string word = words_[pos_++];
    if (!only_positional && word == "--") {
      only_positional = true;
      continue;
    }
    if (!only_positional && LooksLikeFlag(word)) {
      CAPPLAN_RETURN_IF_ERROR(HandleFlag(word));
      continue;
    }
    // A positional word: vllm serve's (trtllm-serve's) model when none came
    // before it.
    if (!positional_model.has_value() && positional_ok_) {
      positional_model = word;
      continue;
    }
    out_.unmodelled_flags.push_back(word);
  }
  CAPPLAN_RETURN_IF_ERROR(Finish());

  std::vector<std::string> models = p_.model_flags;
  if (positional_model.has_value()) models.insert(models.begin(), *positional_model);
  if (models.empty()) {
    return Invalid(
        engine_ == Engine::kVllm ? "launch line: no model given (vllm serve MODEL or --model MODEL)"
        : engine_ == Engine::kSglang ? "launch line: no model given (--model-path MODEL)"
                                     : "launch line: no model given (trtllm-serve MODEL)");
  }
  for (const std::string& m : models) {
    if (m != models.front()) {
      return Invalid(
          absl::StrFormat("launch line: model given twice ('%s' and '%s')", models.front(), m));
    }
  }
  if (models.front().empty()) return Invalid("launch line: the model argument is empty");
  out_.model_argument = models.front();
  out_.deployment.set_model_id(models.front());
  return std::move(out_);
}

bool IsEnvAssignment(absl::string_view w) {
  size_t eq = w.find('=');
  if (eq == absl::string_view::npos || eq == 0) return false;
  if (!absl::ascii_isalpha(w[0]) && w[0] != '_') return false;
  for (size_t i = 0; i < eq; ++i) {
    if (!absl::ascii_isalnum(w[i]) && w[i] != '_') return false;
  }
  return true;
}

absl::string_view Basename(absl::string_view path) {
  size_t slash = path.rfind('/');
  return slash == absl::string_view::npos ? path : path.substr(slash + 1);
}

bool IsPython(absl::string_view word) {
  absl::string_view b = Basename(word);
  if (!absl::ConsumePrefix(&b, "python")) return false;
  return std::all_of(b.begin(), b.end(), [](char c) { return absl::ascii_isdigit(c) || c == '.'; });
}

}  // namespace

namespace {

constexpr size_t kMaxShownBytes = 200;

absl::Status NotOneCommand(absl::string_view line, size_t at, absl::string_view what) {
  std::string shown(line.substr(at, kMaxShownBytes));
  if (line.size() - at > kMaxShownBytes) absl::StrAppend(&shown, "…");
  return Invalid(absl::StrFormat(
      "launch line: %s at character %d (\"%s\"); a launch line is one engine command: no ;, "
      "&&, ||, a & before another command, pipes (other than into tee FILE), $(…) or "
      "backquotes",
      what, at + 1, shown));
}

// `| tee [-a] FILE`: the logging pipe engine commands are pasted with.
bool IsTeeTail(const std::vector<Word>& words, size_t op) {
  if (words[op].text != "|") return false;
  size_t i = op + 1;
  if (i >= words.size() || words[i].is_operator || words[i].text != "tee") return false;
  ++i;
  if (i < words.size() && !words[i].is_operator && words[i].text == "-a") ++i;
  if (i >= words.size() || words[i].is_operator) return false;  // the file
  ++i;
  return i == words.size() || (i + 1 == words.size() && words[i].text == "&");
}

// Refuses a second command, a pipe into anything but tee, and command
// substitution; a trailing & (background) and redirections are kept (the
// splitter drops them).
absl::Status CheckOneCommand(absl::string_view line, const LineShape& shape) {
  if (shape.substitution_at.has_value()) {
    return NotOneCommand(line, *shape.substitution_at, "command substitution");
  }
  const std::vector<Word>& words = shape.words;
  bool seen_word = false;
  for (size_t i = 0; i < words.size(); ++i) {
    const Word& w = words[i];
    seen_word |= !w.is_operator;
    if (!w.is_operator || absl::StrContains(w.text, '<') || absl::StrContains(w.text, '>')) {
      continue;
    }
    if (w.text == "\n" && !seen_word) continue;
    if (IsTeeTail(words, i)) return absl::OkStatus();
    const bool more = std::any_of(words.begin() + i + 1, words.end(),
                                  [](const Word& x) { return !x.is_operator; });
    if (!more && (w.text == "&" || w.text == ";" || w.text == "\n")) continue;
    return NotOneCommand(
        line, w.start,
        absl::StrCat(w.text == "\n" ? "a new line" : absl::StrCat("'", w.text, "'"),
                     " starts another command"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SplitShellWords(absl::string_view command_line) {
  CAPPLAN_ASSIGN_OR_RETURN(LineShape shape, ShellWords(command_line));
  return FirstCommand(shape.words);
}

std::optional<v1::WeightFormat> WeightFormatOfQuantizationMethod(absl::string_view method) {
  absl::StatusOr<std::optional<v1::WeightFormat>> f = Quantization("quantization", method);
  if (!f.ok()) return std::nullopt;
  return *f;
}

absl::StatusOr<LaunchLine> ParseLaunchLine(absl::string_view command_line) {
  CAPPLAN_ASSIGN_OR_RETURN(LineShape shape, ShellWords(command_line));
  CAPPLAN_RETURN_IF_ERROR(CheckOneCommand(command_line, shape));
  std::vector<std::string> words = FirstCommand(shape.words);
  size_t i = 0;
  std::vector<std::string> environment;
  while (i < words.size()) {
    if (IsEnvAssignment(words[i])) {
      environment.push_back(words[i++]);
    } else if (words[i] == "env" || words[i] == "nohup" || words[i] == "exec") {
      ++i;
    } else {
      break;
    }
  }
  if (i >= words.size()) {
    return Invalid(
        "launch line: no command given (expected vllm serve MODEL, python -m "
        "vllm.entrypoints.openai.api_server, python -m sglang.launch_server or trtllm-serve "
        "MODEL)");
  }
  auto not_server = [&](size_t upto) {
    std::vector<std::string> shown(words.begin() + i, words.begin() + std::min(words.size(), upto));
    return Invalid(absl::StrFormat(
        "launch line: not a vLLM, SGLang or TensorRT-LLM server command: '%s' (expected vllm "
        "serve MODEL, python -m vllm.entrypoints.openai.api_server, python -m "
        "sglang.launch_server or trtllm-serve MODEL)",
        absl::StrJoin(shown, " ")));
  };
  const std::string& command = words[i];
  if (Basename(command) == "trtllm-serve") {
    // trtllm-serve [serve] MODEL [options]; its other subcommands (e.g.
    // disaggregated) start no single server.
    size_t first = i + 1;
    if (first < words.size() && words[first] == "serve") ++first;
    if (first < words.size() && words[first] == "disaggregated") return not_server(first + 1);
    Parser parser(Engine::kTrtllm, words, first);
    parser.AllowPositionalModel();
    return parser.Run(std::move(environment), std::nullopt);
  }
  if (Basename(command) == "vllm") {
    if (i + 1 >= words.size() || words[i + 1] != "serve") return not_server(i + 2);
    Parser parser(Engine::kVllm, words, i + 2);
    parser.AllowPositionalModel();
    return parser.Run(std::move(environment), std::nullopt);
  }
  if (IsPython(command)) {
    size_t j = i + 1;
    // Interpreter options before -m (python -u -m ...).
    while (j < words.size() && words[j] != "-m" && LooksLikeFlag(words[j])) ++j;
    std::string module;
    if (j < words.size() && words[j] == "-m" && j + 1 < words.size()) {
      module = words[j + 1];
    } else {
      return not_server(j + 1);
    }
    if (module == "vllm.entrypoints.openai.api_server") {
      Parser parser(Engine::kVllm, words, j + 2);
      return parser.Run(std::move(environment), std::nullopt);
    }
    if (module == "sglang.launch_server") {
      Parser parser(Engine::kSglang, words, j + 2);
      return parser.Run(std::move(environment), std::nullopt);
    }
    return not_server(j + 2);
  }
  return not_server(i + 1);
}

}  // namespace capplan::service
