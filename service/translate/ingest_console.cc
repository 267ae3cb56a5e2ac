// The "Serving Benchmark Result" block that vLLM's benchmark_serving.py /
// `vllm bench serve` and SGLang's bench_serving print, one "Label: value" per
// line between a "=== Serving Benchmark Result ===" header and a "====" rule.
//
// Labels (vLLM vllm/benchmarks/serve.py; SGLang python/sglang/bench_serving.py
// at 0033168f0f58b2bc05aa0273bd475d9c01bafb1c):
//   Successful requests, Failed requests, Maximum request concurrency (vLLM) /
//   Max request concurrency (SGLang; "not set"), Traffic request rate,
//   Request rate configured (RPS), Burstiness factor, Benchmark duration (s),
//   Total input tokens, Total generated tokens, Request throughput (req/s),
//   Output token throughput (tok/s), Total Token throughput (tok/s),
//   "<Mean|Median|Std|Pnn|Max> <TTFT|TPOT|ITL|E2EL|E2E Latency> (ms)",
//   SGLang Concurrency (measured mean in flight) and Accept length; peak and
//   goodput figures go into the note.
// vLLM prints "Traffic request rate", "Burstiness factor" and "Maximum request
// concurrency" before the progress bar, outside the block: such lines (and
// the --request-rate / --max-concurrency / --num-prompts flags of a benchmark
// command line) since the previous block count for the next one. Lines may be
// prefixed with "# " or "> " (pasted into scripts and Markdown).
// The tool is "vllm bench serve" or "benchmark_serving.py" as the file's
// command line names it, else kVllmToolEither (the two print the same block).

#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "service/translate/ingest_internal.h"

namespace capplan::service::ingest_internal {
namespace {

constexpr absl::string_view kBlockTitle = "Serving Benchmark Result";
constexpr uint64_t kMaxCount = 0xffffffffu;

// The load a block states, or the lines before it.
struct LoadLines {
  std::optional<uint32_t> max_concurrency;
  bool concurrency_stated = false;  // including "None" / "not set"
  std::optional<double> rate;       // finite
  bool infinite_rate = false;
  std::optional<double> burstiness;
  std::optional<uint32_t> num_prompts;
  int command_line = 0;  // a benchmark command seen on this line
  bool command_rate = false;
};

struct Labeled {
  std::string label;  // as written, with the colon
  std::string key;    // lower case, without the colon
  std::string value;  // the rest of the line
  std::string token;  // its first word: what numbers are read from
};

// The line without surrounding blanks and the prefixes pasted copies carry:
// "# " (shell scripts), "> " (Markdown quotes), "│ " (k8s log viewers),
// "(APIServer pid=136) " (vLLM process tags).
absl::string_view Clean(absl::string_view line) {
  line = absl::StripAsciiWhitespace(line);
  for (bool more = true; more;) {
    more = absl::ConsumePrefix(&line, "#") || absl::ConsumePrefix(&line, ">") ||
           absl::ConsumePrefix(&line, "\xE2\x94\x82");
    if (!more && !line.empty() && line[0] == '(') {
      const size_t close = line.find(") ");
      more = close != absl::string_view::npos && close < 64;
      if (more) line.remove_prefix(close + 2);
    }
    line = absl::StripLeadingAsciiWhitespace(line);
  }
  absl::ConsumeSuffix(&line, "\xE2\x94\x82");
  return absl::StripTrailingAsciiWhitespace(line);
}

std::optional<Labeled> SplitLabel(absl::string_view line) {
  const size_t colon = line.find(':');
  if (colon == absl::string_view::npos || colon == 0) return std::nullopt;
  Labeled l;
  l.label = std::string(line.substr(0, colon + 1));
  l.key = absl::AsciiStrToLower(absl::StripAsciiWhitespace(line.substr(0, colon)));
  l.value = std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
  l.token = l.value.substr(0, l.value.find_first_of(" \t"));
  return l;
}

bool IsRule(absl::string_view line) {
  return line.size() >= 10 && line.find_first_not_of('=') == absl::string_view::npos;
}

absl::Status LineError(absl::string_view file, int line, const Labeled& l, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(file, ":", line, ": \"", l.label, "\" = \"",
                                                 absl::CHexEscape(l.value.substr(0, 80)), "\"; ",
                                                 rule));
}

absl::StatusOr<double> LineNumber(absl::string_view file, int line, const Labeled& l) {
  const std::optional<double> x = ParseDecimal(l.token);
  if (!x) return LineError(file, line, l, "must be a number");
  if (*x < 0) return LineError(file, line, l, "must not be negative");
  return *x;
}

absl::StatusOr<uint32_t> LineWhole(absl::string_view file, int line, const Labeled& l) {
  CAPPLAN_ASSIGN_OR_RETURN(double x, LineNumber(file, line, l));
  // The range first: converting a double past 2^64 to an integer is undefined.
  if (x > kMaxCount || x != std::floor(x)) {
    return LineError(file, line, l, "must be a whole number");
  }
  return static_cast<uint32_t>(x);
}

// The load labels, inside or outside a block; false for other labels.
absl::StatusOr<bool> ReadLoadLine(absl::string_view file, int line, const Labeled& l,
                                  LoadLines& load) {
  const std::string value = absl::AsciiStrToLower(l.value);
  if (l.key == "maximum request concurrency" || l.key == "max request concurrency" ||
      l.key == "max reqeuest concurrency") {
    load.concurrency_stated = true;
    if (value == "none" || value == "not set" || value.empty()) return true;
    CAPPLAN_ASSIGN_OR_RETURN(uint32_t n, LineWhole(file, line, l));
    if (n == 0) return LineError(file, line, l, "must be at least 1");
    load.max_concurrency = n;
    return true;
  }
  if (l.key == "traffic request rate" || l.key == "request rate configured (rps)") {
    const std::string token = absl::AsciiStrToLower(l.token);
    if (token == "inf" || token == "infinity") {
      load.infinite_rate = true;
      return true;
    }
    CAPPLAN_ASSIGN_OR_RETURN(double r, LineNumber(file, line, l));
    if (r <= 0) return LineError(file, line, l, "must be positive or inf");
    load.rate = r;
    return true;
  }
  if (l.key == "burstiness factor") {
    Labeled first = l;
    first.value = std::string(
        absl::StripAsciiWhitespace(absl::string_view(l.value).substr(0, l.value.find('('))));
    CAPPLAN_ASSIGN_OR_RETURN(double b, LineNumber(file, line, first));
    if (b <= 0) return LineError(file, line, l, "must be positive");
    load.burstiness = b;
    return true;
  }
  return false;
}

// One result block.
class BlockReader {
 public:
  BlockReader(std::string file, int line)
      : file_(std::move(file)), where_(absl::StrCat(file_, ":", line)), builder_(where_) {}

