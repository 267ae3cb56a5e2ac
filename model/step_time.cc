#include "model/step_time.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "model/perf_checks.h"

namespace capplan::model {

using perf_internal::CheckInRange;
using perf_internal::CheckNonNegative;
using perf_internal::CheckPositive;
using perf_internal::Invalid;

const char* StepFeatureName(int index) {
  switch (index) {
    case kAlphaFeature:
      return "alpha";
    case kWeightsFeature:
      return "beta_weights";
    case kKvFeature:
      return "beta_kv";
    case kFlopsFeature:
      return "beta_flops";
    case kCommFeature:
      return "beta_comm";
    case kRequestFeature:
      return "request_latency";
    default:
      return "unknown";
  }
}

StepFeatures StepTimeCoefficients::AsVector() const {
  StepFeatures v;
  v << alpha_seconds, beta_weights, beta_kv, beta_flops, beta_comm, request_latency_seconds;
  return v;
}

StepTimeCoefficients StepTimeCoefficients::Roofline() {
  StepTimeCoefficients c;
  c.beta_weights = c.beta_kv = c.beta_flops = c.beta_comm = 1;
  return c;
}

StepTimeCoefficients StepTimeCoefficients::FromVector(const StepFeatures& v) {
  return StepTimeCoefficients{v(kAlphaFeature), v(kWeightsFeature), v(kKvFeature),
                              v(kFlopsFeature), v(kCommFeature),    v(kRequestFeature)};
}

double ExpertsTouched(int routed_experts, int experts_per_token, double tokens) {
  if (routed_experts <= 0 || experts_per_token <= 0 || tokens <= 0) return 0;
  const double e = routed_experts;
  const double miss = 1.0 - static_cast<double>(experts_per_token) / e;
  // log1p keeps precision when k/E is small.
  return e * -std::expm1(tokens * std::log1p(-(1.0 - miss)));
}

double WeightBytesRead(const StepTimeInputs& in, double tokens) {
  if (tokens <= 0) return 0;
  double bytes = in.dense_weight_bytes_per_gpu;
  if (in.routed_experts > 0) {
    bytes += in.routed_expert_weight_bytes_per_gpu *
             ExpertsTouched(in.routed_experts, in.experts_per_token, tokens) / in.routed_experts;
  }
  return bytes;
}

double ExpectedTokensPerStep(int draft_tokens, double acceptance_rate) {
  const int k = std::max(0, draft_tokens);
  const double a = std::clamp(acceptance_rate, 0.0, 1.0);
  if (a >= 1.0) return k + 1.0;
  return (1.0 - std::pow(a, k + 1)) / (1.0 - a);
}

absl::Status ValidateStepTimeInputs(const StepTimeInputs& in) {
  CAPPLAN_RETURN_IF_ERROR(
      CheckNonNegative("StepTimeInputs.dense_weight_bytes_per_gpu", in.dense_weight_bytes_per_gpu));
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("StepTimeInputs.routed_expert_weight_bytes_per_gpu",
                                           in.routed_expert_weight_bytes_per_gpu));
  if (in.dense_weight_bytes_per_gpu + in.routed_expert_weight_bytes_per_gpu <= 0) {
    return Invalid("StepTimeInputs.dense_weight_bytes_per_gpu", in.dense_weight_bytes_per_gpu,
                   "dense plus routed-expert weight bytes must be > 0");
  }
  if (in.routed_experts < 0) {
    return Invalid("StepTimeInputs.routed_experts", in.routed_experts, "must be >= 0");
  }
  if (in.routed_experts > 0) {
    if (in.experts_per_token < 1 || in.experts_per_token > in.routed_experts) {
      return Invalid("StepTimeInputs.experts_per_token", in.experts_per_token,
                     absl::StrCat("must be in [1, routed_experts = ", in.routed_experts, "]"));
    }
  } else {
    if (in.experts_per_token != 0) {
      return Invalid("StepTimeInputs.experts_per_token", in.experts_per_token,
                     "must be 0 when routed_experts = 0 (dense model)");
    }
    if (in.routed_expert_weight_bytes_per_gpu != 0) {
      return Invalid("StepTimeInputs.routed_expert_weight_bytes_per_gpu",
                     in.routed_expert_weight_bytes_per_gpu,
                     "must be 0 when routed_experts = 0 (dense model)");
    }
  }
  CAPPLAN_RETURN_IF_ERROR(
      CheckNonNegative("StepTimeInputs.kv_bytes_per_token_per_gpu", in.kv_bytes_per_token_per_gpu));
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("StepTimeInputs.state_bytes_per_sequence_per_gpu",
                                           in.state_bytes_per_sequence_per_gpu));
  CAPPLAN_RETURN_IF_ERROR(CheckPositive("StepTimeInputs.active_parameters_per_token_per_gpu",
                                        in.active_parameters_per_token_per_gpu));
  CAPPLAN_RETURN_IF_ERROR(
      CheckNonNegative("StepTimeInputs.attention_flops_per_token_per_context_token_per_gpu",
                       in.attention_flops_per_token_per_context_token_per_gpu));
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("StepTimeInputs.allreduce_bytes_per_token_per_gpu",
                                           in.allreduce_bytes_per_token_per_gpu));
  CAPPLAN_RETURN_IF_ERROR(CheckPositive("StepTimeInputs.memory_bandwidth_bytes_per_second",
                                        in.memory_bandwidth_bytes_per_second));
  CAPPLAN_RETURN_IF_ERROR(
      CheckPositive("StepTimeInputs.peak_flops_per_second", in.peak_flops_per_second));
  if (in.allreduce_bytes_per_token_per_gpu > 0) {
    if (!in.link_bandwidth_bytes_per_second.has_value()) {
      return absl::InvalidArgumentError(
          "StepTimeInputs.link_bandwidth_bytes_per_second is absent; required "
          "when allreduce_bytes_per_token_per_gpu > 0");
    }
  }
  if (in.link_bandwidth_bytes_per_second.has_value()) {
    CAPPLAN_RETURN_IF_ERROR(CheckPositive("StepTimeInputs.link_bandwidth_bytes_per_second",
                                          *in.link_bandwidth_bytes_per_second));
  }
  return absl::OkStatus();
}

