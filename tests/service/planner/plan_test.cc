#include "service/planner/plan.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "service/planner/load.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

const Catalog& Bundled() { return testing::BundledCatalogue(); }

const v1::Baseline& Seed(const std::string& prefix) {
  for (const v1::Baseline& b : Bundled().baselines()) {
    if (b.provenance().source_document().rfind(prefix, 0) == 0) return b;
  }
  ADD_FAILURE() << "no baseline from " << prefix;
  return Bundled().baselines().front();
}

v1::PlanRequest Request(const std::string& text) {
  v1::PlanRequest r;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &r)) << text;
  return r;
}

// Prepare once: one Plan draws both curves, the safe points, capacity and
// sizing from one memory plan and one fit.
TEST(Plan, PlansMemoryOnceAndFitsOnceForBothCurves) {
  WorkCounters counters;
  auto plan = Plan(Bundled(),
                   Request(absl::StrCat("deployment { baseline_id: \"", testing::k002,
                                        "\" } slo { ttft_p95_seconds: 1 } "
                                        "target_concurrent_users: 40 price_per_gpu_hour: 1")),
                   &counters);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_TRUE(plan->safe_closed_loop().found());
  EXPECT_TRUE(plan->safe_open_loop().found());
  EXPECT_GT(plan->sizing().replicas(), 0);
  EXPECT_EQ(counters.memory_plans, 1);
  EXPECT_EQ(counters.fits, 1);
}

// Plan walks its grids with only the figures the SLO check reads before the
// safe point, one server for both curves. On dense, MoE, MLA and MXFP4
// deployments over NVLink, xGMI and PCIe, two workloads and three SLOs, its
// safe points are the ones PredictLoad finds on the same axes with every
// point's figures.
TEST(Plan, SafePointsAreTheWholeCurvesOnAGrid) {
  struct Case {
    const char* model;
    const char* gpu;
    int gpus;
  };
  const Case cases[] = {
      {"llama-3.1-8b-instruct", "nvidia-h100-sxm-80gb", 1},
      {"llama-3.1-8b-instruct", "nvidia-l4-24gb", 1},
      {"llama-3.1-70b-instruct", "nvidia-a100-sxm-80gb", 4},
      {"qwen3-30b-a3b", "nvidia-h100-sxm-80gb", 1},
      {"deepseek-v3", "amd-mi300x-192gb", 8},
      {"gpt-oss-120b", "nvidia-h100-sxm-80gb", 2},
      {"qwen3-8b", "nvidia-rtx-4090-24gb", 1},
  };
  const char* slos[] = {"ttft_p95_seconds: 1", "ttft_p95_seconds: 0.3 tpot_seconds: 0.04",
                        "e2e_p95_seconds: 12"};
  const std::pair<int, int> workloads[] = {{1000, 200}, {8000, 200}};
  int compared = 0, bound_inside = 0;
  for (const Case& c : cases) {
    for (const auto& [in, out] : workloads) {
      for (const char* slo : slos) {
        const std::string deployment =
            absl::StrCat("deployment { model_id: \"", c.model, "\" hardware_id: \"", c.gpu,
                         "\" gpu_count: ", c.gpus, " engine { max_model_len: 16384 } } ");
        const std::string rest = absl::StrCat("workload { input_tokens: ", in,
                                              " output_tokens: ", out, " } slo { ", slo, " }");
        SCOPED_TRACE(deployment + rest);
        absl::StatusOr<v1::PlanResponse> plan = Plan(Bundled(), Request(deployment + rest));
        ASSERT_TRUE(plan.ok()) << plan.status();
        v1::PredictLoadRequest walk;
        ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(deployment + rest, &walk));
        *walk.mutable_closed_loop() = ConcurrencyGridAxis(4096);
        absl::StatusOr<v1::LoadCurve> closed = PredictLoad(Bundled(), walk);
        ASSERT_TRUE(closed.ok()) << closed.status();
        double peak = 0;
        for (const v1::LoadCurvePoint& p : closed->points()) {
          peak = std::max(peak, p.requests_per_second());
        }
        *walk.mutable_open_loop() = RateGridAxis(peak, 64);
        absl::StatusOr<v1::LoadCurve> open = PredictLoad(Bundled(), walk);
        ASSERT_TRUE(open.ok()) << open.status();
        for (const auto& [planned, whole] :
             {std::pair{&plan->safe_closed_loop(), &closed->safe_operating_point()},
              std::pair{&plan->safe_open_loop(), &open->safe_operating_point()}}) {
          ++compared;
          EXPECT_EQ(planned->found(), whole->found());
          EXPECT_EQ(planned->binding(), whole->binding());
          if (!whole->found()) continue;
          if (whole->binding() != v1::LOAD_BINDING_LOAD_RANGE) ++bound_inside;
          EXPECT_EQ(planned->requests_per_second(), whole->point().requests_per_second());
          EXPECT_EQ(planned->ttft_p95_seconds(), whole->point().ttft_p95_seconds());
          EXPECT_EQ(planned->ttft_p99_seconds(), whole->point().ttft_p99_seconds());
          EXPECT_EQ(planned->tpot_seconds(), whole->point().tpot_seconds());
          if (whole->point().has_concurrency()) {
            EXPECT_EQ(planned->concurrent_users(), whole->point().concurrency());
          }
        }
      }
    }
  }
  EXPECT_EQ(compared, 7 * 2 * 3 * 2);
  // The grid is worth having: most safe points are bound inside the axes.
  EXPECT_GE(bound_inside, compared / 2);
}

