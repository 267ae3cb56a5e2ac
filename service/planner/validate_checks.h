#ifndef CAPPLAN_SERVICE_PLANNER_VALIDATE_CHECKS_H_
#define CAPPLAN_SERVICE_PLANNER_VALIDATE_CHECKS_H_

#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "capplan/v1/planner.pb.h"
#include "service/catalog/catalog.h"
#include "service/planner/findings.h"
#include "service/planner/prepared.h"
#include "service/translate/deployment_resolver.h"

namespace capplan::service {

// Validate's checks at the expected load: safe concurrency, TTFT/TPOT/E2E
// SLOs and stability, from the load model. Appends the tiers of the figures
// used to `tiers`; stores the curve in response->load.
// The load is prepared (fitted) once for both curves.
absl::Status AddLoadChecks(const Catalog& catalog, const PreparedDeployment& deployment,
                           const v1::ValidateRequest& request, FindingList* findings,
                           v1::ValidateResponse* response, std::vector<v1::Tier>* tiers,
                           WorkCounters* counters, model::Budget* budget = nullptr);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_VALIDATE_CHECKS_H_
