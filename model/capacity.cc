#include "model/capacity.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "model/perf_checks.h"

namespace capplan::model {

using perf_internal::CheckInRange;
using perf_internal::CheckNonNegative;
using perf_internal::CheckPositive;
using perf_internal::Invalid;

namespace {

constexpr double kReplicaRoundingTolerance = 1e-9;
constexpr int kMaxReplicas = 1000000;

absl::Status ValidatePeriod(const CapacityPeriod& p) {
  CAPPLAN_RETURN_IF_ERROR(CheckPositive("CapacityPeriod.days", p.days));
  CAPPLAN_RETURN_IF_ERROR(CheckInRange("CapacityPeriod.duty_factor", p.duty_factor, 0.0, 1.0));
  return absl::OkStatus();
}

MonthlyCapacity Scale(double total, double output, const CapacityPeriod& p) {
  MonthlyCapacity c;
  c.tokens_per_second_total = total;
  c.output_tokens_per_second = output;
  const double seconds = kSecondsPerDay * p.days * p.duty_factor;
  c.tokens_per_month_total = total * seconds;
  c.output_tokens_per_month = output * seconds;
  return c;
}

}  // namespace

absl::StatusOr<MonthlyCapacity> MonthlyCapacityFromRequests(double requests_per_second,
                                                            double input_tokens,
                                                            double output_tokens,
                                                            const CapacityPeriod& period) {
  CAPPLAN_RETURN_IF_ERROR(ValidatePeriod(period));
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("requests_per_second", requests_per_second));
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("input_tokens", input_tokens));
  CAPPLAN_RETURN_IF_ERROR(CheckPositive("output_tokens", output_tokens));
  return Scale(requests_per_second * (input_tokens + output_tokens),
               requests_per_second * output_tokens, period);
}

absl::StatusOr<MonthlyCapacity> MonthlyCapacityFromTokenRates(
    std::optional<double> total_tokens_per_second, double output_tokens_per_second,
    const CapacityPeriod& period) {
  CAPPLAN_RETURN_IF_ERROR(ValidatePeriod(period));
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("output_tokens_per_second", output_tokens_per_second));
  double total = output_tokens_per_second;
  if (total_tokens_per_second.has_value()) {
    CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("total_tokens_per_second", *total_tokens_per_second));
    if (*total_tokens_per_second < output_tokens_per_second) {
      return Invalid(
          "total_tokens_per_second", *total_tokens_per_second,
          absl::StrCat("must be >= output_tokens_per_second = ", output_tokens_per_second));
    }
    total = *total_tokens_per_second;
  }
  return Scale(total, output_tokens_per_second, period);
}

absl::StatusOr<int> ReplicasForTarget(double target_load, double safe_load_per_replica) {
  CAPPLAN_RETURN_IF_ERROR(CheckPositive("target_load", target_load));
  CAPPLAN_RETURN_IF_ERROR(CheckPositive("safe_load_per_replica", safe_load_per_replica));
  const double ratio = target_load / safe_load_per_replica;
  const double replicas = std::ceil(ratio * (1 - kReplicaRoundingTolerance));
  if (replicas > kMaxReplicas) {
    return Invalid("target_load", target_load,
                   absl::StrCat("needs more than ", kMaxReplicas, " replicas at safe load ",
                                safe_load_per_replica));
  }
  return std::max(1, static_cast<int>(replicas));
}

