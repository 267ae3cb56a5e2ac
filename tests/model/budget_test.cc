#include "model/budget.h"

#include <atomic>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/queueing.h"
#include "model/simulator.h"
#include "tests/model/perf_scenarios.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::model {
namespace {

using ::capplan::testing::IsOk;
using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

TEST(Budget, DefaultNeverStopsAndAdmitsAnything) {
  Budget budget;
  for (int i = 0; i < 1000; ++i) EXPECT_FALSE(budget.Stopped());
  EXPECT_TRUE(budget.Admits(1e300));
  EXPECT_THAT(budget.status(), IsOk());
  EXPECT_FALSE(Stopped(nullptr));
  EXPECT_THAT(BudgetStatus(nullptr), IsOk());
}

TEST(Budget, AdmitsUpToItsCap) {
  Budget budget(100, nullptr);
  EXPECT_TRUE(budget.Admits(100));
  EXPECT_FALSE(budget.Admits(100.5));
  EXPECT_EQ(budget.max_work_units(), 100);
}

TEST(Budget, PollsEveryStrideCallsAndStopsWithThePollsReason) {
  int calls = 0;
  Budget budget(
      1,
      [&calls] {
        ++calls;
        return calls >= 3 ? absl::DeadlineExceededError("past the deadline") : absl::OkStatus();
      },
      /*poll_stride=*/4);
  int checks = 0;
  while (!budget.Stopped()) ++checks;
  // Polls at checks 4, 8 and 12; the third poll stops it.
  EXPECT_EQ(checks, 11);
  EXPECT_EQ(budget.polls(), 3);
  EXPECT_THAT(budget.status(),
              StatusIs(absl::StatusCode::kDeadlineExceeded, HasSubstr("past the deadline")));
  // Sticky: no more polls.
  EXPECT_TRUE(budget.Stopped());
  EXPECT_EQ(budget.polls(), 3);
}

TEST(Budget, StopFromAnotherThreadFirstReasonWins) {
  Budget budget(1, [] { return absl::OkStatus(); });
  std::thread other([&budget] { budget.Stop(absl::CancelledError("client gone")); });
  other.join();
  budget.Stop(absl::UnavailableError("draining"));
  EXPECT_TRUE(budget.Stopped());
  EXPECT_THAT(budget.status(), StatusIs(absl::StatusCode::kCancelled, HasSubstr("client gone")));
}

TEST(Budget, StopWithOkStillStops) {
  Budget budget;
  budget.Stop(absl::OkStatus());
  EXPECT_TRUE(budget.Stopped());
  EXPECT_THAT(budget.status(), StatusIs(absl::StatusCode::kCancelled));
}

LoadCurveRequest HeavyRequest() {
  LoadCurveRequest r;
  r.model.inputs = testing::MoeInputs();
  r.model.coefficients = testing::TypicalCoefficients();
  r.model.scheduler.max_batched_tokens = 8192;
  r.workload.input_tokens = 1024;
  r.workload.output_tokens = 256;
  r.workload.input_tokens_cv = 0.3;
  r.workload.output_tokens_cv = 0.5;
  r.limits.max_running_requests = 2048;
  for (int n = 4000; n <= 8000; n += 100) r.concurrencies.push_back(n);
  r.think_time_seconds = 10;
  return r;
}

TEST(PredictLoadCurve, StopsWithTheBudgetsStatusAfterFewChecks) {
  std::atomic<int> polls{0};
  Budget budget(1e300, [&polls] {
    return ++polls > 50 ? absl::DeadlineExceededError("deadline") : absl::OkStatus();
  });
  LoadCurveRequest r = HeavyRequest();
  r.budget = &budget;
  EXPECT_THAT(PredictLoadCurve(r), StatusIs(absl::StatusCode::kDeadlineExceeded));
  // It stopped at the 51st poll: no more polls after that.
  EXPECT_EQ(polls.load(), 51);
}

TEST(PredictLoadCurve, AnUnstoppedBudgetChangesNothing) {
  Budget budget(1e300, [] { return absl::OkStatus(); });
  LoadCurveRequest with = HeavyRequest();
  with.concurrencies = {1, 8, 64, 3000};
  with.budget = &budget;
  LoadCurveRequest without = with;
  without.budget = nullptr;
  absl::StatusOr<LoadCurve> a = PredictLoadCurve(with);
  absl::StatusOr<LoadCurve> b = PredictLoadCurve(without);
  ASSERT_THAT(a.status(), IsOk());
  ASSERT_THAT(b.status(), IsOk());
  ASSERT_EQ(a->points.size(), b->points.size());
  for (size_t i = 0; i < a->points.size(); ++i) {
    EXPECT_EQ(a->points[i].ttft->p95_seconds, b->points[i].ttft->p95_seconds);
    EXPECT_EQ(a->points[i].requests_per_second, b->points[i].requests_per_second);
  }
  EXPECT_GT(budget.polls(), 0);
}

TEST(LoadDependentServer, CreateStopsWhenStopped) {
  Budget budget;
  budget.Stop(absl::CancelledError("gone"));
  const LoadCurveRequest r = HeavyRequest();
  EXPECT_THAT(LoadDependentServer::Create(r.model, r.workload,
                                          Slots{4096, SlotBound::kRunningRequestLimit}, &budget),
              StatusIs(absl::StatusCode::kCancelled, HasSubstr("gone")));
}

TEST(OpenLoopCurve, StopsWhenStopped) {
  const LoadCurveRequest r = HeavyRequest();
  Budget budget(1e300, [] { return absl::OkStatus(); });
  absl::StatusOr<LoadDependentServer> server = LoadDependentServer::Create(
      r.model, r.workload, Slots{256, SlotBound::kRunningRequestLimit}, &budget);
  ASSERT_THAT(server.status(), IsOk());
  budget.Stop(absl::UnavailableError("draining"));
  EXPECT_THAT(OpenLoopCurve(*server, {0.1, 0.2}), StatusIs(absl::StatusCode::kUnavailable));
}

TEST(Simulate, StopsWhenStopped) {
  SimulationConfig c;
  c.model.inputs = testing::DenseInputs();
  c.model.coefficients = testing::TypicalCoefficients();
  c.model.scheduler.max_batched_tokens = 2048;
  c.workload.input_tokens = 512;
  c.workload.output_tokens = 128;
  c.limits.max_running_requests = 16;
  c.concurrency = 16;
  int polls = 0;
  Budget budget(1e300, [&polls] {
    return ++polls > 10 ? absl::DeadlineExceededError("deadline") : absl::OkStatus();
  });
  c.budget = &budget;
  EXPECT_THAT(Simulate(c), StatusIs(absl::StatusCode::kDeadlineExceeded));
  EXPECT_EQ(polls, 11);
}

}  // namespace
}  // namespace capplan::model
