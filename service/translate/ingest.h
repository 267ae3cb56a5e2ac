#ifndef CAPPLAN_SERVICE_TRANSLATE_INGEST_H_
#define CAPPLAN_SERVICE_TRANSLATE_INGEST_H_

// Ingest parsers: the output files of benchmark tools and the start-up logs of
// inference engines, translated into the catalogue's messages. Pure
// translation: no files are read here (the caller hands over the bytes), no
// figure is guessed. What a file does not state stays absent.
//
// Formats (DESIGN.md §8; each parser's source notes are in its .cc):
//   vllm-json       `vllm bench serve --save-result` / benchmark_serving.py JSON
//                   (one object per run; several objects, or one per line, are
//                   several runs)
//   vllm-console    the "Serving Benchmark Result" block the same tool prints;
//                   other lines may surround it, several blocks are several runs
//   sglang-jsonl    sglang.bench_serving's --output-file, one run per line
//   sglang-console  its "Serving Benchmark Result" block
//   guidellm-json   GuideLLM benchmarks.json (benchmarks[], one run each)
//   aiperf-json     AIPerf profile_export_aiperf.json and GenAI-Perf
//                   profile_export_genai_perf.json (one run)
//   engine-log      vLLM (V0, V1), SGLang and TensorRT-LLM start-up logs
//
// Units: capplan's. Latencies in seconds (the tools' milliseconds divided by
// 1000; AIPerf's per-metric unit converted as stated), memory in bytes (the
// engines' GiB × 2^30; vLLM's "Loading model weights took X GB" and SGLang's
// "GB" are GiB: both divide by 2^30 before printing).
//
// Latency statistics land in v1::LatencyFigures: mean → mean, median and p50
// → p50, p90, p95, p99, min, max. Every other statistic the file has (std,
// p99.9, p25, …) is kept by its own name in the row's `note`, e.g.
// "p99.9 TTFT 2.954739 s". So is a statistic of 0 (AIPerf's
// inter_chunk_latency min = 0.0 ms), and a rate or
// duration of 0: the catalogue's figures are positive.
//
// TPOT is capplan's definition: (e2e − ttft) / (output tokens − 1) per
// request, the first token excluded — vLLM's and SGLang's TPOT, and AIPerf's
// and GenAI-Perf's inter_token_latency. GuideLLM's time_per_output_token_ms
// includes the first token: TPOT is computed per request from its request
// records when the file holds all of them, otherwise left absent and the note
// says so (GuideLLM's inter_token_latency_ms is then kept as ITL).
//
// Errors: INVALID_ARGUMENT naming the file, the key (text formats: the line
// and its label), the value and the rule —
//   run.json: key "median_ttft_ms" = "abc"; must be a number
//   bench.txt:14: "Mean TTFT (ms):" = "n/a"; must be a number
// NaN, infinite and negative figures are refused with their key; a truncated
// or malformed JSON names the file, line and column; empty and binary input is
// refused; input above kMaxIngestFileBytes is OUT_OF_RANGE before any parsing.
// Parsing is linear in the input size; nothing in the bytes can crash it.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "capplan/v1/catalog.pb.h"

