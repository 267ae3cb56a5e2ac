#ifndef CAPPLAN_SERVICE_RPC_GRPC_STATUS_H_
#define CAPPLAN_SERVICE_RPC_GRPC_STATUS_H_

#include <cstddef>

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

namespace capplan::service {

// Longest status message a client receives. The validators already cut each
// echoed value to 256 bytes; this is the last guard, so no message a client
// sends can come back at its own size.
inline constexpr size_t kMaxStatusMessageBytes = 2048;

// The one place an absl::Status becomes a grpc::Status (codes map one to
// one; the message cut to kMaxStatusMessageBytes, its full size stated).
grpc::Status ToGrpcStatus(const absl::Status& status);

// The reverse, for the CLI's remote mode.
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_RPC_GRPC_STATUS_H_
