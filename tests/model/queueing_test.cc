#include "model/queueing.h"

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "Eigen/Dense"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/memory_model.h"
#include "tests/model/perf_scenarios.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::model {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

using testing::DenseInputs;
using testing::MoeInputs;
using testing::TypicalCoefficients;

PerformanceModel Model(const StepTimeInputs& in) {
  PerformanceModel m;
  m.inputs = in;
  m.coefficients = TypicalCoefficients();
  m.scheduler.max_batched_tokens = 4096;
  return m;
}

Workload MakeWorkload(double in, double out, double cv = 0) {
  Workload w;
  w.input_tokens = in;
  w.output_tokens = out;
  w.output_tokens_cv = cv;
  return w;
}

LoadDependentServer Server(const StepTimeInputs& in, const Workload& w, int slots) {
  absl::StatusOr<LoadDependentServer> s =
      LoadDependentServer::Create(Model(in), w, Slots{slots, SlotBound::kRunningRequestLimit});
  EXPECT_TRUE(s.ok()) << s.status();
  return *s;
}

// An overlap scheduler (SchedulerConfig.batches_launched_ahead = 1): a
// request taken in while others are served waits one more decode step of
// theirs before its prefill. It holds no slot then, so the server's peak
// rate is the same; in a closed loop the wait lengthens every user's cycle,
// so the loop's throughput falls by it.
TEST(LaunchedAhead, AddsOneDecodeStepToTtftAndToAClosedLoopsCycle) {
  const Workload w = MakeWorkload(1024, 256);
  PerformanceModel overlap = Model(MoeInputs());
  overlap.scheduler.batches_launched_ahead = 1;
  const Slots slots{16, SlotBound::kRunningRequestLimit};
  absl::StatusOr<LoadDependentServer> plain =
      LoadDependentServer::Create(Model(MoeInputs()), w, slots);
  absl::StatusOr<LoadDependentServer> ahead = LoadDependentServer::Create(overlap, w, slots);
  ASSERT_TRUE(plain.ok() && ahead.ok());
  EXPECT_DOUBLE_EQ(ahead->SaturationRate(), plain->SaturationRate());
  EXPECT_EQ(ahead->LaunchedAheadSeconds(1), 0.0);  // an idle server runs it next
  EXPECT_DOUBLE_EQ(ahead->LaunchedAheadSeconds(8), ahead->Phase(7).decode_step_seconds);
  EXPECT_EQ(plain->LaunchedAheadSeconds(8), 0.0);
  // A closed loop of 8 users without think time: every arrival finds 7
  // others in service, so TTFT grows by one decode step of 7.
  absl::StatusOr<std::vector<LoadPoint>> a = ClosedLoopCurve(*plain, {8}, 0.0);
  absl::StatusOr<std::vector<LoadPoint>> b = ClosedLoopCurve(*ahead, {8}, 0.0);
  ASSERT_TRUE(a.ok() && b.ok());
  const double step = ahead->Phase(7).decode_step_seconds;
  EXPECT_NEAR(8 / (*b)[0].requests_per_second, 8 / (*a)[0].requests_per_second + step, 1e-12);
  // (to 0.1% of the step: the lower throughput also thins the others'
  // prefills that a request queues behind)
  EXPECT_NEAR((*b)[0].ttft->mean_seconds - (*a)[0].ttft->mean_seconds,
              ahead->Phase(7).decode_step_seconds, 1e-3 * ahead->Phase(7).decode_step_seconds);
  EXPECT_NEAR((*b)[0].ttft->p50_seconds - (*a)[0].ttft->p50_seconds,
              ahead->Phase(7).decode_step_seconds, 2e-3 * (*b)[0].ttft->p50_seconds);
  // More batches ahead than any engine queues is refused.
  overlap.scheduler.batches_launched_ahead = kMaxBatchesLaunchedAhead + 1;
  EXPECT_FALSE(LoadDependentServer::Create(overlap, w, slots).ok());
}

// A synchronized closed loop (a fixed-length benchmark): on a waves-every-round
// engine every round comes back as a wave; on one that serves decodes first
// only the first round's users ÷ num_prompts of the requests do, so the
// TTFT law lies between the wave's and the apart users' and falls towards the
// latter as the benchmark sends more prompts per user.
TEST(SynchronizedClosedLoop, OnlyTheFirstWaveQueuesOnAnEngineThatServesDecodesFirst) {
  Workload w = MakeWorkload(1024, 256);
  w.synchronized = true;
  EXPECT_EQ(SynchronizedWaveShare(w, true, 16), 1.0);
  w.num_prompts = 160;
  EXPECT_DOUBLE_EQ(SynchronizedWaveShare(w, false, 16), 0.1);
  w.num_prompts = 8;
  EXPECT_EQ(SynchronizedWaveShare(w, false, 16), 1.0);  // fewer prompts than users: one wave
  Workload apart = MakeWorkload(1024, 256);
  EXPECT_EQ(SynchronizedWaveShare(apart, true, 16), 0.0);

  const Slots slots{32, SlotBound::kRunningRequestLimit};
  auto ttft = [&](bool waves_every_round, bool synchronized, int64_t prompts) {
    PerformanceModel m = Model(MoeInputs());
    m.scheduler.waves_every_round = waves_every_round;
    Workload wl = MakeWorkload(1024, 256);
    wl.synchronized = synchronized;
    wl.num_prompts = prompts;
    absl::StatusOr<LoadDependentServer> s = LoadDependentServer::Create(m, wl, slots);
    EXPECT_TRUE(s.ok()) << s.status();
    absl::StatusOr<std::vector<LoadPoint>> c = ClosedLoopCurve(*s, {16}, 0.0);
    EXPECT_TRUE(c.ok()) << c.status();
    return *(*c)[0].ttft;
  };
  const LatencyPercentiles waves = ttft(true, true, 160);
  const LatencyPercentiles one_round = ttft(false, true, 16);
  const LatencyPercentiles ten_rounds = ttft(false, true, 160);
  const LatencyPercentiles many_rounds = ttft(false, true, 100000);
  const LatencyPercentiles not_synchronized = ttft(false, false, 160);
  // One round of prompts is one wave, on either engine.
  EXPECT_NEAR(one_round.p95_seconds, waves.p95_seconds, 1e-3 * waves.p95_seconds);
  EXPECT_NEAR(one_round.mean_seconds, waves.mean_seconds, 1e-3 * waves.mean_seconds);
  // More rounds: the mean falls towards the apart users'.
  EXPECT_LT(ten_rounds.mean_seconds, 0.5 * waves.mean_seconds);
  EXPECT_GT(ten_rounds.mean_seconds, not_synchronized.mean_seconds);
  EXPECT_LT(many_rounds.mean_seconds, ten_rounds.mean_seconds);
  EXPECT_NEAR(many_rounds.mean_seconds, not_synchronized.mean_seconds,
              0.02 * not_synchronized.mean_seconds);
  // A tenth of the requests in the first wave: the p95 lies in the wave.
  EXPECT_GT(ten_rounds.p95_seconds, not_synchronized.p95_seconds);
  EXPECT_LT(ten_rounds.p50_seconds, 0.5 * waves.p50_seconds);
}

// ------------------------------------------------------------------ slots

struct SlotCase {
  std::string name;
  SlotLimits limits;
  int slots;
  SlotBound bound;
};

class ComputeSlotsCases : public ::testing::TestWithParam<SlotCase> {};

TEST_P(ComputeSlotsCases, PicksTheSmallestLimit) {
  absl::StatusOr<Slots> s = ComputeSlots(GetParam().limits, MakeWorkload(1000, 200));
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->slots, GetParam().slots);
  EXPECT_EQ(s->bound, GetParam().bound);
}

