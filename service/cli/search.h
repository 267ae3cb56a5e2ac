#ifndef CAPPLAN_SERVICE_CLI_SEARCH_H_
#define CAPPLAN_SERVICE_CLI_SEARCH_H_

#include "capplan/v1/planner.pb.h"
#include "service/cli/args.h"
#include "service/cli/context.h"

namespace capplan::service {

// `capplan search`: which GPU, how many, how configured, at what cost.
CliCommandSpec SearchCommandSpec();

// The request the search flags describe (errors name the flag).
absl::StatusOr<v1::SearchConfigsRequest> SearchRequestFromFlags(const CliArgs& args);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_SEARCH_H_
