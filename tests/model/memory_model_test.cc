#include "model/memory_model.h"

#include <cmath>
#include <random>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::model {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::Eq;
using ::testing::HasSubstr;

// hidden 1024, MLP 4096, 16 heads of 64, 4 KV heads, vocab 32000, 4 layers,
// untied, bf16. Hand counts per layer: q 1,048,576 + k,v 524,288 + o 1,048,576
// + MLP 12,582,912 + norms 2,048 = 15,206,400; embeddings and LM head
// 32,768,000 each; final norm 1,024.
ModelArchitecture Dense() {
  ModelArchitecture a;
  a.hidden_size = 1024;
  a.intermediate_size = 4096;
  a.num_attention_heads = 16;
  a.num_kv_heads = 4;
  a.head_dim = 64;
  a.vocab_size = 32000;
  a.layers.assign(4, LayerSpec{AttentionKind::kFull, MlpKind::kDense});
  a.native_context_tokens = 8192;
  return a;
}

// An engine with round coefficients so that the budget is checkable by hand.
EngineBehaviour Vllm() {
  EngineBehaviour e;
  e.preset_id = "test-vllm";
  e.budget_rule = BudgetRule::kVllmProfiled;
  e.activation_token_scale = 0.0;
  e.sampler_logit_copies = 1.0;
  e.non_torch_base_bytes = 1e8;
  e.default_max_num_seqs = 10;
  return e;
}

MemoryPlanInput Input(ModelArchitecture a, EngineBehaviour e) {
  MemoryPlanInput in;
  in.arch = std::move(a);
  in.engine = std::move(e);
  in.hardware.name = "test card";
  in.hardware.memory_bytes = 4294967296.0;  // 4 GiB
  in.settings.memory_fraction = 0.5;
  in.settings.max_model_len = 4096;
  return in;
}

double Sum(const std::array<double, kNumComponents>& w) {
  double s = 0;
  for (double x : w) s += x;
  return s;
}

struct ShardCase {
  std::string name;
  int64_t tp;
  double expected_weights_bytes;
  double expected_kv_bytes_per_token;
};

class ShardingTest : public ::testing::TestWithParam<ShardCase> {};

TEST_P(ShardingTest, WeightsAndKvPerGpu) {
  const ShardCase& c = GetParam();
  MemoryPlanInput in = Input(Dense(), Vllm());
  in.parallelism.tp = c.tp;
  EXPECT_DOUBLE_EQ(
      Sum(WeightsPerGpuByComponent(in.arch, in.quantization, in.parallelism, in.engine, 0)),
      c.expected_weights_bytes);
  EXPECT_DOUBLE_EQ(KvBytesPerTokenPerGpu(in.arch, in.parallelism, 2.0, 0, 4),
                   c.expected_kv_bytes_per_token);
}

// tp1: 126,362,624 params · 2 B; KV 4 layers · 2 · 4 heads · 64 · 2 B.
// tp2: per layer 524,288 + 262,144 + 524,288 + 6,291,456 + 2,048 = 7,604,224;
//      vocab 16,000 rows each → 63,185,920 params; KV 2 heads per rank.
// tp8: 2 heads per rank; 4 KV heads < 8 ranks → one replicated KV head per
//      rank: 131,072 · 3 + 1,572,864 + 2,048 = 1,968,128 per layer; vocab
//      4,000 rows → 16,065,536 params; KV 4 · 2 · 1 · 64 · 2 = 1,024 B.
INSTANTIATE_TEST_SUITE_P(TensorParallel, ShardingTest,
                         ::testing::Values(ShardCase{"tp1", 1, 252725248.0, 4096.0},
                                           ShardCase{"tp2", 2, 126371840.0, 2048.0},
                                           ShardCase{"tp8_replicates_kv_heads", 8, 32131072.0,
                                                     1024.0}),
                         [](const auto& info) { return info.param.name; });

TEST(KvBytesPerTokenPerGpu, MlaIsNotSplitByTensorParallelism) {
  ModelArchitecture a = Dense();
  a.layers.assign(4, LayerSpec{AttentionKind::kMla, MlpKind::kDense});
  a.mla = MlaSpec{.q_lora_rank = 0,
                  .kv_lora_rank = 512,
                  .qk_nope_head_dim = 64,
                  .qk_rope_head_dim = 64,
                  .v_head_dim = 64};
  ParallelismSpec p;
  for (int64_t tp : {1, 4, 16}) {
    p.tp = tp;
    // 4 layers · (512 + 64) · 2 B.
    EXPECT_DOUBLE_EQ(KvBytesPerTokenPerGpu(a, p, 2.0, 0, 4), 4608.0);
  }
}

TEST(PlanMemory, VllmBudgetByHand) {
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(Input(Dense(), Vllm()));
  ASSERT_TRUE(plan.ok()) << plan.status();
  // budget 0.5 · 4 GiB = 2,147,483,648; sampler 10 · 32,000 · 4 = 1,280,000;
  // available = 2,147,483,648 − 252,725,248 − 1,280,000 − 100,000,000
  //           = 1,793,478,400 → floor(/ (16 · 4,096)) = 27,366 blocks.
  EXPECT_DOUBLE_EQ(plan->per_gpu.activation_peak_bytes, 1280000.0);
  EXPECT_EQ(plan->kv_blocks, 27366);
  EXPECT_EQ(plan->kv_pool_tokens, 27366 * 16);
  EXPECT_DOUBLE_EQ(plan->per_gpu.kv_pool_bytes, 27366.0 * 65536.0);
  EXPECT_DOUBLE_EQ(plan->max_concurrency_at_max_model_len, 27366.0 / 256.0);
  EXPECT_TRUE(plan->fits);
  EXPECT_EQ(plan->binding_constraint, BindingConstraint::kMaxNumSeqs);
}

TEST(PlanMemory, SglangBudgetByHand) {
  EngineBehaviour e;
  e.budget_rule = BudgetRule::kSglangStatic;
  e.engine = EngineKind::kSglang;
  e.default_block_size = 1;
  e.non_torch_base_bytes = 536870912.0;  // 0.5 GiB gone before loading
  MemoryPlanInput in = Input(Dense(), e);
  in.settings.memory_fraction = 0.8;
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // 0.8 · (4 GiB − 0.5 GiB) − 252,725,248 = 2,753,751,859.2 → / 4,096 B.
  EXPECT_EQ(plan->kv_pool_tokens, 672302);
}

// Memory others hold at start (a desktop, WSL2): SGLang takes its fraction
// of what is free then, not of the total less its context.
TEST(PlanMemory, SglangBudgetFromTheStatedFreeMemoryAtStart) {
  EngineBehaviour e;
  e.budget_rule = BudgetRule::kSglangStatic;
  e.engine = EngineKind::kSglang;
  e.default_block_size = 1;
  e.non_torch_base_bytes = 536870912.0;
  MemoryPlanInput in = Input(Dense(), e);
  in.settings.memory_fraction = 0.8;
  in.settings.free_memory_at_start_bytes = 3221225472.0;  // 3 GiB
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // 0.8 · 3 GiB − 252,725,248 = 2,324,254,720 → / 4,096 B = 567,445.
  EXPECT_EQ(plan->kv_pool_tokens, 567445);
  EXPECT_THAT(plan->notes, ::testing::Contains(HasSubstr("3.00 GiB stated free at start")));
  in.settings.free_memory_at_start_bytes = 5e9;  // above the card's 4 GiB
  EXPECT_THAT(PlanMemory(in),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("engine.free_memory_at_start_bytes = 5000000000; must be in [1, "
                                 "the card's total of 4294967296 bytes]")));
}

// vLLM's pool (0.3.1 and later) does not depend on it; the plan says when V1
// would refuse to start (it asks for gpu_memory_utilization × total up front)
// and the whole account must fit in what the other processes leave.
TEST(PlanMemory, VllmNotesWhenTheFreeMemoryAtStartIsBelowItsRequest) {
  MemoryPlanInput in = Input(Dense(), Vllm());
  const absl::StatusOr<MemoryPlan> base = PlanMemory(in);
  ASSERT_TRUE(base.ok()) << base.status();
  in.settings.free_memory_at_start_bytes = 1073741824.0;  // 1 GiB < 0.5 · 4 GiB
  const absl::StatusOr<MemoryPlan> low = PlanMemory(in);
  ASSERT_TRUE(low.ok()) << low.status();
  EXPECT_EQ(low->kv_pool_tokens, base->kv_pool_tokens);
  EXPECT_THAT(low->notes,
              ::testing::Contains(::testing::AllOf(HasSubstr("2.00 GiB but 1.00 GiB is free"),
                                                   HasSubstr("V1 refuses to start"))));
  // Others hold 4 GiB − 1 GiB = 3 GiB (a vLLM figure is what the card shows
  // free before the launch); the account (~2.0 GiB) does not fit in the
  // 1 GiB they leave, and they are what binds.
  EXPECT_TRUE(base->fits);
  EXPECT_FALSE(low->fits);
  EXPECT_EQ(low->binding_constraint, BindingConstraint::kOtherProcesses);
  EXPECT_NEAR(low->shortfall_bytes, low->per_gpu.used_bytes - 1073741824.0, 1.0);
  EXPECT_THAT(low->notes, ::testing::Contains(::testing::AllOf(
                              HasSubstr("3.00 GiB held outside this engine"),
                              HasSubstr("its pool does not depend on it"))));
  in.settings.free_memory_at_start_bytes = 3221225472.0;
  const absl::StatusOr<MemoryPlan> enough = PlanMemory(in);
  ASSERT_TRUE(enough.ok()) << enough.status();
  EXPECT_THAT(enough->notes, ::testing::Contains(HasSubstr("covers vLLM's")));
  EXPECT_TRUE(enough->fits);
  EXPECT_EQ(enough->kv_pool_tokens, base->kv_pool_tokens);
  // The whole card free: nobody else holds anything, and no note says so.
  in.settings.free_memory_at_start_bytes = 4294967296.0;
  const absl::StatusOr<MemoryPlan> clean = PlanMemory(in);
  ASSERT_TRUE(clean.ok()) << clean.status();
  EXPECT_TRUE(clean->fits);
  EXPECT_THAT(clean->notes, ::testing::Not(::testing::Contains(HasSubstr("held outside"))));
}