SlotLimits Limits(std::optional<int> running, std::optional<int> gate, std::optional<double> kv,
                  std::optional<int> state) {
  SlotLimits l;
  l.max_running_requests = running;
  l.operator_concurrency_gate = gate;
  l.kv_pool_tokens = kv;
  l.state_slots = state;
  return l;
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ComputeSlotsCases,
    ::testing::Values(
        SlotCase{"Running", Limits(16, std::nullopt, 1e6, std::nullopt), 16,
                 SlotBound::kRunningRequestLimit},
        SlotCase{"Gate", Limits(256, 8, 1e6, std::nullopt), 8, SlotBound::kOperatorGate},
        // 10,000 tokens ÷ 1,200 per request = 8.33 → 8.
        SlotCase{"KvPool", Limits(256, std::nullopt, 10000, std::nullopt), 8, SlotBound::kKvPool},
        SlotCase{"StateSlots", Limits(256, std::nullopt, 1e6, 5), 5, SlotBound::kStateSlots}),
    [](const ::testing::TestParamInfo<SlotCase>& i) { return i.param.name; });

TEST(ComputeSlots, KvPoolUsesLengthBiasedTokensWhenOutputsVary) {
  // 1000 + 200·(1 + 0.5²) = 1250 tokens per request in service.
  absl::StatusOr<Slots> s = ComputeSlots(Limits(std::nullopt, std::nullopt, 10000, std::nullopt),
                                         MakeWorkload(1000, 200, 0.5));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->slots, 8);
  s = ComputeSlots(Limits(std::nullopt, std::nullopt, 9999, std::nullopt),
                   MakeWorkload(1000, 200, 0.5));
  EXPECT_EQ(s->slots, 7);
}

TEST(PagedKvTokens, WholeBlocksInEveryGroupByHand) {
  // 1 attention group and 3 recurrent-state groups of 784-token blocks: a
  // request of 1,200 tokens takes 2 attention blocks and 3 state blocks,
  // 5 x 784 / 4 groups = 980 pool tokens; one of 100 tokens 4 x 784 / 4.
  const KvPages pages{784, 1, 0, 0, 3, 4};
  EXPECT_DOUBLE_EQ(PagedKvTokens(pages, 1200), 980.0);
  EXPECT_DOUBLE_EQ(PagedKvTokens(pages, 100), 784.0);
  // A sliding-window group keeps at most its window's blocks.
  const KvPages window{16, 1, 1, 4, 0, 2};
  EXPECT_DOUBLE_EQ(PagedKvTokens(window, 160), (10 + 4) * 16 / 2.0);
}

// The load model's slots on a paged pool are the memory model's concurrency
// for a request of the same tokens (MaxConcurrencyAt, vLLM's "Maximum
// concurrency for N tokens per request"), not pool tokens / request tokens.
TEST(ComputeSlots, PagedPoolCountsAsTheMemoryModelsConcurrency) {
  KvLayout layout;
  layout.blocks = 400;
  layout.block_size = 784;
  layout.full_groups = 1;
  layout.state_groups = 3;
  layout.groups = 4;
  SlotLimits limits;
  limits.kv_pool_tokens = layout.blocks / layout.groups * layout.block_size;  // 78,400
  limits.kv_pages =
      KvPages{layout.block_size, layout.full_groups, 0, 0, layout.state_groups, layout.groups};
  for (const auto& [in, out] :
       std::vector<std::pair<double, double>>{{60, 40}, {1000, 200}, {3000, 1000}, {15000, 1000}}) {
    absl::StatusOr<Slots> s = ComputeSlots(limits, MakeWorkload(in, out));
    ASSERT_TRUE(s.ok()) << s.status();
    const double memory = MaxConcurrencyAt(layout, static_cast<int64_t>(in + out));
    EXPECT_EQ(s->slots, static_cast<int>(std::floor(memory))) << in << " + " << out;
    EXPECT_EQ(s->bound, SlotBound::kKvPool);
  }
  // Short requests: 100 a block in each group (400 / 4), where the token
  // count alone would give 784.
  absl::StatusOr<Slots> s = ComputeSlots(limits, MakeWorkload(60, 40));
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->slots, 100);
}

TEST(ComputeSlots, KvPoolBelowOneRequestIsFailedPrecondition) {
  absl::StatusOr<Slots> s =
      ComputeSlots(Limits(8, std::nullopt, 500, std::nullopt), MakeWorkload(1000, 200));
  // One request needs 1000 + 200 = 1200 tokens; 500 cannot hold it.
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kFailedPrecondition,
                          HasSubstr("SlotLimits.kv_pool_tokens = 500; cannot hold one request "
                                    "of 1200 tokens")));
}

TEST(ComputeSlots, RejectsNoLimitAndBadValues) {
  EXPECT_THAT(
      ComputeSlots(SlotLimits{}, MakeWorkload(10, 10)),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("SlotLimits: every limit is absent")));
  EXPECT_THAT(
      ComputeSlots(Limits(0, std::nullopt, std::nullopt, std::nullopt), MakeWorkload(10, 10)),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("SlotLimits.max_running_requests = 0; must be >= 1")));
}

// --------------------------------------------------------------- closed loop

// Stationary law of the closed network (N users, exponential think time Z,
// station with rates μ(min(k, S))) by solving the CTMC's balance equations.
Eigen::VectorXd BruteForceClosed(const LoadDependentServer& s, int n, double z) {
  Eigen::MatrixXd q = Eigen::MatrixXd::Zero(n + 1, n + 1);
  for (int k = 0; k <= n; ++k) {
    if (k < n) q(k, k + 1) = (n - k) / z;
    if (k > 0) q(k, k - 1) = s.CompletionRate(k);
    q(k, k) = -q.row(k).sum();
  }
  Eigen::MatrixXd a = q.transpose();
  a.row(n).setOnes();
  Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n + 1);
  rhs(n) = 1;
  return a.colPivHouseholderQr().solve(rhs);
}

TEST(ClosedLoop, MvaMatchesBruteForceMarkovChain) {
  const LoadDependentServer s = Server(MoeInputs(), MakeWorkload(1500, 300, 0.3), 6);
  const double z = 2.0;
  const std::vector<int> ns = {1, 2, 3, 5, 6, 7, 9, 12, 20};
  absl::StatusOr<std::vector<LoadPoint>> curve = ClosedLoopCurve(s, ns, z);
  ASSERT_TRUE(curve.ok()) << curve.status();
  for (size_t i = 0; i < ns.size(); ++i) {
    const Eigen::VectorXd pi = BruteForceClosed(s, ns[i], z);
    double x = 0, busy = 0, queue = 0;
    for (int k = 1; k <= ns[i]; ++k) {
      x += pi(k) * s.CompletionRate(k);
      busy += pi(k) * std::min(k, 6);
      queue += pi(k) * std::max(0, k - 6);
    }
    const LoadPoint& p = (*curve)[i];
    EXPECT_NEAR(p.requests_per_second, x, 1e-9 * x) << ns[i];
    EXPECT_NEAR(p.mean_batch_size, busy, 1e-9 * (1 + busy)) << ns[i];
    EXPECT_NEAR(*p.mean_queue_length, queue, 1e-9 * (1 + queue)) << ns[i];
  }
}

TEST(ClosedLoop, SingleUserThroughputIsOneOverThinkPlusLife) {
  const LoadDependentServer s = Server(DenseInputs(), MakeWorkload(800, 100), 4);
  absl::StatusOr<std::vector<LoadPoint>> c = ClosedLoopCurve(s, {1}, 0.7);
  ASSERT_TRUE(c.ok());
  EXPECT_NEAR(c->front().requests_per_second, 1.0 / (0.7 + s.Phase(1).life_seconds), 1e-12);
  EXPECT_NEAR(c->front().ttft->mean_seconds, s.Phase(1).prefill_seconds, 1e-9);
  EXPECT_EQ(c->front().slot_wait_probability, 0.0);
}

