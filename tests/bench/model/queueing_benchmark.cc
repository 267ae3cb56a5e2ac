// In-process cost of the load curves the PredictLoad RPC computes:
// a 64-point closed-loop sweep and a 64-point open-loop sweep, on a synthetic
// 4-way TP MoE deployment (server construction included).
#include <vector>

#include "benchmark/benchmark.h"
#include "model/queueing.h"
#include "model/step_time.h"
#include "tests/model/perf_scenarios.h"

namespace capplan::model {
namespace {

PerformanceModel Model() {
  PerformanceModel m;
  m.inputs = testing::MoeInputs();
  m.coefficients = testing::TypicalCoefficients();
  m.scheduler.max_batched_tokens = 8192;
  return m;
}

Workload Load() {
  Workload w;
  w.input_tokens = 2048;
  w.output_tokens = 512;
  w.input_tokens_cv = 0.3;
  w.output_tokens_cv = 0.5;
  return w;
}

void BM_ClosedLoopSweep64(benchmark::State& state) {
  const int slots = static_cast<int>(state.range(0));
  std::vector<int> ns;
  for (int i = 1; i <= 64; ++i) ns.push_back(i * slots / 32);  // up to 2·S
  for (auto _ : state) {
    absl::StatusOr<LoadDependentServer> s =
        LoadDependentServer::Create(Model(), Load(), Slots{slots, SlotBound::kKvPool});
    absl::StatusOr<std::vector<LoadPoint>> c = ClosedLoopCurve(*s, ns, 0.0);
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_ClosedLoopSweep64)->Arg(32)->Arg(128)->Arg(2048)->Unit(benchmark::kMillisecond);

// The same sweep with a 5 s mean think time: the arrival theorem's mixture
// over every population below n (the atoms of every j), not one population.
void BM_ClosedLoopSweep64ThinkTime(benchmark::State& state) {
  const int slots = static_cast<int>(state.range(0));
  std::vector<int> ns;
  for (int i = 1; i <= 64; ++i) ns.push_back(i * slots / 32);
  for (auto _ : state) {
    absl::StatusOr<LoadDependentServer> s =
        LoadDependentServer::Create(Model(), Load(), Slots{slots, SlotBound::kKvPool});
    absl::StatusOr<std::vector<LoadPoint>> c = ClosedLoopCurve(*s, ns, 5.0);
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_ClosedLoopSweep64ThinkTime)->Arg(32)->Arg(128)->Unit(benchmark::kMillisecond);

// ρ from 1/64 to 0.995, the last points near saturation.
std::vector<double> RatesToSaturation(int slots) {
  absl::StatusOr<LoadDependentServer> probe =
      LoadDependentServer::Create(Model(), Load(), Slots{slots, SlotBound::kKvPool});
  const double mu = probe->SaturationRate();
  std::vector<double> rates;
  for (int i = 1; i <= 64; ++i) rates.push_back(mu * 0.995 * i / 64);
  return rates;
}

void BM_OpenLoopSweep64(benchmark::State& state) {
  const int slots = static_cast<int>(state.range(0));
  const std::vector<double> rates = RatesToSaturation(slots);
  for (auto _ : state) {
    absl::StatusOr<LoadDependentServer> s =
        LoadDependentServer::Create(Model(), Load(), Slots{slots, SlotBound::kKvPool});
    absl::StatusOr<std::vector<LoadPoint>> c = OpenLoopCurve(*s, rates);
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_OpenLoopSweep64)->Arg(32)->Arg(128)->Arg(2048)->Unit(benchmark::kMillisecond);

// The open-loop sweep as Plan draws it (latency figures to the safe point,
// LatencyCutoff) under a TTFT p95 SLO no point fails: every point carries
// the p95 the check reads, the last one all its figures.
void BM_OpenLoopSweep64ToSafePoint(benchmark::State& state) {
  const int slots = static_cast<int>(state.range(0));
  const std::vector<double> rates = RatesToSaturation(slots);
  Slo slo;
  slo.ttft_p95_seconds = 1e6;
  SafetyOptions safety;
  safety.max_slot_wait_probability = 1.0;
  for (auto _ : state) {
    absl::StatusOr<LoadDependentServer> s =
        LoadDependentServer::Create(Model(), Load(), Slots{slots, SlotBound::kKvPool});
    absl::StatusOr<std::vector<LoadPoint>> c =
        OpenLoopCurve(*s, rates, LatencyCutoff{&slo, &safety, nullptr});
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_OpenLoopSweep64ToSafePoint)->Arg(32)->Arg(128)->Arg(2048)->Unit(benchmark::kMillisecond);

void BM_ServerCreate(benchmark::State& state) {
  const int slots = static_cast<int>(state.range(0));
  for (auto _ : state) {
    absl::StatusOr<LoadDependentServer> s =
        LoadDependentServer::Create(Model(), Load(), Slots{slots, SlotBound::kKvPool});
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_ServerCreate)->Arg(32)->Arg(128)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace capplan::model
