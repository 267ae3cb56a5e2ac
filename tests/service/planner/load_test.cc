#include "service/planner/load.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

using ::capplan::testing::k000;
using ::capplan::testing::k002;

const Catalog& Bundled() { return capplan::testing::BundledCatalogue(); }

const v1::Sweep& FirstSweep(const char* id) {
  const v1::Baseline* b = Bundled().FindBaseline(id);
  EXPECT_NE(b, nullptr) << id;
  return b->sweeps(0);
}

// Concurrencies of a baseline's first sweep, as measured.
std::vector<uint32_t> SweepConcurrencies(const char* id) {
  std::vector<uint32_t> out;
  for (const v1::SweepRow& row : FirstSweep(id).rows()) out.push_back(row.concurrency());
  return out;
}

v1::PredictLoadRequest FromBaseline(const char* id, const std::vector<uint32_t>& cs) {
  v1::PredictLoadRequest r;
  r.mutable_deployment()->set_baseline_id(id);
  for (uint32_t c : cs) r.mutable_closed_loop()->add_concurrencies(c);
  return r;
}

std::vector<uint32_t> Range(uint32_t lo, uint32_t hi) {
  std::vector<uint32_t> out;
  for (uint32_t c = lo; c <= hi; ++c) out.push_back(c);
  return out;
}

const v1::LoadCurvePoint& At(const v1::LoadCurve& curve, uint32_t c) {
  for (const v1::LoadCurvePoint& p : curve.points()) {
    if (p.concurrency() == c) return p;
  }
  ADD_FAILURE() << "no point at c=" << c;
  return curve.points(0);
}

const v1::MetricProvenance& Provenance(const v1::LoadCurve& curve, const std::string& metric) {
  for (const v1::MetricProvenance& p : curve.provenance()) {
    if (p.metric() == metric) return p;
  }
  ADD_FAILURE() << "no provenance for " << metric;
  return curve.provenance(0);
}

TEST(PredictLoad, Seed000KneeAboveEightAtMostSixteenBecauseOfTheOperatorGate) {
  // The GPU of 000 is withheld: its own rows are fitted in unknown units.
  absl::StatusOr<v1::LoadCurve> curve =
      PredictLoad(Bundled(), FromBaseline(k000, SweepConcurrencies(k000)));
  ASSERT_TRUE(curve.ok()) << curve.status();
  ASSERT_TRUE(curve->has_knee());
  EXPECT_GT(curve->knee().concurrency(), 8.0);
  EXPECT_LE(curve->knee().concurrency(), 16.0);
  const v1::LoadCurvePoint& c8 = At(*curve, 8);
  const v1::LoadCurvePoint& c16 = At(*curve, 16);
  EXPECT_GE(c16.ttft_p50_seconds(), 10 * c8.ttft_p50_seconds());
  EXPECT_GE(c16.ttft_p95_seconds(), 10 * c8.ttft_p95_seconds());
  // The slot limit is the operator's gate the baseline records.
  const v1::Baseline* b = Bundled().FindBaseline(k000);
  EXPECT_EQ(curve->slots().bound(), v1::SLOT_BOUND_OPERATOR_GATE);
  EXPECT_EQ(curve->slots().slots(), b->deployment().concurrency_gate());
  EXPECT_EQ(c16.slot_wait_probability() > 0, true);
  EXPECT_EQ(Provenance(*curve, "ttft").baseline_ids(0), k000);
  // Against the measured rows it was fitted on: the flat region is flat.
  for (const v1::SweepRow& row : FirstSweep(k000).rows()) {
    if (row.concurrency() > 8) continue;
    EXPECT_NEAR(At(*curve, row.concurrency()).ttft_p50_seconds(), row.ttft().reported_seconds(),
                0.5 * row.ttft().reported_seconds())
        << "c=" << row.concurrency();
  }
}

