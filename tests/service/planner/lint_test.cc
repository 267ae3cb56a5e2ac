#include "service/planner/lint.h"

#include <set>
#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::testing::HasSubstr;
using testing::StatusIs;

std::set<std::pair<std::string, std::string>> CodesAndFields(const v1::LintResponse& r,
                                                             const std::string& baseline) {
  std::set<std::pair<std::string, std::string>> out;
  for (const v1::LintFinding& f : r.findings()) {
    if (f.baseline_id() == baseline) out.insert({f.code(), f.field()});
  }
  return out;
}

// The digest's consistency notes: 000's stress run (0.60 req/s × 512 tokens
// is not 149 tok/s), Little's law at c=16 and c=32, the c=4 outlier; 002's
// shards against the model's weights and its KV pool against 1.28 GiB.
TEST(Lint, FindsTheFourInconsistenciesOfTheSeedReports) {
  absl::StatusOr<v1::LintResponse> r = Lint(testing::BundledCatalogue(), v1::LintRequest());
  ASSERT_TRUE(r.ok()) << r.status();
  const auto s000 = CodesAndFields(*r, testing::k000);
  EXPECT_TRUE(s000.count({"TOKS_VS_REQS", "sustained_runs[0].output_tokens_per_second"}));
  EXPECT_TRUE(s000.count({"LITTLE_LAW", "sweeps[0].rows[5]"}));   // c = 16
  EXPECT_TRUE(s000.count({"LITTLE_LAW", "sweeps[0].rows[6]"}));   // c = 32
  EXPECT_FALSE(s000.count({"LITTLE_LAW", "sweeps[0].rows[4]"}));  // c = 8 holds (6.98)
  EXPECT_TRUE(s000.count({"OUTLIER_ROW", "sweeps[0].rows[2]"}));  // c = 4
  const auto s002 = CodesAndFields(*r, testing::k002);
  bool shards = false, kv = false;
  for (const auto& [code, field] : s002) {
    shards |= code == "MEMORY_SUM" && field.rfind("weight_footprints", 0) == 0;
    kv |= code == "KV_TOKENS_VS_BYTES";
  }
  EXPECT_TRUE(shards);
  EXPECT_TRUE(kv);
  EXPECT_FALSE(HasError({r->findings().begin(), r->findings().end()}))
      << "the seed reports' figures go in as stated: warnings, not errors";
}

// The row (50 req/s at 1,125 output tok/s, 220 output tokens per
// request) where only the row states its length, as an ingested run does:
// tok/s ÷ req/s = 22.5 against the row's own 220.
TEST(Lint, TheRowsOwnStatedOutputLengthIsCheckedAgainstItsRates) {
  v1::Baseline b;
  b.set_id("row-length");
  v1::Sweep* sweep = b.add_sweeps();
  sweep->set_closed_loop(true);
  v1::SweepRow* row = sweep->add_rows();
  row->set_concurrency(64);
  row->set_requests_per_second(50);
  row->set_output_tokens_per_second(1125);
  row->set_mean_output_tokens(220);
  std::set<std::string> codes;
  for (const v1::LintFinding& f : LintBaseline(testing::BundledCatalogue(), b)) {
    if (f.field() == "sweeps[0].rows[0].output_tokens_per_second") codes.insert(f.code());
  }
  EXPECT_TRUE(codes.count("TOKS_VS_REQS"));
  // Consistent: 50 req/s × 22.5 tokens.
  row->set_mean_output_tokens(22.5);
  for (const v1::LintFinding& f : LintBaseline(testing::BundledCatalogue(), b)) {
    EXPECT_NE(f.code(), "TOKS_VS_REQS") << f.message();
  }
}

TEST(Lint, OneBaselineOrNotFound) {
  v1::LintRequest request;
  request.set_baseline_id(testing::k002);
  absl::StatusOr<v1::LintResponse> r = Lint(testing::BundledCatalogue(), request);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->baselines_checked(), 1u);
  for (const v1::LintFinding& f : r->findings()) EXPECT_EQ(f.baseline_id(), testing::k002);
  request.set_baseline_id("no-such-baseline");
  EXPECT_THAT(Lint(testing::BundledCatalogue(), request),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("LintRequest.baseline_id")));
}

}  // namespace
}  // namespace capplan::service
