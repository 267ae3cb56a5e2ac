#include "service/cli/validate.h"

#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/cli/cli.h"
#include "tests/test_common/cli_runner.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using Result = ::capplan::testing::CliResult;
using ::capplan::testing::RunCapplan;
using ::capplan::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(CliValidate, LongContextOnA4090FailsWithExitOne) {
  Result r = RunCapplan({"validate", "--launch",
                         "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 131072",
                         "--gpu", "nvidia-rtx-4090-24gb"});
  EXPECT_EQ(r.code, kExitFail) << r.err;
  EXPECT_THAT(r.out, HasSubstr("verdict: FAIL"));
  EXPECT_THAT(r.out, HasSubstr("KV_POOL_BELOW_ONE_REQUEST"));
}

TEST(CliValidate, ShortContextOnAnH100PassesWithExitZero) {
  Result r = RunCapplan({"validate", "--launch",
                         "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 8192",
                         "--gpu", "nvidia-h100-sxm-80gb"});
  EXPECT_EQ(r.code, kExitOk) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("verdict: PASS"));
}

TEST(CliValidate, AllowListTurnsTheErrorIntoAWarning) {
  Result r = RunCapplan({"validate", "--launch",
                         "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 131072",
                         "--gpu", "nvidia-rtx-4090-24gb", "--allow", "KV_POOL_BELOW_ONE_REQUEST"});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("(allowed)"));
}

TEST(CliValidate, MalformedSpecExitsTwoNamingTheField) {
  TempDir dir;
  dir.Write("bad.txtpb", "deployment {\n  model_id: \"qwen3-8b\"\n  gpu_cont: 2\n}\n");
  Result r = RunCapplan({"validate", "--spec", (dir.path() / "bad.txtpb").string()});
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("bad.txtpb:3:11:"));
  EXPECT_THAT(r.err, HasSubstr("gpu_cont"));

  dir.Write("bad.json", R"({"deployment": {"model_id": "qwen3-8b", "gpu_cont": 2}})");
  r = RunCapplan({"validate", "--spec", (dir.path() / "bad.json").string()});
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("gpu_cont"));

  dir.Write("range.txtpb", R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb"
                                           engine { gpu_memory_utilization: 1.5 } })");
  r = RunCapplan({"validate", "--spec", (dir.path() / "range.txtpb").string()});
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT: ValidateRequest.deployment.engine."
                               "gpu_memory_utilization = 1.5; must be at most 1"));
}

TEST(CliValidate, UnreachableServerExitsTwo) {
  Result r = RunCapplan({"validate", "--model", "qwen3-8b", "--gpu", "nvidia-l4-24gb", "--server",
                         "127.0.0.1:1", "--timeout-seconds", "2"});
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("unreachable"));
}

TEST(CliValidate, LaunchNeedsTheGpu) {
  Result r = RunCapplan({"validate", "--launch", "vllm serve Qwen/Qwen3-8B"});
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("--launch needs --gpu"));
}

TEST(CliValidate, UnknownAllowCodeIsInvalid) {
  Result r = RunCapplan(
      {"validate", "--model", "qwen3-8b", "--gpu", "nvidia-l4-24gb", "--allow", "NOT_A_CODE"});
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("ValidateRequest.allow[0] = \"NOT_A_CODE\""));
}

TEST(CliValidate, JunitReportParsesAndListsTheFailedCheck) {
  TempDir dir;
  std::string xml = (dir.path() / "report.xml").string();
  Result r = RunCapplan({"validate", "--launch",
                         "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 131072",
                         "--gpu", "nvidia-rtx-4090-24gb", "--junit", xml});
  ASSERT_EQ(r.code, kExitFail) << r.err;
  std::ifstream in(xml);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("<failure"));
  EXPECT_THAT(text.str(), HasSubstr("type=\"KV_POOL_BELOW_ONE_REQUEST\""));
  // Python's XML parser reads it, and finds exactly the failed checks.
  std::string script =
      "import sys, xml.etree.ElementTree as E\n"
      "root = E.parse(sys.argv[1]).getroot()\n"
      "failed = [c.get('name') for c in root.iter('testcase') if c.find('failure') is not None]\n"
      "assert 'KV pool holds one request of max_model_len' in failed, failed\n"
      "suite = root.find('testsuite')\n"
      "assert int(suite.get('failures')) == len(failed), (suite.get('failures'), failed)\n";
  dir.Write("check.py", script);
  std::string command = "/usr/bin/python3 " + (dir.path() / "check.py").string() + " " + xml;
  EXPECT_EQ(std::system(command.c_str()), 0);
}

