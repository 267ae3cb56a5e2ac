// AIPerf and GenAI-Perf exports: per-metric units, the load in input_config,
// inter_token_latency as capplan's TPOT.

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/translate/ingest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

std::string Fixture(const std::string& path) {
  std::ifstream in(std::string(CAPPLAN_SOURCE_DIR) + "/tests/data/ingest/" + path,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

IngestedFile Parse(const std::string& path) {
  const std::string name = path.substr(path.rfind('/') + 1);
  absl::StatusOr<IngestedFile> f = ParseMeasurementFile(name, Fixture(path));
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : IngestedFile();
}

TEST(IngestAiperf, RealAiperfExportIsClosedLoopWithMeasuredConcurrency) {
  const IngestedFile f = Parse("aiperf/inferencemax_conc16.profile_export_aiperf.json");
  EXPECT_EQ(f.format, IngestFormat::kAiperfJson);
  EXPECT_EQ(f.tool, "aiperf");
  EXPECT_EQ(f.tool_version, "0.8.0");
  EXPECT_EQ(f.date, "2026-06-04");
  ASSERT_EQ(f.runs.size(), 1u);
  const IngestedRun& r = f.runs[0];
  EXPECT_EQ(r.load, LoadKind::kClosedLoop);
  EXPECT_EQ(r.row.concurrency(), 16u);
  EXPECT_EQ(r.model_id, "Qwen/Qwen3.5-397B-A17B-FP8");
  EXPECT_EQ(r.row.requests(), 457u);
  EXPECT_DOUBLE_EQ(r.row.wall_seconds(), 1820.0401889280001);  // unit "sec"
  EXPECT_DOUBLE_EQ(r.row.requests_per_second(), 0.25109335649844744);
  EXPECT_DOUBLE_EQ(r.row.output_tokens_per_second(), 227.14168759289643);
  EXPECT_DOUBLE_EQ(r.row.total_tokens_per_second(), 23601.323894556754);
  EXPECT_DOUBLE_EQ(r.row.per_user_output_tokens_per_second(), 22.711190886176936);
  EXPECT_DOUBLE_EQ(r.row.ttft().mean_seconds(), 2.3737413298271335);
  EXPECT_DOUBLE_EQ(r.row.ttft().p50_seconds(), 1.637908215);
  EXPECT_DOUBLE_EQ(r.row.ttft().p90_seconds(), 3.938691648800001);
  EXPECT_DOUBLE_EQ(r.row.tpot().p99_seconds(), 0.15522260767345452);  // inter_token_latency
  EXPECT_DOUBLE_EQ(r.row.itl().p50_seconds(), 0.036387712);           // inter_chunk_latency
  EXPECT_DOUBLE_EQ(r.row.e2e().p90_seconds(), 110.41920857440005);
  EXPECT_DOUBLE_EQ(*r.measured_mean_in_flight, 11.20594822942936);
  EXPECT_DOUBLE_EQ(*r.mean_input_tokens, 93089.60831509846);
  EXPECT_EQ(r.row.output_tokens_total(), 413407u);
  EXPECT_THAT(r.row.note(), HasSubstr("p25 TTFT"));
  // inter_chunk_latency min = 0.0 ms: no LatencyFigures value (they are positive), in the note.
  EXPECT_FALSE(r.row.itl().has_min_seconds());
  EXPECT_THAT(r.row.note(), HasSubstr("min ITL 0 s (as reported; a latency figure must be "
                                      "positive)"));
  EXPECT_THAT(*f.tpot_definition, HasSubstr("first token excluded"));
}

TEST(IngestAiperf, RealGenaiPerfExportReadsTheFlatInputConfig) {
  const IngestedFile f =
      Parse("aiperf/perf_analyzer_issue298_streaming.profile_export_genai_perf.json");
  EXPECT_EQ(f.format, IngestFormat::kAiperfJson);
  EXPECT_EQ(f.tool, "genai-perf");
  EXPECT_EQ(f.tool_version, std::nullopt);
  ASSERT_EQ(f.runs.size(), 1u);
  const IngestedRun& r = f.runs[0];
  EXPECT_EQ(r.load, LoadKind::kClosedLoop);
  EXPECT_EQ(r.row.concurrency(), 100u);
  EXPECT_EQ(r.model_id, "ensemble");
  EXPECT_DOUBLE_EQ(r.row.requests_per_second(), 17.222547659562533);
  EXPECT_DOUBLE_EQ(r.row.ttft().mean_seconds(), 0.18463779366666665);
  EXPECT_DOUBLE_EQ(r.row.tpot().mean_seconds(), 0.0021767344516666665);
  EXPECT_DOUBLE_EQ(r.row.e2e().max_seconds(), 5.922384083999999);
  EXPECT_DOUBLE_EQ(r.row.per_user_output_tokens_per_second(), 445.00388376637636);
  EXPECT_DOUBLE_EQ(*r.mean_output_tokens, 2565.855);
  EXPECT_FALSE(r.row.has_requests());      // GenAI-Perf states no request count
  EXPECT_EQ(r.num_prompts, std::nullopt);  // input_config.request_count 0 = not set
  EXPECT_FALSE(r.row.has_itl());
  EXPECT_THAT(r.row.note(), HasSubstr("p25 TTFT 0.1245168 s"));
  EXPECT_THAT(r.row.note(), HasSubstr("std E2E 0.09406436 s"));
}

TEST(IngestAiperf, SchemaRecordsLayoutWithRateAndCapIsOpenLoop) {
  const IngestedFile f = Parse("aiperf/schema_records_layout_rate5.json");
  EXPECT_EQ(f.tool, "aiperf");
  EXPECT_EQ(f.date, "2025-09-02");
  ASSERT_EQ(f.runs.size(), 1u);
  const IngestedRun& r = f.runs[0];
  EXPECT_EQ(r.load, LoadKind::kOpenLoop);
  EXPECT_DOUBLE_EQ(r.row.arrival_rate_rps(), 5.0);
  EXPECT_EQ(r.max_concurrency, 32u);
  EXPECT_EQ(r.num_prompts, 500u);  // loadgen.request_count
  EXPECT_FALSE(r.row.has_concurrency());
  EXPECT_EQ(r.row.requests(), 480u);
  EXPECT_DOUBLE_EQ(r.row.wall_seconds(), 100.0);
  EXPECT_DOUBLE_EQ(r.row.ttft().p50_seconds(), 0.16);
  EXPECT_DOUBLE_EQ(r.row.tpot().p99_seconds(), 0.033);
  EXPECT_DOUBLE_EQ(*r.mean_input_tokens, 550.0);
  EXPECT_THAT(r.row.note(), HasSubstr("in flight capped at max_concurrency 32"));
}

TEST(IngestAiperf, ValuesAreConvertedByTheirStatedUnit) {
  const std::string text = R"({"aiperf_version": "0.3.0",
    "time_to_first_token": {"unit": "s", "avg": 0.25, "p50": 0.2},
    "request_latency": {"unit": "ns", "avg": 4000000000.0, "p99": 6500000000},
    "inter_token_latency": {"unit": "us", "avg": 12500.0},
    "request_throughput": {"unit": "requests/min", "avg": 120.0},
    "input_config": {"loadgen": {"concurrency": 2}}})";
  absl::StatusOr<IngestedFile> f = ParseMeasurementFile("units.json", text);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->runs.size(), 1u);
  const v1::SweepRow& row = f->runs[0].row;
  EXPECT_DOUBLE_EQ(row.ttft().mean_seconds(), 0.25);
  EXPECT_DOUBLE_EQ(row.ttft().p50_seconds(), 0.2);
  EXPECT_DOUBLE_EQ(row.e2e().mean_seconds(), 4.0);
  EXPECT_DOUBLE_EQ(row.e2e().p99_seconds(), 6.5);
  EXPECT_DOUBLE_EQ(row.tpot().mean_seconds(), 0.0125);
  EXPECT_DOUBLE_EQ(row.requests_per_second(), 2.0);
}

