#include "service/planner/planner.h"

#include <functional>
#include <memory>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::IsOk;
using ::capplan::testing::k000;
using ::capplan::testing::k002;
using ::capplan::testing::StatusIs;
using ::testing::AllOf;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::UnorderedElementsAre;

std::shared_ptr<const Catalog> BundledShared() {
  const Catalog& catalog = testing::BundledCatalogue();
  return std::shared_ptr<const Catalog>(&catalog, [](const Catalog*) {});
}

std::shared_ptr<const Catalog> Mini(const testing::TempDir& dir) {
  testing::WriteMiniCatalogue(dir);
  absl::StatusOr<std::shared_ptr<const Catalog>> c =
      Catalog::LoadFromDirectory(dir.path().string());
  EXPECT_TRUE(c.ok()) << c.status();
  return c.ok() ? *c : nullptr;
}

// ---------------------------------------------------------------- hardware

TEST(Planner, ListHardwareFiltersByVendorIgnoringCase) {
  Planner planner(BundledShared());
  absl::StatusOr<v1::ListHardwareResponse> all = planner.ListHardware({});
  ASSERT_THAT(all, IsOk());
  const int total = static_cast<int>(BundledShared()->hardware().size());
  int nvidia = 0;
  for (const v1::Hardware& h : BundledShared()->hardware()) nvidia += h.vendor() == "NVIDIA";
  EXPECT_EQ(all->hardware_size(), total);
  v1::ListHardwareRequest amd;
  amd.set_vendor("amd");
  absl::StatusOr<v1::ListHardwareResponse> some = planner.ListHardware(amd);
  ASSERT_THAT(some, IsOk());
  std::vector<std::string> ids;
  for (const v1::Hardware& h : some->hardware()) ids.push_back(h.id());
  EXPECT_THAT(ids, UnorderedElementsAre("amd-mi300x-192gb", "amd-mi308x-192gb", "amd-mi325x-256gb",
                                        "amd-mi355x-288gb", "amd-radeon-rx-9070-xt-16gb"));
  amd.set_vendor("NVIDIA");
  EXPECT_EQ(planner.ListHardware(amd)->hardware_size(), nvidia);
  EXPECT_EQ(total, nvidia + 5);
  amd.set_vendor("Intel");
  EXPECT_EQ(planner.ListHardware(amd)->hardware_size(), 0);
}

TEST(Planner, GetHardwareByIdOrNotFound) {
  Planner planner(BundledShared());
  v1::GetHardwareRequest request;
  request.set_id("nvidia-l4-24gb");
  absl::StatusOr<v1::Hardware> hw = planner.GetHardware(request);
  ASSERT_THAT(hw, IsOk());
  EXPECT_EQ(hw->id(), "nvidia-l4-24gb");
  request.set_id("no-such-gpu");
  EXPECT_THAT(planner.GetHardware(request),
              StatusIs(absl::StatusCode::kNotFound,
                       Eq("hardware 'no-such-gpu' is not in the catalogue (ListHardware lists "
                          "the ids)")));
  // An id close to some: "did you mean", by substring and by edit distance.
  request.set_id("h100");
  absl::StatusOr<v1::Hardware> h100 = planner.GetHardware(request);
  EXPECT_THAT(h100,
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("hardware 'h100' is not in the catalogue; did you mean "),
                             HasSubstr("nvidia-h100-sxm-80gb"), HasSubstr("nvidia-h100-pcie-80gb"),
                             Not(HasSubstr("a100")))));
  request.set_id("nvidia-l4-42gb");
  EXPECT_THAT(planner.GetHardware(request),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("did you mean nvidia-l4-24gb"), Not(HasSubstr("h100")))));
  EXPECT_THAT(planner.GetHardware({}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("GetHardwareRequest.id is empty; must name a catalogue entry")));
}

// ------------------------------------------------------------------ models

TEST(Planner, ListModelsFiltersByFamily) {
  Planner planner(BundledShared());
  absl::StatusOr<v1::ListModelsResponse> all = planner.ListModels({});
  ASSERT_THAT(all, IsOk());
  EXPECT_EQ(all->models_size(), static_cast<int>(BundledShared()->models().size()));
  v1::ListModelsRequest qwen3;
  qwen3.set_family("qwen3");
  absl::StatusOr<v1::ListModelsResponse> some = planner.ListModels(qwen3);
  ASSERT_THAT(some, IsOk());
  std::vector<std::string> ids;
  for (const v1::ModelInfo& m : some->models()) ids.push_back(m.model().id());
  // The family is matched exactly: qwen3-moe and qwen3-next are others.
  EXPECT_THAT(ids, UnorderedElementsAre("qwen3-8b", "qwen3-32b"));
  // Each entry carries its derived figures.
  EXPECT_GT(some->models(0).derived().total_parameters(), 0u);
}

