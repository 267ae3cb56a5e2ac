#include "model/lint.h"

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace capplan::model {
namespace {

using ::testing::HasSubstr;

int Count(const std::vector<LintFinding>& f, LintCode code) {
  return static_cast<int>(
      std::count_if(f.begin(), f.end(), [&](const LintFinding& x) { return x.code == code; }));
}

LintRow Row(std::string path, double concurrency, double rps, double tps, double ttft, double e2e) {
  LintRow r;
  r.path = std::move(path);
  r.concurrency = concurrency;
  r.requests_per_second = rps;
  r.output_tokens_per_second = tps;
  r.ttft_seconds = ttft;
  r.e2e_seconds = e2e;
  return r;
}

// The example: 50 req/s × 220 tokens = 11,000 tok/s, not 1,125; and
// 50 req/s × 4 s = 200 in flight at a concurrency of 16.
TEST(LintRows, TokensAgainstRequestsAndLittlesLaw) {
  LintRow r = Row("sweeps[0].rows[0]", 16, 50, 1125, 0.2, 4.0);
  r.output_tokens_per_request = 220;
  std::vector<LintFinding> f = LintRows({r}, true);
  ASSERT_EQ(Count(f, LintCode::kToksVsReqs), 1);
  ASSERT_EQ(Count(f, LintCode::kLittleLaw), 1);
  for (const LintFinding& x : f) {
    if (x.code == LintCode::kToksVsReqs) {
      EXPECT_DOUBLE_EQ(x.expected, 11000);
      EXPECT_DOUBLE_EQ(x.measured, 1125);
      EXPECT_EQ(x.field_path, "sweeps[0].rows[0].output_tokens_per_second");
      EXPECT_THAT(x.message, HasSubstr("22.5 tokens, not 220"));
    }
    if (x.code == LintCode::kLittleLaw) {
      EXPECT_DOUBLE_EQ(x.measured, 200);
      EXPECT_DOUBLE_EQ(x.expected, 16);
    }
  }
}

TEST(LintRows, AConsistentRowHasNoFinding) {
  // 8 users, 1.6 req/s × 5 s = 8 in flight; 1.6 × 100 = 160 tok/s.
  LintRow r = Row("r", 8, 1.6, 160, 0.3, 5.0);
  r.output_tokens_per_request = 100;
  EXPECT_TRUE(LintRows({r}, true).empty());
}

TEST(LintRows, TtftAboveE2eIsAnError) {
  std::vector<LintFinding> f = LintRows({Row("r", 1, 0.5, 50, 3.0, 2.0)}, true);
  ASSERT_EQ(Count(f, LintCode::kTtftAboveE2e), 1);
  EXPECT_EQ(f[0].severity, LintSeverity::kError);
  EXPECT_EQ(f[0].field_path, "r.ttft");
}

// A TTFT of 287 "seconds" where 8 users at 1.44 req/s live 5.6 s on average.
TEST(LintRows, MillisecondsGivenAsSecondsAreUnitSuspect) {
  std::vector<LintFinding> f = LintRows({Row("r", 8, 1.44, 164, 287, 4.85)}, true);
  ASSERT_GE(Count(f, LintCode::kUnitSuspect), 1);
  const auto it = std::find_if(
      f.begin(), f.end(), [](const LintFinding& x) { return x.code == LintCode::kUnitSuspect; });
  EXPECT_EQ(it->severity, LintSeverity::kError);
  EXPECT_EQ(it->field_path, "r.ttft");
  EXPECT_NEAR(it->expected, 8 / 1.44, 1e-9);
  EXPECT_THAT(it->message, HasSubstr("milliseconds"));
}

TEST(LintRows, ThroughputFallingWithFlatTtftIsNonMonotone) {
  std::vector<LintFinding> f =
      LintRows({Row("a", 8, 1.5, 160, 0.30, 5.3), Row("b", 16, 1.0, 100, 0.32, 15)}, true);
  EXPECT_EQ(Count(f, LintCode::kNonMonotone), 1);
  // The same fall with TTFT ×25 (a queue) is not.
  f = LintRows({Row("a", 8, 1.5, 160, 0.30, 5.3), Row("b", 16, 1.0, 100, 7.5, 15)}, true);
  EXPECT_EQ(Count(f, LintCode::kNonMonotone), 0);
}

// Seed 000's c=4 row: 65.8 / 4 = 16.4 tok/s per user against 131 / 6 = 21.8.
TEST(LintRows, PerUserSpeedRisingWithLoadFlagsTheSlowerRow) {
  std::vector<LintFinding> f =
      LintRows({Row("c6", 6, 1.2, 131, 0.292, 4.1), Row("c4", 4, 0.58, 65.8, 0.296, 6.6)}, true);
  ASSERT_EQ(Count(f, LintCode::kOutlierRow), 1);
  const auto it = std::find_if(
      f.begin(), f.end(), [](const LintFinding& x) { return x.code == LintCode::kOutlierRow; });
  EXPECT_EQ(it->field_path, "c4");
  EXPECT_NEAR(it->measured, 16.45, 1e-9);
}

TEST(LintRows, OpenLoopComparesTheMeasuredConcurrency) {
  LintRow r;
  r.path = "r";
  r.arrival_rate_rps = 2;
  r.requests_per_second = 2;
  r.e2e_seconds = 10;
  r.measured_in_flight = 10;  // 2 × 10 = 20 in flight
  EXPECT_EQ(Count(LintRows({r}, false), LintCode::kLittleLaw), 1);
  r.measured_in_flight = 19;
  EXPECT_EQ(Count(LintRows({r}, false), LintCode::kLittleLaw), 0);
}

TEST(LintMemory, PartsAboveUsedAndUsedAboveTheCard) {
  LintMemoryAccount a{
      "m", 20.0 * (1 << 30), 24.0 * (1 << 30), {12.0 * (1 << 30), 12.0 * (1 << 30)}};
  std::vector<LintFinding> f = LintMemory(a);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, LintSeverity::kWarning);
  a.used_bytes = 30.0 * (1 << 30);
  f = LintMemory(a);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, LintSeverity::kError);
}

