#ifndef CAPPLAN_SERVICE_PLANNER_PLAN_H_
#define CAPPLAN_SERVICE_PLANNER_PLAN_H_

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "service/catalog/catalog.h"
#include "service/planner/prepared.h"

namespace capplan::service {

// Plan: one-call sizing. The memory plan; the safe operating point under the
// SLO in a closed loop (users) and an open loop (req/s); capacity per month
// at the open-loop safe point (and, labelled, at peak); replicas and GPUs for
// a target (ceil(target ÷ safe load), never a division of peak); cost per
// million output tokens for a GPU-hour price; and, where the deployment is a
// baseline with a measured sustained run, the capacity that run implies.
// The deployment is resolved, planned and fitted once (`counters` counts).
// Replicas and GPUs for the request's target from the response's safe
// points and capacity (what Plan adds when the request names a target;
// nothing without one). FAILED_PRECONDITION when no load meets the SLO.
absl::Status AddSizing(const v1::PlanRequest& request, uint32_t gpus_per_replica,
                       v1::PlanResponse* response);

absl::StatusOr<v1::PlanResponse> Plan(const Catalog& catalog, const v1::PlanRequest& request,
                                      WorkCounters* counters = nullptr);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_PLAN_H_