// On unified memory (one memory for CPU and GPU) the plan says that the OS
// and its page cache were taken to hold nothing, and how this engine's pool
// would lose what they hold; a stated free memory replaces the warning.
TEST(PlanMemory, UnifiedMemoryWithoutAStatedFreeMemorySaysWhatIsAssumed) {
  MemoryPlanInput in = Input(Dense(), Vllm());
  in.hardware.unified_memory = true;
  const absl::StatusOr<MemoryPlan> plain = PlanMemory(in);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_THAT(plain->notes, ::testing::Contains(::testing::AllOf(
                                HasSubstr("unified memory"), HasSubstr("planned as if they held none"),
                                HasSubstr("takes its share of the total"))));
  in.engine.pool_lowered_by_other_processes = true;
  const absl::StatusOr<MemoryPlan> from_free = PlanMemory(in);
  ASSERT_TRUE(from_free.ok()) << from_free.status();
  EXPECT_THAT(from_free->notes,
              ::testing::Contains(HasSubstr("the pool loses what they hold")));
  in.settings.free_memory_at_start_bytes = 3221225472.0;
  const absl::StatusOr<MemoryPlan> stated = PlanMemory(in);
  ASSERT_TRUE(stated.ok()) << stated.status();
  EXPECT_THAT(stated->notes, ::testing::Not(::testing::Contains(HasSubstr("unified memory"))));
  in.hardware.unified_memory = false;
  in.settings.free_memory_at_start_bytes = 0;
  const absl::StatusOr<MemoryPlan> discrete = PlanMemory(in);
  ASSERT_TRUE(discrete.ok()) << discrete.status();
  EXPECT_THAT(discrete->notes, ::testing::Not(::testing::Contains(HasSubstr("unified memory"))));
}

// SGLang's own figure comes after its context: what others hold is the
// card's total less it and SGLang's non-torch memory. The activations and
// CUDA graphs live outside its static fraction, so a small free memory can
// leave the pool positive and still overflow what the others leave.
TEST(PlanMemory, SglangOverflowsWhatOthersLeave) {
  EngineBehaviour e;
  e.budget_rule = BudgetRule::kSglangStatic;
  e.engine = EngineKind::kSglang;
  e.default_block_size = 1;
  e.non_torch_base_bytes = 536870912.0;  // 0.5 GiB
  e.activation_token_scale = 1.0;
  MemoryPlanInput in = Input(Dense(), e);
  in.settings.memory_fraction = 0.8;
  const absl::StatusOr<MemoryPlan> probe = PlanMemory(in);
  ASSERT_TRUE(probe.ok()) << probe.status();
  ASSERT_GT(probe->per_gpu.activation_peak_bytes, 0.0);
  // Scale the activations to 0.3 GiB; with 1 GiB free the static 0.8 GiB
  // holds the weights and a pool, but 0.2 GiB is left for 0.3 GiB.
  in.engine.activation_token_scale = 0.3 * 1073741824.0 / probe->per_gpu.activation_peak_bytes;
  in.settings.free_memory_at_start_bytes = 1073741824.0;
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_GT(plan->per_gpu.kv_pool_bytes, 0.0);
  EXPECT_FALSE(plan->fits);
  EXPECT_EQ(plan->binding_constraint, BindingConstraint::kOtherProcesses);
  // Others: 4 − 0.5 − 1 = 2.5 GiB; the account may use 1.5 GiB.
  EXPECT_NEAR(plan->shortfall_bytes, plan->per_gpu.used_bytes - 1.5 * 1073741824.0, 1.0);
  EXPECT_THAT(plan->notes, ::testing::Contains(::testing::AllOf(
                               HasSubstr("2.50 GiB held outside this engine"),
                               HasSubstr("already leaves it out"))));
  // 2 GiB free: 0.4 GiB outside the fraction holds the 0.3 GiB.
  in.settings.free_memory_at_start_bytes = 2147483648.0;
  const absl::StatusOr<MemoryPlan> roomy = PlanMemory(in);
  ASSERT_TRUE(roomy.ok()) << roomy.status();
  EXPECT_TRUE(roomy->fits);
}

// Where the pool comes out of the device's free memory (vLLM <= 0.3.0:
// total x gmu - (total - free); TensorRT-LLM: a fraction of the free memory),
// memory other processes hold lowers it: by all of it, or by the fraction.
TEST(PlanMemory, FreeMemoryRulesLowerThePoolByWhatOthersHold) {
  const double others = 1073741824.0;  // 1 GiB held outside the engine
  auto pool_bytes = [&](EngineBehaviour e, bool stated) {
    MemoryPlanInput in = Input(Dense(), e);
    in.settings.memory_fraction = 0.9;
    if (stated) in.settings.free_memory_at_start_bytes = 4294967296.0 - others;
    const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? plan->per_gpu.kv_pool_bytes : 0.0;
  };
  EngineBehaviour legacy = Vllm();
  legacy.budget_rule = BudgetRule::kVllmTotalMinusPeak;
  legacy.default_block_size = 1;
  legacy.pool_lowered_by_other_processes = true;
  EXPECT_NEAR(pool_bytes(legacy, false) - pool_bytes(legacy, true), others, 4096.0);
  // 0.3.1-0.6.3 measure the fall in free memory since their own start.
  EngineBehaviour since_init = legacy;
  since_init.pool_lowered_by_other_processes = false;
  EXPECT_DOUBLE_EQ(pool_bytes(since_init, false), pool_bytes(since_init, true));

  EngineBehaviour trt;
  trt.engine = EngineKind::kTrtllm;
  trt.budget_rule = BudgetRule::kTrtllmFreeFraction;
  trt.default_block_size = 1;
  trt.non_torch_base_bytes = 1e8;
  trt.pool_lowered_by_other_processes = true;
  EXPECT_NEAR(pool_bytes(trt, false) - pool_bytes(trt, true), 0.9 * others, 4096.0);
  // The TRT-engine executor: a fraction of what is free after the engine loads.
  EngineBehaviour engine = trt;
  engine.budget_rule = BudgetRule::kTrtllmEngineFree;
  EXPECT_NEAR(pool_bytes(engine, false) - pool_bytes(engine, true), 0.9 * others, 4096.0);
  // TP2: the per-rank non-torch memory is the engine's own, not the others'.
  EngineBehaviour trt_tp2 = trt;
  trt_tp2.non_torch_per_extra_rank_bytes = 5e8;
  auto pool_tp2 = [&](bool stated) {
    MemoryPlanInput in = Input(Dense(), trt_tp2);
    in.settings.memory_fraction = 0.9;
    in.parallelism.tp = 2;
    if (stated) in.settings.free_memory_at_start_bytes = 4294967296.0 - others;
    const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? plan->per_gpu.kv_pool_bytes : 0.0;
  };
  EXPECT_NEAR(pool_tp2(false) - pool_tp2(true), 0.9 * others, 8192.0);
}

// Non-torch bytes per GPU of a dense model planned at `tp` GPUs, over a fast
// link or not (-1 when the plan fails, which the test reports).
double NonTorchBytes(const EngineBehaviour& engine, int64_t tp, bool fast,
                     std::optional<double> memory_fraction = std::nullopt) {
  MemoryPlanInput in = Input(Dense(), engine);
  if (memory_fraction.has_value()) in.settings.memory_fraction = *memory_fraction;
  in.parallelism.tp = tp;
  in.hardware.fast_intra_node_link = fast;
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? plan->per_gpu.non_torch_bytes : -1.0;
}

// vLLM's distributed set-up: one flat amount per GPU once there are two, on
// PCIe as on NVLink, whatever the TP (EnginePreset.non_torch_flat_on_every_link:
// NCCL's rings connect each rank to two peers at any group size).
TEST(PlanMemory, VllmMultiGpuLossIsFlatOnEveryLink) {
  EngineBehaviour e;
  e.engine = EngineKind::kVllm;
  e.non_torch_base_bytes = 1e8;
  e.non_torch_per_extra_rank_bytes = 2e7;
  e.non_torch_flat_on_every_link = true;
  e.fast_link_multi_gpu_non_torch_bytes = 3e8;
  auto non_torch = [&](int64_t tp, bool fast, bool every_link) {
    EngineBehaviour engine = e;
    engine.non_torch_flat_on_every_link = every_link;
    return NonTorchBytes(engine, tp, fast);
  };
  EXPECT_DOUBLE_EQ(non_torch(2, false, true), 1e8 + 3e8);  // PCIe, TP2
  EXPECT_DOUBLE_EQ(non_torch(4, false, true), 1e8 + 3e8);  // PCIe, TP4: the same
  EXPECT_DOUBLE_EQ(non_torch(8, true, true), 1e8 + 3e8);   // NVLink, TP8
  EXPECT_DOUBLE_EQ(non_torch(1, false, true), 1e8);        // one GPU: no set-up
  EXPECT_DOUBLE_EQ(non_torch(4, false, false), 1e8 + 3 * 2e7);  // without the rule
  // The fit's terms follow the rule: the flat column, no per-rank count.
  MemoryPlanInput in = Input(Dense(), e);
  in.parallelism.tp = 4;
  absl::StatusOr<OverheadTerms> t = ComputeOverheadTerms(in);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->extra_ranks, 0.0);
  EXPECT_EQ(t->fast_link_multi_gpu, 1.0);
}

