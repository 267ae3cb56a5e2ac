#include "model/robust_fit.h"

#include <cmath>
#include <limits>
#include <random>
#include <string>

#include "Eigen/QR"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::model {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

double Gaussian(std::mt19937_64& g) {
  // Box–Muller from raw bits (portable).
  auto u = [&g] { return (static_cast<double>(g() >> 11) + 0.5) * 0x1.0p-53; };
  return std::sqrt(-2 * std::log(u())) * std::cos(2 * M_PI * u());
}

Eigen::MatrixXd RandomDesign(int rows, int cols, std::mt19937_64& g) {
  Eigen::MatrixXd a(rows, cols);
  for (int i = 0; i < rows; ++i) {
    a(i, 0) = 1.0;
    for (int j = 1; j < cols; ++j) {
      a(i, j) = 0.1 + (static_cast<double>(g() >> 11) * 0x1.0p-53) * (j + 1);
    }
  }
  return a;
}

// Brute-force NNLS: the best unconstrained least-squares solution over
// every subset of columns whose solution is non-negative.
Eigen::VectorXd BruteForceNnls(const Eigen::MatrixXd& a, const Eigen::VectorXd& b) {
  const int n = static_cast<int>(a.cols());
  Eigen::VectorXd best = Eigen::VectorXd::Zero(n);
  double best_cost = b.squaredNorm();
  for (int mask = 1; mask < (1 << n); ++mask) {
    std::vector<int> idx;
    for (int j = 0; j < n; ++j) {
      if (mask & (1 << j)) idx.push_back(j);
    }
    Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(idx.size()));
    for (size_t k = 0; k < idx.size(); ++k) sub.col(k) = a.col(idx[k]);
    const Eigen::VectorXd x = sub.colPivHouseholderQr().solve(b);
    if (x.minCoeff() < 0) continue;
    Eigen::VectorXd full = Eigen::VectorXd::Zero(n);
    for (size_t k = 0; k < idx.size(); ++k) full(idx[k]) = x(k);
    const double cost = (a * full - b).squaredNorm();
    if (cost < best_cost) {
      best_cost = cost;
      best = full;
    }
  }
  return best;
}

TEST(RobustFit, RecoversExactCoefficientsWithoutNoise) {
  std::mt19937_64 g(1);
  const Eigen::MatrixXd a = RandomDesign(30, 4, g);
  Eigen::VectorXd truth(4);
  truth << 0.5, 1.2, 0.0, 2.5;
  const Eigen::VectorXd b = a * truth;
  absl::StatusOr<RobustFitResult> r = RobustNonNegativeLeastSquares(a, b);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_LT((r->coefficients - truth).cwiseAbs().maxCoeff(), 1e-8) << r->coefficients.transpose();
  EXPECT_EQ(r->rank, 4);
  ASSERT_TRUE(r->relative_error_band.has_value());
  EXPECT_LT(*r->relative_error_band, 1e-8);
}

TEST(Nnls, MatchesBruteForceWhenTheUnconstrainedSolutionIsNegative) {
  for (uint64_t seed = 1; seed <= 40; ++seed) {
    std::mt19937_64 g(seed);
    const Eigen::MatrixXd a = RandomDesign(12, 4, g);
    Eigen::VectorXd truth(4);
    truth << 1.0, -2.0, 0.5, 1.5;  // a negative truth forces the bound
    Eigen::VectorXd b = a * truth;
    for (int i = 0; i < b.size(); ++i) b(i) += 0.05 * Gaussian(g);
    const Eigen::VectorXd x = SolveNnls(a, b);
    const Eigen::VectorXd ref = BruteForceNnls(a, b);
    EXPECT_GE(x.minCoeff(), 0.0) << seed;
    EXPECT_NEAR((a * x - b).squaredNorm(), (a * ref - b).squaredNorm(),
                1e-9 * (1 + b.squaredNorm()))
        << seed << " x=" << x.transpose() << " ref=" << ref.transpose();
  }
}

TEST(RobustFit, NeverReturnsNegativeCoefficients) {
  for (uint64_t seed = 100; seed < 200; ++seed) {
    std::mt19937_64 g(seed);
    const Eigen::MatrixXd a = RandomDesign(20, 5, g);
    Eigen::VectorXd b(20);
    for (int i = 0; i < 20; ++i) b(i) = Gaussian(g);  // anything at all
    absl::StatusOr<RobustFitResult> r = RobustNonNegativeLeastSquares(a, b);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_GE(r->coefficients.minCoeff(), 0.0) << seed;
    EXPECT_TRUE(r->coefficients.allFinite());
  }
}

