#include "model/robust_fit.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <vector>

#include "Eigen/QR"
#include "absl/strings/str_cat.h"

namespace capplan::model {
namespace {

// Residual scale floor relative to the RMS of b (a perfect fit must not make
// every weight explode).
constexpr double kMinResidualScaleRelative = 1e-9;
// Coefficients at or below this (in equilibrated units) leave the passive set.
constexpr double kNnlsZeroTolerance = 1e-14;

int NumericalRank(const Eigen::MatrixXd& a) {
  if (a.rows() == 0 || a.cols() == 0) return 0;
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(a.rows(), a.cols());
  cod.setThreshold(kRankRelativeTolerance);
  cod.compute(a);
  return static_cast<int>(cod.rank());
}

}  // namespace

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + mid, v.end());
  double m = v[mid];
  if (v.size() % 2 == 0) {
    m = 0.5 * (m + *std::max_element(v.begin(), v.begin() + mid));
  }
  return m;
}

Eigen::VectorXd SolveNnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  const int n = static_cast<int>(a.cols());
  Eigen::VectorXd x = Eigen::VectorXd::Zero(n);
  std::vector<bool> passive(n, false);
  const double scale = std::max(1.0, a.norm() * b.norm());
  const int max_outer = 3 * n + 10;
  for (int outer = 0; outer < max_outer; ++outer) {
    Eigen::VectorXd grad = a.transpose() * (b - a * x);
    // The active column with the steepest positive gradient enters; none: optimal.
    std::optional<int> entering;
    double best_value = kNnlsGradientTolerance * scale;
    for (int j = 0; j < n; ++j) {
      if (!passive[j] && grad(j) > best_value) {
        best_value = grad(j);
        entering = j;
      }
    }
    if (!entering.has_value()) break;
    passive[*entering] = true;
    bool added_useful = true;
    for (int inner = 0; inner < 3 * n + 10; ++inner) {
      std::vector<int> idx;
      for (int j = 0; j < n; ++j) {
        if (passive[j]) idx.push_back(j);
      }
      Eigen::MatrixXd ap(a.rows(), static_cast<Eigen::Index>(idx.size()));
      for (size_t k = 0; k < idx.size(); ++k) ap.col(k) = a.col(idx[k]);
      Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(ap.rows(), ap.cols());
      cod.setThreshold(kRankRelativeTolerance);
      cod.compute(ap);
      const Eigen::VectorXd sp = cod.solve(b);
      Eigen::VectorXd s = Eigen::VectorXd::Zero(n);
      for (size_t k = 0; k < idx.size(); ++k) s(idx[k]) = sp(k);
      bool feasible = true;
      for (int j : idx) {
        if (s(j) <= kNnlsZeroTolerance) feasible = false;
      }
      if (feasible) {
        x = s;
        break;
      }
      // Step from x towards s until the first passive coefficient hits 0.
      double step = 1.0;
      for (int j : idx) {
        if (s(j) <= kNnlsZeroTolerance) {
          const double denom = x(j) - s(j);
          if (denom > 0) step = std::min(step, x(j) / denom);
        }
      }
      x += step * (s - x);
      bool moved = false;
      for (int j : idx) {
        if (x(j) <= kNnlsZeroTolerance) {
          x(j) = 0;
          passive[j] = false;
          moved = true;
        }
      }
      if (!moved) {
        // Degenerate direction: the new column cannot enter usefully.
        added_useful = false;
        break;
      }
    }
    if (!added_useful) break;
  }
  return x.cwiseMax(0.0);
}

