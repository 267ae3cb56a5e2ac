#include "service/planner/prepared.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "service/planner/memory.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::IsOk;
using ::capplan::testing::k000;
using ::capplan::testing::k002;
using ::capplan::testing::StatusIs;
using ::testing::Contains;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::StartsWith;

const Catalog& Bundled() { return testing::BundledCatalogue(); }

template <typename M>
M Text(const std::string& text) {
  M m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &m)) << text;
  return m;
}

LoadQuery Query(const std::string& workload = "input_tokens: 1000 output_tokens: 200") {
  LoadQuery q;
  q.workload = Text<v1::WorkloadSpec>(workload);
  q.path = "Q";
  return q;
}

absl::StatusOr<PreparedDeployment> Prepare(const std::string& deployment,
                                           WorkCounters* counters = nullptr) {
  CAPPLAN_ASSIGN_OR_RETURN(ResolvedDeployment r,
                           ResolveDeploymentAllowingWithheldHardware(
                               Bundled(), Text<v1::Deployment>(deployment), "T.deployment"));
  return PrepareDeployment(Bundled(), std::move(r), std::nullopt, counters);
}

// ------------------------------------------------------- ValidateLoadQuery

TEST(ValidateLoadQuery, AValidQueryPasses) {
  LoadQuery q = Query(
      "input_tokens: 1 output_tokens: 1 input_tokens_cv: 4 output_tokens_cv: 0 "
      "prefix_cache_hit_rate: 0");
  q.slo = Text<v1::Slo>("ttft_p95_seconds: 1 tpot_seconds: 0.05 e2e_p95_seconds: 10");
  q.operator_concurrency_gate = 1;
  EXPECT_THAT(ValidateLoadQuery(q), IsOk());
}

struct QueryCase {
  std::string name;
  std::string workload;
  std::string slo;
  std::optional<uint32_t> gate;
  std::string message;
};

class ValidateLoadQueryErrors : public ::testing::TestWithParam<QueryCase> {};

