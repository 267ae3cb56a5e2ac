#ifndef CAPPLAN_SERVICE_CLI_PLAN_H_
#define CAPPLAN_SERVICE_CLI_PLAN_H_

#include "service/cli/context.h"

namespace capplan::service {

// `capplan plan`: one-call sizing with monthly capacity.
CliCommandSpec PlanCommandSpec();

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_PLAN_H_