TEST(Plan, WithoutCalibrationPlansMemoryOnceAndFitsNothing) {
  WorkCounters counters;
  auto plan = Plan(Bundled(),
                   Request("deployment { model_id: \"llama-3.1-8b-instruct\" "
                           "hardware_id: \"nvidia-h100-sxm-80gb\" } "
                           "workload { input_tokens: 1000 output_tokens: 200 } "
                           "no_catalog_calibration: true"),
                   &counters);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(counters.memory_plans, 1);
  EXPECT_EQ(counters.fits, 0);
}

TEST(Plan, Seed000MeasuredRunGivesTheReportsMonthlyCapacity) {
  const v1::Baseline& seed = Seed("000_");
  auto plan = Plan(Bundled(), Request("deployment { baseline_id: \"" + seed.id() +
                                      "\" } slo { ttft_p95_seconds: 1 }"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_EQ(plan->measured_capacity_size(), 1);
  const v1::MeasuredCapacity& m = plan->measured_capacity(0);
  const v1::SustainedRun& run = seed.sustained_runs(0);
  const v1::CapacityClaim& claim = seed.capacity_claims(0);
  double days = claim.days_per_month();
  // req/s × (input + output) × 86,400 × days, from the catalogue's own figures.
  double expected = run.arrival_rate_rps() *
                    (run.workload().input_tokens() + run.workload().output_tokens()) * 86400 * days;
  EXPECT_NEAR(m.from_requests().tokens_per_month_total(), expected, 1e-6 * expected);
  EXPECT_EQ(m.from_requests().days_per_month(), days);
  // The report rounds to two digits (2.4e9, 3.9e8); ours must round to them.
  EXPECT_NEAR(m.from_requests().tokens_per_month_total() / claim.tokens_per_month(), 1, 0.02);
  EXPECT_NEAR(m.from_output_rate().output_tokens_per_month() / claim.output_tokens_per_month(), 1,
              0.02);
  EXPECT_EQ(m.from_output_rate().tokens_per_month_total(), 0) << "output-only run: no total";
  EXPECT_THAT(m.note(), HasSubstr("30-day month"));
  // The plan's own figures are at the safe point, and peak is labelled.
  EXPECT_THAT(plan->capacity().at(), HasSubstr("safe operating point"));
  EXPECT_THAT(plan->capacity_at_peak().at(), HasSubstr("PEAK"));
  EXPECT_LE(plan->capacity().tokens_per_month_total(),
            plan->capacity_at_peak().tokens_per_month_total());
}

TEST(Plan, ProposedChangeIsNotMeasuredAndCarriesAnErrorBand) {
  const v1::Baseline& seed = Seed("000_");
  for (const std::string& change :
       {std::string("gpu_count: 8"), std::string("engine { max_model_len: 16384 }")}) {
    SCOPED_TRACE(change);
    auto plan = Plan(Bundled(), Request("deployment { baseline_id: \"" + seed.id() + "\" " +
                                        change + " } slo { ttft_p95_seconds: 1 }"));
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->measured_capacity_size(), 0);
    EXPECT_TRUE(plan->safe_closed_loop().found());
    EXPECT_GT(plan->capacity().tokens_per_month_total(), 0);
    ASSERT_GT(plan->provenance_size(), 0);
    for (const v1::MetricProvenance& p : plan->provenance()) {
      EXPECT_TRUE(p.tier() == v1::TIER_CALIBRATED || p.tier() == v1::TIER_EXTRAPOLATED)
          << p.metric() << " " << v1::Tier_Name(p.tier());
      EXPECT_GT(p.error_band_fraction(), 0) << p.metric();
    }
  }
}

TEST(Plan, ReplicasAreTheCeilingOfTargetOverSafeLoad) {
  auto plan = Plan(Bundled(), Request(R"(
      deployment { model_id: "llama-3.1-8b-instruct" hardware_id: "nvidia-h100-sxm-80gb"
                   engine { max_model_len: 8192 } }
      workload { input_tokens: 1000 output_tokens: 200 }
      slo { ttft_p95_seconds: 1 tpot_seconds: 0.05 }
      target_requests_per_second: 25
      price_per_gpu_hour: 2.5)"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->has_sizing());
  const v1::Sizing& s = plan->sizing();
  double safe = plan->safe_open_loop().requests_per_second();
  ASSERT_GT(safe, 0);
  EXPECT_EQ(s.safe_load_per_replica(), safe);
  EXPECT_GE(s.replicas() * safe, 25 * (1 - 1e-9));
  EXPECT_LT((s.replicas() - 1) * safe, 25);
  EXPECT_EQ(s.gpus(), s.replicas() * plan->memory().deployment().gpu_count());
  ASSERT_TRUE(plan->has_cost_per_million_output_tokens());
  double gpu_hours =
      24 * plan->capacity().days_per_month() * plan->memory().deployment().gpu_count();
  EXPECT_NEAR(plan->cost_per_million_output_tokens(),
              2.5 * gpu_hours / (plan->capacity().output_tokens_per_month() / 1e6), 1e-9);
}

TEST(Plan, DutyFactorScalesTheMonthNotTheRate) {
  std::string base = R"(
      deployment { model_id: "qwen3-8b" hardware_id: "nvidia-l40s-48gb"
                   engine { max_model_len: 8192 } }
      workload { input_tokens: 500 output_tokens: 300 }
      slo { ttft_p95_seconds: 2 })";
  auto full = Plan(Bundled(), Request(base));
  auto half = Plan(Bundled(), Request(base + " duty_factor: 0.5"));
  ASSERT_TRUE(full.ok()) << full.status();
  ASSERT_TRUE(half.ok()) << half.status();
  EXPECT_NEAR(half->capacity().tokens_per_month_total(),
              0.5 * full->capacity().tokens_per_month_total(),
              1e-9 * full->capacity().tokens_per_month_total());
  EXPECT_EQ(half->capacity().tokens_per_second_total(), full->capacity().tokens_per_second_total());
}

TEST(Plan, DeploymentThatDoesNotFitServesNothing) {
  std::string base = R"(
      deployment { model_id: "llama-3.1-70b-instruct" hardware_id: "nvidia-rtx-4090-24gb" }
      workload { input_tokens: 100 output_tokens: 100 })";
  auto plan = Plan(Bundled(), Request(base));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->memory().fits());
  EXPECT_FALSE(plan->safe_closed_loop().found());
  EXPECT_FALSE(plan->safe_open_loop().found());
  EXPECT_EQ(plan->safe_open_loop().binding(), v1::LOAD_BINDING_DOES_NOT_FIT);
  EXPECT_EQ(plan->capacity().tokens_per_month_total(), 0);
  EXPECT_EQ(plan->capacity_at_peak().tokens_per_month_total(), 0);
  EXPECT_THAT(Plan(Bundled(), Request(base + " target_requests_per_second: 1")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("PlanRequest: the deployment does not fit, so no number of "
                                 "replicas reaches the target")));
}

