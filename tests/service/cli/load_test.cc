#include "service/cli/load.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "service/cli/cli.h"
#include "service/server/server.h"
#include "tests/test_common/cli_runner.h"
#include "tests/test_common/loopback_server.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/svg_check.h"
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
  EXPECT_THAT(r.out, HasSubstr("slots: 8 requests at once (bound: OPERATOR_GATE)"));
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

v1::LoadCurve CurveOf(const Result& r) {
  v1::LoadCurve curve;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &curve).ok()) << r.out << r.err;
  return curve;
}

// The line of the table whose first cell is `load`.
std::string RowOf(const std::string& out, const std::string& load) {
  for (absl::string_view line : absl::StrSplit(out, '\n')) {
    std::vector<absl::string_view> cells = absl::StrSplit(line, ' ', absl::SkipEmpty());
    if (!cells.empty() && cells[0] == load) return std::string(line);
  }
  return "";
}

TEST_F(CliLoadTest, NoSpeculationIsPrintedWhenTheMethodIsNone) {
  Result r = RunCapplan(
      Offline({"sweep", "--model", "qwen3-8b", "--gpu", "nvidia-l4-24gb", "--input-tokens", "512",
               "--output-tokens", "128", "--concurrency", "1,4", "--max-model-len", "8192",
               "--speculative-method", "none", "--num-speculative-tokens", "3"}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("speculative")));
  EXPECT_THAT(r.out, Not(HasSubstr("draft tokens")));
  EXPECT_THAT(r.out, HasSubstr("deployment: qwen3-8b on 1 GPU × nvidia-l4-24gb, tp 1"));
  // With MTP on (seed 002 ships MTP layers) the setting is printed.
  Result mtp =
      RunCapplan(Offline({"sweep", "--baseline", k002, "--concurrency", "1", "--speculative-method",
                          "mtp", "--num-speculative-tokens", "3"}));
  ASSERT_EQ(mtp.code, kExitOk) << mtp.err;
  EXPECT_THAT(mtp.out, HasSubstr(", speculative mtp, 3 draft tokens\n"));
}

// sweep --baseline: the baseline's measured rows beside the prediction at
// the same load, with the difference.
TEST_F(CliLoadTest, MeasuredRowsStandBesideThePrediction) {
  Result r = RunCapplan(Offline({"sweep", "--baseline", k000}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const v1::LoadCurve curve = CurveOf(RunCapplan(Offline({"sweep", "--baseline", k000, "--json"})));
  ASSERT_EQ(curve.points_size(), 7);
  EXPECT_THAT(r.out, HasSubstr("measured beside predicted (DIFF = predicted − measured, % of "
                               "measured):"));
  const v1::LoadCurvePoint& at8 = curve.points(4);
  ASSERT_EQ(at8.concurrency(), 8u);
  // The c=8 row of the report: 164 tok/s, TTFT 0.287 s (statistic not stated).
  const std::string row = RowOf(r.out.substr(r.out.find("measured beside")), "8");
  EXPECT_THAT(row, HasSubstr(std::string(k000) + "/concurrency-sweep"));
  EXPECT_THAT(row, HasSubstr("164.0"));
  EXPECT_THAT(row, HasSubstr(absl::StrFormat("%.1f", at8.output_tokens_per_second())));
  EXPECT_THAT(row, HasSubstr(absl::StrFormat(
                       "%+.0f", 100 * (at8.output_tokens_per_second() - 164.0) / 164.0)));
  EXPECT_THAT(row, HasSubstr("0.287 *"));
  EXPECT_THAT(r.out, HasSubstr("* the source does not say which statistic its TTFT figure is"));
  // Another workload is not what the baseline measured: no measured rows.
  Result other = RunCapplan(
      Offline({"sweep", "--baseline", k000, "--input-tokens", "2000", "--output-tokens", "100"}));
  ASSERT_EQ(other.code, kExitOk) << other.err;
  EXPECT_THAT(other.out, Not(HasSubstr("measured beside predicted")));
}

// The case: Llama-70B on 4 × H100, safe at hundreds of users whose
// answers stream at a few tokens per second.
TEST_F(CliLoadTest, ASafePointTooSlowToReadIsFlagged) {
  const std::vector<std::string> command = {"sweep",
                                            "--model",
                                            "llama-3.1-70b-instruct",
                                            "--gpu",
                                            "nvidia-h100-sxm-80gb",
                                            "--gpus",
                                            "4",
                                            "--input-tokens",
                                            "1000",
                                            "--output-tokens",
                                            "200",
                                            "--concurrency",
                                            "64,128,256,320",
                                            "--ttft-p95",
                                            "2"};
  std::vector<std::string> json = command;
  json.push_back("--json");
  const v1::LoadCurve curve = CurveOf(RunCapplan(Offline(json)));
  ASSERT_TRUE(curve.safe_operating_point().found());
  const double tpot = curve.safe_operating_point().point().tpot_seconds();
  ASSERT_GT(1 / tpot, 0);
  ASSERT_LT(1 / tpot, 10) << "the case no longer shows the issue";
  Result r = RunCapplan(Offline(command));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr(absl::StrFormat(
                         "warning: at the safe point each user's answer streams at %.1f tok/s "
                         "(1/TPOT, TPOT %.3f s), below a readable 10 tok/s "
                         "(--min-user-tokens-per-second)",
                         1 / tpot, tpot)));
  std::vector<std::string> lenient = command;
  lenient.push_back("--min-user-tokens-per-second");
  lenient.push_back("1");
  EXPECT_THAT(RunCapplan(Offline(lenient)).out, Not(HasSubstr("warning:")));
  std::vector<std::string> bad = command;
  bad.push_back("--min-user-tokens-per-second=0");
  Result b = RunCapplan(Offline(bad));
  EXPECT_EQ(b.code, kExitInvalid);
  EXPECT_THAT(b.err, HasSubstr("--min-user-tokens-per-second = 0; must be > 0"));
}

// A long prompt: the decode rate (1/TPOT) and the per-user rate including
// the wait for the first token are two columns, and the second is lower.
TEST_F(CliLoadTest, PerUserRateOfALongContextRunIsNotTheDecodeRate) {
  const std::vector<std::string> command = {"sweep",          "--baseline",    k002,
                                            "--input-tokens", "250000",        "--output-tokens",
                                            "6000",           "--concurrency", "1,2"};
  std::vector<std::string> json = command;
  json.push_back("--json");
  const v1::LoadCurve curve = CurveOf(RunCapplan(Offline(json)));
  ASSERT_EQ(curve.points_size(), 2);
  const v1::LoadCurvePoint& p = curve.points(0);
  ASSERT_TRUE(p.has_tpot_seconds() && p.has_e2e_p50_seconds());
  const double decode = 1 / p.tpot_seconds();
  const double per_user =
      p.output_tokens_per_second() / p.requests_per_second() / p.e2e_p50_seconds();
  EXPECT_LT(per_user, 0.9 * decode);  // TTFT of a 250K prompt weighs in
  Result r = RunCapplan(Offline(command));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("DECODE (tok/s/user)"));
  EXPECT_THAT(r.out, HasSubstr("PER USER incl. TTFT (tok/s)"));
  std::vector<absl::string_view> cells = absl::StrSplit(RowOf(r.out, "1"), ' ', absl::SkipEmpty());
  ASSERT_GE(cells.size(), 4u);
  EXPECT_EQ(cells[2], absl::StrFormat("%.1f", decode));
  EXPECT_EQ(cells[3], absl::StrFormat("%.1f", per_user));
}

