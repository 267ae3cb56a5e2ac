#ifndef CAPPLAN_SERVICE_CLI_PRIORS_H_
#define CAPPLAN_SERVICE_CLI_PRIORS_H_

#include "service/cli/context.h"

namespace capplan::service {

// `capplan priors [--out-dir DIR]`: fits the efficiency priors on the
// catalogue's baselines (planner/priors.h) and prints them; with --out-dir,
// writes them into DIR/priors/ (replacing the previous set). Offline only:
// the fit reads the whole catalogue.
CliCommandSpec PriorsCommandSpec();

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_PRIORS_H_
