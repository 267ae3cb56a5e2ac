// In-process cost of the load curves the PredictLoad RPC computes:
// a 64-point closed-loop sweep and a 64-point open-loop sweep, on a synthetic
// 4-way TP MoE deployment (server construction included).
#include <vector>

#include "benchmark/benchmark.h"
#include "model/queueing.h"
#include "model/step_time.h"

namespace capplan::model {
namespace {

PerformanceModel Model() {
  PerformanceModel m;
  StepTimeInputs& in = m.inputs;
  in.dense_weight_bytes_per_gpu = 3e9;
  in.routed_expert_weight_bytes_per_gpu = 25e9;
  in.routed_experts = 128;
  in.experts_per_token = 8;
  in.kv_bytes_per_token_per_gpu = 24576;
  in.active_parameters_per_token_per_gpu = 2.5e9;
  in.attention_flops_per_token_per_context_token_per_gpu = 4 * 48 * 16 * 128;
  in.allreduce_bytes_per_token_per_gpu = 589824;
  in.memory_bandwidth_bytes_per_second = 1e12;
  in.peak_flops_per_second = 2e14;
  in.link_bandwidth_bytes_per_second = 2.5e10;
  m.coefficients = StepTimeCoefficients{0.004, 1.25, 1.5, 1.8, 1.4};
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
    absl::StatusOr<LoadDependentServer> s = LoadDependentServer::Create(
        Model(), Load(), Slots{slots, SlotBound::kKvPool});
    absl::StatusOr<std::vector<LoadPoint>> c = ClosedLoopCurve(*s, ns, 0.0);
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_ClosedLoopSweep64)->Arg(32)->Arg(128)->Arg(2048)->Unit(benchmark::kMillisecond);

void BM_OpenLoopSweep64(benchmark::State& state) {
  const int slots = static_cast<int>(state.range(0));
  absl::StatusOr<LoadDependentServer> probe = LoadDependentServer::Create(
      Model(), Load(), Slots{slots, SlotBound::kKvPool});
  const double mu = probe->SaturationRate();
  std::vector<double> rates;
  // ρ from 1/64 to 0.995, the last points near saturation.
  for (int i = 1; i <= 64; ++i) rates.push_back(mu * 0.995 * i / 64);
  for (auto _ : state) {
    absl::StatusOr<LoadDependentServer> s = LoadDependentServer::Create(
        Model(), Load(), Slots{slots, SlotBound::kKvPool});
    absl::StatusOr<std::vector<LoadPoint>> c = OpenLoopCurve(*s, rates);
    benchmark::DoNotOptimize(c);
  }
  state.SetItemsProcessed(state.iterations() * 64);
}
BENCHMARK(BM_OpenLoopSweep64)->Arg(32)->Arg(128)->Arg(2048)->Unit(benchmark::kMillisecond);

void BM_ServerCreate(benchmark::State& state) {
  const int slots = static_cast<int>(state.range(0));
  for (auto _ : state) {
    absl::StatusOr<LoadDependentServer> s = LoadDependentServer::Create(
        Model(), Load(), Slots{slots, SlotBound::kKvPool});
    benchmark::DoNotOptimize(s);
  }
}
BENCHMARK(BM_ServerCreate)->Arg(32)->Arg(128)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace capplan::model
