// Every example deployment spec in examples/deployments/ validates to the
// verdict and finding codes it declares, offline and through a server, and the
// CLI exits with the code the verdict implies.
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/cli/cli.h"
#include "service/cli/validate.h"
#include "service/planner/findings.h"
#include "service/planner/validate.h"
#include "service/rpc/remote_planner.h"
#include "service/server/server.h"
#include "tests/test_common/loopback_server.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

namespace fs = std::filesystem;

struct Example {
  std::string path;
  std::string text;
  v1::Verdict verdict = v1::VERDICT_UNSPECIFIED;
  std::set<std::string> codes;
};

std::string Read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Expectations are "# expect-verdict: X" / "# expect-codes: A B" lines in a
// text spec, or the same lines without '#' in <name>.expect beside a JSON one.
void ReadExpectations(const std::string& text, Example* e) {
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    line = absl::StripLeadingAsciiWhitespace(absl::StripPrefix(line, "#"));
    if (absl::ConsumePrefix(&line, "expect-verdict:")) {
      line = absl::StripAsciiWhitespace(line);
      e->verdict = line == "PASS"   ? v1::VERDICT_PASS
                   : line == "FAIL" ? v1::VERDICT_FAIL
                                    : v1::VERDICT_UNSPECIFIED;
    } else if (absl::ConsumePrefix(&line, "expect-codes:")) {
      for (absl::string_view code : absl::StrSplit(line, ' ', absl::SkipWhitespace())) {
        e->codes.insert(std::string(code));
      }
    }
  }
}

std::vector<Example> Examples() {
  std::vector<Example> out;
  fs::path dir = fs::path(CAPPLAN_SOURCE_DIR) / "examples" / "deployments";
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    std::string ext = entry.path().extension().string();
    if (ext != ".txtpb" && ext != ".json") continue;
    Example e;
    e.path = entry.path().string();
    e.text = Read(entry.path());
    fs::path expect = entry.path();
    expect.replace_extension(".expect");
    ReadExpectations(ext == ".json" ? Read(expect) : e.text, &e);
    out.push_back(std::move(e));
  }
  std::sort(out.begin(), out.end(),
            [](const Example& a, const Example& b) { return a.path < b.path; });
  return out;
}

std::set<std::string> Codes(const v1::ValidateResponse& r) {
  std::set<std::string> codes;
  for (const v1::Finding& f : r.findings()) codes.insert(f.code());
  return codes;
}

class ValidateExamples : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    auto catalog = Catalog::LoadFromDirectory(testing::BundledDataDir());
    ASSERT_TRUE(catalog.ok()) << catalog.status();
    catalog_ = new std::shared_ptr<const Catalog>(*catalog);
    auto server = PlannerServer::Create(testing::LoopbackServerOptions(testing::BundledDataDir()));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = server->release();
  }
  static void TearDownTestSuite() {
    delete server_;
    delete catalog_;
  }
  static std::shared_ptr<const Catalog>* catalog_;
  static PlannerServer* server_;
};
std::shared_ptr<const Catalog>* ValidateExamples::catalog_ = nullptr;
PlannerServer* ValidateExamples::server_ = nullptr;

TEST_F(ValidateExamples, AtLeastTwelveCoveringEveryCodeAndBothVerdicts) {
  std::vector<Example> examples = Examples();
  EXPECT_GE(examples.size(), 12u);
  std::set<std::string> codes;
  std::set<v1::Verdict> verdicts;
  for (const Example& e : examples) {
    codes.insert(e.codes.begin(), e.codes.end());
    verdicts.insert(e.verdict);
  }
  for (const char* code : {kDoesNotFit, kKvPoolBelowOneRequest, kConcurrencyAboveSafe,
                           kTtftSloMissed, kTpotSloMissed, kUnstableLoad, kContextBeyondNative,
                           kNoQualityEvidence, kFarFromBaselines, kUnknownEngineVersion}) {
    EXPECT_TRUE(codes.count(code)) << "no example shows " << code;
  }
  EXPECT_TRUE(verdicts.count(v1::VERDICT_PASS));
  EXPECT_TRUE(verdicts.count(v1::VERDICT_FAIL));
}

TEST_F(ValidateExamples, EachGivesItsVerdictAndCodesOfflineAndThroughTheServer) {
  RemotePlanner remote("127.0.0.1:" + std::to_string(server_->port()), absl::Seconds(30));
  ASSERT_FALSE(Examples().empty());
  for (const Example& e : Examples()) {
    SCOPED_TRACE(e.path);
    ASSERT_NE(e.verdict, v1::VERDICT_UNSPECIFIED) << "no expect-verdict line";
    auto request = ParseValidateSpec(e.path, e.text);
    ASSERT_TRUE(request.ok()) << request.status();
    auto offline = Validate(**catalog_, *request);
    ASSERT_TRUE(offline.ok()) << offline.status();
    EXPECT_EQ(offline->verdict(), e.verdict);
    EXPECT_EQ(Codes(*offline), e.codes);
    auto online = remote.Validate(*request, nullptr);
    ASSERT_TRUE(online.ok()) << online.status();
    EXPECT_EQ(online->verdict(), offline->verdict());
    EXPECT_EQ(Codes(*online), Codes(*offline));
  }
}

TEST_F(ValidateExamples, CliExitCodeFollowsTheVerdict) {
  ASSERT_FALSE(Examples().empty());
  for (const Example& e : Examples()) {
    SCOPED_TRACE(e.path);
    std::ostringstream out, err;
    int code = RunCli({"validate", "--spec", e.path}, out, err);
    EXPECT_EQ(code, e.verdict == v1::VERDICT_PASS ? kExitOk : kExitFail) << err.str();
  }
}

TEST(ExampleHardware, EveryCardFilePlansMemoryAndIsNotACatalogueCard) {
  const fs::path dir = fs::path(CAPPLAN_SOURCE_DIR) / "examples" / "hardware";
  int cards = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".txtpb" && entry.path().extension() != ".json") continue;
    SCOPED_TRACE(entry.path().string());
    ++cards;
    std::ostringstream out, err;
    EXPECT_EQ(RunCli({"memory", "--model", "qwen3-8b", "--hardware-file", entry.path().string()},
                     out, err),
              kExitOk)
        << err.str();
    EXPECT_THAT(out.str(), ::testing::HasSubstr("is the request's own card"));
  }
  EXPECT_GE(cards, 1);
}

}  // namespace
}  // namespace capplan::service
