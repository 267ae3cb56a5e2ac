#include "service/planner/bands.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

v1::AccuracyPrediction Prediction(v1::Tier tier, const std::string& metric, double error,
                                  double raw_band, bool fitted_on_rows = false) {
  v1::AccuracyPrediction p;
  p.set_fitted_on_rows(fitted_on_rows);
  p.set_tier(tier);
  p.set_metric(metric);
  p.set_error_fraction(error);
  p.set_raw_band_fraction(raw_band);
  return p;
}

std::vector<const v1::AccuracyPrediction*> Pointers(const std::vector<v1::AccuracyPrediction>& v) {
  std::vector<const v1::AccuracyPrediction*> out;
  for (const v1::AccuracyPrediction& p : v) out.push_back(&p);
  return out;
}

TEST(BandScalesFrom, FactorIsTheLevelQuantileOfErrorOverRawBand) {
  std::vector<v1::AccuracyPrediction> ps;
  // |error| / band = 0.5, 1.0, ..., 5.0 (ten predictions, signs mixed);
  // figures of a prior as it is: no run-to-run term.
  for (int i = 1; i <= 10; ++i) {
    ps.push_back(Prediction(v1::TIER_EXTRAPOLATED, "ttft_p50", (i % 2 ? -0.05 : 0.05) * i, 0.1));
  }
  const std::vector<v1::ErrorBandScale> s = BandScalesFrom(Pointers(ps), 0.8);
  // 8th of 10 ratios: 4.0; raw coverage 2 / 10 (ratios 0.5 and 1.0).
  const double factor = BandScaleFor(s, v1::TIER_EXTRAPOLATED, "ttft");
  EXPECT_NEAR(factor, 4.0, 1e-12);
  EXPECT_NEAR(ScaledBand(s, v1::TIER_EXTRAPOLATED, "ttft", 0.1, false), 0.4, 1e-12);
  for (const v1::ErrorBandScale& e : s) {
    EXPECT_EQ(e.metric(), "ttft");
    EXPECT_EQ(e.predictions(), 10u);
    EXPECT_NEAR(e.raw_coverage(), 0.2, 1e-12);
  }
  EXPECT_NEAR(BandCoverage(Pointers(ps), s), 0.8, 1e-12);
}

// A fit's own residuals (the raw band of a figure fitted on rows) do not
// show another run's spread: the level-quantile of such figures' |error|
// joins the raw band in quadrature, before the factor, whatever the tier.
TEST(BandScalesFrom, FiguresFittedOnRowsGetTheRunToRunTerm) {
  std::vector<v1::AccuracyPrediction> ps;
  for (int i = 1; i <= 10; ++i) {
    ps.push_back(Prediction(v1::TIER_CALIBRATED, "ttft_p50", 0.05 * i, 0.1, true));
  }
  const std::vector<v1::ErrorBandScale> s = BandScalesFrom(Pointers(ps), 0.8);
  ASSERT_EQ(s.size(), 1u);
  // 8th of the ten |errors|: 0.40; the widened band sqrt(0.1² + 0.4²) holds
  // 8 of 10 already, so the factor stays 1; the raw band alone holds 2.
  EXPECT_NEAR(s[0].run_to_run_fraction(), 0.40, 1e-12);
  EXPECT_EQ(s[0].scale(), 1.0);
  EXPECT_NEAR(s[0].raw_coverage(), 0.2, 1e-12);
  EXPECT_NEAR(ScaledBand(s, v1::TIER_CALIBRATED, "ttft", 0.1, true), std::hypot(0.1, 0.4), 1e-12);
  EXPECT_NEAR(ScaledBand(s, v1::TIER_EXTRAPOLATED, "ttft", 0.1, true), std::hypot(0.1, 0.4), 1e-12);
  // A prior's band is already a between-baseline figure: not widened.
  EXPECT_NEAR(ScaledBand(s, v1::TIER_EXTRAPOLATED, "ttft", 0.1, false), 0.1, 1e-12);
  EXPECT_NEAR(BandCoverage(Pointers(ps), s), 0.8, 1e-12);
  // No entry for the metric: the raw band as it is.
  EXPECT_EQ(ScaledBand(s, v1::TIER_CALIBRATED, "tpot", 0.1, true), 0.1);
}

TEST(BandScalesFrom, NeverNarrowsABandAndPoolsTheTiers) {
  std::vector<v1::AccuracyPrediction> ps;
  for (int i = 0; i < 12; ++i) ps.push_back(Prediction(v1::TIER_CALIBRATED, "tpot", 0.01, 0.2));
  for (int i = 0; i < 3; ++i) ps.push_back(Prediction(v1::TIER_EXTRAPOLATED, "tpot", 0.9, 0.3));
  const std::vector<v1::ErrorBandScale> s = BandScalesFrom(Pointers(ps), 0.8);
  // 12 of 15 ratios are 0.05: the 0.8-quantile is inside already, not narrowed.
  EXPECT_EQ(BandScaleFor(s, v1::TIER_CALIBRATED, "tpot"), 1.0);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].tier(), "ANY");
  EXPECT_EQ(s[0].predictions(), 15u);
  EXPECT_EQ(BandScaleFor(s, v1::TIER_EXTRAPOLATED, "tpot"),
            BandScaleFor(s, v1::TIER_ROOFLINE, "tpot"));
  // A metric no prediction measured keeps its raw band.
  EXPECT_EQ(BandScaleFor(s, v1::TIER_CALIBRATED, "e2e"), 1.0);
}

