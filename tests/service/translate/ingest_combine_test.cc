// Combining parsed files of one configuration into sweeps: sorting by load,
// closed and open loop kept apart, workload agreement, refusals.

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/translate/ingest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

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

std::vector<IngestedFile> GlmSetShuffled() {
  std::vector<IngestedFile> files;
  for (int c : {32, 1, 128, 4, 8}) {
    files.push_back(Parse("vllm-json/glm47_gaudi3_conc" + std::to_string(c) + ".json"));
  }
  return files;
}

TEST(CombineMeasurements, FilePerConcurrencyBecomesOneSortedClosedLoopSweep) {
  CombineOptions options;
  options.name = "glm-4.7-gaudi3";
  absl::StatusOr<CombinedMeasurements> c = CombineMeasurements(GlmSetShuffled(), options);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->sweeps.size(), 1u);
  const v1::Sweep& s = c->sweeps[0];
  EXPECT_EQ(s.name(), "glm-4.7-gaudi3-closed-loop");
  EXPECT_TRUE(s.closed_loop());
  ASSERT_EQ(s.rows_size(), 5);
  const uint32_t expected[] = {1, 4, 8, 32, 128};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(s.rows(i).concurrency(), expected[i]) << i;
  EXPECT_DOUBLE_EQ(s.rows(0).ttft().p50_seconds(), 0.164409135497408);
  EXPECT_DOUBLE_EQ(s.rows(4).output_tokens_per_second(), 760.7832785124324);
  EXPECT_THAT(s.description(), HasSubstr("concurrency 1 to 128"));
  // Every run sends exactly 1024 input tokens; outputs average 674-786 tokens.
  EXPECT_DOUBLE_EQ(s.workload().input_tokens(), 1024.0);
  EXPECT_FALSE(s.workload().has_output_tokens());
  EXPECT_THAT(s.workload().output_tokens_note(), HasSubstr("differs between runs"));
  EXPECT_EQ(c->provenance.benchmark_tool(), "vllm bench serve / benchmark_serving.py");
  EXPECT_EQ(c->provenance.date(), "2026-03-14");
  EXPECT_THAT(c->provenance.tpot_definition(), HasSubstr("first token excluded"));
}

// The file holds three deployments (metadata "deployment") of rates 10, 30, inf;
// the first three lines are one of them.
IngestedFile FirstDeployment() {
  IngestedFile f = Parse("vllm-json/nerdalert_results.jsonl");
  f.runs.resize(3);
  return f;
}

TEST(CombineMeasurements, OpenLoopAndBurstRunsBecomeSeparateSweeps) {
  absl::StatusOr<CombinedMeasurements> c = CombineMeasurements({FirstDeployment()});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->sweeps.size(), 2u);
  const v1::Sweep& open = c->sweeps[0];
  EXPECT_EQ(open.name(), "ingested-open-loop");
  EXPECT_FALSE(open.closed_loop());
  ASSERT_EQ(open.rows_size(), 2);
  EXPECT_DOUBLE_EQ(open.rows(0).arrival_rate_rps(), 10.0);
  EXPECT_DOUBLE_EQ(open.rows(1).arrival_rate_rps(), 30.0);
  EXPECT_DOUBLE_EQ(open.workload().input_tokens(), 999.0);
  const v1::Sweep& burst = c->sweeps[1];
  EXPECT_EQ(burst.name(), "ingested-burst");
  EXPECT_FALSE(burst.closed_loop());
  ASSERT_EQ(burst.rows_size(), 1);
  EXPECT_FALSE(burst.rows(0).has_arrival_rate_rps());
  EXPECT_FALSE(burst.rows(0).has_concurrency());
  EXPECT_EQ(burst.rows(0).requests(), 900u);
  EXPECT_THAT(burst.description(), HasSubstr("number of prompts sent at once 900"));
}

TEST(CombineMeasurements, SeveralDeploymentsInOneFileCollideAtTheirLoadPoints) {
  EXPECT_THAT(CombineMeasurements({Parse("vllm-json/nerdalert_results.jsonl")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("nerdalert_results.jsonl:1 and nerdalert_results.jsonl:4 are "
                                 "both open-loop runs at 10")));
}

TEST(CombineMeasurements, MixedLoadKindsAreAnErrorNamingBothWhenNotSplit) {
  CombineOptions options;
  options.split_load_kinds = false;
  EXPECT_THAT(CombineMeasurements({FirstDeployment()}, options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("open-loop runs (nerdalert_results.jsonl:1)"),
                             HasSubstr("burst runs (nerdalert_results.jsonl:3)"),
                             HasSubstr("cannot share a sweep"))));
}