struct Bad {
  std::string name;
  std::string text;
  std::string message;
};
class PlanErrors : public ::testing::TestWithParam<Bad> {};

TEST_P(PlanErrors, InvalidArgumentWithFieldPath) {
  EXPECT_THAT(Plan(Bundled(), Request(GetParam().text)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

constexpr char kOk[] = R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb" }
                          workload { input_tokens: 100 output_tokens: 100 } )";

INSTANTIATE_TEST_SUITE_P(
    Cases, PlanErrors,
    ::testing::Values(
        Bad{"NoWorkload", R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb" })",
            "PlanRequest.workload.input_tokens and PlanRequest.workload.output_tokens are not "
            "set"},
        Bad{"ZeroDuty", std::string(kOk) + "duty_factor: 0", "PlanRequest.duty_factor = 0"},
        Bad{"NegativeTarget", std::string(kOk) + "target_requests_per_second: -1",
            "PlanRequest.target_requests_per_second = -1; must be > 0"},
        Bad{"ZeroPrice", std::string(kOk) + "price_per_gpu_hour: 0",
            "PlanRequest.price_per_gpu_hour = 0"},
        Bad{"ZeroInput",
            R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb" }
               workload { input_tokens: 0 output_tokens: 100 })",
            "PlanRequest.workload.input_tokens = 0"},
        Bad{"BadTp",
            R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb" gpu_count: 3
                            parallelism { tp: 3 } }
               workload { input_tokens: 100 output_tokens: 100 })",
            "PlanRequest.deployment.parallelism.tp = 3; must divide num_attention_heads = 32"}),
    [](const ::testing::TestParamInfo<Bad>& info) { return info.param.name; });

