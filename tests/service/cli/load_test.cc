#include "service/cli/load.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "service/cli/cli.h"
#include "service/server/server.h"
#include "tests/test_common/cli_runner.h"
#include "tests/test_common/loopback_server.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using Result = ::capplan::testing::CliResult;
using ::capplan::testing::BundledDataDir;
using ::capplan::testing::RunCapplan;
using ::capplan::testing::StatusIs;
using ::capplan::testing::TempDir;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

using ::capplan::testing::k000;
using ::capplan::testing::k002;

class CliLoadTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto server = PlannerServer::Create(testing::LoopbackServerOptions(BundledDataDir()));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
  }
  static void TearDownTestSuite() {
    delete server_;
    server_ = nullptr;
  }
  std::vector<std::string> Offline(std::vector<std::string> args) {
    args.push_back("--data-dir=" + BundledDataDir());
    return args;
  }
  std::vector<std::string> Online(std::vector<std::string> args) {
    args.push_back("--server");
    args.push_back("127.0.0.1:" + std::to_string(server_->port()));
    return args;
  }
  static PlannerServer* server_;
};
PlannerServer* CliLoadTest::server_ = nullptr;

TEST_F(CliLoadTest, OfflineAndServerAnswersAreIdentical) {
  for (const std::vector<std::string>& command : std::vector<std::vector<std::string>>{
           {"sweep", "--baseline", k000},
           {"sweep", "--baseline", k002, "--speculative-method", "none", "--concurrency",
            "1,5,10,20", "--ttft-p95", "0.5"},
           {"sweep", "--baseline", k002, "--rate", "0.5,1,2,4,8", "--json"},
           {"sweep", "--model", "qwen3-8b", "--gpu", "nvidia-l4-24gb", "--input-tokens", "512",
            "--output-tokens", "128", "--concurrency", "1,4,16"},
           {"sweep", "--baseline", k002, "--concurrency", "4,2"},
           {"sweep", "--model", "qwen3-8b", "--gpu", "nvidia-l4-24gb", "--input-tokens", "0",
            "--output-tokens", "128", "--concurrency", "1"}}) {
    Result offline = RunCapplan(Offline(command));
    Result online = RunCapplan(Online(command));
    std::string name = command[1] + " " + command[2] + " " + command.back();
    EXPECT_EQ(offline.code, online.code) << name << offline.err << online.err;
    EXPECT_EQ(offline.out, online.out) << name;
    EXPECT_EQ(offline.err, online.err) << name;
  }
}

TEST_F(CliLoadTest, TableShowsUnitsKneeSafePointSlotsAndTiers) {
  Result r = RunCapplan(Offline({"sweep", "--baseline", k000}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("OUTPUT (tok/s)"));
  EXPECT_THAT(r.out, HasSubstr("REQ/S (req/s)"));
  EXPECT_THAT(r.out, HasSubstr("TTFT p95 (s)"));
  EXPECT_THAT(r.out, HasSubstr("knee: "));
  EXPECT_THAT(r.out, HasSubstr("safe operating point: 8 users"));
  EXPECT_THAT(r.out, HasSubstr("slots: 8 (bound: OPERATOR_GATE)"));
  EXPECT_THAT(r.out, HasSubstr("MEASURED"));
  EXPECT_THAT(r.out, HasSubstr("(GPU withheld)"));
}

TEST_F(CliLoadTest, BadInputNamesTheFieldAndExitsTwo) {
  Result r = RunCapplan(
      Offline({"sweep", "--model", "qwen3-8b", "--gpu", "nvidia-l4-24gb", "--input-tokens", "512",
               "--output-tokens", "128", "--concurrency", "1,8,4"}));
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("PredictLoadRequest.closed_loop.concurrencies[2] = 4"));
  r = RunCapplan(
      Offline({"sweep", "--model", "qwen3-8b", "--gpu", "nvidia-l4-24gb", "--concurrency", "1"}));
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("--input-tokens"));
  r = RunCapplan(Offline({"sweep", "--baseline", k002, "--concurrency", "1", "--rate", "1"}));
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("exclude each other"));
}

TEST_F(CliLoadTest, SvgIsWrittenWithLabelsAndAFailedWriteLeavesNoFile) {
  TempDir dir;
  std::string path = (dir.path() / "curve.svg").string();
  Result r = RunCapplan(Offline({"sweep", "--baseline", k000, "--ttft-p95", "1", "--svg", path}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::ifstream in(path);
  std::stringstream svg;
  svg << in.rdbuf();
  EXPECT_THAT(svg.str(), HasSubstr("<svg"));
  EXPECT_THAT(svg.str(), HasSubstr("concurrency (users)"));
  EXPECT_THAT(svg.str(), HasSubstr("knee "));
  EXPECT_THAT(svg.str(), HasSubstr("TTFT p95 SLO 1 s"));
  std::string bad = (dir.path() / "no-such-dir" / "curve.svg").string();
  r = RunCapplan(Offline({"sweep", "--baseline", k000, "--svg", bad}));
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_FALSE(std::filesystem::exists(bad));
}

TEST_F(CliLoadTest, CalibrationFileAloneFitsTheCurve) {
  // The 002 ladder exported as the user's own JSON, then fitted on alone.
  Result baseline = RunCapplan(Offline({"baselines", "get", k002, "--json"}));
  ASSERT_EQ(baseline.code, kExitOk);
  v1::Baseline b;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(baseline.out, &b).ok());
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(b.sweeps(0), &json).ok());
  TempDir dir;
  dir.Write("ladder.json", json);
  Result r = RunCapplan(Offline(
      {"sweep", "--baseline", k002, "--speculative-method", "none", "--concurrency", "1,10",
       "--calibration", (dir.path() / "ladder.json").string(), "--no-catalog-calibration"}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("CALIBRATED"));
  EXPECT_THAT(r.out, HasSubstr("fitted on the request's calibration sweeps"));
  // Text format too, several sweeps in calibration blocks.
  std::string text;
  ASSERT_TRUE(google::protobuf::TextFormat::PrintToString(b.sweeps(0), &text));
  dir.Write("two.txtpb", "calibration {\n" + text + "}\ncalibration {\n" + text + "}\n");
  absl::StatusOr<std::vector<v1::Sweep>> two =
      ParseCalibrationSweeps("calibration {\n" + text + "}\ncalibration {\n" + text + "}\n");
  ASSERT_TRUE(two.ok()) << two.status();
  EXPECT_EQ(two->size(), 2u);
  absl::StatusOr<std::vector<v1::Sweep>> bad = ParseCalibrationSweeps("rows {\n  nonsense: 1 }");
  // The parser's position of the typo (line 2) reaches the user.
  EXPECT_THAT(bad,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("neither a text-format Sweep (2:"), HasSubstr("nonsense"))));
}

TEST_F(CliLoadTest, AccuracyPrintsMediansPerBaselineAndMetric) {
  Result r = RunCapplan(Offline({"accuracy", "--baseline", k002}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("MEDIAN |ERROR| (%)"));
  EXPECT_THAT(r.out, HasSubstr("per_user_tokens_per_second"));
  EXPECT_THAT(r.out, HasSubstr("total_tokens_per_second"));
  EXPECT_THAT(r.out, Not(HasSubstr(k000)));
}

}  // namespace
}  // namespace capplan::service
