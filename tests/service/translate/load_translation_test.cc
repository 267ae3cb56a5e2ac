#include "service/translate/load_translation.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

template <typename M>
M Text(const std::string& text) {
  M m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &m)) << text;
  return m;
}

// ------------------------------------------------------------ workloads

TEST(ToModelWorkload, CopiesMeansAndLeavesUnsetSpreadsAtZero) {
  model::Workload w = ToModelWorkload(Text<v1::WorkloadSpec>(
      "input_tokens: 1000 output_tokens: 200 output_tokens_cv: 0.5 prefix_cache_hit_rate: 0.25"));
  EXPECT_EQ(w.input_tokens, 1000);
  EXPECT_EQ(w.output_tokens, 200);
  EXPECT_EQ(w.input_tokens_cv, 0);
  EXPECT_EQ(w.output_tokens_cv, 0.5);
  EXPECT_EQ(w.prefix_cache_hit_rate, 0.25);
}

TEST(DraftTokens, ZeroWhenOffAtLeastOneWhenOn) {
  EXPECT_EQ(DraftTokens(v1::SpeculativeDecoding()), 0);
  EXPECT_EQ(DraftTokens(Text<v1::SpeculativeDecoding>(
                "method: SPECULATIVE_METHOD_NONE num_speculative_tokens: 3")),
            0);
  EXPECT_EQ(DraftTokens(Text<v1::SpeculativeDecoding>("method: SPECULATIVE_METHOD_MTP")), 1);
  EXPECT_EQ(DraftTokens(Text<v1::SpeculativeDecoding>(
                "method: SPECULATIVE_METHOD_EAGLE num_speculative_tokens: 4")),
            4);
}

// --------------------------------------------------------- SweepWorkload

TEST(SweepWorkload, StatedWorkloadIsTakenAsIsWithoutNotes) {
  const v1::Baseline b = Text<v1::Baseline>(R"(id: "b" sweeps {
      name: "s" workload { input_tokens: 800 output_tokens: 150 prefix_cache_hit_rate: 0.5 } })");
  std::vector<std::string> notes;
  absl::StatusOr<v1::WorkloadSpec> w = SweepWorkload(b, b.sweeps(0), &notes);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->input_tokens(), 800);
  EXPECT_EQ(w->output_tokens(), 150);
  EXPECT_EQ(w->prefix_cache_hit_rate(), 0.5);
  EXPECT_THAT(notes, IsEmpty());
}

TEST(SweepWorkload, OutputDerivedFromRowsAndInputFromTheSustainedRun) {
  // Rows: 300 tok/s ÷ 1.5 req/s = 200 tokens; 500 ÷ 2 = 250; the third row
  // has no req/s and is not used. Mean (200 + 250) / 2 = 225.
  const v1::Baseline b = Text<v1::Baseline>(R"(id: "b"
      sustained_runs { name: "soak" workload { output_tokens: 100 } }
      sustained_runs { name: "long" workload { input_tokens: 1000 } }
      sweeps { name: "s" closed_loop: true
        rows { concurrency: 1 output_tokens_per_second: 300 requests_per_second: 1.5 }
        rows { concurrency: 2 output_tokens_per_second: 500 requests_per_second: 2 }
        rows { concurrency: 4 output_tokens_per_second: 900 } })");
  std::vector<std::string> notes;
  absl::StatusOr<v1::WorkloadSpec> w = SweepWorkload(b, b.sweeps(0), &notes);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_DOUBLE_EQ(w->output_tokens(), 225);
  // The first sustained run stating an input: "long" (1000).
  EXPECT_EQ(w->input_tokens(), 1000);
  EXPECT_FALSE(w->has_prefix_cache_hit_rate());
  EXPECT_THAT(notes, ElementsAre(HasSubstr("b/s states no output length: 225.0 tokens per request "
                                           "derived as output tok/s ÷ req/s (mean of 2 rows"),
                                 Eq("b/s states no input length: 1000 tokens, the input of its "
                                    "sustained run 'long'")));
}