// One replica over two 8-GPU nodes: its throughput against twice the same
// deployment on one node, with the third report's thresholds.
TEST(Plan, ReplicaOverNodesReportsScalingEfficiency) {
  auto plan = Plan(Bundled(), Request("deployment { model_id: \"llama-3.1-70b-instruct\" "
                                      "hardware_id: \"nvidia-h100-sxm-80gb\" gpu_count: 16 "
                                      "parallelism { tp: 16 } engine { max_model_len: 4096 } } "
                                      "workload { input_tokens: 1000 output_tokens: 200 } "
                                      "slo { ttft_p95_seconds: 1 }"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->has_scaling());
  const v1::ScalingAssessment& s = plan->scaling();
  EXPECT_EQ(s.nodes(), 2u);
  EXPECT_EQ(s.gpus_per_node(), 8u);
  ASSERT_GT(s.throughput_one_node(), 0);
  EXPECT_NEAR(s.efficiency(), s.throughput() / (2 * s.throughput_one_node()), 1e-12);
  EXPECT_EQ(s.efficiency_below_threshold(), s.efficiency() < 0.70);
  EXPECT_EQ(s.min_efficiency(), 0.70);
  EXPECT_EQ(s.max_ttft_p99_degradation_fraction(), 0.30);
  EXPECT_EQ(s.threshold_source(), "seed-004-qwen3-coder-480b-fp8-8x-mi308x");
  // The all-reduce crosses the 50 GB/s network instead of 450 GB/s NVLink.
  EXPECT_LT(s.efficiency(), 1.0);
}

TEST(Plan, ReplicaWithinANodeHasNoScaling) {
  auto plan = Plan(Bundled(), Request("deployment { model_id: \"llama-3.1-70b-instruct\" "
                                      "hardware_id: \"nvidia-h100-sxm-80gb\" gpu_count: 8 "
                                      "engine { max_model_len: 4096 } } "
                                      "workload { input_tokens: 1000 output_tokens: 200 }"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_FALSE(plan->has_scaling());
}

}  // namespace
}  // namespace capplan::service
