#ifndef CAPPLAN_SERVICE_TRANSLATE_MODEL_INFO_H_
#define CAPPLAN_SERVICE_TRANSLATE_MODEL_INFO_H_

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"

namespace capplan::service {

// A catalogue model with the figures the planner derives from its
// architecture (parameter counts, KV bytes per token, per-request state).
absl::StatusOr<v1::ModelInfo> DescribeModel(const v1::Model& model);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_TRANSLATE_MODEL_INFO_H_
