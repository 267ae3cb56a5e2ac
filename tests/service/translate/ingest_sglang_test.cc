// SGLang bench_serving JSON lines and console blocks.

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

IngestedFile Parse(const std::string& path, IngestFormat format = IngestFormat::kAuto) {
  const std::string name = path.substr(path.rfind('/') + 1);
  absl::StatusOr<IngestedFile> f = ParseMeasurementFile(name, Fixture(path), format);
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : IngestedFile();
}

TEST(IngestSglangJsonl, SchemaRunsKeepMeasuredConcurrencyApartFromTheSetting) {
  const IngestedFile f = Parse("sglang-jsonl/schema_three_runs.jsonl");
  EXPECT_EQ(f.format, IngestFormat::kSglangJsonl);
  EXPECT_EQ(f.tool, "sglang.bench_serving");
  ASSERT_EQ(f.runs.size(), 3u);
  const IngestedRun& closed = f.runs[0];
  EXPECT_EQ(closed.source, "schema_three_runs.jsonl:1");
  EXPECT_EQ(closed.load, LoadKind::kClosedLoop);  // bare Infinity rate + max_concurrency 16
  EXPECT_EQ(closed.row.concurrency(), 16u);
  EXPECT_DOUBLE_EQ(*closed.measured_mean_in_flight, 15.75);
  EXPECT_DOUBLE_EQ(closed.row.e2e().mean_seconds(), 3.15);
  EXPECT_DOUBLE_EQ(closed.row.e2e().p50_seconds(), 3.1);
  EXPECT_DOUBLE_EQ(closed.row.e2e().p99_seconds(), 3.5);
  EXPECT_DOUBLE_EQ(closed.row.itl().p95_seconds(), 0.014);
  EXPECT_DOUBLE_EQ(closed.row.tpot().p50_seconds(), 0.0114);
  EXPECT_DOUBLE_EQ(*closed.mean_input_tokens, 1024.0);
  EXPECT_DOUBLE_EQ(*closed.mean_output_tokens, 256.0);
  EXPECT_THAT(closed.row.note(), HasSubstr("measured mean in flight 15.75"));
  EXPECT_THAT(closed.row.note(), HasSubstr("input throughput 5120 tok/s"));
  EXPECT_THAT(closed.row.note(),
              HasSubstr("requested random_input_len 1024, random_output_len 256, "
                        "random_range_ratio 1 (settings, not means)"));
  const IngestedRun& open = f.runs[1];
  EXPECT_EQ(open.load, LoadKind::kOpenLoop);
  EXPECT_DOUBLE_EQ(open.row.arrival_rate_rps(), 2.0);
  EXPECT_FALSE(open.row.has_concurrency());
  EXPECT_DOUBLE_EQ(*open.measured_mean_in_flight, 5.78);
  EXPECT_THAT(f.runs[2].row.note(), HasSubstr("speculative accept length 2.35 tokens/step"));
}

TEST(IngestSglangJsonl, RealOnlineFileIsOpenLoopWithMediansOnly) {
  const IngestedFile f = Parse("sglang-jsonl/datacrunch_llama33_70b_online.jsonl");
  ASSERT_EQ(f.runs.size(), 7u);
  const IngestedRun& r = f.runs[0];
  EXPECT_EQ(r.load, LoadKind::kOpenLoop);
  EXPECT_DOUBLE_EQ(r.row.arrival_rate_rps(), 1.0);
  EXPECT_EQ(r.row.requests(), 300u);
  EXPECT_DOUBLE_EQ(r.row.wall_seconds(), 298.3675805060193);
  EXPECT_DOUBLE_EQ(r.row.output_tokens_per_second(), 537.4142851849319);
  EXPECT_DOUBLE_EQ(r.row.ttft().p50_seconds(), 0.08574514742940664);
  EXPECT_FALSE(r.row.ttft().has_mean_seconds());
  EXPECT_DOUBLE_EQ(r.row.e2e().mean_seconds(), 7.840616212638561);
  EXPECT_DOUBLE_EQ(*r.mean_input_tokens, 152612.0 / 300.0);
  EXPECT_FALSE(r.row.has_requests_per_second());  // this layout has no request_throughput
}

TEST(IngestSglangJsonl, RealOfflineFileWithBareInfinityIsABurst) {
  const IngestedFile f = Parse("sglang-jsonl/datacrunch_llama33_70b_offline.jsonl");
  ASSERT_EQ(f.runs.size(), 7u);
  for (const IngestedRun& r : f.runs) {
    EXPECT_EQ(r.load, LoadKind::kBurst) << r.source;
    EXPECT_EQ(r.num_prompts, std::nullopt) << r.source;
  }
  EXPECT_EQ(f.runs[0].row.requests(), 3000u);
}

TEST(IngestSglangJsonl, TruncatedLineNamesItsLine) {
  const std::string text = Fixture("sglang-jsonl/schema_three_runs.jsonl");
  const std::string cut = text.substr(0, text.size() - 40);
  EXPECT_THAT(ParseMeasurementFile("online.jsonl", cut),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("online.jsonl: JSON ends early at line 3")));
}