// A what-if behind another gate than the rows ran behind: the rows' queueing
// is not the query's, so no correction (the figures are the fitted model's).
TEST(PredictLoad, AnotherGateThanTheRowsIsNotCorrectedByThem) {
  v1::PredictLoadRequest gated = FromBaseline(k000, {8, 16, 32});
  absl::StatusOr<v1::LoadCurve> own = PredictLoad(Bundled(), gated);
  gated.set_operator_concurrency_gate(32);
  absl::StatusOr<v1::LoadCurve> wider = PredictLoad(Bundled(), gated);
  ASSERT_TRUE(own.ok()) << own.status();
  ASSERT_TRUE(wider.ok()) << wider.status();
  auto has_note = [](const v1::LoadCurve& c, const std::string& text) {
    return std::any_of(c.notes().begin(), c.notes().end(),
                       [&](const std::string& n) { return n.find(text) != std::string::npos; });
  };
  EXPECT_TRUE(has_note(*own, "corrected by the residuals"));
  EXPECT_FALSE(has_note(*wider, "corrected by the residuals"));
  EXPECT_TRUE(has_note(*wider, "another operator gate"));
  // Behind gate 32 the 16- and 32-user points queue far less than measured.
  for (uint32_t c : {16u, 32u}) {
    EXPECT_LT(At(*wider, c).ttft_p50_seconds(), 0.5 * At(*own, c).ttft_p50_seconds()) << c;
  }
}

v1::PredictLoadRequest Seed002(bool mtp, const std::vector<uint32_t>& cs) {
  v1::PredictLoadRequest r = FromBaseline(k002, cs);
  if (!mtp)
    r.mutable_deployment()->mutable_engine()->set_speculative_method(v1::SPECULATIVE_METHOD_NONE);
  return r;
}

TEST(PredictLoad, Seed002WithoutSpeculationHasNoKneeUpTo20Users) {
  absl::StatusOr<v1::LoadCurve> curve = PredictLoad(Bundled(), Seed002(false, Range(1, 20)));
  ASSERT_TRUE(curve.ok()) << curve.status();
  EXPECT_FALSE(curve->has_knee()) << "knee at " << curve->knee().concurrency();
  EXPECT_GE(curve->slots().slots(), 20u);
  // Throughput still rises with load.
  EXPECT_GT(At(*curve, 20).output_tokens_per_second(), At(*curve, 5).output_tokens_per_second());
}

// The report measured a crossover at 10-12 users (MTP slower per user past
// 12). The model verifies k + 1 tokens per sequence and step, so the share of
// FLOPs, all-reduce bytes and experts touched grows with the batch and the
// MTP advantage must shrink with load. Since TTFT has its own per-request
// latency term, the fit no longer inflates the per-token costs to explain a
// 0.17 s first token, and on this card (dense FP4 peak) the verify cost stays
// small: the model keeps MTP ahead up to 24 users (measured at 20 users:
// 533.55 tok/s with MTP=3 against 580.95 without; predicted about +55% on the
// MTP row, see `capplan accuracy --baseline`). That gap is recorded on the
// load-model issue; this test pins the mechanism the model does carry, at a
// workload no row measured (256 + 384 tokens: the ladder ran 256 output
// tokens, the 20-way run 512), where no measured row corrects either curve
// (model/measured_correction.h) and the two curves are the model's alone.
TEST(PredictLoad, Seed002SpeculativeAdvantageShrinksWithLoad) {
  auto request = [](bool mtp) {
    v1::PredictLoadRequest r = Seed002(mtp, Range(1, 24));
    r.mutable_workload()->set_input_tokens(256);
    r.mutable_workload()->set_output_tokens(384);
    return r;
  };
  absl::StatusOr<v1::LoadCurve> off = PredictLoad(Bundled(), request(false));
  absl::StatusOr<v1::LoadCurve> on = PredictLoad(Bundled(), request(true));
  ASSERT_TRUE(off.ok()) << off.status();
  ASSERT_TRUE(on.ok()) << on.status();
  ASSERT_EQ(off->points_size(), on->points_size());
  std::vector<double> ratio;
  for (int i = 0; i < off->points_size(); ++i) {
    ratio.push_back(on->points(i).output_tokens_per_second() /
                    off->points(i).output_tokens_per_second());
  }
  // MTP faster for a single user (measured 124.61 and 143.69 tok/s with
  // MTP=1 and 2 against 88.50 without).
  EXPECT_GT(ratio.front(), 1.2);
  for (size_t i = 1; i < ratio.size(); ++i) {
    EXPECT_LE(ratio[i], ratio[i - 1] * 1.001) << "at " << off->points(i).concurrency() << " users";
  }
  EXPECT_LT(ratio.back(), 0.9 * ratio.front());
  std::printf("MTP / no-MTP throughput: %.2f at 1 user, %.2f at 24 users\n", ratio.front(),
              ratio.back());
  for (const v1::LoadCurve* c : {&*off, &*on}) {
    for (const std::string& n : c->notes()) {
      EXPECT_EQ(n.find("figures corrected by the residuals"), std::string::npos) << n;
    }
  }
}

