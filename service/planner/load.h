#ifndef CAPPLAN_SERVICE_PLANNER_LOAD_H_
#define CAPPLAN_SERVICE_PLANNER_LOAD_H_

// PredictLoad (DESIGN §4): the load curve of a deployment — throughput, TTFT
// percentiles, TPOT and end-to-end latency against concurrency (closed loop)
// or Poisson arrival rate (open loop), the knee, the safe operating point and
// the slots — from the step-time model calibrated on measured rows.
//
// Where the coefficients come from, in order:
//   1. rows of catalogue baselines of this configuration (same model,
//      hardware, GPU count, TP/PP, engine, weight format: BaselineMatches) and
//      the rows of the baseline the deployment starts from, plus the
//      request's inline `calibration` sweeps (no_catalog_calibration drops the
//      catalogue): CALIBRATED, or MEASURED where a row is the request's point;
//   2. otherwise a baseline of another configuration with a known card, its
//      coefficients (efficiencies, dimensionless) transferred: EXTRAPOLATED;
//   3. otherwise the roofline itself (α = 0, every β = 1): ROOFLINE.
// A baseline that withholds its GPU (seed 000) is fitted and predicted in
// the card's unknown units: bandwidths and peak FLOP/s are 1, so each β
// carries the unknown card's 1 / bandwidth; fit and prediction use the same
// inputs, so the curve is consistent, but such a fit never transfers.
//
// Rows used: every sweep row; speculative variants that state a setting and
// a throughput; single long-context runs that state their workload and
// speculative setting (their long prefill and long-context decoding separate
// FLOPs and KV reads from weight reads). With measured speculative rows and a
// model with draft (MTP) layers, the coefficients and the acceptance rate are
// fitted together, so curves with and without speculation share coefficients.
// A fit the rows cannot determine is regularised weakly towards the roofline
// (α = 0, β = 1). The knee is FindKnee on the median TTFT.
//
// Sweeps that do not state their workload: output tokens per request are
// derived per row as output tok/s ÷ req/s when both are measured; input
// tokens fall back to the input the same report states for its sustained
// run, else to the sweep's output length (noted in LoadCurve.notes).

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "model/calibration.h"
#include "model/queueing.h"
#include "model/step_time.h"
#include "service/catalog/catalog.h"
#include "service/translate/deployment_resolver.h"

