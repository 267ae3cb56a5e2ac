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
                                  double raw_band) {
  v1::AccuracyPrediction p;
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
  // |error| / band = 0.5, 1.0, ..., 5.0 (ten predictions, signs mixed).
  for (int i = 1; i <= 10; ++i) {
    ps.push_back(Prediction(v1::TIER_CALIBRATED, "ttft_p50", (i % 2 ? -0.05 : 0.05) * i, 0.1));
  }
  const std::vector<v1::ErrorBandScale> s = BandScalesFrom(Pointers(ps), 0.8);
  // 8th of 10 ratios: 4.0; raw coverage 2 / 10 (ratios 0.5 and 1.0).
  const double factor = BandScaleFor(s, v1::TIER_CALIBRATED, "ttft");
  EXPECT_NEAR(factor, 4.0, 1e-12);
  for (const v1::ErrorBandScale& e : s) {
    EXPECT_EQ(e.metric(), "ttft");
    EXPECT_EQ(e.predictions(), 10u);
    EXPECT_NEAR(e.raw_coverage(), 0.2, 1e-12);
  }
  EXPECT_NEAR(BandCoverage(Pointers(ps), s), 0.8, 1e-12);
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

// The method, checked on data it was not fitted on: factors set on the
// held-out predictions of half the catalogue's baselines give the other
// half's predictions a coverage within 10 points of the stated level.
TEST(BandCalibration, CoverageOnTheOtherHalfOfTheBaselinesIsNearTheStatedLevel) {
  absl::StatusOr<std::vector<v1::AccuracyPrediction>> all =
      HeldOutPredictions(testing::BundledCatalogue());
  ASSERT_TRUE(all.ok()) << all.status();
  std::set<std::string> ids;
  for (const v1::AccuracyPrediction& p : *all) ids.insert(p.baseline_id());
  std::set<std::string> first_half;
  int i = 0;
  for (const std::string& id : ids) {
    if (i++ % 2 == 0) first_half.insert(id);
  }
  std::vector<const v1::AccuracyPrediction*> a, b;
  for (const v1::AccuracyPrediction& p : *all) {
    (first_half.count(p.baseline_id()) ? a : b).push_back(&p);
  }
  ASSERT_GE(a.size(), 50u);
  ASSERT_GE(b.size(), 50u);
  for (const auto& [fit, check, name] :
       {std::make_tuple(&a, &b, "fit on the first half, checked on the second"),
        std::make_tuple(&b, &a, "fit on the second half, checked on the first")}) {
    const std::vector<v1::ErrorBandScale> s = BandScalesFrom(*fit, kBandLevel);
    const double raw = BandCoverage(*check, {});
    const double scaled = BandCoverage(*check, s);
    std::printf("%s: raw coverage %.0f%%, with the factors %.0f%% (stated %.0f%%)\n", name,
                100 * raw, 100 * scaled, 100 * kBandLevel);
    EXPECT_NEAR(scaled, kBandLevel, 0.10) << name;
  }
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