TEST(ClosedLoop, ThroughputRisesAndSaturatesAtMuOfS) {
  const LoadDependentServer s = Server(MoeInputs(), MakeWorkload(1000, 400), 8);
  std::vector<int> ns;
  for (int n = 1; n <= 64; ++n) ns.push_back(n);
  absl::StatusOr<std::vector<LoadPoint>> c = ClosedLoopCurve(s, ns, 0.0);
  ASSERT_TRUE(c.ok());
  for (size_t i = 1; i < c->size(); ++i) {
    EXPECT_GE((*c)[i].requests_per_second, (*c)[i - 1].requests_per_second * (1 - 1e-12));
    EXPECT_LE((*c)[i].requests_per_second, s.SaturationRate() * (1 + 1e-12));
  }
  EXPECT_NEAR(c->back().requests_per_second, s.SaturationRate(), 1e-9);
  // Without think time, N <= S never waits and N > S always does.
  EXPECT_EQ((*c)[7].slot_wait_probability, 0.0);
  EXPECT_NEAR((*c)[8].slot_wait_probability, 1.0, 1e-12);
}

TEST(ClosedLoop, KneeAboveSlotLimitWithTtftJump) {
  // Synthetic MoE gated at 8 slots, long answers: the shape of a benchmark
  // sweep past an operator gate.
  const LoadDependentServer s = Server(MoeInputs(), MakeWorkload(1024, 512), 8);
  const std::vector<int> ns = {1, 2, 4, 6, 8, 16, 32};
  absl::StatusOr<std::vector<LoadPoint>> c = ClosedLoopCurve(s, ns, 0.0);
  ASSERT_TRUE(c.ok());
  absl::StatusOr<std::optional<Knee>> knee = FindKnee(*c);
  ASSERT_TRUE(knee.ok());
  ASSERT_TRUE(knee->has_value());
  EXPECT_GT((*knee)->load, 8);
  EXPECT_LE((*knee)->load, 16);
  EXPECT_EQ((*knee)->last_flat_index, 4);
  EXPECT_GE((*c)[5].ttft->p95_seconds, 10 * (*c)[4].ttft->p95_seconds);
  EXPECT_GE((*c)[5].ttft->p50_seconds, 10 * (*c)[4].ttft->p50_seconds);
}

// Past the slots the users who wait for one still queue for the prefill
// stage once admitted: TTFT does not fall when the population passes S.
// Long prompts and very short answers: many users come back in the same
// step, and their prefills queue together. (p95 is not asserted: the
// waiters carry the prefill stage's mean wait, not its exponential tail, so
// in a prefill-bound loop like this one p95 still dips past the slots.)
TEST(ClosedLoop, TtftDoesNotFallWhenThePopulationPassesTheSlots) {
  const LoadDependentServer s = Server(DenseInputs(), MakeWorkload(8000, 8), 64);
  std::vector<int> ns;
  for (int n = 56; n <= 72; ++n) ns.push_back(n);
  absl::StatusOr<std::vector<LoadPoint>> c = ClosedLoopCurve(s, ns, 0.0);
  ASSERT_TRUE(c.ok()) << c.status();
  for (size_t i = 1; i < c->size(); ++i) {
    ASSERT_TRUE((*c)[i].ttft.has_value() && (*c)[i - 1].ttft.has_value());
    EXPECT_GE((*c)[i].ttft->p50_seconds, 0.99 * (*c)[i - 1].ttft->p50_seconds)
        << ns[i - 1] << " -> " << ns[i] << " users";
    EXPECT_GE((*c)[i].ttft->mean_seconds, 0.99 * (*c)[i - 1].ttft->mean_seconds)
        << ns[i - 1] << " -> " << ns[i] << " users";
  }
}

TEST(ClosedLoop, PercentilesAreOrdered) {
  const LoadDependentServer s = Server(MoeInputs(), MakeWorkload(1024, 256, 0.5), 12);
  std::vector<int> ns;
  for (int n = 1; n <= 40; n += 3) ns.push_back(n);
  for (double z : {0.0, 3.0}) {
    absl::StatusOr<std::vector<LoadPoint>> c = ClosedLoopCurve(s, ns, z);
    ASSERT_TRUE(c.ok());
    for (const LoadPoint& p : *c) {
      EXPECT_LE(p.ttft->p50_seconds, p.ttft->p90_seconds);
      EXPECT_LE(p.ttft->p90_seconds, p.ttft->p95_seconds);
      EXPECT_LE(p.ttft->p95_seconds, p.ttft->p99_seconds);
      EXPECT_LE(p.e2e->p50_seconds, p.e2e->p95_seconds);
      EXPECT_GT(p.ttft->p50_seconds, 0);
      EXPECT_TRUE(std::isfinite(p.ttft->p99_seconds));
    }
  }
}

// ----------------------------------------------------------------- open loop

TEST(OpenLoop, StationaryLawMatchesTruncatedChainSolvedNumerically) {
  const LoadDependentServer s = Server(DenseInputs(), MakeWorkload(1000, 200, 0.4), 5);
  const double mu = s.SaturationRate();
  const std::vector<double> rates = {0.2 * mu, 0.6 * mu, 0.9 * mu};
  absl::StatusOr<std::vector<LoadPoint>> c = OpenLoopCurve(s, rates);
  ASSERT_TRUE(c.ok());
  for (size_t i = 0; i < rates.size(); ++i) {
    const int n_max = 600;
    // The chain OpenLoopCurve documents: holding time includes the mean
    // prefill-stage wait.
    const double w = PrefillStageMeanWait(
        s, rates[i], std::clamp(static_cast<int>(std::lround(rates[i] / mu * 5)), 1, 5));
    EXPECT_GT(w, 0);
    Eigen::MatrixXd q = Eigen::MatrixXd::Zero(n_max + 1, n_max + 1);
    for (int k = 0; k <= n_max; ++k) {
      if (k < n_max) q(k, k + 1) = rates[i];
      const int busy = std::min(k, 5);
      if (k > 0) q(k, k - 1) = busy / (busy / s.CompletionRate(k) + w);
      q(k, k) = -q.row(k).sum();
    }
    Eigen::MatrixXd a = q.transpose();
    a.row(n_max).setOnes();
    Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n_max + 1);
    rhs(n_max) = 1;
    const Eigen::VectorXd pi = a.partialPivLu().solve(rhs);
    double p_wait = 0, queue = 0, busy = 0;
    for (int k = 0; k <= n_max; ++k) {
      if (k >= 5) p_wait += pi(k);
      queue += std::max(0, k - 5) * pi(k);
      busy += std::min(k, 5) * pi(k);
    }
    const LoadPoint& p = (*c)[i];
    EXPECT_NEAR(p.slot_wait_probability, p_wait, 1e-9) << i;
    EXPECT_NEAR(*p.mean_queue_length, queue, 1e-8 * (1 + queue)) << i;
    EXPECT_NEAR(p.mean_batch_size, busy, 1e-9 * (1 + busy)) << i;
  }
}

TEST(OpenLoop, PercentilesOrderedAndTtftRisesSteeplyTowardsSaturation) {
  const LoadDependentServer s = Server(MoeInputs(), MakeWorkload(2000, 300, 0.4), 8);
  const double mu = s.SaturationRate();
  std::vector<double> rates;
  for (int i = 1; i <= 40; ++i) rates.push_back(mu * i / 40.4);
  absl::StatusOr<std::vector<LoadPoint>> c = OpenLoopCurve(s, rates);
  ASSERT_TRUE(c.ok());
  for (const LoadPoint& p : *c) {
    ASSERT_TRUE(p.stable);
    EXPECT_LE(p.ttft->p50_seconds, p.ttft->p90_seconds);
    EXPECT_LE(p.ttft->p90_seconds, p.ttft->p95_seconds);
    EXPECT_LE(p.ttft->p95_seconds, p.ttft->p99_seconds);
    EXPECT_LE(p.e2e->p50_seconds, p.e2e->p95_seconds);
    EXPECT_LT(p.utilization, 1.0);
  }
  // TTFT p95 non-decreasing in load and steep near ρ → 1.
  for (size_t i = 1; i < c->size(); ++i) {
    EXPECT_GE((*c)[i].ttft->p95_seconds, (*c)[i - 1].ttft->p95_seconds * 0.999);
  }
  const LoadPoint& low = (*c)[7];     // ρ ≈ 0.2
  const LoadPoint& high = c->back();  // ρ ≈ 0.99
  EXPECT_GT(high.ttft->p95_seconds, 10 * low.ttft->p95_seconds);
  EXPECT_GT(high.ttft->p99_seconds, high.ttft->p95_seconds);
}

