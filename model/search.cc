#include "model/search.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace capplan::model {
namespace {

RequestPhaseTimes Phase(const PerformanceModel& m, const Workload& w, int n) {
  const RequestPhaseFeatures f =
      ComputeRequestPhaseFeatures(m.inputs, m.scheduler, m.speculative, w, n);
  return ToPhaseTimes(f, m.coefficients, w.output_tokens);
}

// Largest n in [1, slots] with value(n) <= limit, value increasing in n;
// value(1) <= limit.
template <typename Value>
int LargestWithin(int slots, double limit, Value value) {
  if (value(slots) <= limit) return slots;
  int lo = 1, hi = slots;  // value(lo) <= limit < value(hi)
  while (hi - lo > 1) {
    const int mid = lo + (hi - lo) / 2;
    if (value(mid) <= limit) {
      lo = mid;
    } else {
      hi = mid;
    }
  }
  return lo;
}

absl::StatusOr<RooflineBounds> Bounds(const PerformanceModel& m, const Workload& workload,
                                      int slots, std::optional<double> ttft_slo,
                                      std::optional<double> tpot_slo, bool cap_by_ttft) {
  if (slots < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("slots = %d; must be >= 1", slots));
  }
  CAPPLAN_RETURN_IF_ERROR(ValidatePerformanceModel(m));
  CAPPLAN_RETURN_IF_ERROR(ValidateWorkload(workload));
  RooflineBounds b;
  const RequestPhaseTimes one = Phase(m, workload, 1);
  b.tpot_lower_seconds = one.tpot_seconds;
  b.ttft_lower_seconds = one.prefill_seconds;
  b.user_tokens_per_second_at_max_users = 1.0 / one.tpot_seconds;
  b.slo_missed = (ttft_slo.has_value() && b.ttft_lower_seconds > *ttft_slo) ||
                 (tpot_slo.has_value() && b.tpot_lower_seconds > *tpot_slo);
  if (b.slo_missed) return b;
  int users = slots;
  if (tpot_slo.has_value()) {
    users =
        LargestWithin(users, *tpot_slo, [&](int n) { return Phase(m, workload, n).tpot_seconds; });
  }
  if (cap_by_ttft && ttft_slo.has_value()) {
    users = LargestWithin(users, *ttft_slo,
                          [&](int n) { return Phase(m, workload, n).prefill_seconds; });
  }
  b.max_users = users;
  const RequestPhaseTimes at = Phase(m, workload, users);
  b.max_requests_per_second = at.life_seconds > 0 ? users / at.life_seconds : 0;
  b.max_output_tokens_per_second = b.max_requests_per_second * workload.output_tokens;
  if (cap_by_ttft) b.user_tokens_per_second_at_max_users = 1.0 / at.tpot_seconds;
  return b;
}

}  // namespace

absl::StatusOr<RooflineBounds> ComputeRooflineBounds(const PerformanceModel& model,
                                                     const Workload& workload, int slots,
                                                     std::optional<double> ttft_slo_seconds,
                                                     std::optional<double> tpot_slo_seconds) {
  PerformanceModel m = model;
  m.coefficients = StepTimeCoefficients::Roofline();
  return Bounds(m, workload, slots, ttft_slo_seconds, tpot_slo_seconds, false);
}

absl::StatusOr<RooflineBounds> ComputeModelBounds(const PerformanceModel& model,
                                                  const Workload& workload, int slots,
                                                  std::optional<double> ttft_slo_seconds,
                                                  std::optional<double> tpot_slo_seconds) {
  return Bounds(model, workload, slots, ttft_slo_seconds, tpot_slo_seconds, true);
}

std::vector<int> ParetoFront(const std::vector<FrontPoint>& points) {
  std::vector<int> order(points.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    if (points[a].lower != points[b].lower) return points[a].lower < points[b].lower;
    return points[a].higher > points[b].higher;
  });
  std::vector<int> front;
  for (int i : order) {
    // Sorted by lower: i joins when it beats every kept point on `higher`.
    if (front.empty() || points[i].higher > points[front.back()].higher) front.push_back(i);
  }
  return front;
}

bool Dominated(const std::vector<FrontPoint>& front, const FrontPoint& bound) {
  return std::any_of(front.begin(), front.end(), [&](const FrontPoint& p) {
    return p.lower <= bound.lower && p.higher >= bound.higher;
  });
}

}  // namespace capplan::model