absl::Status ValidateCoefficients(const StepTimeCoefficients& c) {
  const StepFeatures v = c.AsVector();
  for (int i = 0; i < kNumStepFeatures; ++i) {
    CAPPLAN_RETURN_IF_ERROR(
        CheckNonNegative(absl::StrCat("StepTimeCoefficients.", StepFeatureName(i)), v(i)));
  }
  if (!(v.sum() > 0)) {
    return Invalid("StepTimeCoefficients.alpha", v(0), "at least one coefficient must be > 0");
  }
  return absl::OkStatus();
}

absl::Status ValidateSpeculative(const SpeculativeDecoding& s) {
  if (s.draft_tokens < 1 || s.draft_tokens > 64) {
    return Invalid("SpeculativeDecoding.draft_tokens", s.draft_tokens, "must be in [1, 64]");
  }
  CAPPLAN_RETURN_IF_ERROR(
      CheckInRange("SpeculativeDecoding.acceptance_rate", s.acceptance_rate, 0.0, 1.0));
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("SpeculativeDecoding.draft_weight_bytes_per_gpu",
                                           s.draft_weight_bytes_per_gpu));
  CAPPLAN_RETURN_IF_ERROR(
      CheckNonNegative("SpeculativeDecoding.draft_active_parameters_per_token_per_gpu",
                       s.draft_active_parameters_per_token_per_gpu));
  return absl::OkStatus();
}