// At the ladder's own workload the measured rows correct each curve: the
// report's 20-user figures come back (581.0 tok/s without speculation,
// 533.55 with MTP = 3), so MTP is slower there, as the report measured (its
// crossover at 10-12 users), where the model alone keeps MTP ahead.
TEST(PredictLoad, Seed002MeasuredRowsCorrectEachCurveToItsOwnRuns) {
  absl::StatusOr<v1::LoadCurve> off = PredictLoad(Bundled(), Seed002(false, {1, 5, 20}));
  absl::StatusOr<v1::LoadCurve> on = PredictLoad(Bundled(), Seed002(true, {1, 20}));
  ASSERT_TRUE(off.ok()) << off.status();
  ASSERT_TRUE(on.ok()) << on.status();
  double off20 = 0, on20 = 0;
  for (const v1::SweepRow& row : FirstSweep(k002).rows()) {
    const uint32_t c = row.concurrency();
    if (c != 1 && c != 5 && c != 20) continue;
    const double measured = row.output_tokens_per_second();
    EXPECT_NEAR(At(*off, c).output_tokens_per_second(), measured, 0.02 * measured) << "c=" << c;
    if (c == 20) off20 = measured;
  }
  for (const v1::SpeculativeVariant& v : Bundled().FindBaseline(k002)->speculative_variants()) {
    if (v.concurrency() == 20 && v.speculative().num_speculative_tokens() == 3 &&
        v.has_output_tokens_per_second()) {
      on20 = v.output_tokens_per_second();
    }
  }
  ASSERT_GT(off20, 0);
  ASSERT_GT(on20, 0);
  EXPECT_NEAR(At(*on, 20).output_tokens_per_second(), on20, 0.02 * on20);
  EXPECT_LT(At(*on, 20).output_tokens_per_second(), At(*off, 20).output_tokens_per_second());
}

TEST(PredictLoad, OpenLoopPercentilesOrderedSteepNearSaturationAndUnstablePastIt) {
  for (const char* id : {k000, k002}) {
    // μ(S) from the offered utilisation ρ = λ / μ(S) of one light point.
    v1::PredictLoadRequest probe = FromBaseline(id, {});
    probe.clear_closed_loop();
    probe.mutable_open_loop()->add_arrival_rates_rps(0.1);
    absl::StatusOr<v1::LoadCurve> light = PredictLoad(Bundled(), probe);
    ASSERT_TRUE(light.ok()) << light.status();
    const double mu = 0.1 / light->points(0).utilization();
    v1::PredictLoadRequest r = probe;
    r.mutable_open_loop()->clear_arrival_rates_rps();
    const std::vector<double> rhos = {0.1,  0.3,  0.5,  0.7,   0.8,  0.9,
                                      0.95, 0.98, 0.99, 0.995, 1.05, 1.5};
    for (double rho : rhos) r.mutable_open_loop()->add_arrival_rates_rps(rho * mu);
    absl::StatusOr<v1::LoadCurve> curve = PredictLoad(Bundled(), r);
    ASSERT_TRUE(curve.ok()) << curve.status();
    ASSERT_EQ(curve->points_size(), static_cast<int>(rhos.size()));
    for (int i = 0; i < curve->points_size(); ++i) {
      const v1::LoadCurvePoint& p = curve->points(i);
      // ρ as the model offers it (λ ÷ μ(S)) tracks the requested fraction.
      EXPECT_NEAR(p.utilization(), rhos[i], 0.05 * rhos[i]) << id;
      EXPECT_EQ(p.stable(), p.utilization() < 1) << id << " rho " << rhos[i];
      if (!p.stable()) {
        EXPECT_FALSE(p.has_ttft_p50_seconds());
        EXPECT_FALSE(p.has_ttft_p95_seconds());
        EXPECT_FALSE(p.has_ttft_p99_seconds());
        EXPECT_FALSE(p.has_tpot_seconds());
        EXPECT_FALSE(p.has_e2e_p95_seconds());
        EXPECT_FALSE(p.has_mean_queue_length());
        continue;
      }
      ASSERT_TRUE(p.has_ttft_p50_seconds());
      EXPECT_LE(p.ttft_p50_seconds(), p.ttft_p90_seconds()) << id << " rho " << rhos[i];
      EXPECT_LE(p.ttft_p90_seconds(), p.ttft_p95_seconds()) << id << " rho " << rhos[i];
      EXPECT_LE(p.ttft_p95_seconds(), p.ttft_p99_seconds()) << id << " rho " << rhos[i];
      EXPECT_LE(p.e2e_p50_seconds(), p.e2e_p95_seconds()) << id << " rho " << rhos[i];
      if (i > 0 && curve->points(i - 1).stable()) {
        EXPECT_GE(p.ttft_p95_seconds(), curve->points(i - 1).ttft_p95_seconds()) << id;
      }
    }
    // Past saturation the answer still comes back, marked unstable.
    EXPECT_FALSE(curve->points(curve->points_size() - 1).stable()) << id;
    EXPECT_FALSE(curve->points(curve->points_size() - 2).stable()) << id;
    // Steep towards ρ → 1: the last steps add more than the whole first half.
    int last = 0;
    for (int i = 0; i < curve->points_size(); ++i) {
      if (curve->points(i).stable()) last = i;
    }
    ASSERT_GE(last, 8) << id;
    EXPECT_GT(curve->points(last).utilization(), 0.98) << id;
    const double p95_01 = curve->points(0).ttft_p95_seconds();
    const double p95_05 = curve->points(2).ttft_p95_seconds();
    const double p95_0995 = curve->points(last).ttft_p95_seconds();
    std::printf("%s open loop TTFT p95: rho 0.1 %.3f s, 0.5 %.3f s, last stable %.3f s\n", id,
                p95_01, p95_05, p95_0995);
    EXPECT_GT(p95_0995 - curve->points(6).ttft_p95_seconds(), p95_05 - p95_01) << id;
    EXPECT_GT(p95_0995, 3 * p95_01) << id;
    EXPECT_THAT(curve->safe_operating_point().binding(),
                ::testing::AnyOf(v1::LOAD_BINDING_STABILITY, v1::LOAD_BINDING_SLOT_WAIT));
  }
}

