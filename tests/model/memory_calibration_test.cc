#include "model/memory_calibration.h"

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::model {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

FitColumn Unpulled(const std::string& name) {
  FitColumn c;
  c.name = name;
  return c;
}

// A 4-layer dense model on a 4 GiB card, max_model_len 4096.
MemoryPlanInput SmallDenseOn4GiB(const EngineBehaviour& e) {
  MemoryPlanInput in;
  in.arch.hidden_size = 1024;
  in.arch.intermediate_size = 4096;
  in.arch.num_attention_heads = 16;
  in.arch.num_kv_heads = 4;
  in.arch.head_dim = 64;
  in.arch.vocab_size = 32000;
  in.arch.layers.assign(4, LayerSpec{AttentionKind::kFull, MlpKind::kDense});
  in.arch.native_context_tokens = 8192;
  in.engine = e;
  in.hardware.name = "test card";
  in.hardware.memory_bytes = 4 * kGiB;
  in.settings.max_model_len = 4096;
  return in;
}

// y = base + per_rank · ranks on exact rows.
std::vector<FitRow> LinearRows(double base, double per_rank) {
  std::vector<FitRow> rows;
  for (int ranks = 0; ranks < 8; ++ranks) {
    FitRow r;
    r.terms = {{0, 1.0}, {1, static_cast<double>(ranks)}};
    r.y_bytes = base + per_rank * ranks;
    rows.push_back(r);
  }
  return rows;
}

TEST(FitNonNegative, RecoversExactCoefficients) {
  const std::vector<FitColumn> columns = {Unpulled("base"), Unpulled("per rank")};
  absl::StatusOr<LinearFit> fit = FitNonNegative(LinearRows(0.8 * kGiB, 0.15 * kGiB), columns);
  ASSERT_TRUE(fit.ok()) << fit.status();
  ASSERT_EQ(fit->theta.size(), 2u);
  EXPECT_NEAR(fit->theta[0], 0.8 * kGiB, 1e-6 * kGiB);
  EXPECT_NEAR(fit->theta[1], 0.15 * kGiB, 1e-6 * kGiB);
  EXPECT_LT(fit->rms_residual_bytes, 1e-6 * kGiB);
  EXPECT_EQ(fit->rank, 2);
}

TEST(FitNonNegative, PinsANegativeCoefficientAtZero) {
  // The data fall with the rank count: the per-rank term would be negative.
  const std::vector<FitColumn> columns = {Unpulled("base"), Unpulled("per rank")};
  absl::StatusOr<LinearFit> fit = FitNonNegative(LinearRows(2.0 * kGiB, -0.1 * kGiB), columns);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_GE(fit->theta[1], 0.0);
  EXPECT_LE(fit->theta[1], 1e-9 * kGiB);
  EXPECT_GT(fit->theta[0], 0.0);
}

// A coefficient with a physical floor (a sampler holds its logits at least
// once) stays on it where the data would take it lower, and the other
// coefficients refit around it; a floor the data clear changes nothing.
TEST(FitNonNegative, PinsACoefficientBelowItsFloorAtTheFloor) {
  std::vector<FitColumn> columns = {Unpulled("base"), Unpulled("per rank")};
  columns[1].floor = 0.3 * kGiB;
  absl::StatusOr<LinearFit> fit = FitNonNegative(LinearRows(2.0 * kGiB, 0.1 * kGiB), columns);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_DOUBLE_EQ(fit->theta[1], 0.3 * kGiB);
  // The base absorbs what the pinned term overstates: below the unpinned 2 GiB.
  EXPECT_LT(fit->theta[0], 2.0 * kGiB);
  EXPECT_GT(fit->theta[0], 0.0);
  columns[1].floor = 0.05 * kGiB;
  fit = FitNonNegative(LinearRows(2.0 * kGiB, 0.1 * kGiB), columns);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->theta[1], 0.1 * kGiB, 1e-6 * kGiB);
  EXPECT_NEAR(fit->theta[0], 2.0 * kGiB, 1e-6 * kGiB);
}

