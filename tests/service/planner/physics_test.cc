// The physics floors (DESIGN §4): whatever the fit or the prior, no predicted
// figure may beat the hardware. A grid of model × GPU pairs, two workloads,
// closed and open loop; zero violations allowed.
//   sustained req/s × 2 × active params × (input + output) <= GPUs × peak
//   TTFT at one user >= 2 × active params × input ÷ (GPUs × peak)
//   TPOT >= active weight bytes per GPU ÷ bandwidth
//   per-replica throughput at high load does not fall as TP grows on NVLink
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "service/planner/load.h"
#include "service/planner/memory.h"
#include "service/planner/planner.h"
#include "service/translate/model_info.h"
#include "service/translate/model_translation.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

const Catalog& Bundled() { return testing::BundledCatalogue(); }

struct Pair {
  const char* model;
  const char* gpu;
  int gpus;
};

// Dense, MoE, MLA, FP8 and MXFP4 checkpoints; data-centre, workstation,
// consumer and AMD cards; NVLink, xGMI and PCIe.
const Pair kGrid[] = {
    {"llama-3.1-8b-instruct", "nvidia-h100-sxm-80gb", 1},
    {"llama-3.1-8b-instruct", "nvidia-l4-24gb", 1},
    {"llama-3.1-8b-instruct", "nvidia-rtx-4090-24gb", 1},
    {"llama-3.1-70b-instruct", "nvidia-h200-sxm-141gb", 4},
    {"llama-3.1-70b-instruct", "nvidia-a100-sxm-80gb", 4},
    {"qwen3-8b", "nvidia-l40s-48gb", 1},
    {"qwen3-32b", "nvidia-h100-sxm-80gb", 2},
    {"qwen3-30b-a3b", "nvidia-h100-sxm-80gb", 1},
    {"qwen3-235b-a22b-fp8", "nvidia-h200-sxm-141gb", 4},
    {"deepseek-v3", "amd-mi300x-192gb", 8},
    {"gpt-oss-120b", "nvidia-h100-sxm-80gb", 2},
    {"mixtral-8x7b-instruct", "nvidia-a100-sxm-80gb", 2},
    {"qwen2.5-7b-instruct", "nvidia-b200-180gb", 1},
};

struct Workload {
  double input;
  double output;
};
const Workload kWorkloads[] = {{1000, 200}, {8000, 200}};

v1::Deployment DeploymentOf(const Pair& p) {
  v1::Deployment d;
  d.set_model_id(p.model);
  d.set_hardware_id(p.gpu);
  d.set_gpu_count(p.gpus);
  d.mutable_engine()->set_max_model_len(16384);
  return d;
}

struct Limits {
  double peak_flops_total = 0;    // GPUs × the GEMM format's dense peak
  double active_parameters = 0;   // per token
  double tpot_floor_seconds = 0;  // active weight bytes per GPU ÷ bandwidth
};

Limits LimitsOf(const Pair& p) {
  Limits l;
  const v1::Hardware* hw = Bundled().FindHardware(p.gpu);
  const v1::Model* m = Bundled().FindModel(p.model);
  EXPECT_TRUE(hw != nullptr && m != nullptr) << p.model << " on " << p.gpu;
  if (hw == nullptr || m == nullptr) return l;
  absl::StatusOr<v1::ModelInfo> info = DescribeModel(*m);
  EXPECT_TRUE(info.ok()) << info.status();
  absl::StatusOr<model::ModelArchitecture> arch = ToArchitecture(*m);
  absl::StatusOr<model::Quantization> q = ToQuantization(m->quantization());
  EXPECT_TRUE(arch.ok() && q.ok());
  const GemmPeak peak = GemmPeakFor(*hw, q->format, arch->native_dtype);
  l.peak_flops_total = p.gpus * peak.flops_per_second;
  l.active_parameters = static_cast<double>(info->derived().active_parameters_per_token());
  v1::PlanMemoryRequest request;
  *request.mutable_deployment() = DeploymentOf(p);
  absl::StatusOr<v1::MemoryPlan> plan = PlanMemory(Bundled(), request);
  EXPECT_TRUE(plan.ok()) << plan.status();
  if (!plan.ok()) return l;
  const double share =
      l.active_parameters / static_cast<double>(info->derived().total_parameters());
  l.tpot_floor_seconds =
      plan->per_gpu().weights_bytes() * share / hw->memory_bandwidth_bytes_per_second();
  return l;
}

