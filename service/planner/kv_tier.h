#ifndef CAPPLAN_SERVICE_PLANNER_KV_TIER_H_
#define CAPPLAN_SERVICE_PLANNER_KV_TIER_H_

// A Plan's KV storage tier (PlanRequest.kv_tier_id, data/tiers/): restoring a
// context's KV from the tier against recomputing it by prefill (DESIGN §5),
// and the peak throughput of a cold-restore workload either way.
//
// A replica of G GPUs restores L tokens by moving L × (KV bytes per token per
// GPU) + the state bytes of a hybrid model into each GPU. Each GPU's own path
// (host DRAM over its PCIe link: path_per_gpu) runs in parallel; a node-wide
// path (a drive, a NIC port) and the tier's read bandwidth are shared by the
// GPUs reading at once:
//   restore = bytes per GPU × max(1 ÷ per-GPU path, readers ÷ shared) + latency
// with readers = the replica's GPUs on one node (alone), or every GPU of the
// node (a node full of replicas restoring at once, for the throughput).
// Recompute is the load model's prefill of L tokens on an idle replica.
//
// Cold restore: every request's input is restored instead of prefilled (as a
// prefix-cache hit of all but its last token), while the GPUs decode the
// others, so the replica serves min(the GPUs' peak without the prefill, the
// tier's share ÷ bytes per request) requests per second.

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "service/catalog/catalog.h"
#include "service/planner/prepared.h"

namespace capplan::service {

inline constexpr int kMaxKvRestoreContexts = 64;

// OK when the catalogue holds tier `id`; else NOT_FOUND naming `path`, the
// known tiers and the near ones.
absl::Status CheckKvTierId(const Catalog& catalog, absl::string_view id, absl::string_view path);

// The request's restore contexts: at most kMaxKvRestoreContexts, each in
// [1, max_model_len] (no upper bound when max_model_len is 0), and none
// without a tier. INVALID_ARGUMENT names `path` (the request message),
// the entry and `whose` max_model_len it is.
absl::Status CheckKvRestoreContexts(const google::protobuf::RepeatedField<uint64_t>& contexts,
                                    bool tier_named, int64_t max_model_len, absl::string_view path,
                                    absl::string_view whose);

// NOT_FOUND for an unknown tier (with near ids); INVALID_ARGUMENT for a
// context length outside [1, max_model_len] or too many of them.
absl::StatusOr<v1::KvTierReport> KvTierReportFor(const Catalog& catalog,
                                                 const v1::PlanRequest& request,
                                                 const PreparedLoad& load);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_KV_TIER_H_
