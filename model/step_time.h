// Step-time model of one engine iteration (DESIGN §4).
//
//   T(b, p) = α + β_w · W(b+p)/BW + β_kv · KVread/BW + β_f · FLOPs/PEAK
//               + β_c · comm/LINK
//
// b decoding sequences and p prefill tokens share one iteration. The terms in
// brackets are *features* (seconds at 100% efficiency, a roofline); α and the
// β's are efficiencies fitted from measured baselines (calibration.h). Because
// T is linear in (α, β), every quantity built from step times (TTFT, TPOT,
// request life) is a feature vector dotted with the coefficients, which is
// what lets calibration turn measured rows into linear observations.
//
// All inputs are per GPU of one replica; the service derives them from the
// memory model (weights, KV bytes), the model architecture (active parameters,
// attention FLOPs) and the hardware entry (bandwidths, peak FLOP/s).
#ifndef CAPPLAN_MODEL_STEP_TIME_H_
#define CAPPLAN_MODEL_STEP_TIME_H_

#include <optional>

#include "Eigen/Core"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace capplan::model {

// What one GPU reads and computes per token, and how fast it can.
struct StepTimeInputs {
  // Weights read every step whatever the batch: attention, dense MLPs,
  // shared experts, routers, embeddings/LM head, norms (per GPU).
  double dense_weight_bytes_per_gpu = 0;
  // All routed-expert weights held by this GPU (summed over MoE layers).
  double routed_expert_weight_bytes_per_gpu = 0;
  // E routed experts per MoE layer and k experts per token; 0/0 = dense.
  int routed_experts = 0;
  int experts_per_token = 0;
  // KV cache bytes per token per GPU (all attention layers; 0 for
  // attention-free models), read once per step for every context token.
  double kv_bytes_per_token_per_gpu = 0;
  // Constant per-sequence state (linear attention / Mamba) read per step.
  double state_bytes_per_sequence_per_gpu = 0;
  // Active parameters per token handled by this GPU (≈ active / TP);
  // FLOPs = 2 · this · tokens.
  double active_parameters_per_token_per_gpu = 0;
  // Attention FLOPs per token per context token on this GPU
  // (≈ 4 · full-attention layers · heads_per_rank · head_dim).
  double attention_flops_per_token_per_context_token_per_gpu = 0;
  // Bytes this GPU sends in TP all-reduces per token (0 when TP = 1).
  double allreduce_bytes_per_token_per_gpu = 0;
  // Hardware.
  double memory_bandwidth_bytes_per_second = 0;
  double peak_flops_per_second = 0;
  // Required when allreduce_bytes_per_token_per_gpu > 0.
  std::optional<double> link_bandwidth_bytes_per_second;
};

// The composition of one iteration.
struct StepShape {
  double decode_sequences = 0;  // b
  // Tokens each decoder pushes through the step: 1, or k + 1 when a
  // speculative verification pass checks k draft tokens.
  double decode_tokens_per_sequence = 1;
  double decode_context_tokens = 0;   // mean context length of a decoder
  double prefill_tokens = 0;          // p
  double prefill_sequences = 0;       // requests with a chunk in this step
  double prefill_context_tokens = 0;  // mean attention span of a prefill token
};

// Number of features and their order in feature vectors / coefficients.
inline constexpr int kNumStepFeatures = 6;
enum StepFeatureIndex {
  kAlphaFeature = 0,    // constant: one per iteration
  kWeightsFeature = 1,  // W(b+p) / BW
  kKvFeature = 2,       // KVread / BW
  kFlopsFeature = 3,    // FLOPs / PEAK
  kCommFeature = 4,     // comm / LINK
  // One per request, outside the GPU: the time a request spends on its way
  // in and out (HTTP, tokenisation, the API server, detokenisation, a
  // confidential-computing bounce buffer). 0 in every step; 1 in a request's
  // prefill (it delays the first token) and so in its life.
  kRequestFeature = 5,
};
// "alpha", "beta_weights", "beta_kv", "beta_flops", "beta_comm",
// "request_latency".
const char* StepFeatureName(int index);

using StepFeatures = Eigen::Matrix<double, kNumStepFeatures, 1>;

// α (seconds per step) and the dimensionless β's; all >= 0.
struct StepTimeCoefficients {
  double alpha_seconds = 0;
  double beta_weights = 0;
  double beta_kv = 0;
  double beta_flops = 0;
  double beta_comm = 0;
  double request_latency_seconds = 0;

  StepFeatures AsVector() const;
  static StepTimeCoefficients FromVector(const StepFeatures& v);
  // The roofline: no fixed cost, every resource at its peak (every β = 1).
  static StepTimeCoefficients Roofline();
};

// Speculative decoding (MTP or a draft model) with k draft tokens per step
// and per-token acceptance rate a.
struct SpeculativeDecoding {
  int draft_tokens = 0;        // k >= 1
  double acceptance_rate = 0;  // a in [0, 1]
  // What one draft pass reads and computes per GPU (an MTP layer + LM head).
  double draft_weight_bytes_per_gpu = 0;
  double draft_active_parameters_per_token_per_gpu = 0;
};

// Uniform routing: distinct experts touched per MoE layer by n tokens,
// E · (1 − (1 − k/E)^n). n may be fractional (a mean batch). Requires
// 0 < k <= E and n >= 0.
double ExpertsTouched(int routed_experts, int experts_per_token, double tokens);

// Weight bytes read by one step over n tokens (n > 0): dense part plus the
// touched share of the routed experts.
double WeightBytesRead(const StepTimeInputs& inputs, double tokens);