absl::Status ValidateStepShape(const StepShape& s) {
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("StepShape.decode_sequences", s.decode_sequences));
  CAPPLAN_RETURN_IF_ERROR(
      CheckPositive("StepShape.decode_tokens_per_sequence", s.decode_tokens_per_sequence));
  CAPPLAN_RETURN_IF_ERROR(
      CheckNonNegative("StepShape.decode_context_tokens", s.decode_context_tokens));
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("StepShape.prefill_tokens", s.prefill_tokens));
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("StepShape.prefill_sequences", s.prefill_sequences));
  CAPPLAN_RETURN_IF_ERROR(
      CheckNonNegative("StepShape.prefill_context_tokens", s.prefill_context_tokens));
  if (s.decode_sequences + s.prefill_tokens <= 0) {
    return Invalid("StepShape.decode_sequences", s.decode_sequences,
                   "a step needs decode sequences or prefill tokens");
  }
  return absl::OkStatus();
}

StepFeatures ComputeStepFeatures(const StepTimeInputs& in, const StepShape& s) {
  const double decode_tokens = s.decode_sequences * s.decode_tokens_per_sequence;
  const double tokens = decode_tokens + s.prefill_tokens;
  StepFeatures f = StepFeatures::Zero();
  if (tokens <= 0) return f;
  f(kAlphaFeature) = 1.0;
  f(kWeightsFeature) = WeightBytesRead(in, tokens) / in.memory_bandwidth_bytes_per_second;
  const double kv_tokens_read =
      s.decode_sequences * s.decode_context_tokens + s.prefill_sequences * s.prefill_context_tokens;
  const double kv_bytes =
      in.kv_bytes_per_token_per_gpu * kv_tokens_read +
      in.state_bytes_per_sequence_per_gpu * (s.decode_sequences + s.prefill_sequences);
  f(kKvFeature) = kv_bytes / in.memory_bandwidth_bytes_per_second;
  const double flops =
      2.0 * in.active_parameters_per_token_per_gpu * tokens +
      in.attention_flops_per_token_per_context_token_per_gpu *
          (decode_tokens * s.decode_context_tokens + s.prefill_tokens * s.prefill_context_tokens);
  f(kFlopsFeature) = flops / in.peak_flops_per_second;
  if (in.allreduce_bytes_per_token_per_gpu > 0 && in.link_bandwidth_bytes_per_second.has_value()) {
    f(kCommFeature) =
        in.allreduce_bytes_per_token_per_gpu * tokens / *in.link_bandwidth_bytes_per_second;
  }
  return f;
}

namespace {

// One draft pass over b sequences: a small dense model, no α of its own
// (it runs inside the same engine iteration).
StepFeatures DraftPassFeatures(const StepTimeInputs& in, const SpeculativeDecoding& spec,
                               double b) {
  StepFeatures f = StepFeatures::Zero();
  if (b <= 0) return f;
  f(kWeightsFeature) = spec.draft_weight_bytes_per_gpu / in.memory_bandwidth_bytes_per_second;
  f(kFlopsFeature) =
      2.0 * spec.draft_active_parameters_per_token_per_gpu * b / in.peak_flops_per_second;
  return f;
}

// A step with b decoders (speculative or not) and a prefill chunk of p tokens
// from `seqs` sequences.
StepFeatures MixedStep(const StepTimeInputs& in, const std::optional<SpeculativeDecoding>& spec,
                       double b, double decode_ctx, double p, double seqs, double prefill_ctx) {
  StepShape shape;
  shape.decode_sequences = b;
  shape.decode_context_tokens = decode_ctx;
  shape.prefill_tokens = p;
  shape.prefill_sequences = p > 0 ? seqs : 0;
  shape.prefill_context_tokens = prefill_ctx;
  return ComputeEngineStepFeatures(in, spec, shape);
}

}  // namespace

StepFeatures ComputeEngineStepFeatures(const StepTimeInputs& in,
                                       const std::optional<SpeculativeDecoding>& spec,
                                       const StepShape& shape) {
  StepShape s = shape;
  s.decode_tokens_per_sequence = spec.has_value() ? spec->draft_tokens + 1 : 1;
  StepFeatures f = ComputeStepFeatures(in, s);
  if (spec.has_value()) {
    f += spec->draft_tokens * DraftPassFeatures(in, *spec, s.decode_sequences);
  }
  return f;
}