namespace capplan::service {

// Inputs longer than this are refused (OUT_OF_RANGE) before parsing.
inline constexpr size_t kMaxIngestFileBytes = size_t{16} << 20;
// A file with more runs than this is refused (OUT_OF_RANGE).
inline constexpr size_t kMaxIngestRunsPerFile = 10000;

enum class IngestFormat {
  kAuto,
  kVllmJson,
  kVllmConsole,
  kSglangJsonl,
  kSglangConsole,
  kGuidellmJson,
  kAiperfJson,
  kEngineLog,
};

// "auto", "vllm-json", "vllm-console", "sglang-jsonl", "sglang-console",
// "guidellm-json", "aiperf-json", "engine-log".
absl::string_view IngestFormatName(IngestFormat format);
// The inverse, for a --format flag; INVALID_ARGUMENT listing the names.
absl::StatusOr<IngestFormat> IngestFormatFromName(absl::string_view name);

// How a run loaded the server.
enum class LoadKind {
  kUnknown,     // the file states neither a concurrency nor a request rate
  kClosedLoop,  // a fixed number of requests in flight (max_concurrency, streams)
  kOpenLoop,    // arrivals at a finite request rate
  kBurst,       // all prompts sent at once: request_rate inf without a concurrency cap
};

// One measured load point, in capplan units.
struct IngestedRun {
  // Where the run is: "c8.json", "online.jsonl:3", "bench.txt:12".
  std::string source;
  LoadKind load = LoadKind::kUnknown;
  // The settings as the file states them. An open-loop run may also carry a
  // concurrency cap (vLLM and SGLang take both flags).
  std::optional<uint32_t> max_concurrency;
  std::optional<double> request_rate_rps;  // finite rates only; inf is kBurst
  std::optional<double> burstiness;        // vLLM's gamma shape; 1 = Poisson
  std::optional<uint32_t> num_prompts;
  // Per completed request, when stated or derivable from stated totals
  // (total_input_tokens / completed).
  std::optional<double> mean_input_tokens;
  std::optional<double> mean_output_tokens;
  // Mean requests in flight as the tool MEASURED it (SGLang `concurrency`,
  // GuideLLM request_concurrency, AIPerf effective_concurrency); never the
  // setting.
  std::optional<double> measured_mean_in_flight;
  std::optional<std::string> model_id;  // as the file names it
  // concurrency (closed loop), arrival_rate_rps (open loop) or
  // burst_requests (a burst: the prompts sent, num_prompts when stated, else
  // completed + failed requests), throughputs,
  // latencies in seconds, requests, failed_requests, wall_seconds,
  // output_tokens_total, label, and a note with the rest (load description,
  // tokens per request, statistics without a field, the source).
  v1::SweepRow row;
};

// A line of an engine log that a fact came from.
struct EngineLogLine {
  int line_number = 0;  // 1-based, where the log record starts
  std::string text;     // the record (wrapped lines joined), at most 1000 bytes
};

// What an engine start-up log states; each fact only when a line states it
// (ingest_engine_log.cc lists the lines and what each is read into).
struct EngineLogFacts {
  std::optional<std::string> engine;             // "vllm", "sglang", "tensorrt-llm"
  std::optional<std::string> engine_version;     // "0.10.1.1"
  std::optional<std::string> engine_generation;  // vLLM "V0" or "V1"
  std::optional<std::string> model;
  std::optional<std::string> gpu_name;
  std::optional<uint32_t> tp;
  std::optional<uint32_t> pp;
  std::optional<uint64_t> kv_pool_tokens;
  std::optional<uint64_t> weights_bytes;   // per GPU
  std::optional<uint64_t> kv_cache_bytes;  // per GPU
  std::optional<uint64_t> cuda_graph_bytes;
  std::optional<uint64_t> gpu_total_bytes;  // what the engine saw as total
  // Memory profiling, per GPU: the activation peak (torch, weights
  // excluded), memory outside torch (CUDA context, NCCL; TensorRT-LLM's
  // includes its CUDA graphs) and the whole profiled peak before the KV pool
  // (weights, activations and non-torch memory).
  std::optional<uint64_t> activation_peak_bytes;
  std::optional<uint64_t> non_torch_bytes;
  std::optional<uint64_t> profiled_peak_bytes;
  std::optional<uint64_t> gpu_blocks;
  std::optional<uint32_t> block_size;     // vLLM block / SGLang page / TRT-LLM tokens per block
  std::optional<double> max_concurrency;  // "Maximum concurrency for L tokens …: Cx"
  std::optional<uint64_t> max_concurrency_at_tokens;  // L
  std::optional<uint64_t> max_model_len;
  std::optional<uint64_t> max_num_batched_tokens;
  std::optional<uint32_t> max_num_seqs;
  std::optional<double> gpu_memory_utilization;  // vLLM
  std::optional<double> mem_fraction_static;     // SGLang
  // TensorRT-LLM free_gpu_memory_fraction / "KV Memory Percentage" as a
  // fraction, at float32 precision (0.8999999761581421 is 0.9).
  std::optional<double> kv_cache_free_gpu_memory_fraction;
  std::optional<std::string> kv_cache_dtype;  // as written: "auto", "fp8_e4m3"
  std::optional<std::string> dtype;           // as written, "torch." removed: "bfloat16", "half"
  // The engine's quantization method as written ("awq", "fp8", "FP8");
  // "None" when a config line states none.
  std::optional<std::string> quantization;
  std::optional<bool> enforce_eager;
  std::optional<bool> enable_prefix_caching;
  // vLLM's --language-model-only: the vision tower is not loaded.
  std::optional<bool> language_model_only;
  // vLLM V1 warned that it falls back to the PyTorch-native top-k/top-p
  // sampler (no FlashInfer installed).
  std::optional<bool> native_sampler;
  // SGLang: memory free when the engine started ("Load weight begin. avail
  // mem=X GB"; or the "Load weight end" line's avail mem + mem usage).
  std::optional<uint64_t> free_memory_at_start_bytes;
  // Every line a fact was read from, in file order.
  std::vector<EngineLogLine> matched_lines;
  // Same fact stated twice with different values (the last is kept: a
  // restarted engine, TensorRT-LLM's estimate pass), in words.
  std::vector<std::string> conflicts;
  // How a figure was chosen among lines that state it differently on
  // purpose (TensorRT-LLM's temporary profiling pool, its estimate, an
  // engine that stopped before allocating), in words.
  std::vector<std::string> notes;
};

// One parsed file.
struct IngestedFile {
  std::string file_name;
  IngestFormat format = IngestFormat::kAuto;  // as detected or given; never kAuto
  // The tool the format belongs to ("sglang.bench_serving", "guidellm",
  // "aiperf", "genai-perf"; vLLM's "vllm bench serve" or
  // "benchmark_serving.py" as the file's command line shows it, else
  // "vllm bench serve / benchmark_serving.py"); absent for engine logs.
  std::optional<std::string> tool;
  std::optional<std::string> tool_version;  // when the file states it
  std::optional<std::string> date;          // YYYY-MM-DD, when the file states it
  // The tool's TPOT definition, for v1::Provenance.tpot_definition.
  std::optional<std::string> tpot_definition;
  std::vector<IngestedRun> runs;             // measurement formats
  std::optional<EngineLogFacts> engine_log;  // kEngineLog
  std::vector<std::string> notes;            // file-level remarks
};

// Parses one file. `format` kAuto detects it from the content (never from the
// name). Every measurement format yields at least one run; an engine log at
// least one fact.
absl::StatusOr<IngestedFile> ParseMeasurementFile(absl::string_view file_name,
                                                  absl::string_view text,
                                                  IngestFormat format = IngestFormat::kAuto);

// The format the content looks like; INVALID_ARGUMENT naming the file when
// none fits (and for empty or binary input).
absl::StatusOr<IngestFormat> DetectIngestFormat(absl::string_view file_name,
                                                absl::string_view text);

// A benchmark's load as the user states it (read from the benchmark command)
// for files that print none: a console block without a rate or concurrency
// line, an export without its settings.
struct StatedLoad {
  std::optional<uint32_t> max_concurrency;
  std::optional<double> request_rate_rps;  // finite, > 0
  bool infinite_rate = false;              // --request-rate inf
  std::optional<uint32_t> num_prompts;
  bool empty() const {
    return !max_concurrency && !request_rate_rps && !infinite_rate && !num_prompts;
  }
};

// Applies `load` to every run of every file: a setting the run does not state
// is taken from it, the load kind and the row's load fields follow, and the
// row note says which settings were "stated by the user". INVALID_ARGUMENT
// naming the run's source (file, file:line) when the file states a different
// value for a setting the flags give:
//   c8.json: the file states max_concurrency 8; --max-concurrency 16 differs
absl::Status ApplyStatedLoad(const StatedLoad& load, absl::Span<IngestedFile> files);

struct CombineOptions {
  // Base of the sweeps' names; a suffix says the load kind.
  std::string name = "ingested";
  // Closed-loop, open-loop and burst runs never share a sweep. With this set
  // each kind present becomes its own sweep; unset, mixed input is an error
  // naming one file of each kind.
  bool split_load_kinds = true;
};

struct CombinedMeasurements {
  // At most one sweep per load kind, in the order closed loop, open loop,
  // burst; rows sorted by concurrency, rate or number of prompts. The
  // workload's token counts are set when every row of the sweep agrees
  // (within 1%), otherwise absent with the per-run values in
  // input_description / output_tokens_note.
  std::vector<v1::Sweep> sweeps;
  // benchmark_tool, date (the earliest stated), tpot_definition, notes.
  v1::Provenance provenance;
};

// Combines the runs of several files of one configuration (files without runs,
// i.e. engine logs, are skipped). INVALID_ARGUMENT naming both files when two
// runs sit at the same load point or the files name different models, and
// naming the run when it states no load.
absl::StatusOr<CombinedMeasurements> CombineMeasurements(absl::Span<const IngestedFile> files,
                                                         const CombineOptions& options = {});

// An engine log's facts as catalogue messages, each present only when the log
// states something for it; the matched raw lines, the conflicts and notes are
// in every message's note.
//
// KvPool: tokens as stated; without a token count, GPU blocks × block size
// when the log states the block size, or when vLLM's "Maximum concurrency for
// L tokens per request: C" pins it (V0 prints C = blocks × block size / L to
// two decimals: the one power-of-two block size that reproduces C is used,
// and the note shows the arithmetic); otherwise the pool has no token count
// and its note gives the blocks. MemoryAccount: weights, kv_cache,
// cuda_graph, activation_peak, non_torch, profiled_peak and capacity
// (gpu_total) bytes; a figure of 0 bytes is kept in the note only (the
// catalogue's byte fields are positive).
struct EngineLogCatalogParts {
  std::optional<v1::KvPool> kv_pool;                    // tokens, max concurrency at L
  std::optional<v1::MemoryAccount> memory_account;      // scope "per GPU"
  std::optional<v1::WeightFootprint> weight_footprint;  // scope "per GPU"
  v1::EngineConfig engine;                     // kind, version and the settings the log states
  std::optional<v1::Parallelism> parallelism;  // tp, pp when stated
  // The weights' format the log implies: its quantization method when
  // capplan models it (awq → INT4_AWQ, fp8 → FP8_PER_TENSOR, …; methods that
  // defer to the checkpoint, such as compressed-tensors, give none), else
  // its dtype (float16/half → FP16, bfloat16 → BF16, float32 → FP32) when the
  // log states no quantization method. `weight_format_source` says which.
  std::optional<v1::WeightFormat> weight_format;
  std::string weight_format_source;
  bool weight_format_from_dtype = false;
  std::vector<std::string> raw_lines;  // "line 42: …", for a baseline's other_findings
  // The conflicts, then how figures were chosen or derived (EngineLogFacts
  // notes, the pool from blocks, figures of 0 bytes): in every message's note
  // after the raw lines, and kept by a baseline beside its pointer to them.
  std::vector<std::string> remarks;
};
// stated_block_size: the KV block size the ingest was given (--block-size),
// used for a pool the log gives in blocks only when the log states no size.
EngineLogCatalogParts EngineLogToCatalog(const EngineLogFacts& facts,
                                         std::optional<uint32_t> stated_block_size = std::nullopt);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_TRANSLATE_INGEST_H_
