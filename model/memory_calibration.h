#ifndef CAPPLAN_MODEL_MEMORY_CALIBRATION_H_
#define CAPPLAN_MODEL_MEMORY_CALIBRATION_H_

// Fitting the memory model's non-engine coefficients (activation scale,
// sampler copies, non-torch terms, CUDA graphs) to real engine start-up
// logs, and checking them on logs they were not fitted on.
//
// Each log gives the pool the engine reported; the engine's budget rule turns
// it into the overhead the engine subtracted (DESIGN §3):
//   vLLM        total × fraction − weights − pool − (graphs, when budgeted)
//   SGLang      total − (pool + weights) / fraction   (memory lost before load)
//   TRT PyTorch total + temporary pool − pool / fraction − weights
//   TRT engine  total − pool / fraction − weights
// and that overhead is a non-negative combination of the terms of
// OverheadTerms, fitted per engine family by regularised non-negative least
// squares (rank-revealing, complete orthogonal decomposition). Engine facts
// (the rules) stay as the presets state them.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "model/memory_model.h"

namespace capplan::model {

// One linear coefficient of an overhead fit. The prior pulls the coefficient
// towards `prior` with `prior_weight_bytes` of residual per unit of deviation
// (0 = no pull), which keeps a coefficient that no log determines at its
// prior instead of leaving the system rank-deficient.
// `floor` is the least value the coefficient can physically take (a
// sampler materialises its fp32 logits at least once); the fit never goes
// below it.
struct FitColumn {
  std::string name;
  double prior = 0.0;
  double prior_weight_bytes = 0.0;
  double floor = 0.0;
  // The largest value the mechanism allows (0 = none): a fit that would go
  // past it pins the column there, so the column cannot soak up a log's
  // unexplained bytes that the robust loss should reject instead.
  double ceiling = 0.0;
};

// One observation: y ≈ Σ θ[c] · x + max(θ[token] · token, θ[sampler] · sampler).
struct FitRow {
  double y_bytes = 0.0;
  std::vector<std::pair<int, double>> terms;  // (column, term)
  int token_column = -1;                      // -1 = no max() pair
  double token_term = 0.0;
  int sampler_column = -1;
  double sampler_term = 0.0;
};

struct LinearFit {
  std::vector<double> theta;  // per column, each >= its floor (>= 0)
  double rms_residual_bytes = 0.0;
  int rank = 0;  // numerical rank of the final design (prior rows included)
};

// Non-negative regularised least squares with the max() resolved by
// iterating which phase dominates each row; coefficients below their floor
// (0 unless the column states one) are pinned at it. InvalidArgument on an
// empty or non-finite system, a bad column or a negative or non-finite floor.
absl::StatusOr<LinearFit> FitNonNegative(const std::vector<FitRow>& rows,
                                         const std::vector<FitColumn>& columns);

// A real start-up log: the deployment (with its preset's behaviour) and what
// the engine reported.
struct StartupLog {
  std::string id;
  std::string preset_id;
  MemoryPlanInput input;
  int64_t kv_pool_tokens = 0;
  std::optional<double> weights_bytes;     // per GPU, as the log states
  std::optional<double> cuda_graph_bytes;  // captured CUDA-graph memory, as the log states
  // Parts of the overhead the log itemises (a V0 'Memory profiling results'
  // line, TensorRT-LLM's profiling lines): each is a row of its own.
  std::optional<double> activation_bytes;
  std::optional<double> non_torch_bytes;
  // The itemised parts are a non-driver worker's (vLLM V0 with TP): its
  // activation peak is the forward pass alone, the sampler runs on rank 0.
  bool itemised_on_worker = false;
};

struct CalibrationFit {
  std::map<std::string, EngineBehaviour> presets;  // id → behaviour with fitted coefficients
  std::vector<std::string> report;                 // one line per fitted family
};

// Fits the coefficients of `presets` (keyed by preset id) on every log but
// `leave_out`; presets no log uses keep their priors. Logs whose preset is not
// in `presets` are an InvalidArgument.
absl::StatusOr<CalibrationFit> CalibrateEnginePresets(
    const std::vector<StartupLog>& logs, const std::map<std::string, EngineBehaviour>& presets,
    absl::string_view leave_out = "");

// The overhead the engine subtracted on `log` (bytes, per the table above),
// the log's weights where it states them, else the model's.
absl::StatusOr<double> ObservedOverheadBytes(const StartupLog& log);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_MEMORY_CALIBRATION_H_