TEST(CombineMeasurements, ClosedAndOpenLoopFilesOfOneModelSplit) {
  absl::StatusOr<CombinedMeasurements> c = CombineMeasurements(
      {Parse("vllm-json/schema_open_rate4.json"), Parse("vllm-json/schema_closed_c8.json")});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->sweeps.size(), 2u);
  EXPECT_TRUE(c->sweeps[0].closed_loop());
  EXPECT_EQ(c->sweeps[0].rows(0).concurrency(), 8u);
  EXPECT_FALSE(c->sweeps[1].closed_loop());
  EXPECT_DOUBLE_EQ(c->sweeps[1].rows(0).arrival_rate_rps(), 4.0);
  EXPECT_DOUBLE_EQ(c->sweeps[1].workload().input_tokens(), 1000.0);
  EXPECT_DOUBLE_EQ(c->sweeps[1].workload().output_tokens(), 200.0);
}

TEST(CombineMeasurements, DifferentModelsAreRefusedNamingBothFiles) {
  EXPECT_THAT(CombineMeasurements({Parse("vllm-json/glm47_gaudi3_conc8.json"),
                                   Parse("vllm-json/schema_closed_c8.json")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("glm47_gaudi3_conc8.json names model \"zai-org/GLM-4.7\""),
                             HasSubstr("schema_closed_c8.json names \"meta-llama/"
                                       "Llama-3.1-8B-Instruct\""))));
}

TEST(CombineMeasurements, TwoRunsAtOneLoadPointAreRefused) {
  IngestedFile again = Parse("vllm-json/glm47_gaudi3_conc8.json");
  again.runs[0].source = "copy/glm47_gaudi3_conc8.json";
  EXPECT_THAT(CombineMeasurements({Parse("vllm-json/glm47_gaudi3_conc8.json"), again}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("glm47_gaudi3_conc8.json and copy/glm47_gaudi3_conc8.json are "
                                 "both closed-loop runs at 8")));
}

TEST(CombineMeasurements, RunWithoutALoadIsRefusedByName) {
  EXPECT_THAT(CombineMeasurements({Parse("vllm-console/pr26478.fragment.txt")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("pr26478.fragment.txt:1: the run states neither a concurrency "
                                 "nor a request rate")));
}

TEST(CombineMeasurements, EngineLogsAloneGiveNothingToCombine) {
  EXPECT_THAT(CombineMeasurements({Parse("engine-log/vllm-v1-2025-11.log")}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("no measurement runs")));
}

TEST(CombineMeasurements, TokensWithinOnePercentAgreeAsTheRequestWeightedMean) {
  IngestedFile f;
  f.file_name = "hand.json";
  for (int i = 0; i < 2; ++i) {
    IngestedRun r;
    r.source = "hand.json:" + std::to_string(i + 1);
    r.load = LoadKind::kClosedLoop;
    r.max_concurrency = 4u * (i + 1);
    r.mean_input_tokens = i == 0 ? 1023.9 : 1024.0;
    r.mean_output_tokens = i == 0 ? 100.0 : 200.0;
    r.row.set_concurrency(*r.max_concurrency);
    r.row.set_requests(i == 0 ? 10 : 30);
    f.runs.push_back(r);
  }
  absl::StatusOr<CombinedMeasurements> c = CombineMeasurements({f});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->sweeps.size(), 1u);
  EXPECT_DOUBLE_EQ(c->sweeps[0].workload().input_tokens(), (1023.9 * 10 + 1024.0 * 30) / 40);
  EXPECT_FALSE(c->sweeps[0].workload().has_output_tokens());
  EXPECT_THAT(c->sweeps[0].workload().output_tokens_note(),
              HasSubstr("differs between runs: 100 to 200 tokens per request"));
}

TEST(CombineMeasurements, RunAppendedTwiceIsRefused) {
  // Lines 4 and 5 of the published file are the same run.
  EXPECT_THAT(CombineMeasurements({Parse("sglang-jsonl/datacrunch_llama33_70b_offline.jsonl")}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("datacrunch_llama33_70b_offline.jsonl:4 and "
                                 "datacrunch_llama33_70b_offline.jsonl:5 are both burst runs at "
                                 "1500")));
}