TEST(BandScaleFor, ATierEntryWinsOverThePooledOne) {
  std::vector<v1::ErrorBandScale> s(2);
  s[0].set_tier("ANY");
  s[0].set_metric("ttft");
  s[0].set_scale(3);
  s[1].set_tier("EXTRAPOLATED");
  s[1].set_metric("ttft");
  s[1].set_scale(5);
  EXPECT_EQ(BandScaleFor(s, v1::TIER_EXTRAPOLATED, "ttft"), 5);
  EXPECT_EQ(BandScaleFor(s, v1::TIER_CALIBRATED, "ttft"), 3);
}

TEST(BandScalesFrom, PredictionsWithoutARawBandAreIgnored) {
  std::vector<v1::AccuracyPrediction> ps(1);
  ps[0].set_metric("tpot");
  ps[0].set_error_fraction(0.5);
  EXPECT_TRUE(BandScalesFrom(Pointers(ps), 0.8).empty());
  EXPECT_EQ(BandCoverage(Pointers(ps), {}), 0.0);
}

// The method, checked on data it was not fitted on: for each baseline, the
// factors (and run-to-run terms) set on every other baseline's held-out
// predictions give that baseline's predictions a band; pooled over the
// baselines, the coverage is within 10 points of the stated level. One fold
// per baseline: a baseline's predictions err together, and with the 16
// baselines that have banded predictions a two-fold split moves the coverage
// by tens of points on the choice of halves alone (alternate ids: 91% and
// 67% at the commit that made this test).
TEST(BandCalibration, CoverageOnEachBaselineLeftOutIsNearTheStatedLevel) {
  absl::StatusOr<std::vector<v1::AccuracyPrediction>> all =
      HeldOutPredictions(testing::BundledCatalogue());
  ASSERT_TRUE(all.ok()) << all.status();
  std::set<std::string> ids;
  for (const v1::AccuracyPrediction& p : *all) {
    if (p.has_raw_band_fraction()) ids.insert(p.baseline_id());
  }
  ASSERT_GE(ids.size(), 10u);
  int banded = 0;
  double inside = 0;
  double inside_without_run_to_run = 0;
  for (const std::string& id : ids) {
    std::vector<const v1::AccuracyPrediction*> fit, check;
    for (const v1::AccuracyPrediction& p : *all)
      (p.baseline_id() == id ? check : fit).push_back(&p);
    std::vector<v1::ErrorBandScale> s = BandScalesFrom(fit, kBandLevel);
    int n = 0;
    for (const v1::AccuracyPrediction* p : check) n += p->has_raw_band_fraction() ? 1 : 0;
    banded += n;
    inside += n * BandCoverage(check, s);
    // The same factors' method without the run-to-run term, for contrast.
    std::vector<const v1::AccuracyPrediction*> fit_plain;
    std::vector<v1::AccuracyPrediction> copies;
    copies.reserve(fit.size());
    for (const v1::AccuracyPrediction* p : fit) {
      copies.push_back(*p);
      copies.back().set_fitted_on_rows(false);
    }
    for (const v1::AccuracyPrediction& p : copies) fit_plain.push_back(&p);
    std::vector<v1::AccuracyPrediction> check_copies;
    for (const v1::AccuracyPrediction* p : check) {
      check_copies.push_back(*p);
      check_copies.back().set_fitted_on_rows(false);
    }
    std::vector<const v1::AccuracyPrediction*> check_plain;
    for (const v1::AccuracyPrediction& p : check_copies) check_plain.push_back(&p);
    inside_without_run_to_run +=
        n * BandCoverage(check_plain, BandScalesFrom(fit_plain, kBandLevel));
  }
  ASSERT_GE(banded, 100);
  const double coverage = inside / banded;
  std::printf(
      "each of %zu baselines left out: coverage %.1f%% over %d predictions (stated %.0f%%; "
      "without the run-to-run term %.1f%%)\n",
      ids.size(), 100 * coverage, banded, 100 * kBandLevel,
      100 * inside_without_run_to_run / banded);
  EXPECT_NEAR(coverage, kBandLevel, 0.10);
}

// The bundled catalogue's factors are what a fresh fit gives (capplan priors
// --out-dir data writes them).
TEST(BandCalibration, TheCataloguesFactorsEqualAFreshFit) {
  const Catalog& catalog = testing::BundledCatalogue();
  absl::StatusOr<std::vector<v1::ErrorBandScale>> fresh = FitBandScales(catalog);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  const std::vector<v1::ErrorBandScale> stored = CatalogBandScales(catalog);
  ASSERT_EQ(stored.size(), fresh->size()) << "run capplan priors --out-dir data";
  for (size_t k = 0; k < stored.size(); ++k) {
    EXPECT_EQ(stored[k].tier(), (*fresh)[k].tier());
    EXPECT_EQ(stored[k].metric(), (*fresh)[k].metric());
    EXPECT_EQ(stored[k].predictions(), (*fresh)[k].predictions());
    EXPECT_NEAR(stored[k].scale(), (*fresh)[k].scale(), 1e-6 * (*fresh)[k].scale());
  }
}

}  // namespace
}  // namespace capplan::service
