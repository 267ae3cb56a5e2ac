#ifndef CAPPLAN_SERVICE_CLI_MEASURED_H_
#define CAPPLAN_SERVICE_CLI_MEASURED_H_

// Measured rows beside a predicted load curve: `capplan sweep --baseline`
// (the baseline's own sweeps, when the request changes nothing of its
// configuration and asks for the same workload) and `--calibration` rows.
// They are shown side by side with the prediction at the same load and drawn
// in the --svg plot.

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include "capplan/v1/catalog.pb.h"
#include "capplan/v1/planner.pb.h"

namespace capplan::service {

struct MeasuredPoint {
  std::string source;  // "seed-000-.../concurrency-sweep", "calibration[0]"
  std::string label;   // the source's own label ("sweet spot"), or ""
  bool closed_loop = true;
  double load = 0;  // users (closed loop) or req/s (open loop)
  std::optional<double> output_tokens_per_second;
  // TTFT: the median when the source gives one, else its single figure
  // (mean or unnamed statistic: ttft_statistic says which).
  std::optional<double> ttft_seconds;
  std::string ttft_statistic;  // "p50", "mean", "not stated"
  std::optional<double> ttft_p95_seconds;
  std::optional<double> tpot_seconds;
};

// The rows of `sweep` that have a load (concurrency or rate), as points.
std::vector<MeasuredPoint> MeasuredPointsOf(const v1::Sweep& sweep, const std::string& source);

// The baseline's sweeps that measured what `request` asks: the request
// overrides nothing of the baseline's deployment, the sweep's workload is
// the request's (or the request states none, taking the first sweep's), its
// speculative setting is the deployment's and its loop kind the request's.
std::vector<MeasuredPoint> BaselinePointsFor(const v1::Baseline& baseline,
                                             const v1::PredictLoadRequest& request);

// Measured and predicted side by side at each load the curve and a measured
// point share, with the difference in percent; nothing when none share one.
void PrintMeasuredBeside(const v1::LoadCurve& curve, const std::vector<MeasuredPoint>& measured,
                         std::ostream& out);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_MEASURED_H_
