#ifndef CAPPLAN_SERVICE_RPC_GRPC_STATUS_H_
#define CAPPLAN_SERVICE_RPC_GRPC_STATUS_H_

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace capplan::service {

// The one place an absl::Status becomes a grpc::Status (codes map one to one).
grpc::Status ToGrpcStatus(const absl::Status& status);

// The reverse, for the CLI's remote mode.
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_RPC_GRPC_STATUS_H_