// Seed 002: 4 × 19.86 GiB of shards against 125.87 GiB of weights.
TEST(LintShards, ShardsSummingBelowTheModel) {
  const double gib = 1 << 30;
  EXPECT_EQ(LintShards("w", 19.86 * gib, 4, 125.87 * gib).size(), 1u);
  EXPECT_TRUE(LintShards("w", 32 * gib, 4, 125.87 * gib).empty());
}

TEST(LintKvPool, TokensTimesBytesAgainstTheStatedCache) {
  const double gib = 1 << 30;
  // 531,372 × 13,312 B = 6.59 GiB against 1.28 GiB.
  std::vector<LintFinding> f = LintKvPool("p", 531372, 1.28 * gib, 13312);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].code, LintCode::kKvTokensVsBytes);
  EXPECT_NEAR(f[0].measured, 531372.0 * 13312, 1);
  EXPECT_TRUE(LintKvPool("p", 100000, 100000 * 13312.0, 13312).empty());
}

TEST(LintSource, EmptyIsAnErrorAndABranchUrlAWarning) {
  std::vector<LintFinding> f = LintSource("provenance.source_document", " ");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, LintSeverity::kError);
  f = LintSource("s", "https://github.com/o/r/blob/main/results/run.json");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity, LintSeverity::kWarning);
  EXPECT_TRUE(
      LintSource("s", "https://github.com/o/r/blob/b474d1e053c35c9aef8c02aae4efbc0d8675f033/x.log")
          .empty());
  EXPECT_TRUE(LintSource("s", "000_46cf6fd3290c7f5b.txt").empty());
  EXPECT_TRUE(LintSource("s", "https://github.com/vllm-project/vllm/issues/1234").empty());
}

TEST(LintCodeName, EveryCodeHasItsStableName) {
  std::vector<std::string> names;
  for (LintCode c : kLintCodes) names.push_back(LintCodeName(c));
  EXPECT_THAT(names, ::testing::ElementsAre("LITTLE_LAW", "TOKS_VS_REQS", "TTFT_ABOVE_E2E",
                                            "NON_MONOTONE", "MEMORY_SUM", "KV_TOKENS_VS_BYTES",
                                            "OUTLIER_ROW", "MISSING_PROVENANCE", "UNIT_SUSPECT"));
}

}  // namespace
}  // namespace capplan::model