int CheckCurve(const Pair& p, const Workload& w, const Limits& l, const v1::LoadCurve& curve) {
  int violations = 0;
  const double flops_per_request = 2 * l.active_parameters * (w.input + w.output);
  for (const v1::LoadCurvePoint& point : curve.points()) {
    const double compute_share =
        point.requests_per_second() * flops_per_request / l.peak_flops_total;
    if (compute_share > 1 + 1e-9) {
      ++violations;
      ADD_FAILURE() << p.model << " on " << p.gpus << "x " << p.gpu << " " << w.input << "/"
                    << w.output << ": " << point.requests_per_second() << " req/s needs "
                    << compute_share << "x the cards' peak FLOP/s";
    }
    if (point.has_tpot_seconds() && point.tpot_seconds() < l.tpot_floor_seconds * (1 - 1e-9)) {
      ++violations;
      ADD_FAILURE() << p.model << " on " << p.gpu << ": TPOT " << point.tpot_seconds()
                    << " s below reading the active weights once, " << l.tpot_floor_seconds;
    }
  }
  return violations;
}

TEST(PhysicsFloors, NoPredictionBeatsTheHardwareOnTheGrid) {
  int curves = 0, violations = 0;
  for (const Pair& p : kGrid) {
    const Limits l = LimitsOf(p);
    ASSERT_GT(l.peak_flops_total, 0) << p.model << " on " << p.gpu;
    for (const Workload& w : kWorkloads) {
      v1::PredictLoadRequest request;
      *request.mutable_deployment() = DeploymentOf(p);
      request.mutable_workload()->set_input_tokens(w.input);
      request.mutable_workload()->set_output_tokens(w.output);
      *request.mutable_closed_loop() = ConcurrencyGridAxis(256);
      absl::StatusOr<v1::LoadCurve> closed = PredictLoad(Bundled(), request);
      ASSERT_TRUE(closed.ok()) << p.model << " on " << p.gpu << ": " << closed.status();
      violations += CheckCurve(p, w, l, *closed);
      // TTFT at one user: the prompt's FLOPs at the cards' peak.
      const double ttft_floor = 2 * l.active_parameters * w.input / l.peak_flops_total;
      ASSERT_TRUE(closed->points(0).has_ttft_p50_seconds());
      if (closed->points(0).ttft_p50_seconds() < ttft_floor * (1 - 1e-9)) {
        ++violations;
        ADD_FAILURE() << p.model << " on " << p.gpu << ": TTFT at 1 user "
                      << closed->points(0).ttft_p50_seconds() << " s below the FLOP floor "
                      << ttft_floor;
      }
      double peak_rps = 0;
      for (const v1::LoadCurvePoint& point : closed->points()) {
        peak_rps = std::max(peak_rps, point.requests_per_second());
      }
      request.clear_closed_loop();
      *request.mutable_open_loop() = RateGridAxis(peak_rps, 80);  // up to 1.25 × the peak
      absl::StatusOr<v1::LoadCurve> open = PredictLoad(Bundled(), request);
      ASSERT_TRUE(open.ok()) << open.status();
      for (const v1::LoadCurvePoint& point : open->points()) {
        if (!point.stable()) continue;
        v1::LoadCurve one;
        *one.add_points() = point;
        violations += CheckCurve(p, w, l, one);
      }
      curves += 2;
    }
  }
  std::printf("physics grid: %d curves, %d violations\n", curves, violations);
  EXPECT_EQ(curves, 2 * 2 * static_cast<int>(std::size(kGrid)));
  EXPECT_EQ(violations, 0);
}

// More NVLink GPUs in one replica can only add bandwidth and compute.
TEST(PhysicsFloors, ThroughputAtHighLoadDoesNotFallAsTpGrowsOnNvlink) {
  double previous = 0;
  for (int tp : {2, 4, 8}) {
    v1::PredictLoadRequest request;
    *request.mutable_deployment() =
        DeploymentOf({"llama-3.1-70b-instruct", "nvidia-h200-sxm-141gb", tp});
    request.mutable_workload()->set_input_tokens(1000);
    request.mutable_workload()->set_output_tokens(200);
    request.mutable_closed_loop()->add_concurrencies(128);
    absl::StatusOr<v1::LoadCurve> curve = PredictLoad(Bundled(), request);
    ASSERT_TRUE(curve.ok()) << curve.status();
    const double tps = curve->points(0).output_tokens_per_second();
    std::printf("llama-3.1-70b on %d x H200, 128 users: %.0f output tok/s\n", tp, tps);
    EXPECT_GE(tps, previous * (1 - 1e-9)) << "TP " << tp;
    previous = tps;
  }
}

}  // namespace
}  // namespace capplan::service
