// A configuration's own measured rows as a correction to the step-time
// model's figures (DESIGN §4, the last level of the hierarchy). The fitted
// model is smooth in load; a real sweep is not quite (a kink where a CUDA
// graph size or a scheduler limit changes, a card in another power state), and
// a planner that disagrees with the measurement at the very load that was
// measured is not believed. So each figure the rows measured is predicted as
//   model(load) × exp(r(load)),
// with r the log residual log(measured ÷ model) of the rows: r at a measured
// load, linear in log load between two of them, and outside the measured
// range the nearest row's residual halved per doubling of load away from it
// (far from the data, the model alone). The model's figures for a row are its
// own (at the row's own workload), so a residual is the model's misfit, not a
// difference of workloads.
//
// Only rows of the same kind of run stand for a curve: the same loop (closed
// with the same think time, or open), and the caller's choice of workload and
// speculative setting. Throughput is corrected in closed loops only: an open
// loop's stable throughput is its offered rate.
#ifndef CAPPLAN_MODEL_MEASURED_CORRECTION_H_
#define CAPPLAN_MODEL_MEASURED_CORRECTION_H_

#include <array>
#include <optional>
#include <utility>
#include <vector>

#include "model/calibration.h"
#include "model/provenance.h"
#include "model/queueing.h"

namespace capplan::model {

// The residuals of one measured row: log(measured ÷ model) per metric it
// states (absent where the row or the model has no figure).
struct RowResidual {
  bool closed_loop = true;
  double think_time_seconds = 0;
  double load = 0;  // users (closed loop) or requests per second (open loop)
  std::array<std::optional<double>, kNumCurveMetrics> log_ratio;  // by CurveMetric
  // TTFT's tail: the row's p95 against the model's, where the row states one.
  std::optional<double> ttft_p95_log_ratio;
};

// The residuals of `row` against the model's prediction of it (`predicted`,
// at the row's own load and workload). The row's figures: output tok/s (else
// req/s × output tokens, else per-user tok/s × users), TTFT p50 (its mean
// against the model's mean where the row states only a mean) and p95, TPOT
// and end-to-end p50 against the model's same figures.
RowResidual ResidualOf(const MeasuredPoint& row, const LoadPoint& predicted);

// Halving of a residual per doubling of load beyond the measured range.
inline constexpr double kResidualDecayPerDoubling = 0.5;

class MeasuredCorrection : public PointAdjustment {
 public:
  // The rows of one kind of run: `closed_loop` with `think_time_seconds`, or
  // open. Rows of another kind are left out; several rows at one load are
  // averaged (in log space). Empty when none applies.
  // `output_tokens`: the curve's answer length, with which end-to-end
  // latency is recomposed where no row measured it (below).
  static MeasuredCorrection FromRows(const std::vector<RowResidual>& rows, bool closed_loop,
                                     double think_time_seconds, double output_tokens = 1);

  bool empty() const;
  // exp(r(load)) for `metric`; 1 without rows of it.
  double Factor(CurveMetric metric, double load) const;
  // Scales the point's figures (throughput in a closed loop only; latency
  // figures where present; TTFT's p90 to p99 by the rows' p95 residual where
  // rows state a p95, else by the median's); a point of the other kind of
  // loop is left as is.
  // Without end-to-end rows, end-to-end latency moves by the corrected
  // parts: Δ mean TTFT + (output − 1) × Δ TPOT, so it stays their sum.
  void Apply(LoadPoint* point) const override;
  // Whether rows of `metric` correct the curve.
  bool Corrects(CurveMetric metric) const;
  // The measured loads (smallest, largest) of `metric`'s rows; absent without.
  std::optional<std::pair<double, double>> MeasuredRange(CurveMetric metric) const;
  // The correction's own error for `metric`: each row's figure predicted by
  // the correction built without that row (the model × the other rows'
  // residuals), the RMS of |predicted ÷ measured − 1|. Absent with fewer than
  // three rows of it (two rows leave one to predict from one: no spread).
  std::optional<double> LeaveOneRowOutBand(CurveMetric metric) const;

 private:
  struct Anchor {
    double log_load = 0;
    double log_ratio = 0;
  };
  // r(x) of `anchors` (sorted by log load) at log load `x`, without the
  // anchor at index `skip` when given.
  static double LogRatioAt(const std::vector<Anchor>& anchors, double x,
                           std::optional<size_t> skip);
  bool closed_loop_ = true;
  double output_tokens_ = 1;
  std::array<std::vector<Anchor>, kNumCurveMetrics> anchors_;  // by CurveMetric, sorted by load
  std::vector<Anchor> ttft_tail_anchors_;                      // TTFT p95, sorted by load
  std::array<std::optional<double>, kNumCurveMetrics> bands_;
};

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_MEASURED_CORRECTION_H_