// SGLang's distributed set-up: one flat amount on a fast link, an amount per
// extra rank over PCIe, nothing on one GPU (EnginePreset.non_torch_flat_on_fast_link).
TEST(PlanMemory, SglangMultiGpuLossIsFlatOnAFastLinkAndPerRankOverPcie) {
  EngineBehaviour e;
  e.budget_rule = BudgetRule::kSglangStatic;
  e.engine = EngineKind::kSglang;
  e.default_block_size = 1;
  e.non_torch_base_bytes = 1e8;
  e.non_torch_per_extra_rank_bytes = 2e7;
  e.non_torch_flat_on_fast_link = true;
  e.fast_link_multi_gpu_non_torch_bytes = 5e8;
  auto non_torch = [&](int64_t tp, bool fast, bool flat_rule) {
    EngineBehaviour engine = e;
    engine.non_torch_flat_on_fast_link = flat_rule;
    return NonTorchBytes(engine, tp, fast, 0.8);
  };
  EXPECT_DOUBLE_EQ(non_torch(4, true, true), 1e8 + 5e8);  // flat, whatever the TP
  EXPECT_DOUBLE_EQ(non_torch(2, true, true), 1e8 + 5e8);
  EXPECT_DOUBLE_EQ(non_torch(4, false, true), 1e8 + 3 * 2e7);  // PCIe: per extra rank
  EXPECT_DOUBLE_EQ(non_torch(1, true, true), 1e8);             // one GPU: neither
  EXPECT_DOUBLE_EQ(non_torch(4, true, false), 1e8 + 3 * 2e7);  // without the rule
  // The fit's terms follow the same rule.
  MemoryPlanInput in = Input(Dense(), e);
  in.parallelism.tp = 4;
  in.hardware.fast_intra_node_link = true;
  absl::StatusOr<OverheadTerms> t = ComputeOverheadTerms(in);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->extra_ranks, 0.0);
  EXPECT_EQ(t->fast_link_multi_gpu, 1.0);
  in.hardware.fast_intra_node_link = false;
  t = ComputeOverheadTerms(in);
  ASSERT_TRUE(t.ok()) << t.status();
  EXPECT_EQ(t->extra_ranks, 3.0);
  EXPECT_EQ(t->fast_link_multi_gpu, 0.0);
}

TEST(PlanMemory, WeightsBeyondBudgetDoNotFitAndNameTheShortfall) {
  MemoryPlanInput in = Input(Dense(), Vllm());
  in.hardware.memory_bytes = 400000000.0;  // budget 200,000,000
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok());
  EXPECT_FALSE(plan->fits);
  EXPECT_EQ(plan->binding_constraint, BindingConstraint::kWeights);
  // 252,725,248 + 1,280,000 + 100,000,000 − 200,000,000.
  EXPECT_DOUBLE_EQ(plan->shortfall_bytes, 154005248.0);
}

TEST(PlanMemory, PoolSmallerThanOneRequestIsKvBound) {
  MemoryPlanInput in = Input(Dense(), Vllm());
  in.settings.memory_fraction = 0.0825;  // 354,334,801 budget → 0 < pool < 4096 tokens
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok());
  ASSERT_GT(plan->kv_pool_tokens, 0);
  EXPECT_LT(plan->kv_pool_tokens, 4096);
  EXPECT_FALSE(plan->fits);
  EXPECT_EQ(plan->binding_constraint, BindingConstraint::kKvPool);
  EXPECT_DOUBLE_EQ(plan->shortfall_bytes, 256.0 * 65536.0 - plan->per_gpu.kv_pool_bytes);
}

TEST(PlanMemory, SlidingWindowGroupsInVllmHybridAllocator) {
  // gpt-oss-20b attention: 24 layers alternating sliding (128) and full,
  // 8 KV heads of 64 → 2,048 B per layer per token.
  ModelArchitecture a = Dense();
  a.num_attention_heads = 64;
  a.num_kv_heads = 8;
  a.head_dim = 64;
  a.hidden_size = 2880;
  a.sliding_window_tokens = 128;
  a.layers.clear();
  for (int i = 0; i < 24; ++i) {
    a.layers.push_back(LayerSpec{i % 2 == 0 ? AttentionKind::kSlidingWindow : AttentionKind::kFull,
                                 MlpKind::kDense});
  }
  EngineBehaviour e = Vllm();
  e.hybrid_kv_cache_groups = true;
  MemoryPlanInput in = Input(a, e);
  in.hardware.memory_bytes = 64e9;
  in.settings.max_model_len = 8192;
  in.settings.max_num_batched_tokens = 2048;
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // Two groups of 12 layers; a block is 16 tokens · 2,048 B · 12 layers.
  EXPECT_DOUBLE_EQ(plan->per_gpu.kv_pool_bytes, plan->kv_blocks * 393216.0);
  EXPECT_EQ(plan->kv_pool_tokens, plan->kv_blocks / 2 * 16);
  // Per request: 512 full blocks + cdiv(127 + 2048, 16) + 1 = 137 window blocks.
  EXPECT_DOUBLE_EQ(plan->max_concurrency_at_max_model_len, plan->kv_blocks / 649.0);
}

TEST(PlanMemory, VllmHybridGrowsAttentionBlockToTheMambaPage) {
  // Qwen3-Next shape at TP4 in bf16: attention page per token 2 · 1 (2 KV
  // heads < 4 ranks) · 256 · 2 = 1,024 B per layer; state page per layer
  // conv (2·16·128 + 32·128)/4 · 3 · 2 = 12,288 + SSM 32/4 · 128 · 128 · 2 =
  // 262,144 → 274,432 B; vLLM: block = 16 · cdiv(274,432, 16 · 1,024) = 272.
  ModelArchitecture a = Dense();
  a.hidden_size = 2048;
  a.num_attention_heads = 16;
  a.num_kv_heads = 2;
  a.head_dim = 256;
  a.native_context_tokens = 262144;
  a.layers.clear();
  for (int i = 0; i < 48; ++i) {
    a.layers.push_back(
        {(i + 1) % 4 == 0 ? AttentionKind::kFull : AttentionKind::kLinear, MlpKind::kDense});
  }
  a.linear_attention = LinearAttentionSpec{.num_key_heads = 16,
                                           .num_value_heads = 32,
                                           .key_head_dim = 128,
                                           .value_head_dim = 128,
                                           .conv_kernel_size = 4};
  EngineBehaviour e = Vllm();
  e.hybrid_kv_cache_groups = true;
  e.conv_state_bytes = 2;
  e.ssm_state_bytes = 2;
  MemoryPlanInput in = Input(a, e);
  in.parallelism.tp = 4;
  in.hardware.memory_bytes = 80e9;
  in.settings.memory_fraction = 0.9;
  in.settings.max_model_len = 32768;
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->block_size, 272);
  // 12 full + 36 linear layers: groups of 12 → 1 attention + 3 state groups;
  // a block holds 12 layers' pages of 272 · 1,024 B.
  EXPECT_DOUBLE_EQ(plan->per_gpu.kv_pool_bytes, plan->kv_blocks * 272.0 * 1024 * 12);
  EXPECT_EQ(plan->kv_pool_tokens, plan->kv_blocks / 4 * 272);
  // Per request: cdiv(32,768, 272) = 121 attention blocks + 3 state blocks.
  EXPECT_DOUBLE_EQ(plan->max_concurrency_at_max_model_len, plan->kv_blocks / 124.0);
}

// Qwen3.5-27B's shape (16 full + 48 Gated-DeltaNet layers, 4 KV heads of
// 256; GDN 16 key / 48 value heads of 128, conv 4) with the fp32 recurrent
// state its config.json states: state page per layer conv 3 · 10,240 · 2 =
// 61,440 B + recurrent 48 · 128 · 128 · 4 = 3,145,728 B; attention 4,096 B
// per token per layer; block = 16 · cdiv(3,207,168, 16 · 4,096) = 784 (what
// vLLM 0.27.1 logs). Groups of 16: 1 attention + 3 state groups. With
// prefix caching the Mamba 'align' mode holds 2 blocks per state group, and
// vLLM 0.21+ prints the concurrency at max_model_len times max_model_len.
ModelArchitecture Qwen35Dense27bShape() {
  ModelArchitecture a = Dense();
  a.hidden_size = 5120;
  a.num_attention_heads = 24;
  a.num_kv_heads = 4;
  a.head_dim = 256;
  a.native_context_tokens = 262144;
  a.layers.clear();
  for (int i = 0; i < 64; ++i) {
    a.layers.push_back(
        {(i + 1) % 4 == 0 ? AttentionKind::kFull : AttentionKind::kLinear, MlpKind::kDense});
  }
  a.linear_attention = LinearAttentionSpec{.num_key_heads = 16,
                                           .num_value_heads = 48,
                                           .key_head_dim = 128,
                                           .value_head_dim = 128,
                                           .conv_kernel_size = 4,
                                           .recurrent_state_bytes = 4};
  return a;
}

