#ifndef CAPPLAN_SERVICE_PLANNER_MEMORY_H_
#define CAPPLAN_SERVICE_PLANNER_MEMORY_H_

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "model/memory_model.h"
#include "service/catalog/catalog.h"
#include "service/translate/deployment_resolver.h"

namespace capplan::service {

// PlanMemory: resolve the deployment, run the memory model, and, where a
// catalogue baseline measured this configuration, return its figures with
// tier MEASURED and the model's own figures beside them.
absl::StatusOr<v1::MemoryPlan> PlanMemory(const Catalog& catalog,
                                          const v1::PlanMemoryRequest& request);

// The same from an already resolved deployment (Plan and Validate reuse it).
absl::StatusOr<v1::MemoryPlan> PlanMemoryFor(
    const Catalog& catalog, const ResolvedDeployment& resolved,
    std::optional<uint64_t> mean_sequence_tokens);

// The memory plan's weights by component, in whole bytes.
void FillWeightsByComponent(const model::MemoryPlan& plan, v1::WeightsByComponent* out);

// The resolved deployment's fields that do not need the card (model,
// parallelism, engine, batch limits, weight format, speculation).
void FillResolvedDeploymentCommon(const ResolvedDeployment& r, const model::MemoryPlan& m,
                                  v1::ResolvedDeployment* d);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_MEMORY_H_
