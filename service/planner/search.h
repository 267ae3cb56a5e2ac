#ifndef CAPPLAN_SERVICE_PLANNER_SEARCH_H_
#define CAPPLAN_SERVICE_PLANNER_SEARCH_H_

// SearchConfigs (DESIGN §5 "Search"): GPU type × count × TP/PP(/EP) ×
// weight format × KV dtype × engine × max running requests (× speculative
// decoding on request), in three stages:
//   1. memory: the memory model on each candidate (resolved once per card,
//      engine and format, the rest set on the resolved input); refused when
//      the parallelism does not divide the model, the weights do not fit or
//      the KV pool holds less than one request of the workload;
//   2. roofline bounds (model/search.h) a candidate cannot beat: TTFT and
//      TPOT floors against the SLO, the most users and req/s per replica,
//      hence the fewest replicas for the target, the most capacity, the
//      lowest cost and the highest per-user speed;
//   3. exact: the survivors, best bound first, through Plan itself (so a
//      front entry re-asked through Plan gives the same figures), skipping
//      those whose bounds cannot reach either Pareto front nor the top-k.
// Bounded by max_candidates and by `deadline` (and time_budget_seconds):
// the answer then holds what was found, with truncated = true.

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "capplan/v1/planner.pb.h"
#include "model/budget.h"
#include "service/catalog/catalog.h"
#include "service/planner/prepared.h"

namespace capplan::service {

inline constexpr uint32_t kSearchDefaultTopK = 10;
inline constexpr uint32_t kSearchMaxTopK = 100;
inline constexpr uint32_t kSearchMaxThreads = 64;
inline constexpr uint32_t kSearchDefaultMaxCandidates = 20000;
inline constexpr uint32_t kSearchMaxCandidates = 200000;
inline constexpr uint32_t kSearchDefaultMaxGpusPerReplica = 8;
inline constexpr uint32_t kSearchMaxGpusPerReplica = 64;

// INVALID_ARGUMENT naming the field path, the value and the rule
// ("SearchConfigsRequest.constraints.max_gpus_per_replica = 0; must be in
// [1, 64]"); the workload and SLO as Plan checks them.
absl::Status ValidateSearchRequest(const v1::SearchConfigsRequest& request);

// At `deadline` the search returns what it found (truncated = true). `stop`
// (may be null) is polled between candidates as the deadline is: once it
// stops for another reason (the client went away, the server drains) the
// search ends with its status instead of an answer.
absl::StatusOr<v1::SearchConfigsResponse> SearchConfigs(
    const Catalog& catalog, const v1::SearchConfigsRequest& request,
    absl::Time deadline = absl::InfiniteFuture(), WorkCounters* counters = nullptr,
    model::Budget* stop = nullptr);

// The Plan request a search candidate's figures come from (its deployment,
// the search's workload, SLO, target, duty factor and price): what to send
// to Plan to check a candidate.
v1::PlanRequest PlanRequestFor(const v1::SearchConfigsRequest& request,
                               const v1::SearchCandidate& candidate);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_SEARCH_H_
