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
#include "service/cli/measured.h"

namespace capplan::service {

// The specs of the two commands (registered in cli_commands.cc).
std::vector<CliCommandSpec> LoadCliCommands();

// Parses --calibration: a text-format or JSON Sweep, a JSON array of Sweeps,
// or a PredictLoadRequest (text or JSON) whose `calibration` holds several.
absl::StatusOr<std::vector<v1::Sweep>> ParseCalibrationSweeps(const std::string& text);

// What the load-curve report adds to the curve.
struct LoadReportOptions {
  // The safe point's decode rate per user (1/TPOT) below which it warns.
  double min_user_tokens_per_second = 10;
  // Measured rows shown beside the prediction at the same load.
  std::vector<MeasuredPoint> measured;
};

// The human-readable load-curve report.
void PrintLoadCurve(const v1::LoadCurve& curve, const LoadReportOptions& options,
                    std::ostream& out);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_LOAD_H_