TEST(OpenLoop, PastSaturationPointsAreUnstableWithoutLatency) {
  const LoadDependentServer s = Server(DenseInputs(), MakeWorkload(500, 100), 4);
  const double mu = s.SaturationRate();
  absl::StatusOr<std::vector<LoadPoint>> c = OpenLoopCurve(s, {0.5 * mu, 0.99 * mu, mu, 2 * mu});
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE((*c)[0].stable);
  EXPECT_TRUE((*c)[1].stable);
  for (int i : {2, 3}) {
    const LoadPoint& p = (*c)[i];
    EXPECT_FALSE(p.stable);
    EXPECT_FALSE(p.ttft.has_value());
    EXPECT_FALSE(p.e2e.has_value());
    EXPECT_FALSE(p.tpot_seconds.has_value());
    EXPECT_FALSE(p.mean_queue_length.has_value());
    EXPECT_GE(p.utilization, 1.0);
    EXPECT_NEAR(p.requests_per_second, mu, 1e-12);
  }
}

// ------------------------------------------------------------- distributions

TEST(ErlangCdf, MatchesNumericalIntegrationOfTheDensity) {
  for (int k : {1, 2, 5, 17, 64}) {
    const double rate = 3.0;
    for (double t : {0.1, 1.0, 3.0, 8.0, 30.0}) {
      // Simpson on the density r^k t^(k−1) e^(−rt) / (k−1)!.
      const int steps = 20000;
      const double h = t / steps;
      double sum = 0;
      for (int i = 0; i <= steps; ++i) {
        const double x = i * h;
        const double f =
            x == 0
                ? (k == 1 ? rate : 0.0)
                : std::exp(k * std::log(rate) + (k - 1) * std::log(x) - rate * x - std::lgamma(k));
        sum += f * (i == 0 || i == steps ? 1 : (i % 2 ? 4 : 2));
      }
      EXPECT_NEAR(ErlangCdf(k, rate, t), sum * h / 3, 1e-7) << k << " " << t;
    }
  }
}

TEST(WaitCdf, GeometricFormEqualsExplicitErlangMixture) {
  for (double r : {0.02, 0.3, 0.8, 0.97}) {
    for (int kappa : {1, 3, 8, 16}) {
      WaitLaw geo;
      geo.geometric_ratio = r;
      geo.phase_rate = 5.0 * kappa;
      geo.phases_per_completion = kappa;
      WaitLaw expl;
      for (int m = 1; m <= 1500; ++m) {
        expl.erlangs.push_back({(1 - r) * std::pow(r, m - 1), m * kappa, geo.phase_rate});
      }
      for (double t : {0.05, 0.5, 1.0, 2.0, 5.0, 10.0, 40.0}) {
        EXPECT_NEAR(WaitCdf(geo, t), WaitCdf(expl, t), 1e-9)
            << "r=" << r << " κ=" << kappa << " t=" << t;
      }
    }
  }
  // κ = 1: the exact birth–death answer Exp(θ(1 − ρ)).
  WaitLaw one;
  one.geometric_ratio = 0.9;
  one.phase_rate = 2.0;
  EXPECT_NEAR(WaitCdf(one, 3.0), 1 - std::exp(-2.0 * 0.1 * 3.0), 1e-14);
}

TEST(LatencyQuantile, MatchesMonteCarloOfTheSameLaw) {
  LatencyLaw law;
  law.atoms = {{0.5, 0.20, 0.05}, {0.2, 0.30, 0.0}, {0.1, 0.25, 0.10}};
  law.waits = {{0.1, 0.3}, {0.1, 0.4}};
  law.wait.geometric_ratio = 0.7;
  law.wait.phases_per_completion = 4;
  law.wait.phase_rate = 4 * 2.0;  // completions at 2 per second
  law.prefill_wait_probability = 0.3;
  law.prefill_wait_rate = 10.0;
  std::mt19937_64 g(5);
  auto u = [&g] { return (static_cast<double>(g() >> 11) + 0.5) * 0x1.0p-53; };
  std::vector<double> samples;
  const int n = 400000;
  samples.reserve(n);
  for (int i = 0; i < n; ++i) {
    double x = u();
    double t = 0;
    bool atom = false;
    for (const LatencyLaw::Atom& a : law.atoms) {
      if (x < a.weight) {
        t = a.offset_seconds + u() * a.uniform_width_seconds;
        if (u() < law.prefill_wait_probability) {
          t += -std::log(u()) / law.prefill_wait_rate;
        }
        atom = true;
        break;
      }
      x -= a.weight;
    }
    if (!atom) {
      t = x < 0.1 ? 0.3 : 0.4;
      int m = 1;
      while (u() < 0.7) ++m;
      for (int p = 0; p < 4 * m; ++p) t += -std::log(u()) / law.wait.phase_rate;
    }
    samples.push_back(t);
  }
  std::sort(samples.begin(), samples.end());
  for (double q : {0.5, 0.9, 0.95, 0.99}) {
    const double mc = samples[static_cast<size_t>(q * n)];
    EXPECT_NEAR(LatencyQuantile(law, q), mc, 0.01 * mc) << q;
  }
  double mean = 0;
  for (double v : samples) mean += v;
  EXPECT_NEAR(LatencyMean(law), mean / n, 0.005 * mean / n);
}

// ------------------------------------------------------- knee and safe point

std::vector<LoadPoint> KneeCurve() {
  const LoadDependentServer s = Server(MoeInputs(), MakeWorkload(1024, 512), 8);
  return *ClosedLoopCurve(s, {1, 2, 4, 6, 8, 16, 32}, 0.0);
}

TEST(CoArrivalPositions, MatchesClosedFormsOfTheBinomialPosition) {
  // U = uniform position among K + 1 arrivals, K ~ Binomial(n, q):
  // E[U] = n·q / 2 and P(U = 0) = E[1/(K+1)] = (1 − (1−q)^(n+1)) / ((n+1)q).
  for (const auto& [n, q] : std::vector<std::pair<int, double>>{
           {1, 0.3}, {7, 0.05}, {40, 0.01}, {2000, 0.02}, {500, 0.9}, {3000, 0.5}}) {
    const std::vector<double> pu = CoArrivalPositions(n, q);
    double total = 0;
    double mean = 0;
    for (size_t u = 0; u < pu.size(); ++u) {
      EXPECT_GE(pu[u], 0.0);
      if (u > 0) {
        EXPECT_LE(pu[u], pu[u - 1]) << "P(U = u) falls with u";
      }
      total += pu[u];
      mean += u * pu[u];
    }
    EXPECT_NEAR(total, 1.0, 1e-9) << n << " " << q;
    EXPECT_NEAR(mean, n * q / 2, 1e-9 * std::max(1.0, n * q)) << n;
    EXPECT_NEAR(pu[0], (1 - std::pow(1 - q, n + 1)) / ((n + 1) * q), 1e-12) << n;
  }
  EXPECT_EQ(CoArrivalPositions(0, 0.5), std::vector<double>{1.0});
  EXPECT_EQ(CoArrivalPositions(5, 0.0), std::vector<double>{1.0});
  // Waves (q = 1): all n others co-arrive, the position is uniform on 0..n.
  const std::vector<double> waves = CoArrivalPositions(9, 1.0);
  ASSERT_EQ(waves.size(), 10u);
  for (double p : waves) EXPECT_NEAR(p, 0.1, 1e-15);
}