TEST(IngestAiperf, UnknownTimeUnitIsRefusedWithItsKey) {
  const std::string text = R"({"aiperf_version": "0.3.0",
    "time_to_first_token": {"unit": "parsecs", "avg": 0.25}})";
  EXPECT_THAT(ParseMeasurementFile("units.json", text),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("units.json: key \"time_to_first_token.unit\" = \"parsecs\"; "
                                 "must be a time unit")));
}

TEST(IngestAiperf, StringFigureIsRefusedWithItsKey) {
  const std::string text = R"({"request_latency": {"unit": "ms", "avg": "5767.4"}})";
  EXPECT_THAT(ParseMeasurementFile("export.json", text),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("export.json: key \"request_latency.avg\" = \"5767.4\"; must be "
                                 "a number")));
}

TEST(IngestAiperf, FractionalRequestCountIsRefused) {
  const std::string text = R"({"request_latency": {"unit": "ms", "avg": 10.0},
    "request_count": {"unit": "requests", "avg": 12.5}})";
  EXPECT_THAT(ParseMeasurementFile("export.json", text),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("key \"request_count.avg\" = 12.5; must be a whole number")));
}

TEST(IngestAiperf, MetricWithoutUnitIsRefused) {
  const std::string text = R"({"aiperf_version": "0.3.0", "request_latency": {"avg": 10.0}})";
  EXPECT_THAT(ParseMeasurementFile("export.json", text),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("export.json: key \"request_latency.unit\" is missing")));
}

}  // namespace
}  // namespace capplan::service