TEST(SweepWorkload, InputFallsBackToTheOutputLength) {
  const v1::Baseline b =
      Text<v1::Baseline>(R"(id: "b" sweeps { name: "s" workload { output_tokens: 300 } })");
  std::vector<std::string> notes;
  absl::StatusOr<v1::WorkloadSpec> w = SweepWorkload(b, b.sweeps(0), &notes);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->input_tokens(), 300);
  EXPECT_THAT(notes, ElementsAre("b/s states no input length: 300 tokens, its output length "
                                 "(assumed)"));
  // Notes are optional.
  EXPECT_TRUE(SweepWorkload(b, b.sweeps(0), nullptr).ok());
}

TEST(SweepWorkload, NoOutputAndNothingToDeriveItFromIsAFailedPrecondition) {
  const v1::Baseline b = Text<v1::Baseline>(R"(id: "b" sweeps { name: "s"
      rows { concurrency: 1 output_tokens_per_second: 300 } })");
  EXPECT_THAT(SweepWorkload(b, b.sweeps(0), nullptr),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       Eq("baseline 'b' sweep 's' states no output length and no row gives "
                          "both output tok/s and req/s to derive it")));
}

// -------------------------------------------------------- BaselinePoints

constexpr char kBaseline[] = R"(id: "b"
  deployment { engine { speculative { method: SPECULATIVE_METHOD_MTP num_speculative_tokens: 2 } } }
  sweeps { name: "ladder" closed_loop: true workload { input_tokens: 1000 output_tokens: 200 }
    rows { concurrency: 1 output_tokens_per_second: 50 requests_per_second: 0.25
           ttft { p50_seconds: 0.2 mean_seconds: 0.3 }
           tpot { p50_seconds: 0.02 mean_seconds: 0.021 }
           e2e { reported_seconds: 4 } }
    rows { concurrency: 8 output_tokens_per_second: 320 ttft { mean_seconds: 0.5 } }
    rows { label: "no load stated" output_tokens_per_second: 1 } }
  sweeps { name: "plain" closed_loop: false workload { input_tokens: 500 output_tokens: 100 }
    speculative { method: SPECULATIVE_METHOD_NONE }
    rows { arrival_rate_rps: 2 output_tokens_per_second: 200 } }
  sweeps { name: "underived" rows { concurrency: 1 output_tokens_per_second: 10 } }
  long_context_runs { name: "250k" workload { input_tokens: 250000 output_tokens: 6000 }
    speculative { method: SPECULATIVE_METHOD_NONE } concurrency: 1
    ttft { p50_seconds: 30 } tpot { mean_seconds: 0.01 } }
  long_context_runs { name: "unstated-spec" workload { input_tokens: 200000 output_tokens: 10 }
    concurrency: 1 ttft { p50_seconds: 20 } }
  speculative_variants { name: "mtp3" speculative { method: SPECULATIVE_METHOD_MTP
    num_speculative_tokens: 3 } concurrency: 4 output_tokens_per_second: 400
    ttft { p50_seconds: 0.4 } }
  speculative_variants { name: "off" speculative { method: SPECULATIVE_METHOD_NONE }
    concurrency: 1 output_tokens_per_second: 60 })";