// Llama-3.3-70B on 4 x H200 under SGLang: its class prior was learned on
// mixture-of-experts runs only, so a dense model takes the Hopper prior; a
// DeepSeek-R1 run of the same class keeps the class prior.
TEST(PredictLoad, ADenseModelDoesNotBorrowAMixtureOfExpertsClassPrior) {
  auto family_note = [](const v1::LoadCurve& c) {
    return std::any_of(c.notes().begin(), c.notes().end(), [](const std::string& n) {
      return n.find("'nvidia-hopper-nvlink-sglang'") != n.npos &&
             n.find("learned only on mixture-of-experts models") != n.npos &&
             n.find("'nvidia-hopper+") != n.npos;
    });
  };
  v1::PredictLoadRequest llama =
      FromBaseline("sglang-llama-3.3-70b-instruct-h200x4-random-1024-1024-open", {});
  llama.clear_closed_loop();
  llama.mutable_open_loop()->add_arrival_rates_rps(2);
  absl::StatusOr<v1::LoadCurve> curve = PredictLoad(Bundled(), llama);
  ASSERT_TRUE(curve.ok()) << curve.status();
  EXPECT_TRUE(family_note(*curve));
  absl::StatusOr<v1::LoadCurve> moe = PredictLoad(
      Bundled(),
      FromBaseline("sglang-0.4.3-deepseek-r1-h200x8-dpattn-random-3200-800-closed", {8}));
  ASSERT_TRUE(moe.ok()) << moe.status();
  EXPECT_FALSE(family_note(*moe));
}