TEST_P(ValidateLoadQueryErrors, NameThePathFieldValueAndRule) {
  LoadQuery q = Query(GetParam().workload);
  q.slo = Text<v1::Slo>(GetParam().slo);
  q.operator_concurrency_gate = GetParam().gate;
  EXPECT_THAT(ValidateLoadQuery(q),
              StatusIs(absl::StatusCode::kInvalidArgument, Eq(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ValidateLoadQueryErrors,
    ::testing::Values(
        QueryCase{"ZeroInput", "input_tokens: 0 output_tokens: 10", "", std::nullopt,
                  "Q.workload.input_tokens = 0; must be > 0"},
        QueryCase{"NoOutput", "input_tokens: 10", "", std::nullopt,
                  "Q.workload.output_tokens = 0; must be > 0"},
        QueryCase{"FractionOfAToken", "input_tokens: 10 output_tokens: 0.5", "", std::nullopt,
                  "Q.workload.output_tokens = 0.5; must be >= 1 token"},
        QueryCase{"InputBelowOneToken", "input_tokens: 0.25 output_tokens: 10", "", std::nullopt,
                  "Q.workload.input_tokens = 0.25; must be >= 1 token"},
        QueryCase{"InputCvAboveFour", "input_tokens: 10 output_tokens: 10 input_tokens_cv: 5", "",
                  std::nullopt, "Q.workload.input_tokens_cv = 5; must be in [0, 4]"},
        QueryCase{"NegativeOutputCv", "input_tokens: 10 output_tokens: 10 output_tokens_cv: -1", "",
                  std::nullopt, "Q.workload.output_tokens_cv = -1; must be in [0, 4]"},
        QueryCase{"HitRateOfOne", "input_tokens: 10 output_tokens: 10 prefix_cache_hit_rate: 1", "",
                  std::nullopt, "Q.workload.prefix_cache_hit_rate = 1; must be in [0, 1)"},
        QueryCase{"PromptsWithoutWaves", "input_tokens: 10 output_tokens: 10 num_prompts: 640", "",
                  std::nullopt,
                  "Q.workload.num_prompts = 640; describes a synchronized benchmark: set "
                  "workload.synchronized too"},
        QueryCase{"NoPrompts", "input_tokens: 10 output_tokens: 10 synchronized: true num_prompts: 0",
                  "", std::nullopt, "Q.workload.num_prompts = 0; must be in [1, 100000000]"},
        QueryCase{"TooManyPrompts",
                  "input_tokens: 10 output_tokens: 10 synchronized: true num_prompts: 4000000000", "",
                  std::nullopt, "Q.workload.num_prompts = 4000000000; must be in [1, 100000000]"},
        QueryCase{"ZeroTtftSlo", "input_tokens: 10 output_tokens: 10", "ttft_p95_seconds: 0",
                  std::nullopt, "Q.slo.ttft_p95_seconds = 0; must be > 0"},
        QueryCase{"NegativeTpotSlo", "input_tokens: 10 output_tokens: 10", "tpot_seconds: -1",
                  std::nullopt, "Q.slo.tpot_seconds = -1; must be > 0"},
        QueryCase{"ZeroE2eSlo", "input_tokens: 10 output_tokens: 10", "e2e_p95_seconds: 0",
                  std::nullopt, "Q.slo.e2e_p95_seconds = 0; must be > 0"},
        QueryCase{"ZeroGate", "input_tokens: 10 output_tokens: 10", "", 0u,
                  "Q.operator_concurrency_gate = 0; must be >= 1"}),
    [](const ::testing::TestParamInfo<QueryCase>& info) { return info.param.name; });

// -------------------------------------------------------- ValidateLoadAxis

LoadAxis Closed(const std::string& text) {
  LoadAxis a;
  a.closed_loop = Text<v1::ClosedLoopAxis>(text);
  return a;
}

LoadAxis Open(const std::string& text) {
  LoadAxis a;
  a.open_loop = Text<v1::OpenLoopAxis>(text);
  return a;
}

TEST(ValidateLoadAxis, OneValidAxisPasses) {
  EXPECT_THAT(ValidateLoadAxis(Closed("concurrencies: [1, 2, 16384] think_time_seconds: 0"), "Q"),
              IsOk());
  EXPECT_THAT(ValidateLoadAxis(Open("arrival_rates_rps: [0.1, 0.2]"), "Q"), IsOk());
}

TEST(ValidateLoadAxis, NeitherOrBothAxes) {
  EXPECT_THAT(ValidateLoadAxis(LoadAxis(), "Q"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       StartsWith("Q.load: neither of closed_loop and open_loop set; set exactly "
                                  "one")));
  LoadAxis both = Closed("concurrencies: 1");
  both.open_loop = Text<v1::OpenLoopAxis>("arrival_rates_rps: 1");
  EXPECT_THAT(ValidateLoadAxis(both, "Q"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       StartsWith("Q.load: both of closed_loop and open_loop set")));
}

struct AxisCase {
  std::string name;
  bool closed;
  std::string text;
  std::string message;
};

class ValidateLoadAxisErrors : public ::testing::TestWithParam<AxisCase> {};

TEST_P(ValidateLoadAxisErrors, NameTheIndexValueAndRule) {
  const LoadAxis axis = GetParam().closed ? Closed(GetParam().text) : Open(GetParam().text);
  EXPECT_THAT(ValidateLoadAxis(axis, "Q"),
              StatusIs(absl::StatusCode::kInvalidArgument, Eq(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ValidateLoadAxisErrors,
    ::testing::Values(AxisCase{"EmptyConcurrencies", true, "think_time_seconds: 1",
                               "Q.closed_loop.concurrencies is empty; give at least one"},
                      AxisCase{"ZeroConcurrency", true, "concurrencies: [0]",
                               "Q.closed_loop.concurrencies[0] = 0; must be in [1, 16384]"},
                      AxisCase{"ConcurrencyAboveTheMaximum", true, "concurrencies: [1, 16385]",
                               "Q.closed_loop.concurrencies[1] = 16385; must be in [1, 16384]"},
                      AxisCase{"RepeatedConcurrency", true, "concurrencies: [1, 4, 4]",
                               "Q.closed_loop.concurrencies[2] = 4; must be greater than "
                               "Q.closed_loop.concurrencies[1] = 4 (strictly increasing)"},
                      AxisCase{"NegativeThinkTime", true,
                               "concurrencies: [1] think_time_seconds: -1",
                               "Q.closed_loop.think_time_seconds = -1; must be >= 0"},
                      AxisCase{"EmptyRates", false, "",
                               "Q.open_loop.arrival_rates_rps is empty; give at least one"},
                      AxisCase{"ZeroRate", false, "arrival_rates_rps: [0]",
                               "Q.open_loop.arrival_rates_rps[0] = 0; must be > 0"},
                      AxisCase{"DecreasingRates", false, "arrival_rates_rps: [2, 1]",
                               "Q.open_loop.arrival_rates_rps[1] = 1; must be greater than "
                               "Q.open_loop.arrival_rates_rps[0] = 2 (strictly increasing)"}),
    [](const ::testing::TestParamInfo<AxisCase>& info) { return info.param.name; });

TEST(ValidateLoadAxis, AtMost4096Points) {
  LoadAxis axis;
  axis.open_loop.emplace();
  for (int i = 1; i <= 4097; ++i) axis.open_loop->add_arrival_rates_rps(i);
  EXPECT_THAT(ValidateLoadAxis(axis, "Q"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("Q.open_loop.arrival_rates_rps has 4097 entries; must be at most 4096")));
  axis.open_loop->mutable_arrival_rates_rps()->RemoveLast();
  EXPECT_THAT(ValidateLoadAxis(axis, "Q"), IsOk());
}

// ------------------------------------------------------- PrepareDeployment

TEST(PrepareDeployment, WithheldGpuBaselineInUnknownUnitsWithItsStatedPool) {
  WorkCounters counters;
  absl::StatusOr<PreparedDeployment> d =
      Prepare(absl::StrCat("baseline_id: \"", k000, "\""), &counters);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_TRUE(d->hardware_withheld);
  EXPECT_THAT(d->performance_status, IsOk());
  // Speeds of the unknown card are 1 (its units); TP 4 needs a link, also 1.
  EXPECT_EQ(d->performance.inputs.memory_bandwidth_bytes_per_second, 1);
  EXPECT_EQ(d->performance.inputs.peak_flops_per_second, 1);
  EXPECT_EQ(d->performance.inputs.link_bandwidth_bytes_per_second, 1);
  // The pool the baseline states: 5 sequences × 32,768 tokens = 163,840.
  EXPECT_EQ(d->performance.limits.kv_pool_tokens, 163840.0);
  EXPECT_EQ(d->memory.kv_pool_tokens(), 163840u);
  EXPECT_THAT(d->performance.notes,
              Contains(absl::StrCat("KV pool taken as ", k000,
                                    "'s 5 sequences × 32768 tokens = 163840 tokens (derived from "
                                    "its statement 'kv-limit-at-full-context')")));
  EXPECT_THAT(d->performance.notes, Contains(StartsWith("the baseline withholds its GPU")));
  EXPECT_TRUE(d->memory.fits());
  EXPECT_EQ(d->memory.provenance().tier(), v1::TIER_ROOFLINE);
  // The model ships one MTP layer and the baseline does not speculate: the
  // deployment's plan, then one with MTP on for what a draft pass costs.
  EXPECT_EQ(counters.memory_plans, 2);
  EXPECT_TRUE(d->performance.draft.has_value());
  EXPECT_FALSE(d->performance.speculative.has_value());
}

TEST(PrepareDeployment, ACardWithoutBandwidthPlansMemoryButCannotPredictLoad) {
  // An inline card that states memory but neither memory bandwidth nor compute (every
  // catalogue card now states both).
  const std::string deployment = R"(model_id: "qwen3-8b" hardware {
      id: "memory-only-192gb" vendor: "AMD" name: "Memory-only card" architecture: "CDNA 3"
      memory_bytes: 206158430208 usable_memory_bytes: 206141652992
      intra_node { kind: LINK_KIND_XGMI } max_gpus_per_node: 8 })";
  WorkCounters counters;
  absl::StatusOr<PreparedDeployment> d = Prepare(deployment, &counters);
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_EQ(counters.memory_plans, 1);
  EXPECT_TRUE(d->memory.fits());
  EXPECT_GT(d->memory.kv_pool_tokens(), 0u);
  const std::string why =
      "hardware 'memory-only-192gb' states no memory bandwidth or 16-bit peak compute; the "
      "step-time model needs both";
  EXPECT_THAT(d->performance_status, StatusIs(absl::StatusCode::kFailedPrecondition, Eq(why)));
  EXPECT_THAT(PrepareLoad(Bundled(), *d, Query(), nullptr),
              StatusIs(absl::StatusCode::kFailedPrecondition, Eq(why)));
  // PlanMemory needs none of it.
  v1::PlanMemoryRequest request;
  *request.mutable_deployment() = Text<v1::Deployment>(deployment);
  absl::StatusOr<v1::MemoryPlan> plan = PlanMemory(Bundled(), request);
  ASSERT_THAT(plan, IsOk());
  EXPECT_TRUE(plan->fits());
  EXPECT_EQ(plan->deployment().hardware_id(), "memory-only-192gb");
}

TEST(PrepareDeployment, MemoryModelErrorsComeBackWithTheDeploymentsPath) {
  // qwen3-8b has 32 heads: tp 3 does not divide them.
  EXPECT_THAT(Prepare(R"(model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb" gpu_count: 3
                         parallelism { tp: 3 })"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       StartsWith("T.deployment.parallelism.tp = 3; must divide "
                                  "num_attention_heads = 32")));
}

// ------------------------------------------------------------- PrepareLoad

TEST(PrepareLoad, ValidatesTheQueryFirst) {
  absl::StatusOr<PreparedDeployment> d = Prepare(R"(model_id: "qwen3-8b"
                                                    hardware_id: "nvidia-h100-sxm-80gb")");
  ASSERT_TRUE(d.ok()) << d.status();
  EXPECT_THAT(
      PrepareLoad(Bundled(), *d, Query("input_tokens: 0 output_tokens: 1"), nullptr),
      StatusIs(absl::StatusCode::kInvalidArgument, Eq("Q.workload.input_tokens = 0; must be > 0")));
}

TEST(PrepareLoad, ADeploymentThatDoesNotFitIsAFailedPrecondition) {
  absl::StatusOr<PreparedDeployment> d = Prepare(R"(model_id: "llama-3.1-70b-instruct"
                                                    hardware_id: "nvidia-rtx-4090-24gb")");
  ASSERT_TRUE(d.ok()) << d.status();
  ASSERT_FALSE(d->memory.fits());
  EXPECT_THAT(PrepareLoad(Bundled(), *d, Query(), nullptr),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       StartsWith("Q.deployment does not fit: WEIGHTS is short by ")));
}

TEST(PrepareLoad, SpeculationWithoutAnAcceptanceRateIsAFailedPrecondition) {
  // seed-002 runs MTP with 3 draft tokens and states no acceptance rate;
  // without the catalogue's rows nothing fits one.
  absl::StatusOr<PreparedDeployment> d = Prepare(absl::StrCat("baseline_id: \"", k002, "\""));
  ASSERT_TRUE(d.ok()) << d.status();
  LoadQuery q = Query();
  q.no_catalog_calibration = true;
  EXPECT_THAT(PrepareLoad(Bundled(), *d, q, nullptr),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       StartsWith("Q.deployment: speculative decoding with 3 draft tokens, but "
                                  "no acceptance rate is known")));
  // With the catalogue's rows the rate is fitted.
  WorkCounters counters;
  absl::StatusOr<PreparedLoad> load = PrepareLoad(Bundled(), *d, Query(), &counters);
  ASSERT_THAT(load, IsOk());
  EXPECT_EQ(counters.fits, 1);
  EXPECT_EQ(counters.memory_plans, 0);  // the deployment was planned already
  EXPECT_EQ(load->source.base_tier, model::Tier::kCalibrated);
  ASSERT_TRUE(load->performance_model.speculative.has_value());
  EXPECT_GT(load->performance_model.speculative->acceptance_rate, 0);
  EXPECT_EQ(load->performance_model.speculative->draft_tokens, 3);
  EXPECT_THAT(load->source.baseline_ids, Contains(k002));
}

