#ifndef CAPPLAN_SERVICE_PLANNER_PREPARED_H_
#define CAPPLAN_SERVICE_PLANNER_PREPARED_H_

// A request prepared once (DESIGN §1, STYLE 17): the deployment resolved,
// its memory plan computed and the load model's inputs derived
// (PreparedDeployment); then, for a workload, the step-time coefficients
// fitted and the slots sized (PreparedLoad). Every curve, safe point,
// capacity and finding of the request is drawn from these two objects.
//
// Where the coefficients come from, in order:
//   1. rows of catalogue baselines of this configuration (BaselineMatches,
//      and the baseline the deployment starts from) plus the request's
//      inline calibration sweeps (no_catalog_calibration drops the
//      catalogue's rows), fitted with the closest efficiency prior
//      (priors.h) as a prior: CALIBRATED, or MEASURED where a row is the
//      request's point;
//   2. otherwise the closest prior as it is (its hardware class,
//      architecture, or the global one): EXTRAPOLATED, its band the prior's
//      error on baselines it was fitted without; under no_catalog_calibration
//      the global prior only (the roofline with the corpus' typical
//      efficiencies): ROOFLINE;
//   3. otherwise (a catalogue without priors) the bare roofline (α = 0, every
//      β = 1): ROOFLINE.
// A baseline that withholds its GPU (seed 000) is fitted and predicted in the
// card's unknown units: bandwidths and peak FLOP/s are 1, so each β carries
// the unknown card's 1 / bandwidth; such a fit never transfers.

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "model/budget.h"
#include "model/calibration.h"
#include "model/load_fit.h"
#include "model/measured_correction.h"
#include "model/memory_model.h"
#include "model/queueing.h"
#include "model/step_time.h"
#include "service/catalog/catalog.h"
#include "service/translate/deployment_resolver.h"
#include "service/translate/load_translation.h"

