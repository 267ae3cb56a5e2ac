#include "tests/test_common/status_matchers.h"

#include "gtest/gtest-spi.h"
#include "gtest/gtest.h"

namespace capplan::testing {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(StatusIs, MatchesCodeAndMessage) {
  absl::Status s = absl::InvalidArgumentError("PlanRequest.duty_factor = 2; must be in (0, 1]");
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("duty_factor")));
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument));
  EXPECT_THAT(s, Not(StatusIs(absl::StatusCode::kNotFound)));
  EXPECT_THAT(s, Not(StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("gpu_count"))));
}

TEST(StatusIs, WorksOnStatusOr) {
  absl::StatusOr<int> bad = absl::NotFoundError("hardware 'h100' not found");
  absl::StatusOr<int> good = 3;
  EXPECT_THAT(bad, StatusIs(absl::StatusCode::kNotFound, HasSubstr("h100")));
  EXPECT_THAT(good, StatusIs(absl::StatusCode::kOk));
  EXPECT_THAT(good, IsOk());
  EXPECT_THAT(bad, Not(IsOk()));
}

TEST(StatusIs, FailsWithTheActualCodeAndMessage) {
  EXPECT_NONFATAL_FAILURE(
      EXPECT_THAT(absl::NotFoundError("no such id"), StatusIs(absl::StatusCode::kInvalidArgument)),
      "NOT_FOUND");
  EXPECT_NONFATAL_FAILURE(
      EXPECT_THAT(absl::InvalidArgumentError("tp = 3"),
                  StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("pp"))),
      "tp = 3");
}

}  // namespace
}  // namespace capplan::testing
