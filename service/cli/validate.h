#ifndef CAPPLAN_SERVICE_CLI_VALIDATE_H_
#define CAPPLAN_SERVICE_CLI_VALIDATE_H_

#include <string>

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "service/cli/context.h"

namespace capplan::service {

// `capplan validate`: exit 0 on PASS, 1 on FAIL, 2 on invalid input.
absl::StatusOr<int> ValidateCommand(CliContext& ctx);
CliCommandSpec ValidateCommandSpec();

// A deployment spec file: a ValidateRequest in text format or JSON. Errors
// name the file (and line:column for text format).
absl::StatusOr<v1::ValidateRequest> ParseValidateSpec(const std::string& path,
                                                      const std::string& text);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_VALIDATE_H_