TEST(PrepareLoad, TheQuerysGateOverridesTheBaselines) {
  // seed-000 ran behind a gate of 8.
  absl::StatusOr<PreparedDeployment> d = Prepare(absl::StrCat("baseline_id: \"", k000, "\""));
  ASSERT_TRUE(d.ok()) << d.status();
  absl::StatusOr<PreparedLoad> load = PrepareLoad(Bundled(), *d, Query(), nullptr);
  ASSERT_THAT(load, IsOk());
  EXPECT_EQ(load->gate, 8);
  EXPECT_EQ(load->limits.operator_concurrency_gate, 8);
  LoadQuery q = Query();
  q.operator_concurrency_gate = 3;
  load = PrepareLoad(Bundled(), *d, q, nullptr);
  ASSERT_THAT(load, IsOk());
  EXPECT_EQ(load->gate, 3);
  EXPECT_EQ(load->limits.operator_concurrency_gate, 3);
}

TEST(DrawCurve, TheAxisIsValidatedWithTheQuerysPath) {
  absl::StatusOr<PreparedDeployment> d = Prepare(absl::StrCat("baseline_id: \"", k002, "\""));
  ASSERT_TRUE(d.ok()) << d.status();
  absl::StatusOr<PreparedLoad> load = PrepareLoad(Bundled(), *d, Query(), nullptr);
  ASSERT_THAT(load, IsOk());
  EXPECT_THAT(DrawCurve(*load, Closed("concurrencies: [2, 1]")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Q.closed_loop.concurrencies[1] = 1; must be greater than")));
  absl::StatusOr<v1::LoadCurve> curve = DrawCurve(*load, Closed("concurrencies: [1, 2, 4]"));
  ASSERT_THAT(curve, IsOk());
  ASSERT_EQ(curve->points_size(), 3);
  EXPECT_EQ(curve->points(2).concurrency(), 4u);
  EXPECT_EQ(curve->memory().kv_pool_tokens(), d->memory.kv_pool_tokens());
  EXPECT_EQ(curve->provenance_size(), 4);
}

// ------------------------------------------------------------------ helpers

TEST(BaselineGate, TheGateABaselineRanBehind) {
  EXPECT_EQ(BaselineGate(*Bundled().FindBaseline(k000)), 8);
  EXPECT_FALSE(BaselineGate(*Bundled().FindBaseline(k002)).has_value());
}

TEST(SlotLimitsFor, AddsTheGateAndFallsBackToTheLargestSlotCount) {
  DeploymentPerformance perf;
  perf.limits.max_running_requests = 64;
  model::SlotLimits l = SlotLimitsFor(perf, 8);
  EXPECT_EQ(l.max_running_requests, 64);
  EXPECT_EQ(l.operator_concurrency_gate, 8);
  // No limit at all: the model's largest slot count, so slots are defined.
  l = SlotLimitsFor(DeploymentPerformance(), std::nullopt);
  EXPECT_EQ(l.max_running_requests, model::kMaxSlots);
  EXPECT_FALSE(l.operator_concurrency_gate.has_value());
}

TEST(SpeculationFor, TakesTheDeploymentsDraftPassWithTheGivenSetting) {
  DeploymentPerformance perf;
  model::SpeculativeDecoding draft;
  draft.draft_weight_bytes_per_gpu = 1e9;
  perf.draft = draft;
  model::SpeculativeDecoding s = SpeculationFor(perf, 3, 1.5);
  EXPECT_EQ(s.draft_weight_bytes_per_gpu, 1e9);
  EXPECT_EQ(s.draft_tokens, 3);
  EXPECT_EQ(s.acceptance_rate, 1.0);  // clamped to [0, 1]
  model::SpeculativeDecoding own = draft;
  own.draft_weight_bytes_per_gpu = 2e9;
  perf.speculative = own;  // the deployment's own speculation wins
  EXPECT_EQ(SpeculationFor(perf, 1, 0.5).draft_weight_bytes_per_gpu, 2e9);
  EXPECT_EQ(SpeculationFor(perf, 1, -1).acceptance_rate, 0.0);
}

}  // namespace
}  // namespace capplan::service
