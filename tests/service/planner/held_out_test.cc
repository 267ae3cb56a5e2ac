// The load model's report card over the corpus (capplan accuracy), bounded:
// both modes over every qualifying baseline run in about a second.
#include "service/planner/held_out.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

const v1::AccuracySummary& All(const v1::AccuracyResponse& r, const std::string& metric) {
  for (const v1::AccuracySummary& s : r.summaries()) {
    if (s.group() == "all" && s.metric() == metric) return s;
  }
  ADD_FAILURE() << "no 'all' summary for " << metric;
  return r.summaries(0);
}

v1::AccuracyResponse RunMode(v1::AccuracyMode mode) {
  v1::AccuracyRequest request;
  request.set_mode(mode);
  absl::StatusOr<v1::AccuracyResponse> r = Accuracy(capplan::testing::BundledCatalogue(), request);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : v1::AccuracyResponse();
}

// Leave one baseline out: nothing of the baseline seen, the priors refitted
// without it. The issue's bar: >= 75% of points within 2x for output tok/s
// and TTFT p50 (measured when written: 85% and 80% of 62 and 56 points).
// Since the TensorRT-LLM presets and the memory-rule presets (issue 12), two
// more baselines resolve and are held out: trtllm-0.17 DeepSeek-R1 on 8 x
// H200 (TP8 EP4; TTFT 3 of 6 points beyond 2x) and vllm-0.6.3 Llama-3.1-405B
// FP8 on 8 x H100 (1 of 1), which take TTFT p50 to 47 of 63 points (74.6%),
// one point under the bar: NOT MET for TTFT, recorded; the assertion holds
// that level (74%) so that a change cannot lose it unnoticed. Output tok/s
// stays above the bar (84% of 68). Issue 12's refit of the SGLang 0.4 preset
// on three more start-up logs (non-torch 4.63 -> 1.49 GiB, CUDA graphs 2.36 ->
// 1.96 GiB per GPU for DeepSeek-R1 on 8 x H200) grows that deployment's pool
// 468,858 -> 507,650 tokens, its slots 117 -> 126: sglang-0.4.3 DeepSeek-R1
// DP-attention GSP at 128 users is then 2 users over the slots instead of 11,
// and the closed loop's TTFT there falls 13.5 -> 4.7 s (measured 23.5 s),
// beyond 2x: 46 of 63 (73.0%). The fall was the load model's, not the
// pool's: without think time, users beyond the slots waited for completions
// but skipped the co-arrivals' prefill queue, so TTFT p50 dropped from 22.9 s
// at 126 users to 4.0 s at 128. With the wait branches split by co-arrivals
// too (queueing.cc, AddCoArrivals) it is 24.3 s at 128 (measured 23.5 s):
// 48 of 63 (76.2%), at the bar, held at 0.75. Output tok/s 79% of 68 since
// the overheads stopped crossing engines (held_out below, vllm-0.6.3 on 8 x
// MI300X 3 rows from +95% to +110%).
TEST(Accuracy, LeaveOneBaselineOutMostPointsWithinTwoTimes) {
  const v1::AccuracyResponse r = RunMode(v1::ACCURACY_MODE_BASELINES);
  const v1::AccuracySummary& tps = All(r, "output_tokens_per_second");
  const v1::AccuracySummary& ttft = All(r, "ttft_p50");
  std::printf(
      "leave one baseline out: output tok/s %d points, %.0f%% within 2x, median %.1f%%; "
      "TTFT p50 %d points, %.0f%% within 2x, median %.1f%%\n",
      tps.count(), 100 * tps.within_2x_fraction(), 100 * tps.median_abs_error_fraction(),
      ttft.count(), 100 * ttft.within_2x_fraction(), 100 * ttft.median_abs_error_fraction());
  EXPECT_GE(tps.count(), 50u);
  EXPECT_GE(ttft.count(), 40u);
  EXPECT_GE(tps.within_2x_fraction(), 0.75);
  EXPECT_GE(ttft.within_2x_fraction(), 0.75);
}

