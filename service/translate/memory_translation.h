#ifndef CAPPLAN_SERVICE_TRANSLATE_MEMORY_TRANSLATION_H_
#define CAPPLAN_SERVICE_TRANSLATE_MEMORY_TRANSLATION_H_

// The memory model's plan as the API's MemoryPlan: field mapping only.

#include <optional>

#include "capplan/v1/planner.pb.h"
#include "model/memory_model.h"
#include "service/translate/deployment_resolver.h"

namespace capplan::service {

// The per-GPU account, pools, fit verdict, the resolved deployment and the
// engine preset of a deployment on a known card (no baselines attached).
// With `mean_sequence_tokens`, also the concurrency at that length.
v1::MemoryPlan ToApiMemoryPlan(const ResolvedDeployment& resolved, const model::MemoryPlan& plan,
                               std::optional<uint64_t> mean_sequence_tokens);

// A deployment whose card is withheld: weights and KV bytes per token are
// the model's; the card's memory, hence the pool, is unknown (tier ROOFLINE).
v1::MemoryPlan WithheldMemoryPlan(const ResolvedDeployment& resolved,
                                  const model::MemoryPlan& plan);

v1::MemoryBinding ToProtoMemoryBinding(model::BindingConstraint binding);

// The plan's weights by component, in whole bytes.
void FillWeightsByComponent(const model::MemoryPlan& plan, v1::WeightsByComponent* out);

// The resolved deployment's fields that do not need the card (model,
// parallelism, engine, batch limits, weight format, speculation).
void FillResolvedDeploymentCommon(const ResolvedDeployment& resolved, const model::MemoryPlan& plan,
                                  v1::ResolvedDeployment* out);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_TRANSLATE_MEMORY_TRANSLATION_H_