TEST(FindKnee, NoKneeWhenTtftStaysFlat) {
  const LoadDependentServer s = Server(MoeInputs(), MakeWorkload(1024, 256), 64);
  absl::StatusOr<std::vector<LoadPoint>> c = ClosedLoopCurve(s, {1, 5, 10, 15, 20}, 0.0);
  ASSERT_TRUE(c.ok());
  absl::StatusOr<std::optional<Knee>> k = FindKnee(*c);
  ASSERT_TRUE(k.ok());
  EXPECT_FALSE(k->has_value());
}

TEST(FindKnee, MeasuresTheChosenPercentile) {
  // p95 doubles at the second point, the median only at the third.
  std::vector<LoadPoint> pts(3);
  const double p50[] = {1.0, 1.5, 3.0};
  const double p95[] = {1.0, 3.0, 4.0};
  for (int i = 0; i < 3; ++i) {
    pts[i].concurrency = i + 1;
    pts[i].ttft = LatencyPercentiles{};
    pts[i].ttft->p50_seconds = p50[i];
    pts[i].ttft->p95_seconds = p95[i];
  }
  absl::StatusOr<std::optional<Knee>> on_p95 = FindKnee(pts);
  ASSERT_TRUE(on_p95.ok() && on_p95->has_value());
  EXPECT_EQ((*on_p95)->first_steep_index, 1);
  EXPECT_DOUBLE_EQ((*on_p95)->load, 1.5);  // 1 + (2 − 1)/(3 − 1)
  KneeOptions median;
  median.metric = KneeMetric::kTtftP50;
  absl::StatusOr<std::optional<Knee>> on_p50 = FindKnee(pts, median);
  ASSERT_TRUE(on_p50.ok() && on_p50->has_value());
  EXPECT_EQ((*on_p50)->first_steep_index, 2);
  EXPECT_DOUBLE_EQ((*on_p50)->load, 2 + 0.5 / 1.5);
}

TEST(FindKnee, RejectsBadRatioAndEmptyCurve) {
  KneeOptions o;
  o.flat_ratio = 1.0;
  EXPECT_THAT(FindKnee(KneeCurve(), o),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("KneeOptions.flat_ratio = 1; must be finite and > 1")));
  EXPECT_THAT(FindKnee({}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("FindKnee.points is empty")));
}

TEST(SafeOperatingPoint, SlotWaitBindsPastTheGateWithoutSlo) {
  absl::StatusOr<SafeOperatingPoint> p = FindSafeOperatingPoint(KneeCurve(), Slo{});
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->index.has_value());
  EXPECT_EQ(*p->index, 4);  // c = 8
  EXPECT_EQ(p->binding, BindingLimit::kSlotWait);
}

TEST(SafeOperatingPoint, TtftSloBindsFirstWhenTight) {
  const std::vector<LoadPoint> c = KneeCurve();
  Slo slo;
  slo.ttft_p95_seconds = 0.5 * (c[1].ttft->p95_seconds + c[2].ttft->p95_seconds);
  absl::StatusOr<SafeOperatingPoint> p = FindSafeOperatingPoint(c, slo);
  ASSERT_TRUE(p.ok());
  ASSERT_TRUE(p->index.has_value());
  EXPECT_EQ(*p->index, 1);
  EXPECT_EQ(p->binding, BindingLimit::kTtftP95);
}

TEST(SafeOperatingPoint, TpotSloAndLoadRange) {
  const std::vector<LoadPoint> c = KneeCurve();
  Slo slo;
  slo.tpot_seconds = *c[0].tpot_seconds * 0.5;  // nothing meets it
  absl::StatusOr<SafeOperatingPoint> p = FindSafeOperatingPoint(c, slo);
  ASSERT_TRUE(p.ok());
  EXPECT_FALSE(p->index.has_value());
  EXPECT_EQ(p->binding, BindingLimit::kTpot);
  const std::vector<LoadPoint> head(c.begin(), c.begin() + 3);
  p = FindSafeOperatingPoint(head, Slo{});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p->index, 2);
  EXPECT_EQ(p->binding, BindingLimit::kLoadRange);
}

TEST(SafeOperatingPoint, StabilityBindsInOpenLoop) {
  const LoadDependentServer s = Server(DenseInputs(), MakeWorkload(500, 100), 64);
  const double mu = s.SaturationRate();
  absl::StatusOr<std::vector<LoadPoint>> c = OpenLoopCurve(s, {0.3 * mu, 0.6 * mu, 1.2 * mu});
  ASSERT_TRUE(c.ok());
  absl::StatusOr<SafeOperatingPoint> p = FindSafeOperatingPoint(*c, Slo{});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p->index, 1);
  EXPECT_EQ(p->binding, BindingLimit::kStability);
}

TEST(SafeOperatingPoint, RejectsNonPositiveSlo) {
  Slo slo;
  slo.ttft_p95_seconds = 0;
  EXPECT_THAT(FindSafeOperatingPoint(KneeCurve(), slo),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Slo.ttft_p95_seconds = 0; must be finite and > 0")));
}

// ---------------------------------------------------------- load validation

TEST(LoadValidation, ConcurrencyListMustIncrease) {
  const LoadDependentServer s = Server(DenseInputs(), MakeWorkload(500, 100), 4);
  EXPECT_THAT(ClosedLoopCurve(s, {1, 4, 4}, 0),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ClosedLoop.concurrency[2] = 4; must be > "
                                 "ClosedLoop.concurrency[1] = 4")));
  EXPECT_THAT(ClosedLoopCurve(s, {0, 1}, 0),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ClosedLoop.concurrency[0] = 0; must be finite and > 0")));
  EXPECT_THAT(ClosedLoopCurve(s, {1}, -1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ClosedLoop.think_time_seconds = -1; must be finite and >= 0")));
  EXPECT_THAT(ClosedLoopCurve(s, {}, 0), StatusIs(absl::StatusCode::kInvalidArgument,
                                                  HasSubstr("ClosedLoop.concurrency is empty")));
  EXPECT_THAT(
      ClosedLoopCurve(s, {kMaxClosedLoopConcurrency + 1}, 0),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr(absl::StrCat("ClosedLoop.concurrency[0] = ", kMaxClosedLoopConcurrency + 1,
                                      "; must be <= ", kMaxClosedLoopConcurrency))));
}

TEST(LoadValidation, AtMost4096PointsAndPositiveRates) {
  const LoadDependentServer s = Server(DenseInputs(), MakeWorkload(500, 100), 4);
  std::vector<double> many;
  for (int i = 1; i <= kMaxLoadPoints + 1; ++i) many.push_back(i * 1e-4);
  EXPECT_THAT(OpenLoopCurve(s, many),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("OpenLoop.arrival_rate_rps.size = 4097; must be <= 4096")));
  EXPECT_THAT(OpenLoopCurve(s, {-0.5}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("OpenLoop.arrival_rate_rps[0] = -0.5; must be finite and > 0")));
  EXPECT_THAT(OpenLoopCurve(s, {std::nan("")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("OpenLoop.arrival_rate_rps[0] = nan; must be finite and > 0")));
}

TEST(LoadDependentServer, RejectsCoefficientsGivingZeroStepTime) {
  PerformanceModel m = Model(DenseInputs());
  m.coefficients = StepTimeCoefficients{0, 0, 0, 0, 1.0};  // only comm; TP = 1
  absl::StatusOr<LoadDependentServer> s =
      LoadDependentServer::Create(m, MakeWorkload(100, 10), Slots{4, SlotBound::kKvPool});
  // Only beta_comm > 0 and TP = 1 sends nothing: a request's life is 0 s.
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
                          HasSubstr("StepTimeCoefficients: request life = 0 s with 1 in service; "
                                    "coefficients must give positive step times")));
}

}  // namespace
}  // namespace capplan::model