  // One line inside the block; false when the label is not one we read.
  absl::StatusOr<bool> ReadBlockLine(int line, const Labeled& l);
  absl::StatusOr<IngestedRun> Finish(const LoadLines& before);

 private:
  absl::StatusOr<bool> ReadLatencyLine(int line, const Labeled& l);
  absl::StatusOr<double> Number(int line, const Labeled& l) const {
    return LineNumber(file_, line, l);
  }
  absl::StatusOr<uint32_t> Whole(int line, const Labeled& l) const {
    return LineWhole(file_, line, l);
  }

  std::string file_;
  std::string where_;
  RunBuilder builder_;
  LoadLines load_;
  std::optional<uint64_t> total_input_;
  std::optional<uint64_t> total_output_;
  int figures_ = 0;
};

absl::StatusOr<bool> BlockReader::ReadLatencyLine(int line, const Labeled& l) {
  absl::string_view key = l.key;
  if (!absl::ConsumeSuffix(&key, "(ms)")) return false;
  key = absl::StripAsciiWhitespace(key);
  const size_t space = key.find(' ');
  if (space == absl::string_view::npos) return false;
  const absl::string_view stat = key.substr(0, space);
  const absl::string_view metric = absl::StripAsciiWhitespace(key.substr(space + 1));
  LatencyMetric m;
  if (metric == "ttft") {
    m = LatencyMetric::kTtft;
  } else if (metric == "tpot") {
    m = LatencyMetric::kTpot;
  } else if (metric == "itl") {
    m = LatencyMetric::kItl;
  } else if (metric == "e2el" || metric == "e2e latency") {
    m = LatencyMetric::kE2e;
  } else {
    return false;
  }
  const bool percentile = stat.size() > 1 && stat[0] == 'p' && ParseDecimal(stat.substr(1));
  if (!percentile && stat != "mean" && stat != "median" && stat != "std" && stat != "max" &&
      stat != "min") {
    return false;
  }
  CAPPLAN_ASSIGN_OR_RETURN(double ms, Number(line, l));
  builder_.SetLatency(m, stat, ms / 1000.0);
  return true;
}

absl::StatusOr<bool> BlockReader::ReadBlockLine(int line, const Labeled& l) {
  CAPPLAN_ASSIGN_OR_RETURN(bool load, ReadLoadLine(file_, line, l, load_));
  if (load) return true;
  CAPPLAN_ASSIGN_OR_RETURN(bool latency, ReadLatencyLine(line, l));
  if (latency) {
    ++figures_;
    return true;
  }
  v1::SweepRow& row = builder_.run().row;
  const std::string& k = l.key;
  if (k == "successful requests" || k == "failed requests" || k == "total input tokens" ||
      k == "total generated tokens") {
    CAPPLAN_ASSIGN_OR_RETURN(uint32_t n, Whole(line, l));
    if (k == "successful requests") row.set_requests(n);
    if (k == "failed requests") row.set_failed_requests(n);
    if (k == "total input tokens") total_input_ = n;
    if (k == "total generated tokens") total_output_ = n;
    ++figures_;
    return true;
  }
  struct Note {
    absl::string_view key, label, unit;
  };
  static constexpr Note kNotes[] = {
      {"input token throughput (tok/s)", "input throughput", " tok/s"},
      {"peak output token throughput (tok/s)", "peak output throughput", " tok/s"},
      {"peak concurrent requests", "peak concurrent requests", ""},
      {"request goodput (req/s)", "request goodput", " req/s"},
      {"accept length", "speculative accept length", " tokens/step"},
  };
  for (const Note& n : kNotes) {
    if (k != n.key) continue;
    CAPPLAN_ASSIGN_OR_RETURN(double x, Number(line, l));
    builder_.AddNote(absl::StrCat(n.label, " ", FormatFigure(x), n.unit));
    return true;
  }
  if (k == "backend") {
    builder_.AddNote(absl::StrCat("backend ", l.value));
    return true;
  }
  const bool known = k == "benchmark duration (s)" || k == "request throughput (req/s)" ||
                     k == "output token throughput (tok/s)" ||
                     k == "total token throughput (tok/s)" || k == "concurrency";
  if (!known) return false;
  CAPPLAN_ASSIGN_OR_RETURN(double x, Number(line, l));
  if (k == "benchmark duration (s)") row.set_wall_seconds(x);
  if (k == "request throughput (req/s)") row.set_requests_per_second(x);
  if (k == "output token throughput (tok/s)") row.set_output_tokens_per_second(x);
  if (k == "total token throughput (tok/s)") row.set_total_tokens_per_second(x);
  if (k == "concurrency") builder_.run().measured_mean_in_flight = x;
  ++figures_;
  return true;
}

absl::StatusOr<IngestedRun> BlockReader::Finish(const LoadLines& before) {
  if (figures_ == 0) {
    return absl::InvalidArgumentError(absl::StrCat(where_, ": the result block holds no figures"));
  }
  IngestedRun& run = builder_.run();
  bool from_before = false;
  if (load_.concurrency_stated) {
    run.max_concurrency = load_.max_concurrency;
  } else if (before.max_concurrency) {
    run.max_concurrency = before.max_concurrency;
    from_before = true;
  }
  const bool block_rate = load_.rate || load_.infinite_rate;
  const LoadLines& rate = block_rate ? load_ : before;
  from_before |= !block_rate && (before.rate || before.infinite_rate);
  run.request_rate_rps = rate.rate;
  bool infinite = rate.infinite_rate;
  if (!rate.rate && !infinite && before.command_line > 0 && !before.command_rate) {
    infinite = true;
    builder_.AddNote(absl::StrCat("no --request-rate on the benchmark command (line ",
                                  before.command_line, "): the tool's default, inf"));
  }
  if (infinite) builder_.SetInfiniteRate();
  run.burstiness = load_.burstiness ? load_.burstiness : before.burstiness;
  run.num_prompts = before.num_prompts;
  if (from_before) builder_.AddNote("load settings from the lines before the result block");
  builder_.SetTokenTotals(total_input_, total_output_);
  return builder_.Finish();
}

// --max-concurrency 8, --request-rate=4, --num-prompts 100 on a command line.
absl::Status ReadCommandFlags(absl::string_view file, int line, absl::string_view text,
                              LoadLines& load) {
  if (absl::StrContains(text, "benchmark_serving") || absl::StrContains(text, "bench serve") ||
      absl::StrContains(text, "bench_serving")) {
    load.command_line = line;
  }
  const std::vector<absl::string_view> words =
      absl::StrSplit(text, absl::ByAnyChar(" \t"), absl::SkipEmpty());
  for (size_t i = 0; i < words.size(); ++i) {
    absl::string_view flag = words[i];
    absl::string_view value;
    const size_t eq = flag.find('=');
    if (eq != absl::string_view::npos) {
      value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    } else if (i + 1 < words.size()) {
      value = words[i + 1];
    }
    const bool conc = flag == "--max-concurrency", rate = flag == "--request-rate",
               prompts = flag == "--num-prompts";
    if (!conc && !rate && !prompts) continue;
    auto bad = [&](absl::string_view rule) {
      return absl::InvalidArgumentError(absl::StrCat(
          file, ":", line, ": ", flag, " ", absl::CHexEscape(value.substr(0, 40)), "; ", rule));
    };
    if (rate) {
      load.command_rate = true;
      if (value == "inf") {
        load.infinite_rate = true;
        continue;
      }
    }
    const std::optional<double> x = ParseDecimal(value);
    if (!x || *x <= 0) return bad("must be a positive number");
    if (rate) {
      load.rate = *x;
    } else if (*x > static_cast<double>(std::numeric_limits<uint32_t>::max())) {
      // Range first: converting a larger double to an integer is undefined.
      return bad(absl::StrCat("must be at most ", std::numeric_limits<uint32_t>::max()));
    } else if (*x != std::floor(*x)) {
      return bad("must be a whole number");
    } else if (conc) {
      load.max_concurrency = static_cast<uint32_t>(*x);
    } else {
      load.num_prompts = static_cast<uint32_t>(*x);
    }
  }
  return absl::OkStatus();
}

}  // namespace

