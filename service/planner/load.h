#ifndef CAPPLAN_SERVICE_PLANNER_LOAD_H_
#define CAPPLAN_SERVICE_PLANNER_LOAD_H_

// PredictLoad (DESIGN §4): the load curve of a deployment — throughput, TTFT
// percentiles, TPOT and end-to-end latency against concurrency (closed loop)
// or Poisson arrival rate (open loop), the knee, the safe operating point and
// the slots — from the step-time model fitted as prepared.h describes. The
// knee is FindKnee on the median TTFT.

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "service/catalog/catalog.h"
#include "service/planner/prepared.h"

namespace capplan::service {

// Validates, resolves the deployment (a baseline without a GPU resolves in
// unknown units), prepares it and draws the curve. Without a `workload` the
// workload of the deployment's baseline's first sweep is used.
absl::StatusOr<v1::LoadCurve> PredictLoad(const Catalog& catalog,
                                          const v1::PredictLoadRequest& request,
                                          WorkCounters* counters = nullptr);

// The simulator's answer to the same request (model/simulator.h): each
// point an iteration-level run of kSimulatedRequestsPerPoint requests with
// the step-time model PredictLoad fits, a slower second opinion. At most
// kMaxSimulatedPoints points.
inline constexpr int kMaxSimulatedPoints = 32;
inline constexpr int kSimulatedRequestsPerPoint = 4000;
absl::StatusOr<v1::LoadCurve> SimulateLoad(const Catalog& catalog,
                                           const v1::PredictLoadRequest& request);

// The API axes of the load grids Plan and Validate search (model/load_grid.h).
v1::ClosedLoopAxis ConcurrencyGridAxis(uint32_t top,
                                       std::optional<uint32_t> include = std::nullopt);
v1::OpenLoopAxis RateGridAxis(double unit_rps, int sixty_fourths);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_LOAD_H_
