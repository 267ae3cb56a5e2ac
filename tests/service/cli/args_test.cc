#include "service/cli/args.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(CliArgs, ParsesBothValueFormsSwitchesAndPositionals) {
  auto args =
      CliArgs::Parse({"memory", "--gpu", "h100", "--tp=2", "--json", "--allow", "A", "--allow=B"},
                     {"json"}, {"gpu", "tp", "allow"});
  ASSERT_TRUE(args.ok()) << args.status();
  EXPECT_THAT(args->positional(), ElementsAre("memory"));
  EXPECT_EQ(args->Get("gpu"), "h100");
  EXPECT_TRUE(args->Has("json"));
  EXPECT_THAT(args->GetAll("allow"), ElementsAre("A", "B"));
  auto tp = args->GetInt("tp", 1);
  ASSERT_TRUE(tp.ok());
  EXPECT_EQ(tp->value(), 2);
}

TEST(CliArgs, UnknownFlagNamesIt) {
  auto args = CliArgs::Parse({"--nope"}, {}, {});
  EXPECT_THAT(args, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown flag --nope")));
}

TEST(CliArgs, MissingValueIsAnError) {
  auto args = CliArgs::Parse({"--gpu"}, {}, {"gpu"});
  EXPECT_THAT(args, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--gpu needs a value")));
}

TEST(CliArgs, SwitchWithValueIsAnError) {
  auto args = CliArgs::Parse({"--json=yes"}, {"json"}, {});
  EXPECT_THAT(args,
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--json takes no value")));
}

TEST(CliArgs, TypedGettersNameFlagValueAndRule) {
  auto args = CliArgs::Parse({"--tp", "0", "--f", "x"}, {}, {"tp", "f"});
  ASSERT_TRUE(args.ok());
  EXPECT_THAT(args->GetInt("tp", 1), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("--tp = 0; must be a whole number >= 1")));
  EXPECT_THAT(args->GetDouble("f"), StatusIs(absl::StatusCode::kInvalidArgument,
                                             HasSubstr("--f = x; must be a finite number")));
}

TEST(CliArgs, IntegersBeyond32BitsAreRefusedNotWrapped) {
  // 2^32 + 1 would become 1 in a uint32 request field.
  auto args = CliArgs::Parse({"--users", "4294967297"}, {}, {"users"});
  ASSERT_TRUE(args.ok());
  EXPECT_THAT(args->GetInt("users", 1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--users = 4294967297; must be at most 4294967295")));
}

TEST(CliArgs, DoubleDashEndsFlags) {
  auto args = CliArgs::Parse({"--", "--not-a-flag"}, {}, {});
  ASSERT_TRUE(args.ok());
  EXPECT_THAT(args->positional(), ElementsAre("--not-a-flag"));
}

}  // namespace
}  // namespace capplan::service