TEST(PredictLoad, TiersMeasuredCalibratedExtrapolatedAndRoofline) {
  std::vector<uint32_t> ladder = SweepConcurrencies(k002);
  absl::StatusOr<v1::LoadCurve> measured = PredictLoad(Bundled(), Seed002(false, ladder));
  ASSERT_TRUE(measured.ok()) << measured.status();
  EXPECT_EQ(Provenance(*measured, "throughput").tier(), v1::TIER_MEASURED);
  EXPECT_EQ(Provenance(*measured, "ttft").tier(), v1::TIER_MEASURED);

  // Between measured concurrencies: calibrated; beyond them: extrapolated
  // with a wider band.
  absl::StatusOr<v1::LoadCurve> inside = PredictLoad(Bundled(), Seed002(false, {ladder[0] + 1}));
  ASSERT_TRUE(inside.ok()) << inside.status();
  EXPECT_EQ(Provenance(*inside, "throughput").tier(), v1::TIER_CALIBRATED);
  absl::StatusOr<v1::LoadCurve> beyond =
      PredictLoad(Bundled(), Seed002(false, {4 * ladder.back()}));
  ASSERT_TRUE(beyond.ok()) << beyond.status();
  EXPECT_EQ(Provenance(*beyond, "throughput").tier(), v1::TIER_EXTRAPOLATED);
  EXPECT_GT(Provenance(*beyond, "throughput").error_band_fraction(),
            Provenance(*inside, "throughput").error_band_fraction());

  // Another card, never measured: the closest efficiency prior, extrapolated,
  // naming the baselines it was learned from.
  v1::PredictLoadRequest other = Seed002(false, {1, 4});
  other.mutable_deployment()->set_hardware_id("nvidia-h100-sxm-80gb");
  absl::StatusOr<v1::LoadCurve> transferred = PredictLoad(Bundled(), other);
  ASSERT_TRUE(transferred.ok()) << transferred.status();
  EXPECT_EQ(Provenance(*transferred, "throughput").tier(), v1::TIER_EXTRAPOLATED);
  EXPECT_GT(Provenance(*transferred, "throughput").baseline_ids_size(), 0);
  EXPECT_TRUE(std::any_of(transferred->notes().begin(), transferred->notes().end(),
                          [](const std::string& n) { return n.find("prior '") != n.npos; }));

  // No catalogue rows asked for: the roofline with typical efficiencies.
  v1::PredictLoadRequest bare = Seed002(false, {1, 4});
  bare.set_no_catalog_calibration(true);
  absl::StatusOr<v1::LoadCurve> roofline = PredictLoad(Bundled(), bare);
  ASSERT_TRUE(roofline.ok()) << roofline.status();
  EXPECT_EQ(Provenance(*roofline, "ttft").tier(), v1::TIER_ROOFLINE);
  EXPECT_EQ(Provenance(*roofline, "ttft").baseline_ids_size(), 0);
  EXPECT_TRUE(
      std::any_of(roofline->notes().begin(), roofline->notes().end(),
                  [](const std::string& n) { return n.find("typical efficiencies") != n.npos; }));
}

TEST(PredictLoad, ANamedBaselineIsFittedOnItsOwnRowsAndAnEqualDeploymentOnAllOfThem) {
  // Two public runs of one configuration (4x B300, Qwen3.5-397B FP8, SGLang
  // TP4): one under Confidential Computing, 15-46% slower. Named by its id,
  // the CC run is fitted on its own rows; the same deployment spelt out pools
  // every run that measured it.
  const char* cc = "sglang-0.5.10-qwen3.5-397b-a17b-fp8-b300cc-x4-random-1024-1024-closed";
  const v1::Baseline* b = Bundled().FindBaseline(cc);
  ASSERT_NE(b, nullptr);
  absl::StatusOr<v1::LoadCurve> named =
      PredictLoad(Bundled(), FromBaseline(cc, SweepConcurrencies(cc)));
  ASSERT_TRUE(named.ok()) << named.status();
  EXPECT_THAT(Provenance(*named, "throughput").baseline_ids(), ::testing::ElementsAre(cc));
  std::vector<double> errors;
  for (const v1::SweepRow& row : b->sweeps(0).rows()) {
    errors.push_back(std::abs(At(*named, row.concurrency()).output_tokens_per_second() /
                                  row.output_tokens_per_second() -
                              1));
  }
  std::sort(errors.begin(), errors.end());
  EXPECT_LE(errors[errors.size() / 2], 0.10);

  v1::PredictLoadRequest spelt = FromBaseline(cc, SweepConcurrencies(cc));
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(model_id: "qwen3.5-397b-a17b"
           hardware_id: "nvidia-b300-288gb"
           gpu_count: 4
           parallelism { tp: 4 ep: 1 }
           weight_format: WEIGHT_FORMAT_FP8_BLOCK
           engine {
             kind: ENGINE_KIND_SGLANG
             version: "0.5.10.post1"
             mem_fraction_static: 0.8
             max_model_len: 2068
             max_num_batched_tokens: 16384
             kv_cache_dtype: KV_CACHE_DTYPE_FP8
           })pb",
      spelt.mutable_deployment()));
  spelt.mutable_workload()->set_input_tokens(758);  // the runs' mean
  spelt.mutable_workload()->set_output_tokens(758);
  absl::StatusOr<v1::LoadCurve> pooled = PredictLoad(Bundled(), spelt);
  ASSERT_TRUE(pooled.ok()) << pooled.status();
  EXPECT_GE(Provenance(*pooled, "throughput").baseline_ids_size(), 2);
}

