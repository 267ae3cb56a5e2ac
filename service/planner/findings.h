#ifndef CAPPLAN_SERVICE_PLANNER_FINDINGS_H_
#define CAPPLAN_SERVICE_PLANNER_FINDINGS_H_

// Validate's findings: the stable codes and the list that collects findings
// and checks into a ValidateResponse.

#include <initializer_list>
#include <string>
#include <utility>

#include "capplan/v1/planner.pb.h"

namespace capplan::service {

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
inline constexpr char kWorkloadFromBaseline[] = "WORKLOAD_FROM_BASELINE";

// Collects Validate's findings and checks into its response.
class FindingList {
 public:
  explicit FindingList(v1::ValidateResponse* response) : response_(response) {}
  void Add(v1::Severity severity, const std::string& code, const std::string& field,
           const std::string& message,
           std::initializer_list<std::pair<const char*, double>> figures = {});
  // A check that ran, passed or not.
  void Check(const std::string& name, const std::string& code, bool passed,
             const std::string& detail);
  // A check that did not apply.
  void Skip(const std::string& name, const std::string& code, const std::string& why);

 private:
  v1::ValidateResponse* response_;
};

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_FINDINGS_H_
