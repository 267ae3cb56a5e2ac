#ifndef CAPPLAN_SERVICE_PLANNER_ACCURACY_H_
#define CAPPLAN_SERVICE_PLANNER_ACCURACY_H_

// The accuracy harness behind `capplan accuracy`: for every catalogue
// baseline with measured rows, leave one row out at a time, refit the
// step-time model (and the speculative acceptance rate) on the others exactly
// as PredictLoad does (load.h), predict the row left out, correct it by the
// other rows' residuals as a curve is (model/measured_correction.h) and
// compare.

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "service/catalog/catalog.h"

namespace capplan::service {

// One prediction of one figure of a held-out row.
struct AccuracyRow {
  std::string baseline_id;
  std::string source;  // "<baseline>/<sweep>/c=8"
  std::string metric;  // per_user_tokens_per_second, total_tokens_per_second, ttft, e2e, tpot
  double measured = 0;
  double predicted = 0;
  double error_fraction = 0;  // predicted / measured − 1
};

struct AccuracySummary {
  std::string baseline_id;
  std::string metric;
  int count = 0;
  double median_abs_error_fraction = 0;
  double max_abs_error_fraction = 0;
};

struct AccuracyReport {
  std::vector<AccuracyRow> rows;
  std::vector<AccuracySummary> summaries;  // per baseline and metric
  std::vector<std::string> notes;          // rows skipped and why
};

// Metric names, in report order.
const std::vector<std::string>& AccuracyMetrics();

// Every baseline with rows (or only `baseline_id` when not empty: NOT_FOUND
// when unknown, FAILED_PRECONDITION when it has fewer than 2 rows).
absl::StatusOr<AccuracyReport> LeaveOneRowOut(const Catalog& catalog,
                                              const std::string& baseline_id);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_ACCURACY_H_