TEST(FitNonNegative, RefusesANegativeOrNonFiniteFloor) {
  std::vector<FitColumn> columns = {Unpulled("base"), Unpulled("per rank")};
  columns[1].floor = -1.0;
  EXPECT_THAT(FitNonNegative(LinearRows(2.0 * kGiB, 0.1 * kGiB), columns),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'per rank' has floor -1")));
  columns[1].floor = std::nan("");
  EXPECT_THAT(FitNonNegative(LinearRows(2.0 * kGiB, 0.1 * kGiB), columns),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be finite and >= 0")));
}

// Two coupled columns leave their bounds in one solve: A above its ceiling,
// B below its floor. With A at its ceiling, B's best value is inside its
// bounds, so B's pin is released (an active-set fit that never released a
// pin stopped at B = 0, away from the constrained optimum).
TEST(FitNonNegative, ReleasesAPinTheOtherBoundMadeNeedless) {
  std::vector<FitColumn> columns = {Unpulled("a"), Unpulled("b")};
  columns[0].ceiling = 1.0 * kGiB;
  FitRow both;  // a + b = 1.5 GiB
  both.terms = {{0, 1.0}, {1, 1.0}};
  both.y_bytes = 1.5 * kGiB;
  FitRow only_a;  // a = 2 GiB: alone, a = 2 and b = -0.5
  only_a.terms = {{0, 1.0}};
  only_a.y_bytes = 2.0 * kGiB;
  absl::StatusOr<LinearFit> fit = FitNonNegative({both, only_a}, columns);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_DOUBLE_EQ(fit->theta[0], 1.0 * kGiB);
  EXPECT_NEAR(fit->theta[1], 0.5 * kGiB, 1e-6 * kGiB);
}

// The mirror case: A below its floor, B above its ceiling in one solve. With
// A on its floor, B's best value is inside, so B leaves its ceiling.
TEST(FitNonNegative, ReleasesACeilingPinTheOtherBoundMadeNeedless) {
  std::vector<FitColumn> columns = {Unpulled("a"), Unpulled("b")};
  columns[0].floor = 1.0 * kGiB;
  columns[1].ceiling = 1.2 * kGiB;
  FitRow both;  // a + b = 1.5 GiB
  both.terms = {{0, 1.0}, {1, 1.0}};
  both.y_bytes = 1.5 * kGiB;
  FitRow only_a;  // a = 0: alone, a = 0 and b = 1.5
  only_a.terms = {{0, 1.0}};
  only_a.y_bytes = 0.0;
  absl::StatusOr<LinearFit> fit = FitNonNegative({both, only_a}, columns);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_DOUBLE_EQ(fit->theta[0], 1.0 * kGiB);
  EXPECT_NEAR(fit->theta[1], 0.5 * kGiB, 1e-6 * kGiB);
}

// A prior above the column's ceiling (no row moves the column) ends on the
// ceiling, not on the prior.
TEST(FitNonNegative, APriorAboveTheCeilingEndsOnTheCeiling) {
  std::vector<FitColumn> columns = {Unpulled("pulled"), Unpulled("free")};
  columns[0].prior = 5.0;
  columns[0].prior_weight_bytes = 1.0 * kGiB;
  columns[0].ceiling = 2.0;
  FitRow r;
  r.terms = {{1, 1.0}};
  r.y_bytes = 0.3 * kGiB;
  absl::StatusOr<LinearFit> fit = FitNonNegative({r}, columns);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_DOUBLE_EQ(fit->theta[0], 2.0);
  EXPECT_NEAR(fit->theta[1], 0.3 * kGiB, 1e-6 * kGiB);
}

// A coefficient with a physical ceiling (no sampler holds more copies than
// its code counts) stays on it where the data would take it higher, and the
// others refit around it; a ceiling the data stay under changes nothing; a
// ceiling below the floor, negative or not finite is refused.
TEST(FitNonNegative, PinsACoefficientAboveItsCeilingAtTheCeiling) {
  std::vector<FitColumn> columns = {Unpulled("base"), Unpulled("per rank")};
  columns[1].ceiling = 0.1 * kGiB;
  absl::StatusOr<LinearFit> fit = FitNonNegative(LinearRows(0.5 * kGiB, 0.3 * kGiB), columns);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_DOUBLE_EQ(fit->theta[1], 0.1 * kGiB);
  EXPECT_GT(fit->theta[0], 0.5 * kGiB);  // the base takes what the capped term cannot
  columns[1].ceiling = 1.0 * kGiB;
  fit = FitNonNegative(LinearRows(0.5 * kGiB, 0.3 * kGiB), columns);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->theta[1], 0.3 * kGiB, 1e-6 * kGiB);
  columns[1].floor = 0.2 * kGiB;
  columns[1].ceiling = 0.1 * kGiB;
  EXPECT_THAT(FitNonNegative(LinearRows(0.5 * kGiB, 0.3 * kGiB), columns),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("'per rank' has ceiling")));
  columns[1].floor = 0.0;
  columns[1].ceiling = std::nan("");
  EXPECT_THAT(FitNonNegative(LinearRows(0.5 * kGiB, 0.3 * kGiB), columns),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("a ceiling must be 0")));
}

