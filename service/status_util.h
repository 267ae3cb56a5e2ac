#ifndef CAPPLAN_SERVICE_STATUS_UTIL_H_
#define CAPPLAN_SERVICE_STATUS_UTIL_H_

#include "absl/status/status.h"
#include "grpcpp/support/status.h"

// Abseil 20220623 ships no status macros; these are the two we use.
#define CAPPLAN_RETURN_IF_ERROR(expr)              \
  do {                                             \
    ::absl::Status capplan_status_ = (expr);       \
    if (!capplan_status_.ok()) return capplan_status_; \
  } while (0)

#define CAPPLAN_CONCAT_INNER_(a, b) a##b
#define CAPPLAN_CONCAT_(a, b) CAPPLAN_CONCAT_INNER_(a, b)
#define CAPPLAN_ASSIGN_OR_RETURN(lhs, rexpr) \
  CAPPLAN_ASSIGN_OR_RETURN_IMPL_(CAPPLAN_CONCAT_(capplan_or_, __LINE__), lhs, rexpr)
#define CAPPLAN_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                   \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()

namespace capplan::service {

// The one place an absl::Status becomes a grpc::Status (codes map one to one).
grpc::Status ToGrpcStatus(const absl::Status& status);

// The reverse, for the CLI's remote mode.
absl::Status FromGrpcStatus(const grpc::Status& status);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_STATUS_UTIL_H_
