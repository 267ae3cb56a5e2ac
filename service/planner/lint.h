#ifndef CAPPLAN_SERVICE_PLANNER_LINT_H_
#define CAPPLAN_SERVICE_PLANNER_LINT_H_

// Lint: the consistency checks of model/lint.h on the catalogue's baselines.
// The same checks run at catalogue load (the server exports the counts), at
// ingest and on PutBaseline (an ERROR finding refuses the write).

#include <vector>

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "service/catalog/catalog.h"

namespace capplan::service {

// Every finding of one baseline. The model and card it names are looked up
// in `catalog` (for the KV bytes per token and the card's memory); checks
// that need them are skipped when they are absent.
std::vector<v1::LintFinding> LintBaseline(const Catalog& catalog, const v1::Baseline& baseline);

// The Lint RPC: one baseline (NOT_FOUND when unknown) or all.
absl::StatusOr<v1::LintResponse> Lint(const Catalog& catalog, const v1::LintRequest& request);

// True when a finding refuses a write.
bool HasError(const std::vector<v1::LintFinding>& findings);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_LINT_H_