TEST(CliValidate, JunitWriteFailureLeavesNoFileAndExitsTwo) {
  Result r = RunCapplan({"validate", "--model", "qwen3-8b", "--gpu", "nvidia-l4-24gb", "--junit",
                         "/nonexistent-dir/report.xml"});
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("--junit = /nonexistent-dir/report.xml; cannot write"));
}

// The RESULT cell of each row of the checks table.
std::vector<std::pair<std::string, std::string>> CheckResults(const std::string& out) {
  std::vector<std::pair<std::string, std::string>> results;
  const size_t table = out.find("CHECK ");
  if (table == std::string::npos) return results;
  std::istringstream lines(out.substr(table));
  std::string header, line;
  std::getline(lines, header);
  const size_t result_at = header.find("RESULT");
  while (std::getline(lines, line)) {
    if (line.size() <= result_at) continue;
    const std::string rest = line.substr(result_at);
    results.emplace_back(line.substr(0, result_at), rest.substr(0, rest.find(' ')));
  }
  return results;
}

// A PASS verdict has no FAIL check: a check whose finding is only a warning
// (or an allowed error) reads "warning".
TEST(CliValidate, NoFailCheckUnderAPassVerdict) {
  const std::string specs = std::string(CAPPLAN_SOURCE_DIR) + "/examples/deployments/";
  for (const std::vector<std::string>& command : std::vector<std::vector<std::string>>{
           {"validate", "--baseline", capplan::testing::k002},
           {"validate", "--spec", specs + "llama-3.1-8b-h100-8k-context.txtpb"},
           {"validate", "--spec", specs + "llama-3.1-8b-l4-allowed-short-pool.txtpb"},
           {"validate", "--spec", specs + "mixtral-awq-2x-a100-no-quality-gate.txtpb"},
           {"validate", "--spec", specs + "rtx5090-x4-seed-002-ten-users.txtpb"}}) {
    Result r = RunCapplan(command);
    ASSERT_EQ(r.code, kExitOk) << command.back() << r.err << r.out;
    ASSERT_THAT(r.out, HasSubstr("verdict: PASS"));
    for (const auto& [check, result] : CheckResults(r.out)) {
      EXPECT_NE(result, "FAIL") << command.back() << ": " << check;
    }
    EXPECT_GT(CheckResults(r.out).size(), 5u) << command.back();
  }
  // A FAIL verdict shows its failing check as FAIL, its warnings as warning.
  Result fail = RunCapplan({"validate", "--model", "llama-3.1-8b-instruct", "--gpu",
                            "nvidia-l4-24gb", "--max-model-len", "131072", "--input-tokens", "1000",
                            "--output-tokens", "200", "--users", "4"});
  ASSERT_EQ(fail.code, kExitFail) << fail.err;
  std::map<std::string, std::string> by_name;
  for (const auto& [check, result] : CheckResults(fail.out)) {
    by_name[std::string(absl::StripTrailingAsciiWhitespace(check))] = result;
  }
  EXPECT_EQ(by_name["KV pool holds one request of max_model_len"], "FAIL");
  EXPECT_EQ(by_name["figures backed by a baseline"], "warning");
  // The weights fit: the load checks do not say "does not fit".
  EXPECT_EQ(by_name["weights and overheads fit the GPU"], "pass");
  EXPECT_THAT(fail.out, Not(HasSubstr("does not fit")));
  EXPECT_THAT(fail.out, HasSubstr("skipped  the KV pool cannot hold one request of max_model_len: "
                                  "the engine would not start"));
}

// In the JUnit report too, a warning is not a failure.
TEST(CliValidate, JunitCountsWarningsAsPassedCases) {
  TempDir dir;
  const std::string xml = (dir.path() / "report.xml").string();
  Result r = RunCapplan({"validate", "--baseline", capplan::testing::k002, "--junit", xml});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::ifstream in(xml);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_THAT(text.str(), Not(HasSubstr("<failure")));
  EXPECT_THAT(text.str(), HasSubstr("warning: no passing long-generation or repetition-loop gate"));
  EXPECT_THAT(text.str(), HasSubstr("failures=\"0\""));
}

