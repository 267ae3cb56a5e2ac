// The work estimate of model/cost.h against the model's run time: on curve
// shapes that exercise each term of the estimate, the time one estimated unit
// takes (counter time_per_unit). The constants in cost.h were set so that a unit
// is about 1 ns on a 2020s server core and the estimate is an upper one; a
// figure far above 2 ns says the estimate undercounts a term (the cap would
// admit more work than it means to), one far below 0.1 ns that it overcounts.
// A benchmark, not a test: CPU time on a shared CI machine is not a pass/fail
// criterion (DESIGN §6).
#include <algorithm>
#include <vector>

#include "benchmark/benchmark.h"
#include "model/cost.h"
#include "model/load_grid.h"
#include "model/queueing.h"
#include "tests/model/perf_scenarios.h"

namespace capplan::model {
namespace {

struct Shape {
  bool moe = false;
  int slots = 256;
  bool spread = false;
  bool synchronized = false;
  double think = 0;
  std::vector<int> ns;
  std::vector<double> rho;  // open loop: utilisations of μ(S)
};

std::vector<int> Range(int lo, int hi, int count) {
  std::vector<int> out;
  for (int i = 0; i < count; ++i) out.push_back(lo + (hi - lo) * i / std::max(1, count - 1));
  return out;
}

LoadCurveRequest RequestOf(const Shape& s) {
  LoadCurveRequest r;
  r.model.inputs = s.moe ? testing::MoeInputs() : testing::DenseInputs();
  r.model.coefficients = testing::TypicalCoefficients();
  r.model.scheduler.max_batched_tokens = 8192;
  r.workload.input_tokens = 1024;
  r.workload.output_tokens = 256;
  r.workload.input_tokens_cv = s.spread ? 0.3 : 0.0;
  r.workload.output_tokens_cv = s.spread ? 0.5 : 0.0;
  r.workload.synchronized = s.synchronized;
  r.limits.max_running_requests = s.slots;
  r.concurrencies = s.ns;
  r.think_time_seconds = s.think;
  if (!s.rho.empty()) {
    absl::StatusOr<LoadDependentServer> server = LoadDependentServer::Create(
        r.model, r.workload, Slots{s.slots, SlotBound::kRunningRequestLimit});
    for (double x : s.rho) r.arrival_rates_rps.push_back(x * server->SaturationRate());
  }
  return r;
}

void Run(benchmark::State& state, const Shape& shape) {
  const LoadCurveRequest r = RequestOf(shape);
  absl::StatusOr<LoadCurveWork> work = EstimateLoadCurveWork(r);
  if (!work.ok()) {
    state.SkipWithError(std::string(work.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<LoadCurve> curve = PredictLoadCurve(r);
    if (!curve.ok()) {
      state.SkipWithError(std::string(curve.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(curve);
  }
  // CPU seconds per estimated unit (shown with an SI prefix: "1.2n" is
  // 1.2 ns): the inverse of a rate of `units` per iteration.
  state.counters["time_per_unit"] =
      benchmark::Counter(work->total_units, benchmark::Counter::kIsIterationInvariantRate |
                                                benchmark::Counter::kInvert);
  state.counters["units"] = work->total_units;
}

BENCHMARK_CAPTURE(Run, CoArrivals, Shape{true, 2048, true, false, 0, Range(1, 4096, 32), {}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Run, Waves, Shape{false, 1024, false, true, 0, Range(1, 1024, 16), {}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Run, ThinkTimeSpread, Shape{false, 256, true, false, 10, Range(1, 4096, 8), {}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Run, ThinkTimeManySlots,
                  Shape{true, 8192, true, false, 10, Range(12000, 16384, 3), {}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Run, ThinkTimeGrid,
                  Shape{true, 8192, false, false, 10, ConcurrencyGrid(4096), {}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Run, OpenLoop,
                  Shape{false, 256, true, false, 0, {}, {0.1, 0.3, 0.5, 0.7, 0.9, 0.95}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(Run, OpenLoopManySlots, Shape{false, 65536, false, false, 0, {}, {0.5, 0.9}})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace capplan::model