TEST(CombineMeasurements, TokensNotStatedByEveryRunStayAbsent) {
  IngestedFile f = Parse("vllm-json/schema_closed_c8.json");
  IngestedFile g = Parse("vllm-console/gpustack_dsr1_h200_c4.txt");
  g.runs[0].model_id = f.runs[0].model_id;
  g.runs[0].mean_output_tokens.reset();
  absl::StatusOr<CombinedMeasurements> c = CombineMeasurements({f, g});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->sweeps.size(), 1u);
  EXPECT_FALSE(c->sweeps[0].workload().has_output_tokens());
  EXPECT_THAT(c->sweeps[0].workload().output_tokens_note(),
              HasSubstr("not stated by gpustack_dsr1_h200_c4.txt:2"));
  EXPECT_EQ(c->provenance.date(), "2025-11-04");
}

// ------------------------------------------------------ load the user states

TEST(ApplyStatedLoad, ConsoleBlockWithoutALoadTakesTheUsersRate) {
  std::vector<IngestedFile> files = {Parse("vllm-console/dstack_mi300x_sonnet_n16.txt")};
  EXPECT_THAT(CombineMeasurements(files),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("dstack_mi300x_sonnet_n16.txt:1: the run states neither")));
  StatedLoad load;
  load.infinite_rate = true;
  load.num_prompts = 16;
  ASSERT_TRUE(ApplyStatedLoad(load, absl::MakeSpan(files)).ok());
  const IngestedRun& r = files[0].runs[0];
  EXPECT_EQ(r.load, LoadKind::kBurst);
  EXPECT_EQ(r.row.burst_requests(), 16u);
  EXPECT_THAT(r.row.note(),
              HasSubstr("burst: request_rate inf without a concurrency cap, 16 prompts sent at "
                        "once (stated by the user: --request-rate inf, --num-prompts 16); "));
  absl::StatusOr<CombinedMeasurements> c = CombineMeasurements(files);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->sweeps[0].rows(0).burst_requests(), 16u);
}

TEST(ApplyStatedLoad, ConcurrencyFillsOnlyWhatTheFileLeavesOut) {
  std::vector<IngestedFile> files = {Parse("vllm-console/dstack_mi300x_sonnet_n16.txt"),
                                     Parse("vllm-json/glm47_gaudi3_conc8.json")};
  StatedLoad load;
  load.max_concurrency = 8;
  ASSERT_TRUE(ApplyStatedLoad(load, absl::MakeSpan(files)).ok());
  EXPECT_EQ(files[0].runs[0].load, LoadKind::kClosedLoop);
  EXPECT_EQ(files[0].runs[0].row.concurrency(), 8u);
  EXPECT_THAT(files[0].runs[0].row.note(), HasSubstr("(stated by the user: --max-concurrency 8)"));
  // The JSON states max_concurrency 8 itself: nothing is said on its behalf.
  EXPECT_THAT(files[1].runs[0].row.note(), Not(HasSubstr("stated by the user")));
}

TEST(ApplyStatedLoad, FileStatingADifferentLoadIsRefusedByName) {
  std::vector<IngestedFile> files = {Parse("vllm-json/glm47_gaudi3_conc8.json")};
  StatedLoad conc;
  conc.max_concurrency = 16;
  EXPECT_THAT(ApplyStatedLoad(conc, absl::MakeSpan(files)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("glm47_gaudi3_conc8.json: the file states max_concurrency 8; "
                                 "--max-concurrency 16 differs")));
  std::vector<IngestedFile> burst = {Parse("vllm-console/dennislee_qwen2_n1000.txt")};
  StatedLoad rate;
  rate.request_rate_rps = 4;
  EXPECT_THAT(ApplyStatedLoad(rate, absl::MakeSpan(burst)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("dennislee_qwen2_n1000.txt:8: the file states request_rate "
                                 "inf; --request-rate 4 differs")));
  StatedLoad prompts;
  prompts.num_prompts = 500;
  EXPECT_THAT(ApplyStatedLoad(prompts, absl::MakeSpan(burst)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("the file states num_prompts 1000; --num-prompts 500 differs")));
}

}  // namespace
}  // namespace capplan::service