TEST(PredictLoad, InlineCalibrationAloneFitsTheUsersRows) {
  // The 002 ladder sent as the user's own benchmark, the catalogue ignored
  // (out-of-sample accuracy is accuracy_test's; this checks the path).
  const v1::Sweep& ladder = FirstSweep(k002);
  v1::PredictLoadRequest r = Seed002(false, SweepConcurrencies(k002));
  r.set_no_catalog_calibration(true);
  *r.add_calibration() = ladder;
  absl::StatusOr<v1::LoadCurve> own = PredictLoad(Bundled(), r);
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_EQ(Provenance(*own, "throughput").tier(), v1::TIER_CALIBRATED);
  EXPECT_EQ(Provenance(*own, "throughput").baseline_ids_size(), 0);
  std::vector<double> errors;
  for (int i = 0; i < ladder.rows_size(); ++i) {
    const double measured = ladder.rows(i).output_tokens_per_second();
    errors.push_back(std::abs(own->points(i).output_tokens_per_second() / measured - 1));
  }
  std::sort(errors.begin(), errors.end());
  EXPECT_LE(errors[errors.size() / 2], 0.17);  // 15% before the physical floor
  // Without the catalogue the fit differs from the catalogue's (which also
  // holds the speculative and long-context rows).
  absl::StatusOr<v1::LoadCurve> catalogue =
      PredictLoad(Bundled(), Seed002(false, SweepConcurrencies(k002)));
  ASSERT_TRUE(catalogue.ok()) << catalogue.status();
  EXPECT_NE(own->coefficients().observations(), catalogue->coefficients().observations());
}

TEST(PredictLoad, OperatorGateFromTheRequestBindsTheSlots) {
  v1::PredictLoadRequest r = Seed002(false, {2, 4, 8});
  r.set_operator_concurrency_gate(4);
  absl::StatusOr<v1::LoadCurve> curve = PredictLoad(Bundled(), r);
  ASSERT_TRUE(curve.ok()) << curve.status();
  EXPECT_EQ(curve->slots().slots(), 4u);
  EXPECT_EQ(curve->slots().bound(), v1::SLOT_BOUND_OPERATOR_GATE);
  EXPECT_GT(curve->points(2).slot_wait_probability(), 0);
  EXPECT_EQ(curve->safe_operating_point().concurrency(), 4u);
  EXPECT_EQ(curve->safe_operating_point().binding(), v1::LOAD_BINDING_SLOT_WAIT);
}

TEST(PredictLoad, DeploymentThatDoesNotFitIsAFailedPrecondition) {
  v1::PredictLoadRequest r;
  r.mutable_deployment()->set_model_id("llama-3.1-70b-instruct");
  r.mutable_deployment()->set_hardware_id("nvidia-rtx-4090-24gb");
  r.mutable_workload()->set_input_tokens(100);
  r.mutable_workload()->set_output_tokens(100);
  r.mutable_closed_loop()->add_concurrencies(1);
  EXPECT_THAT(PredictLoad(Bundled(), r),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("PredictLoadRequest.deployment does not fit: ")));
}

// vLLM's hybrid allocator (Qwen3.5: attention and Gated DeltaNet layers in
// groups sharing one pool of 784-token blocks): a short request takes one
// block in every group, its state blocks included, so the slots are the
// pool's blocks per group (kv_pool_tokens / block), not kv_pool_tokens / 80
// tokens, which would admit ten times as many.
TEST(PredictLoad, HybridModelSlotsCountWholeBlocksInEveryGroup) {
  v1::PredictLoadRequest r;
  r.mutable_deployment()->set_model_id("qwen3.5-27b");
  r.mutable_deployment()->set_hardware_id("nvidia-h100-sxm-80gb");
  r.mutable_deployment()->mutable_engine()->set_kind(v1::ENGINE_KIND_VLLM);
  r.mutable_deployment()->mutable_engine()->set_version("0.21.0");
  r.mutable_deployment()->mutable_engine()->set_max_model_len(16384);
  r.mutable_workload()->set_input_tokens(60);
  r.mutable_workload()->set_output_tokens(40);
  for (uint32_t c : {1, 512}) r.mutable_closed_loop()->add_concurrencies(c);
  absl::StatusOr<v1::LoadCurve> curve = PredictLoad(Bundled(), r);
  ASSERT_TRUE(curve.ok()) << curve.status();
  const uint64_t pool = curve->memory().kv_pool_tokens();
  const uint32_t block = curve->memory().deployment().block_size();
  ASSERT_GT(block, 100u);
  EXPECT_EQ(curve->slots().bound(), v1::SLOT_BOUND_KV_POOL);
  EXPECT_EQ(curve->slots().slots(), pool / block);
  EXPECT_LT(curve->slots().slots(), pool / 80 / 5);
}

