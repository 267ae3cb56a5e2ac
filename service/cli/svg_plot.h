#ifndef CAPPLAN_SERVICE_CLI_SVG_PLOT_H_
#define CAPPLAN_SERVICE_CLI_SVG_PLOT_H_

// A standalone SVG of a load curve (capplan sweep --svg): output throughput
// and TTFT p50 / p95 against load in two panels, the knee and the safe
// operating point as vertical lines, the TTFT SLO as a horizontal line; axes
// labelled with units. Measured points (a baseline's rows, --calibration
// rows) are drawn beside the predicted curve as hollow squares, with the
// source's label (or the measured value) next to them. Unstable points (no
// latency) are left out of the TTFT panel and marked on the load axis.
//
// Labels never overlap: they are placed by PlaceLabels (svg_plot_labels.h)
// around each other and the legends; a measured point's label that finds no
// free place is left out (its marker stays, and its <title> tooltip carries
// the same text). Every label is a <text class="label">, every legend entry
// a <text class="legend">, every measured marker a <rect class="measured">.

#include <optional>
#include <string>
#include <vector>

#include "capplan/v1/planner.pb.h"
#include "service/cli/measured.h"

namespace capplan::service {

// The Pareto fronts of a search (capplan search --svg): cost per million
// output tokens against per-user output tok/s, and GPUs per replica against
// output tokens per month per replica; each point labelled with its card.
std::string SearchFrontSvg(const v1::SearchConfigsResponse& response, const std::string& title);

std::string LoadCurveSvg(const v1::LoadCurve& curve, std::optional<double> ttft_slo_seconds,
                         const std::string& title, const std::vector<MeasuredPoint>& measured = {});

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_SVG_PLOT_H_