namespace {

// Shape, the trailing-row option and finiteness, naming the offending entry.
absl::Status ValidateFitInput(const Eigen::MatrixXd& a, const Eigen::VectorXd& b,
                              const RobustFitOptions& options) {
  const int rows = static_cast<int>(a.rows());
  const int cols = static_cast<int>(a.cols());
  if (cols < 1 || cols > kMaxFitColumns) {
    return absl::InvalidArgumentError(
        absl::StrCat("RobustFit.columns = ", cols, "; must be in [1, ", kMaxFitColumns, "]"));
  }
  if (rows < 1 || rows > kMaxFitRows) {
    return absl::InvalidArgumentError(
        absl::StrCat("RobustFit.rows = ", rows, "; must be in [1, ", kMaxFitRows, "]"));
  }
  if (b.size() != rows) {
    return absl::InvalidArgumentError(
        absl::StrCat("RobustFit.b.size = ", b.size(), "; must equal the number of rows = ", rows));
  }
  if (options.unweighted_trailing_rows < 0 || options.unweighted_trailing_rows >= rows) {
    return absl::InvalidArgumentError(absl::StrCat(
        "RobustFitOptions.unweighted_trailing_rows = ", options.unweighted_trailing_rows,
        "; must be in [0, rows = ", rows, ")"));
  }
  for (int i = 0; i < rows; ++i) {
    if (!std::isfinite(b(i))) {
      return absl::InvalidArgumentError(
          absl::StrCat("RobustFit.b[", i, "] = ", b(i), "; must be finite"));
    }
    for (int j = 0; j < cols; ++j) {
      if (!std::isfinite(a(i, j))) {
        return absl::InvalidArgumentError(
            absl::StrCat("RobustFit.a[", i, "][", j, "] = ", a(i, j), "; must be finite"));
      }
    }
  }
  return absl::OkStatus();
}

// Column equilibration: 1 / the column's norm (1 for an all-zero column).
Eigen::VectorXd ColumnScales(const Eigen::MatrixXd& a) {
  Eigen::VectorXd col_scale(a.cols());
  for (int j = 0; j < a.cols(); ++j) {
    const double norm = a.col(j).norm();
    col_scale(j) = norm > 0 ? 1.0 / norm : 1.0;
  }
  return col_scale;
}

// Huber weights of the data rows' residuals r: 1 within kHuberTuning · σ,
// cutoff / |r_i| beyond, σ from the MAD (floored relative to the RMS of b so
// that a perfect fit does not make every weight explode). Trailing rows keep 1.
Eigen::VectorXd HuberWeights(const Eigen::VectorXd& r, int data_rows, double b_rms) {
  std::vector<double> abs_r(data_rows);
  for (int i = 0; i < data_rows; ++i) abs_r[i] = std::abs(r(i));
  const double sigma = std::max(kMadToSigma * Median(abs_r), kMinResidualScaleRelative * b_rms);
  const double cutoff = kHuberTuning * sigma;
  Eigen::VectorXd w = Eigen::VectorXd::Ones(r.size());
  for (int i = 0; i < data_rows; ++i) {
    if (abs_r[i] > cutoff) w(i) = cutoff / abs_r[i];
  }
  return w;
}

struct IrlsSolution {
  Eigen::VectorXd x_scaled;  // in equilibrated units
  Eigen::VectorXd weights;
  int iterations = 0;
};

// Iteratively re-weighted NNLS on the equilibrated matrix: solve with the
// current weights, re-weight by Huber, stop when no weight moves by more
// than kIrlsWeightTolerance (one plain NNLS solve without Huber).
IrlsSolution SolveIrls(const Eigen::MatrixXd& as, const Eigen::VectorXd& b, int data_rows,
                       bool huber) {
  const int rows = static_cast<int>(as.rows());
  const double b_rms = std::sqrt(b.head(data_rows).squaredNorm() / std::max(1, data_rows));
  IrlsSolution s;
  s.weights = Eigen::VectorXd::Ones(rows);
  s.x_scaled = Eigen::VectorXd::Zero(as.cols());
  const int max_iter = huber ? kMaxIrlsIterations : 1;
  for (int iter = 0; iter < max_iter; ++iter) {
    const Eigen::VectorXd sw = s.weights.cwiseSqrt();
    s.x_scaled = SolveNnls(sw.asDiagonal() * as, sw.cwiseProduct(b));
    s.iterations = iter + 1;
    if (!huber) break;
    const Eigen::VectorXd new_w = HuberWeights(as * s.x_scaled - b, data_rows, b_rms);
    const double change = (new_w - s.weights).cwiseAbs().maxCoeff();
    s.weights = new_w;
    if (change < kIrlsWeightTolerance) break;
  }
  return s;
}

// The weighted RMS of the data rows' residuals relative to |b_i| and, with
// spare degrees of freedom, the band sqrt(n / (n − rank)) × it; both absent
// when a b_i is 0.
void SetRelativeErrors(const Eigen::VectorXd& b, int data_rows, std::optional<double> scale,
                       RobustFitResult& result) {
  const Eigen::VectorXd& w = result.weights;
  double sum_w = 0;
  double sum_sq = 0;
  for (int i = 0; i < data_rows; ++i) {
    const double s = scale.has_value() ? *scale : b(i);
    if (s == 0) return;
    const double rel = result.residuals(i) / s;
    sum_w += w(i);
    sum_sq += w(i) * rel * rel;
  }
  if (!(sum_w > 0)) return;
  const double rms = std::sqrt(sum_sq / sum_w);
  result.relative_rms_residual = rms;
  const int dof_rank = std::min(result.data_rank, data_rows);
  if (data_rows > dof_rank) {
    result.relative_error_band =
        rms * std::sqrt(static_cast<double>(data_rows) / (data_rows - dof_rank));
  }
}

}  // namespace

absl::StatusOr<RobustFitResult> RobustNonNegativeLeastSquares(const Eigen::MatrixXd& a,
                                                              const Eigen::VectorXd& b,
                                                              const RobustFitOptions& options) {
  if (absl::Status s = ValidateFitInput(a, b, options); !s.ok()) return s;
  const int cols = static_cast<int>(a.cols());
  const int data_rows = static_cast<int>(a.rows()) - options.unweighted_trailing_rows;
  const Eigen::VectorXd col_scale = ColumnScales(a);
  const Eigen::MatrixXd as = a * col_scale.asDiagonal();

  RobustFitResult result;
  result.data_rank = NumericalRank(as.topRows(data_rows));
  result.rank = NumericalRank(as);
  if (options.require_full_rank && result.rank < cols) {
    return absl::FailedPreconditionError(
        absl::StrCat("RobustFit: rank = ", result.rank, " < columns = ", cols,
                     "; the observations do not determine every coefficient (add "
                     "observations at other loads or a prior)"));
  }
  const IrlsSolution irls = SolveIrls(as, b, data_rows, options.huber);
  result.iterations = irls.iterations;
  result.coefficients = col_scale.cwiseProduct(irls.x_scaled).cwiseMax(0.0);
  result.residuals = a * result.coefficients - b;
  result.weights = irls.weights;
  SetRelativeErrors(b, data_rows, options.residual_scale, result);
  return result;
}

}  // namespace capplan::model
