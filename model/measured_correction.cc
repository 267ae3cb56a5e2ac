#include "model/measured_correction.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>

namespace capplan::model {
namespace {

constexpr int Index(CurveMetric m) { return static_cast<int>(m); }

std::optional<double> LogRatio(std::optional<double> measured, std::optional<double> predicted) {
  if (!measured.has_value() || !predicted.has_value()) return std::nullopt;
  if (!(*measured > 0) || !(*predicted > 0) || !std::isfinite(*measured) ||
      !std::isfinite(*predicted)) {
    return std::nullopt;
  }
  return std::log(*measured / *predicted);
}

}  // namespace

RowResidual ResidualOf(const MeasuredPoint& row, const LoadPoint& predicted) {
  RowResidual r;
  r.closed_loop = row.concurrency.has_value();
  r.think_time_seconds = row.think_time_seconds;
  r.load = r.closed_loop ? static_cast<double>(*row.concurrency) : row.arrival_rate_rps.value_or(0);
  if (r.closed_loop) {
    std::optional<double> tokens = row.output_tokens_per_second;
    if (!tokens.has_value() && row.requests_per_second.has_value()) {
      tokens = *row.requests_per_second * row.workload.output_tokens;
    }
    if (!tokens.has_value() && row.per_user_output_tokens_per_second.has_value()) {
      tokens = *row.per_user_output_tokens_per_second * *row.concurrency;
    }
    r.log_ratio[Index(CurveMetric::kThroughput)] =
        LogRatio(tokens, predicted.output_tokens_per_second);
  }
  if (predicted.ttft.has_value()) {
    r.log_ratio[Index(CurveMetric::kTtft)] =
        LogRatio(row.ttft_seconds,
                 row.ttft_is_mean ? predicted.ttft->mean_seconds : predicted.ttft->p50_seconds);
    r.ttft_p95_log_ratio = LogRatio(row.ttft_p95_seconds, predicted.ttft->p95_seconds);
  }
  r.log_ratio[Index(CurveMetric::kTpot)] = LogRatio(row.tpot_seconds, predicted.tpot_seconds);
  if (predicted.e2e.has_value()) {
    r.log_ratio[Index(CurveMetric::kE2e)] = LogRatio(row.e2e_seconds, predicted.e2e->p50_seconds);
  }
  return r;
}

MeasuredCorrection MeasuredCorrection::FromRows(const std::vector<RowResidual>& rows,
                                                bool closed_loop, double think_time_seconds,
                                                double output_tokens) {
  MeasuredCorrection out;
  out.closed_loop_ = closed_loop;
  out.output_tokens_ = std::max(1.0, output_tokens);
  for (CurveMetric metric : kCurveMetrics) {
    // Rows at one load averaged: sum and count by load.
    std::map<double, std::pair<double, int>> by_load;
    for (const RowResidual& r : rows) {
      if (r.closed_loop != closed_loop || !(r.load > 0)) continue;
      if (closed_loop && r.think_time_seconds != think_time_seconds) continue;
      const std::optional<double>& lr = r.log_ratio[Index(metric)];
      if (!lr.has_value()) continue;
      auto& [sum, count] = by_load[r.load];
      sum += *lr;
      ++count;
    }
    std::vector<Anchor>& anchors = out.anchors_[Index(metric)];
    for (const auto& [load, sc] : by_load) {
      anchors.push_back(Anchor{std::log(load), sc.first / sc.second});
    }
    if (anchors.size() < 3) continue;
    double sum_sq = 0;
    for (size_t i = 0; i < anchors.size(); ++i) {
      const double predicted = LogRatioAt(anchors, anchors[i].log_load, i);
      const double e = std::exp(predicted - anchors[i].log_ratio) - 1;
      sum_sq += e * e;
    }
    out.bands_[Index(metric)] = std::sqrt(sum_sq / static_cast<double>(anchors.size()));
  }
  std::map<double, std::pair<double, int>> tail_by_load;
  for (const RowResidual& r : rows) {
    if (r.closed_loop != closed_loop || !(r.load > 0) || !r.ttft_p95_log_ratio.has_value())
      continue;
    if (closed_loop && r.think_time_seconds != think_time_seconds) continue;
    auto& [sum, count] = tail_by_load[r.load];
    sum += *r.ttft_p95_log_ratio;
    ++count;
  }
  for (const auto& [load, sc] : tail_by_load) {
    out.ttft_tail_anchors_.push_back(Anchor{std::log(load), sc.first / sc.second});
  }
  return out;
}

bool MeasuredCorrection::empty() const {
  return ttft_tail_anchors_.empty() &&
         std::all_of(anchors_.begin(), anchors_.end(),
                     [](const std::vector<Anchor>& a) { return a.empty(); });
}

double MeasuredCorrection::LogRatioAt(const std::vector<Anchor>& a, double x,
                                      std::optional<size_t> skip) {
  // The anchors left, in order, without `skip`.
  const int n = static_cast<int>(a.size());
  const bool skipping = skip.has_value() && *skip < a.size();
  const int s = skipping ? static_cast<int>(*skip) : n;
  auto at = [&](int i) -> const Anchor& { return a[i < s ? i : i + 1]; };
  const int m = skipping ? n - 1 : n;
  if (m <= 0) return 0;
  const Anchor& first = at(0);
  const Anchor& last = at(m - 1);
  if (x <= first.log_load) {
    const double doublings = (first.log_load - x) / std::log(2.0);
    return first.log_ratio * std::pow(kResidualDecayPerDoubling, doublings);
  }
  if (x >= last.log_load) {
    const double doublings = (x - last.log_load) / std::log(2.0);
    return last.log_ratio * std::pow(kResidualDecayPerDoubling, doublings);
  }
  int hi = 1;
  while (hi < m - 1 && at(hi).log_load < x) ++hi;
  const Anchor& l = at(hi - 1);
  const Anchor& h = at(hi);
  const double f = (x - l.log_load) / (h.log_load - l.log_load);
  return l.log_ratio + f * (h.log_ratio - l.log_ratio);
}

double MeasuredCorrection::Factor(CurveMetric metric, double load) const {
  const std::vector<Anchor>& a = anchors_[Index(metric)];
  if (a.empty() || !(load > 0) || !std::isfinite(load)) return 1;
  return std::exp(LogRatioAt(a, std::log(load), std::nullopt));
}

bool MeasuredCorrection::Corrects(CurveMetric metric) const {
  return !anchors_[Index(metric)].empty();
}

std::optional<std::pair<double, double>> MeasuredCorrection::MeasuredRange(
    CurveMetric metric) const {
  const std::vector<Anchor>& a = anchors_[Index(metric)];
  if (a.empty()) return std::nullopt;
  return std::make_pair(std::exp(a.front().log_load), std::exp(a.back().log_load));
}

std::optional<double> MeasuredCorrection::LeaveOneRowOutBand(CurveMetric metric) const {
  return bands_[Index(metric)];
}

void MeasuredCorrection::Apply(LoadPoint* p) const {
  if (closed_loop_ != p->concurrency.has_value()) return;
  const double load = p->load();
  if (closed_loop_) {
    const double f = Factor(CurveMetric::kThroughput, load);
    p->output_tokens_per_second *= f;
    p->requests_per_second *= f;
  }
  const double ttft_mean = p->ttft.has_value() ? p->ttft->mean_seconds : 0;
  const double tpot = p->tpot_seconds.value_or(0);
  if (p->ttft.has_value()) {
    const double f = Factor(CurveMetric::kTtft, load);
    const double tail =
        ttft_tail_anchors_.empty() || !(load > 0) || !std::isfinite(load)
            ? f
            : std::exp(LogRatioAt(ttft_tail_anchors_, std::log(load), std::nullopt));
    LatencyPercentiles& t = *p->ttft;
    t.mean_seconds *= f;
    t.p50_seconds *= f;
    // The tail never below the corrected median (percentiles stay ordered).
    for (double* v : {&t.p90_seconds, &t.p95_seconds, &t.p99_seconds}) {
      *v = std::max(t.p50_seconds, *v * tail);
    }
  }
  if (p->tpot_seconds.has_value()) *p->tpot_seconds *= Factor(CurveMetric::kTpot, load);
  if (!p->e2e.has_value()) return;
  double* e2e[] = {&p->e2e->mean_seconds, &p->e2e->p50_seconds, &p->e2e->p95_seconds};
  if (Corrects(CurveMetric::kE2e)) {
    const double f = Factor(CurveMetric::kE2e, load);
    for (double* v : e2e) *v *= f;
    return;
  }
  // Recomposed from the corrected parts (never below the corrected TTFT).
  const double shift = (p->ttft.has_value() ? p->ttft->mean_seconds - ttft_mean : 0) +
                       (output_tokens_ - 1) * (p->tpot_seconds.value_or(0) - tpot);
  const double floor = p->ttft.has_value() ? p->ttft->mean_seconds : 0;
  for (double* v : e2e) *v = std::max(floor, *v + shift);
}

}  // namespace capplan::model