TEST(Planner, GetModelByIdOrRepoId) {
  Planner planner(BundledShared());
  v1::GetModelRequest request;
  request.set_id("qwen3-8b");
  absl::StatusOr<v1::ModelInfo> by_id = planner.GetModel(request);
  ASSERT_THAT(by_id, IsOk());
  request.set_id("Qwen/Qwen3-8B");
  absl::StatusOr<v1::ModelInfo> by_repo = planner.GetModel(request);
  ASSERT_THAT(by_repo, IsOk());
  EXPECT_EQ(by_repo->model().id(), "qwen3-8b");
  EXPECT_EQ(by_repo->derived().total_parameters(), by_id->derived().total_parameters());
  request.set_id("nope/nope");
  EXPECT_THAT(planner.GetModel(request),
              StatusIs(absl::StatusCode::kNotFound,
                       Eq("model 'nope/nope' is not in the catalogue (ListModels lists the ids)")));
  request.set_id("qwen3-8");
  EXPECT_THAT(planner.GetModel(request),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("; did you mean qwen3-8b")));
  request.set_id("meta-llama/Llama-3.1-8B-Instruc");  // a repo id, one letter short
  EXPECT_THAT(planner.GetModel(request), StatusIs(absl::StatusCode::kNotFound,
                                                  HasSubstr("did you mean llama-3.1-8b-instruct")));
  EXPECT_THAT(planner.GetModel({}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("GetModelRequest.id is empty; must name a catalogue entry")));
}

// --------------------------------------------------------------- baselines

// Ids of the catalogue's baselines that satisfy `keep`, for comparing with
// what a filtered list returns.
std::vector<std::string> IdsWhere(const std::function<bool(const v1::Baseline&)>& keep) {
  std::vector<std::string> ids;
  for (const v1::Baseline& b : BundledShared()->baselines()) {
    if (keep(b)) ids.push_back(b.id());
  }
  return ids;
}

std::vector<std::string> IdsOf(const v1::ListBaselinesResponse& r) {
  std::vector<std::string> ids;
  for (const v1::Baseline& b : r.baselines()) ids.push_back(b.id());
  return ids;
}

TEST(Planner, ListBaselinesFilters) {
  Planner planner(BundledShared());
  EXPECT_EQ(planner.ListBaselines({})->baselines_size(),
            static_cast<int>(BundledShared()->baselines().size()));
  v1::ListBaselinesRequest request;
  request.set_engine(v1::ENGINE_KIND_SGLANG);
  absl::StatusOr<v1::ListBaselinesResponse> sglang = planner.ListBaselines(request);
  ASSERT_THAT(sglang, IsOk());
  EXPECT_THAT(IdsOf(*sglang), ::testing::Contains(k000));
  EXPECT_EQ(IdsOf(*sglang), IdsWhere([](const v1::Baseline& b) {
              return b.deployment().engine().kind() == v1::ENGINE_KIND_SGLANG;
            }));
  request = {};
  request.set_hardware_id("nvidia-rtx-5090-32gb");
  absl::StatusOr<v1::ListBaselinesResponse> on_5090 = planner.ListBaselines(request);
  ASSERT_THAT(on_5090, IsOk());
  EXPECT_THAT(IdsOf(*on_5090), ::testing::Contains(k002));
  for (const v1::Baseline& b : on_5090->baselines()) {
    EXPECT_EQ(b.deployment().hardware_id(), "nvidia-rtx-5090-32gb");
  }
  // A model named by its catalogue id, or by its Hugging Face repo id.
  request = {};
  request.set_model_id("qwen3.8-flash-next-nvfp4");
  EXPECT_EQ(IdsOf(*planner.ListBaselines(request)), std::vector<std::string>{k002});
  request.set_model_id("Qwen/Qwen3-8B");
  EXPECT_EQ(IdsOf(*planner.ListBaselines(request)), IdsWhere([](const v1::Baseline& b) {
              return b.deployment().model_id() == "qwen3-8b";
            }));
  // Two filters together.
  request = {};
  request.set_hardware_id("nvidia-rtx-5090-32gb");
  request.set_engine(v1::ENGINE_KIND_SGLANG);
  EXPECT_EQ(IdsOf(*planner.ListBaselines(request)), IdsWhere([](const v1::Baseline& b) {
              return b.deployment().hardware_id() == "nvidia-rtx-5090-32gb" &&
                     b.deployment().engine().kind() == v1::ENGINE_KIND_SGLANG;
            }));
}