TEST(BaselinePoints, RowsRunsAndVariantsWithTheirSources) {
  std::vector<std::string> notes;
  absl::StatusOr<std::vector<SourcedPoint>> points =
      BaselinePoints(Text<v1::Baseline>(kBaseline), /*with_variants=*/true, &notes);
  ASSERT_TRUE(points.ok()) << points.status();
  // ladder: 2 rows (the third states no load); plain: 1; underived: none
  // (noted); long runs: 250k only (the other states no speculative
  // setting); variants: mtp3 only ("off" does not speculate).
  ASSERT_EQ(points->size(), 5u);
  const SourcedPoint& c1 = (*points)[0];
  EXPECT_EQ(c1.baseline_id, "b");
  EXPECT_EQ(c1.sweep, "ladder");
  EXPECT_EQ(c1.point.source, "b/ladder/c=1");
  EXPECT_EQ(c1.point.concurrency, 1);
  EXPECT_FALSE(c1.point.arrival_rate_rps.has_value());
  EXPECT_EQ(c1.point.workload.input_tokens, 1000);
  EXPECT_EQ(c1.point.workload.output_tokens, 200);  // the sweep's, not 50 ÷ 0.25
  EXPECT_EQ(c1.point.ttft_seconds, 0.2);            // TTFT prefers the p50
  EXPECT_EQ(c1.point.tpot_seconds, 0.021);          // TPOT prefers the mean
  EXPECT_EQ(c1.point.e2e_seconds, 4);               // the unnamed figure when nothing else
  EXPECT_EQ(c1.point.requests_per_second, 0.25);
  // The baseline's speculation: MTP with 2 draft tokens.
  EXPECT_TRUE(c1.speculative);
  EXPECT_EQ(c1.draft_tokens, 2);
  const SourcedPoint& c8 = (*points)[1];
  EXPECT_EQ(c8.point.source, "b/ladder/c=8");
  EXPECT_EQ(c8.point.ttft_seconds, 0.5);  // the mean when no p50
  EXPECT_FALSE(c8.point.tpot_seconds.has_value());
  const SourcedPoint& open = (*points)[2];
  EXPECT_EQ(open.point.source, "b/plain/rate=2");
  EXPECT_EQ(open.point.arrival_rate_rps, 2.0);
  EXPECT_FALSE(open.speculative);  // the sweep's own setting
  EXPECT_EQ(open.draft_tokens, 0);
  const SourcedPoint& run = (*points)[3];
  EXPECT_EQ(run.point.source, "b/250k/c=1");
  EXPECT_EQ(run.point.workload.input_tokens, 250000);
  EXPECT_EQ(run.point.ttft_seconds, 30);
  EXPECT_EQ(run.point.tpot_seconds, 0.01);
  EXPECT_FALSE(run.speculative);
  const SourcedPoint& variant = (*points)[4];
  EXPECT_EQ(variant.point.source, "b/mtp3/c=4");
  EXPECT_TRUE(variant.speculative);
  EXPECT_EQ(variant.draft_tokens, 3);
  // The first usable sweep's workload; 400 tok/s ÷ 4 users = 100 per user.
  EXPECT_EQ(variant.point.workload.input_tokens, 1000);
  EXPECT_EQ(variant.point.per_user_output_tokens_per_second, 100);
  EXPECT_EQ(variant.point.ttft_seconds, 0.4);
  EXPECT_THAT(notes, ::testing::Contains(HasSubstr("baseline 'b' sweep 'underived' states no "
                                                   "output length")));
  // AsRow points into the object.
  EXPECT_EQ(variant.AsRow().point, &variant.point);
  EXPECT_EQ(variant.AsRow().draft_tokens, 3);
}

TEST(BaselinePoints, VariantsOnlyWhenAsked) {
  absl::StatusOr<std::vector<SourcedPoint>> points =
      BaselinePoints(Text<v1::Baseline>(kBaseline), /*with_variants=*/false, nullptr);
  ASSERT_TRUE(points.ok()) << points.status();
  EXPECT_EQ(points->size(), 4u);
}

TEST(BaselinePoints, RowOutputDerivedWhenTheSweepStatesNone) {
  // No output length: each row is fitted at its own output tok/s ÷ req/s.
  const v1::Baseline b = Text<v1::Baseline>(R"(id: "b" sweeps { name: "s" closed_loop: true
      workload { input_tokens: 100 }
      rows { concurrency: 1 output_tokens_per_second: 300 requests_per_second: 1.5 }
      rows { concurrency: 2 output_tokens_per_second: 500 requests_per_second: 2 } })");
  absl::StatusOr<std::vector<SourcedPoint>> points = BaselinePoints(b, false, nullptr);
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(points->size(), 2u);
  EXPECT_DOUBLE_EQ((*points)[0].point.workload.output_tokens, 200);  // 300 / 1.5
  EXPECT_DOUBLE_EQ((*points)[1].point.workload.output_tokens, 250);  // 500 / 2
}

TEST(BaselinePoints, RowsAreFittedAtTheLengthsTheirRunsState) {
  // The runs of one sweep drew their own random lengths (751 and 6,374 input
  // tokens): each row keeps its own, over the sweep's stated one and over an
  // output derived from tok/s ÷ req/s (600 ÷ 0.8 = 750 would be the ratio).
  const v1::Baseline b = Text<v1::Baseline>(R"(id: "b" sweeps { name: "s" closed_loop: true
      workload { input_tokens: 1024 }
      rows { concurrency: 1 output_tokens_per_second: 600 requests_per_second: 0.8
             mean_input_tokens: 751 mean_output_tokens: 744.85 }
      rows { concurrency: 2 output_tokens_per_second: 500 requests_per_second: 2 } })");
  absl::StatusOr<std::vector<SourcedPoint>> points = BaselinePoints(b, false, nullptr);
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(points->size(), 2u);
  EXPECT_DOUBLE_EQ((*points)[0].point.workload.input_tokens, 751);
  EXPECT_DOUBLE_EQ((*points)[0].point.workload.output_tokens, 744.85);
  EXPECT_DOUBLE_EQ((*points)[1].point.workload.input_tokens, 1024);  // the sweep's
  EXPECT_DOUBLE_EQ((*points)[1].point.workload.output_tokens, 250);  // 500 / 2
}

