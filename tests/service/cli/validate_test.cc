#include "service/cli/validate.h"

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

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
