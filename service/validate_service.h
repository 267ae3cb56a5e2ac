#ifndef CAPPLAN_SERVICE_VALIDATE_SERVICE_H_
#define CAPPLAN_SERVICE_VALIDATE_SERVICE_H_

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "service/catalog.h"

namespace capplan::service {

// Validate: checks a deployment (or an engine launch line) against memory,
// the SLO at the expected load, the model's native context, quality evidence
// for its weight format, and how far it is from measured baselines. Returns
// a verdict (FAIL when any ERROR finding remains after `allow`), the findings
// and every check run. Invalid requests are INVALID_ARGUMENT with the field
// path; a configuration that fails is a valid answer, not an error.
absl::StatusOr<v1::ValidateResponse> Validate(const Catalog& catalog,
                                              const v1::ValidateRequest& request);

// The stable finding codes.
inline constexpr char kDoesNotFit[] = "DOES_NOT_FIT";
inline constexpr char kKvPoolBelowOneRequest[] = "KV_POOL_BELOW_ONE_REQUEST";
inline constexpr char kConcurrencyAboveSafe[] = "CONCURRENCY_ABOVE_SAFE";
inline constexpr char kTtftSloMissed[] = "TTFT_SLO_MISSED";
inline constexpr char kTpotSloMissed[] = "TPOT_SLO_MISSED";
inline constexpr char kE2eSloMissed[] = "E2E_SLO_MISSED";
inline constexpr char kUnstableLoad[] = "UNSTABLE_LOAD";
inline constexpr char kContextBeyondNative[] = "CONTEXT_BEYOND_NATIVE";
inline constexpr char kNoQualityEvidence[] = "NO_QUALITY_EVIDENCE";
inline constexpr char kFarFromBaselines[] = "FAR_FROM_BASELINES";
inline constexpr char kUnknownEngineVersion[] = "UNKNOWN_ENGINE_VERSION";
inline constexpr char kUnmodelledFlag[] = "UNMODELLED_FLAG";

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_VALIDATE_SERVICE_H_
