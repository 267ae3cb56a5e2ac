#include "service/cli/help.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "model/queueing.h"
#include "service/cli/cli.h"
#include "service/cli/context.h"
#include "service/planner/bands.h"
#include "tests/test_common/cli_runner.h"

namespace capplan::service {
namespace {

using Result = ::capplan::testing::CliResult;
using ::capplan::testing::RunCapplan;
using ::testing::HasSubstr;
using ::testing::Not;

// The table row of `flag` in a command's help: the line that starts with it.
std::string FlagRow(const std::string& help, const std::string& flag) {
  for (absl::string_view line : absl::StrSplit(help, '\n')) {
    if (absl::StartsWith(line, absl::StrCat("--", flag, " ")) || line == absl::StrCat("--", flag)) {
      return std::string(line);
    }
  }
  return "";
}

TEST(Help, TopLevelListsEveryCommandWithItsLine) {
  Result r = RunCapplan({"--help"});
  ASSERT_EQ(r.code, kExitOk);
  EXPECT_THAT(r.out, Not(HasSubstr(kUndocumented)));
  for (const CliCommandSpec& spec : AllCliCommands()) {
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat("\n  ", spec.name, " "))) << spec.name;
  }
  for (const char* name : {"hardware", "models", "baselines", "memory", "sweep", "simulate", "plan",
                           "search", "validate", "ingest", "lint", "accuracy", "priors"}) {
    EXPECT_THAT(r.out, HasSubstr(absl::StrCat("\n  ", name, " "))) << name;
  }
  // No command at all: the same text, on stderr, exit 2.
  Result none = RunCapplan({});
  EXPECT_EQ(none.code, kExitInvalid);
  EXPECT_EQ(none.err, r.out);
}

// Every flag the parser accepts for a command (its spec and the global ones)
// has a row in that command's help, with a unit and a default.
TEST(Help, EveryFlagTheParserAcceptsIsInItsCommandsHelp) {
  for (const CliCommandSpec& spec : AllCliCommands()) {
    Result r = RunCapplan({spec.name, "--help"});
    ASSERT_EQ(r.code, kExitOk) << spec.name << ": " << r.err;
    EXPECT_THAT(r.out, HasSubstr("usage: capplan " + spec.name)) << spec.name;
    std::vector<std::string> flags = spec.valued;
    flags.insert(flags.end(), spec.switches.begin(), spec.switches.end());
    flags.insert(flags.end(), GlobalValuedFlags().begin(), GlobalValuedFlags().end());
    flags.insert(flags.end(), GlobalSwitches().begin(), GlobalSwitches().end());
    for (const std::string& flag : flags) {
      const std::string row = FlagRow(r.out, flag);
      ASSERT_FALSE(row.empty()) << "capplan " << spec.name << " --help has no row for --" << flag;
      EXPECT_THAT(row, Not(HasSubstr(kUndocumented))) << spec.name << " --" << flag;
      const std::optional<FlagHelp> doc = FindFlagHelp(spec.name, flag);
      ASSERT_TRUE(doc.has_value()) << spec.name << " --" << flag;
      EXPECT_FALSE(doc->unit.empty()) << spec.name << " --" << flag;
      EXPECT_FALSE(doc->default_value.empty()) << spec.name << " --" << flag;
      EXPECT_THAT(row, HasSubstr(doc->default_value)) << spec.name << " --" << flag;
    }
  }
}

TEST(Help, AFlagWithoutAHelpLineShowsAsUndocumented) {
  CliCommandSpec spec{"sweep", nullptr, {"no-such-flag"}, {"no-such-switch"}};
  const std::string help = CommandHelp(spec);
  EXPECT_THAT(FlagRow(help, "no-such-flag"), HasSubstr(kUndocumented));
  EXPECT_THAT(FlagRow(help, "no-such-switch"), HasSubstr(kUndocumented));
  CliCommandSpec unknown{"frobnicate", nullptr, {}, {}};
  EXPECT_THAT(TopLevelHelp({unknown}), HasSubstr(kUndocumented));
}

