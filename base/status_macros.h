#ifndef CAPPLAN_BASE_STATUS_MACROS_H_
#define CAPPLAN_BASE_STATUS_MACROS_H_

// The status macros every layer uses (Abseil 20220623 ships none). Abseil
// only: no gRPC, no protobuf, so model/ can use them too.

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Returns from the enclosing function when `expr` (an absl::Status) is not OK.
#define CAPPLAN_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    ::absl::Status capplan_status_ = (expr);           \
    if (!capplan_status_.ok()) return capplan_status_; \
  } while (0)

// `lhs` (a declaration or an lvalue) receives the value of `rexpr` (an
// absl::StatusOr); an error returns from the enclosing function.
#define CAPPLAN_ASSIGN_OR_RETURN(lhs, rexpr) \
  CAPPLAN_ASSIGN_OR_RETURN_IMPL_(CAPPLAN_STATUS_CONCAT_(capplan_or_, __LINE__), lhs, rexpr)

#define CAPPLAN_STATUS_CONCAT_INNER_(a, b) a##b
#define CAPPLAN_STATUS_CONCAT_(a, b) CAPPLAN_STATUS_CONCAT_INNER_(a, b)
#define CAPPLAN_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, rexpr) \
  auto tmp = (rexpr);                                   \
  if (!tmp.ok()) return tmp.status();                   \
  lhs = std::move(tmp).value()

#endif  // CAPPLAN_BASE_STATUS_MACROS_H_
