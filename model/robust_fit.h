// Robust non-negative least squares: min Σ ρ_Huber(a_i·x − b_i) s.t. x >= 0.
//
// Lawson–Hanson active-set NNLS whose inner unconstrained solves go through
// Eigen's completeOrthogonalDecomposition (rank-revealing; never the normal
// equations), wrapped in iteratively re-weighted least squares with Huber
// weights (scale = MAD of the residuals / 0.6745), so that a few outlier rows
// (a non-steady-state measurement, a mis-typed figure) do not drag the fit.
// Columns are equilibrated to unit norm before solving; the rank is measured
// on the equilibrated matrix.
#ifndef CAPPLAN_MODEL_ROBUST_FIT_H_
#define CAPPLAN_MODEL_ROBUST_FIT_H_

#include <optional>
#include <vector>

#include "Eigen/Core"
#include "absl/status/statusor.h"

namespace capplan::model {

// Relative singular-value threshold below which a direction counts as
// rank-deficient (on the column-equilibrated matrix).
inline constexpr double kRankRelativeTolerance = 1e-9;
// Huber tuning constant (95% efficiency under Gaussian noise).
inline constexpr double kHuberTuning = 1.345;
// MAD → standard deviation for Gaussian residuals.
inline constexpr double kMadToSigma = 1.0 / 0.6745;
// IRLS stops when no weight changes by more than this.
inline constexpr double kIrlsWeightTolerance = 1e-6;
inline constexpr int kMaxIrlsIterations = 50;
// Lawson–Hanson optimality tolerance on the (equilibrated) gradient.
inline constexpr double kNnlsGradientTolerance = 1e-12;
// Maximum rows × columns accepted (a guard against unbounded work).
inline constexpr int kMaxFitRows = 100000;
inline constexpr int kMaxFitColumns = 64;

struct RobustFitOptions {
  // Apply Huber re-weighting (false = plain NNLS).
  bool huber = true;
  // The last `unweighted_trailing_rows` rows (e.g. prior/regularisation rows)
  // keep weight 1 and are left out of the residual scale and error band.
  int unweighted_trailing_rows = 0;
  // Fail with FAILED_PRECONDITION when the data rows are rank-deficient.
  bool require_full_rank = true;
  // Residuals are relative to |b_i| unless this is set: then to this scale
  // (one value for every data row; e.g. 1 when each row is already divided
  // by its observation and b carries a known offset).
  std::optional<double> residual_scale;
};

struct RobustFitResult {
  Eigen::VectorXd coefficients;  // all >= 0
  Eigen::VectorXd residuals;     // A·x − b, every row
  Eigen::VectorXd weights;       // final Huber weights, every row
  int rank = 0;                  // numerical rank of the full system
  int data_rank = 0;             // rank of the data rows alone
  int iterations = 0;            // IRLS iterations run
  // Root-mean-square of the data rows' residuals relative to |b_i|, with the
  // degrees-of-freedom correction sqrt(n / (n − rank)); absent when there are
  // no spare degrees of freedom or a b_i is 0.
  std::optional<double> relative_error_band;
  // Same without the correction: the typical relative misfit of a data row.
  std::optional<double> relative_rms_residual;
};

// Unweighted Lawson–Hanson NNLS (inputs assumed checked).
// Median of v (mean of the two middle values for an even count); 0 if empty.
double Median(std::vector<double> v);

Eigen::VectorXd SolveNnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b);

// Checks shape (rows >= 1, columns >= 1, b.size() == rows, limits),
// finiteness and rank, then fits. INVALID_ARGUMENT names the offending entry.
absl::StatusOr<RobustFitResult> RobustNonNegativeLeastSquares(const Eigen::MatrixXd& a,
                                                              const Eigen::VectorXd& b,
                                                              const RobustFitOptions& options = {});

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_ROBUST_FIT_H_