// Expected tokens emitted per sequence per verification step:
// (1 − a^(k+1)) / (1 − a), and k + 1 when a = 1 (Leviathan et al. 2023).
double ExpectedTokensPerStep(int draft_tokens, double acceptance_rate);

absl::Status ValidateStepTimeInputs(const StepTimeInputs& inputs);
absl::Status ValidateCoefficients(const StepTimeCoefficients& c);
absl::Status ValidateSpeculative(const SpeculativeDecoding& s);
absl::Status ValidateStepShape(const StepShape& shape);

// Roofline features of one step (inputs assumed valid).
StepFeatures ComputeStepFeatures(const StepTimeInputs& inputs, const StepShape& shape);

// Features of one engine iteration: with speculative decoding every decoder
// pushes k + 1 tokens through the verification pass (decode_tokens_per_sequence
// is overwritten) and k draft passes over the decoders are added.
StepFeatures ComputeEngineStepFeatures(const StepTimeInputs& inputs,
                                       const std::optional<SpeculativeDecoding>& spec,
                                       const StepShape& shape);

// T = coefficients · features, seconds.
double StepSeconds(const StepTimeCoefficients& c, const StepFeatures& f);

// Validated one-shot evaluation of T(b, p).
absl::StatusOr<double> StepTimeSeconds(const StepTimeInputs& inputs, const StepTimeCoefficients& c,
                                       const StepShape& shape);

// ---------------------------------------------------------------------------
// Request-level view: what a request's life costs when n requests share the
// server. Used by the queueing model (as seconds) and by calibration (as
// feature vectors, to fit on).

// The benchmark tools' default number of prompts (vllm bench serve and
// sglang.bench_serving --num-prompts 1000), and the most a workload states.
inline constexpr int64_t kDefaultBenchmarkPrompts = 1000;
inline constexpr int64_t kMaxBenchmarkPrompts = 100'000'000;

// Mean request shape. Lengths in tokens; cv = coefficient of variation of the
// length (0 = every request the same), used by the queueing model and the
// simulator.
struct Workload {
  double input_tokens = 0;
  double output_tokens = 0;
  double prefix_cache_hit_rate = 0;  // share of input tokens not recomputed
  double input_tokens_cv = 0;
  double output_tokens_cv = 0;
  // A closed loop whose users start together with requests of one fixed
  // length (a benchmark's random dataset): they finish together and come back
  // together, in waves, so each wave's prefills queue behind each other.
  // False: the users' phases are spread (varied lengths, or real traffic).
  bool synchronized = false;
  // A synchronized benchmark's prompts in all (--num-prompts); with n users
  // the first n of them start as one wave.
  int64_t num_prompts = kDefaultBenchmarkPrompts;
};
absl::Status ValidateWorkload(const Workload& w);

// The engine scheduler's per-step token budget (vLLM max_num_batched_tokens,
// SGLang chunked_prefill_size), shared by decode tokens and prefill chunks.
// An overlap scheduler runs one batch ahead; a few are the most any engine
// queues.
inline constexpr int kMaxBatchesLaunchedAhead = 4;
struct SchedulerConfig {
  int max_batched_tokens = 0;
  // Batches already launched when a request is taken in (an overlap
  // scheduler: 1): a request arriving at a busy server waits for them too,
  // one decode step each, before its prefill (queueing.h AddAtoms).
  int batches_launched_ahead = 0;
  // Synchronized users come back in whole waves every round
  // (EnginePreset.waves_every_round: SGLang's prefill-first scheduler).
  bool waves_every_round = false;
};

// A complete step-time model: what the service hands to the queueing model.
struct PerformanceModel {
  StepTimeInputs inputs;
  StepTimeCoefficients coefficients;
  SchedulerConfig scheduler;
  std::optional<SpeculativeDecoding> speculative;
};
absl::Status ValidatePerformanceModel(const PerformanceModel& m);

// Features of one request's phases with n requests in service (mean-step
// approximation, see step_time.cc):
struct RequestPhaseFeatures {
  StepFeatures prefill;  // all of its prefill steps (TTFT in service)
  // What its prefill adds to those steps beyond the others' decoding: the
  // time it holds the prefill path (service time of the prefill stage).
  StepFeatures prefill_marginal;
  StepFeatures per_decode_step;  // one decode step incl. others' prefills
  StepFeatures mean_step;        // average iteration of the server
  double tokens_per_decode_step = 1;
  double prefill_steps = 0;      // ceil(input / chunk)
  double mean_decode_batch = 0;  // b̄
};
RequestPhaseFeatures ComputeRequestPhaseFeatures(const StepTimeInputs& inputs,
                                                 const SchedulerConfig& scheduler,
                                                 const std::optional<SpeculativeDecoding>& spec,
                                                 const Workload& w, double in_service);

// The same in seconds.
struct RequestPhaseTimes {
  double prefill_seconds = 0;  // TTFT without queueing or step residual
  double tpot_seconds = 0;     // per output token after the first
  double life_seconds = 0;     // prefill + (o − 1) · tpot
  double mean_step_seconds = 0;
  double mean_decode_batch = 0;
  double prefill_step_seconds = 0;  // one iteration carrying its prefill
  // The request's way in and out (part of prefill_seconds and life_seconds).
  double request_latency_seconds = 0;
  double decode_step_seconds = 0;  // one decode iteration (with stalls)
};
RequestPhaseTimes ToPhaseTimes(const RequestPhaseFeatures& f, const StepTimeCoefficients& c,
                               double output_tokens);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_STEP_TIME_H_
