#ifndef CAPPLAN_SERVICE_TRANSLATE_LOAD_TRANSLATION_H_
#define CAPPLAN_SERVICE_TRANSLATE_LOAD_TRANSLATION_H_

// Translation for the load model: measured rows of baselines and inline
// calibration sweeps into model::MeasuredPoint, workloads both ways, and the
// model's curve into the API's LoadCurve messages. No formula lives here.
//
// Sweeps that do not state their workload: output tokens per request are
// derived per row as output tok/s ÷ req/s when both are measured; input
// tokens fall back to the input the same report states for its sustained
// run, else to the sweep's output length (noted).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "capplan/v1/planner.pb.h"
#include "model/calibration.h"
#include "model/provenance.h"
#include "model/queueing.h"

namespace capplan::service {

model::Workload ToModelWorkload(const v1::WorkloadSpec& workload);

// The workload of a baseline's sweep under the rules above (means; the
// output is the mean of the rows' derived outputs when the sweep states
// none). `notes` receives what was derived or assumed.
absl::StatusOr<v1::WorkloadSpec> SweepWorkload(const v1::Baseline& baseline, const v1::Sweep& sweep,
                                               std::vector<std::string>* notes);

// The workload a baseline measured, for a request that gives none: its first
// sustained run's request shape, else its first sweep's (SweepWorkload).
// INVALID_ARGUMENT naming `workload_path` when the baseline states neither.
absl::StatusOr<v1::WorkloadSpec> BaselineWorkload(const v1::Baseline& baseline,
                                                  absl::string_view workload_path,
                                                  std::vector<std::string>* notes);

// One measured row as a calibration point, with where it came from.
struct SourcedPoint {
  model::MeasuredPoint point;
  std::string baseline_id;  // empty for inline calibration
  std::string sweep;
  bool speculative = false;
  int draft_tokens = 0;

  // The row as the tier policy sees it (points into this object).
  model::MeasuredRow AsRow() const { return {&point, speculative, draft_tokens}; }
};

// Rows of a baseline's sweeps, its single long-context runs that state their
// workload and speculative setting, and (when `with_variants`) its
// speculative variants that state a setting and a throughput. Rows run with
// the baseline's speculative setting unless their sweep states its own.
absl::StatusOr<std::vector<SourcedPoint>> BaselinePoints(const v1::Baseline& baseline,
                                                         bool with_variants,
                                                         std::vector<std::string>* notes);

// Rows of inline calibration sweeps; INVALID_ARGUMENT names
// "<path>.calibration[i].rows[j].<field>".
absl::StatusOr<std::vector<SourcedPoint>> InlinePoints(const std::vector<v1::Sweep>& sweeps,
                                                       const v1::WorkloadSpec& request_workload,
                                                       const std::string& path);

// Draft tokens of a speculative setting (at least 1 when speculation is on,
// 0 when off).
int DraftTokens(const v1::SpeculativeDecoding& speculative);

void FillCurvePoint(const model::LoadPoint& point, v1::LoadCurvePoint* out);
void FillKnee(const model::Knee& knee, bool closed_loop, v1::Knee* out);
void FillSafePoint(const model::LoadCurve& curve, v1::SafeOperatingPoint* out);
void FillStepTimeFit(const model::StepTimeCoefficients& coefficients,
                     const std::optional<model::CalibrationResult>& fit, v1::StepTimeFit* out);

v1::Tier ToProtoTier(model::Tier tier);

// The knee's load in its curve's axis: users or req/s.
double KneeLoad(const v1::Knee& knee);
v1::LoadBinding ToProtoBinding(model::BindingLimit binding);
v1::SlotBound ToProtoSlotBound(model::SlotBound bound);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_TRANSLATE_LOAD_TRANSLATION_H_