TEST(Help, ACommandsOwnLineWinsOverTheSharedOne) {
  std::optional<FlagHelp> lint = FindFlagHelp("lint", "baseline");
  std::optional<FlagHelp> sweep = FindFlagHelp("sweep", "baseline");
  ASSERT_TRUE(lint.has_value() && sweep.has_value());
  EXPECT_EQ(lint->name, "baseline");
  EXPECT_THAT(lint->meaning, HasSubstr("lint only"));
  EXPECT_THAT(sweep->meaning, HasSubstr("start from a measured baseline"));
  EXPECT_FALSE(FindFlagHelp("sweep", "no-such-flag").has_value());
}

TEST(Help, HelpCommandTakesACommandOrConcepts) {
  Result sweep = RunCapplan({"help", "sweep"});
  EXPECT_EQ(sweep.code, kExitOk);
  EXPECT_EQ(sweep.out, RunCapplan({"sweep", "--help"}).out);
  EXPECT_THAT(FlagRow(sweep.out, "think-time"), HasSubstr(" s "));
  EXPECT_THAT(FlagRow(sweep.out, "min-user-tokens-per-second"), HasSubstr("tok/s"));
  Result plan = RunCapplan({"plan", "--help"});
  for (const char* flag : {"target-users", "duty-factor", "price-per-gpu-hour", "currency"}) {
    EXPECT_FALSE(FlagRow(plan.out, flag).empty()) << flag;
  }
  Result validate = RunCapplan({"validate", "--help"});
  EXPECT_THAT(FlagRow(validate.out, "junit"), HasSubstr("JUnit"));
  Result concepts = RunCapplan({"help", "concepts"});
  EXPECT_EQ(concepts.code, kExitOk);
  EXPECT_EQ(concepts.out, ConceptsText());
  Result bad = RunCapplan({"help", "swep"});
  EXPECT_EQ(bad.code, kExitInvalid);
  EXPECT_THAT(bad.err, HasSubstr("no help on 'swep'; did you mean sweep?"));
}

// The concepts state what the code does: the 1% slot-wait cap, the knee at
// twice the lightest-load median TTFT, zero think time by default.
TEST(Help, ConceptsMatchTheModelsDefinitions) {
  const std::string& text = ConceptsText();
  EXPECT_DOUBLE_EQ(model::SafetyOptions().max_slot_wait_probability, 0.01);
  EXPECT_THAT(text, HasSubstr("at most 1% of requests find every slot taken"));
  EXPECT_DOUBLE_EQ(model::KneeOptions().flat_ratio, 2.0);
  EXPECT_THAT(text, HasSubstr("the median TTFT (p50) exceeds twice its value"));
  EXPECT_THAT(text, HasSubstr("zero think time unless `--think-time S`"));
  EXPECT_DOUBLE_EQ(kBandLevel, 0.8);
  EXPECT_THAT(text, HasSubstr("so that 80% of held-out errors fall inside it"));
  for (const char* term :
       {"SLOT_WAIT", "RUNNING_REQUEST_LIMIT", "KV_POOL", "MEASURED", "CALIBRATED", "EXTRAPOLATED",
        "ROOFLINE", "error band", "--min-user-tokens-per-second"}) {
    EXPECT_THAT(text, HasSubstr(term)) << term;
  }
}

// The README's "Concepts" section is the same text.
TEST(Help, ConceptsAreTheReadmesSection) {
  std::ifstream in(std::string(CAPPLAN_SOURCE_DIR) + "/README.md");
  std::stringstream readme;
  readme << in.rdbuf();
  EXPECT_THAT(readme.str(), HasSubstr(ConceptsText()))
      << "README.md's \"## Concepts\" section differs from `capplan help concepts` (help.cc)";
}

TEST(Help, UnknownCommandAndFlagSuggestTheNearest) {
  Result command = RunCapplan({"swep"});
  EXPECT_EQ(command.code, kExitInvalid);
  EXPECT_THAT(command.err, HasSubstr("unknown command 'swep'; did you mean sweep?"));
  Result flag = RunCapplan({"plan", "--target-user", "3"});
  EXPECT_EQ(flag.code, kExitInvalid);
  EXPECT_THAT(flag.err, HasSubstr("unknown flag --target-user; did you mean --target-users"));
}

}  // namespace
}  // namespace capplan::service
