// vLLM result JSON and console blocks: exact converted figures from schema
// fixtures and real published files (tests/data/ingest/README.md).

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
using ::testing::Not;

std::string Fixture(const std::string& path) { return capplan::testing::IngestFixture(path); }

IngestedFile Parse(const std::string& path, IngestFormat format = IngestFormat::kAuto) {
  const std::string name = path.substr(path.rfind('/') + 1);
  absl::StatusOr<IngestedFile> f = ParseMeasurementFile(name, Fixture(path), format);
  EXPECT_TRUE(f.ok()) << f.status();
  return f.ok() ? *f : IngestedFile();
}

TEST(IngestVllmJson, RealClosedLoopFileConvertsMillisecondsToSeconds) {
  const IngestedFile f = Parse("vllm-json/glm47_gaudi3_conc8.json");
  EXPECT_EQ(f.format, IngestFormat::kVllmJson);
  EXPECT_EQ(f.tool, "vllm bench serve / benchmark_serving.py");  // the JSON does not say
  EXPECT_EQ(f.date, "2026-03-14");
  ASSERT_EQ(f.runs.size(), 1u);
  const IngestedRun& r = f.runs[0];
  EXPECT_EQ(r.source, "glm47_gaudi3_conc8.json");
  EXPECT_EQ(r.load, LoadKind::kClosedLoop);
  EXPECT_EQ(r.max_concurrency, 8u);
  EXPECT_EQ(r.request_rate_rps, std::nullopt);
  EXPECT_EQ(r.num_prompts, 80u);
  EXPECT_EQ(r.model_id, "zai-org/GLM-4.7");
  EXPECT_DOUBLE_EQ(*r.mean_input_tokens, 1024.0);
  EXPECT_DOUBLE_EQ(*r.mean_output_tokens, 59603.0 / 80.0);
  EXPECT_EQ(r.measured_mean_in_flight, std::nullopt);
  const v1::SweepRow& row = r.row;
  EXPECT_EQ(row.concurrency(), 8u);
  EXPECT_FALSE(row.has_arrival_rate_rps());
  EXPECT_EQ(row.requests(), 80u);
  EXPECT_FALSE(row.has_failed_requests());
  EXPECT_DOUBLE_EQ(row.wall_seconds(), 471.42188749399793);
  EXPECT_EQ(row.output_tokens_total(), 59603u);
  EXPECT_DOUBLE_EQ(row.requests_per_second(), 0.16969937570202137);
  EXPECT_DOUBLE_EQ(row.output_tokens_per_second(), 126.43239862459474);
  EXPECT_DOUBLE_EQ(row.total_tokens_per_second(), 300.2045593434646);
  EXPECT_DOUBLE_EQ(row.ttft().mean_seconds(), 0.3695265388754706);
  EXPECT_DOUBLE_EQ(row.ttft().p50_seconds(), 0.3271921199921053);
  EXPECT_DOUBLE_EQ(row.ttft().p99_seconds(), 0.8687727725924924);
  EXPECT_FALSE(row.ttft().has_p95_seconds());
  EXPECT_DOUBLE_EQ(row.tpot().p50_seconds(), 0.060269884787879306);
  EXPECT_DOUBLE_EQ(row.itl().p99_seconds(), 0.08583451958198563);
  EXPECT_FALSE(row.has_e2e());  // the file has no e2el keys
  EXPECT_THAT(row.note(), HasSubstr("closed loop: concurrency 8, 80 prompts"));
  EXPECT_THAT(row.note(), HasSubstr("std TTFT 0.1577846 s"));
  EXPECT_THAT(row.note(), HasSubstr("mean input 1024 tokens/request"));
  // The lengths the row is fitted at, as fields.
  EXPECT_DOUBLE_EQ(row.mean_input_tokens(), 1024.0);
  EXPECT_DOUBLE_EQ(row.mean_output_tokens(), 59603.0 / 80.0);
}

TEST(IngestVllmJson, RealFileKeepsExtraPercentilesByNameInTheNote) {
  const IngestedFile f = Parse("vllm-json/results_qwen35_fp8_cc_tp4_isl1024_osl1024_conc16.json");
  ASSERT_EQ(f.runs.size(), 1u);
  const v1::SweepRow& row = f.runs[0].row;
  EXPECT_EQ(row.concurrency(), 16u);
  EXPECT_DOUBLE_EQ(row.ttft().p90_seconds(), 0.52249623809912);
  EXPECT_DOUBLE_EQ(row.e2e().mean_seconds(), 13.217366202606809);
  EXPECT_DOUBLE_EQ(row.e2e().p50_seconds(), 12.842287113999191);
  EXPECT_THAT(row.note(), HasSubstr("p99.9 TTFT 0.5955798 s"));
  EXPECT_THAT(row.note(), HasSubstr("p99.9 E2E 18.93648 s"));
  EXPECT_THAT(row.note(), Not(HasSubstr("goodput")));  // "request_goodput:" is null
}

