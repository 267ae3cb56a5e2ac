#include "model/search.h"

#include <algorithm>
#include <numeric>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace capplan::model {
namespace {

RequestPhaseTimes RooflinePhase(const PerformanceModel& m, const Workload& w, int n) {
  const RequestPhaseFeatures f =
      ComputeRequestPhaseFeatures(m.inputs, m.scheduler, m.speculative, w, n);
  return ToPhaseTimes(f, StepTimeCoefficients::Roofline(), w.output_tokens);
}

}  // namespace

absl::StatusOr<RooflineBounds> ComputeRooflineBounds(const PerformanceModel& model,
                                                     const Workload& workload, int slots,
                                                     std::optional<double> ttft_slo_seconds,
                                                     std::optional<double> tpot_slo_seconds) {
  if (slots < 1) {
    return absl::InvalidArgumentError(absl::StrFormat("slots = %d; must be >= 1", slots));
  }
  PerformanceModel m = model;
  m.coefficients = StepTimeCoefficients::Roofline();
  CAPPLAN_RETURN_IF_ERROR(ValidatePerformanceModel(m));
  CAPPLAN_RETURN_IF_ERROR(ValidateWorkload(workload));
  RooflineBounds b;
  const RequestPhaseTimes one = RooflinePhase(m, workload, 1);
  b.tpot_lower_seconds = one.tpot_seconds;
  b.ttft_lower_seconds = one.prefill_seconds;
  b.slo_missed = (ttft_slo_seconds.has_value() && b.ttft_lower_seconds > *ttft_slo_seconds) ||
                 (tpot_slo_seconds.has_value() && b.tpot_lower_seconds > *tpot_slo_seconds);
  if (b.slo_missed) return b;
  int users = slots;
  if (tpot_slo_seconds.has_value() &&
      RooflinePhase(m, workload, slots).tpot_seconds > *tpot_slo_seconds) {
    // Largest n in [1, S) whose roofline TPOT still meets the SLO.
    int lo = 1, hi = slots;  // tpot(lo) <= slo < tpot(hi)
    while (hi - lo > 1) {
      const int mid = lo + (hi - lo) / 2;
      if (RooflinePhase(m, workload, mid).tpot_seconds <= *tpot_slo_seconds) {
        lo = mid;
      } else {
        hi = mid;
      }
    }
    users = lo;
  }
  b.max_users = users;
  const RequestPhaseTimes at = RooflinePhase(m, workload, users);
  b.max_requests_per_second = at.life_seconds > 0 ? users / at.life_seconds : 0;
  b.max_output_tokens_per_second = b.max_requests_per_second * workload.output_tokens;
  return b;
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
