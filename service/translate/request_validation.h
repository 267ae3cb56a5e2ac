#ifndef CAPPLAN_SERVICE_TRANSLATE_REQUEST_VALIDATION_H_
#define CAPPLAN_SERVICE_TRANSLATE_REQUEST_VALIDATION_H_

// The boundary (DESIGN §1, STYLE 5-6): one validator per API message, run on
// every request before anything converts it. Each refusal is
// INVALID_ARGUMENT naming the field path, the value (strings truncated to
// kMaxEchoBytes) and the rule:
//   "PredictLoadRequest.operator_concurrency_gate = 4294967295; must be in
//    [1, 65536]".
//
// Every request first passes a structural check over all its fields
// (ValidateStructure): enum values the schema knows, finite doubles, 64-bit
// integers within 2^53 (exact in the model's doubles) and 32-bit ones within
// 2^31 − 1 (a C++ int), strings within their size caps, repeated fields
// within kMaxRepeatedEntries. The per-message validators then check each
// field's own range, every integer's upper bound before any cast. What needs
// the resolved deployment (a prompt beyond the context) is checked where the
// deployment is resolved (service/planner).

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "capplan/v1/planner.pb.h"
#include "google/protobuf/message.h"

namespace capplan::service {

// Echoed values are cut to this many bytes (with the full size stated).
inline constexpr size_t kMaxEchoBytes = 256;
inline constexpr size_t kMaxStringBytes = 64 * 1024;
inline constexpr size_t kMaxConfigJsonBytes = 1024 * 1024;
inline constexpr size_t kMaxLaunchLineBytes = 64 * 1024;
inline constexpr size_t kMaxIdBytes = 256;
inline constexpr int kMaxRepeatedEntries = 4096;
inline constexpr int kMaxCalibrationRows = 4096;
inline constexpr int kMaxAllowCodes = 64;

// Upper bounds of the deployment's integers.
inline constexpr uint64_t kMaxGpuCount = 4096;
inline constexpr uint64_t kMaxParallelSize = 1024;
inline constexpr uint64_t kMaxGroupSize = 1 << 20;
inline constexpr uint64_t kMaxContextTokens = uint64_t{1} << 27;  // 134M tokens
inline constexpr uint64_t kMaxBatchSequences = 1 << 20;
inline constexpr uint64_t kMaxBlockSize = 4096;
inline constexpr uint64_t kMaxSpeculativeTokens = 16;
// Largest tokens per request of a workload.
inline constexpr double kMaxRequestTokens = static_cast<double>(kMaxContextTokens);
// Seconds: SLOs and think times up to about 11.6 days.
inline constexpr double kMaxSeconds = 1e6;
inline constexpr double kMaxRequestRateRps = 1e9;
inline constexpr double kMaxTokensPerMonth = 1e21;
inline constexpr double kMaxPricePerGpuHour = 1e6;
inline constexpr uint64_t kMaxTargetUsers = 1u << 30;

// `value` quoted, cut to kMaxEchoBytes with its full length stated:
// "abc…" (100000 bytes).
std::string EchoString(absl::string_view value);

// The structural check above, over `message` and every message inside it;
// `path` is the message's name in errors ("PredictLoadRequest").
absl::Status ValidateStructure(const google::protobuf::Message& message, const std::string& path);

// A catalogue or Hugging Face id: at most kMaxIdBytes of printable ASCII
// without blanks. Empty is allowed (the caller says when it must be set).
absl::Status ValidateId(absl::string_view id, const std::string& path);

// One validator per message; `path` is where the message sits.
absl::Status ValidateParallelism(const v1::DeploymentParallelism& p, const std::string& path);
absl::Status ValidateEngineSettings(const v1::EngineSettings& e, const std::string& path);
absl::Status ValidateDeployment(const v1::Deployment& d, const std::string& path);
absl::Status ValidateWorkloadSpec(const v1::WorkloadSpec& w, const std::string& path);
absl::Status ValidateSlo(const v1::Slo& slo, const std::string& path);
absl::Status ValidateClosedLoopAxis(const v1::ClosedLoopAxis& axis, const std::string& path);
absl::Status ValidateOpenLoopAxis(const v1::OpenLoopAxis& axis, const std::string& path);
absl::Status ValidateExpectedLoad(const v1::ExpectedLoad& load, const std::string& path);

// Whole requests: the structure, then each part.
absl::Status ValidatePlanMemoryRequest(const v1::PlanMemoryRequest& r);
absl::Status ValidatePredictLoadRequest(const v1::PredictLoadRequest& r);
absl::Status ValidatePlanRequest(const v1::PlanRequest& r);
absl::Status ValidateValidateRequest(const v1::ValidateRequest& r);
absl::Status ValidateAccuracyRequest(const v1::AccuracyRequest& r);
absl::Status ValidateLintRequest(const v1::LintRequest& r);
absl::Status ValidatePutBaselineRequest(const v1::PutBaselineRequest& r);
// Get*Request (one id: ValidateId) and List*Request (ids, and filters of at
// most kMaxIdBytes).
absl::Status ValidateLookupRequest(const google::protobuf::Message& r);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_TRANSLATE_REQUEST_VALIDATION_H_