namespace capplan::model {
namespace {

// Extreme and degenerate inputs: every call either fails with a status or
// returns finite figures — never NaN, never a crash.
TEST(QueueingRobustness, ExtremeInputsGiveStatusOrFiniteFigures) {
  std::mt19937_64 g(2024);
  auto pick = [&g](std::initializer_list<double> v) { return *(v.begin() + g() % v.size()); };
  int ok_curves = 0;
  // A refusal is a reason, never an internal error.
  auto expect_refusal = [](const absl::Status& s, int trial) {
    EXPECT_THAT(s, AnyOf(StatusIs(absl::StatusCode::kInvalidArgument, Not(IsEmpty())),
                         StatusIs(absl::StatusCode::kFailedPrecondition, Not(IsEmpty()))))
        << trial;
  };
  for (int trial = 0; trial < 300; ++trial) {
    PerformanceModel m = Model(pick({0, 1}) ? MoeInputs() : DenseInputs());
    m.coefficients = StepTimeCoefficients{pick({0, 1e-9, 0.004, 10}), pick({0, 1e-6, 1.3, 1e3}),
                                          pick({0, 1.5}), pick({0, 2, 1e4}), pick({0, 1.4})};
    m.scheduler.max_batched_tokens = static_cast<int>(pick({1, 16, 8192, 1e6}));
    Workload w;
    w.input_tokens = pick({0, 1, 1000, 1e6, 1e9, std::nan("")});
    w.output_tokens = pick({0, 1, 2, 500, 1e6});
    w.output_tokens_cv = pick({0, 0.5, 3});
    w.input_tokens_cv = pick({0, 0.5});
    w.prefix_cache_hit_rate = pick({0, 0.5, 1});
    SlotLimits l;
    l.max_running_requests = static_cast<int>(pick({1, 8, 1e6}));
    l.kv_pool_tokens = pick({1, 1e4, 1e9});
    absl::StatusOr<Slots> slots = ComputeSlots(l, w);
    if (!slots.ok()) {
      expect_refusal(slots.status(), trial);
      continue;
    }
    absl::StatusOr<LoadDependentServer> s = LoadDependentServer::Create(m, w, *slots);
    if (!s.ok()) {
      expect_refusal(s.status(), trial);
      continue;
    }
    const double mu = s->SaturationRate();
    ASSERT_TRUE(std::isfinite(mu)) << trial;
    absl::StatusOr<std::vector<LoadPoint>> open =
        OpenLoopCurve(*s, {mu * 0.01, mu * 0.5, mu * 0.999, mu * 3});
    absl::StatusOr<std::vector<LoadPoint>> closed =
        ClosedLoopCurve(*s, {1, 7, 300}, pick({0, 0.5}));
    for (const auto* c : {&open, &closed}) {
      if (!c->ok()) {
        expect_refusal(c->status(), trial);
        continue;
      }
      ++ok_curves;
      for (const LoadPoint& p : **c) {
        EXPECT_TRUE(std::isfinite(p.requests_per_second)) << trial;
        EXPECT_TRUE(std::isfinite(p.utilization)) << trial;
        if (p.ttft.has_value()) {
          EXPECT_TRUE(std::isfinite(p.ttft->p99_seconds)) << trial;
          EXPECT_TRUE(std::isfinite(p.e2e->p95_seconds)) << trial;
          EXPECT_LE(p.ttft->p50_seconds, p.ttft->p99_seconds) << trial;
          EXPECT_TRUE(std::isfinite(*p.tpot_seconds)) << trial;
        }
      }
    }
  }
  EXPECT_GT(ok_curves, 50);
}

}  // namespace
}  // namespace capplan::model