TEST(FitNonNegative, OneUnexplainedLogDoesNotMoveTheFit) {
  const std::vector<FitColumn> columns = {Unpulled("base"), Unpulled("per rank")};
  std::vector<FitRow> rows = LinearRows(0.5 * kGiB, 0.2 * kGiB);
  FitRow far = rows[3];
  far.y_bytes += 21.0 * kGiB;  // a profile run nothing in the model explains
  rows.push_back(far);
  absl::StatusOr<LinearFit> fit = FitNonNegative(rows, columns);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->theta[0], 0.5 * kGiB, 0.01 * kGiB);
  EXPECT_NEAR(fit->theta[1], 0.2 * kGiB, 0.01 * kGiB);
}

TEST(FitNonNegative, ResolvesWhichSideOfTheMaxEachRowIsOn) {
  // y = max(2 · token, 5 · sampler): small-sampler rows fit the token
  // coefficient, large-sampler rows the sampler coefficient.
  // Which side a row is on is iterated from the priors (as the presets'
  // columns have them: scale 1, 2 copies), with a negligible pull.
  std::vector<FitColumn> columns = {Unpulled("token"), Unpulled("sampler")};
  columns[0].prior = 1.0;
  columns[1].prior = 2.0;
  columns[0].prior_weight_bytes = columns[1].prior_weight_bytes = 1.0;
  std::vector<FitRow> rows;
  for (int i = 1; i <= 6; ++i) {
    FitRow r;
    r.token_column = 0;
    r.sampler_column = 1;
    r.token_term = 1e8 * i;
    r.sampler_term = i <= 3 ? 1e6 : 1e8 * i;
    r.y_bytes = std::max(2.0 * r.token_term, 5.0 * r.sampler_term);
    rows.push_back(r);
  }
  absl::StatusOr<LinearFit> fit = FitNonNegative(rows, columns);
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->theta[0], 2.0, 1e-3);
  EXPECT_NEAR(fit->theta[1], 5.0, 1e-3);
}

TEST(FitNonNegative, RejectsABadSystem) {
  const std::vector<FitColumn> columns = {Unpulled("base")};
  EXPECT_THAT(FitNonNegative({}, columns),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("FitNonNegative: no rows")));
  FitRow outside;
  outside.terms = {{1, 1.0}};
  outside.y_bytes = 1.0;
  EXPECT_THAT(FitNonNegative({outside}, columns),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("FitNonNegative: row 0 has a bad term for column 1")));
  FitRow max_outside;
  max_outside.token_column = 2;
  max_outside.y_bytes = 1.0;
  EXPECT_THAT(FitNonNegative({max_outside}, columns),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("FitNonNegative: row 0 names a column outside [0, 1)")));
  FitRow not_finite;
  not_finite.terms = {{0, 1.0}};
  not_finite.y_bytes = std::nan("");
  EXPECT_THAT(FitNonNegative({not_finite}, columns),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("row 0 is not finite")));
}

TEST(CalibrateEnginePresets, RejectsALogOfAnUnknownPreset) {
  StartupLog log;
  log.id = "log-a";
  log.preset_id = "vllm-v9";
  std::map<std::string, EngineBehaviour> presets = {{"vllm-v1", EngineBehaviour{}}};
  EXPECT_THAT(CalibrateEnginePresets({log}, presets),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("log log-a names preset vllm-v9, which is not given")));
}