namespace capplan::service {

// How often a request ran the expensive steps. Tests pass one in to check
// that each step runs once per request; nullptr counts nothing.
struct WorkCounters {
  int memory_plans = 0;  // model::PlanMemory calls
  int fits = 0;          // step-time fits
};

// What to predict, without the load axis.
struct LoadQuery {
  v1::WorkloadSpec workload;
  v1::Slo slo;
  std::vector<v1::Sweep> calibration;
  bool no_catalog_calibration = false;
  std::optional<uint32_t> operator_concurrency_gate;
  // Field path of the query in error messages.
  std::string path = "PredictLoadRequest";
  // The request's budget (may be null: no cap, no stop signal): each curve's
  // estimated work is checked against its cap and the model stops when it
  // is stopped.
  model::Budget* budget = nullptr;
};

// Exactly one of the two.
struct LoadAxis {
  std::optional<v1::ClosedLoopAxis> closed_loop;
  std::optional<v1::OpenLoopAxis> open_loop;
};

// INVALID_ARGUMENT naming the field: "PredictLoadRequest.workload.input_tokens
// = 0; must be > 0", SLOs <= 0, a zero gate.
absl::Status ValidateLoadQuery(const LoadQuery& query);
// Non-positive rates, more than model::kMaxLoadPoints points, a load list not
// strictly increasing, no axis or both; `path` prefixes the field.
absl::Status ValidateLoadAxis(const LoadAxis& axis, const std::string& path);

// The deployment as the step-time and queueing model see it.
struct DeploymentPerformance {
  model::StepTimeInputs inputs;
  model::SchedulerConfig scheduler;
  // Speculative decoding of the deployment with its acceptance rate unknown
  // (0) until fitted; nullopt without speculation.
  std::optional<model::SpeculativeDecoding> speculative;
  // What one draft pass of the model's own draft (MTP) layers costs, whether
  // or not the deployment speculates (measured speculative rows of the model
  // are fitted with it); nullopt for a model without draft layers.
  std::optional<model::SpeculativeDecoding> draft;
  // Every limit except the operator gate (filled per use).
  model::SlotLimits limits;
  // False for a withheld card: inputs in unit speeds, no physical floor.
  bool speeds_known = true;
  std::vector<std::string> notes;
};

// A resolved deployment with its memory plan and load-model inputs.
struct PreparedDeployment {
  ResolvedDeployment resolved;
  bool hardware_withheld = false;
  model::MemoryPlan model_memory;
  // The API's account; for a withheld card only weights and KV bytes per
  // token, with the pool the baseline states.
  v1::MemoryPlan memory;
  // The load model's inputs; valid only when performance_status is OK
  // (FAILED_PRECONDITION when the card lacks a figure the step-time model
  // needs: bandwidth, peak compute, an intra-node link for TP > 1). A memory
  // plan needs none of them.
  DeploymentPerformance performance;
  absl::Status performance_status;
};

// Plans the memory once and derives the load model's inputs; errors of the
// memory model come back prefixed with the deployment's field path.
// `model_plan` (optional): the memory model's plan of resolved.input, already
// made (a search's prepared model made it); used instead of planning again
// when the card is known.
absl::StatusOr<PreparedDeployment> PrepareDeployment(
    const Catalog& catalog, ResolvedDeployment resolved,
    std::optional<uint64_t> mean_sequence_tokens, WorkCounters* counters,
    const model::MemoryPlan* model_plan = nullptr);

// What a search bounds a candidate with: the step-time inputs, scheduler
// and slot limits of a resolved deployment on a known card, from its model
// memory plan alone (no API account, no fit, no speculation; the pool is
// the model's, not a baseline's). FAILED_PRECONDITION as performance_status.
struct BoundInputs {
  model::PerformanceModel model;  // coefficients left at their defaults
  model::SlotLimits limits;
};
// `input` is the resolved input with another parallelism or engine settings
// (same card and weight format).
// `counts` (optional): the model's parameter counts, computed once.
absl::StatusOr<BoundInputs> BoundInputsFor(const ResolvedDeployment& resolved,
                                           const model::MemoryPlanInput& input,
                                           const model::MemoryPlan& plan,
                                           const model::ParameterCounts* counts = nullptr);

// Where the coefficients came from.
struct FitSource {
  std::optional<model::StepTimeFit> fit;
  model::Tier base_tier = model::Tier::kRoofline;  // kCalibrated, kExtrapolated or kRoofline
  std::vector<std::string> baseline_ids;
  bool inline_calibration = false;
  std::vector<SourcedPoint> own_points;     // this configuration's rows
  std::vector<SourcedPoint> inline_points;  // the request's calibration rows
  std::string prior_id;  // the efficiency prior used (shrunk towards, or taken as is)
  // The operator gate the catalogue's rows ran behind (their baselines'),
  // whatever the query sets.
  std::optional<int> rows_gate;
};

// A prepared deployment with a workload: coefficients fitted once, slots
// sized, the performance model complete.
struct PreparedLoad {
  const PreparedDeployment* deployment = nullptr;  // outlives this object
  LoadQuery query;
  model::Workload workload;
  std::optional<int> gate;
  FitSource source;
  model::PerformanceModel performance_model;
  model::SlotLimits limits;
  std::vector<std::string> notes;
  // The catalogue's error-band factors (bands.h), applied to every band.
  std::vector<v1::ErrorBandScale> band_scales;
  // The residuals of this configuration's rows (own and inline) of the
  // query's workload and speculative setting against the fitted model: each
  // curve is corrected by them (model/measured_correction.h).
  std::vector<model::RowResidual> residuals;
  // The load-dependent server of the workload and limits above, built by the
  // first curve drawn (DrawCurve) and reused by the next: one per request.
  mutable std::optional<model::LoadDependentServer> server;
};

// FAILED_PRECONDITION for a deployment that does not fit (it serves
// nothing) or speculates with no acceptance rate known.
absl::StatusOr<PreparedLoad> PrepareLoad(const Catalog& catalog,
                                         const PreparedDeployment& deployment,
                                         const LoadQuery& query, WorkCounters* counters);

// The curve along one axis, from the prepared load alone. RESOURCE_EXHAUSTED
// when its estimated work (model/cost.h) is above the query's budget cap,
// naming the axis (`axis_field`, the client's axis, e.g.
// "PredictLoadRequest.closed_loop") and the cap; a grid the planner chose
// itself (no `axis_field`: Plan's and Validate's searches) gets
// kSearchGridWorkFactor times the cap. The budget's status when it stops the
// work.
inline constexpr double kSearchGridWorkFactor = 3;
// The words of the note a curve carries when the measured rows corrected it
// (Plan and the CLI read the note by them).
inline constexpr char kMeasuredCorrectionNote[] = "corrected by the residuals";
// kToSafePoint: latency figures only up to the first point that fails the
// query's SLO (model::LatencyCutoff), for callers that read the safe
// operating point alone; no knee.
enum class CurveFigures { kEveryPoint, kToSafePoint };
absl::StatusOr<v1::LoadCurve> DrawCurve(const PreparedLoad& load, const LoadAxis& axis,
                                        const std::string& axis_field = "",
                                        CurveFigures figures = CurveFigures::kEveryPoint);

// INVALID_ARGUMENT when a request of the workload (input + output tokens)
// does not fit the deployment's context (its max_model_len, or the model's
// native context): "<path>.workload.input_tokens = 300000; input_tokens +
// output_tokens = 300500 must not exceed the context of 40960 tokens".
absl::Status CheckWorkloadWithinContext(const v1::WorkloadSpec& workload,
                                        const PreparedDeployment& deployment,
                                        const std::string& path);

// ---------------------------------------------------------------- fitting

// The concurrency gate a baseline ran behind, if it names one.
std::optional<int> BaselineGate(const v1::Baseline& baseline);

// Speculative decoding with `draft_tokens` drafts at `acceptance_rate` for
// this deployment's draft layers.
model::SpeculativeDecoding SpeculationFor(const DeploymentPerformance& performance,
                                          int draft_tokens, double acceptance_rate);

// The deployment's slot limits behind an operator gate.
model::SlotLimits SlotLimitsFor(const DeploymentPerformance& performance, std::optional<int> gate);

// The calibration context of a deployment: its inputs, scheduler and slots
// (S with `gate` and the workload).
absl::StatusOr<model::CalibrationContext> CalibrationContextFor(
    const DeploymentPerformance& performance, const model::Workload& workload,
    std::optional<int> gate);

// Fits the coefficients on sourced points (speculative points get the
// deployment's draft layers with their own draft length).
absl::StatusOr<model::StepTimeFit> FitOnPoints(
    const model::CalibrationContext& context, const DeploymentPerformance& performance,
    const std::vector<SourcedPoint>& points, WorkCounters* counters,
    const std::optional<model::CoefficientPrior>& prior = std::nullopt);

// A catalogue baseline made ready to fit on its own deployment: what the
// deployment is, its measured rows and the calibration context (with the
// baseline's gate). FAILED_PRECONDITION with fewer than `min_rows` rows, the
// message naming `purpose` ("leave-one-out needs at least 2").
struct BaselineFitSetup {
  PreparedDeployment deployment;
  std::vector<SourcedPoint> points;
  model::CalibrationContext context;
};
absl::StatusOr<BaselineFitSetup> PrepareBaselineFit(const Catalog& catalog,
                                                    const v1::Baseline& baseline,
                                                    bool allow_withheld_hardware, size_t min_rows,
                                                    absl::string_view purpose,
                                                    WorkCounters* counters);

// Chooses and fits the coefficients for a prepared deployment (the order in
// the header comment).
absl::StatusOr<FitSource> ChooseFit(const Catalog& catalog, const PreparedDeployment& deployment,
                                    const LoadQuery& query, std::optional<int> gate,
                                    std::vector<std::string>* notes, WorkCounters* counters);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_PREPARED_H_