TEST(PlanMemory, VllmHybridPrintsConcurrencyTimesContextFrom021WithAlignedStateBlocks) {
  EngineBehaviour e = Vllm();
  e.hybrid_kv_cache_groups = true;
  e.conv_state_bytes = 2;
  e.ssm_state_bytes = 2;  // the engine's default; the checkpoint's fp32 wins
  e.state_dtype_from_checkpoint = true;
  e.state_blocks_with_prefix_caching = 2;
  MemoryPlanInput in = Input(Qwen35Dense27bShape(), e);
  in.hardware.memory_bytes = 80e9;
  in.settings.memory_fraction = 0.9;
  in.settings.max_model_len = 4096;
  in.settings.enable_prefix_caching = true;
  absl::StatusOr<MemoryPlan> old_rule = PlanMemory(in);
  ASSERT_TRUE(old_rule.ok()) << old_rule.status();
  EXPECT_EQ(old_rule->block_size, 784);
  const int64_t blocks = old_rule->kv_blocks;
  ASSERT_GT(blocks, 100);
  // A block holds 16 layers' pages of 784 · 4,096 B (the state page padded up).
  EXPECT_DOUBLE_EQ(old_rule->per_gpu.kv_pool_bytes, blocks * 784.0 * 4096 * 16);
  EXPECT_EQ(old_rule->kv_pool_tokens, blocks / 4 * 784);
  // Per request: cdiv(4,096, 784) = 6 attention blocks + 3 groups · 2.
  EXPECT_DOUBLE_EQ(old_rule->max_concurrency_at_max_model_len, blocks / 12.0);
  in.engine.hybrid_tokens_from_concurrency = true;
  absl::StatusOr<MemoryPlan> new_rule = PlanMemory(in);
  ASSERT_TRUE(new_rule.ok()) << new_rule.status();
  EXPECT_EQ(new_rule->kv_blocks, blocks);
  // The printed figure changes; the tokens the pool holds (what request
  // slots are counted from) do not.
  EXPECT_EQ(new_rule->reported_kv_pool_tokens,
            static_cast<int64_t>(std::floor(blocks / 12.0 * 4096)));
  EXPECT_EQ(new_rule->kv_pool_tokens, blocks / 4 * 784);
  EXPECT_EQ(old_rule->reported_kv_pool_tokens, old_rule->kv_pool_tokens);
  // Without prefix caching one block per state group: 6 + 3.
  in.settings.enable_prefix_caching = false;
  absl::StatusOr<MemoryPlan> no_cache = PlanMemory(in);
  ASSERT_TRUE(no_cache.ok()) << no_cache.status();
  EXPECT_EQ(no_cache->reported_kv_pool_tokens,
            static_cast<int64_t>(std::floor(blocks / 9.0 * 4096)));
  // With the engine's bf16 state (an engine that keeps its own dtype, or a
  // checkpoint that states none) the page halves: block 16 · cdiv(1,634,304,
  // 65,536) = 400.
  in.engine.state_dtype_from_checkpoint = false;
  absl::StatusOr<MemoryPlan> engine_dtype = PlanMemory(in);
  ASSERT_TRUE(engine_dtype.ok()) << engine_dtype.status();
  EXPECT_EQ(engine_dtype->block_size, 400);
  in.engine.state_dtype_from_checkpoint = true;
  in.arch.linear_attention->recurrent_state_bytes = 0;
  absl::StatusOr<MemoryPlan> bf16_state = PlanMemory(in);
  ASSERT_TRUE(bf16_state.ok()) << bf16_state.status();
  EXPECT_EQ(bf16_state->block_size, 400);
}

TEST(MaxConcurrencyAt, CountsBlocksPerRequestByGroup) {
  // Full only: 1,000 blocks of 16, requests of 1,000 tokens need 63 blocks.
  EXPECT_DOUBLE_EQ(
      MaxConcurrencyAt(KvLayout{1000, 16, 1, 0, 0, 0, std::nullopt, std::nullopt, 0}, 1000),
      1000.0 / 63);
  // One full and one window group (window blocks 137): short requests are
  // bounded by their own length in both groups, long ones by the window.
  const KvLayout hybrid{35328, 16, 1, 1, 137, 0, std::nullopt, std::nullopt, 0};
  EXPECT_DOUBLE_EQ(MaxConcurrencyAt(hybrid, 8192), 35328.0 / (512 + 137));
  EXPECT_DOUBLE_EQ(MaxConcurrencyAt(hybrid, 160), 35328.0 / (10 + 10));
  // A separate state pool caps the count.
  EXPECT_DOUBLE_EQ(MaxConcurrencyAt(KvLayout{100000, 1, 1, 0, 0, 0, 7, std::nullopt, 0}, 1000),
                   7.0);
}

ModelArchitecture Moe() {
  ModelArchitecture a = Dense();
  a.layers.assign(4, LayerSpec{AttentionKind::kFull, MlpKind::kMoe});
  a.moe = MoeSpec{.num_routed_experts = 8, .experts_per_token = 2, .expert_intermediate_size = 256};
  return a;
}

double ExpertBytes(const ModelArchitecture& a, const Quantization& q, int64_t tp, int64_t ep,
                   const EngineBehaviour& e) {
  ParallelismSpec p;
  p.tp = tp;
  p.ep = ep;
  return WeightsPerGpuByComponent(a, q, p, e, 0)[static_cast<int>(Component::kRoutedExperts)];
}

TEST(WeightsPerGpu, ExpertParallelHoldsTheSameExpertBytesAsTensorSlicing) {
  const EngineBehaviour e = Vllm();
  // 4 layers · 8 experts · 3 · 1024 · 256 · 2 B / 4 GPUs either way.
  EXPECT_DOUBLE_EQ(ExpertBytes(Moe(), {}, 4, 1, e), 12582912.0);
  EXPECT_DOUBLE_EQ(ExpertBytes(Moe(), {}, 4, 4, e), 12582912.0);
}

TEST(WeightsPerGpu, KernelPaddingOfTensorSlicedExpertsIsWhatExpertParallelSaves) {
  EngineBehaviour e = Vllm();
  e.moe_padding.push_back(MoePaddingRule{WeightFormat::kNvfp4, 1, 128, {}, {}});
  Quantization q;
  q.format = WeightFormat::kNvfp4;
  // TP4 slices 256 into 64 per rank, padded to 128: twice the bytes of EP4's
  // two whole 256-wide experts.
  EXPECT_NEAR(ExpertBytes(Moe(), q, 4, 1, e) / ExpertBytes(Moe(), q, 4, 4, e), 2.0, 1e-3);
}

TEST(ResolveForHardware, FirstApplicableRulePerFormatWins) {
  EngineBehaviour e;
  MoePaddingRule b200{WeightFormat::kMxfp4, 256, 256, {}, {"B200"}};
  MoePaddingRule hopper{WeightFormat::kMxfp4, 128, 128, {"Hopper"}, {}};
  MoePaddingRule other{WeightFormat::kMxfp4, 256, 128, {}, {}};
  e.moe_padding = {b200, hopper, other};
  HardwareSpec h100{"NVIDIA H100 80GB HBM3", "Hopper", 1.0, false};
  HardwareSpec b200_card{"NVIDIA B200", "Blackwell", 1.0, false};
  HardwareSpec gb10{"NVIDIA GB10", "Blackwell", 1.0, true};
  ASSERT_EQ(ResolveForHardware(e, h100).moe_padding.size(), 1u);
  EXPECT_EQ(ResolveForHardware(e, h100).moe_padding[0].intermediate_multiple, 128);
  EXPECT_EQ(ResolveForHardware(e, h100).moe_padding[0].hidden_multiple, 128);
  EXPECT_EQ(ResolveForHardware(e, b200_card).moe_padding[0].intermediate_multiple, 256);
  EXPECT_EQ(ResolveForHardware(e, gb10).moe_padding[0].hidden_multiple, 256);
  EXPECT_EQ(ResolveForHardware(e, gb10).moe_padding[0].intermediate_multiple, 128);
  // Unresolved card-specific rules do not apply.
  EngineBehaviour only_hopper;
  only_hopper.moe_padding = {hopper};
  EXPECT_TRUE(ResolveForHardware(only_hopper, gb10).moe_padding.empty());
}

TEST(PlanMemory, NotesWhatExpertParallelismWouldChange) {
  MemoryPlanInput in = Input(Moe(), Vllm());
  in.parallelism.tp = 4;
  in.engine.moe_padding.push_back(MoePaddingRule{WeightFormat::kNative, 1, 128, {}, {}});
  in.quantization.format = WeightFormat::kNative;
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  bool found = false;
  for (const std::string& n : plan->notes) {
    found |= n.find("sliced by tensor parallelism; with expert parallelism") != std::string::npos;
  }
  EXPECT_TRUE(found);
}

