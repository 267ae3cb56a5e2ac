// What a load curve costs to compute, estimated before computing it, so a
// request can be refused (RESOURCE_EXHAUSTED) instead of running for minutes
// (DESIGN §6 "Bounded work").
//
// The unit is one term of the sums the queueing model evaluates (one atom of
// a latency law, one Poisson term of an Erlang CDF, one log-gamma of the
// product form): about 2-5 ns on a 2020s server core. A curve costs
//
//   S · kServerWorkUnitsPerSlot                        the server's μ(n), n = 1..S
//   + Σ_points [ marginals + kCdfEvaluationsPerPoint · (A · kAtomWorkUnits
//                                                       + J · E · kErlangWorkUnits) ]
//
// with S the slots, J the length nodes (1, or kLengthNodes when a length
// varies), A the atoms of the point's latency laws (populations binned to
// kMaxAtomStates, times the co-arrival positions of a closed loop without
// think time) and E the Erlang laws of its waits (closed loop: users beyond
// S whose weight is not negligible, at most a Poisson span around Z·μ(S);
// open loop: one geometric law). kCdfEvaluationsPerPoint counts the CDF
// evaluations of the quantiles of TTFT (four) and end-to-end time (two); it
// dates from searches by bisection to 1e-6, and the Brent searches from the
// previous point's answer take fewer, so the estimate is now an upper one
// (a cap, not a prediction). The constants were measured against
// the model's run time (tests/bench/model/cost_benchmark.cc reports the
// time per unit on shapes that exercise each term).
#ifndef CAPPLAN_MODEL_COST_H_
#define CAPPLAN_MODEL_COST_H_

#include "absl/status/statusor.h"
#include "model/queueing.h"

namespace capplan::model {

// Measured on this repository's synthetic deployments (tests/model/
// perf_scenarios.h) against the model's CPU time: one unit is about 1 ns
// (tests/bench/model/cost_benchmark.cc).
inline constexpr double kServerWorkUnitsPerSlot = 60;
inline constexpr double kMarginalWorkUnitsPerUser = 36;  // each of two marginals
inline constexpr double kStationaryWorkUnitsPerSlot = 60;
inline constexpr double kCdfEvaluationsPerPoint = 180;
// An atom with the prefill stage's exponential (think time, open loop) and a
// co-arrival atom of a closed loop without think time.
inline constexpr double kAtomWorkUnits = 1.5;
inline constexpr double kCoArrivalAtomWorkUnits = 1.5;
inline constexpr double kErlangWorkUnits = 3;
inline constexpr double kGeometricWaitWorkUnits = 64;
inline constexpr int kAtomBins = 256;  // queueing.cc pools populations beyond this

struct LoadCurveWork {
  double total_units = 0;
  double server_units = 0;  // μ(n) for n = 1..S
  double points_units = 0;  // the curve's points
  Slots slots;
};

// The estimate for `request` (its slots, server and points); the errors of
// ComputeSlots for limits that give no slots.
absl::StatusOr<LoadCurveWork> EstimateLoadCurveWork(const LoadCurveRequest& request);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_COST_H_