absl::StatusOr<ScalingAssessment> AssessMultiNodeScaling(int nodes, double throughput_n,
                                                         double throughput_1,
                                                         std::optional<double> ttft_p99_n_seconds,
                                                         std::optional<double> ttft_p99_1_seconds,
                                                         const ScalingThresholds& thresholds) {
  if (nodes < 2) return Invalid("nodes", nodes, "must be >= 2");
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("throughput_n", throughput_n));
  CAPPLAN_RETURN_IF_ERROR(CheckPositive("throughput_1", throughput_1));
  CAPPLAN_RETURN_IF_ERROR(
      CheckInRange("ScalingThresholds.min_efficiency", thresholds.min_efficiency, 0.0, 1.0));
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("ScalingThresholds.max_ttft_p99_degradation_fraction",
                                           thresholds.max_ttft_p99_degradation_fraction));
  ScalingAssessment a;
  a.efficiency = throughput_n / (nodes * throughput_1);
  a.efficiency_below_threshold = a.efficiency < thresholds.min_efficiency;
  if (ttft_p99_n_seconds.has_value() != ttft_p99_1_seconds.has_value()) {
    return absl::InvalidArgumentError(
        "ttft_p99_n_seconds and ttft_p99_1_seconds: give both or neither");
  }
  if (ttft_p99_n_seconds.has_value()) {
    CAPPLAN_RETURN_IF_ERROR(CheckPositive("ttft_p99_n_seconds", *ttft_p99_n_seconds));
    CAPPLAN_RETURN_IF_ERROR(CheckPositive("ttft_p99_1_seconds", *ttft_p99_1_seconds));
    a.ttft_p99_degradation_fraction =
        (*ttft_p99_n_seconds - *ttft_p99_1_seconds) / *ttft_p99_1_seconds;
    a.ttft_p99_degraded =
        *a.ttft_p99_degradation_fraction > thresholds.max_ttft_p99_degradation_fraction;
  }
  return a;
}

absl::StatusOr<KvRestoreEstimate> EstimateKvRestore(double kv_bytes, const KvTier& tier,
                                                    double link_bandwidth_bytes_per_second,
                                                    double recompute_seconds) {
  CAPPLAN_RETURN_IF_ERROR(CheckPositive("kv_bytes", kv_bytes));
  CAPPLAN_RETURN_IF_ERROR(
      CheckPositive("KvTier.bandwidth_bytes_per_second", tier.bandwidth_bytes_per_second));
  CAPPLAN_RETURN_IF_ERROR(CheckNonNegative("KvTier.latency_seconds", tier.latency_seconds));
  CAPPLAN_RETURN_IF_ERROR(
      CheckPositive("link_bandwidth_bytes_per_second", link_bandwidth_bytes_per_second));
  CAPPLAN_RETURN_IF_ERROR(CheckPositive("recompute_seconds", recompute_seconds));
  KvRestoreEstimate e;
  e.restore_seconds =
      kv_bytes / std::min(tier.bandwidth_bytes_per_second, link_bandwidth_bytes_per_second) +
      tier.latency_seconds;
  e.recompute_seconds = recompute_seconds;
  e.speedup = recompute_seconds / e.restore_seconds;
  e.restore_faster = e.restore_seconds < recompute_seconds;
  return e;
}

absl::StatusOr<double> PrefillSeconds(const PerformanceModel& model, double context_tokens) {
  CAPPLAN_RETURN_IF_ERROR(ValidatePerformanceModel(model));
  if (!std::isfinite(context_tokens) || context_tokens < 1) {
    return Invalid("context_tokens", context_tokens, "must be >= 1");
  }
  Workload w;
  w.input_tokens = context_tokens;
  w.output_tokens = 1;
  const RequestPhaseFeatures f =
      ComputeRequestPhaseFeatures(model.inputs, model.scheduler, model.speculative, w, 1);
  return StepSeconds(model.coefficients, f.prefill);
}

absl::StatusOr<double> CostPerMillionOutputTokens(double price_per_gpu_hour, int gpus,
                                                  const CapacityPeriod& period,
                                                  double output_tokens_per_month) {
  if (!(std::isfinite(price_per_gpu_hour) && price_per_gpu_hour > 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("price_per_gpu_hour = %g; must be > 0", price_per_gpu_hour));
  }
  if (gpus <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat("gpus = %d; must be > 0", gpus));
  }
  if (!(std::isfinite(output_tokens_per_month) && output_tokens_per_month > 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("output_tokens_per_month = %g; must be > 0", output_tokens_per_month));
  }
  const double gpu_hours = 24.0 * period.days * gpus;
  return price_per_gpu_hour * gpu_hours / (output_tokens_per_month / 1e6);
}

}  // namespace capplan::model