TEST(WeightsPerGpu, PipelineStagesSplitLayersAndEnds) {
  const ModelArchitecture a = Dense();
  ParallelismSpec p;
  p.pp = 2;
  const auto first = WeightsPerGpuByComponent(a, {}, p, Vllm(), 0);
  const auto last = WeightsPerGpuByComponent(a, {}, p, Vllm(), 1);
  EXPECT_DOUBLE_EQ(first[static_cast<int>(Component::kEmbeddings)], 65536000.0);
  EXPECT_DOUBLE_EQ(first[static_cast<int>(Component::kLmHead)], 0.0);
  EXPECT_DOUBLE_EQ(last[static_cast<int>(Component::kLmHead)], 65536000.0);
  EXPECT_DOUBLE_EQ(first[static_cast<int>(Component::kDenseMlp)],
                   last[static_cast<int>(Component::kDenseMlp)]);
  EXPECT_EQ(PipelineStageLayers(5, 2, 0), std::make_pair(0, 2));
  EXPECT_EQ(PipelineStageLayers(5, 2, 1), std::make_pair(2, 5));
}

TEST(PlanMemory, SglangHybridSplitsStateAndKvPools) {
  ModelArchitecture a = Dense();
  a.layers = {{AttentionKind::kLinear, MlpKind::kDense},
              {AttentionKind::kLinear, MlpKind::kDense},
              {AttentionKind::kLinear, MlpKind::kDense},
              {AttentionKind::kFull, MlpKind::kDense}};
  a.linear_attention = LinearAttentionSpec{.num_key_heads = 4,
                                           .num_value_heads = 8,
                                           .key_head_dim = 64,
                                           .value_head_dim = 64,
                                           .conv_kernel_size = 4};
  EngineBehaviour e;
  e.budget_rule = BudgetRule::kSglangStatic;
  e.engine = EngineKind::kSglang;
  e.default_block_size = 1;
  e.conv_state_bytes = 2;
  e.ssm_state_bytes = 4;
  e.mamba_full_memory_ratio = 0.9;
  MemoryPlanInput in = Input(a, e);
  in.settings.memory_fraction = 0.8;
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // State per request: 3 layers · ((2·4·64 + 8·64) · 3 · 2 + 8·64·64 · 4)
  //                  = 3 · (6,144 + 131,072) = 411,648 B.
  EXPECT_DOUBLE_EQ(plan->state_bytes_per_request, 411648.0);
  const double rest = plan->per_gpu.state_pool_bytes + plan->per_gpu.kv_pool_bytes;
  EXPECT_NEAR(plan->per_gpu.state_pool_bytes / rest, 0.9 / 1.9, 1e-3);
  EXPECT_EQ(plan->state_slots, static_cast<int64_t>(plan->per_gpu.state_pool_bytes / 411648.0));
  // KV only for the one full layer: 2 · 4 · 64 · 2 B.
  EXPECT_DOUBLE_EQ(plan->kv_bytes_per_token, 1024.0);
}

struct InvalidCase {
  std::string name;
  void (*mutate)(MemoryPlanInput&);
  std::string message;
};

class ValidateInputTest : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(ValidateInputTest, NamesFieldValueAndRule) {
  MemoryPlanInput in = Input(Moe(), Vllm());
  in.arch.num_attention_heads = 64;
  in.arch.num_kv_heads = 8;
  GetParam().mutate(in);
  EXPECT_THAT(ValidateMemoryPlanInput(in),
              StatusIs(absl::StatusCode::kInvalidArgument, Eq(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Rules, ValidateInputTest,
    ::testing::Values(
        InvalidCase{"tp_not_dividing_heads", [](MemoryPlanInput& in) { in.parallelism.tp = 3; },
                    "parallelism.tp = 3; must divide num_attention_heads = 64"},
        InvalidCase{"ep_not_dividing_experts",
                    [](MemoryPlanInput& in) {
                      in.parallelism.tp = 4;
                      in.parallelism.ep = 3;
                    },
                    "parallelism.ep = 3; must divide num_routed_experts = 8"},
        InvalidCase{"fraction_above_one",
                    [](MemoryPlanInput& in) { in.settings.memory_fraction = 1.5; },
                    "engine.gpu_memory_utilization = 1.5; must be in (0, 1]"},
        InvalidCase{"context_beyond_native",
                    [](MemoryPlanInput& in) { in.settings.max_model_len = 10000; },
                    "engine.max_model_len = 10000; must not exceed the model's context of 8192 "
                    "tokens (max_position_embeddings, no rope scaling)"}),
    [](const auto& info) { return info.param.name; });

TEST(ValidateMemoryPlanInput, DefaultInputIsValid) {
  EXPECT_TRUE(ValidateMemoryPlanInput(Input(Dense(), Vllm())).ok());
}

TEST(FitOverhead, RecoversKnownCoefficientsFromSyntheticLogs) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double copies[2] = {3.0, 9.0};
  const double base = 2e8, per_rank = 1e8, scale = 1.1;
  std::vector<OverheadObservation> obs;
  for (int i = 0; i < 12; ++i) {
    OverheadObservation o;
    o.sampler_group = i % 2;
    o.terms.sampler_phase_bytes = 1e8 * (0.5 + u(rng));
    // A third of the logs are dominated by the forward pass.
    o.terms.token_phase_bytes = (i % 3 == 0 ? 5e9 : 1e7) * (0.5 + u(rng));
    o.terms.extra_ranks = static_cast<double>(i % 4);
    o.overhead_bytes = std::max(scale * o.terms.token_phase_bytes,
                                copies[o.sampler_group] * o.terms.sampler_phase_bytes) +
                       base + per_rank * o.terms.extra_ranks;
    obs.push_back(o);
  }
  OverheadFitOptions opt;
  opt.num_sampler_groups = 2;
  opt.activation_token_scale = scale;
  const absl::StatusOr<OverheadFit> fit = FitOverhead(obs, opt);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->sampler_logit_copies[0], 3.0, 1e-6);
  EXPECT_NEAR(fit->sampler_logit_copies[1], 9.0, 1e-6);
  EXPECT_NEAR(fit->non_torch_base_bytes, base, 1.0);
  EXPECT_NEAR(fit->non_torch_per_extra_rank_bytes, per_rank, 1.0);
  EXPECT_LT(fit->rms_residual_bytes, 1.0);
}

TEST(FitOverhead, RejectsEmptyInput) {
  EXPECT_THAT(FitOverhead({}, {}), StatusIs(absl::StatusCode::kInvalidArgument,
                                            HasSubstr("FitOverhead: no observations")));
  EXPECT_THAT(
      FitProportional({0.0}, {1.0}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("FitProportional: every x is zero")));
  EXPECT_THAT(FitProportional({}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("FitProportional: 0 x values, 0 y values; need equal, non-zero "
                                 "counts")));
}

}  // namespace
}  // namespace capplan::model

