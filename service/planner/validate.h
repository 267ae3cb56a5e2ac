#ifndef CAPPLAN_SERVICE_PLANNER_VALIDATE_H_
#define CAPPLAN_SERVICE_PLANNER_VALIDATE_H_

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "service/catalog/catalog.h"
#include "service/planner/prepared.h"

namespace capplan::service {

// Validate: checks a deployment (or an engine launch line) against memory,
// the SLO at the expected load, the model's native context, quality evidence
// for its weight format, and how far it is from measured baselines. Returns
// a verdict (FAIL when any ERROR finding remains after `allow`), the findings
// and every check run. Invalid requests are INVALID_ARGUMENT with the field
// path; a configuration that fails is a valid answer, not an error.
absl::StatusOr<v1::ValidateResponse> Validate(const Catalog& catalog,
                                              const v1::ValidateRequest& request,
                                              WorkCounters* counters = nullptr,
                                              model::Budget* budget = nullptr);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_VALIDATE_H_