TEST(IngestVllmJson, SchemaClosedLoopReadsFailedPeaksAndEveryMetric) {
  const IngestedFile f = Parse("vllm-json/schema_closed_c8.json");
  ASSERT_EQ(f.runs.size(), 1u);
  const v1::SweepRow& row = f.runs[0].row;
  EXPECT_EQ(row.failed_requests(), 0u);
  EXPECT_TRUE(row.has_failed_requests());
  EXPECT_DOUBLE_EQ(row.ttft().p90_seconds(), 0.18);
  EXPECT_DOUBLE_EQ(row.tpot().mean_seconds(), 0.01925);
  EXPECT_DOUBLE_EQ(row.e2e().p90_seconds(), 4.2);
  EXPECT_DOUBLE_EQ(row.e2e().p99_seconds(), 4.5);
  EXPECT_THAT(row.note(), HasSubstr("p99.9 ITL 0.06 s"));
  EXPECT_THAT(row.note(), HasSubstr("peak output throughput 480 tok/s"));
  EXPECT_THAT(row.note(), HasSubstr("peak concurrent requests 8"));
  EXPECT_EQ(f.runs[0].model_id, "meta-llama/Llama-3.1-8B-Instruct");
}

TEST(IngestVllmJson, SchemaOpenLoopKeepsRateBurstinessAndLabel) {
  const IngestedFile f = Parse("vllm-json/schema_open_rate4.json");
  ASSERT_EQ(f.runs.size(), 1u);
  const IngestedRun& r = f.runs[0];
  EXPECT_EQ(r.load, LoadKind::kOpenLoop);
  EXPECT_DOUBLE_EQ(*r.request_rate_rps, 4.0);
  EXPECT_DOUBLE_EQ(*r.burstiness, 0.5);
  EXPECT_EQ(r.max_concurrency, std::nullopt);
  EXPECT_DOUBLE_EQ(r.row.arrival_rate_rps(), 4.0);
  EXPECT_FALSE(r.row.has_concurrency());
  EXPECT_EQ(r.row.failed_requests(), 2u);
  EXPECT_EQ(r.row.label(), "rate-4");
  EXPECT_THAT(r.row.note(), HasSubstr("open loop: request_rate 4 req/s, burstiness 0.5"));
}

TEST(IngestVllmJson, AppendedRunsAreOneRunPerLineWithTheirLineAsSource) {
  const IngestedFile f = Parse("vllm-json/nerdalert_results.jsonl");
  ASSERT_EQ(f.runs.size(), 9u);
  EXPECT_EQ(f.runs[0].source, "nerdalert_results.jsonl:1");
  EXPECT_EQ(f.runs[0].load, LoadKind::kOpenLoop);
  EXPECT_DOUBLE_EQ(f.runs[0].row.arrival_rate_rps(), 10.0);
  EXPECT_EQ(f.runs[2].source, "nerdalert_results.jsonl:3");
  EXPECT_EQ(f.runs[2].load, LoadKind::kBurst);  // "request_rate": "inf", max_concurrency null
  EXPECT_EQ(f.runs[2].num_prompts, 900u);
  EXPECT_FALSE(f.runs[2].row.has_arrival_rate_rps());
  EXPECT_FALSE(f.runs[2].row.has_concurrency());
  EXPECT_THAT(f.runs[2].row.note(), HasSubstr("burst: request_rate inf without a concurrency cap, "
                                              "900 prompts sent at once"));
}

TEST(IngestVllmJson, OldLayoutWithPerRequestListsReadsTheScalars) {
  const IngestedFile f = Parse("vllm-json/dstack_h100_16qps.trimmed.json");
  ASSERT_EQ(f.runs.size(), 1u);
  const v1::SweepRow& row = f.runs[0].row;
  EXPECT_DOUBLE_EQ(row.arrival_rate_rps(), 16.0);
  EXPECT_EQ(row.requests(), 1000u);
  EXPECT_DOUBLE_EQ(row.ttft().p50_seconds(), 0.40331627649993607);
  EXPECT_EQ(f.date, "2024-11-09");
}