double StepSeconds(const StepTimeCoefficients& c, const StepFeatures& f) {
  return c.AsVector().dot(f);
}

absl::StatusOr<double> StepTimeSeconds(const StepTimeInputs& inputs, const StepTimeCoefficients& c,
                                       const StepShape& shape) {
  CAPPLAN_RETURN_IF_ERROR(ValidateStepTimeInputs(inputs));
  CAPPLAN_RETURN_IF_ERROR(ValidateCoefficients(c));
  CAPPLAN_RETURN_IF_ERROR(ValidateStepShape(shape));
  return StepSeconds(c, ComputeStepFeatures(inputs, shape));
}

absl::Status ValidateWorkload(const Workload& w) {
  if (!std::isfinite(w.input_tokens) || w.input_tokens < 1) {
    return Invalid("Workload.input_tokens", w.input_tokens, "must be >= 1");
  }
  if (!std::isfinite(w.output_tokens) || w.output_tokens < 1) {
    return Invalid("Workload.output_tokens", w.output_tokens, "must be >= 1");
  }
  CAPPLAN_RETURN_IF_ERROR(
      CheckInRange("Workload.prefix_cache_hit_rate", w.prefix_cache_hit_rate, 0.0, 1.0));
  CAPPLAN_RETURN_IF_ERROR(CheckInRange("Workload.input_tokens_cv", w.input_tokens_cv, 0.0, 4.0));
  CAPPLAN_RETURN_IF_ERROR(CheckInRange("Workload.output_tokens_cv", w.output_tokens_cv, 0.0, 4.0));
  if (w.num_prompts < 1 || w.num_prompts > kMaxBenchmarkPrompts) {
    return Invalid("Workload.num_prompts", w.num_prompts,
                   absl::StrCat("must be in [1, ", kMaxBenchmarkPrompts, "]"));
  }
  return absl::OkStatus();
}

absl::Status ValidatePerformanceModel(const PerformanceModel& m) {
  CAPPLAN_RETURN_IF_ERROR(ValidateStepTimeInputs(m.inputs));
  CAPPLAN_RETURN_IF_ERROR(ValidateCoefficients(m.coefficients));
  if (m.scheduler.batches_launched_ahead < 0 ||
      m.scheduler.batches_launched_ahead > kMaxBatchesLaunchedAhead) {
    return Invalid("SchedulerConfig.batches_launched_ahead", m.scheduler.batches_launched_ahead,
                   absl::StrCat("must be in [0, ", kMaxBatchesLaunchedAhead, "]"));
  }
  if (m.scheduler.max_batched_tokens < 1) {
    return Invalid("SchedulerConfig.max_batched_tokens", m.scheduler.max_batched_tokens,
                   "must be >= 1");
  }
  if (m.speculative.has_value()) {
    CAPPLAN_RETURN_IF_ERROR(ValidateSpeculative(*m.speculative));
  }
  return absl::OkStatus();
}