namespace capplan::model {
namespace {

// A MoE deployment behind a gate of 8, closed loop from 1 to 32 users.
LoadCurveRequest GatedMoeCurve() {
  LoadCurveRequest r;
  r.model = Model(MoeInputs());
  r.workload = MakeWorkload(1024, 512);
  r.limits.operator_concurrency_gate = 8;
  r.limits.kv_pool_tokens = 1e6;
  r.concurrencies = {1, 2, 4, 6, 8, 16, 32};
  return r;
}

TEST(PredictLoadCurve, OneCallGivesSlotsCurveKneeAndSafePoint) {
  LoadCurveRequest r = GatedMoeCurve();
  absl::StatusOr<LoadCurve> c = PredictLoadCurve(r);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_TRUE(c->closed_loop);
  EXPECT_EQ(c->slots.slots, 8);
  EXPECT_EQ(c->slots.bound, SlotBound::kOperatorGate);
  ASSERT_TRUE(c->knee.has_value());
  EXPECT_GT(c->knee->load, 8);
  EXPECT_LE(c->knee->load, 16);
  EXPECT_EQ(*c->safe.index, 4);
  EXPECT_EQ(c->safe.binding, BindingLimit::kSlotWait);
}

// An adjustment that triples TTFT from 4 users on: the safe point and the
// cutoff judge the adjusted points, the knee the model's own.
class TripleTtft : public PointAdjustment {
 public:
  void Apply(LoadPoint* p) const override {
    if (!p->ttft.has_value() || p->concurrency.value_or(0) < 4) return;
    for (double* v : {&p->ttft->mean_seconds, &p->ttft->p50_seconds, &p->ttft->p90_seconds,
                      &p->ttft->p95_seconds, &p->ttft->p99_seconds}) {
      *v *= 3;
    }
  }
};

TEST(PredictLoadCurve, AnAdjustmentMovesTheSafePointNotTheKnee) {
  LoadCurveRequest r = GatedMoeCurve();
  absl::StatusOr<LoadCurve> plain = PredictLoadCurve(r);
  ASSERT_TRUE(plain.ok()) << plain.status();
  // An SLO between the plain and the tripled TTFT p95 at 4 users.
  const double p95_at_4 = plain->points[2].ttft->p95_seconds;
  r.slo.ttft_p95_seconds = 2 * p95_at_4;
  plain = PredictLoadCurve(r);
  ASSERT_TRUE(plain.ok());
  const TripleTtft triple;
  r.adjust = &triple;
  absl::StatusOr<LoadCurve> adjusted = PredictLoadCurve(r);
  ASSERT_TRUE(adjusted.ok()) << adjusted.status();
  EXPECT_NEAR(adjusted->points[2].ttft->p95_seconds, 3 * p95_at_4, 1e-12);
  ASSERT_TRUE(plain->safe.index.has_value() && adjusted->safe.index.has_value());
  EXPECT_GE(*plain->safe.index, 2);
  EXPECT_EQ(*adjusted->safe.index, 1);
  EXPECT_EQ(adjusted->safe.binding, BindingLimit::kTtftP95);
  ASSERT_EQ(plain->knee.has_value(), adjusted->knee.has_value());
  if (plain->knee.has_value()) {
    EXPECT_EQ(plain->knee->load, adjusted->knee->load);
  }
  // The cutoff judges the adjusted points: the same safe point.
  r.latencies_until_unsafe = true;
  absl::StatusOr<LoadCurve> cut = PredictLoadCurve(r);
  ASSERT_TRUE(cut.ok());
  EXPECT_EQ(cut->safe.index, adjusted->safe.index);
  EXPECT_EQ(cut->safe.binding, adjusted->safe.binding);
}

// One server for several curves of a deployment (Plan's closed and open
// loops): the same curves as with a server each; a server built for other
// slots is refused.
TEST(PredictLoadCurve, AReusedServerGivesTheSameCurves) {
  LoadCurveRequest r;
  r.model = Model(DenseInputs());
  r.workload = MakeWorkload(1000, 200, 0.5);
  r.limits.max_running_requests = 32;
  r.concurrencies = {1, 8, 32, 64};
  std::optional<LoadDependentServer> server;
  absl::StatusOr<LoadCurve> closed = PredictLoadCurve(r, &server);
  ASSERT_TRUE(closed.ok()) << closed.status();
  ASSERT_TRUE(server.has_value());
  EXPECT_EQ(server->slots(), 32);
  r.concurrencies.clear();
  r.arrival_rates_rps = {0.5 * closed->saturation_rps, 0.9 * closed->saturation_rps};
  absl::StatusOr<LoadCurve> reused = PredictLoadCurve(r, &server);
  absl::StatusOr<LoadCurve> own = PredictLoadCurve(r);
  ASSERT_TRUE(reused.ok() && own.ok()) << reused.status() << own.status();
  ASSERT_EQ(reused->points.size(), own->points.size());
  for (size_t i = 0; i < own->points.size(); ++i) {
    ASSERT_TRUE(reused->points[i].ttft.has_value() && own->points[i].ttft.has_value()) << i;
    EXPECT_EQ(reused->points[i].ttft->p95_seconds, own->points[i].ttft->p95_seconds) << i;
    EXPECT_EQ(reused->points[i].mean_batch_size, own->points[i].mean_batch_size) << i;
  }
  r.limits.max_running_requests = 16;
  EXPECT_THAT(PredictLoadCurve(r, &server).status().message(),
              ::testing::HasSubstr("built for 32 slots"));
}

TEST(PredictLoadCurve, OpenLoopPastSaturationStillAnswers) {
  LoadCurveRequest r;
  r.model = Model(DenseInputs());
  r.workload = MakeWorkload(1000, 200);
  r.limits.max_running_requests = 16;
  r.arrival_rates_rps = {100.0, 200.0};  // far past μ(S)
  absl::StatusOr<LoadCurve> c = PredictLoadCurve(r);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->points[0].stable);
  EXPECT_FALSE(c->knee.has_value());
  EXPECT_FALSE(c->safe.index.has_value());
  EXPECT_EQ(c->safe.binding, BindingLimit::kStability);
}

// Latency figures up to the first unsafe point only (Plan's curves): the safe
// point, its binding limit and every figure of the safe point are the whole
// curve's; the points before it and the first unsafe one carry what the SLO
// check reads (the same as the whole curve's), marked partial; past it the
// points keep their throughput and slot-wait figures.
void ExpectCutoffKeepsTheSafePoint(LoadCurveRequest r, BindingLimit expected_binding) {
  absl::StatusOr<LoadCurve> whole = PredictLoadCurve(r);
  r.latencies_until_unsafe = true;
  absl::StatusOr<LoadCurve> cut = PredictLoadCurve(r);
  ASSERT_TRUE(whole.ok() && cut.ok()) << whole.status() << cut.status();
  EXPECT_EQ(whole->safe.binding, expected_binding);
  EXPECT_EQ(cut->safe.binding, whole->safe.binding);
  ASSERT_TRUE(whole->safe.index.has_value());
  EXPECT_EQ(cut->safe.index, whole->safe.index);
  EXPECT_FALSE(cut->knee.has_value());
  const size_t first_unsafe = static_cast<size_t>(*whole->safe.index) + 1;
  ASSERT_LT(first_unsafe + 1, whole->points.size()) << "the SLO should bind inside the curve";
  ASSERT_EQ(cut->points.size(), whole->points.size());
  for (size_t i = 0; i < whole->points.size(); ++i) {
    const LoadPoint& a = whole->points[i];
    const LoadPoint& b = cut->points[i];
    EXPECT_EQ(b.requests_per_second, a.requests_per_second) << i;
    EXPECT_EQ(b.mean_batch_size, a.mean_batch_size) << i;
    EXPECT_EQ(b.slot_wait_probability, a.slot_wait_probability) << i;
    EXPECT_EQ(b.tpot_seconds, a.tpot_seconds) << i;
    if (i + 1 == first_unsafe) {
      ASSERT_TRUE(b.ttft.has_value() && a.ttft.has_value()) << i;
      EXPECT_FALSE(b.latencies_partial) << i;
      for (double LatencyPercentiles::*f :
           {&LatencyPercentiles::mean_seconds, &LatencyPercentiles::p50_seconds,
            &LatencyPercentiles::p90_seconds, &LatencyPercentiles::p95_seconds,
            &LatencyPercentiles::p99_seconds}) {
        EXPECT_EQ((*b.ttft).*f, (*a.ttft).*f) << i;
      }
      EXPECT_EQ(b.e2e->mean_seconds, a.e2e->mean_seconds) << i;
      EXPECT_EQ(b.e2e->p50_seconds, a.e2e->p50_seconds) << i;
      EXPECT_EQ(b.e2e->p95_seconds, a.e2e->p95_seconds) << i;
    } else if (i <= first_unsafe) {
      ASSERT_TRUE(b.ttft.has_value() && a.ttft.has_value()) << i;
      EXPECT_FALSE(b.latencies_skipped) << i;
      EXPECT_TRUE(b.latencies_partial) << i;
      EXPECT_EQ(b.ttft->mean_seconds, a.ttft->mean_seconds) << i;
      // A p95 the check read is the whole curve's; one a moment bound
      // settled (0: not searched) lies below the SLO in the whole curve.
      auto same_or_proven = [&](double cut, double whole, const std::optional<double>& slo) {
        if (!slo.has_value()) return;
        if (cut == 0 && r.adjust == nullptr) {
          EXPECT_LT(whole, *slo) << i;
        } else {
          EXPECT_EQ(cut, whole) << i;
        }
      };
      same_or_proven(b.ttft->p95_seconds, a.ttft->p95_seconds, r.slo.ttft_p95_seconds);
      same_or_proven(b.e2e->p95_seconds, a.e2e->p95_seconds, r.slo.e2e_p95_seconds);
    } else {
      EXPECT_TRUE(b.latencies_skipped) << i;
      EXPECT_FALSE(b.ttft.has_value()) << i;
      EXPECT_FALSE(b.e2e.has_value()) << i;
    }
  }
}

TEST(LatencyCutoff, ClosedLoopBoundByTheSlotWaitKeepsTheWholeCurvesSafePoint) {
  LoadCurveRequest r;
  r.model = Model(MoeInputs());
  r.workload = MakeWorkload(1000, 200, 0.5);
  r.limits.max_running_requests = 16;
  for (int n = 1; n <= 40; ++n) r.concurrencies.push_back(n);
  ExpectCutoffKeepsTheSafePoint(r, BindingLimit::kSlotWait);
}

// A MoE deployment's closed loop at 1..64 users with a TTFT p95 SLO between
// the p95 at 10 and at 30 users (as `adjust` gives them).
void ExpectTtftBoundClosedLoopKeepsTheSafePoint(const PointAdjustment* adjust) {
  LoadCurveRequest r;
  r.model = Model(MoeInputs());
  r.workload = MakeWorkload(1000, 200, 0.5);
  r.limits.max_running_requests = 64;
  for (int n = 1; n <= 64; ++n) r.concurrencies.push_back(n);
  r.adjust = adjust;
  absl::StatusOr<LoadCurve> probe = PredictLoadCurve(r);
  ASSERT_TRUE(probe.ok()) << probe.status();
  r.slo.ttft_p95_seconds =
      0.5 * (probe->points[9].ttft->p95_seconds + probe->points[29].ttft->p95_seconds);
  ExpectCutoffKeepsTheSafePoint(r, BindingLimit::kTtftP95);
}

TEST(LatencyCutoff, ClosedLoopBoundByTtftKeepsTheWholeCurvesSafePoint) {
  ExpectTtftBoundClosedLoopKeepsTheSafePoint(nullptr);
}

// A dense deployment's open loop at 64 rates up to 0.99 of saturation, no
// slot-wait cap, and its whole curve.
LoadCurveRequest DenseOpenLoopToSaturation(absl::StatusOr<LoadCurve>* full) {
  LoadCurveRequest r;
  r.model = Model(DenseInputs());
  r.workload = MakeWorkload(1000, 200, 0.5);
  r.limits.max_running_requests = 64;
  r.arrival_rates_rps = {0.1};
  absl::StatusOr<LoadCurve> probe = PredictLoadCurve(r);
  EXPECT_TRUE(probe.ok()) << probe.status();
  const double mu = probe.ok() ? probe->saturation_rps : 1.0;
  r.arrival_rates_rps.clear();
  for (int k = 1; k <= 64; ++k) r.arrival_rates_rps.push_back(mu * 0.99 * k / 64);
  r.safety.max_slot_wait_probability = 1.0;
  *full = PredictLoadCurve(r);
  return r;
}

TEST(LatencyCutoff, OpenLoopBoundByTpotKeepsTheWholeCurvesSafePoint) {
  absl::StatusOr<LoadCurve> full;
  LoadCurveRequest r = DenseOpenLoopToSaturation(&full);
  ASSERT_TRUE(full.ok()) << full.status();
  r.slo.tpot_seconds = 0.5 * (*full->points[15].tpot_seconds + *full->points[40].tpot_seconds);
  ExpectCutoffKeepsTheSafePoint(r, BindingLimit::kTpot);
}

// Under an e2e SLO the points before the safe point carry the e2e p95 alone
// (no TTFT quantile); the safe point is still the whole curve's, open loop.
TEST(LatencyCutoff, OpenLoopBoundByE2eKeepsTheWholeCurvesSafePoint) {
  absl::StatusOr<LoadCurve> full;
  LoadCurveRequest r = DenseOpenLoopToSaturation(&full);
  ASSERT_TRUE(full.ok()) << full.status();
  r.slo.e2e_p95_seconds =
      0.5 * (full->points[15].e2e->p95_seconds + full->points[40].e2e->p95_seconds);
  ExpectCutoffKeepsTheSafePoint(r, BindingLimit::kE2eP95);
}

// With an adjustment the TTFT tail is floored at the corrected median, so
// the points before the safe point carry the p50 too; closed loop.
TEST(LatencyCutoff, AnAdjustedClosedLoopKeepsTheWholeCurvesSafePoint) {
  const TripleTtft triple;
  ExpectTtftBoundClosedLoopKeepsTheSafePoint(&triple);
}

// The moment bound is never below the quantile it bounds: laws of atoms
// (with and without the prefill stage's exponential wait) and wait branches
// (geometric and Erlang-mixture waits), drawn at random.
TEST(LatencyQuantileUpperBound, IsAtOrAboveTheQuantile) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<double> u(0.0, 1.0);
  int tight = 0;
  for (int trial = 0; trial < 300; ++trial) {
    LatencyLaw law;
    const int atoms = 1 + trial % 40;
    double weight_left = u(rng) < 0.3 ? 0.7 : 1.0;  // some mass in wait branches
    for (int i = 0; i < atoms; ++i) {
      law.atoms.push_back({weight_left / atoms, 0.05 + u(rng), u(rng) < 0.5 ? 0.0 : 0.3 * u(rng)});
    }
    if (u(rng) < 0.5) {
      law.prefill_wait_probability = u(rng);
      law.prefill_wait_rate = 1.0 + 20 * u(rng);
    }
    if (weight_left < 1.0) {
      if (u(rng) < 0.5) {
        law.wait.geometric_ratio = 0.9 * u(rng);
        law.wait.phase_rate = 5 + 50 * u(rng);
        law.wait.phases_per_completion = 1 + trial % 4;
      } else {
        law.wait.erlangs = {{0.5, 1 + trial % 5, 10 + 10 * u(rng)}, {0.5, 2, 5 + u(rng)}};
      }
      for (int j = 0; j < 3; ++j) law.waits.push_back({0.1, 0.2 + u(rng)});
    }
    const double q = LatencyQuantile(law, 0.95);
    const double bound = LatencyQuantileUpperBound(law, 0.95);
    EXPECT_GE(bound, q) << "trial " << trial;
    tight += bound < 3 * q;
  }
  // A bound that is always infinite would pass the check above.
  EXPECT_GT(tight, 200);
}