TEST(IngestVllmConsole, SchemaFileWithTwoBlocksGivesTwoRunsWithTheirLoads) {
  const IngestedFile f = Parse("vllm-console/schema_two_blocks.txt");
  EXPECT_EQ(f.format, IngestFormat::kVllmConsole);
  ASSERT_EQ(f.runs.size(), 2u);
  const IngestedRun& closed = f.runs[0];
  EXPECT_EQ(closed.source, "schema_two_blocks.txt:8");
  EXPECT_EQ(closed.load, LoadKind::kClosedLoop);
  EXPECT_EQ(closed.row.concurrency(), 8u);
  EXPECT_EQ(closed.num_prompts, 80u);  // from the command line above the block
  EXPECT_EQ(closed.row.requests(), 80u);
  EXPECT_EQ(closed.row.failed_requests(), 0u);
  EXPECT_DOUBLE_EQ(closed.row.wall_seconds(), 40.0);
  EXPECT_DOUBLE_EQ(closed.row.ttft().p50_seconds(), 0.14);
  EXPECT_DOUBLE_EQ(closed.row.ttft().p90_seconds(), 0.18);
  EXPECT_DOUBLE_EQ(closed.row.e2e().mean_seconds(), 3.981);
  EXPECT_DOUBLE_EQ(*closed.mean_input_tokens, 1000.0);
  EXPECT_THAT(closed.row.note(), HasSubstr("p99.9 TTFT 0.26 s"));
  const IngestedRun& open = f.runs[1];
  EXPECT_EQ(open.load, LoadKind::kOpenLoop);
  EXPECT_DOUBLE_EQ(open.row.arrival_rate_rps(), 4.0);
  EXPECT_DOUBLE_EQ(*open.burstiness, 0.5);
  EXPECT_EQ(open.max_concurrency, std::nullopt);  // "Maximum request concurrency: None"
  EXPECT_EQ(open.num_prompts, 200u);
  EXPECT_EQ(open.row.failed_requests(), 2u);
  EXPECT_DOUBLE_EQ(open.row.tpot().p99_seconds(), 0.035);
}

TEST(IngestVllmConsole, RealBlockStatesItsConcurrency) {
  const IngestedFile f = Parse("vllm-console/gpustack_dsr1_h200_c4.txt");
  ASSERT_EQ(f.runs.size(), 1u);
  const IngestedRun& r = f.runs[0];
  EXPECT_EQ(r.source, "gpustack_dsr1_h200_c4.txt:2");
  EXPECT_EQ(r.row.concurrency(), 4u);
  EXPECT_EQ(r.row.requests(), 100u);
  EXPECT_DOUBLE_EQ(r.row.wall_seconds(), 108.42);
  EXPECT_DOUBLE_EQ(r.row.requests_per_second(), 0.92);
  EXPECT_DOUBLE_EQ(r.row.output_tokens_per_second(), 196.81);
  EXPECT_DOUBLE_EQ(r.row.total_tokens_per_second(), 407.45);
  EXPECT_DOUBLE_EQ(r.row.ttft().mean_seconds(), 0.1233);
  EXPECT_DOUBLE_EQ(r.row.tpot().p50_seconds(), 0.01913);
  EXPECT_DOUBLE_EQ(r.row.itl().p99_seconds(), 0.04861);
  EXPECT_DOUBLE_EQ(*r.mean_input_tokens, 228.36);
  EXPECT_EQ(r.num_prompts, std::nullopt);
  EXPECT_THAT(r.row.note(), HasSubstr("peak concurrent requests 9"));
  EXPECT_THAT(r.row.note(), HasSubstr("number of prompts not stated"));
}

TEST(IngestVllmConsole, CommandWithoutRequestRateIsABurstOfItsPrompts) {
  const IngestedFile f = Parse("vllm-console/dennislee_qwen2_n10.txt");
  ASSERT_EQ(f.runs.size(), 1u);
  const IngestedRun& r = f.runs[0];
  EXPECT_EQ(r.load, LoadKind::kBurst);
  EXPECT_EQ(r.num_prompts, 10u);
  EXPECT_EQ(r.row.requests(), 10u);
  EXPECT_DOUBLE_EQ(r.row.ttft().p99_seconds(), 0.72397);
  EXPECT_THAT(r.row.note(), HasSubstr("no --request-rate on the benchmark command (line 1)"));
}

TEST(IngestVllmConsole, PreambleBeforeTheBlockGivesTheRate) {
  const IngestedFile f = Parse("vllm-console/nerdalert_10qps.txt");
  ASSERT_EQ(f.runs.size(), 1u);
  EXPECT_EQ(f.runs[0].load, LoadKind::kOpenLoop);
  EXPECT_DOUBLE_EQ(f.runs[0].row.arrival_rate_rps(), 10.0);
  EXPECT_DOUBLE_EQ(*f.runs[0].burstiness, 1.0);
  EXPECT_DOUBLE_EQ(f.runs[0].row.tpot().mean_seconds(), 0.01358);
  EXPECT_THAT(f.runs[0].row.note(), HasSubstr("load settings from the lines before"));
}