// Mean-step approximation with n requests in service. Each request spends
// s_p = ceil(I_eff / chunk) iterations in prefill and d = (o − 1) / τ in
// decode (τ = tokens per decode step), so on average b̄ = n·d / (d + s_p)
// sequences decode, and a share q = min(1, n·s_p / (d + s_p)) of iterations
// carries a prefill chunk. A request's own prefill shares its iterations with
// the other decoders; its decode iterations (1 + the others decoding) carry
// the others' prefill chunks (the stalls). Only W(n) is non-linear, so the step mix is kept as two
// kinds of iteration rather than one average.
RequestPhaseFeatures ComputeRequestPhaseFeatures(const StepTimeInputs& in,
                                                 const SchedulerConfig& scheduler,
                                                 const std::optional<SpeculativeDecoding>& spec,
                                                 const Workload& w, double in_service) {
  RequestPhaseFeatures r;
  const double n = std::max(1.0, in_service);
  const double tau =
      spec.has_value() ? ExpectedTokensPerStep(spec->draft_tokens, spec->acceptance_rate) : 1.0;
  const double tokens_per_decoder = spec.has_value() ? spec->draft_tokens + 1 : 1;
  const double input_eff = std::max(1.0, w.input_tokens * (1.0 - w.prefix_cache_hit_rate));
  const double d = std::max(0.0, w.output_tokens - 1.0) / tau;
  const double chunk_budget =
      std::max(1.0, scheduler.max_batched_tokens - (n - 1.0) * tokens_per_decoder);
  const double s_p = std::ceil(input_eff / chunk_budget);
  const double life_steps = d + s_p;
  const double b_all = n * d / life_steps;
  const double b_others = (n - 1.0) * d / life_steps;
  const double chunk = input_eff / s_p;
  const double decode_ctx = w.input_tokens + 0.5 * w.output_tokens;
  const double prefill_ctx = w.input_tokens * w.prefix_cache_hit_rate + 0.5 * input_eff;

  // Own prefill: s_p iterations with the others' decoders.
  r.prefill = s_p * MixedStep(in, spec, b_others, decode_ctx, chunk, 1.0, prefill_ctx);
  r.prefill_marginal = r.prefill - s_p * MixedStep(in, spec, b_others, decode_ctx, 0, 0, 0);
  // The request's way in and out delays its first token, not the GPU.
  r.prefill(kRequestFeature) = 1.0;
  // Own decode: iterations of b̄ decoders, a share q_o of them carrying the
  // other requests' prefill tokens.
  const double others_prefill_tokens_per_step = (n - 1.0) * input_eff / life_steps;
  const double q_o = std::min(1.0, (n - 1.0) * s_p / life_steps);
  // Own decode iterations: itself plus the others that are decoding.
  const double b_own = 1.0 + b_others;
  StepFeatures decode = MixedStep(in, spec, b_own, decode_ctx, 0, 0, 0);
  if (q_o > 0) {
    const double p = others_prefill_tokens_per_step / q_o;
    decode = q_o * MixedStep(in, spec, b_own, decode_ctx, p, p / chunk, prefill_ctx) +
             (1.0 - q_o) * decode;
  }
  r.per_decode_step = decode;
  // Server-wide mean iteration.
  const double q = std::min(1.0, n * s_p / life_steps);
  const double p_all = n * input_eff / life_steps / q;
  r.mean_step = q * MixedStep(in, spec, b_all, decode_ctx, p_all, p_all / chunk, prefill_ctx) +
                (1.0 - q) * MixedStep(in, spec, b_all, decode_ctx, 0, 0, 0);
  r.tokens_per_decode_step = tau;
  r.prefill_steps = s_p;
  r.mean_decode_batch = b_all;
  return r;
}

RequestPhaseTimes ToPhaseTimes(const RequestPhaseFeatures& f, const StepTimeCoefficients& c,
                               double output_tokens) {
  RequestPhaseTimes t;
  t.prefill_seconds = StepSeconds(c, f.prefill);
  const double decode_step = StepSeconds(c, f.per_decode_step);
  t.tpot_seconds = decode_step / f.tokens_per_decode_step;
  t.life_seconds = t.prefill_seconds + std::max(0.0, output_tokens - 1.0) * t.tpot_seconds;
  t.mean_step_seconds = StepSeconds(c, f.mean_step);
  t.mean_decode_batch = f.mean_decode_batch;
  t.request_latency_seconds = c.request_latency_seconds * f.prefill(kRequestFeature);
  t.prefill_step_seconds =
      (t.prefill_seconds - t.request_latency_seconds) / std::max(1.0, f.prefill_steps);
  t.decode_step_seconds = decode_step;
  return t;
}

}  // namespace capplan::model
