#ifndef CAPPLAN_SERVICE_PLANNER_PUT_BASELINE_H_
#define CAPPLAN_SERVICE_PLANNER_PUT_BASELINE_H_

// The one write path (DESIGN §2): parse → validate → lint → atomic write →
// served without restart. The write RPC and `capplan ingest --out-dir` both
// end here.

#include <memory>

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "service/catalog/catalog.h"
#include "service/catalog/store.h"

namespace capplan::service {

struct PutBaselineResult {
  v1::PutBaselineResponse response;
  // The catalogue with the new entry, to serve at once.
  std::shared_ptr<const Catalog> catalog;
};

// Validates the baseline (and its model and card, when given and new) against
// `current`, lints it (an ERROR finding refuses it: INVALID_ARGUMENT naming
// PutBaselineRequest.baseline.<field>), refuses an existing id without
// `replace` (ALREADY_EXISTS), then writes through `store`.
absl::StatusOr<PutBaselineResult> PutBaseline(const Catalog& current, CatalogStore& store,
                                              const v1::PutBaselineRequest& request);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_PUT_BASELINE_H_