TEST(IngestSglangJsonl, NonFiniteFigureIsRefusedWithItsLineAndKey) {
  const std::string text =
      "{\"backend\": \"sglang\", \"request_rate\": Infinity, \"max_concurrency\": 4, "
      "\"completed\": 10, \"mean_e2e_latency_ms\": 100.0, \"concurrency\": 3.9}\n"
      "{\"backend\": \"sglang\", \"request_rate\": Infinity, \"max_concurrency\": 8, "
      "\"completed\": 10, \"mean_e2e_latency_ms\": NaN, \"concurrency\": 7.9}\n";
  EXPECT_THAT(ParseMeasurementFile("online.jsonl", text),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("online.jsonl:2: key \"mean_e2e_latency_ms\" = NaN; must be a "
                                 "finite number")));
}

TEST(IngestSglangJsonl, TraceReplayLeavesTheLoadUnknownAndSaysSo) {
  const std::string text =
      "{\"backend\": \"sglang\", \"request_rate\": \"trace\", \"completed\": 10, "
      "\"mean_e2e_latency_ms\": 100.0}\n";
  absl::StatusOr<IngestedFile> f = ParseMeasurementFile("trace.jsonl", text);
  ASSERT_TRUE(f.ok()) << f.status();
  ASSERT_EQ(f->runs.size(), 1u);
  EXPECT_EQ(f->runs[0].load, LoadKind::kUnknown);
  EXPECT_THAT(f->runs[0].row.note(), HasSubstr("replayed from a trace"));
}

TEST(IngestSglangJsonl, WordRequestRateIsRefused) {
  const std::string text =
      "{\"backend\": \"sglang\", \"request_rate\": \"fast\", \"completed\": 10}\n";
  EXPECT_THAT(ParseMeasurementFile("fast.jsonl", text),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("fast.jsonl: key \"request_rate\" = \"fast\"; must be a number "
                                 "of requests per second or \"inf\"")));
}

TEST(IngestSglangConsole, SchemaBlockReadsEveryLabel) {
  const IngestedFile f = Parse("sglang-console/schema_block.txt");
  EXPECT_EQ(f.format, IngestFormat::kSglangConsole);
  ASSERT_EQ(f.runs.size(), 1u);
  const IngestedRun& r = f.runs[0];
  EXPECT_EQ(r.load, LoadKind::kOpenLoop);
  EXPECT_DOUBLE_EQ(r.row.arrival_rate_rps(), 8.0);
  EXPECT_EQ(r.max_concurrency, std::nullopt);  // "not set"
  EXPECT_EQ(r.num_prompts, 200u);
  EXPECT_DOUBLE_EQ(*r.measured_mean_in_flight, 31.2);
  EXPECT_DOUBLE_EQ(r.row.total_tokens_per_second(), 17066.67);
  EXPECT_DOUBLE_EQ(r.row.e2e().p90_seconds(), 5.2);
  EXPECT_DOUBLE_EQ(r.row.e2e().p99_seconds(), 6.1);
  EXPECT_DOUBLE_EQ(r.row.itl().max_seconds(), 0.12);
  EXPECT_DOUBLE_EQ(r.row.tpot().mean_seconds(), 0.00853);
  EXPECT_THAT(r.row.note(), HasSubstr("speculative accept length 2.1 tokens/step"));
  EXPECT_THAT(r.row.note(), HasSubstr("backend sglang"));
  EXPECT_THAT(r.row.note(), HasSubstr("peak concurrent requests 40"));
}

TEST(IngestSglangConsole, RealCookbookBlockIsClosedLoopAtOne) {
  const IngestedFile f = Parse("sglang-console/cookbook_llama31_70b.txt");
  EXPECT_EQ(f.format, IngestFormat::kSglangConsole);
  ASSERT_EQ(f.runs.size(), 1u);
  const IngestedRun& r = f.runs[0];
  EXPECT_EQ(r.load, LoadKind::kClosedLoop);
  EXPECT_EQ(r.row.concurrency(), 1u);
  EXPECT_DOUBLE_EQ(*r.measured_mean_in_flight, 1.0);
  EXPECT_EQ(r.row.requests(), 10u);
  EXPECT_DOUBLE_EQ(r.row.e2e().mean_seconds(), 7.97781);
  EXPECT_DOUBLE_EQ(r.row.ttft().p99_seconds(), 0.16388);
  EXPECT_DOUBLE_EQ(r.row.itl().p95_seconds(), 0.01869);
  EXPECT_DOUBLE_EQ(*r.mean_output_tokens, 422.0);
}

TEST(IngestSglangConsole, OldTypoLabelStillGivesTheConcurrency) {
  const std::string text =
      "============ Serving Benchmark Result ============\n"
      "Backend:                                 sglang\n"
      "Traffic request rate:                    inf\n"
      "Max reqeuest concurrency:                32\n"
      "Successful requests:                     320\n"
      "Concurrency:                             31.50\n"
      "Mean E2E Latency (ms):                   900.00\n"
      "==================================================\n";
  absl::StatusOr<IngestedFile> f = ParseMeasurementFile("old.txt", text);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->format, IngestFormat::kSglangConsole);
  ASSERT_EQ(f->runs.size(), 1u);
  EXPECT_EQ(f->runs[0].row.concurrency(), 32u);
  EXPECT_DOUBLE_EQ(*f->runs[0].measured_mean_in_flight, 31.5);
}

}  // namespace
}  // namespace capplan::service
