#include "service/status_util.h"

#include "absl/status/statusor.h"

#include "gtest/gtest.h"

namespace capplan::service {
namespace {

TEST(StatusUtil, CodesAndMessagesSurviveTheRoundTrip) {
  for (absl::StatusCode code :
       {absl::StatusCode::kInvalidArgument, absl::StatusCode::kNotFound,
        absl::StatusCode::kFailedPrecondition, absl::StatusCode::kUnavailable,
        absl::StatusCode::kInternal}) {
    absl::Status original(code, "PlanMemoryRequest.deployment.parallelism.tp = 3; must divide 64");
    grpc::Status wire = ToGrpcStatus(original);
    EXPECT_EQ(static_cast<int>(wire.error_code()), static_cast<int>(code));
    EXPECT_EQ(wire.error_message(), original.message());
    EXPECT_EQ(FromGrpcStatus(wire), original);
  }
}

TEST(StatusUtil, OkMapsToOk) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
}

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

TEST(StatusUtil, MacrosPropagateErrorsAndValues) {
  EXPECT_EQ(*TwiceTwice(3), 12);
  EXPECT_EQ(TwiceTwice(-1).status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace capplan::service
