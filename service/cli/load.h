#ifndef CAPPLAN_SERVICE_CLI_LOAD_H_
#define CAPPLAN_SERVICE_CLI_LOAD_H_

// `capplan sweep` (PredictLoad: a load curve as a table, JSON or SVG) and
// `capplan accuracy` (leave-one-row-out accuracy on the catalogue).

#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "capplan/v1/catalog.pb.h"
#include "capplan/v1/planner.pb.h"
#include "service/cli/context.h"

namespace capplan::service {

// The specs of the two commands (registered in cli_commands.cc).
std::vector<CliCommandSpec> LoadCliCommands();

// Parses --calibration: a text-format or JSON Sweep, a JSON array of Sweeps,
// or a PredictLoadRequest (text or JSON) whose `calibration` holds several.
absl::StatusOr<std::vector<v1::Sweep>> ParseCalibrationSweeps(const std::string& text);

// The human-readable load-curve report.
void PrintLoadCurve(const v1::LoadCurve& curve, std::ostream& out);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_LOAD_H_
