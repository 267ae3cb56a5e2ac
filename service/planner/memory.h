#ifndef CAPPLAN_SERVICE_PLANNER_MEMORY_H_
#define CAPPLAN_SERVICE_PLANNER_MEMORY_H_

#include <optional>

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "model/memory_model.h"
#include "service/catalog/catalog.h"
#include "service/planner/prepared.h"
#include "service/translate/deployment_resolver.h"

namespace capplan::service {

// PlanMemory: resolve the deployment, run the memory model, and, where a
// catalogue baseline measured this configuration, return its figures with
// tier MEASURED and the model's own figures beside them.
absl::StatusOr<v1::MemoryPlan> PlanMemory(const Catalog& catalog,
                                          const v1::PlanMemoryRequest& request,
                                          WorkCounters* counters = nullptr);

// The API plan of a deployment on a known card with the matching baselines'
// figures attached (and the pool they measured in place of the model's).
v1::MemoryPlan MemoryPlanWithBaselines(const Catalog& catalog, const ResolvedDeployment& resolved,
                                       const model::MemoryPlan& plan,
                                       std::optional<uint64_t> mean_sequence_tokens);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_MEMORY_H_