struct BadCase {
  std::string name;
  void (*mutate)(v1::PredictLoadRequest*);
  std::string expected;
};

class PredictLoadBadInput : public ::testing::TestWithParam<BadCase> {};

TEST_P(PredictLoadBadInput, IsInvalidArgumentNamingTheField) {
  v1::PredictLoadRequest r;
  r.mutable_deployment()->set_model_id("qwen3-8b");
  r.mutable_deployment()->set_hardware_id("nvidia-l4-24gb");
  r.mutable_workload()->set_input_tokens(512);
  r.mutable_workload()->set_output_tokens(128);
  for (uint32_t c : {1, 2, 4}) r.mutable_closed_loop()->add_concurrencies(c);
  GetParam().mutate(&r);
  EXPECT_THAT(PredictLoad(Bundled(), r),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().expected)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, PredictLoadBadInput,
    ::testing::Values(
        BadCase{"ZeroInput",
                [](v1::PredictLoadRequest* r) { r->mutable_workload()->set_input_tokens(0); },
                "PredictLoadRequest.workload.input_tokens = 0; must be > 0"},
        BadCase{"NegativeOutput",
                [](v1::PredictLoadRequest* r) { r->mutable_workload()->set_output_tokens(-5); },
                "PredictLoadRequest.workload.output_tokens = -5"},
        BadCase{"NegativeRate",
                [](v1::PredictLoadRequest* r) {
                  r->mutable_open_loop()->add_arrival_rates_rps(1);
                  r->mutable_open_loop()->add_arrival_rates_rps(-2);
                },
                "PredictLoadRequest.open_loop.arrival_rates_rps[1] = -2"},
        BadCase{"ZeroSlo",
                [](v1::PredictLoadRequest* r) { r->mutable_slo()->set_ttft_p95_seconds(0); },
                "PredictLoadRequest.slo.ttft_p95_seconds = 0"},
        BadCase{"NegativeTpotSlo",
                [](v1::PredictLoadRequest* r) { r->mutable_slo()->set_tpot_seconds(-0.1); },
                "PredictLoadRequest.slo.tpot_seconds = -0.1"},
        BadCase{
            "TooManyPoints",
            [](v1::PredictLoadRequest* r) {
              r->mutable_closed_loop()->clear_concurrencies();
              for (uint32_t c = 1; c <= 4097; ++c) r->mutable_closed_loop()->add_concurrencies(c);
            },
            "PredictLoadRequest.closed_loop.concurrencies has 4097 entries; must be at most 4096"},
        BadCase{"NotIncreasing",
                [](v1::PredictLoadRequest* r) { r->mutable_closed_loop()->add_concurrencies(4); },
                "PredictLoadRequest.closed_loop.concurrencies[3] = 4; must be greater than"},
        BadCase{"ZeroConcurrency",
                [](v1::PredictLoadRequest* r) {
                  r->mutable_closed_loop()->clear_concurrencies();
                  r->mutable_closed_loop()->add_concurrencies(0);
                },
                "PredictLoadRequest.closed_loop.concurrencies[0] = 0"},
        BadCase{"NoAxis", [](v1::PredictLoadRequest* r) { r->clear_load(); },
                "PredictLoadRequest.load"},
        BadCase{"BadCalibrationRow",
                [](v1::PredictLoadRequest* r) {
                  r->add_calibration()->add_rows()->set_output_tokens_per_second(3);
                },
                "PredictLoadRequest.calibration[0].rows[0]: set concurrency or arrival_rate_rps"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

// ------------------------------------------------------ KV admission, pools

v1::PredictLoadRequest Llama8b(v1::EngineKind engine, std::optional<uint64_t> pool) {
  v1::PredictLoadRequest r;
  v1::Deployment* d = r.mutable_deployment();
  d->set_model_id("llama-3.1-8b-instruct");
  d->set_hardware_id("nvidia-h100-sxm-80gb");
  d->mutable_engine()->set_kind(engine);
  if (pool.has_value()) d->mutable_engine()->set_kv_pool_tokens(*pool);
  r.mutable_workload()->set_input_tokens(1000);
  r.mutable_workload()->set_output_tokens(200);
  r.mutable_closed_loop()->add_concurrencies(4);
  return r;
}

// A stated pool replaces the memory model's, and the slots follow the
// engine's rule for holding KV: vLLM allocates as tokens appear (a request
// holds input + half its answer on average), SGLang keeps 0.098 of the running
// answers free (data/engines/sglang-0.4.txtpb), an engine without a preset
// reserves input + output.
TEST(PredictLoad, StatedKvPoolSetsTheSlotsByTheEnginesAdmissionRule) {
  constexpr uint64_t kPool = 22000;
  absl::StatusOr<v1::LoadCurve> vllm = PredictLoad(Bundled(), Llama8b(v1::ENGINE_KIND_VLLM, kPool));
  ASSERT_TRUE(vllm.ok()) << vllm.status();
  EXPECT_EQ(vllm->memory().kv_pool_tokens(), kPool);
  EXPECT_EQ(vllm->slots().bound(), v1::SLOT_BOUND_KV_POOL);
  EXPECT_EQ(vllm->slots().slots(), 20u);  // floor(22000 / (1000 + 100))
  absl::StatusOr<v1::LoadCurve> sglang =
      PredictLoad(Bundled(), Llama8b(v1::ENGINE_KIND_SGLANG, kPool));
  ASSERT_TRUE(sglang.ok()) << sglang.status();
  EXPECT_EQ(sglang->slots().slots(), 19u);  // floor(22000 / (1000 + 100 x 1.098))
  bool noted = false;
  for (const std::string& n : vllm->notes()) noted |= n.find("KV admission: allocate") == 0;
  EXPECT_TRUE(noted);
  // Without the stated pool the memory model's (far larger) pool binds nothing here.
  absl::StatusOr<v1::LoadCurve> own =
      PredictLoad(Bundled(), Llama8b(v1::ENGINE_KIND_VLLM, std::nullopt));
  ASSERT_TRUE(own.ok()) << own.status();
  EXPECT_GT(own->memory().kv_pool_tokens(), 10 * kPool);
}

TEST(PredictLoad, StatedKvPoolOutOfRangeNamesTheField) {
  for (uint64_t bad : {uint64_t{0}, (uint64_t{1} << 40) + 1}) {
    EXPECT_THAT(PredictLoad(Bundled(), Llama8b(v1::ENGINE_KIND_VLLM, bad)).status(),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("PredictLoadRequest.deployment.engine.kv_pool_tokens")));
  }
}

// The simulator's second opinion agrees with the analytical curve where the
// analytical model is exact enough (a light closed loop) and refuses a grid
// too large to replay.
TEST(SimulateLoad, AgreesOnALightLoopAndBoundsThePoints) {
  v1::PredictLoadRequest r = Llama8b(v1::ENGINE_KIND_VLLM, std::nullopt);
  r.mutable_closed_loop()->add_concurrencies(8);
  absl::StatusOr<v1::LoadCurve> sim = SimulateLoad(Bundled(), r);
  ASSERT_TRUE(sim.ok()) << sim.status();
  absl::StatusOr<v1::LoadCurve> model = PredictLoad(Bundled(), r);
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(sim->points_size(), 2);
  EXPECT_FALSE(sim->has_knee());
  for (int i = 0; i < 2; ++i) {
    EXPECT_EQ(sim->points(i).concurrency(), model->points(i).concurrency());
    EXPECT_NEAR(
        sim->points(i).output_tokens_per_second() / model->points(i).output_tokens_per_second(),
        1.0, 0.05);
    EXPECT_TRUE(sim->points(i).has_ttft_p95_seconds());
  }
  v1::PredictLoadRequest big = r;
  big.mutable_closed_loop()->clear_concurrencies();
  for (uint32_t c = 1; c <= kMaxSimulatedPoints + 1; ++c) {
    big.mutable_closed_loop()->add_concurrencies(c);
  }
  EXPECT_THAT(SimulateLoad(Bundled(), big).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at most 32")));
}

}  // namespace
}  // namespace capplan::service