namespace capplan::model {
namespace {

// ----------------------------------------------------------- issue 12 rules

// TensorRT-LLM's PyTorch backend with round numbers: the Dense() model
// (252,725,248 B of weights, 4,096 KV bytes per token), no activation, 1e8 B
// outside torch.
EngineBehaviour TrtPytorch() {
  EngineBehaviour e;
  e.preset_id = "test-trtllm";
  e.engine = EngineKind::kTrtllm;
  e.budget_rule = BudgetRule::kTrtllmFreeFraction;
  e.default_memory_fraction = 0.9;
  e.default_block_size = 32;
  e.default_max_num_batched_tokens = 8192;
  e.default_max_num_seqs = 2048;
  e.kv_tokens_round_up_to_block = true;
  e.activation_token_scale = 0.0;
  e.non_torch_base_bytes = 1e8;
  return e;
}

TEST(PlanMemory, TrtllmFreeFractionOfWhatTheProfilingPeakLeavesPlusTheTemporaryPool) {
  MemoryPlanInput in = Input(Dense(), TrtPytorch());
  in.settings.memory_fraction = 0.0;  // the preset's 0.9
  in.settings.max_model_len = 257;
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // The temporary pool: ceil(8192 / 257) = 32 dummy requests of
  // ceil(258 / 32) = 9 blocks = 9,216 tokens (the 0.20 logs' figure).
  EXPECT_EQ(plan->profile_pool_tokens, 9216);
  EXPECT_DOUBLE_EQ(plan->memory_fraction, 0.9);
  // 0.9 · (4 GiB − 252,725,248 − 1e8 + 9,216 · 4,096) = 3,581,991,705.6 B;
  // / 4,096 = 874,509 tokens, rounded up to 27,329 blocks of 32.
  EXPECT_EQ(plan->block_size, 32);
  EXPECT_EQ(plan->kv_blocks, 27329);
  EXPECT_EQ(plan->kv_pool_tokens, 27329 * 32);
}

TEST(PlanMemory, TrtllmTemporaryPoolHoldsABlockPerBatchSlotFromOnePointOne) {
  MemoryPlanInput in = Input(Dense(), TrtPytorch());
  in.settings.max_model_len = 2048;
  in.engine.profile_pool_block_per_batch_slot = true;
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // 4 requests of 65 blocks = 260 blocks < 2,048 batch slots: 65,536 tokens
  // (the 1.1.0 trtllm-serve log's temporary pool).
  EXPECT_EQ(plan->profile_pool_tokens, 65536);
}

TEST(PlanMemory, TrtllmEnginePathTakesTheFractionOfFreeMemoryAndTheDriverRankBinds) {
  MemoryPlanInput in = Input(Dense(), TrtPytorch());
  in.engine.budget_rule = BudgetRule::kTrtllmEngineFree;
  in.engine.kv_pool_min_over_ranks = true;
  in.engine.driver_rank_extra_non_torch_bytes = 5e7;
  in.settings.memory_fraction = 0.5;
  const absl::StatusOr<MemoryPlan> single = PlanMemory(in);
  ASSERT_TRUE(single.ok()) << single.status();
  // 0.5 · (4 GiB − 252,725,248 − 1e8) = 1,971,121,024 B → 481,230 tokens,
  // rounded up to 15,039 blocks.
  EXPECT_EQ(single->profile_pool_tokens, 0);
  EXPECT_EQ(single->kv_blocks, 15039);
  in.parallelism.tp = 2;
  const absl::StatusOr<MemoryPlan> pair = PlanMemory(in);
  ASSERT_TRUE(pair.ok()) << pair.status();
  // The driver's extra 5e7 B count on the rank that binds.
  EXPECT_DOUBLE_EQ(pair->per_gpu.non_torch_bytes, 1.5e8);
}

TEST(PlanMemory, VllmMultipliesCudasTotalWhenTheCardStatesIt) {
  MemoryPlanInput in = Input(Dense(), Vllm());
  in.hardware.cuda_total_bytes = 4e9;
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // 0.5 · 4e9 − 252,725,248 − 1,280,000 − 1e8 = 1,645,994,752 → 25,115 blocks.
  EXPECT_DOUBLE_EQ(plan->per_gpu.capacity_bytes, 4e9);
  EXPECT_EQ(plan->kv_blocks, 25115);
}

// A deployment on the PyTorch-native top-k/top-p sampler takes the preset's
// native copies only where the preset names a native group; elsewhere (and
// without the setting) the default copies hold.
TEST(PlanMemory, NativeSamplerTakesTheNativeCopiesWhereThePresetHasAGroup) {
  MemoryPlanInput in = Input(Dense(), Vllm());
  in.engine.native_sampler_logit_copies = 7.0;
  in.settings.native_sampler = true;
  absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_DOUBLE_EQ(plan->per_gpu.activation_peak_bytes, 1280000.0);  // no group: default
  in.engine.native_sampler_fit_group = "test-native";
  plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // 7 copies of the fp32 [10, 32,000] logits = 7 × 1,280,000.
  EXPECT_DOUBLE_EQ(plan->per_gpu.activation_peak_bytes, 8960000.0);
  EXPECT_THAT(plan->notes, ::testing::Contains(HasSubstr("PyTorch-native top-k/top-p")));
  in.settings.native_sampler = false;
  plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_DOUBLE_EQ(plan->per_gpu.activation_peak_bytes, 1280000.0);
}

// A small vision tower: encoder output width 1024 × (1 + 1 deepstack) = 2048,
// the largest item 100 embedding rows and 1,000 placeholder tokens, patches of
// 3 channels × 2 frames × 4 × 4 = 96 elements, merge 2 (4 patches a row).
ModelArchitecture WithVision() {
  ModelArchitecture a = Dense();
  VisionEncoderSpec v;
  v.depth = 1;
  v.hidden_size = 64;
  v.intermediate_size = 128;
  v.patch_size = 4;
  v.temporal_patch_size = 2;
  v.in_channels = 3;
  v.out_hidden_size = 1024;
  v.spatial_merge_size = 2;
  v.deepstack_mergers = 1;
  v.max_item_embedding_tokens = 100;
  v.max_item_placeholder_tokens = 1000;
  a.vision_encoder = v;
  return a;
}

TEST(MultimodalProfileHoldBytes, PadsTheDummyEncoderOutputsToTheBudget) {
  EngineBehaviour e = Vllm();
  e.mm_profile_pads_encoder_cache = true;
  const ModelArchitecture a = WithVision();
  // 512 profiled tokens: budget 1,000 rows, one item. Padded 1,000 × 2,048 ×
  // 2 B = 4,096,000 + the unpadded item 100 × 2,048 × 2 = 409,600 + pixels
  // 100 × 4 × 96 × 2 = 76,800.
  EXPECT_DOUBLE_EQ(MultimodalProfileHoldBytes(a, e, 512), 4582400.0);
  // 2,500 profiled tokens: budget 2,500 rows, two items of it.
  EXPECT_DOUBLE_EQ(MultimodalProfileHoldBytes(a, e, 2500), 2 * 2500 * 2048 * 2.0 + 486400.0);
  ModelArchitecture unknown = a;
  unknown.vision_encoder->max_item_embedding_tokens = 0;
  EXPECT_DOUBLE_EQ(MultimodalProfileHoldBytes(unknown, e, 512), 0.0);
  EXPECT_DOUBLE_EQ(MultimodalProfileHoldBytes(Dense(), e, 512), 0.0);
  e.mm_profile_pads_encoder_cache = false;
  EXPECT_DOUBLE_EQ(MultimodalProfileHoldBytes(a, e, 512), 0.0);
}

// The hold adds to the activation peak (it is alive through the sampler) and
// enters the calibration as a known term.
TEST(PlanMemory, MultimodalProfileHoldAddsToTheActivationPeak) {
  MemoryPlanInput in = Input(WithVision(), Vllm());
  in.engine.mm_profile_pads_encoder_cache = true;
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const double hold = MultimodalProfileHoldBytes(in.arch, in.engine, plan->profiled_tokens);
  EXPECT_GT(hold, 4e6);
  EXPECT_DOUBLE_EQ(plan->per_gpu.activation_peak_bytes, 1280000.0 + hold);
  EXPECT_THAT(plan->notes, ::testing::Contains(HasSubstr("multimodal profile")));
  const absl::StatusOr<OverheadTerms> terms = ComputeOverheadTerms(in);
  ASSERT_TRUE(terms.ok()) << terms.status();
  EXPECT_DOUBLE_EQ(terms->fixed_bytes, hold);
  in.engine.mm_profile_pads_encoder_cache = false;
  const absl::StatusOr<MemoryPlan> off = PlanMemory(in);
  ASSERT_TRUE(off.ok()) << off.status();
  EXPECT_DOUBLE_EQ(off->per_gpu.activation_peak_bytes, 1280000.0);
}

// The vision tower at TP2: hand count of WithVision's tensors (elements):
// patch embed 64 x 97 = 6,208, block norms 256, qkv 192 x 65 = 12,480, proj
// 64 x 65 = 4,160, MLP in 128 x 65 = 8,320, out 64 x 129 = 8,256, merger norm
// 128, fc1 2 x 256 x 257 = 131,584, fc2 2 x 1,024 x 257 = 526,336, deepstack
// norms 512: 698,240 x 2 B whole. Split over two ranks the column-parallel
// ones halve their rows (6,240; 4,160; 65,792) and the row-parallel ones
// their inputs with the bias (64 x 33; 64 x 65; 2 x 1,024 x 129): 353,760.
TEST(PlanMemory, VisionTowerIsShardedOnlyWhereTheEngineShardsIt) {
  MemoryPlanInput in = Input(WithVision(), Vllm());
  in.parallelism.tp = 2;
  const int vision = static_cast<int>(Component::kVisionEncoder);
  const absl::StatusOr<MemoryPlan> whole = PlanMemory(in);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_DOUBLE_EQ(whole->weights_by_component_bytes[vision], 698240.0 * 2);
  in.engine.vision_encoder_tp_sharded = true;
  const absl::StatusOr<MemoryPlan> sharded = PlanMemory(in);
  ASSERT_TRUE(sharded.ok()) << sharded.status();
  EXPECT_DOUBLE_EQ(sharded->weights_by_component_bytes[vision], 353760.0 * 2);
  // The text model's weights do not move.
  EXPECT_DOUBLE_EQ(Sum(sharded->weights_by_component_bytes) - 353760.0 * 2,
                   Sum(whole->weights_by_component_bytes) - 698240.0 * 2);
  in.parallelism.tp = 1;
  const absl::StatusOr<MemoryPlan> one = PlanMemory(in);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_DOUBLE_EQ(one->weights_by_component_bytes[vision], 698240.0 * 2);
}

// A model file that keeps gate_up alive at down_proj's output holds a third
// hidden width at the peak: the rule naming the class wins over the rule for
// any class; a class no rule names takes the any-class rule, none at all 2.
TEST(PlanMemory, ActivationHiddenCopiesFollowTheArchitectureClass) {
  MemoryPlanInput in = Input(Dense(), Vllm());
  in.engine.activation_token_scale = 1.0;
  in.engine.sampler_logit_copies = 0.0;
  in.arch.architecture_class = "LlamaForCausalLM";
  auto peak = [&]() {
    absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? plan->per_gpu.activation_peak_bytes : 0.0;
  };
  const double two = peak();
  const double tokens = two / ((2.0 * 1024 + 3.0 * 4096) * 2.0);
  EXPECT_GT(tokens, 0.0);
  in.engine.activation_hidden_copies = {{{}, 3}, {{"LlamaForCausalLM"}, 2}};
  EXPECT_DOUBLE_EQ(peak(), two);  // the class's own rule
  in.arch.architecture_class = "Qwen2ForCausalLM";
  EXPECT_DOUBLE_EQ(peak(), two + tokens * 1024 * 2.0);  // the any-class rule
  in.engine.activation_hidden_copies = {{{"LlamaForCausalLM"}, 3}};
  EXPECT_DOUBLE_EQ(peak(), two);  // no rule for Qwen2: 2
}

// The caching allocator's tail on the loaded weights: Dense()'s tensors of
// at least 10 MiB are the embeddings and the LM head (32,000 x 1,024 x 2 B)
// and the four merged gate_up projections (8,192 x 1,024 x 2 B = 16 MiB; the
// 8 MiB down projections stay below), six tensors each with a mean tail of
// 1 MiB where free memory is measured, 1/4 MiB where torch's allocated bytes are.
TEST(PlanMemory, AllocatorTailOnTheLargeWeightTensors) {
  constexpr double kMebi = 1024.0 * 1024.0;
  MemoryPlanInput in = Input(Dense(), Vllm());
  const absl::StatusOr<MemoryPlan> exact = PlanMemory(in);
  ASSERT_TRUE(exact.ok()) << exact.status();
  in.engine.allocator_round_bytes = 2 * kMebi;
  in.engine.allocator_large_from_bytes = 10 * kMebi;
  const absl::StatusOr<MemoryPlan> allocated = PlanMemory(in);
  ASSERT_TRUE(allocated.ok()) << allocated.status();
  EXPECT_DOUBLE_EQ(allocated->per_gpu.weights_bytes - exact->per_gpu.weights_bytes, 6 * 0.25 * kMebi);
  in.engine.allocator_counts_reserved = true;
  const absl::StatusOr<MemoryPlan> reserved = PlanMemory(in);
  ASSERT_TRUE(reserved.ok()) << reserved.status();
  EXPECT_DOUBLE_EQ(reserved->per_gpu.weights_bytes - exact->per_gpu.weights_bytes, 6 * 1.0 * kMebi);
}

// A GPTQ GEMM that dequantises whole weights holds the fp16 down projection
// of one rank at the activation peak: Dense()'s 4,096 x 1,024 x 2 B = 8 MiB
// at TP1, half at TP2; nothing for other formats or where the preset says no.
TEST(PlanMemory, GptqDequantBufferAtTheActivationPeak) {
  constexpr double kMebi = 1024.0 * 1024.0;
  MemoryPlanInput in = Input(Dense(), Vllm());
  in.engine.activation_token_scale = 1.0;
  in.engine.sampler_logit_copies = 0.0;
  in.quantization.format = WeightFormat::kInt4Gptq;
  auto peak = [&]() {
    absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
    EXPECT_TRUE(plan.ok()) << plan.status();
    return plan.ok() ? plan->per_gpu.activation_peak_bytes : 0.0;
  };
  const double plain = peak();
  in.engine.gptq_gemm_dequantizes_weight = true;
  EXPECT_DOUBLE_EQ(peak() - plain, 8 * kMebi);
  in.quantization.format = WeightFormat::kInt4Awq;
  EXPECT_DOUBLE_EQ(peak(), plain);
  in.quantization.format = WeightFormat::kInt4Gptq;
  in.parallelism.tp = 2;
  in.engine.gptq_gemm_dequantizes_weight = false;
  const double plain_tp2 = peak();
  in.engine.gptq_gemm_dequantizes_weight = true;
  EXPECT_DOUBLE_EQ(peak() - plain_tp2, 4 * kMebi);
  // A model whose MLPs are all routed experts has no dense down projection.
  MemoryPlanInput moe = Input(Moe(), Vllm());
  moe.engine.activation_token_scale = 1.0;
  moe.engine.sampler_logit_copies = 0.0;
  moe.quantization.format = WeightFormat::kInt4Gptq;
  const absl::StatusOr<MemoryPlan> off = PlanMemory(moe);
  moe.engine.gptq_gemm_dequantizes_weight = true;
  const absl::StatusOr<MemoryPlan> on = PlanMemory(moe);
  ASSERT_TRUE(off.ok() && on.ok());
  EXPECT_DOUBLE_EQ(on->per_gpu.activation_peak_bytes, off->per_gpu.activation_peak_bytes);
}

// The ROCm extra lands on ROCm cards only, beside the base, and comes out of
// the pool byte for byte under vLLM's profiled budget.
TEST(PlanMemory, RocmExtraOnlyOnRocmCards) {
  MemoryPlanInput in = Input(Dense(), Vllm());
  in.engine.rocm_non_torch_bytes = 3e8;
  const absl::StatusOr<MemoryPlan> cuda = PlanMemory(in);
  ASSERT_TRUE(cuda.ok()) << cuda.status();
  EXPECT_DOUBLE_EQ(cuda->per_gpu.non_torch_bytes, 1e8);
  in.hardware.rocm = true;
  const absl::StatusOr<MemoryPlan> rocm = PlanMemory(in);
  ASSERT_TRUE(rocm.ok()) << rocm.status();
  EXPECT_DOUBLE_EQ(rocm->per_gpu.non_torch_bytes, 4e8);
  EXPECT_NEAR(cuda->per_gpu.kv_pool_bytes - rocm->per_gpu.kv_pool_bytes, 3e8,
              cuda->kv_bytes_per_token * 64 + 1.0);  // within a block of blocks
}

TEST(PlanMemory, V0KeepsTheDriverRanksPoolWithMoreThanOneWorker) {
  MemoryPlanInput in = Input(Dense(), Vllm());
  in.engine.kv_pool_min_over_ranks = true;
  in.engine.driver_rank_extra_non_torch_bytes = 2e8;
  const absl::StatusOr<MemoryPlan> one = PlanMemory(in);
  ASSERT_TRUE(one.ok());
  EXPECT_DOUBLE_EQ(one->per_gpu.non_torch_bytes, 1e8);
  in.parallelism.tp = 2;
  const absl::StatusOr<MemoryPlan> two = PlanMemory(in);
  ASSERT_TRUE(two.ok());
  EXPECT_DOUBLE_EQ(two->per_gpu.non_torch_bytes, 3e8);
  EXPECT_THAT(two->notes, ::testing::Contains(HasSubstr("driver rank")));
}

TEST(PlanMemory, CudaGraphsComeOutOfTheBudgetOnlyWhereThePresetSaysSo) {
  MemoryPlanInput in = Input(Dense(), Vllm());
  in.engine.cuda_graph_bytes_per_capture_layer = 1e6;
  const absl::StatusOr<MemoryPlan> reported = PlanMemory(in);
  in.engine.cuda_graph_in_kv_budget = true;
  const absl::StatusOr<MemoryPlan> deducted = PlanMemory(in);
  ASSERT_TRUE(reported.ok() && deducted.ok());
  EXPECT_GT(reported->per_gpu.cuda_graph_bytes, 0.0);
  EXPECT_DOUBLE_EQ(reported->per_gpu.cuda_graph_bytes, deducted->per_gpu.cuda_graph_bytes);
  EXPECT_NEAR(reported->per_gpu.kv_pool_bytes - deducted->per_gpu.kv_pool_bytes,
              reported->per_gpu.cuda_graph_bytes, 16 * 4096.0);
}

// An EAGLE head (vLLM's llama_eagle.py, EAGLE-1) loads one decoder layer of
// the target's shape and a 2h -> h projection, sharing the embedding and LM
// head: one layer (15,206,400) + projection 2 x 1024 x 1024 + its norms
// 3 x 1024 = 17,306,624 bf16 parameters more than the target alone.
TEST(PlanMemory, EagleHeadAddsOneDecoderLayerAndItsProjection) {
  MemoryPlanInput in = Input(Dense(), Vllm());
  const absl::StatusOr<MemoryPlan> target = PlanMemory(in);
  in.settings.speculative_method = SpeculativeMethod::kEagle;
  const absl::StatusOr<MemoryPlan> eagle = PlanMemory(in);
  ASSERT_TRUE(target.ok() && eagle.ok());
  EXPECT_DOUBLE_EQ(eagle->per_gpu.weights_bytes - target->per_gpu.weights_bytes, 17306624.0 * 2);
  EXPECT_THAT(eagle->notes, ::testing::Contains(HasSubstr("EAGLE head weights")));
}

TEST(PlanMemory, CheckpointsKvDtypeAppliesWhenTheEngineSaysAuto) {
  MemoryPlanInput in = Input(Dense(), Vllm());
  in.quantization.kv_cache_dtype = NumberType::kFp8;
  const absl::StatusOr<MemoryPlan> fp8 = PlanMemory(in);
  ASSERT_TRUE(fp8.ok());
  EXPECT_DOUBLE_EQ(fp8->kv_bytes_per_token, 2048.0);
  EXPECT_THAT(fp8->notes, ::testing::Contains(HasSubstr("quantization config")));
  in.settings.kv_cache_dtype = NumberType::kBf16;  // --kv-cache-dtype still overrides
  const absl::StatusOr<MemoryPlan> bf16 = PlanMemory(in);
  ASSERT_TRUE(bf16.ok());
  EXPECT_DOUBLE_EQ(bf16->kv_bytes_per_token, 4096.0);
}

EngineBehaviour Sglang() {
  EngineBehaviour e;
  e.preset_id = "test-sglang";
  e.engine = EngineKind::kSglang;
  e.budget_rule = BudgetRule::kSglangStatic;
  e.default_memory_fraction = 0.88;
  e.memory_fraction_by_min_tp = {{16, 0.79}, {8, 0.81}, {4, 0.85}, {2, 0.87}};
  e.default_block_size = 1;
  e.default_max_num_batched_tokens = 8192;
  e.default_max_num_seqs = 4096;
  e.running_requests_per_context = 512;
  e.min_running_requests = 2048;
  return e;
}

constexpr double kMiB = 1024.0 * 1024.0;
constexpr double kGiB = 1024.0 * kMiB;

TEST(PlanMemory, SglangDefaultFractionFromTheBatchingReserve) {
  // SGLang 0.5.3+: reserve = 512 + 1.5 × max(chunk, 2048) + 2 × graph bs +
  // tp·pp/8 × 1024 MiB; the MI355X log: (294,896 − 27,136) / 294,896 → 0.908.
  MemoryPlanInput in = Input(Dense(), Sglang());
  in.hardware.memory_bytes = 294896 * kMiB;
  in.settings.memory_fraction = 0.0;
  in.parallelism.tp = 8;
  in.engine.has_batching_reserve = true;
  in.engine.batching_reserve = {512 * kMiB, 1.5 * kMiB, 2048,      2 * kMiB, 128 * kMiB,
                                3 * kMiB,   10 * kGiB,  60 * kGiB, 2 * kGiB, 6 * kGiB};
  in.engine.card_default_tiers = {{160 * kGiB, 8192, 256, 512}, {0.0, 16384, 512, 0}};
  in.arch.num_attention_heads = 16;
  in.arch.num_kv_heads = 8;
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  EXPECT_EQ(plan->max_num_batched_tokens, 16384);
  EXPECT_EQ(plan->cuda_graph_max_bs, 512);
  EXPECT_DOUBLE_EQ(plan->memory_fraction, 0.908);
}

TEST(PlanMemory, SglangDefaultFractionFromTheCardTierOrTheTpLadder) {
  MemoryPlanInput in = Input(Dense(), Sglang());
  in.settings.memory_fraction = 0.0;
  in.engine.memory_reserve_tiers = {{35 * kGiB, 2.8 * kGiB, 0.1 * kGiB, false, 4 * kGiB, 2 * kGiB},
                                    {0.0, 32 * kGiB, 0.0, false, 0.0, 0.0}};
  in.hardware.memory_bytes = 24 * kGiB;
  const absl::StatusOr<MemoryPlan> small = PlanMemory(in);
  ASSERT_TRUE(small.ok()) << small.status();
  // round((24 − 2.9) / 24, 3) = 0.879.
  EXPECT_DOUBLE_EQ(small->memory_fraction, 0.879);
  in.engine.memory_reserve_tiers = {{81921 * kMiB, 0, 0, true, 0, 0},
                                    {0.0, 13 * kGiB, 0, false, 0, 0}};
  in.parallelism.tp = 4;
  in.arch.num_kv_heads = 4;
  const absl::StatusOr<MemoryPlan> ladder = PlanMemory(in);
  ASSERT_TRUE(ladder.ok()) << ladder.status();
  EXPECT_DOUBLE_EQ(ladder->memory_fraction, 0.85);
}

TEST(PlanMemory, SglangSplitsTheSlidingWindowPoolFullToSwa) {
  ModelArchitecture a = Dense();
  a.layers = {{AttentionKind::kFull, MlpKind::kDense},
              {AttentionKind::kSlidingWindow, MlpKind::kDense},
              {AttentionKind::kSlidingWindow, MlpKind::kDense},
              {AttentionKind::kSlidingWindow, MlpKind::kDense}};
  a.sliding_window_tokens = 512;
  MemoryPlanInput in = Input(a, Sglang());
  in.engine.swa_full_tokens_ratio = 0.8;
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->layout.window_pool_tokens.has_value());
  // full = T / (0.8 · 3 + 1) with T = tokens-as-if-full × 4 layers; swa = 0.8 full.
  EXPECT_NEAR(static_cast<double>(*plan->layout.window_pool_tokens),
              0.8 * static_cast<double>(plan->kv_pool_tokens), 2.0);
  EXPECT_EQ(plan->layout.window_tokens, 512);
  // The split keeps the bytes: full tokens on 1 layer + SWA tokens on 3.
  EXPECT_NEAR(plan->per_gpu.kv_pool_bytes,
              (plan->kv_pool_tokens + 3.0 * *plan->layout.window_pool_tokens) * 1024.0, 1024.0 * 4);
}

TEST(PlanMemory, SglangMaxRunningRequestsDefaultFollowsThePool) {
  MemoryPlanInput in = Input(Dense(), Sglang());
  in.settings.memory_fraction = 0.9;
  in.settings.max_model_len = 4096;
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok()) << plan.status();
  // min(max(tokens / 4096 × 512, 2048), 4096).
  const int64_t by_pool = plan->kv_pool_tokens / 4096 * 512;
  EXPECT_EQ(plan->max_num_seqs, std::min<int64_t>(4096, std::max<int64_t>(2048, by_pool)));
}