TEST(SweepWorkload, LengthsTheRowsStateBeatTheRatioAndTheAssumption) {
  // No sweep-wide length: the mean of what the rows state, before the
  // output tok/s ÷ req/s ratio (900 ÷ 1 = 900) and before "input = output".
  const v1::Baseline b = Text<v1::Baseline>(R"(id: "b" sweeps { name: "s" closed_loop: true
      rows { concurrency: 4 output_tokens_per_second: 900 requests_per_second: 1
             mean_input_tokens: 6374.5 mean_output_tokens: 744.85 }
      rows { concurrency: 8 mean_input_tokens: 6164.5 mean_output_tokens: 772.35 } })");
  std::vector<std::string> notes;
  absl::StatusOr<v1::WorkloadSpec> w = SweepWorkload(b, b.sweeps(0), &notes);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_DOUBLE_EQ(w->input_tokens(), 6269.5);
  EXPECT_DOUBLE_EQ(w->output_tokens(), 758.6);
  EXPECT_THAT(notes,
              ElementsAre(Eq("b/s states no single output length: 758.6 tokens per request, "
                             "the mean of the 2 rows that state one (745 to 772; those rows are "
                             "fitted at their own)"),
                          Eq("b/s states no single input length: 6270 tokens per request, the "
                             "mean of the 2 rows that state one (6164 to 6374; those rows are "
                             "fitted at their own)")));
}

// ----------------------------------------------------------- InlinePoints