// --baseline takes the baseline's GPU as plan and sweep do, even one the
// source withholds (seed 000): validated on its own rows.
TEST(CliValidate, ABaselineBringsItsGpuEvenAWithheldOne) {
  Result withheld =
      RunCapplan({"validate", "--baseline", capplan::testing::k000, "--input-tokens", "1024",
                  "--output-tokens", "512", "--users", "8", "--ttft-p95", "1"});
  EXPECT_EQ(withheld.code, kExitOk) << withheld.err << withheld.out;
  EXPECT_THAT(withheld.out, HasSubstr("withholds its GPU: the card's memory is unknown"));
  EXPECT_THAT(withheld.out, HasSubstr("8 users expected; safe up to 8"));
  // Its max_model_len (32,768) is checked, not called "not set".
  EXPECT_THAT(withheld.out, HasSubstr("max_model_len 32768, model limit"));
  Result named = RunCapplan({"validate", "--baseline", capplan::testing::k002});
  EXPECT_EQ(named.code, kExitOk) << named.err;
  EXPECT_THAT(named.out, HasSubstr("of 31.84 GiB per GPU"));  // the RTX 5090's usable memory
}

// As plan does, validate --baseline takes the baseline's measured workload
// when only the load is given; without a baseline the error names the flags.
TEST(CliValidate, ABaselineBringsItsWorkloadAndTheErrorNamesTheFlags) {
  // Measured at 1 to 8 users: 4 users is backed by the baseline's rows.
  Result r = RunCapplan(
      {"validate", "--baseline", "vllm-0.11-qwen3-8b-h100x1-sharegpt-closed", "--users", "4"});
  EXPECT_EQ(r.code, kExitOk) << r.err << r.out;
  EXPECT_THAT(r.out, HasSubstr("WORKLOAD_FROM_BASELINE"));
  EXPECT_THAT(r.out, HasSubstr("4 users expected; safe up to"));
  EXPECT_THAT(r.out, Not(HasSubstr("no expected load")));
  EXPECT_THAT(r.out, Not(HasSubstr("FAR_FROM_BASELINES")));
  std::map<std::string, std::string> by_name;
  for (const auto& [check, result] : CheckResults(r.out)) {
    by_name[std::string(absl::StripTrailingAsciiWhitespace(check))] = result;
  }
  EXPECT_EQ(by_name["figures backed by a baseline"], "pass");

  Result missing = RunCapplan(
      {"validate", "--model", "qwen3-8b", "--gpu", "nvidia-h100-sxm-80gb", "--users", "4"});
  EXPECT_EQ(missing.code, kExitInvalid) << missing.out;
  EXPECT_THAT(missing.err, HasSubstr("--input-tokens and --output-tokens are not set"));
}

TEST(CliPlan, BaselinePlanPrintsCapacityWithUnits) {
  Result r = RunCapplan(
      {"plan", "--baseline", "seed-000-122b-moe-int4-4gpu-pcie-sglang", "--ttft-p95", "1"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("tokens/month"));
  EXPECT_THAT(r.out, HasSubstr("30-day month"));
  EXPECT_THAT(r.out, HasSubstr("PEAK"));
  Result json =
      RunCapplan({"plan", "--baseline", "seed-000-122b-moe-int4-4gpu-pcie-sglang", "--json"});
  ASSERT_EQ(json.code, kExitOk) << json.err;
  EXPECT_THAT(json.out, HasSubstr("\"tokens_per_month_total\""));
  EXPECT_THAT(json.out, HasSubstr("\"measured_capacity\""));
}

TEST(CliPlan, ConflictingTargetsAreRejected) {
  Result r =
      RunCapplan({"plan", "--model", "qwen3-8b", "--gpu", "nvidia-l4-24gb", "--input-tokens", "100",
                  "--output-tokens", "100", "--target-rps", "1", "--target-users", "3"});
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("exclude each other"));
}

}  // namespace
}  // namespace capplan::service