// A family no log speaks for takes the priors, not the values it came with:
// the activation width formula as it stands (scale 1) and a fused sampler's
// fp32 logits and probabilities (2 copies).
TEST(CalibrateEnginePresets, AFamilyWithoutLogsTakesThePriors) {
  EngineBehaviour e;
  e.engine = EngineKind::kVllm;
  e.activation_token_scale = 1.25;
  e.sampler_logit_copies = 7.0;
  absl::StatusOr<CalibrationFit> fit = CalibrateEnginePresets({}, {{"vllm-v1", e}});
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_DOUBLE_EQ(fit->presets.at("vllm-v1").activation_token_scale, 1.0);
  EXPECT_DOUBLE_EQ(fit->presets.at("vllm-v1").sampler_logit_copies, 2.0);
}

// A native-sampler group no log speaks for takes its counted prior, apart
// from the default group's.
TEST(CalibrateEnginePresets, ANativeSamplerGroupWithoutLogsTakesItsCountedPrior) {
  EngineBehaviour e;
  e.engine = EngineKind::kVllm;
  e.native_sampler_fit_group = "vllm-v1-native";
  e.native_sampler_logit_copies_prior = 7.0;
  e.native_sampler_logit_copies = 3.0;
  absl::StatusOr<CalibrationFit> fit = CalibrateEnginePresets({}, {{"vllm-v1", e}});
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_DOUBLE_EQ(fit->presets.at("vllm-v1").native_sampler_logit_copies, 7.0);
  EXPECT_DOUBLE_EQ(fit->presets.at("vllm-v1").sampler_logit_copies, 2.0);
}

// A native count marked exact is held at its prior whatever the logs say; not
// marked, the same logs move it towards what they show.
TEST(CalibrateEnginePresets, AnExactNativeSamplerCountIsNotMovedByTheLogs) {
  EngineBehaviour truth;
  truth.engine = EngineKind::kVllm;
  truth.native_sampler_fit_group = "vllm-v1-native";
  truth.native_sampler_logit_copies = 5.0;  // what the logs are made with
  std::vector<StartupLog> logs;
  for (int64_t seqs : {128, 256, 512}) {
    MemoryPlanInput in = SmallDenseOn4GiB(truth);
    in.arch.vocab_size = 152000;  // one copy: seqs x 0.58 MiB, the peak
    in.settings.native_sampler = true;
    in.settings.max_num_seqs = seqs;
    in.settings.memory_fraction = 0.9;
    absl::StatusOr<MemoryPlan> plan = PlanMemory(in);
    ASSERT_TRUE(plan.ok()) << plan.status();
    StartupLog log;
    log.id = absl::StrCat("native-", seqs);
    log.preset_id = "vllm-v1";
    log.input = in;
    log.kv_pool_tokens = plan->kv_pool_tokens;
    logs.push_back(log);
  }
  EngineBehaviour e = truth;
  e.native_sampler_logit_copies_prior = 9.0;
  absl::StatusOr<CalibrationFit> fitted = CalibrateEnginePresets(logs, {{"vllm-v1", e}});
  ASSERT_TRUE(fitted.ok()) << fitted.status();
  EXPECT_LT(fitted->presets.at("vllm-v1").native_sampler_logit_copies, 8.0);
  e.native_sampler_logit_copies_exact = true;
  absl::StatusOr<CalibrationFit> held = CalibrateEnginePresets(logs, {{"vllm-v1", e}});
  ASSERT_TRUE(held.ok()) << held.status();
  EXPECT_DOUBLE_EQ(held->presets.at("vllm-v1").native_sampler_logit_copies, 9.0);
}

