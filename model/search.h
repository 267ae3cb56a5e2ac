// The maths of a configuration search (DESIGN §5 "Search"): roofline bounds
// a candidate cannot beat, and Pareto fronts.
//
// Bounds. With every efficiency at its peak (the roofline: α = 0, every
// β = 1, no per-request latency) a step cannot be faster than it is here,
// and the calibrated model never is (its coefficients are floored at the
// roofline, calibration.h). So, for a deployment with S slots:
//   TPOT  >= TPOT_roof(1)          (decode at batch 1: weights ÷ bandwidth ...)
//   TTFT  >= prefill_roof(1)       (the prompt's FLOPs ÷ peak, alone on the server)
//   users <= min(S, n_tpot)        n_tpot = the largest n with TPOT_roof(n) <= the TPOT SLO
//   req/s <= n / life_roof(n)      at n = min(S, n_tpot)
// The last two assume what the load model shows everywhere: a request's TPOT
// does not fall as the batch grows, and throughput n / life(n) does not fall
// as n grows up to S.
//
// ComputeModelBounds does the same with the model's own coefficients (the
// ones the exact evaluation will use): the phase times of the mean-step
// model are then what the queueing model's TPOT is with n in service, so
// the same bounds hold and are tight; it adds n_ttft, the largest n whose
// prefill alone (n in service, no queueing) is within the TTFT SLO, to the
// users' cap, and estimates the per-user speed at the capped load.
#ifndef CAPPLAN_MODEL_SEARCH_H_
#define CAPPLAN_MODEL_SEARCH_H_

#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "model/step_time.h"

namespace capplan::model {

struct RooflineBounds {
  double tpot_lower_seconds = 0;       // TPOT_roof(1)
  double ttft_lower_seconds = 0;       // prefill_roof(1)
  int max_users = 0;                   // min(S, n_tpot); 0 when TPOT_roof(1) misses the SLO
  double max_requests_per_second = 0;  // at max_users
  double max_output_tokens_per_second = 0;
  bool slo_missed = false;  // a TTFT or TPOT floor already above the SLO
  // 1 ÷ TPOT at max_users: the per-user speed where the load is capped
  // (ComputeModelBounds; the roofline's leaves it at 1 ÷ tpot_lower_seconds).
  double user_tokens_per_second_at_max_users = 0;
};

// `model` is taken with its inputs, scheduler and speculation; its
// coefficients are replaced by the roofline. `slots` >= 1. SLO values absent
// = unconstrained.
absl::StatusOr<RooflineBounds> ComputeRooflineBounds(const PerformanceModel& model,
                                                     const Workload& workload, int slots,
                                                     std::optional<double> ttft_slo_seconds,
                                                     std::optional<double> tpot_slo_seconds);

absl::StatusOr<RooflineBounds> ComputeModelBounds(const PerformanceModel& model,
                                                  const Workload& workload, int slots,
                                                  std::optional<double> ttft_slo_seconds,
                                                  std::optional<double> tpot_slo_seconds);

// A point to keep small (`lower`) against one to keep large (`higher`).
struct FrontPoint {
  double lower = 0;
  double higher = 0;
};

// Indices of the points no other point dominates (another is at least as
// good on both and better on one), sorted by `lower` ascending; of equal
// points the first is kept.
std::vector<int> ParetoFront(const std::vector<FrontPoint>& points);

// True when some point of `front` is at least as good as `bound` on both
// (lower <= bound.lower and higher >= bound.higher): nothing with at best
// `bound` can join the front.
bool Dominated(const std::vector<FrontPoint>& front, const FrontPoint& bound);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_SEARCH_H_
