#include "model/memory_calibration.h"

#include <algorithm>
#include <cmath>

#include "Eigen/Dense"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"

namespace capplan::model {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr int kMaxFitIterations = 30;
// A pinned column is released when its gradient exceeds this share of the
// gradient's scale (|column| x |residual|) towards the inside of its bounds.
constexpr double kReleaseTolerance = 1e-9;

// Priors of the fitted coefficients: what the engines' code suggests before
// any log is read, with a pull (bytes of residual per unit of deviation)
// that lets a few consistent logs move a coefficient where they agree while
// one log the model cannot explain moves it by a fraction of a GiB only.
constexpr double kActivationScalePrior = 1.0;  // the width formula as it stands
constexpr double kActivationPriorWeightBytes = 2.0 * kGiB;
// fp32 logits and their probabilities (a fused top-k/top-p sampler).
constexpr double kSamplerCopiesPrior = 2.0;
// The dummy sampler run that vLLM's profile ends with computes the logits
// of max_num_seqs rows (vllm/v1/worker/gpu_model_runner.py,
// _dummy_sampler_run) and the sampler casts them to float32 before it
// samples (vllm/v1/sample/sampler.py, Sampler.forward): one fp32 copy of
// [max_num_seqs, vocab] at least, so no fit may give fewer.
constexpr double kSamplerCopiesFloor = 1.0;
// The most copies a sampler path read so far holds at once: the
// PyTorch-native top-k/top-p (V0's and V1's) peaks inside torch.sort, 9.5
// fp32 [max_num_seqs, vocab] units with 128 or more rows (the logits, their
// sorted values and indices, and 5 units of the sort's scratch; the
// vllm-v1-0.9 preset's sources); V0 holds 8 at the end of
// _apply_top_k_top_p (the vllm-v0-* presets' sources). No fit may give more:
// bytes beyond it are another mechanism than the sampler. Two V1 groups
// sit on it (0.8, 0.11), whose releases take that same sort by default
// (0.8 refuses FlashInfer 0.2.3+, vLLM PR #14815; 0.11.1+ switched
// FlashInfer off, PR #26859): the ceiling sits half a unit above the
// count, and what they hold beyond it is not explained
// (docs/research/vllm_v1_sampler_defaults.md).
constexpr double kSamplerCopiesCeiling = 10.0;
// A prior counted in the engine's own code (EngineBehaviour.
// sampler_logit_copies_prior) holds firmly: a few logs of other engines'
// builds (ROCm, say) move it by about a copy, not by several.
constexpr double kCountedSamplerPriorWeightBytes = 0.2 * kGiB;
constexpr double kSamplerPriorWeightBytes = 0.02 * kGiB;
constexpr double kDecoderPriorWeightBytes = 0.02 * kGiB;
// Byte terms: weight per byte of deviation, towards a CUDA context's worth
// (bases), one NCCL / custom all-reduce buffer set (per extra rank), the
// driver process's second context, and nothing extra on unified memory.
constexpr double kBytesPriorWeight = 0.5;
constexpr double kBasePriorBytes = 0.25 * kGiB;
// The ROCm extra has no size in the code read (the HIP runtime, hipBLASLt
// and RCCL allocate through their own paths), so its pull towards 0 is a
// tenth of the others': ROCm logs set it rather than the CUDA base beside it.
constexpr double kRocmPriorWeight = 0.1 * kBytesPriorWeight;
constexpr double kPerRankPriorBytes = 0.15 * kGiB;
constexpr double kDriverPriorBytes = 0.5 * kGiB;
// Robust loss: residuals beyond this count linearly (Huber, by iteratively
// reweighted least squares), so one log whose engine did something the
// model does not know cannot drag every other log's coefficients.
constexpr double kHuberThresholdBytes = 0.25 * kGiB;
constexpr int kHuberRounds = 8;
// Then Tukey's biweight: a log the others miss by more than this (an engine
// behaviour the model does not know, e.g. a profile run that left 21 GiB
// nobody explains) stops pulling the coefficients at all.
constexpr double kTukeyRejectBytes = 2.0 * kGiB;
constexpr int kTukeyRounds = 8;

absl::Status Invalid(const std::string& message) {
  return absl::InvalidArgumentError(absl::StrCat("FitNonNegative: ", message));
}

bool TokenDominates(const FitRow& r, const std::vector<double>& theta) {
  if (r.sampler_column < 0) return true;
  return theta[r.token_column] * r.token_term >= theta[r.sampler_column] * r.sampler_term;
}

double Predict(const FitRow& r, const std::vector<double>& theta) {
  double p = 0.0;
  for (const auto& [c, x] : r.terms) p += theta[c] * x;
  if (r.token_column >= 0) {
    const double sampler = r.sampler_column >= 0 ? theta[r.sampler_column] * r.sampler_term : 0.0;
    p += std::max(theta[r.token_column] * r.token_term, sampler);
  }
  return p;
}

absl::Status CheckSystem(const std::vector<FitRow>& rows, const std::vector<FitColumn>& columns) {
  if (rows.empty()) return Invalid("no rows");
  if (columns.empty()) return Invalid("no columns");
  const int n = static_cast<int>(columns.size());
  for (const FitColumn& c : columns) {
    if (!std::isfinite(c.floor) || c.floor < 0) {
      return Invalid(absl::StrCat("column '", c.name, "' has floor ", c.floor,
                                  "; a floor must be finite and >= 0"));
    }
    if (!std::isfinite(c.ceiling) || c.ceiling < 0 || (c.ceiling > 0 && c.ceiling < c.floor)) {
      return Invalid(absl::StrCat("column '", c.name, "' has ceiling ", c.ceiling,
                                  "; a ceiling must be 0 (none) or finite and >= the floor ",
                                  c.floor));
    }
  }
  auto bad = [n](int c) { return c < -1 || c >= n; };
  for (size_t i = 0; i < rows.size(); ++i) {
    const FitRow& r = rows[i];
    if (!std::isfinite(r.y_bytes) || !std::isfinite(r.token_term) ||
        !std::isfinite(r.sampler_term)) {
      return Invalid(absl::StrCat("row ", i, " is not finite"));
    }
    if (bad(r.token_column) || bad(r.sampler_column) ||
        (r.sampler_column >= 0 && r.token_column < 0)) {
      return Invalid(absl::StrCat("row ", i, " names a column outside [0, ", n, ")"));
    }
    for (const auto& [c, x] : r.terms) {
      if (c < 0 || c >= n || !std::isfinite(x)) {
        return Invalid(absl::StrCat("row ", i, " has a bad term for column ", c));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

namespace {

// A value held to a column's floor and ceiling (0 = none).
double WithinBounds(const FitColumn& c, double v) {
  v = std::max(c.floor, v);
  return c.ceiling > 0 ? std::min(c.ceiling, v) : v;
}

// One weighted non-negative solve: the max() assignment and the pinned
// columns iterated to a fixed point. `theta` holds the starting point.
int SolveWeighted(const std::vector<FitRow>& rows, const std::vector<FitColumn>& columns,
                  const std::vector<double>& weights, std::vector<double>& theta) {
  const int n = static_cast<int>(columns.size());
  const int m = static_cast<int>(rows.size());
  std::vector<bool> pinned(n, false);
  std::vector<double> pin(n, 0.0);  // the bound a pinned column sits at
  // A column whose bounds meet is a fixed value from the first solve.
  for (int c = 0; c < n; ++c) {
    if (columns[c].ceiling > 0 && columns[c].floor == columns[c].ceiling) {
      pinned[c] = true;
      pin[c] = columns[c].floor;
    }
  }
  auto bounded = [&columns](int c, double v) { return WithinBounds(columns[c], v); };
  std::vector<bool> token(m);
  for (int i = 0; i < m; ++i) token[i] = TokenDominates(rows[i], theta);
  int rank = 0;
  for (int iter = 0; iter < kMaxFitIterations; ++iter) {
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(m + n, n);
    Eigen::VectorXd b = Eigen::VectorXd::Zero(m + n);
    for (int i = 0; i < m; ++i) {
      const FitRow& r = rows[i];
      const double w = std::sqrt(weights[i]);
      b(i) = w * r.y_bytes;
      for (const auto& [c, x] : r.terms) a(i, c) += w * x;
      if (r.token_column >= 0) {
        if (token[i]) {
          a(i, r.token_column) += w * r.token_term;
        } else {
          a(i, r.sampler_column) += w * r.sampler_term;
        }
      }
    }
    for (int c = 0; c < n; ++c) {
      a(m + c, c) = columns[c].prior_weight_bytes;
      b(m + c) = columns[c].prior_weight_bytes * columns[c].prior;
    }
    // The system before pinning, for the release test below.
    const Eigen::MatrixXd a_full = a;
    const Eigen::VectorXd b_full = b;
    // A pinned column sits at its bound: its part moves to the right side.
    for (int c = 0; c < n; ++c) {
      if (!pinned[c]) continue;
      b -= a.col(c) * pin[c];
      a.col(c).setZero();
    }
    Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(a);
    const Eigen::VectorXd solved = cod.solve(b);
    rank = static_cast<int>(cod.rank());
    for (int c = 0; c < n; ++c) theta[c] = pinned[c] ? pin[c] : solved(c);
    bool changed = false;
    std::vector<double> clipped(theta);
    for (int c = 0; c < n; ++c) clipped[c] = bounded(c, clipped[c]);
    for (int i = 0; i < m; ++i) {
      const bool now = TokenDominates(rows[i], clipped);
      changed |= now != token[i];
      token[i] = now;
    }
    if (!changed) {
      for (int c = 0; c < n; ++c) {
        if (pinned[c]) continue;
        if (theta[c] < columns[c].floor) {
          pinned[c] = true;
          pin[c] = columns[c].floor;
          changed = true;
        } else if (columns[c].ceiling > 0 && theta[c] > columns[c].ceiling) {
          pinned[c] = true;
          pin[c] = columns[c].ceiling;
          changed = true;
        }
      }
    }
    if (!changed) {
      // Every free column is inside its bounds: release a pinned column
      // whose gradient says the objective falls towards the inside (its
      // Lagrange multiplier has the wrong sign), as an active-set method
      // must; a column pinned with another in one pass may not need its pin
      // once the other sits at its bound.
      // One column per pass, the one whose gradient points furthest inside
      // (as Lawson-Hanson's NNLS frees one variable at a time), so that a
      // release cannot undo another in the same pass.
      Eigen::VectorXd th(n);
      for (int c = 0; c < n; ++c) th(c) = theta[c];
      const Eigen::VectorXd residual = a_full * th - b_full;
      int release = -1;
      double strongest = kReleaseTolerance;
      for (int c = 0; c < n; ++c) {
        if (!pinned[c]) continue;
        const double scale = a_full.col(c).norm() * residual.norm();
        if (!(scale > 0) || (columns[c].ceiling > 0 && columns[c].floor == columns[c].ceiling)) {
          continue;  // no room inside: a fixed value
        }
        // Positive: the objective falls as the column moves inside.
        const double inward = (pin[c] == columns[c].floor ? -1.0 : 1.0) *
                              a_full.col(c).dot(residual) / scale;
        if (inward > strongest) {
          strongest = inward;
          release = c;
        }
      }
      if (release >= 0) {
        pinned[release] = false;
        changed = true;
      }
    }
    if (!changed) break;
  }
  for (int c = 0; c < n; ++c) theta[c] = bounded(c, theta[c]);
  return rank;
}

}  // namespace

namespace {

double TukeyLoss(double residual) {
  const double c = kTukeyRejectBytes;
  const double u = std::min(1.0, std::fabs(residual) / c);
  return c * c / 6.0 * (1.0 - std::pow(1.0 - u * u, 3));
}

void TukeyWeights(const std::vector<FitRow>& rows, const std::vector<double>& theta,
                  std::vector<double>& weights) {
  for (size_t i = 0; i < rows.size(); ++i) {
    const double u = std::fabs(Predict(rows[i], theta) - rows[i].y_bytes) / kTukeyRejectBytes;
    weights[i] = u < 1.0 ? (1.0 - u * u) * (1.0 - u * u) : 0.0;
  }
}

// The robust objective: Tukey's loss over the rows plus the priors' pull.
double Objective(const std::vector<FitRow>& rows, const std::vector<FitColumn>& columns,
                 const std::vector<double>& theta) {
  double loss = 0.0;
  for (const FitRow& r : rows) loss += TukeyLoss(Predict(r, theta) - r.y_bytes);
  for (size_t c = 0; c < columns.size(); ++c) {
    loss += std::pow(columns[c].prior_weight_bytes * (theta[c] - columns[c].prior), 2);
  }
  return loss;
}

// Tukey rounds from `theta` (iteratively reweighted); returns the rank.
int TukeyRefine(const std::vector<FitRow>& rows, const std::vector<FitColumn>& columns,
                std::vector<double>& theta) {
  std::vector<double> weights(rows.size(), 1.0);
  int rank = 0;
  for (int round = 0; round < kTukeyRounds; ++round) {
    TukeyWeights(rows, theta, weights);
    rank = SolveWeighted(rows, columns, weights, theta);
  }
  return rank;
}

}  // namespace

absl::StatusOr<LinearFit> FitNonNegative(const std::vector<FitRow>& rows,
                                         const std::vector<FitColumn>& columns) {
  if (absl::Status s = CheckSystem(rows, columns); !s.ok()) return s;
  const int n = static_cast<int>(columns.size());
  const int m = static_cast<int>(rows.size());
  std::vector<double> priors(n);
  for (int c = 0; c < n; ++c) priors[c] = WithinBounds(columns[c], columns[c].prior);
  // Two starts for the non-convex robust fit, the better objective kept:
  // a Huber fit (every log pulls, the far ones linearly), and the priors.
  std::vector<double> from_huber = priors;
  std::vector<double> weights(m, 1.0);
  int rank_first = 0;
  for (int round = 0; round < kHuberRounds; ++round) {
    rank_first = SolveWeighted(rows, columns, weights, from_huber);
    for (int i = 0; i < m; ++i) {
      const double r = std::fabs(Predict(rows[i], from_huber) - rows[i].y_bytes);
      weights[i] = r <= kHuberThresholdBytes ? 1.0 : kHuberThresholdBytes / r;
    }
  }
  const int rank_huber = kTukeyRounds > 0 ? TukeyRefine(rows, columns, from_huber) : rank_first;
  std::vector<double> from_priors = priors;
  const int rank_priors = TukeyRefine(rows, columns, from_priors);
  const bool huber_better = kTukeyRounds == 0 || Objective(rows, columns, from_huber) <=
                                                     Objective(rows, columns, from_priors);
  LinearFit fit;
  fit.rank = huber_better ? rank_huber : rank_priors;
  fit.theta = huber_better ? from_huber : from_priors;
  double sq = 0.0;
  for (const FitRow& r : rows) sq += std::pow(Predict(r, fit.theta) - r.y_bytes, 2);
  fit.rms_residual_bytes = std::sqrt(sq / m);
  return fit;
}

absl::StatusOr<double> ObservedOverheadBytes(const StartupLog& log) {
  absl::StatusOr<MemoryPlan> plan = PlanMemory(log.input);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<double> pool = PoolBytesForTokens(log.input, log.kv_pool_tokens);
  if (!pool.ok()) return pool.status();
  const double weights = log.weights_bytes.value_or(plan->per_gpu.weights_bytes);
  const double total = CudaTotalBytes(log.input.hardware);
  const double fraction = plan->memory_fraction;
  // Where the pool comes out of the device's free memory, what other
  // processes held (a stated free memory at start) is not the engine's.
  const double free_at_start = log.input.settings.free_memory_at_start_bytes;
  const double others = log.input.engine.pool_lowered_by_other_processes && free_at_start > 0
                            ? std::max(0.0, total - free_at_start)
                            : 0.0;
  switch (log.input.engine.budget_rule) {
    case BudgetRule::kVllmTotalMinusPeak:
    case BudgetRule::kVllmProfiled:
      return total * fraction - weights - *pool - others -
             (log.input.engine.cuda_graph_in_kv_budget ? plan->per_gpu.cuda_graph_bytes : 0.0);
    case BudgetRule::kSglangStatic:
      return total - (*pool + weights) / fraction;
    case BudgetRule::kTrtllmFreeFraction:
      return total - others +
             static_cast<double>(plan->profile_pool_tokens) * plan->kv_bytes_per_token -
             *pool / fraction - weights;
    case BudgetRule::kTrtllmEngineFree:
      return total - others - *pool / fraction - weights;
  }
  return absl::InternalError("unknown budget rule");
}

namespace {

// The columns a preset's coefficients come from; empty = not fitted.
struct PresetColumns {
  std::string family;
  std::string activation, sampler, base, rank, unified, driver, decoder, fast_link, rocm;
  std::string native_sampler;  // deployments on the native top-k/top-p sampler
};

// The sampler column of one log: its preset's native group when the
// deployment runs the native sampler and the preset has one.
const std::string& SamplerColumnOf(const PresetColumns& pc, const StartupLog& log) {
  return UsesNativeSamplerGroup(log.input.engine, log.input.settings) ? pc.native_sampler
                                                                      : pc.sampler;
}

PresetColumns ColumnsOf(const std::string& id, const EngineBehaviour& e) {
  PresetColumns c;
  const std::string sampler_group = e.sampler_fit_group.empty() ? id : e.sampler_fit_group;
  switch (e.engine) {
    case EngineKind::kVllm: {
      c.family = "vllm";
      c.activation = e.activation_fit_group.empty()
                         ? "vllm activation scale"
                         : "vllm activation scale (" + e.activation_fit_group + ")";
      c.sampler = "vllm sampler copies " + sampler_group;
      if (!e.native_sampler_fit_group.empty()) {
        c.native_sampler = "vllm sampler copies " + e.native_sampler_fit_group;
      }
      const std::string base_group =
          !e.non_torch_base_fit_group.empty() ? "(" + e.non_torch_base_fit_group + ")"
          : e.budget_rule == BudgetRule::kVllmTotalMinusPeak ? "(total minus peak)"
                                                             : "(profiled)";
      c.base = "vllm base " + base_group;
      c.rank = "vllm per extra rank";
      // One flat amount per GPU once there is more than one, on every link:
      // the per-rank term is then not the preset's (it stays 0).
      if (e.non_torch_flat_on_every_link) {
        c.rank.clear();
        c.fast_link = "vllm multi-gpu set-up";
      }
      c.unified = "vllm unified memory";
      // Each base group counts another slice of the runtime (the whole
      // device up to 0.3.0, the fall since init to 0.6.3, the growth over a
      // snapshot later), so the ROCm extra goes with the base's group.
      c.rocm = "vllm ROCm runtime " + base_group;
      // V0 keeps the smallest pool over its workers; rank 0 binds because
      // only the driver worker runs the sampler, which the max() of the
      // activation terms already holds: no driver column.
      break;
    }
    case EngineKind::kSglang:
      c.family = "sglang";
      c.base = "sglang base";
      c.rank = "sglang per extra rank";
      c.unified = "sglang unified memory";
      c.rocm = "sglang ROCm runtime";
      // The distributed set-up over NVLink / xGMI: no prior of its own (a
      // column named without "base" or "per extra rank" is pulled towards 0).
      if (e.non_torch_flat_on_fast_link) c.fast_link = "sglang multi-gpu set-up (fast link)";
      break;
    case EngineKind::kTrtllm:
      c.family = "trtllm";
      c.rank = "trtllm per extra rank";
      if (e.budget_rule == BudgetRule::kTrtllmEngineFree) {
        c.activation = "trtllm engine context scale";
        c.decoder = "trtllm decoder copies";
        c.base = "trtllm base (engine)";
        if (e.kv_pool_min_over_ranks) c.driver = "trtllm driver rank";
      } else {
        c.activation = "trtllm activation scale";
        c.base = "trtllm base (pytorch)";
        c.unified = "trtllm unified memory";
      }
      break;
  }
  return c;
}

FitColumn ColumnNamed(const std::string& name) {
  FitColumn c;
  c.name = name;
  if (name.find("scale") != std::string::npos) {
    c.prior = kActivationScalePrior;
    c.prior_weight_bytes = kActivationPriorWeightBytes;
  } else if (name.find("sampler copies") != std::string::npos) {
    c.prior = kSamplerCopiesPrior;
    c.prior_weight_bytes = kSamplerPriorWeightBytes;
    c.floor = kSamplerCopiesFloor;
    c.ceiling = kSamplerCopiesCeiling;
  } else if (name.find("decoder copies") != std::string::npos) {
    c.prior_weight_bytes = kDecoderPriorWeightBytes;
  } else {
    c.prior_weight_bytes = kBytesPriorWeight;
    if (name.find("base") != std::string::npos) c.prior = kBasePriorBytes;
    if (name.find("ROCm runtime") != std::string::npos) c.prior_weight_bytes = kRocmPriorWeight;
    if (name.find("per extra rank") != std::string::npos) c.prior = kPerRankPriorBytes;
    if (name.find("driver") != std::string::npos) c.prior = kDriverPriorBytes;
  }
  return c;
}

struct Family {
  std::vector<FitColumn> columns;
  std::map<std::string, int> index;
  std::vector<FitRow> rows;
  std::vector<std::string> row_ids;

  int Column(const std::string& name) {
    if (name.empty()) return -1;
    auto it = index.find(name);
    if (it != index.end()) return it->second;
    index[name] = static_cast<int>(columns.size());
    columns.push_back(ColumnNamed(name));
    return index[name];
  }
};

// Appends x times the named column to r; a column the preset does not fit
// (empty name) or a zero term adds nothing.
void AddTerm(FitRow& r, Family& f, const std::string& name, double x) {
  const int c = f.Column(name);
  if (c >= 0 && x != 0.0) r.terms.emplace_back(c, x);
}

// The non-torch terms every row of non-torch memory carries: the base, per
// extra rank or the fast-link amount, unified memory, ROCm.
void AddNonTorchTerms(FitRow& r, Family& f, const PresetColumns& pc, const OverheadTerms& t) {
  AddTerm(r, f, pc.base, 1.0);
  AddTerm(r, f, pc.rank, t.extra_ranks);
  AddTerm(r, f, pc.fast_link, t.fast_link_multi_gpu);
  AddTerm(r, f, pc.unified, t.unified);
  AddTerm(r, f, pc.rocm, t.rocm);
}

// The log's row: its observed overhead against its preset's terms.
absl::StatusOr<FitRow> RowOf(const StartupLog& log, const PresetColumns& pc, Family& f) {
  absl::StatusOr<double> y = ObservedOverheadBytes(log);
  if (!y.ok()) return y.status();
  absl::StatusOr<OverheadTerms> t = ComputeOverheadTerms(log.input);
  if (!t.ok()) return t.status();
  FitRow r;
  r.y_bytes = *y - t->fixed_bytes;
  const EngineBehaviour& e = log.input.engine;
  AddNonTorchTerms(r, f, pc, *t);
  AddTerm(r, f, pc.driver, t->driver_rank);
  if (e.engine == EngineKind::kVllm) {
    r.token_column = f.Column(pc.activation);
    r.token_term = t->token_phase_bytes;
    r.sampler_column = f.Column(SamplerColumnOf(pc, log));
    r.sampler_term = t->sampler_phase_bytes;
  } else if (e.engine == EngineKind::kTrtllm) {
    AddTerm(r, f, pc.activation, t->token_phase_bytes);
    AddTerm(r, f, pc.decoder, t->sampler_phase_bytes);
  }
  return r;
}

// A log that states the memory free when the engine started: capacity less
// that memory against the non-torch terms (base, per extra rank or the
// fast-link amount, unified memory, ROCm).
absl::StatusOr<FitRow> FreeMemoryRowOf(const StartupLog& log, const PresetColumns& pc, Family& f) {
  absl::StatusOr<MemoryPlan> plan = PlanMemory(log.input);
  if (!plan.ok()) return plan.status();
  absl::StatusOr<OverheadTerms> t = ComputeOverheadTerms(log.input);
  if (!t.ok()) return t.status();
  FitRow r;
  r.y_bytes = plan->per_gpu.capacity_bytes - log.input.settings.free_memory_at_start_bytes;
  AddNonTorchTerms(r, f, pc, *t);
  return r;
}

// The parts a log itemises, each a row against its own terms: the activation
// peak (the token / sampler pair, TensorRT-LLM: the token term) and the
// non-torch memory (base, per extra rank, unified memory).
absl::Status AddItemisedRows(const StartupLog& log, const PresetColumns& pc, Family& f) {
  if (!log.activation_bytes && !log.non_torch_bytes) return absl::OkStatus();
  absl::StatusOr<OverheadTerms> t = ComputeOverheadTerms(log.input);
  if (!t.ok()) return t.status();
  if (log.activation_bytes && !pc.activation.empty()) {
    FitRow r;
    r.y_bytes = *log.activation_bytes - t->fixed_bytes;
    if (log.input.engine.engine == EngineKind::kVllm && !log.itemised_on_worker) {
      r.token_column = f.Column(pc.activation);
      r.token_term = t->token_phase_bytes;
      r.sampler_column = f.Column(SamplerColumnOf(pc, log));
      r.sampler_term = t->sampler_phase_bytes;
    } else {
      r.terms.emplace_back(f.Column(pc.activation), t->token_phase_bytes);
    }
    f.rows.push_back(std::move(r));
    f.row_ids.push_back(log.id + " (activation)");
  }
  if (log.non_torch_bytes && !pc.base.empty()) {
    FitRow r;
    r.y_bytes = *log.non_torch_bytes;
    AddNonTorchTerms(r, f, pc, *t);
    f.rows.push_back(std::move(r));
    f.row_ids.push_back(log.id + " (non-torch)");
  }
  return absl::OkStatus();
}

double Theta(const Family& f, const LinearFit& fit, const std::string& name) {
  auto it = f.index.find(name);
  return it == f.index.end() ? 0.0 : fit.theta[it->second];
}

}  // namespace

absl::StatusOr<CalibrationFit> CalibrateEnginePresets(
    const std::vector<StartupLog>& logs, const std::map<std::string, EngineBehaviour>& presets,
    absl::string_view leave_out) {
  CalibrationFit out;
  out.presets = presets;
  std::vector<const StartupLog*> used;
  for (const StartupLog& log : logs) {
    if (!presets.count(log.preset_id)) {
      return absl::InvalidArgumentError(
          absl::StrCat("log ", log.id, " names preset ", log.preset_id, ", which is not given"));
    }
    if (log.id != leave_out) used.push_back(&log);
  }
  auto with_preset = [&](const StartupLog& log) {
    StartupLog l = log;
    l.input.engine = out.presets.at(log.preset_id);
    return l;
  };

  // CUDA-graph bytes per capture and layer, per engine, on the logs that
  // state their graph memory.
  for (EngineKind kind : {EngineKind::kVllm, EngineKind::kSglang, EngineKind::kTrtllm}) {
    std::vector<double> x, y;
    for (const StartupLog* log : used) {
      if (!log->cuda_graph_bytes || out.presets.at(log->preset_id).engine != kind) continue;
      absl::StatusOr<OverheadTerms> t = ComputeOverheadTerms(with_preset(*log).input);
      if (!t.ok()) return t.status();
      if (t->capture_layers <= 0.0) continue;
      x.push_back(t->capture_layers);
      y.push_back(*log->cuda_graph_bytes);
    }
    if (x.empty()) continue;
    absl::StatusOr<double> k = FitProportional(x, y);
    if (!k.ok()) return k.status();
    for (auto& [id, e] : out.presets) {
      if (e.engine == kind) e.cuda_graph_bytes_per_capture_layer = std::max(0.0, *k);
    }
    out.report.push_back(absl::StrFormat("CUDA graphs (%s): %d logs, %.0f bytes per capture-layer",
                                         kind == EngineKind::kVllm     ? "vllm"
                                         : kind == EngineKind::kSglang ? "sglang"
                                                                       : "trtllm",
                                         x.size(), *k));
  }

  std::map<std::string, Family> families;
  for (const auto& [id, e] : out.presets) {
    const PresetColumns pc = ColumnsOf(id, e);
    Family& f = families[pc.family];
    for (const std::string* name : {&pc.activation, &pc.sampler, &pc.native_sampler, &pc.base,
                                    &pc.rank, &pc.unified, &pc.driver, &pc.decoder, &pc.rocm}) {
      f.Column(*name);
    }
    for (const auto& [column, prior] :
         {std::pair<const std::string*, double>{&pc.sampler, e.sampler_logit_copies_prior},
          {&pc.native_sampler, e.native_sampler_logit_copies_prior}}) {
      if (prior <= 0 || column->empty()) continue;
      FitColumn& c = f.columns[f.Column(*column)];
      c.prior = WithinBounds(c, prior);
      c.prior_weight_bytes = kCountedSamplerPriorWeightBytes;
      // A count of every tensor alive at the peak is not a fit's to move.
      if (column == &pc.native_sampler && e.native_sampler_logit_copies_exact) {
        if (c.ceiling > 0 && c.floor == c.ceiling && c.floor != c.prior) {
          return absl::InvalidArgumentError(absl::StrFormat(
              "preset %s: native_sampler_logit_copies_exact %g disagrees with %g, the exact "
              "count another preset of group %s states",
              id, prior, c.floor, e.native_sampler_fit_group));
        }
        c.floor = c.prior;
        c.ceiling = c.prior;
      }
    }
  }
  for (const StartupLog* log : used) {
    const StartupLog l = with_preset(*log);
    const PresetColumns pc = ColumnsOf(log->preset_id, l.input.engine);
    Family& f = families[pc.family];
    if (l.input.engine.budget_rule == BudgetRule::kSglangStatic &&
        l.input.settings.free_memory_at_start_bytes > 0) {
      // SGLang's budget came from the memory the log says was free at
      // start, so its pool says nothing of the non-torch terms; the free
      // memory itself does: the card's capacity less it is what the context
      // and the distributed set-up took (with whatever other processes
      // held, which the robust loss discounts when it is large).
      absl::StatusOr<FitRow> row = FreeMemoryRowOf(l, pc, f);
      if (!row.ok()) {
        return absl::Status(row.status().code(),
                            absl::StrCat("log ", log->id, ": ", row.status().message()));
      }
      f.rows.push_back(*std::move(row));
      f.row_ids.push_back(log->id + " (free at start)");
      CAPPLAN_RETURN_IF_ERROR(AddItemisedRows(l, pc, f));
      continue;
    }
    absl::StatusOr<FitRow> row = RowOf(l, pc, f);
    if (!row.ok()) {
      return absl::Status(row.status().code(),
                          absl::StrCat("log ", log->id, ": ", row.status().message()));
    }
    f.rows.push_back(*std::move(row));
    f.row_ids.push_back(log->id);
    CAPPLAN_RETURN_IF_ERROR(AddItemisedRows(l, pc, f));
  }
  std::map<std::string, LinearFit> fits;
  for (auto& [name, f] : families) {
    LinearFit fit;
    if (f.rows.empty()) {
      for (const FitColumn& c : f.columns) fit.theta.push_back(WithinBounds(c, c.prior));
    } else {
      absl::StatusOr<LinearFit> solved = FitNonNegative(f.rows, f.columns);
      if (!solved.ok()) return solved.status();
      fit = *std::move(solved);
    }
    std::string line = absl::StrFormat("%s: %d logs, rank %d, rms %.3f GiB;", name, f.rows.size(),
                                       fit.rank, fit.rms_residual_bytes / kGiB);
    for (size_t c = 0; c < f.columns.size(); ++c) {
      absl::StrAppendFormat(&line, " %s %.4g", f.columns[c].name, fit.theta[c]);
    }
    out.report.push_back(line);
    fits[name] = std::move(fit);
  }
  for (auto& [id, e] : out.presets) {
    const PresetColumns pc = ColumnsOf(id, e);
    const Family& f = families.at(pc.family);
    const LinearFit& fit = fits.at(pc.family);
    auto value = [&](const std::string& name) { return name.empty() ? 0.0 : Theta(f, fit, name); };
    e.activation_token_scale = value(pc.activation);
    e.sampler_logit_copies = value(pc.sampler);
    e.native_sampler_logit_copies = value(pc.native_sampler);
    e.non_torch_base_bytes = value(pc.base);
    e.non_torch_per_extra_rank_bytes = value(pc.rank);
    e.fast_link_multi_gpu_non_torch_bytes = value(pc.fast_link);
    e.unified_memory_non_torch_bytes = value(pc.unified);
    e.rocm_non_torch_bytes = value(pc.rocm);
    e.driver_rank_extra_non_torch_bytes = value(pc.driver);
    e.decoder_logit_copies = value(pc.decoder);
  }
  return out;
}

}  // namespace capplan::model
