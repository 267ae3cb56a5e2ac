// SearchConfigs and Plan in-process on the bundled catalogue: the issue's
// question (Llama-3.1-70B, 1000 + 200 tokens, 200 users, TTFT p95 < 1 s,
// TPOT < 50 ms) over every card (>= 10,000 candidates), and one Plan of a
// search's kind (no calibration rows for the deployment).
#include <memory>

#include "benchmark/benchmark.h"
#include "service/catalog/catalog.h"
#include "model/budget.h"
#include "service/planner/plan.h"
#include "service/planner/planner.h"
#include "service/planner/search.h"

namespace capplan::service {
namespace {

const Catalog& Bundled() {
  static const std::shared_ptr<const Catalog> catalog = [] {
    auto c = Catalog::LoadFromDirectory(CAPPLAN_DEFAULT_DATA_DIR);
    if (!c.ok()) std::abort();
    return *c;
  }();
  return *catalog;
}

v1::SearchConfigsRequest IssueSearch() {
  v1::SearchConfigsRequest r;
  r.set_model_id("llama-3.1-70b-instruct");
  r.mutable_workload()->set_input_tokens(1000);
  r.mutable_workload()->set_output_tokens(200);
  r.mutable_slo()->set_ttft_p95_seconds(1);
  r.mutable_slo()->set_tpot_seconds(0.05);
  r.set_target_concurrent_users(200);
  return r;
}

void BM_SearchConfigsIssue(benchmark::State& state) {
  const v1::SearchConfigsRequest r = IssueSearch();
  uint32_t candidates = 0, exact = 0;
  for (auto _ : state) {
    absl::StatusOr<v1::SearchConfigsResponse> s = SearchConfigs(Bundled(), r);
    if (!s.ok()) state.SkipWithError(std::string(s.status().message()).c_str());
    candidates = s->candidates_enumerated();
    exact = s->exact_evaluations();
    benchmark::DoNotOptimize(s);
  }
  state.counters["candidates"] = candidates;
  state.counters["exact"] = exact;
}
BENCHMARK(BM_SearchConfigsIssue)->Unit(benchmark::kMillisecond);

// The same search with its exact phase on two threads (wall time is what
// shrinks: the benchmark reports real time).
void BM_SearchConfigsIssueTwoThreads(benchmark::State& state) {
  v1::SearchConfigsRequest r = IssueSearch();
  r.set_threads(2);
  for (auto _ : state) {
    absl::StatusOr<v1::SearchConfigsResponse> s = SearchConfigs(Bundled(), r);
    if (!s.ok()) state.SkipWithError(std::string(s.status().message()).c_str());
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_SearchConfigsIssueTwoThreads)->Unit(benchmark::kMillisecond)->UseRealTime();

void BM_PlanLlama70bH100Tp4(benchmark::State& state) {
  v1::PlanRequest r;
  r.mutable_deployment()->set_model_id("llama-3.1-70b-instruct");
  r.mutable_deployment()->set_hardware_id("nvidia-h100-sxm-80gb");
  r.mutable_deployment()->set_gpu_count(4);
  r.mutable_deployment()->mutable_engine()->set_max_model_len(3072);
  r.mutable_workload()->set_input_tokens(1000);
  r.mutable_workload()->set_output_tokens(200);
  r.mutable_slo()->set_ttft_p95_seconds(1);
  r.mutable_slo()->set_tpot_seconds(0.05);
  r.set_target_concurrent_users(200);
  r.set_price_per_gpu_hour(3.348);
  for (auto _ : state) {
    absl::StatusOr<v1::PlanResponse> p = Plan(Bundled(), r);
    if (!p.ok()) state.SkipWithError(std::string(p.status().message()).c_str());
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_PlanLlama70bH100Tp4)->Unit(benchmark::kMillisecond);

// The Plan capplan-loadgen --method plan sends (one H100, an 8B model: a KV
// pool of thousands of slots, a rate target).
v1::PlanRequest LoadgenPlanRequest() {
  v1::PlanRequest r;
  r.mutable_deployment()->set_model_id("llama-3.1-8b-instruct");
  r.mutable_deployment()->set_hardware_id("nvidia-h100-sxm-80gb");
  r.mutable_workload()->set_input_tokens(1000);
  r.mutable_workload()->set_output_tokens(200);
  r.mutable_slo()->set_ttft_p95_seconds(1);
  r.set_target_requests_per_second(20);
  r.set_price_per_gpu_hour(2.5);
  return r;
}

void BM_PlanLoadgenLlama8bH100(benchmark::State& state) {
  const v1::PlanRequest r = LoadgenPlanRequest();
  for (auto _ : state) {
    absl::StatusOr<v1::PlanResponse> p = Plan(Bundled(), r);
    if (!p.ok()) state.SkipWithError(std::string(p.status().message()).c_str());
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_PlanLoadgenLlama8bH100)->Unit(benchmark::kMillisecond);

// The same Plan under a call's budget as the server gives one (the default
// work cap, a poll every 64 steps): what admission and polling add.
void BM_PlanLoadgenLlama8bH100WithBudget(benchmark::State& state) {
  const v1::PlanRequest r = LoadgenPlanRequest();
  for (auto _ : state) {
    model::Budget budget(PlannerLimits::kDefaultMaxWorkUnits, [] { return absl::OkStatus(); },
                         64);
    absl::StatusOr<v1::PlanResponse> p = Plan(Bundled(), r, nullptr, &budget);
    if (!p.ok()) state.SkipWithError(std::string(p.status().message()).c_str());
    benchmark::DoNotOptimize(p);
  }
}
BENCHMARK(BM_PlanLoadgenLlama8bH100WithBudget)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace capplan::service