// Calibrated on alternate rows: the issue's bar, a median |error| <= 10% for
// output tok/s and <= 20% for TTFT p50. Met since the rows' residuals correct
// the curve (model/measured_correction.h: a held-out row is predicted by the
// model times its neighbours' residuals, interpolated in log load): 10.5% ->
// 8.3% and 26.1% -> 12.8% over 78 and 66 points at the commit that made it.
TEST(Accuracy, AlternateRowsMedianErrorWithinTheIssuesBar) {
  const v1::AccuracyResponse r = RunMode(v1::ACCURACY_MODE_ALTERNATE_ROWS);
  const v1::AccuracySummary& tps = All(r, "output_tokens_per_second");
  const v1::AccuracySummary& ttft = All(r, "ttft_p50");
  std::printf(
      "alternate rows: output tok/s median %.1f%% (bar 10%%), TTFT p50 median %.1f%% "
      "(bar 20%%)\n",
      100 * tps.median_abs_error_fraction(), 100 * ttft.median_abs_error_fraction());
  EXPECT_GE(tps.count(), 50u);
  EXPECT_GE(ttft.count(), 50u);
  EXPECT_LE(tps.median_abs_error_fraction(), 0.10);
  EXPECT_LE(ttft.median_abs_error_fraction(), 0.20);
  // 0.877 since the per-step and per-request overheads stopped crossing
  // engines (priors.h, ClosestPrior): vllm-0.6.3 Llama-3.1-405B-FP8 on 8 x
  // MI300X had been pulled to 2x-right by SGLang 0.4.2's 25 ms step cost;
  // on the engine-neutral overheads its three saturated rows come out 2.1x
  // high, as the same run on 8 x H100 already did (both vLLM 0.6.3 runs are
  // half the model's speed: a gap of that version the model does not hold).
  EXPECT_GE(tps.within_2x_fraction(), 0.87);
}

TEST(Accuracy, UnknownBaselineIsNotFound) {
  v1::AccuracyRequest request;
  request.set_mode(v1::ACCURACY_MODE_BASELINES);
  request.set_baseline_id("no-such-baseline");
  EXPECT_THAT(Accuracy(capplan::testing::BundledCatalogue(), request).status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("no-such-baseline")));
}

// A held-out baseline's rows are predicted from a catalogue without it: its
// own sweep cannot have been fitted on, so its predictions differ from the
// leave-one-row-out ones that see its other rows.
TEST(Accuracy, HeldOutPredictionsDoNotSeeTheBaseline) {
  v1::AccuracyRequest request;
  request.set_baseline_id("sglang-0.4.2-deepseek-r1-mi300x8-random-3200-800-closed");
  request.set_mode(v1::ACCURACY_MODE_BASELINES);
  absl::StatusOr<v1::AccuracyResponse> out =
      Accuracy(capplan::testing::BundledCatalogue(), request);
  request.set_mode(v1::ACCURACY_MODE_ROWS);
  absl::StatusOr<v1::AccuracyResponse> rows =
      Accuracy(capplan::testing::BundledCatalogue(), request);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(rows.ok()) << rows.status();
  ASSERT_GT(out->predictions_size(), 0);
  for (const v1::AccuracyPrediction& p : out->predictions()) {
    EXPECT_EQ(p.baseline_id(), request.baseline_id());
    EXPECT_TRUE(p.has_raw_band_fraction()) << p.source() << " " << p.metric();
  }
  double differ = 0;
  for (const v1::AccuracyPrediction& a : out->predictions()) {
    for (const v1::AccuracyPrediction& b : rows->predictions()) {
      if (a.source() == b.source() && a.metric() == b.metric()) {
        differ += std::abs(a.predicted() / b.predicted() - 1) > 1e-6;
      }
    }
  }
  EXPECT_GT(differ, 0);
}

}  // namespace
}  // namespace capplan::service
