// The efficiency priors in data/priors/ are a reproducible fit: refitting the
// bundled catalogue's baselines gives the same priors (run `capplan priors
// --out-dir data` after adding baselines).
#include "service/planner/priors.h"

#include <cmath>
#include <string>

#include "gtest/gtest.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

bool Near(double a, double b) { return std::abs(a - b) <= 1e-6 * std::max(1.0, std::abs(b)); }

TEST(Priors, TheDataEqualsAFreshFitOfTheCatalogue) {
  const Catalog& catalog = testing::BundledCatalogue();
  absl::StatusOr<std::vector<v1::EfficiencyPrior>> fresh = FitPriors(catalog);
  ASSERT_TRUE(fresh.ok()) << fresh.status();
  ASSERT_FALSE(fresh->empty());
  EXPECT_EQ(fresh->size(), catalog.priors().size())
      << "data/priors/ holds another set than a fresh fit: run capplan priors --out-dir data";
  for (const v1::EfficiencyPrior& p : *fresh) {
    const v1::EfficiencyPrior* stored = catalog.FindPrior(p.id());
    ASSERT_NE(stored, nullptr) << p.id() << " is missing from data/priors/";
    EXPECT_TRUE(Near(stored->alpha_seconds(), p.alpha_seconds())) << p.id();
    EXPECT_TRUE(Near(stored->beta_weights(), p.beta_weights())) << p.id();
    EXPECT_TRUE(Near(stored->beta_kv(), p.beta_kv())) << p.id();
    EXPECT_TRUE(Near(stored->beta_flops(), p.beta_flops())) << p.id();
    EXPECT_TRUE(Near(stored->beta_comm(), p.beta_comm())) << p.id();
    EXPECT_TRUE(Near(stored->leave_one_out_relative_error(), p.leave_one_out_relative_error()))
        << p.id();
    EXPECT_EQ(stored->observations(), p.observations()) << p.id();
    EXPECT_EQ(stored->baseline_ids_size(), p.baseline_ids_size()) << p.id();
  }
}

TEST(Priors, EveryLevelRespectsThePhysicalFloorAndCountsItsBaselines) {
  const Catalog& catalog = testing::BundledCatalogue();
  int global = 0;
  for (const v1::EfficiencyPrior& p : catalog.priors()) {
    global += p.level() == v1::PRIOR_LEVEL_GLOBAL;
    for (double beta : {p.beta_weights(), p.beta_kv(), p.beta_flops(), p.beta_comm()}) {
      EXPECT_GE(beta, 1.0) << p.id();
    }
    EXPECT_GE(p.alpha_seconds(), 0) << p.id();
    EXPECT_GT(p.baseline_ids_size(), 0) << p.id();
  }
  EXPECT_EQ(global, 1);
}

}  // namespace
}  // namespace capplan::service
