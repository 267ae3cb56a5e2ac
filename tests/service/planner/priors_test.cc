#include "service/planner/priors.h"

#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

v1::EfficiencyPrior Prior(const std::string& text) {
  v1::EfficiencyPrior p;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &p)) << text;
  return p;
}

// A hardware class learned on one engine only (SGLang), its architecture
// prior, and the global one; the overheads differ by a factor of five.
std::vector<v1::EfficiencyPrior> Priors() {
  return {Prior(R"pb(id: "global"
                     level: PRIOR_LEVEL_GLOBAL
                     alpha_seconds: 0.005
                     beta_weights: 1
                     request_latency_seconds: 0.05)pb"),
          Prior(R"pb(id: "amd-cdna-3"
                     level: PRIOR_LEVEL_ARCHITECTURE
                     vendor: "amd"
                     architecture: "cdna 3"
                     alpha_seconds: 0.025
                     beta_weights: 1.4
                     request_latency_seconds: 0.9)pb"),
          Prior(R"pb(id: "amd-cdna-3-xgmi-sglang"
                     level: PRIOR_LEVEL_CLASS
                     vendor: "amd"
                     architecture: "cdna 3"
                     link: LINK_KIND_XGMI
                     engine: ENGINE_KIND_SGLANG
                     alpha_seconds: 0.028
                     beta_weights: 1.2
                     request_latency_seconds: 1.0)pb")};
}

HardwareClassKey Key(v1::LinkKind link, v1::EngineKind engine) {
  HardwareClassKey key;
  key.vendor = "amd";
  key.architecture = "cdna 3";
  key.link = link;
  key.engine = engine;
  return key;
}

TEST(ClosestPrior, TheClassOfTheKeyIsTakenWhole) {
  std::optional<v1::EfficiencyPrior> p =
      ClosestPrior(Priors(), Key(v1::LINK_KIND_XGMI, v1::ENGINE_KIND_SGLANG));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->id(), "amd-cdna-3-xgmi-sglang");
  EXPECT_DOUBLE_EQ(p->alpha_seconds(), 0.028);
}

// The architecture's data ran SGLang: a vLLM deployment borrows its
// efficiencies (β) but not SGLang's fixed costs per step and per request.
TEST(ClosestPrior, AnotherEnginesOverheadsDoNotCross) {
  std::optional<v1::EfficiencyPrior> p =
      ClosestPrior(Priors(), Key(v1::LINK_KIND_NONE, v1::ENGINE_KIND_VLLM));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->id(), "amd-cdna-3+global-overheads");
  EXPECT_DOUBLE_EQ(p->beta_weights(), 1.4);
  EXPECT_DOUBLE_EQ(p->alpha_seconds(), 0.005);
  EXPECT_DOUBLE_EQ(p->request_latency_seconds(), 0.05);
}

// The same engine on another link: the architecture holds that engine's
// runs, so its overheads stand.
TEST(ClosestPrior, TheSameEngineOnAnotherLinkKeepsTheArchitecturesOverheads) {
  std::optional<v1::EfficiencyPrior> p =
      ClosestPrior(Priors(), Key(v1::LINK_KIND_NONE, v1::ENGINE_KIND_SGLANG));
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->id(), "amd-cdna-3");
  EXPECT_DOUBLE_EQ(p->alpha_seconds(), 0.025);
  EXPECT_DOUBLE_EQ(p->request_latency_seconds(), 0.9);
}

// Passing over the class (its baselines ran the other model family): the
// architecture's efficiencies, with β_comm of the link (none here: the link
// at its specification).
TEST(ClosestPrior, SkippingTheClassFallsToTheArchitecture) {
  std::optional<v1::EfficiencyPrior> p =
      ClosestPrior(Priors(), Key(v1::LINK_KIND_XGMI, v1::ENGINE_KIND_SGLANG),
                   [](const v1::EfficiencyPrior& p) { return p.level() != v1::PRIOR_LEVEL_CLASS; });
  ASSERT_TRUE(p.has_value());
  EXPECT_EQ(p->id(), "amd-cdna-3+roofline-link");
  EXPECT_DOUBLE_EQ(p->beta_weights(), 1.4);
  EXPECT_DOUBLE_EQ(p->beta_comm(), 1.0);
}

// The bundled catalogue's SGLang-on-Hopper class was learned on DeepSeek-R1
// and gpt-oss runs only (mixtures of experts): not on a dense model.
TEST(LearnedOnFamily, TheBundledSglangHopperClassIsMixtureOfExpertsOnly) {
  const Catalog& catalog = capplan::testing::BundledCatalogue();
  const v1::EfficiencyPrior* p = catalog.FindPrior("nvidia-hopper-nvlink-sglang");
  ASSERT_NE(p, nullptr);
  ASSERT_GT(p->baseline_ids_size(), 0);
  EXPECT_TRUE(LearnedOnFamily(catalog, *p, /*moe=*/true));
  EXPECT_FALSE(LearnedOnFamily(catalog, *p, /*moe=*/false));
  // The architecture level pools both families.
  const v1::EfficiencyPrior* hopper = catalog.FindPrior("nvidia-hopper");
  ASSERT_NE(hopper, nullptr);
  EXPECT_TRUE(LearnedOnFamily(catalog, *hopper, true));
  EXPECT_TRUE(LearnedOnFamily(catalog, *hopper, false));
  // Baselines the catalogue does not hold say nothing against a family.
  v1::EfficiencyPrior unknown;
  unknown.add_baseline_ids("no-such-baseline");
  EXPECT_TRUE(LearnedOnFamily(catalog, unknown, false));
}

TEST(ClosestPrior, NoPriorsNoAnswer) {
  EXPECT_FALSE(ClosestPrior({}, Key(v1::LINK_KIND_NONE, v1::ENGINE_KIND_VLLM)).has_value());
}

}  // namespace
}  // namespace capplan::service
