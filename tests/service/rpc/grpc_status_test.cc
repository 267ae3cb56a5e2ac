#include "service/rpc/grpc_status.h"

#include "base/status_macros.h"
#include "gtest/gtest.h"

namespace capplan::service {
namespace {

TEST(GrpcStatus, CodesAndMessagesSurviveTheRoundTrip) {
  for (absl::StatusCode code : {absl::StatusCode::kInvalidArgument, absl::StatusCode::kNotFound,
                                absl::StatusCode::kFailedPrecondition,
                                absl::StatusCode::kUnavailable, absl::StatusCode::kInternal}) {
    absl::Status original(code, "PlanMemoryRequest.deployment.parallelism.tp = 3; must divide 64");
    grpc::Status wire = ToGrpcStatus(original);
    EXPECT_EQ(static_cast<int>(wire.error_code()), static_cast<int>(code));
    EXPECT_EQ(wire.error_message(), original.message());
    EXPECT_EQ(FromGrpcStatus(wire), original);
  }
}

TEST(GrpcStatus, OkMapsToOk) {
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_TRUE(FromGrpcStatus(grpc::Status::OK).ok());
}

}  // namespace
}  // namespace capplan::service
