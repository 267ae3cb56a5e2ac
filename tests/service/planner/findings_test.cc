#include "service/planner/findings.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace capplan::service {
namespace {

using ::testing::Pair;
using ::testing::UnorderedElementsAre;

TEST(FindingList, AddRecordsSeverityCodeFieldMessageAndFigures) {
  v1::ValidateResponse response;
  FindingList findings(&response);
  findings.Add(v1::SEVERITY_ERROR, kDoesNotFit, "ValidateRequest.deployment", "short by 2 GiB",
               {{"shortfall_bytes", 2147483648.0}, {"capacity_bytes", 25769803776.0}});
  findings.Add(v1::SEVERITY_INFO, kUnmodelledFlag, "ValidateRequest.launch_line", "'--seed 7'");
  ASSERT_EQ(response.findings_size(), 2);
  const v1::Finding& f = response.findings(0);
  EXPECT_EQ(f.severity(), v1::SEVERITY_ERROR);
  EXPECT_EQ(f.code(), "DOES_NOT_FIT");
  EXPECT_EQ(f.field(), "ValidateRequest.deployment");
  EXPECT_EQ(f.message(), "short by 2 GiB");
  EXPECT_THAT(f.figures(), UnorderedElementsAre(Pair("shortfall_bytes", 2147483648.0),
                                                Pair("capacity_bytes", 25769803776.0)));
  EXPECT_EQ(response.findings(1).code(), "UNMODELLED_FLAG");
  EXPECT_TRUE(response.findings(1).figures().empty());
  // Findings are not checks.
  EXPECT_EQ(response.checks_size(), 0);
}

TEST(FindingList, CheckAndSkipRecordChecksInOrder) {
  v1::ValidateResponse response;
  FindingList findings(&response);
  findings.Check("weights and overheads fit the GPU", kDoesNotFit, false, "used 30 of 24 GiB");
  findings.Check("engine version covered by a preset", kUnknownEngineVersion, true, "vllm-v1");
  findings.Skip("TTFT p95 within the SLO", kTtftSloMissed, "no SLO given");
  ASSERT_EQ(response.checks_size(), 3);
  EXPECT_EQ(response.checks(0).name(), "weights and overheads fit the GPU");
  EXPECT_EQ(response.checks(0).code(), "DOES_NOT_FIT");
  EXPECT_FALSE(response.checks(0).passed());
  EXPECT_FALSE(response.checks(0).skipped());
  EXPECT_EQ(response.checks(0).detail(), "used 30 of 24 GiB");
  EXPECT_TRUE(response.checks(1).passed());
  EXPECT_FALSE(response.checks(1).skipped());
  // A skipped check passes (it cannot fail a JUnit report) and says why.
  EXPECT_TRUE(response.checks(2).passed());
  EXPECT_TRUE(response.checks(2).skipped());
  EXPECT_EQ(response.checks(2).code(), "TTFT_SLO_MISSED");
  EXPECT_EQ(response.checks(2).detail(), "no SLO given");
  EXPECT_EQ(response.findings_size(), 0);
}

TEST(FindingCodes, AreTheStableStrings) {
  // Reports and allow-lists name these; changing one breaks users' CI.
  EXPECT_STREQ(kDoesNotFit, "DOES_NOT_FIT");
  EXPECT_STREQ(kKvPoolBelowOneRequest, "KV_POOL_BELOW_ONE_REQUEST");
  EXPECT_STREQ(kConcurrencyAboveSafe, "CONCURRENCY_ABOVE_SAFE");
  EXPECT_STREQ(kTtftSloMissed, "TTFT_SLO_MISSED");
  EXPECT_STREQ(kTpotSloMissed, "TPOT_SLO_MISSED");
  EXPECT_STREQ(kE2eSloMissed, "E2E_SLO_MISSED");
  EXPECT_STREQ(kUnstableLoad, "UNSTABLE_LOAD");
  EXPECT_STREQ(kContextBeyondNative, "CONTEXT_BEYOND_NATIVE");
  EXPECT_STREQ(kNoQualityEvidence, "NO_QUALITY_EVIDENCE");
  EXPECT_STREQ(kFarFromBaselines, "FAR_FROM_BASELINES");
  EXPECT_STREQ(kUnknownEngineVersion, "UNKNOWN_ENGINE_VERSION");
  EXPECT_STREQ(kUnmodelledFlag, "UNMODELLED_FLAG");
  EXPECT_STREQ(kWorkloadFromBaseline, "WORKLOAD_FROM_BASELINE");
}

}  // namespace
}  // namespace capplan::service
