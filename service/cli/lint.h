#ifndef CAPPLAN_SERVICE_CLI_LINT_H_
#define CAPPLAN_SERVICE_CLI_LINT_H_

#include "service/cli/context.h"

namespace capplan::service {

// `capplan lint [--baseline ID]`: the catalogue's consistency findings. Exit 1
// when any finding is an ERROR (a figure no real run can produce).
CliCommandSpec LintCommandSpec();

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_LINT_H_
