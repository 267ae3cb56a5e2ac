// Consistency checks of measured baselines (DESIGN §2): what a set of
// measured figures must satisfy if they describe one steady-state run, from
// Little's law and the definitions of the figures. The checks report; they
// never change data. Inputs are plain figures with the caller's field path;
// the thresholds are named options.
#ifndef CAPPLAN_MODEL_LINT_H_
#define CAPPLAN_MODEL_LINT_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"

namespace capplan::model {

enum class LintCode {
  kLittleLaw,          // in flight (req/s × e2e) differs from the stated concurrency
  kToksVsReqs,         // output tok/s differs from req/s × output tokens per request
  kTtftAboveE2e,       // the first token after the whole response
  kNonMonotone,        // throughput falls while TTFT stays flat
  kMemorySum,          // the memory account does not add up or exceeds the card
  kKvTokensVsBytes,    // pool tokens × bytes per token differ from the KV bytes
  kOutlierRow,         // a row the others contradict (per-user speed rising with load)
  kMissingProvenance,  // no source, or a repository URL not pinned to a commit
  kUnitSuspect,        // a figure off by a unit factor (ms written as s)
};
// "LITTLE_LAW", "TOKS_VS_REQS", ...
const char* LintCodeName(LintCode code);
inline constexpr LintCode kLintCodes[] = {
    LintCode::kLittleLaw,   LintCode::kToksVsReqs,        LintCode::kTtftAboveE2e,
    LintCode::kNonMonotone, LintCode::kMemorySum,         LintCode::kKvTokensVsBytes,
    LintCode::kOutlierRow,  LintCode::kMissingProvenance, LintCode::kUnitSuspect};

enum class LintSeverity {
  kWarning,  // the figures disagree; a planner using them should know
  kError,    // the figures cannot describe a real run (refused at ingest)
};

struct LintFinding {
  LintCode code = LintCode::kLittleLaw;
  LintSeverity severity = LintSeverity::kWarning;
  std::string field_path;  // the caller's path of the offending figure
  std::string message;     // what disagrees, with both figures
  double measured = 0;     // the figure as stated
  double expected = 0;     // what the other figures imply
};

// One measured load point.
struct LintRow {
  std::string path;                        // e.g. "sweeps[0].rows[4]"
  std::optional<double> concurrency;       // closed-loop setting
  std::optional<double> arrival_rate_rps;  // open-loop setting
  std::optional<double> requests_per_second;
  std::optional<double> output_tokens_per_second;
  std::optional<double> per_user_output_tokens_per_second;
  // Mean output tokens per request as the workload states it (not derived).
  std::optional<double> output_tokens_per_request;
  // The same statistic for both (median with median, mean with mean).
  std::optional<double> ttft_seconds;
  std::optional<double> e2e_seconds;
  // Mean requests in flight as the tool measured it (SGLang's concurrency).
  std::optional<double> measured_in_flight;
};

struct LintOptions {
  // |req/s × e2e ÷ concurrency − 1| above this is LITTLE_LAW.
  double little_law_tolerance = 0.25;
  // |output tok/s ÷ (req/s × output tokens) − 1| above this is TOKS_VS_REQS.
  double tokens_tolerance = 0.15;
  // A fall of throughput by more than this share between neighbouring
  // closed-loop rows, while TTFT rises by less than ttft_flat_ratio, is
  // NON_MONOTONE.
  double throughput_fall_share = 0.10;
  double ttft_flat_ratio = 1.5;
  // Per-user speed rising by more than this share with concurrency is an
  // OUTLIER_ROW.
  double per_user_rise_share = 0.10;
  // A latency above this multiple of what Little's law allows (concurrency ÷
  // req/s) is UNIT_SUSPECT.
  double unit_factor = 50;
  // |tokens × bytes per token ÷ KV bytes − 1| above this is KV_TOKENS_VS_BYTES.
  double kv_bytes_tolerance = 0.25;
  // Shards summing to less than this share of the whole model is MEMORY_SUM.
  double shard_sum_share = 0.9;
};

// The checks on one sweep (rows in any order; closed-loop rows are compared
// in order of concurrency) or on single rows (sustained runs).
std::vector<LintFinding> LintRows(absl::Span<const LintRow> rows, bool closed_loop,
                                  const LintOptions& options = {});

// One per-GPU memory account.
struct LintMemoryAccount {
  std::string path;
  std::optional<double> used_bytes;
  std::optional<double> capacity_bytes;
  // The parts the source lists (weights, activations, graphs, KV, ...).
  std::vector<double> part_bytes;
};
std::vector<LintFinding> LintMemory(const LintMemoryAccount& account,
                                    const LintOptions& options = {});

// Per-GPU weight shards against the whole model's weights.
std::vector<LintFinding> LintShards(const std::string& path, double per_gpu_bytes, int gpus,
                                    double whole_model_bytes, const LintOptions& options = {});

// A KV pool's tokens against the KV bytes an account states, with the
// model's KV bytes per token per GPU.
std::vector<LintFinding> LintKvPool(const std::string& path, double pool_tokens, double kv_bytes,
                                    double kv_bytes_per_token, const LintOptions& options = {});

// The source of a baseline: present, and a GitHub file URL pinned to a
// 40-hex commit (a blob/tree URL on a branch name can change under it).
std::vector<LintFinding> LintSource(const std::string& path, const std::string& source_document);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_LINT_H_