TEST(Planner, ListBaselinesWithUnknownFiltersIsNotFound) {
  Planner planner(BundledShared());
  v1::ListBaselinesRequest request;
  request.set_model_id("no-such-model");
  EXPECT_THAT(planner.ListBaselines(request),
              StatusIs(absl::StatusCode::kNotFound,
                       Eq("ListBaselinesRequest.model_id = \"no-such-model\"; no such model in "
                          "the catalogue")));
  request = {};
  request.set_hardware_id("gpu-x");
  EXPECT_THAT(planner.ListBaselines(request),
              StatusIs(absl::StatusCode::kNotFound,
                       Eq("ListBaselinesRequest.hardware_id = \"gpu-x\"; no such hardware in the "
                          "catalogue")));
}

TEST(Planner, GetBaselineByIdOrNotFound) {
  Planner planner(BundledShared());
  v1::GetBaselineRequest request;
  request.set_id(k002);
  absl::StatusOr<v1::Baseline> b = planner.GetBaseline(request);
  ASSERT_THAT(b, IsOk());
  EXPECT_EQ(b->deployment().hardware_id(), "nvidia-rtx-5090-32gb");
  request.set_id("nope");
  EXPECT_THAT(
      planner.GetBaseline(request),
      StatusIs(absl::StatusCode::kNotFound,
               Eq("baseline 'nope' is not in the catalogue (ListBaselines lists the ids)")));
  request.set_id("seed-002");
  EXPECT_THAT(
      planner.GetBaseline(request),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("did you mean " + std::string(k002))));
  EXPECT_THAT(planner.GetBaseline({}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("GetBaselineRequest.id is empty; must name a catalogue entry")));
}

// ------------------------------------------------------------- SwapCatalog

TEST(Planner, SwapCatalogAnswersFromTheNewCatalogue) {
  testing::TempDir dir;
  std::shared_ptr<const Catalog> mini = Mini(dir);
  ASSERT_NE(mini, nullptr);
  Planner planner(BundledShared());
  std::shared_ptr<const Catalog> before = planner.catalog();
  planner.SwapCatalog(mini);
  EXPECT_EQ(planner.catalog(), mini);
  absl::StatusOr<v1::ListHardwareResponse> hw = planner.ListHardware({});
  ASSERT_THAT(hw, IsOk());
  ASSERT_EQ(hw->hardware_size(), 1);
  EXPECT_EQ(hw->hardware(0).id(), "test-gpu-24gb");
  v1::GetBaselineRequest request;
  request.set_id(k000);
  EXPECT_THAT(planner.GetBaseline(request), StatusIs(absl::StatusCode::kNotFound));
  request.set_id("test-baseline");
  EXPECT_THAT(planner.GetBaseline(request), IsOk());
  // A snapshot taken before the swap still answers from the old catalogue.
  EXPECT_NE(before->FindBaseline(k000), nullptr);
}

TEST(Planner, PlanningRpcsUseTheCurrentCatalogue) {
  testing::TempDir dir;
  Planner planner(BundledShared());
  v1::PlanMemoryRequest request;
  request.mutable_deployment()->set_model_id("qwen3-8b");
  request.mutable_deployment()->set_hardware_id("nvidia-l4-24gb");
  absl::StatusOr<v1::MemoryPlan> plan = planner.PlanMemory(request, nullptr);
  ASSERT_THAT(plan, IsOk());
  EXPECT_EQ(plan->deployment().model_id(), "qwen3-8b");
  // The bundled catalogue's models are not in the mini one.
  planner.SwapCatalog(Mini(dir));
  EXPECT_THAT(planner.PlanMemory(request, nullptr),
              StatusIs(absl::StatusCode::kNotFound,
                       ::testing::HasSubstr("PlanMemoryRequest.deployment.model_id = "
                                            "\"qwen3-8b\"")));
  // The mini catalogue holds no engine presets: its own model cannot be
  // planned either, and the error names the field.
  request.mutable_deployment()->set_model_id("test-model");
  request.mutable_deployment()->set_hardware_id("test-gpu-24gb");
  EXPECT_THAT(planner.PlanMemory(request, nullptr),
              StatusIs(absl::StatusCode::kNotFound,
                       Eq("PlanMemoryRequest.deployment.engine.version: no engine preset for "
                          "engine ENGINE_KIND_VLLM")));
  planner.SwapCatalog(BundledShared());
  request.mutable_deployment()->set_model_id("qwen3-8b");
  request.mutable_deployment()->set_hardware_id("nvidia-l4-24gb");
  EXPECT_THAT(planner.PlanMemory(request, nullptr), IsOk());
  v1::ValidateRequest validate;
  *validate.mutable_deployment() = request.deployment();
  absl::StatusOr<v1::ValidateResponse> verdict = planner.Validate(validate, nullptr);
  ASSERT_THAT(verdict, IsOk());
  EXPECT_NE(verdict->verdict(), v1::VERDICT_UNSPECIFIED);
}

}  // namespace
}  // namespace capplan::service