TEST(PoolBytesForTokens, InvertsThePoolSizing) {
  MemoryPlanInput in = Input(Dense(), Vllm());
  const absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
  ASSERT_TRUE(plan.ok());
  const absl::StatusOr<double> bytes = PoolBytesForTokens(in, plan->kv_pool_tokens);
  ASSERT_TRUE(bytes.ok()) << bytes.status();
  // Paged pool: 16 tokens × 4,096 B per block.
  EXPECT_NEAR(*bytes, static_cast<double>(plan->kv_pool_tokens) * 4096.0, 1.0);
  EXPECT_THAT(PoolBytesForTokens(in, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("kv_pool_tokens")));
}

}  // namespace
}  // namespace capplan::model
namespace capplan::model {
namespace {

// A search plans each candidate on a model prepared once (PreparedMemoryModel)
// and hands that plan on as the deployment's (PrepareDeployment's
// model_plan): it must be the plan PlanMemory gives the same input.
TEST(PreparedMemoryModel, PlansAsPlanMemoryDoes) {
  for (const ModelArchitecture& arch : {Dense(), Moe()}) {
    for (int64_t tp : {1, 2}) {
      for (int64_t seqs : {0, 64}) {
        MemoryPlanInput in = Input(arch, Vllm());
        in.parallelism.tp = tp;
        in.settings.max_num_seqs = seqs;
        const absl::StatusOr<MemoryPlan> direct = PlanMemory(in);
        const absl::StatusOr<PreparedMemoryModel> prepared = PreparedMemoryModel::Create(in);
        ASSERT_TRUE(direct.ok() && prepared.ok()) << direct.status() << prepared.status();
        const absl::StatusOr<MemoryPlan> reused = prepared->Plan(in.parallelism, in.settings);
        ASSERT_TRUE(reused.ok()) << reused.status();
        const std::string where = absl::StrCat("tp ", tp, ", max_num_seqs ", seqs);
        EXPECT_EQ(reused->kv_pool_tokens, direct->kv_pool_tokens) << where;
        EXPECT_EQ(reused->reported_kv_pool_tokens, direct->reported_kv_pool_tokens) << where;
        EXPECT_EQ(reused->fits, direct->fits) << where;
        EXPECT_EQ(reused->binding_constraint, direct->binding_constraint) << where;
        EXPECT_EQ(reused->max_num_seqs, direct->max_num_seqs) << where;
        EXPECT_EQ(reused->max_num_batched_tokens, direct->max_num_batched_tokens) << where;
        for (double GpuAccount::*f :
             {&GpuAccount::weights_bytes, &GpuAccount::activation_peak_bytes,
              &GpuAccount::non_torch_bytes, &GpuAccount::cuda_graph_bytes,
              &GpuAccount::kv_pool_bytes, &GpuAccount::used_bytes}) {
          EXPECT_EQ(reused->per_gpu.*f, direct->per_gpu.*f) << where;
        }
        EXPECT_EQ(reused->notes, direct->notes) << where;
      }
    }
  }
}

}  // namespace
}  // namespace capplan::model
namespace capplan::model {
namespace {

// The native sampler's exact count holds for 128 or more rows; with fewer
// PyTorch sorts by another path, and the plan says the count may be low.
TEST(PlanMemory, AnExactNativeCountSaysWhenTheRowsTakeAnotherSortPath) {
  EngineBehaviour e = Vllm();
  e.native_sampler_fit_group = "native";
  e.native_sampler_logit_copies = 9.5;
  e.native_sampler_logit_copies_exact = true;
  MemoryPlanInput in = Input(Dense(), e);
  in.settings.native_sampler = true;
  in.settings.max_num_seqs = 64;
  const absl::StatusOr<MemoryPlan> few = PlanMemory(in);
  ASSERT_TRUE(few.ok()) << few.status();
  EXPECT_THAT(few->notes, ::testing::Contains(HasSubstr("segmented_sort_pairs_by_full_sort")));
  in.settings.max_num_seqs = 128;
  const absl::StatusOr<MemoryPlan> many = PlanMemory(in);
  ASSERT_TRUE(many.ok()) << many.status();
  EXPECT_THAT(many->notes,
              ::testing::Not(::testing::Contains(HasSubstr("segmented_sort_pairs_by_full_sort"))));
  EXPECT_THAT(many->notes, ::testing::Contains(HasSubstr("9.50 fp32 copies")));
}

}  // namespace
}  // namespace capplan::model
