#ifndef CAPPLAN_SERVICE_CLI_DEPLOYMENT_FLAGS_H_
#define CAPPLAN_SERVICE_CLI_DEPLOYMENT_FLAGS_H_

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "service/cli/args.h"

namespace capplan::service {

// Flags that describe a deployment, named as the engines name them
// (--gpu-memory-utilization, --max-model-len, ...). Valued flags and switches.
const std::vector<std::string>& DeploymentValuedFlags();
// --prefix-cache-hit-rate, --input-tokens-cv, --output-tokens-cv (with the
// workload's --input-tokens / --output-tokens).
const std::vector<std::string>& WorkloadShapeFlags();
const std::vector<std::string>& DeploymentSwitches();

// Builds the API Deployment from those flags. --model-config FILE and
// --hardware-file FILE are read here (the CLI sends their contents, so a
// server never opens client files). Errors name the flag, the value and the
// rule.
absl::StatusOr<v1::Deployment> DeploymentFromFlags(const CliArgs& args);

// --gpu ID or --hardware-file FILE (a Hardware in text format or JSON, for a
// card the catalogue lacks) into `d`; they exclude each other. A bad file's
// errors read "FILE:line:column: field = value; rule" (text format) or
// "FILE: ..." (JSON), validated as a catalogue entry is, citations optional.
absl::Status ApplyHardwareFlags(const CliArgs& args, v1::Deployment* d);

// --input-tokens and --output-tokens, which go together; `workload` is asked
// for the message only when they are given (so an absent workload stays
// absent).
// --num-prompts: a synchronized benchmark's prompts (refused without
// --synchronized); nullopt when not given.
absl::StatusOr<std::optional<uint32_t>> NumPromptsFlag(const CliArgs& args);

absl::Status ApplyWorkloadFlags(const CliArgs& args,
                                const std::function<v1::WorkloadSpec*()>& workload);

// --ttft-p95, --tpot and --e2e-p95 (seconds), each set only when given.
absl::Status ApplySloFlags(const CliArgs& args, const std::function<v1::Slo*()>& slo);

// --min-user-tokens-per-second (default kDefaultMinUserTokensPerSecond);
// must be > 0.
inline constexpr double kDefaultMinUserTokensPerSecond = 10;
absl::StatusOr<double> MinUserTokensPerSecond(const CliArgs& args);

// --kv-restore-context N,N,...: positive whole numbers of tokens (empty
// when the flag is absent); INVALID_ARGUMENT naming the flag and the part.
absl::StatusOr<std::vector<uint64_t>> KvRestoreContexts(const CliArgs& args);

// The warning for a safe point whose decode rate per user (1/TPOT) is below
// `min_rate` tok/s; nullopt when it is not (or TPOT is unknown).
std::optional<std::string> SlowUserWarning(std::optional<double> tpot_seconds, double min_rate);

// Reads a whole file; InvalidArgument naming `flag` when it cannot.
absl::StatusOr<std::string> ReadFileForFlag(const std::string& flag, const std::string& path);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_DEPLOYMENT_FLAGS_H_
