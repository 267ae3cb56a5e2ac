// One PredictLoad in-process on the bundled catalogue: deployment resolution,
// memory plan, calibration on the baseline's rows (with the acceptance-rate
// fit for speculative decoding), and a 64-point closed- or open-loop curve.
#include <memory>

#include "benchmark/benchmark.h"
#include "service/catalog/catalog.h"
#include "service/planner/load.h"

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

v1::PredictLoadRequest Request(bool speculative) {
  v1::PredictLoadRequest r;
  r.mutable_deployment()->set_baseline_id("seed-002-qwen3-next-nvfp4-4x-rtx5090");
  if (!speculative) {
    r.mutable_deployment()->mutable_engine()->set_speculative_method(v1::SPECULATIVE_METHOD_NONE);
  }
  r.mutable_slo()->set_ttft_p95_seconds(1.0);
  return r;
}

void BM_PredictLoadClosedLoop64(benchmark::State& state) {
  v1::PredictLoadRequest r = Request(state.range(0) != 0);
  for (uint32_t c = 1; c <= 64; ++c) r.mutable_closed_loop()->add_concurrencies(c);
  for (auto _ : state) {
    absl::StatusOr<v1::LoadCurve> curve = PredictLoad(Bundled(), r);
    if (!curve.ok()) state.SkipWithError(std::string(curve.status().message()).c_str());
    benchmark::DoNotOptimize(curve);
  }
}
BENCHMARK(BM_PredictLoadClosedLoop64)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_PredictLoadOpenLoop64(benchmark::State& state) {
  v1::PredictLoadRequest r = Request(state.range(0) != 0);
  for (int i = 1; i <= 64; ++i) r.mutable_open_loop()->add_arrival_rates_rps(0.1 * i);
  for (auto _ : state) {
    absl::StatusOr<v1::LoadCurve> curve = PredictLoad(Bundled(), r);
    if (!curve.ok()) state.SkipWithError(std::string(curve.status().message()).c_str());
    benchmark::DoNotOptimize(curve);
  }
}
BENCHMARK(BM_PredictLoadOpenLoop64)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);

void BM_PredictLoadWithheldGpuClosedLoop64(benchmark::State& state) {
  v1::PredictLoadRequest r;
  r.mutable_deployment()->set_baseline_id("seed-000-122b-moe-int4-4gpu-pcie-sglang");
  for (uint32_t c = 1; c <= 64; ++c) r.mutable_closed_loop()->add_concurrencies(c);
  for (auto _ : state) {
    absl::StatusOr<v1::LoadCurve> curve = PredictLoad(Bundled(), r);
    if (!curve.ok()) state.SkipWithError(std::string(curve.status().message()).c_str());
    benchmark::DoNotOptimize(curve);
  }
}
BENCHMARK(BM_PredictLoadWithheldGpuClosedLoop64)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace capplan::service