// An SGLang log whose budget came from the memory it says was free at start
// tells nothing of the engine's own context: it adds no row to the base.
// A log stating the free memory at start fits the non-torch base from it.
TEST(CalibrateEnginePresets, SglangLogWithStatedFreeMemoryFitsTheBaseFromIt) {
  EngineBehaviour e;
  e.engine = EngineKind::kSglang;
  e.budget_rule = BudgetRule::kSglangStatic;
  e.default_block_size = 1;
  e.non_torch_base_bytes = 0.5 * kGiB;  // the truth the first log is made with
  MemoryPlanInput in = SmallDenseOn4GiB(e);
  in.settings.memory_fraction = 0.8;
  auto log_of = [](const std::string& id, const MemoryPlanInput& input) {
    StartupLog log;
    log.id = id;
    log.preset_id = "sglang";
    log.input = input;
    absl::StatusOr<MemoryPlan> plan = PlanMemory(input);
    EXPECT_TRUE(plan.ok()) << plan.status();
    log.kv_pool_tokens = plan.ok() ? plan->kv_pool_tokens : 0;
    return log;
  };
  const StartupLog plain = log_of("plain", in);
  // Its pool says nothing of the context (the budget is the stated free
  // memory's fraction); the free memory does: 4 - 3.5 = 0.5 GiB, which
  // agrees with the plain log's truth: a second row there, so the fit comes
  // nearer 0.5 GiB than on the plain log alone (the prior of 0.25 pulls).
  absl::StatusOr<CalibrationFit> alone = CalibrateEnginePresets({plain}, {{"sglang", e}});
  ASSERT_TRUE(alone.ok()) << alone.status();
  in.settings.free_memory_at_start_bytes = 3.5 * kGiB;
  const StartupLog agrees = log_of("agrees", in);
  absl::StatusOr<CalibrationFit> fit = CalibrateEnginePresets({plain, agrees}, {{"sglang", e}});
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_NEAR(fit->presets.at("sglang").non_torch_base_bytes, 0.5 * kGiB, 0.05 * kGiB);
  EXPECT_GT(fit->presets.at("sglang").non_torch_base_bytes,
            alone->presets.at("sglang").non_torch_base_bytes);
  EXPECT_THAT(fit->report, ::testing::Contains(HasSubstr("sglang: 2 logs")));
  // 3 GiB free at start says the context took 1 GiB: the base rises above
  // a fit on the plain log alone, and the pool of that log does not enter.
  in.settings.free_memory_at_start_bytes = 3 * kGiB;
  const StartupLog more = log_of("more", in);
  ASSERT_LT(more.kv_pool_tokens, plain.kv_pool_tokens);
  fit = CalibrateEnginePresets({plain, more}, {{"sglang", e}});
  ASSERT_TRUE(fit.ok()) << fit.status();
  EXPECT_GT(fit->presets.at("sglang").non_torch_base_bytes,
            alone->presets.at("sglang").non_torch_base_bytes + 0.1 * kGiB);
  EXPECT_LT(fit->presets.at("sglang").non_torch_base_bytes, 1.0 * kGiB);
}

// Where the pool comes out of the device's free memory, a log that states
// the free memory at start has what others held taken off its observed
// overhead: the engine's own terms are fitted, not the others'.
TEST(ObservedOverheadBytes, OthersLeaveTheOverheadOfAPoolLoweredByThem) {
  EngineBehaviour e;
  e.engine = EngineKind::kTrtllm;
  e.budget_rule = BudgetRule::kTrtllmFreeFraction;
  e.default_block_size = 1;
  e.non_torch_base_bytes = 0.5 * kGiB;
  e.pool_lowered_by_other_processes = true;
  MemoryPlanInput in = SmallDenseOn4GiB(e);
  in.settings.memory_fraction = 0.9;
  // The engine's pool comes from `engine`; the fit reads it as `read`.
  auto overhead = [](const MemoryPlanInput& engine, const MemoryPlanInput& read) {
    StartupLog log;
    log.id = "trt";
    log.preset_id = "trtllm";
    log.input = read;
    absl::StatusOr<MemoryPlan> plan = PlanMemory(engine);
    EXPECT_TRUE(plan.ok()) << plan.status();
    log.kv_pool_tokens = plan.ok() ? plan->kv_pool_tokens : 0;
    absl::StatusOr<double> o = ObservedOverheadBytes(log);
    EXPECT_TRUE(o.ok()) << o.status();
    return o.ok() ? *o : 0.0;
  };
  const double clean = overhead(in, in);
  in.settings.free_memory_at_start_bytes = 3 * kGiB;  // 1 GiB held by others
  // The pool lost 0.9 GiB to them; the overhead the fit sees is unchanged.
  EXPECT_NEAR(overhead(in, in), clean, 0.001 * kGiB);
  // Read without the rule, that pool would be 1 GiB more overhead.
  MemoryPlanInput unaware = in;
  unaware.engine.pool_lowered_by_other_processes = false;
  EXPECT_NEAR(overhead(in, unaware) - clean, 1.0 * kGiB, 0.01 * kGiB);
}

}  // namespace
}  // namespace capplan::model