// Along a curve each quantile search starts from the previous point's
// answer (scaled by the means); a point computed alone starts from nothing.
// Both end on the same point of the quantiles' lattice (ratio 1.001), so a
// point's figures do not depend on the curve it is computed in.
TEST(QuantileSearch, APointOfACurveEqualsThePointAlone) {
  for (double think : {0.0, 2.0}) {
    const LoadDependentServer server = Server(MoeInputs(), MakeWorkload(1000, 200, 0.5), 32);
    std::vector<int> ns;
    for (int n = 1; n <= 64; n += 3) ns.push_back(n);
    absl::StatusOr<std::vector<LoadPoint>> curve = ClosedLoopCurve(server, ns, think);
    ASSERT_TRUE(curve.ok()) << curve.status();
    for (size_t i = 0; i < ns.size(); ++i) {
      absl::StatusOr<std::vector<LoadPoint>> alone = ClosedLoopCurve(server, {ns[i]}, think);
      ASSERT_TRUE(alone.ok()) << alone.status();
      const LatencyPercentiles& a = *(*curve)[i].ttft;
      const LatencyPercentiles& b = *(*alone)[0].ttft;
      for (auto [x, y] : {std::pair{a.p50_seconds, b.p50_seconds},
                          {a.p90_seconds, b.p90_seconds},
                          {a.p95_seconds, b.p95_seconds},
                          {a.p99_seconds, b.p99_seconds},
                          {(*curve)[i].e2e->p95_seconds, (*alone)[0].e2e->p95_seconds}}) {
        // Both searches end on the same lattice point: the smallest above q.
        EXPECT_EQ(x, y) << "n = " << ns[i] << ", think " << think;
      }
    }
  }
  const LoadDependentServer server = Server(DenseInputs(), MakeWorkload(1000, 200, 0.5), 32);
  std::vector<double> rates;
  for (int k = 1; k <= 32; ++k) rates.push_back(server.SaturationRate() * 0.97 * k / 32);
  absl::StatusOr<std::vector<LoadPoint>> open = OpenLoopCurve(server, rates);
  ASSERT_TRUE(open.ok()) << open.status();
  for (size_t i = 0; i < rates.size(); ++i) {
    absl::StatusOr<std::vector<LoadPoint>> alone = OpenLoopCurve(server, {rates[i]});
    ASSERT_TRUE(alone.ok()) << alone.status();
    if (!(*open)[i].ttft.has_value()) continue;
    const LatencyPercentiles& a = *(*open)[i].ttft;
    const LatencyPercentiles& b = *(*alone)[0].ttft;
    for (auto [x, y] : {std::pair{a.p50_seconds, b.p50_seconds},
                        {a.p95_seconds, b.p95_seconds},
                        {a.p99_seconds, b.p99_seconds},
                        {(*open)[i].e2e->p95_seconds, (*alone)[0].e2e->p95_seconds}}) {
      EXPECT_EQ(x, y) << "rate " << rates[i];
    }
  }
}

TEST(PredictLoadCurve, RejectsBothOrNoLoadAxis) {
  LoadCurveRequest r;
  r.model = Model(DenseInputs());
  r.workload = MakeWorkload(1000, 200);
  r.limits.max_running_requests = 16;
  EXPECT_THAT(PredictLoadCurve(r),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("LoadCurveRequest: give exactly one of concurrencies")));
  r.concurrencies = {1};
  r.arrival_rates_rps = {1.0};
  EXPECT_THAT(PredictLoadCurve(r),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("LoadCurveRequest: give exactly one of concurrencies")));
}

}  // namespace
}  // namespace capplan::model