TEST(IngestVllmConsole, AnnotatedAndUnclosedFragmentStillReadsWhatItHas) {
  const IngestedFile f = Parse("vllm-console/pr26478.fragment.txt");
  ASSERT_EQ(f.runs.size(), 1u);
  const IngestedRun& r = f.runs[0];
  EXPECT_EQ(r.row.failed_requests(), 0u);  // "0          <<<<<<< New line"
  EXPECT_EQ(r.row.requests(), 1000u);
  EXPECT_DOUBLE_EQ(r.row.ttft().p99_seconds(), 18.16416);
  EXPECT_FALSE(r.row.has_tpot());  // "Mean TPOT (ms)" has no value
  EXPECT_EQ(r.load, LoadKind::kUnknown);
  EXPECT_THAT(f.notes, ::testing::Contains(HasSubstr("not closed")));
}

TEST(IngestVllmConsole, BadValueNamesFileLineAndLabel) {
  const std::string text =
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     10\n"
      "Mean TTFT (ms):                          abc\n"
      "==================================================\n";
  EXPECT_THAT(ParseMeasurementFile("bench.txt", text),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("bench.txt:3: \"Mean TTFT (ms):\" = \"abc\"; must be a number")));
}

TEST(IngestVllmConsole, NegativeFigureIsRefused) {
  const std::string text =
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     10\n"
      "Benchmark duration (s):                  -3.5\n"
      "==================================================\n";
  EXPECT_THAT(ParseMeasurementFile("bench.txt", text),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("bench.txt:3: \"Benchmark duration (s):\" = \"-3.5\"; must not "
                                 "be negative")));
}

// Found by fuzz_ingest_vllm_console: a count past 2^64 was converted to an
// integer before its range was checked (undefined behaviour).
TEST(IngestVllmConsole, CountTooLargeForAnIntegerIsRefused) {
  const std::string text =
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     77777777777777777777777777777777777777\n"
      "==================================================\n";
  EXPECT_THAT(ParseMeasurementFile("bench.txt", text),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("bench.txt:2: \"Successful requests:\" = "
                                 "\"77777777777777777777777777777777777777\"; must be a whole "
                                 "number")));
}

// Found by fuzz_ingest_sglang_console: a --num-prompts of 2e84 on the
// benchmark command was converted to an integer before its range was checked.
TEST(IngestVllmConsole, CommandCountTooLargeForAnIntegerIsRefused) {
  const std::string text =
      "python3 -m sglang.bench_serving --backend sglang --num-prompts 2.01e84\n"
      "============ Serving Benchmark Result ============\n"
      "Successful requests:                     10\n"
      "==================================================\n";
  EXPECT_THAT(
      ParseMeasurementFile("bench.txt", text),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("bench.txt:1: --num-prompts 2.01e84; must be at most 4294967295")));
}

TEST(IngestVllmConsole, BlockWithoutFiguresIsRefused) {
  const std::string text =
      "============ Serving Benchmark Result ============\n"
      "==================================================\n";
  EXPECT_THAT(ParseMeasurementFile("bench.txt", text),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("bench.txt:1: the result "
                                                                     "block holds no figures")));
}

TEST(IngestVllmConsole, ToolIsNamedAsTheCommandLineShowsIt) {
  EXPECT_EQ(Parse("vllm-console/dennislee_qwen2_n10.txt").tool, "benchmark_serving.py");
  EXPECT_EQ(Parse("vllm-console/schema_two_blocks.txt").tool, "vllm bench serve");
  // No command line: either tool could have printed the block.
  EXPECT_EQ(Parse("vllm-console/nerdalert_10qps.txt").tool,
            "vllm bench serve / benchmark_serving.py");
}

TEST(IngestVllmConsole, BurstWithFailedRequestsSentItsPrompts) {
  const IngestedFile f = Parse("vllm-console/dennislee_qwen2_n1000.txt");
  ASSERT_EQ(f.runs.size(), 1u);
  const IngestedRun& r = f.runs[0];
  EXPECT_EQ(r.load, LoadKind::kBurst);
  EXPECT_EQ(r.num_prompts, 1000u);  // "--num-prompts 1000" on a continuation line
  EXPECT_EQ(r.row.requests(), 924u);
  EXPECT_EQ(r.row.burst_requests(), 1000u);
  EXPECT_THAT(r.row.note(), HasSubstr("1000 prompts sent at once"));
}

}  // namespace
}  // namespace capplan::service
