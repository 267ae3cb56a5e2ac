// GuideLLM benchmarks.json: strategies as loads, distribution summaries,
// request_latency in seconds, and capplan's TPOT from request records.

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/translate/ingest.h"
#include "tests/test_common/ingest_fixtures.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

std::string Fixture(const std::string& path) { return capplan::testing::IngestFixture(path); }

IngestedFile Parse(const std::string& path) { return capplan::testing::ParseIngestFixture(path); }

TEST(IngestGuidellm, RealSynchronousBenchmarkIsConcurrencyOneWithoutTpot) {
  const IngestedFile f = Parse("guidellm/benchmarks_stripped.json");
  EXPECT_EQ(f.format, IngestFormat::kGuidellmJson);
  EXPECT_EQ(f.tool, "guidellm");
  EXPECT_EQ(f.date, "2025-06-05");  // start_time 1749157168
  ASSERT_EQ(f.runs.size(), 1u);
  const IngestedRun& r = f.runs[0];
  EXPECT_EQ(r.source, "benchmarks_stripped.json benchmarks[0]");
  EXPECT_EQ(r.load, LoadKind::kClosedLoop);
  EXPECT_EQ(r.row.concurrency(), 1u);
  EXPECT_EQ(r.row.label(), "synchronous");
  EXPECT_EQ(r.model_id, "example_model");
  EXPECT_EQ(r.row.requests(), 46u);
  EXPECT_EQ(r.row.failed_requests(), 0u);
  EXPECT_DOUBLE_EQ(r.row.wall_seconds(), 29.997201442718506);
  EXPECT_DOUBLE_EQ(r.row.ttft().mean_seconds(), 0.016792535781860348);
  EXPECT_DOUBLE_EQ(r.row.ttft().p50_seconds(), 0.01638054847717285);  // median; no p50 in v0.2
  EXPECT_DOUBLE_EQ(r.row.ttft().p90_seconds(), 0.018505334854125977);
  EXPECT_DOUBLE_EQ(r.row.ttft().min_seconds(), 0.015790939331054688);
  EXPECT_DOUBLE_EQ(r.row.e2e().mean_seconds(), 0.6444743664368339);  // already seconds
  EXPECT_DOUBLE_EQ(r.row.itl().mean_seconds(), 0.004941609043733832);
  EXPECT_FALSE(r.row.has_tpot());
  EXPECT_NEAR(*r.measured_mean_in_flight, 0.9977, 1e-4);
  EXPECT_THAT(r.row.note(), HasSubstr("TPOT absent"));
  EXPECT_THAT(r.row.note(), HasSubstr("the file holds 1 of 46 successful request records"));
  EXPECT_THAT(r.row.note(), HasSubstr("GuideLLM time_per_output_token_ms mean 0.004903003 s"));
  EXPECT_THAT(r.row.note(), HasSubstr("p999 TTFT 0.02128196 s"));
  EXPECT_THAT(r.row.note(), HasSubstr("1 requests incomplete"));
}

TEST(IngestGuidellm, SchemaConcurrentBenchmarkComputesTpotFromAllRequestRecords) {
  const IngestedFile f = Parse("guidellm/schema_v05_concurrent_and_constant.json");
  EXPECT_EQ(f.tool_version, "0.5.0");
  ASSERT_EQ(f.runs.size(), 2u);
  const IngestedRun& r = f.runs[0];
  EXPECT_EQ(r.load, LoadKind::kClosedLoop);
  EXPECT_EQ(r.row.concurrency(), 4u);
  EXPECT_EQ(r.model_id, "Qwen/Qwen3-8B");  // no worker: the report's args.model
  // Records: (2000-100)/100, (2200-120)/104, (1800-90)/90, (2500-150)/47 = 19, 20, 19, 50 ms.
  const v1::LatencyFigures& tpot = r.row.tpot();
  EXPECT_NEAR(tpot.mean_seconds(), 0.027, 1e-12);
  EXPECT_NEAR(tpot.p50_seconds(), 0.0195, 1e-12);
  EXPECT_NEAR(tpot.p90_seconds(), 0.041, 1e-12);
  EXPECT_NEAR(tpot.p95_seconds(), 0.0455, 1e-12);
  EXPECT_NEAR(tpot.p99_seconds(), 0.0491, 1e-12);
  EXPECT_NEAR(tpot.min_seconds(), 0.019, 1e-12);
  EXPECT_NEAR(tpot.max_seconds(), 0.050, 1e-12);
  EXPECT_THAT(r.row.note(), HasSubstr("TPOT computed from 4 request records"));
  EXPECT_DOUBLE_EQ(r.row.ttft().p50_seconds(), 0.110);
  EXPECT_DOUBLE_EQ(r.row.requests_per_second(), 1.9);
  EXPECT_DOUBLE_EQ(*r.mean_input_tokens, 512.0);
  EXPECT_DOUBLE_EQ(*r.mean_output_tokens, 86.25);
  EXPECT_EQ(r.row.output_tokens_total(), 345u);
}

TEST(IngestGuidellm, SchemaConstantBenchmarkIsOpenLoopAndSampledRecordsGiveNoTpot) {
  const IngestedFile f = Parse("guidellm/schema_v05_concurrent_and_constant.json");
  ASSERT_EQ(f.runs.size(), 2u);
  const IngestedRun& r = f.runs[1];
  EXPECT_EQ(r.load, LoadKind::kOpenLoop);
  EXPECT_DOUBLE_EQ(r.row.arrival_rate_rps(), 2.0);
  EXPECT_EQ(r.row.label(), "constant");
  EXPECT_EQ(r.row.requests(), 60u);
  EXPECT_EQ(r.row.failed_requests(), 2u);
  EXPECT_FALSE(r.row.has_tpot());
  EXPECT_THAT(r.row.note(), HasSubstr("the file holds 1 of 60 successful request records"));
}

TEST(IngestGuidellm, WrongTypeInADistributionNamesTheFullKeyPath) {
  std::string text = Fixture("guidellm/benchmarks_stripped.json");
  const std::string from = "\"median\": 16.38054847717285";
  const size_t at = text.find(from);
  ASSERT_NE(at, std::string::npos);
  text.replace(at, from.size(), "\"median\": \"fast\"");
  EXPECT_THAT(ParseMeasurementFile("benchmarks.json", text),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("benchmarks.json: key \"benchmarks[0].metrics."
                                 "time_to_first_token_ms.successful.median\" = \"fast\"; must be a "
                                 "number")));
}

TEST(IngestGuidellm, BenchmarksThatIsNotAListIsRefused) {
  EXPECT_THAT(ParseMeasurementFile("benchmarks.json", "{\"benchmarks\": {\"a\": 1}}"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("benchmarks.json: key \"benchmarks\" = {...}; must be a list")));
}

TEST(IngestGuidellm, EmptyBenchmarksIsRefused) {
  EXPECT_THAT(ParseMeasurementFile("benchmarks.json", "{\"benchmarks\": []}"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("key \"benchmarks\" holds no benchmark")));
}

TEST(IngestGuidellm, ConstantStrategyWithoutARateIsRefused) {
  const std::string text =
      "{\"benchmarks\": [{\"config\": {\"strategy\": {\"type_\": \"poisson\"}}, "
      "\"metrics\": {}}]}";
  EXPECT_THAT(ParseMeasurementFile("benchmarks.json", text),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("key \"benchmarks[0].config.strategy.rate\" = null; must be a "
                                 "positive request rate")));
}

}  // namespace
}  // namespace capplan::service
