#include "base/status_macros.h"

#include <memory>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::Eq;

absl::Status FailsWhenNegative(int v) {
  if (v < 0) return absl::InvalidArgumentError("negative");
  return absl::OkStatus();
}

absl::StatusOr<int> Twice(int v) {
  CAPPLAN_RETURN_IF_ERROR(FailsWhenNegative(v));
  return 2 * v;
}

absl::StatusOr<int> TwiceTwice(int v) {
  CAPPLAN_ASSIGN_OR_RETURN(int once, Twice(v));
  return 2 * once;
}

absl::StatusOr<std::unique_ptr<int>> Boxed(int v) {
  CAPPLAN_RETURN_IF_ERROR(FailsWhenNegative(v));
  return std::make_unique<int>(v);
}

// Assigns to an existing variable and moves a move-only value.
absl::StatusOr<int> Unboxed(int v) {
  std::unique_ptr<int> box;
  CAPPLAN_ASSIGN_OR_RETURN(box, Boxed(v));
  return *box + 1;
}

TEST(StatusMacros, PropagateErrorsAndValues) {
  EXPECT_EQ(*TwiceTwice(3), 12);
  EXPECT_THAT(TwiceTwice(-1), StatusIs(absl::StatusCode::kInvalidArgument, Eq("negative")));
}

TEST(StatusMacros, AssignToAnExistingMoveOnlyVariable) {
  EXPECT_EQ(*Unboxed(4), 5);
  EXPECT_THAT(Unboxed(-4), StatusIs(absl::StatusCode::kInvalidArgument, Eq("negative")));
}

}  // namespace
}  // namespace capplan