std::string VllmToolOf(absl::string_view text) {
  const bool cli = absl::StrContains(text, "vllm bench serve");
  const bool script = absl::StrContains(text, "benchmark_serving");
  if (cli && !script) return "vllm bench serve";
  if (script && !cli) return "benchmark_serving.py";
  return std::string(kVllmToolEither);
}

std::optional<IngestFormat> ConsoleFormatOf(absl::string_view text) {
  if (!absl::StrContains(text, kBlockTitle)) return std::nullopt;
  for (absl::string_view marker :
       {"Max request concurrency:", "E2E Latency (ms):", "Total generated tokens (retokenized):",
        "Accept length:", "\nConcurrency:"}) {
    if (absl::StrContains(text, marker)) return IngestFormat::kSglangConsole;
  }
  return IngestFormat::kVllmConsole;
}

absl::Status ParseBenchConsole(absl::string_view text, IngestedFile& out) {
  const bool sglang = out.format == IngestFormat::kSglangConsole;
  out.tool = sglang ? "sglang.bench_serving" : VllmToolOf(text);
  out.tpot_definition = sglang ? "SGLang bench_serving: (e2e - ttft) / (output tokens - 1) per "
                                 "request, first token excluded"
                               : "vLLM benchmark_serving: (e2e - ttft) / (output tokens - 1) "
                                 "per request, first token excluded";
  std::optional<BlockReader> block;
  LoadLines before;
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_number;
    const absl::string_view line = Clean(raw);
    if (absl::StrContains(line, kBlockTitle)) {
      if (block) {
        CAPPLAN_ASSIGN_OR_RETURN(IngestedRun run, block->Finish(before));
        out.runs.push_back(std::move(run));
        before = LoadLines();
      }
      if (out.runs.size() >= kMaxIngestRunsPerFile) {
        return absl::OutOfRangeError(
            absl::StrCat(out.file_name, ": more than ", kMaxIngestRunsPerFile, " result blocks"));
      }
      block.emplace(out.file_name, line_number);
      continue;
    }
    if (block && IsRule(line)) {
      CAPPLAN_ASSIGN_OR_RETURN(IngestedRun run, block->Finish(before));
      out.runs.push_back(std::move(run));
      block.reset();
      before = LoadLines();
      continue;
    }
    const std::optional<Labeled> l = SplitLabel(line);
    if (block) {
      if (l) CAPPLAN_RETURN_IF_ERROR(block->ReadBlockLine(line_number, *l).status());
      continue;
    }
    if (l) CAPPLAN_RETURN_IF_ERROR(ReadLoadLine(out.file_name, line_number, *l, before).status());
    CAPPLAN_RETURN_IF_ERROR(ReadCommandFlags(out.file_name, line_number, line, before));
  }
  if (block) {
    CAPPLAN_ASSIGN_OR_RETURN(IngestedRun run, block->Finish(before));
    out.notes.push_back("the last result block is not closed by a '=====' line");
    out.runs.push_back(std::move(run));
  }
  if (out.runs.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(out.file_name, ": no \"", kBlockTitle, "\" block"));
  }
  return absl::OkStatus();
}

}  // namespace capplan::service::ingest_internal
