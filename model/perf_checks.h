// Small argument checks shared by the performance and queueing model
// (step_time, robust_fit, calibration, queueing, simulator, capacity).
//
// Every failure is absl::InvalidArgumentError naming the field path, the value
// and the rule, e.g. "Workload.output_tokens = 0; must be >= 1".
#ifndef CAPPLAN_MODEL_PERF_CHECKS_H_
#define CAPPLAN_MODEL_PERF_CHECKS_H_

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "base/status_macros.h"

namespace capplan::model::perf_internal {

inline absl::Status Invalid(absl::string_view field, double value, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(field, " = ", value, "; ", rule));
}

// value must be finite and > 0.
inline absl::Status CheckPositive(absl::string_view field, double value) {
  if (!std::isfinite(value) || !(value > 0)) {
    return Invalid(field, value, "must be finite and > 0");
  }
  return absl::OkStatus();
}

// value must be finite and >= 0.
inline absl::Status CheckNonNegative(absl::string_view field, double value) {
  if (!std::isfinite(value) || !(value >= 0)) {
    return Invalid(field, value, "must be finite and >= 0");
  }
  return absl::OkStatus();
}

// value must be finite and in [lo, hi].
inline absl::Status CheckInRange(absl::string_view field, double value, double lo, double hi) {
  if (!std::isfinite(value) || value < lo || value > hi) {
    return Invalid(field, value, absl::StrCat("must be in [", lo, ", ", hi, "]"));
  }
  return absl::OkStatus();
}

}  // namespace capplan::model::perf_internal

#endif  // CAPPLAN_MODEL_PERF_CHECKS_H_