TEST(RobustFit, HuberResistsOutliersThatDragPlainLeastSquares) {
  std::mt19937_64 g(7);
  const int rows = 60;
  const Eigen::MatrixXd a = RandomDesign(rows, 3, g);
  Eigen::VectorXd truth(3);
  truth << 0.8, 1.5, 0.6;
  Eigen::VectorXd b = a * truth;
  for (int i = 0; i < rows; ++i) b(i) *= 1 + 0.01 * Gaussian(g);
  // 10% of rows wildly off (a non-steady-state measurement).
  for (int i = 0; i < rows; i += 10) b(i) *= 3.0;
  RobustFitOptions plain;
  plain.huber = false;
  absl::StatusOr<RobustFitResult> ls = RobustNonNegativeLeastSquares(a, b, plain);
  absl::StatusOr<RobustFitResult> hub = RobustNonNegativeLeastSquares(a, b);
  ASSERT_TRUE(ls.ok());
  ASSERT_TRUE(hub.ok());
  const double ls_err = ((ls->coefficients - truth).array() / truth.array()).abs().maxCoeff();
  const double hub_err = ((hub->coefficients - truth).array() / truth.array()).abs().maxCoeff();
  EXPECT_GT(ls_err, 0.10);
  EXPECT_LT(hub_err, 0.05) << hub->coefficients.transpose();
  // The outlier rows are the down-weighted ones.
  for (int i = 0; i < rows; ++i) {
    if (i % 10 == 0) {
      EXPECT_LT(hub->weights(i), 0.2) << i;
    }
  }
}

TEST(RobustFit, ErrorBandTracksRelativeNoise) {
  std::mt19937_64 g(11);
  const int rows = 400;
  const Eigen::MatrixXd a = RandomDesign(rows, 3, g);
  Eigen::VectorXd truth(3);
  truth << 1.0, 2.0, 3.0;
  Eigen::VectorXd b = a * truth;
  for (int i = 0; i < rows; ++i) b(i) *= 1 + 0.05 * Gaussian(g);
  absl::StatusOr<RobustFitResult> r = RobustNonNegativeLeastSquares(a, b);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE(r->relative_error_band.has_value());
  EXPECT_GT(*r->relative_error_band, 0.035);
  EXPECT_LT(*r->relative_error_band, 0.065);
}

TEST(RobustFit, NoErrorBandWithoutSpareDegreesOfFreedom) {
  Eigen::MatrixXd a(2, 2);
  a << 1, 0, 0, 1;
  Eigen::VectorXd b(2);
  b << 1, 2;
  absl::StatusOr<RobustFitResult> r = RobustNonNegativeLeastSquares(a, b);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(r->relative_error_band.has_value());
}

TEST(RobustFit, RejectsNonFiniteEntriesNamingThem) {
  Eigen::MatrixXd a = Eigen::MatrixXd::Ones(4, 2);
  a(2, 1) = std::numeric_limits<double>::quiet_NaN();
  Eigen::VectorXd b = Eigen::VectorXd::Ones(4);
  EXPECT_THAT(RobustNonNegativeLeastSquares(a, b),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("RobustFit.a[2][1] = nan; must be finite")));
  a(2, 1) = 1;
  b(3) = std::numeric_limits<double>::infinity();
  EXPECT_THAT(RobustNonNegativeLeastSquares(a, b),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("RobustFit.b[3] = inf; must be finite")));
}

TEST(RobustFit, RejectsShapeMismatchAndEmpty) {
  EXPECT_THAT(RobustNonNegativeLeastSquares(Eigen::MatrixXd::Ones(3, 2), Eigen::VectorXd::Ones(4)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("RobustFit.b.size = 4; must equal the number of rows = 3")));
  EXPECT_THAT(RobustNonNegativeLeastSquares(Eigen::MatrixXd(0, 2), Eigen::VectorXd(0)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("RobustFit.rows = 0; must be in [1, ")));
}

TEST(RobustFit, RankDeficientIsFailedPreconditionUnlessAllowed) {
  Eigen::MatrixXd a(5, 3);
  for (int i = 0; i < 5; ++i) a.row(i) << 1, i, 2.0 * i;  // col2 = 2·col1
  Eigen::VectorXd b(5);
  b << 1, 2, 3, 4, 5;
  absl::StatusOr<RobustFitResult> r = RobustNonNegativeLeastSquares(a, b);
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kFailedPrecondition,
                          HasSubstr("RobustFit: rank = 2 < columns = 3")));
  RobustFitOptions allow;
  allow.require_full_rank = false;
  r = RobustNonNegativeLeastSquares(a, b, allow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->rank, 2);
  EXPECT_LT(r->residuals.norm(), 1e-9);
  EXPECT_GE(r->coefficients.minCoeff(), 0.0);
}

TEST(RobustFit, TrailingPriorRowsKeepFullWeight) {
  // Two data rows for three unknowns plus three prior rows.
  Eigen::MatrixXd a(5, 3);
  a << 1, 1, 0,  //
      1, 2, 1,   //
      1, 0, 0,   //
      0, 1, 0,   //
      0, 0, 1;
  Eigen::VectorXd b(5);
  b << 2, 4, 1, 1, 1;
  RobustFitOptions o;
  o.unweighted_trailing_rows = 3;
  absl::StatusOr<RobustFitResult> r = RobustNonNegativeLeastSquares(a, b, o);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->weights(2), 1.0);
  EXPECT_EQ(r->weights(3), 1.0);
  EXPECT_EQ(r->weights(4), 1.0);
  EXPECT_NEAR(r->coefficients(0), 1.0, 1e-9);
  EXPECT_NEAR(r->coefficients(1), 1.0, 1e-9);
  EXPECT_NEAR(r->coefficients(2), 1.0, 1e-9);
}

}  // namespace
}  // namespace capplan::model