namespace capplan::service {

// What to predict for an already resolved deployment: the request without
// its deployment (Plan and Validate build one of these).
struct LoadQuery {
  v1::WorkloadSpec workload;
  // Exactly one axis.
  std::optional<v1::ClosedLoopAxis> closed_loop;
  std::optional<v1::OpenLoopAxis> open_loop;
  v1::Slo slo;
  std::vector<v1::Sweep> calibration;
  bool no_catalog_calibration = false;
  std::optional<uint32_t> operator_concurrency_gate;
  // Field path of the query in error messages.
  std::string path = "PredictLoadRequest";
};

// INVALID_ARGUMENT naming the field: "PredictLoadRequest.workload.input_tokens
// = 0; must be > 0", non-positive rates, SLOs <= 0, more than 4,096 load
// points, a load list not strictly increasing, no load axis.
absl::Status ValidateLoadQuery(const LoadQuery& query);

// PredictLoad: validates, resolves the deployment (a baseline without a GPU
// resolves in unknown units), then PredictLoadFor. Without a `workload` the
// workload of the deployment's baseline's first sweep is used.
absl::StatusOr<v1::LoadCurve> PredictLoad(const Catalog& catalog,
                                          const v1::PredictLoadRequest& request);

// The same from a resolved deployment.
absl::StatusOr<v1::LoadCurve> PredictLoadFor(const Catalog& catalog,
                                             const ResolvedDeployment& resolved,
                                             const LoadQuery& query);

// The workload of a baseline's sweep under the rules above (means; the
// output is the mean of the rows' derived outputs when the sweep states
// none). `notes` receives what was derived or assumed.
absl::StatusOr<v1::WorkloadSpec> SweepWorkload(const v1::Baseline& baseline,
                                               const v1::Sweep& sweep,
                                               std::vector<std::string>* notes);

// ------------------------------------------------------------ building blocks
// (shared with the accuracy harness, accuracy.h)

// The deployment as the step-time and queueing model see it.
struct DeploymentPerformance {
  model::StepTimeInputs inputs;
  model::SchedulerConfig scheduler;
  // Speculative decoding of the deployment with its acceptance rate unknown
  // (0) until fitted; nullopt without speculation.
  std::optional<model::SpeculativeDecoding> speculative;
  // What one draft pass of the model's own draft (MTP) layers costs, whether
  // or not the deployment speculates: measured speculative rows of the same
  // model are fitted with it. nullopt for a model without draft layers.
  std::optional<model::SpeculativeDecoding> draft;
  // Every limit except the operator gate (filled per use).
  model::SlotLimits limits;
  v1::MemoryPlan memory;
  bool hardware_withheld = false;
  std::vector<std::string> notes;
};

absl::StatusOr<DeploymentPerformance> DescribePerformance(
    const Catalog& catalog, const ResolvedDeployment& resolved);

// One measured row as a calibration point, with where it came from.
struct SourcedPoint {
  model::MeasuredPoint point;
  std::string baseline_id;  // empty for inline calibration
  std::string sweep;
  bool speculative = false;
  int draft_tokens = 0;
  // Which row figures were measured (for MEASURED tiers and accuracy).
  bool has_ttft = false;
  bool has_tpot = false;
  bool has_e2e = false;
  bool has_throughput = false;
};

// Rows of a baseline's sweeps (and its speculative variants that state a
// setting and a throughput, when `with_variants`). Rows run with the
// baseline's speculative setting unless their sweep states its own.
absl::StatusOr<std::vector<SourcedPoint>> BaselinePoints(
    const v1::Baseline& baseline, bool with_variants, std::vector<std::string>* notes);

// Rows of inline calibration sweeps; INVALID_ARGUMENT names
// "<path>.calibration[i].rows[j].<field>".
absl::StatusOr<std::vector<SourcedPoint>> InlinePoints(
    const std::vector<v1::Sweep>& sweeps, const v1::WorkloadSpec& request_workload,
    const std::string& path);

// Coefficients fitted on points (speculative points only fit the acceptance
// rate when non-speculative points exist; otherwise coefficients and
// acceptance are fitted jointly).
struct PerformanceFit {
  model::CalibrationResult calibration;
  std::optional<double> acceptance_rate;  // fitted on speculative points
  int observations = 0;
};

// Speculative points get `performance`'s draft layers with their own draft
// length.
absl::StatusOr<PerformanceFit> FitPerformance(const model::CalibrationContext& context,
                                              const DeploymentPerformance& performance,
                                              const std::vector<SourcedPoint>& points);

// The calibration context of a deployment: its inputs, scheduler and slots
// (S with `gate` and the workload).
absl::StatusOr<model::CalibrationContext> CalibrationContextFor(
    const DeploymentPerformance& performance, const model::Workload& workload,
    std::optional<int> gate);

// Load grids for the checks and plans that search a curve: concurrencies
// 1..min(top, 256), then steps of ×1.25 up to top, plus `include`; arrival
// rates unit·k/64 for k = 1..sixty_fourths.
v1::ClosedLoopAxis ConcurrencyGrid(uint32_t top,
                                   std::optional<uint32_t> include = std::nullopt);
v1::OpenLoopAxis RateGrid(double unit_rps, int sixty_fourths);

// The concurrency gate a baseline ran behind, if it names one.
std::optional<int> BaselineGate(const v1::Baseline& baseline);

// A catalogue baseline made ready to fit on its own deployment: what the
// deployment is, its measured rows and the calibration context (with the
// baseline's gate). FAILED_PRECONDITION with fewer than `min_rows` rows, the
// message naming `purpose` ("leave-one-out needs at least 2").
struct BaselineFitSetup {
  DeploymentPerformance performance;
  std::vector<SourcedPoint> points;
  model::CalibrationContext context;
};
absl::StatusOr<BaselineFitSetup> PrepareBaselineFit(const Catalog& catalog,
                                                    const v1::Baseline& baseline,
                                                    bool allow_withheld_hardware,
                                                    size_t min_rows,
                                                    absl::string_view purpose);

// Where no baseline measured the configuration, step-time efficiencies are
// borrowed from a baseline of another one: the hardware class decides first
// (same card, then same architecture, then same vendor), the model second.
// Higher is closer; candidates are tried in decreasing rank.
int TransferRank(const v1::Hardware& target, const v1::Hardware& candidate,
                 bool same_model);

// Speculative decoding with `draft_tokens` drafts at `acceptance_rate` for
// this deployment's draft layers.
model::SpeculativeDecoding SpeculationFor(const DeploymentPerformance& performance,
                                          int draft_tokens, double acceptance_rate);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_LOAD_H_