TEST_F(CliLoadTest, AccuracyThroughTheServerIsTheOfflineAnswer) {
  for (const std::vector<std::string>& command :
       std::vector<std::vector<std::string>>{{"accuracy", "--baseline", k002},
                                             {"accuracy", "--baseline", k000, "--json"},
                                             {"accuracy", "--baseline", "nope"}}) {
    Result offline = RunCapplan(Offline(command));
    Result online = RunCapplan(Online(command));
    EXPECT_EQ(offline.code, online.code) << command[2];
    EXPECT_EQ(offline.out, online.out) << command[2];
    EXPECT_EQ(offline.err, online.err) << command[2];
  }
  Result online = RunCapplan(Online({"accuracy", "--baseline", k002}));
  EXPECT_EQ(online.code, kExitOk) << online.err;
  EXPECT_THAT(online.out, HasSubstr("MEDIAN |ERROR| (%)"));
}

// The --svg plot of sweep --baseline draws the baseline's rows as measured
// squares beside the curve, and --calibration rows too.
TEST_F(CliLoadTest, SvgDrawsTheMeasuredPoints) {
  ASSERT_TRUE(capplan::testing::HavePython()) << capplan::testing::kMissingPython;
  TempDir dir;
  const std::string path = (dir.path() / "curve.svg").string();
  Result r = RunCapplan(Offline({"sweep", "--baseline", k000, "--svg", path}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  std::string error;
  const std::vector<capplan::testing::SvgElement> e =
      capplan::testing::ParseSvg(capplan::testing::ReadAll(path), &error);
  ASSERT_FALSE(e.empty()) << error;
  int measured = 0, labelled = 0;
  for (const auto& x : e) {
    measured += x.tag == "rect" && x.Attribute("class") == "measured";
    labelled += x.tag == "text" && x.Attribute("class") == "label" &&
                x.text.find("production") != std::string::npos;
  }
  EXPECT_EQ(measured, 14);  // 7 rows: output and TTFT
  EXPECT_GE(labelled, 1);   // the c=8 row's label, "production (生产)"
  // Calibration rows of a model sweep (no baseline): drawn too.
  Result baseline = RunCapplan(Offline({"baselines", "get", k002, "--json"}));
  v1::Baseline b;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(baseline.out, &b).ok());
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(b.sweeps(0), &json).ok());
  dir.Write("ladder.json", json);
  r = RunCapplan(
      Offline({"sweep", "--baseline", k002, "--speculative-method", "none", "--concurrency",
               "1,10,20", "--calibration", (dir.path() / "ladder.json").string(), "--svg", path}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(capplan::testing::ReadAll(path), HasSubstr("calibration[0]"));
  EXPECT_THAT(r.out, HasSubstr("calibration[0]"));  // and beside the prediction
}

}  // namespace
}  // namespace capplan::service
