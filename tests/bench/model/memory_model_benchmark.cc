// Time of one memory plan in-process (the model part of PlanMemory).
// The deployment is synthetic: a DeepSeek-V3-shaped MLA MoE (from its public
// config.json) on eight cards of 140 GiB, and a hybrid gated-DeltaNet MoE
// (Qwen3-Next shape) on four; engine coefficients are round numbers.

#include <benchmark/benchmark.h>

#include <string>

#include "model/architecture.h"
#include "model/memory_model.h"

namespace capplan::model {
namespace {

ModelArchitecture DeepSeekShape() {
  ModelArchitecture a;
  a.hidden_size = 7168;
  a.intermediate_size = 18432;
  a.num_attention_heads = 128;
  a.num_kv_heads = 128;
  a.vocab_size = 129280;
  a.layers.assign(3, LayerSpec{AttentionKind::kMla, MlpKind::kDense});
  a.layers.resize(61, LayerSpec{AttentionKind::kMla, MlpKind::kMoe});
  a.mla = MlaSpec{1536, 512, 128, 64, 128};
  a.moe = MoeSpec{.num_routed_experts = 256,
                  .experts_per_token = 8,
                  .num_shared_experts = 1,
                  .expert_intermediate_size = 2048,
                  .router_bias = true};
  a.num_mtp_layers = 1;
  a.native_context_tokens = 163840;
  return a;
}

ModelArchitecture HybridShape() {
  ModelArchitecture a;
  a.hidden_size = 2048;
  a.num_attention_heads = 16;
  a.num_kv_heads = 2;
  a.head_dim = 256;
  a.vocab_size = 151936;
  a.gated_attention_output = true;
  for (int i = 0; i < 48; ++i) {
    a.layers.push_back(
        {(i + 1) % 4 == 0 ? AttentionKind::kFull : AttentionKind::kLinear, MlpKind::kMoe});
  }
  a.linear_attention = LinearAttentionSpec{16, 32, 128, 128, 4};
  a.moe = MoeSpec{.num_routed_experts = 512,
                  .experts_per_token = 10,
                  .num_shared_experts = 1,
                  .expert_intermediate_size = 512,
                  .shared_expert_intermediate_size = 512};
  a.native_context_tokens = 262144;
  return a;
}

MemoryPlanInput Input(ModelArchitecture a, int64_t tp, BudgetRule rule) {
  MemoryPlanInput in;
  in.arch = std::move(a);
  in.quantization.format = WeightFormat::kFp8Block;
  in.hardware.memory_bytes = 140.0 * (1 << 30);
  in.parallelism.tp = tp;
  in.engine.budget_rule = rule;
  in.engine.engine = rule == BudgetRule::kSglangStatic ? EngineKind::kSglang : EngineKind::kVllm;
  in.engine.hybrid_kv_cache_groups = true;
  in.engine.activation_token_scale = 1.0;
  in.engine.sampler_logit_copies = 10.0;
  in.engine.non_torch_base_bytes = 4e8;
  in.settings.speculative_method = SpeculativeMethod::kMtp;
  return in;
}

void BM_PlanMemoryMlaMoeTp8(benchmark::State& state) {
  const MemoryPlanInput in = Input(DeepSeekShape(), 8, BudgetRule::kVllmProfiled);
  for (auto _ : state) {
    absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
    benchmark::DoNotOptimize(plan);
  }
}
BENCHMARK(BM_PlanMemoryMlaMoeTp8);

void BM_PlanMemoryHybridSglangTp4(benchmark::State& state) {
  const MemoryPlanInput in = Input(HybridShape(), 4, BudgetRule::kSglangStatic);
  for (auto _ : state) {
    absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
    benchmark::DoNotOptimize(plan);
  }
}
BENCHMARK(BM_PlanMemoryHybridSglangTp4);

// The same plans on a prepared model (what a search asks per candidate): the
// tensors tallied and the engine resolved once, outside the loop.
void PreparedPlan(benchmark::State& state, const MemoryPlanInput& in) {
  absl::StatusOr<PreparedMemoryModel> model = PreparedMemoryModel::Create(in);
  if (!model.ok()) {
    state.SkipWithError(std::string(model.status().message()).c_str());
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<MemoryPlan> plan = model->Plan(in.parallelism, in.settings);
    benchmark::DoNotOptimize(plan);
  }
}

void BM_PreparedPlanMemoryMlaMoeTp8(benchmark::State& state) {
  PreparedPlan(state, Input(DeepSeekShape(), 8, BudgetRule::kVllmProfiled));
}
BENCHMARK(BM_PreparedPlanMemoryMlaMoeTp8);

void BM_PreparedPlanMemoryHybridSglangTp4(benchmark::State& state) {
  PreparedPlan(state, Input(HybridShape(), 4, BudgetRule::kSglangStatic));
}
BENCHMARK(BM_PreparedPlanMemoryHybridSglangTp4);

void BM_PrepareMemoryModelMlaMoe(benchmark::State& state) {
  const MemoryPlanInput in = Input(DeepSeekShape(), 8, BudgetRule::kVllmProfiled);
  for (auto _ : state) {
    absl::StatusOr<PreparedMemoryModel> model = PreparedMemoryModel::Create(in);
    benchmark::DoNotOptimize(model);
  }
}
BENCHMARK(BM_PrepareMemoryModelMlaMoe);

void BM_ComputeParameterCounts(benchmark::State& state) {
  const ModelArchitecture a = DeepSeekShape();
  for (auto _ : state) {
    ParameterCounts c = ComputeParameterCounts(a);
    benchmark::DoNotOptimize(c);
  }
}
BENCHMARK(BM_ComputeParameterCounts);

}  // namespace
}  // namespace capplan::model
