#include "service/planner/accuracy.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "model/measured_correction.h"
#include "model/robust_fit.h"
#include "service/planner/prepared.h"
#include "service/translate/deployment_resolver.h"

namespace capplan::service {
namespace {

bool SameRun(const SourcedPoint& a, const SourcedPoint& b) {
  return a.speculative == b.speculative && (!a.speculative || a.draft_tokens == b.draft_tokens) &&
         model::SameRunOfWorkload(a.point.workload, b.point.workload);
}

// The held-out row's prediction corrected by the residuals of the other rows
// of its workload, as a request's curve is (model/measured_correction.h).
void CorrectByOtherRows(const model::CalibrationContext& ctx, const DeploymentPerformance& perf,
                        const model::StepTimeFit& fit, const std::vector<SourcedPoint>& train,
                        const SourcedPoint& held, model::LoadPoint* pred) {
  std::vector<model::RowResidual> residuals;
  for (const SourcedPoint& sp : train) {
    if (!SameRun(sp, held)) continue;
    model::MeasuredPoint p = sp.point;
    if (sp.speculative) {
      if (!fit.acceptance_rate.has_value()) continue;
      p.speculative = SpeculationFor(perf, sp.draft_tokens, *fit.acceptance_rate);
    }
    absl::StatusOr<model::LoadPoint> other =
        model::PredictPoint(ctx, p, fit.calibration.coefficients);
    if (other.ok()) residuals.push_back(model::ResidualOf(sp.point, *other));
  }
  const bool closed = held.point.concurrency.has_value();
  model::MeasuredCorrection::FromRows(residuals, closed, held.point.think_time_seconds,
                                      held.point.workload.output_tokens)
      .Apply(pred);
}

absl::Status OneBaseline(const Catalog& catalog, const v1::Baseline& b, AccuracyReport* report) {
  CAPPLAN_ASSIGN_OR_RETURN(BaselineFitSetup setup,
                           PrepareBaselineFit(catalog, b, true, 2, "leave-one-out", nullptr));
  const DeploymentPerformance& perf = setup.deployment.performance;
  const std::vector<SourcedPoint>& points = setup.points;
  const model::CalibrationContext& ctx = setup.context;
  for (size_t i = 0; i < points.size(); ++i) {
    std::vector<SourcedPoint> train;
    for (size_t j = 0; j < points.size(); ++j) {
      if (j != i) train.push_back(points[j]);
    }
    const SourcedPoint& held = points[i];
    absl::StatusOr<model::StepTimeFit> fit = FitOnPoints(ctx, perf, train, nullptr);
    if (!fit.ok()) {
      report->notes.push_back(absl::StrFormat("%s: refit without it failed: %s", held.point.source,
                                              fit.status().message()));
      continue;
    }
    model::MeasuredPoint p = held.point;
    if (held.speculative) {
      if (!fit->acceptance_rate.has_value()) {
        report->notes.push_back(absl::StrFormat(
            "%s: speculative row, and no other speculative row to fit the acceptance rate on",
            held.point.source));
        continue;
      }
      p.speculative = SpeculationFor(perf, held.draft_tokens, *fit->acceptance_rate);
    }
    absl::StatusOr<model::LoadPoint> pred =
        model::PredictPoint(ctx, p, fit->calibration.coefficients);
    if (!pred.ok()) {
      report->notes.push_back(
          absl::StrFormat("%s: prediction failed: %s", held.point.source, pred.status().message()));
      continue;
    }
    CorrectByOtherRows(ctx, perf, *fit, train, held, &*pred);
    auto add = [&](const std::string& metric, std::optional<double> measured,
                   std::optional<double> predicted) {
      if (!measured.has_value() || !predicted.has_value() || !(*measured > 0)) return;
      AccuracyRow row;
      row.baseline_id = b.id();
      row.source = held.point.source;
      row.metric = metric;
      row.measured = *measured;
      row.predicted = *predicted;
      row.error_fraction = *predicted / *measured - 1;
      report->rows.push_back(row);
    };
    const std::optional<int> c = p.concurrency;
    std::optional<double> per_user = p.per_user_output_tokens_per_second;
    if (!per_user.has_value() && c.has_value() && p.output_tokens_per_second.has_value()) {
      per_user = *p.output_tokens_per_second / *c;
    }
    add("per_user_tokens_per_second", per_user,
        c.has_value() ? std::optional<double>(pred->output_tokens_per_second / *c) : std::nullopt);
    add("total_tokens_per_second", p.output_tokens_per_second, pred->output_tokens_per_second);
    add("ttft", p.ttft_seconds,
        pred->ttft.has_value() ? std::optional<double>(pred->ttft->p50_seconds) : std::nullopt);
    add("e2e", p.e2e_seconds,
        pred->e2e.has_value() ? std::optional<double>(pred->e2e->p50_seconds) : std::nullopt);
    add("tpot", p.tpot_seconds, pred->tpot_seconds);
  }
  return absl::OkStatus();
}

}  // namespace

const std::vector<std::string>& AccuracyMetrics() {
  static const auto* const kMetrics = new std::vector<std::string>{
      "per_user_tokens_per_second", "total_tokens_per_second", "ttft", "e2e", "tpot"};
  return *kMetrics;
}

absl::StatusOr<AccuracyReport> LeaveOneRowOut(const Catalog& catalog,
                                              const std::string& baseline_id) {
  AccuracyReport report;
  if (!baseline_id.empty()) {
    const v1::Baseline* b = catalog.FindBaseline(baseline_id);
    if (b == nullptr) {
      return absl::NotFoundError(absl::StrFormat(
          "--baseline = %s; no such baseline in the catalogue (capplan baselines list)",
          baseline_id));
    }
    CAPPLAN_RETURN_IF_ERROR(OneBaseline(catalog, *b, &report));
  } else {
    for (const v1::Baseline& b : catalog.baselines()) {
      if (b.sweeps().empty()) continue;
      absl::Status s = OneBaseline(catalog, b, &report);
      if (!s.ok()) report.notes.push_back(absl::StrCat(b.id(), ": ", s.message()));
    }
  }
  for (const v1::Baseline& b : catalog.baselines()) {
    for (const std::string& metric : AccuracyMetrics()) {
      std::vector<double> errors;
      for (const AccuracyRow& row : report.rows) {
        if (row.baseline_id == b.id() && row.metric == metric) {
          errors.push_back(std::abs(row.error_fraction));
        }
      }
      if (errors.empty()) continue;
      AccuracySummary s;
      s.baseline_id = b.id();
      s.metric = metric;
      s.count = static_cast<int>(errors.size());
      s.median_abs_error_fraction = model::Median(errors);
      s.max_abs_error_fraction = *std::max_element(errors.begin(), errors.end());
      report.summaries.push_back(s);
    }
  }
  return report;
}

}  // namespace capplan::service
