// Synthetic deployments for the performance-model tests (not measured data:
// round numbers of plausible magnitude, chosen here).
#ifndef CAPPLAN_TESTS_MODEL_PERF_SCENARIOS_H_
#define CAPPLAN_TESTS_MODEL_PERF_SCENARIOS_H_

#include <cstdint>
#include <optional>
#include <random>

#include "model/queueing.h"
#include "model/step_time.h"

namespace capplan::model::testing {

// A dense 8B-class model on one synthetic GPU.
inline StepTimeInputs DenseInputs() {
  StepTimeInputs in;
  in.dense_weight_bytes_per_gpu = 16e9;
  in.kv_bytes_per_token_per_gpu = 131072;
  in.active_parameters_per_token_per_gpu = 8e9;
  in.attention_flops_per_token_per_context_token_per_gpu = 4 * 32 * 32 * 128;
  in.memory_bandwidth_bytes_per_second = 2e12;
  in.peak_flops_per_second = 5e14;
  return in;
}

// A 4-way TP MoE (E = 128, k = 8) on synthetic GPUs.
inline StepTimeInputs MoeInputs() {
  StepTimeInputs in;
  in.dense_weight_bytes_per_gpu = 3e9;
  in.routed_expert_weight_bytes_per_gpu = 25e9;
  in.routed_experts = 128;
  in.experts_per_token = 8;
  in.kv_bytes_per_token_per_gpu = 24576;
  in.active_parameters_per_token_per_gpu = 2.5e9;
  in.attention_flops_per_token_per_context_token_per_gpu = 4 * 48 * 16 * 128;
  in.allreduce_bytes_per_token_per_gpu = 48 * 2 * 4096 * 2 * 0.75;
  in.memory_bandwidth_bytes_per_second = 1e12;
  in.peak_flops_per_second = 2e14;
  in.link_bandwidth_bytes_per_second = 2.5e10;
  return in;
}

inline StepTimeCoefficients TypicalCoefficients() {
  StepTimeCoefficients c;
  c.alpha_seconds = 0.004;
  c.beta_weights = 1.25;
  c.beta_kv = 1.5;
  c.beta_flops = 1.8;
  c.beta_comm = 1.4;
  return c;
}

struct Scenario {
  PerformanceModel model;
  Workload workload;
  SlotLimits limits;
  std::optional<int> concurrency;
  double think_time_seconds = 0;
  std::optional<double> arrival_rate_rps;
  // Open loop: target ρ used to pick the rate.
  double target_rho = 0;
};

// A randomised scenario; the load is drawn after the server is known
// (open-loop rate = target ρ × μ(S)), so callers finish it with FinishLoad.
inline Scenario RandomScenario(uint64_t seed) {
  std::mt19937_64 gen(seed);
  auto u = [&gen](double lo, double hi) {
    return lo + (hi - lo) * (static_cast<double>(gen() >> 11) * 0x1.0p-53);
  };
  Scenario s;
  const bool moe = u(0, 1) < 0.5;
  StepTimeInputs in = moe ? MoeInputs() : DenseInputs();
  in.dense_weight_bytes_per_gpu *= u(0.5, 2.0);
  in.routed_expert_weight_bytes_per_gpu *= u(0.5, 2.0);
  in.kv_bytes_per_token_per_gpu *= u(0.5, 2.0);
  in.active_parameters_per_token_per_gpu *= u(0.5, 2.0);
  in.memory_bandwidth_bytes_per_second *= u(0.5, 2.0);
  in.peak_flops_per_second *= u(0.5, 2.0);
  s.model.inputs = in;
  StepTimeCoefficients c = TypicalCoefficients();
  c.alpha_seconds *= u(0.5, 2.0);
  c.beta_weights *= u(0.8, 1.3);
  c.beta_kv *= u(0.8, 1.3);
  c.beta_flops *= u(0.8, 1.3);
  c.beta_comm *= u(0.8, 1.3);
  s.model.coefficients = c;
  s.model.scheduler.max_batched_tokens = u(0, 1) < 0.5 ? 2048 : 8192;
  s.workload.input_tokens = std::round(u(128, 3000));
  s.workload.output_tokens = std::round(u(64, 512));
  s.workload.output_tokens_cv = u(0.1, 0.6);
  s.workload.input_tokens_cv = u(0.0, 0.5);
  s.workload.prefix_cache_hit_rate = u(0, 1) < 0.3 ? u(0.1, 0.6) : 0.0;
  const int running = static_cast<int>(u(4, 48));
  s.limits.max_running_requests = running;
  // KV pool sized between 0.7× and 2× what `running` mean requests need.
  s.limits.kv_pool_tokens =
      std::round(running * (s.workload.input_tokens + s.workload.output_tokens) * u(0.7, 2.0));
  if (u(0, 1) < 0.5) {
    s.concurrency = static_cast<int>(u(1, 2.2 * running));
    s.think_time_seconds = u(0, 1) < 0.5 ? 0.0 : u(0.5, 5.0);
  } else {
    s.target_rho = u(0.1, 0.85);
  }
  return s;
}

// A scenario of the engines' own mechanisms, on top of RandomScenario: kind 0
// a closed loop in synchronized waves (every request one fixed length, all
// users starting together, no think time); kind 1 a KV-bound run under
// vLLM's incremental allocation; kind 2 the same under SGLang's rule
// (a share of the running requests' remaining answers kept free).
inline Scenario EngineScenario(uint64_t seed) {
  Scenario s = RandomScenario(seed);
  std::mt19937_64 gen(seed ^ 0x9e3779b97f4a7c15ULL);
  auto u = [&gen](double lo, double hi) {
    return lo + (hi - lo) * (static_cast<double>(gen() >> 11) * 0x1.0p-53);
  };
  const int kind = static_cast<int>(seed % 3);
  const int running = *s.limits.max_running_requests;
  if (kind == 0) {
    s.workload.input_tokens_cv = 0;
    s.workload.output_tokens_cv = 0;
    s.workload.prefix_cache_hit_rate = 0;
    s.workload.synchronized = true;
    s.limits.kv_pool_tokens.reset();
    s.concurrency = static_cast<int>(u(2, running));
    s.think_time_seconds = 0;
    s.target_rho = 0;
    return s;
  }
  s.limits.kv_admission = kind == 1 ? KvAdmission::kIncremental : KvAdmission::kReserveRemainingShare;
  s.limits.kv_remaining_share = kind == 1 ? 0.0 : 0.098;
  // A pool that binds before the running-request limit does.
  s.limits.kv_pool_tokens = std::round(running * (s.workload.input_tokens + 0.5 * s.workload.output_tokens) *
                                       u(0.3, 0.8));
  return s;
}

}  // namespace capplan::model::testing

#endif  // CAPPLAN_TESTS_MODEL_PERF_SCENARIOS_H_
