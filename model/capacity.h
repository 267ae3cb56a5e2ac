// Capacity, sizing, multi-node scaling and KV tiers (DESIGN §5).
#ifndef CAPPLAN_MODEL_CAPACITY_H_
#define CAPPLAN_MODEL_CAPACITY_H_

#include <optional>

#include "absl/status/statusor.h"
#include "model/step_time.h"

namespace capplan::model {

inline constexpr double kSecondsPerDay = 86400.0;

// The period a capacity figure covers. The source reports use a 30-day
// month; duty_factor is the share of the period at this load.
struct CapacityPeriod {
  double days = 30.0;
  double duty_factor = 1.0;
};

struct MonthlyCapacity {
  double tokens_per_second_total = 0;  // input + output
  double output_tokens_per_second = 0;
  double tokens_per_month_total = 0;  // × 86,400 × days × duty
  double output_tokens_per_month = 0;
};

// From an operating point's request rate and mean request shape:
// tokens/s = req/s × (input + output).
absl::StatusOr<MonthlyCapacity> MonthlyCapacityFromRequests(double requests_per_second,
                                                            double input_tokens,
                                                            double output_tokens,
                                                            const CapacityPeriod& period = {});

// From measured token rates (e.g. a sustained run's output tok/s).
// total_tokens_per_second may be absent (only output figures are then
// meaningful; the total is reported as the output rate's).
absl::StatusOr<MonthlyCapacity> MonthlyCapacityFromTokenRates(
    std::optional<double> total_tokens_per_second, double output_tokens_per_second,
    const CapacityPeriod& period = {});

// Replicas for a target load: ceil(target ÷ safe load per replica), never a
// division of peak throughput. Targets within 1e-9 relative of a multiple do
// not round up.
absl::StatusOr<int> ReplicasForTarget(double target_load, double safe_load_per_replica);

// Cost of a million output tokens when `gpus` GPUs are paid for around the
// clock over the period (24 h × days) and serve `output_tokens_per_month`
// (which already carries the duty factor).
absl::StatusOr<double> CostPerMillionOutputTokens(double price_per_gpu_hour, int gpus,
                                                  const CapacityPeriod& period,
                                                  double output_tokens_per_month);

// The third report's multi-node method; thresholds come from data.
struct ScalingThresholds {
  double min_efficiency = 0;                     // e.g. MultiNodeMethod
  double max_ttft_p99_degradation_fraction = 0;  // e.g. 0.30
};

struct ScalingAssessment {
  double efficiency = 0;  // X_N ÷ (N × X_1)
  bool efficiency_below_threshold = false;
  // (p99_N − p99_1) ÷ p99_1 when both are given.
  std::optional<double> ttft_p99_degradation_fraction;
  bool ttft_p99_degraded = false;
};

absl::StatusOr<ScalingAssessment> AssessMultiNodeScaling(int nodes, double throughput_n,
                                                         double throughput_1,
                                                         std::optional<double> ttft_p99_n_seconds,
                                                         std::optional<double> ttft_p99_1_seconds,
                                                         const ScalingThresholds& thresholds);

// A KV-cache tier (host DRAM, local NVMe, NVMe-oF...).
struct KvTier {
  double bandwidth_bytes_per_second = 0;
  double latency_seconds = 0;
};

struct KvRestoreEstimate {
  double restore_seconds = 0;    // bytes ÷ min(tier bw, link bw) + latency
  double recompute_seconds = 0;  // prefill of the same context
  double speedup = 0;            // recompute ÷ restore
  bool restore_faster = false;
};

// kv_bytes is the context's KV on the path being restored (per GPU, or per
// replica with the matching bandwidths); link_bandwidth is the path from the
// tier to the GPU (PCIe, NIC); recompute_seconds from PrefillSeconds.
absl::StatusOr<KvRestoreEstimate> EstimateKvRestore(double kv_bytes, const KvTier& tier,
                                                    double link_bandwidth_bytes_per_second,
                                                    double recompute_seconds);

// Time to prefill `context_tokens` for one request on an idle server (the
// recompute alternative to a restore, and a long-context single request's
// TTFT).
absl::StatusOr<double> PrefillSeconds(const PerformanceModel& model, double context_tokens);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_CAPACITY_H_
