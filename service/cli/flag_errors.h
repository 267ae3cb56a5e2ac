#ifndef CAPPLAN_SERVICE_CLI_FLAG_ERRORS_H_
#define CAPPLAN_SERVICE_CLI_FLAG_ERRORS_H_

// Errors in the words of the command line: the planner's messages name
// request fields ("PlanRequest.deployment.gpu_count = 3"); the CLI user gave
// flags ("--gpus 3"). A field the user set through a flag is named by that
// flag, and a field the message asks to set is named by the flag that sets
// it; the field paths follow in brackets.

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "service/cli/args.h"

namespace capplan::service {

// The flag that sets a request field ("deployment.gpu_count" -> "gpus");
// the path is taken after the request message's name.
std::optional<std::string> FlagForField(absl::string_view field_path);

// `message` with each "XRequest.<field> = <value>" the user set by flag
// written "--flag value", and each bare "XRequest.<field>" written "--flag";
// the original paths are appended in brackets when anything was rewritten.
std::string InFlagTerms(absl::string_view message, const CliArgs& args);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_FLAG_ERRORS_H_