TEST(InlinePoints, RowsGetTheRequestsWorkloadAndTheirPath) {
  const std::vector<v1::Sweep> sweeps = {Text<v1::Sweep>(R"(name: "mine"
      workload { input_tokens: 2000 }
      rows { concurrency: 4 output_tokens_per_second: 100 ttft { p50_seconds: 0.3 } }
      rows { arrival_rate_rps: 0.5 output_tokens_per_second: 90 })")};
  const v1::WorkloadSpec request = Text<v1::WorkloadSpec>("input_tokens: 1000 output_tokens: 200");
  absl::StatusOr<std::vector<SourcedPoint>> points = InlinePoints(sweeps, request, "P");
  ASSERT_TRUE(points.ok()) << points.status();
  ASSERT_EQ(points->size(), 2u);
  EXPECT_EQ((*points)[0].point.source, "P.calibration[0].rows[0]");
  EXPECT_EQ((*points)[0].baseline_id, "");
  EXPECT_EQ((*points)[0].point.concurrency, 4);
  // The sweep's input overrides the request's; the output is the request's.
  EXPECT_EQ((*points)[0].point.workload.input_tokens, 2000);
  EXPECT_EQ((*points)[0].point.workload.output_tokens, 200);
  EXPECT_EQ((*points)[1].point.source, "P.calibration[0].rows[1]");
  EXPECT_EQ((*points)[1].point.arrival_rate_rps, 0.5);
  EXPECT_TRUE(InlinePoints({}, request, "P")->empty());
}

struct InlineBad {
  std::string name;
  std::string second_sweep;  // calibration[1]; calibration[0] is valid
  std::string message;
};

class InlinePointsErrors : public ::testing::TestWithParam<InlineBad> {};

TEST_P(InlinePointsErrors, NameTheSweepRowAndField) {
  const std::vector<v1::Sweep> sweeps = {
      Text<v1::Sweep>("rows { concurrency: 1 output_tokens_per_second: 10 }"),
      Text<v1::Sweep>(GetParam().second_sweep)};
  EXPECT_THAT(InlinePoints(sweeps, Text<v1::WorkloadSpec>("input_tokens: 100 output_tokens: 10"),
                           "PredictLoadRequest"),
              StatusIs(absl::StatusCode::kInvalidArgument, Eq(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, InlinePointsErrors,
    ::testing::Values(
        InlineBad{"NoRows", "name: \"x\"",
                  "PredictLoadRequest.calibration[1].rows is empty; give at least one row"},
        InlineBad{"NoLoad", "rows { concurrency: 1 } rows { output_tokens_per_second: 5 }",
                  "PredictLoadRequest.calibration[1].rows[1]: set concurrency or "
                  "arrival_rate_rps"},
        InlineBad{"ZeroConcurrency", "rows { concurrency: 0 }",
                  "PredictLoadRequest.calibration[1].rows[0].concurrency = 0; must be >= 1"},
        InlineBad{"NegativeRate", "rows { arrival_rate_rps: -1 }",
                  "PredictLoadRequest.calibration[1].rows[0].arrival_rate_rps = -1; must be > 0"},
        InlineBad{"ZeroThroughput",
                  "rows { concurrency: 1 } rows { concurrency: 2 } "
                  "rows { concurrency: 4 output_tokens_per_second: 0 }",
                  "PredictLoadRequest.calibration[1].rows[2].output_tokens_per_second = 0; "
                  "must be > 0"},
        InlineBad{"ZeroPerUser", "rows { concurrency: 1 per_user_output_tokens_per_second: 0 }",
                  "PredictLoadRequest.calibration[1].rows[0].per_user_output_tokens_per_second "
                  "= 0; must be > 0"},
        InlineBad{"ZeroRps", "rows { concurrency: 1 requests_per_second: 0 }",
                  "PredictLoadRequest.calibration[1].rows[0].requests_per_second = 0; must be > 0"},
        InlineBad{"NanRowInput", "rows { concurrency: 1 mean_input_tokens: nan }",
                  "PredictLoadRequest.calibration[1].rows[0].mean_input_tokens = nan; must be > 0"},
        InlineBad{"ZeroRowOutput", "rows { concurrency: 1 mean_output_tokens: 0 }",
                  "PredictLoadRequest.calibration[1].rows[0].mean_output_tokens = 0; must be > 0"},
        InlineBad{"ZeroSweepInput", "workload { input_tokens: 0 } rows { concurrency: 1 }",
                  "PredictLoadRequest.calibration[1].workload.input_tokens = 0; must be > 0"},
        InlineBad{"NegativeSweepOutput", "workload { output_tokens: -5 } rows { concurrency: 1 }",
                  "PredictLoadRequest.calibration[1].workload.output_tokens = -5; must be > 0"}),
    [](const ::testing::TestParamInfo<InlineBad>& info) { return info.param.name; });

TEST(InlinePoints, NeedsAWorkloadFromTheSweepOrTheRequest) {
  EXPECT_THAT(InlinePoints({Text<v1::Sweep>("rows { concurrency: 1 }")}, v1::WorkloadSpec(), "P"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("P.calibration[0].workload: input_tokens and output_tokens are "
                                 "needed")));
  EXPECT_TRUE(InlinePoints({Text<v1::Sweep>("workload { input_tokens: 10 output_tokens: 5 } "
                                            "rows { concurrency: 1 }")},
                           v1::WorkloadSpec(), "P")
                  .ok());
}

// ------------------------------------------------------ model -> proto

model::LoadPoint StablePoint() {
  model::LoadPoint p;
  p.concurrency = 8;
  p.stable = true;
  p.utilization = 0.75;
  p.requests_per_second = 2.5;
  p.output_tokens_per_second = 500;
  p.mean_batch_size = 7.5;
  p.mean_queue_length = 0.5;
  p.slot_wait_probability = 0.125;
  p.ttft = model::LatencyPercentiles{0.3, 0.25, 0.4, 0.5, 0.75};
  p.e2e = model::EndToEndPercentiles{4.0, 3.5, 6.0};
  p.tpot_seconds = 0.02;
  return p;
}

TEST(FillCurvePoint, StablePointCarriesEveryFigure) {
  v1::LoadCurvePoint out;
  FillCurvePoint(StablePoint(), &out);
  EXPECT_EQ(out.concurrency(), 8u);
  EXPECT_FALSE(out.has_arrival_rate_rps());
  EXPECT_EQ(out.output_tokens_per_second(), 500);
  EXPECT_EQ(out.requests_per_second(), 2.5);
  EXPECT_EQ(out.ttft_p50_seconds(), 0.25);
  EXPECT_EQ(out.ttft_p90_seconds(), 0.4);
  EXPECT_EQ(out.ttft_p95_seconds(), 0.5);
  EXPECT_EQ(out.ttft_p99_seconds(), 0.75);
  EXPECT_EQ(out.tpot_seconds(), 0.02);
  EXPECT_EQ(out.e2e_p50_seconds(), 3.5);
  EXPECT_EQ(out.e2e_p95_seconds(), 6.0);
  EXPECT_EQ(out.mean_batch_size(), 7.5);
  EXPECT_EQ(out.mean_queue_length(), 0.5);
  EXPECT_EQ(out.utilization(), 0.75);
  EXPECT_TRUE(out.stable());
  EXPECT_EQ(out.slot_wait_probability(), 0.125);
}

// A point before a cut curve's safe point carries the quantiles its SLO
// check read; the ones it never computed stay unset, not 0.
TEST(FillCurvePoint, PartialPointCarriesOnlyTheQuantilesComputed) {
  model::LoadPoint p = StablePoint();
  p.latencies_partial = true;
  p.ttft = model::LatencyPercentiles{0.3, 0.0, 0.0, 0.5, 0.0};
  p.e2e = model::EndToEndPercentiles{4.0, 0.0, 6.0};
  v1::LoadCurvePoint out;
  FillCurvePoint(p, &out);
  EXPECT_EQ(out.ttft_p95_seconds(), 0.5);
  EXPECT_FALSE(out.has_ttft_p50_seconds());
  EXPECT_FALSE(out.has_ttft_p90_seconds());
  EXPECT_FALSE(out.has_ttft_p99_seconds());
  EXPECT_EQ(out.e2e_p95_seconds(), 6.0);
  EXPECT_FALSE(out.has_e2e_p50_seconds());
  EXPECT_EQ(out.tpot_seconds(), 0.02);
}

TEST(FillCurvePoint, UnstablePointHasNoLatencies) {
  model::LoadPoint p = StablePoint();
  p.concurrency.reset();
  p.arrival_rate_rps = 9.0;
  p.stable = false;
  v1::LoadCurvePoint out;
  FillCurvePoint(p, &out);
  EXPECT_FALSE(out.has_concurrency());
  EXPECT_EQ(out.arrival_rate_rps(), 9.0);
  EXPECT_FALSE(out.stable());
  EXPECT_FALSE(out.has_ttft_p50_seconds());
  EXPECT_FALSE(out.has_ttft_p99_seconds());
  EXPECT_FALSE(out.has_tpot_seconds());
  EXPECT_FALSE(out.has_e2e_p95_seconds());
  EXPECT_FALSE(out.has_mean_queue_length());
  EXPECT_EQ(out.utilization(), 0.75);
  EXPECT_EQ(out.output_tokens_per_second(), 500);
}

TEST(FillSafePoint, FoundPointAndBinding) {
  model::LoadCurve curve;
  curve.points = {StablePoint(), StablePoint()};
  curve.points[1].concurrency = 16;
  curve.safe.index = 1;
  curve.safe.binding = model::BindingLimit::kSlotWait;
  v1::SafeOperatingPoint out;
  FillSafePoint(curve, &out);
  EXPECT_TRUE(out.found());
  EXPECT_EQ(out.concurrency(), 16u);
  EXPECT_EQ(out.point().concurrency(), 16u);
  EXPECT_EQ(out.binding(), v1::LOAD_BINDING_SLOT_WAIT);
}

TEST(FillSafePoint, NoIndexIsNotFoundWithItsBinding) {
  model::LoadCurve curve;
  curve.points = {StablePoint()};
  curve.safe.binding = model::BindingLimit::kTtftP95;
  v1::SafeOperatingPoint out;
  FillSafePoint(curve, &out);
  EXPECT_FALSE(out.found());
  EXPECT_FALSE(out.has_concurrency());
  EXPECT_FALSE(out.has_point());
  EXPECT_EQ(out.binding(), v1::LOAD_BINDING_TTFT_P95);
}

TEST(FillKnee, LoadGoesToTheCurvesAxis) {
  model::Knee knee{2, 3, 6.5};
  v1::Knee closed;
  FillKnee(knee, true, &closed);
  EXPECT_EQ(closed.concurrency(), 6.5);
  EXPECT_FALSE(closed.has_arrival_rate_rps());
  EXPECT_EQ(closed.last_flat_index(), 2u);
  EXPECT_EQ(closed.first_steep_index(), 3u);
  EXPECT_EQ(KneeLoad(closed), 6.5);
  v1::Knee open;
  FillKnee(knee, false, &open);
  EXPECT_FALSE(open.has_concurrency());
  EXPECT_EQ(open.arrival_rate_rps(), 6.5);
  EXPECT_EQ(KneeLoad(open), 6.5);
}

TEST(FillStepTimeFit, CoefficientsAndWhatTheFitDetermined) {
  const model::StepTimeCoefficients c{0.004, 1.1, 1.2, 1.3, 0};
  v1::StepTimeFit roofline;
  FillStepTimeFit(c, std::nullopt, &roofline);
  EXPECT_EQ(roofline.alpha_seconds(), 0.004);
  EXPECT_EQ(roofline.beta_weights(), 1.1);
  EXPECT_EQ(roofline.beta_kv(), 1.2);
  EXPECT_EQ(roofline.beta_flops(), 1.3);
  EXPECT_EQ(roofline.beta_comm(), 0);
  EXPECT_EQ(roofline.identified_size(), 0);
  EXPECT_FALSE(roofline.has_relative_error_band());

  model::CalibrationResult fit;
  fit.identified = {true, true, false, true, false};
  fit.observations.resize(7);
  fit.used_prior = true;
  fit.relative_error_band = 0.08;
  v1::StepTimeFit out;
  FillStepTimeFit(c, fit, &out);
  EXPECT_THAT(out.identified(), ElementsAre("alpha", "beta_weights", "beta_flops"));
  EXPECT_TRUE(out.used_prior());
  EXPECT_EQ(out.observations(), 7u);
  EXPECT_EQ(out.relative_error_band(), 0.08);
  EXPECT_FALSE(out.has_relative_rms_residual());
}

TEST(ToProtoTier, EveryTier) {
  EXPECT_EQ(ToProtoTier(model::Tier::kMeasured), v1::TIER_MEASURED);
  EXPECT_EQ(ToProtoTier(model::Tier::kCalibrated), v1::TIER_CALIBRATED);
  EXPECT_EQ(ToProtoTier(model::Tier::kExtrapolated), v1::TIER_EXTRAPOLATED);
  EXPECT_EQ(ToProtoTier(model::Tier::kRoofline), v1::TIER_ROOFLINE);
}

TEST(ToProtoBinding, EveryBindingAndSlotBound) {
  EXPECT_EQ(ToProtoBinding(model::BindingLimit::kLoadRange), v1::LOAD_BINDING_LOAD_RANGE);
  EXPECT_EQ(ToProtoBinding(model::BindingLimit::kTtftP95), v1::LOAD_BINDING_TTFT_P95);
  EXPECT_EQ(ToProtoBinding(model::BindingLimit::kTpot), v1::LOAD_BINDING_TPOT);
  EXPECT_EQ(ToProtoBinding(model::BindingLimit::kE2eP95), v1::LOAD_BINDING_E2E_P95);
  EXPECT_EQ(ToProtoBinding(model::BindingLimit::kSlotWait), v1::LOAD_BINDING_SLOT_WAIT);
  EXPECT_EQ(ToProtoBinding(model::BindingLimit::kStability), v1::LOAD_BINDING_STABILITY);
  EXPECT_EQ(ToProtoSlotBound(model::SlotBound::kRunningRequestLimit),
            v1::SLOT_BOUND_RUNNING_REQUEST_LIMIT);
  EXPECT_EQ(ToProtoSlotBound(model::SlotBound::kOperatorGate), v1::SLOT_BOUND_OPERATOR_GATE);
  EXPECT_EQ(ToProtoSlotBound(model::SlotBound::kKvPool), v1::SLOT_BOUND_KV_POOL);
  EXPECT_EQ(ToProtoSlotBound(model::SlotBound::kStateSlots), v1::SLOT_BOUND_STATE_SLOTS);
}

}  // namespace
}  // namespace capplan::service
