#include "service/cli/help.h"

#include <algorithm>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "service/cli/format.h"

namespace capplan::service {
namespace {

// One command: how it is called and what it answers, in one line each.
struct CommandLine {
  const char* name;
  const char* usage;
  const char* summary;
};

// A new command adds one line here (and a line per new flag below).
constexpr CommandLine kCommands[] = {
    {"hardware", "capplan hardware list [--vendor NAME] | capplan hardware get ID",
     "GPUs in the catalogue; one GPU with every figure's source"},
    {"models", "capplan models list [--family NAME] | capplan models get ID|HF_REPO_ID|CONFIG.json",
     "models with computed parameter counts; one model, or what the planner reads from a "
     "config.json"},
    {"baselines",
     "capplan baselines list [--hardware ID] [--model ID] [--engine NAME] | capplan baselines get "
     "ID",
     "measured baselines; one baseline with every part it holds"},
    {"memory", "capplan memory (--model ID | --model-config FILE | --baseline ID) --gpu ID [...]",
     "does it fit: the per-GPU memory account, the KV pool in tokens, max concurrency"},
    {"sweep",
     "capplan sweep (--model ID | --model-config FILE | --baseline ID) --gpu ID --input-tokens N "
     "--output-tokens N (--concurrency 1,2,4 | --rate 0.5,1,2) [...]",
     "throughput, TTFT and TPOT along a load axis; the knee and the safe point (table, JSON, SVG)"},
    {"simulate",
     "capplan simulate (--model ID | --model-config FILE | --baseline ID) --gpu ID --input-tokens "
     "N "
     "--output-tokens N (--concurrency 1,2,4 | --rate 0.5,1,2) [...]",
     "the request-level simulator beside the analytical model, point by point (at most 32 "
     "points)"},
    {"plan",
     "capplan plan (--model ID | --model-config FILE | --baseline ID) --gpu ID --input-tokens N "
     "--output-tokens N [--ttft-p95 S] [--target-users N | --target-rps R] [...]",
     "one-call sizing: safe points, monthly capacity, replicas, GPUs and cost for a target"},
    {"search",
     "capplan search (--model ID | --model-config FILE) --input-tokens N --output-tokens N "
     "(--target-users N | --target-rps R | --target-tokens-per-month T) [--ttft-p95 S] [...]",
     "which GPU, how many, how configured, at what cost: top-k, Pareto fronts, launch lines"},
    {"validate",
     "capplan validate (--spec FILE | --launch LINE --gpu ID | --model ID --gpu ID | --baseline "
     "ID) [...]",
     "CI check of a deployment: verdict, findings, checks, exit code 1 on FAIL, JUnit report"},
    {"accuracy", "capplan accuracy [--mode rows|baselines|alternate] [--baseline ID]",
     "how well the model predicts the catalogue's measured rows, each held out"},
    {"lint", "capplan lint [--baseline ID]",
     "consistency checks of the measured baselines (Little's law, sums, units); exit 1 on errors"},
    {"ingest",
     "capplan ingest FILE... --id ID (--model ID | --model-config FILE | --launch LINE) --source "
     "URL (--out-dir DIR | --server HOST:PORT --token-file FILE) [...]",
     "benchmark outputs and engine logs into a catalogue baseline (file or server)"},
    {"priors", "capplan priors [--data-dir DIR | --out-dir DIR]",
     "refit the hardware-class efficiency priors from the catalogue (writes them with --out-dir)"},
};

// Every flag, once; "command:flag" lines override the shared line for one
// command. Units name what the value counts; "-" when it counts nothing.
const std::vector<FlagHelp>& FlagTable() {
  static const auto* const kTable = new std::vector<FlagHelp>{
      // Global.
      {"server", "HOST:PORT", "-", "offline", "ask a running capplan-server instead of data/"},
      {"data-dir", "DIR", "-", "the bundled data/", "catalogue directory for offline mode"},
      {"timeout-seconds", "S", "s", "10", "RPC deadline in --server mode"},
      {"json", "", "-", "off", "print the response message as proto3 JSON (snake_case names)"},
      {"help", "", "-", "off", "print this help and exit 0"},
      {"tls-ca-file", "FILE", "-", "the system's roots",
       "--server over TLS: check the server's certificate against these PEM roots (any --tls-* "
       "flag turns TLS on)"},
      {"tls-cert-file", "FILE", "-", "none",
       "the client's PEM certificate for mutual TLS (with --tls-key-file)"},
      {"tls-key-file", "FILE", "-", "none", "the client's PEM key for mutual TLS"},
      // Catalogue lists.
      {"hardware:vendor", "NAME", "-", "all", "only GPUs of this vendor (nvidia, amd, ...)"},
      {"models:family", "NAME", "-", "all", "only models of this family"},
      {"baselines:hardware", "ID", "-", "all", "only baselines on this GPU"},
      {"baselines:model", "ID", "-", "all", "only baselines of this model (id or repo id)"},
      {"baselines:engine", "NAME", "-", "all",
       "only baselines on this engine (vllm, sglang, trtllm)"},
      // The deployment.
      {"model", "ID", "-", "the baseline's",
       "catalogue id, alias or Hugging Face repo id of the model"},
      {"model-config", "FILE", "-", "none",
       "a Hugging Face config.json: plan a model not in the "
       "catalogue"},
      {"baseline", "ID", "-", "none",
       "start from a measured baseline's configuration (GPU, count, engine, settings); other "
       "flags override it"},
      {"gpu", "ID", "-", "the baseline's", "GPU id (capplan hardware list)"},
      {"hardware-file", "FILE", "-", "none",
       "a GPU not in the catalogue: a Hardware message (text format or JSON, fields as in "
       "data/hardware/*.txtpb); instead of --gpu"},
      {"gpus", "N", "GPUs", "the baseline's, else tp × pp",
       "GPUs in one replica; without --tp they form one tensor-parallel group"},
      {"tp", "N", "GPUs", "gpus ÷ pp", "tensor-parallel size"},
      {"pp", "N", "GPUs", "1", "pipeline-parallel size"},
      {"ep", "N", "GPUs", "1 (experts not split)", "expert-parallel size (MoE models)"},
      {"dp-attention", "", "-", "off", "data-parallel attention (SGLang --enable-dp-attention)"},
      {"engine", "NAME", "-", "the baseline's, else vllm", "vllm, sglang or trtllm"},
      {"engine-version", "V", "-", "the newest preset", "engine version, e.g. 0.11.0"},
      {"gpu-memory-utilization", "F", "fraction of memory", "the engine preset's",
       "vLLM: share of the card's memory the engine may use"},
      {"mem-fraction-static", "F", "fraction of memory", "the engine preset's",
       "SGLang: share of the card's memory for weights plus KV pool"},
      {"kv-cache-free-gpu-memory-fraction", "F", "fraction of free memory", "the engine preset's",
       "TensorRT-LLM: share of the memory left after the profiling peak for the KV cache"},
      {"max-model-len", "N", "tokens", "the model's context",
       "longest request (prompt + output) the engine admits"},
      {"max-num-batched-tokens", "N", "tokens", "the engine preset's",
       "tokens per engine iteration (SGLang: chunked prefill size)"},
      {"max-num-seqs", "N", "requests", "the engine preset's",
       "running-request limit (SGLang: max_running_requests)"},
      {"block-size", "N", "tokens", "the engine preset's", "KV block (page) size"},
      {"max-cudagraph-batch-size", "N", "requests", "the engine preset's",
       "largest batch captured as a CUDA graph"},
      {"kv-cache-dtype", "DTYPE", "-", "auto (the model's dtype)", "auto, bf16, fp16 or fp8"},
      {"sampler-backend", "B", "-", "default (the release's)",
       "vLLM V1 top-k/top-p sampler: native = PyTorch sort (0.9-0.10 without FlashInfer), default"},
      {"quantization", "FORMAT", "-", "the checkpoint's",
       "weight format: bf16 fp16 fp8 fp8-block int8 awq gptq int4 nvfp4 mxfp4"},
      {"enforce-eager", "", "-", "off", "no CUDA graphs"},
      {"language-model-only", "", "-", "off",
       "serve a vision-language checkpoint without its vision tower (vLLM --language-model-only)"},
      {"enable-prefix-caching", "", "-", "the engine's",
       "automatic prefix caching on; vLLM hybrid models then hold two state blocks a request"},
      {"no-enable-prefix-caching", "", "-", "the engine's", "automatic prefix caching off"},
      {"speculative-method", "METHOD", "-", "the baseline's, else none", "mtp, eagle or none"},
      {"num-speculative-tokens", "K", "tokens per step", "1 when a method is on",
       "draft tokens per step (ignored with --speculative-method none)"},
      {"kv-pool-tokens", "N", "tokens", "computed from memory",
       "a KV pool the engine reported (its start-up log): used instead of the computed one"},
      {"free-memory-gib", "F", "GiB per GPU", "the card's total less the engine's context",
       "memory free when the engine starts (a desktop, WSL2 or another process holds the rest); "
       "SGLang: its own figure after its context (its log: 'Load weight begin. avail mem'), "
       "its budget is its fraction of it; other engines: what the card shows free before the "
       "launch. TensorRT-LLM, vLLM <= 0.3.0 and V1 0.8 lose what others hold from their pool; "
       "with every engine the whole account must fit in what others leave"},
      // Memory.
      {"mean-sequence-tokens", "N", "tokens", "none",
       "also report max concurrency at this mean request length"},
      // Workload and SLO.
      {"input-tokens", "N", "tokens", "the baseline's workload", "prompt length per request"},
      {"output-tokens", "N", "tokens", "the baseline's workload", "output length per request"},
      {"prefix-cache-hit-rate", "F", "fraction of prompt tokens", "0",
       "share of each prompt found in the prefix cache (not prefilled again)"},
      {"input-tokens-cv", "F", "ratio (std ÷ mean)", "0",
       "spread of prompt lengths: coefficient of variation"},
      {"output-tokens-cv", "F", "ratio (std ÷ mean)", "0",
       "spread of output lengths: coefficient of variation"},
      {"synchronized", "", "-", "off",
       "fixed-length requests whose users start together (benchmark waves)"},
      {"num-prompts", "N", "requests", "1000",
       "with --synchronized: the benchmark's prompts in all (--num-prompts); an engine that "
       "serves decodes first queues only the first wave's share of them as a wave"},
      {"ttft-p95", "S", "s", "none", "SLO: time to first token, 95th percentile"},
      {"tpot", "S", "s", "none", "SLO: time per output token after the first"},
      {"e2e-p95", "S", "s", "none", "SLO: end-to-end request time, 95th percentile"},
      {"think-time", "S", "s", "0",
       "mean time a user waits between an answer and the next "
       "request (closed loop)"},
      {"min-user-tokens-per-second", "R", "tok/s", "10",
       "warn when the safe point's decode rate per user (1/TPOT) is below this"},
      {"kv-tier", "ID", "-", "none",
       "KV storage tier (data/tiers/): restore vs recompute per context, cold-restore tok/s"},
      {"kv-restore-context", "N,N,...", "tokens", "the input, 8k, 32k, 128k",
       "context lengths for --kv-tier (up to max_model_len)"},
      // Sweep.
      {"concurrency", "N,N,...", "users", "the baseline's sweep",
       "closed-loop load axis: users, each sending its next request at once"},
      {"rate", "R,R,...", "req/s", "none", "open-loop load axis: Poisson arrival rates"},
      {"concurrency-gate", "N", "requests", "the baseline's, else none",
       "an operator gate in front of the engine: requests beyond it wait outside"},
      {"calibration", "FILE", "-", "none",
       "measured sweeps (text proto or JSON) to fit on; drawn in the --svg plot"},
      {"no-catalog-calibration", "", "-", "off", "fit on --calibration only, not on the catalogue"},
      {"svg", "FILE", "-", "none", "also write the curve as an SVG plot (with measured points)"},
      // Plan.
      {"target-users", "N", "users", "none", "size replicas for this many concurrent users"},
      {"target-rps", "R", "req/s", "none", "size replicas for this request rate"},
      {"target-tokens-per-month", "T", "tokens/month", "none",
       "size replicas for this monthly volume (input + output)"},
      {"duty-factor", "F", "fraction of the month", "1", "share of the month at the safe load"},
      {"price-per-gpu-hour", "P", "currency per GPU-hour", "none",
       "GPU price: gives the cost per million output tokens"},
      {"currency", "CODE", "-", "USD", "currency of --price-per-gpu-hour (printed with the cost)"},
      // Validate.
      {"spec", "FILE", "-", "none", "a ValidateRequest (text proto or JSON) to check"},
      {"launch", "LINE", "-", "none",
       "an engine launch line (vllm serve ..., python -m sglang...)"},
      {"users", "N", "users", "none", "expected concurrent users (closed loop, no think time)"},
      {"rps", "R", "req/s", "none", "expected request rate (open loop)"},
      {"allow", "CODE", "-", "none", "turn this finding code's errors into warnings (repeatable)"},
      {"junit", "FILE", "-", "none", "also write a JUnit XML report, one test case per check"},
      // Accuracy and lint.
      {"accuracy:baseline", "ID", "-", "all", "only this baseline's rows"},
      {"mode", "MODE", "-", "rows",
       "rows: leave one row out; baselines: leave the baseline out; alternate: fit on every "
       "other row"},
      {"lint:baseline", "ID", "-", "all", "lint only this baseline"},
      // Ingest.
      {"id", "ID", "-", "none", "id of the baseline to write (kebab-case)"},
      {"title", "TEXT", "-", "none", "the baseline's title"},
      {"format", "NAME", "-", "auto", "input format when auto-detection is not wanted"},
      {"ingest:launch", "LINE", "-", "none", "the engine launch line the files were measured with"},
      {"ingest:input-tokens", "N", "tokens", "what the files state",
       "prompt length when the files do not state it"},
      {"ingest:output-tokens", "N", "tokens", "what the files state",
       "output length when the files do not state it"},
      {"source", "URL", "-", "none", "where the measurement comes from (a commit-pinned URL)"},
      {"section", "TEXT", "-", "none", "section of the source"},
      {"measured-by", "TEXT", "-", "none", "who measured"},
      {"date", "YYYY-MM-DD", "-", "none", "when it was measured"},
      {"notes", "TEXT", "-", "none", "free notes for the baseline"},
      {"out-dir", "DIR", "-", "none", "write into this catalogue directory (a copy of data/)"},
      {"token-file", "FILE", "-", "none", "bearer token for writes through --server"},
      {"model-id", "ID", "-", "from the config's repo",
       "id of the model entry written with "
       "--model-config"},
      {"model-source", "URL", "-", "none", "where the config.json comes from (commit-pinned)"},
      {"model-hf-id", "ORG/NAME", "-", "config.json's _name_or_path",
       "Hugging Face repo id of the model entry written with --model-config"},
      {"model-display-name", "TEXT", "-", "config.json's _name_or_path",
       "display name of the model entry written with --model-config"},
      {"model-family", "NAME", "-", "config.json's model_type",
       "family of the model entry written with --model-config"},
      {"max-concurrency", "N", "users", "what the files state",
       "the benchmark's concurrency, for files that do not print it"},
      {"request-rate", "R|inf", "req/s", "what the files state",
       "the benchmark's request rate (inf: all at once), for files that do not print it"},
      {"num-prompts", "N", "requests", "what the files state",
       "prompts the benchmark sent, for files that do not print it"},
      {"simulate:svg", "FILE", "-", "none", "refused: simulate prints a table (sweep --svg plots)"},
      {"replace", "", "-", "off", "replace an existing baseline of the same id"},
      {"priors:out-dir", "DIR", "-", "none",
       "read this catalogue directory and write the fitted priors into its priors/"},
      // Search.
      {"search:model", "ID", "-", "none", "catalogue id or Hugging Face repo id of the model"},
      {"search:input-tokens", "N", "tokens", "none", "prompt length per request"},
      {"search:output-tokens", "N", "tokens", "none", "output length per request"},
      {"search:gpus", "ID,ID,...", "-", "every card of the catalogue", "GPU ids to choose from"},
      {"vendors", "NAME,NAME,...", "-", "any", "only GPUs of these vendors"},
      {"max-gpus-per-replica", "N", "GPUs", "8", "largest replica tried (within one node)"},
      {"max-gpus-total", "N", "GPUs", "no limit", "replicas × GPUs per replica at most this"},
      {"weight-formats", "F,F,...", "-", "the checkpoint's, fp8, awq", "weight formats to try"},
      {"kv-cache-dtypes", "D,D,...", "-", "auto,fp8", "KV cache dtypes to try"},
      {"engines", "E,E,...", "-", "vllm,sglang", "engines to try"},
      {"search:max-num-seqs", "N,N,...", "requests", "32,64,128,256,512",
       "running-request limits to try"},
      {"search:max-model-len", "N", "tokens", "2 × (input + output), rounded up to 1,024",
       "the engine's context limit in every candidate"},
      {"min-user-tps", "X", "tok/s", "none", "per-user speed floor: TPOT at most 1 ÷ X"},
      {"price", "ID=P,...", "currency per GPU-hour", "the catalogue's price_per_hour",
       "prices per GPU-hour by hardware id"},
      {"objective", "NAME", "-", "cost",
       "cost (monthly bill), gpus (fewest in total) or speed (fastest per user)"},
      {"top-k", "K", "deployments", "10", "answers listed (at most 100)"},
      {"max-candidates", "N", "candidates", "20,000",
       "candidates enumerated at most (at most 200,000; the answer says truncated)"},
      {"time-budget", "S", "s", "the RPC deadline", "stop after this long with the best so far"},
      {"search:threads", "N", "threads", "1",
       "evaluate the survivors on N threads (at most 64 and the machine's cores; the same fronts "
       "unless a pruning estimate is beaten)"},
      {"search:svg", "FILE", "-", "none", "also write the two Pareto fronts as an SVG plot"},
      {"speculative", "", "-", "off", "also try speculative decoding (the model's MTP layers)"},
      {"multi-node", "", "-", "off", "let one replica span nodes (TP/PP over the network)"},
      {"expert-parallel", "", "-", "off", "MoE models: also try EP = TP"},
  };
  return *kTable;
}

const CommandLine* FindCommandLine(const std::string& name) {
  for (const CommandLine& c : kCommands) {
    if (name == c.name) return &c;
  }
  return nullptr;
}

}  // namespace

std::optional<FlagHelp> FindFlagHelp(const std::string& command, const std::string& flag) {
  const std::string own = absl::StrCat(command, ":", flag);
  const FlagHelp* shared = nullptr;
  for (const FlagHelp& f : FlagTable()) {
    if (f.name == own) {
      FlagHelp out = f;
      out.name = flag;
      return out;
    }
    if (f.name == flag) shared = &f;
  }
  if (shared == nullptr) return std::nullopt;
  return *shared;
}

const std::vector<std::string>& GlobalValuedFlags() {
  static const auto* const kFlags = new std::vector<std::string>{
      "server", "data-dir", "timeout-seconds", "tls-ca-file", "tls-cert-file", "tls-key-file"};
  return *kFlags;
}

const std::vector<std::string>& GlobalSwitches() {
  static const auto* const kFlags = new std::vector<std::string>{"json", "help"};
  return *kFlags;
}

namespace {

void AddFlagRows(const std::string& command, const std::vector<std::string>& flags, bool is_switch,
                 TextTable* table) {
  for (const std::string& flag : flags) {
    std::optional<FlagHelp> h = FindFlagHelp(command, flag);
    if (!h.has_value()) {
      table->AddRow({absl::StrCat("--", flag), "?", "?", kUndocumented});
      continue;
    }
    std::string name = absl::StrCat("--", flag);
    if (!is_switch && !h->value.empty()) absl::StrAppend(&name, " ", h->value);
    table->AddRow({name, h->unit, h->default_value, h->meaning});
  }
}

}  // namespace

std::string TopLevelHelp(const std::vector<CliCommandSpec>& commands) {
  std::string out =
      "usage: capplan [--server HOST:PORT | --data-dir DIR] [--json] COMMAND [flags]\n\n"
      "Commands:\n";
  size_t width = 0;
  for (const CliCommandSpec& c : commands) width = std::max(width, c.name.size());
  for (const CliCommandSpec& c : commands) {
    const CommandLine* line = FindCommandLine(c.name);
    absl::StrAppend(&out, "  ", c.name, std::string(width + 2 - c.name.size(), ' '),
                    line != nullptr ? line->summary : kUndocumented, "\n");
  }
  absl::StrAppend(&out, "  help", std::string(width - 2, ' '),
                  "help CMD: a command's flags; help concepts: users, slots, knee, safe point, "
                  "tiers\n\n");
  absl::StrAppend(&out, "Global flags:\n");
  TextTable table({"FLAG", "UNIT", "DEFAULT", "MEANING"});
  AddFlagRows("", GlobalValuedFlags(), false, &table);
  AddFlagRows("", GlobalSwitches(), true, &table);
  std::ostringstream flags;
  table.Print(flags);
  for (absl::string_view line : absl::StrSplit(flags.str(), '\n', absl::SkipEmpty())) {
    absl::StrAppend(&out, "  ", line, "\n");
  }
  absl::StrAppend(&out,
                  "\n`capplan CMD --help` lists every flag of CMD with its unit and default;\n"
                  "`capplan help concepts` explains users, think time, slots, the knee, the safe\n"
                  "point, tiers and error bands.\n\n"
                  "Exit codes: 0 success, 1 a FAIL verdict (validate) or lint errors, 2 invalid "
                  "input,\nunknown id or unreachable server (the reason goes to stderr).\n");
  return out;
}

std::string CommandHelp(const CliCommandSpec& spec) {
  const CommandLine* line = FindCommandLine(spec.name);
  std::string out = absl::StrCat("usage: ", line != nullptr ? line->usage : "capplan " + spec.name,
                                 "\n", line != nullptr ? line->summary : kUndocumented, "\n\n");
  TextTable table({"FLAG", "UNIT", "DEFAULT", "MEANING"});
  AddFlagRows(spec.name, spec.valued, false, &table);
  AddFlagRows(spec.name, spec.switches, true, &table);
  AddFlagRows(spec.name, GlobalValuedFlags(), false, &table);
  AddFlagRows(spec.name, GlobalSwitches(), true, &table);
  std::ostringstream flags;
  table.Print(flags);
  absl::StrAppend(&out, flags.str(),
                  "\nUnits: s = seconds, tok/s = output tokens per second, req/s = requests per "
                  "second.\nSee `capplan help concepts` for users, slots, the knee and the safe "
                  "point.\n");
  return out;
}

const std::string& ConceptsText() {
  static const auto* const kText = new std::string(
      R"(## Concepts

**Users.** `--concurrency N` (sweep), `--target-users N` (plan) and `--users N` (validate)
count closed-loop users: each user sends a request, waits for the whole answer and sends the
next one at once, with zero think time unless `--think-time S` is given. This is what
benchmark tools run at a fixed concurrency; it is a heavier load than N people chatting.

**Think time.** `--think-time S` is the mean time a user waits between receiving an answer and
sending the next request. With think time fewer of the N users have a request in the engine
at any moment, so the same deployment carries more users.

**Slots.** The engine runs at most S requests at once. S is the smallest of: the engine's
running-request limit (`--max-num-seqs`, SGLang's max_running_requests), an operator's gate in
front of the engine (`--concurrency-gate`), the KV pool divided by the KV tokens one request
holds (about input + output tokens; on vLLM's hybrid allocator, whole blocks in every group of
layers, a recurrent-state block included), and for hybrid models the state slots. The line
`slots: 256 (bound: RUNNING_REQUEST_LIMIT)` says which one binds (KV_POOL, OPERATOR_GATE,
STATE_SLOTS). A request beyond S waits for a slot, and the wait is part of its TTFT.

**Slot wait.** A safe point lets at most 1% of requests find every slot taken; past that the
binding is SLOT_WAIT. With zero think time N users keep N requests in flight, so with more
users than slots requests always wait: the safe point is then at most S users, and this 1%
cap can bind before any SLO does. Raise the slot limit (if the KV pool allows), add think
time, or add replicas.

**Knee.** The knee is where TTFT leaves its flat region: the first load of the curve at which
the median TTFT (p50) exceeds twice its value at the curve's lightest load, interpolated
linearly between the last flat point and the first steep one (the steep point's load when
that point is unstable). `knee: none` means the median TTFT stays below twice its
lightest-load value over the whole range. Where measured rows correct the figures (below), the
knee is sought on the model's own TTFT, before the correction: a measured step between two
loads (a wave of prefills, a scheduler limit) moves the figures, not where queueing sets in.

**Safe point.** The safe operating point is the last load of the first run of points that
all meet every condition: stable (open loop: arrivals below saturation), TTFT p95 within
`--ttft-p95`, TPOT within `--tpot`, end-to-end p95 within `--e2e-p95` (each only when given),
and at most 1% of requests waiting for a slot. Its binding names what the next load breaks
(LOAD_RANGE: nothing did, the range ended). `plan` sizes replicas on the safe point, never
on peak throughput.

**Per-user speed.** TPOT is the time per output token after the first; 1/TPOT is the decode
rate a user sees while the answer streams. The per-user rate (output tokens per request over
its end-to-end time) includes the wait for the first token, so it is lower, much lower for
long prompts. A safe point whose decode rate is below `--min-user-tokens-per-second` (default
10 tok/s, about reading speed) is flagged: add `--tpot` to the SLO to bound it.

**Tiers and error bands.** Every figure says how it was obtained: MEASURED (a baseline
measured this point), CALIBRATED (fitted on baselines of this configuration, interpolated),
EXTRAPOLATED (outside the measured range, or transferred from another configuration) or
ROOFLINE (no baseline: the card's peaks with typical efficiencies). The error band (±%) comes
from the fit that produced the figure (its rows' residuals, or the held-out error of the prior
it took), widened with the distance from the measured range; for a figure the measured rows
correct (closed loops of the rows' workload and gate: each figure the model times the rows'
residual, interpolated in log load), from the correction's own leave-one-row-out error within
the rows' loads and the larger of the two beyond them. Rate (open-loop) figures are corrected
only by open-loop rows, and a what-if behind another operator gate than the rows ran behind is
not corrected by them. A fit's residuals do not show how
far another run of the same configuration lands (another workload, driver or CC mode), so a
figure fitted on rows also gets a run-to-run term in quadrature, learned on baselines left out
and predicted from their siblings' rows; then one factor per metric and kind of figure (fitted
on rows, or a prior's) scales the band so that 80% of held-out errors fall inside it (`capplan
priors` fits both on leave-one-baseline-out and alternate-row predictions and prints them);
`capplan accuracy` shows those errors. A hardware-class or card-architecture prior learned only
on mixture-of-experts models is not lent to a dense model (nor the other way round): the next
level up is used instead, up to the global prior, which pools every baseline.
)");
  return *kText;
}

}  // namespace capplan::service
