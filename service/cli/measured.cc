#include "service/cli/measured.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "service/cli/format.h"
#include "service/planner/prepared.h"
#include "service/translate/deployment_resolver.h"
#include "service/translate/load_translation.h"

namespace capplan::service {
namespace {

// The figure of a latency and its statistic: the median first, then the
// mean, then an unnamed single value.
void TakeTtft(const v1::LatencyFigures& f, MeasuredPoint* p) {
  if (f.has_p50_seconds()) {
    p->ttft_seconds = f.p50_seconds();
    p->ttft_statistic = "p50";
  } else if (f.has_mean_seconds()) {
    p->ttft_seconds = f.mean_seconds();
    p->ttft_statistic = "mean";
  } else if (f.has_reported_seconds()) {
    p->ttft_seconds = f.reported_seconds();
    p->ttft_statistic = "not stated";
  }
  if (f.has_p95_seconds()) p->ttft_p95_seconds = f.p95_seconds();
}

std::optional<double> TpotOf(const v1::LatencyFigures& f) {
  if (f.has_mean_seconds()) return f.mean_seconds();
  if (f.has_p50_seconds()) return f.p50_seconds();
  if (f.has_reported_seconds()) return f.reported_seconds();
  return std::nullopt;
}

bool SameTokens(double a, double b) { return std::abs(a - b) <= 0.5; }

// The request changes nothing of the baseline's deployment.
bool UnchangedDeployment(const v1::Baseline& b, const v1::PredictLoadRequest& request) {
  v1::Deployment overrides = request.deployment();
  overrides.clear_baseline_id();
  if (overrides.parallelism().ByteSizeLong() == 0) overrides.clear_parallelism();
  if (overrides.engine().ByteSizeLong() == 0) overrides.clear_engine();
  if (overrides.ByteSizeLong() != 0) return false;
  if (!request.has_operator_concurrency_gate()) return true;
  return b.deployment().has_concurrency_gate() &&
         b.deployment().concurrency_gate() == request.operator_concurrency_gate();
}

bool SameSpeculation(const v1::SpeculativeDecoding& a, const v1::SpeculativeDecoding& b) {
  return SpeculationOn(a) == SpeculationOn(b) &&
         (!SpeculationOn(a) || DraftTokens(a) == DraftTokens(b));
}

std::string Cell(const std::optional<double>& v, const char* format) {
  return v.has_value() ? absl::StrFormat(format, *v) : std::string("-");
}

std::string Difference(const std::optional<double>& measured, std::optional<double> predicted) {
  if (!measured.has_value() || !predicted.has_value() || !(*measured > 0)) return "-";
  return absl::StrFormat("%+.0f", 100 * (*predicted - *measured) / *measured);
}

const v1::LoadCurvePoint* PointAt(const v1::LoadCurve& curve, const MeasuredPoint& m) {
  for (const v1::LoadCurvePoint& p : curve.points()) {
    const bool closed = p.has_concurrency();
    if (closed != m.closed_loop) continue;
    const double load = closed ? p.concurrency() : p.arrival_rate_rps();
    if (std::abs(load - m.load) <= 1e-9 * std::max(1.0, m.load)) return &p;
  }
  return nullptr;
}

}  // namespace

std::vector<MeasuredPoint> MeasuredPointsOf(const v1::Sweep& sweep, const std::string& source) {
  std::vector<MeasuredPoint> out;
  for (const v1::SweepRow& row : sweep.rows()) {
    MeasuredPoint p;
    p.source = source;
    p.label = row.label();
    if (row.has_concurrency() && (sweep.closed_loop() || !row.has_arrival_rate_rps())) {
      p.load = row.concurrency();
    } else if (row.has_arrival_rate_rps()) {
      p.closed_loop = false;
      p.load = row.arrival_rate_rps();
    } else {
      continue;
    }
    if (row.has_output_tokens_per_second()) {
      p.output_tokens_per_second = row.output_tokens_per_second();
    }
    TakeTtft(row.ttft(), &p);
    p.tpot_seconds = TpotOf(row.tpot());
    out.push_back(std::move(p));
  }
  return out;
}

std::vector<MeasuredPoint> BaselinePointsFor(const v1::Baseline& b,
                                             const v1::PredictLoadRequest& request) {
  std::vector<MeasuredPoint> out;
  if (b.sweeps().empty() || !UnchangedDeployment(b, request)) return out;
  std::optional<v1::WorkloadSpec> wanted;
  if (request.has_workload()) {
    wanted = request.workload();
  } else {
    absl::StatusOr<v1::WorkloadSpec> first = SweepWorkload(b, b.sweeps(0), nullptr);
    if (!first.ok()) return out;
    wanted = *first;
  }
  const bool closed = !request.has_open_loop();
  for (const v1::Sweep& sweep : b.sweeps()) {
    absl::StatusOr<v1::WorkloadSpec> w = SweepWorkload(b, sweep, nullptr);
    if (!w.ok() || !SameTokens(w->input_tokens(), wanted->input_tokens()) ||
        !SameTokens(w->output_tokens(), wanted->output_tokens())) {
      continue;
    }
    if (sweep.has_speculative() &&
        !SameSpeculation(sweep.speculative(), b.deployment().engine().speculative())) {
      continue;
    }
    for (MeasuredPoint& p : MeasuredPointsOf(sweep, absl::StrCat(b.id(), "/", sweep.name()))) {
      if (p.closed_loop == closed) out.push_back(std::move(p));
    }
  }
  return out;
}

void PrintMeasuredBeside(const v1::LoadCurve& curve, const std::vector<MeasuredPoint>& measured,
                         std::ostream& out) {
  TextTable table({"LOAD", "SOURCE", "OUTPUT MEASURED (tok/s)", "PREDICTED (tok/s)", "DIFF (%)",
                   "TTFT MEASURED (s)", "PREDICTED p50 (s)", "DIFF (%)", "TPOT MEASURED (s)",
                   "PREDICTED (s)", "DIFF (%)"});
  int rows = 0;
  bool unnamed_statistic = false;
  for (const MeasuredPoint& m : measured) {
    const v1::LoadCurvePoint* p = PointAt(curve, m);
    if (p == nullptr) continue;
    ++rows;
    std::optional<double> ttft, tpot;
    if (p->has_ttft_p50_seconds()) ttft = p->ttft_p50_seconds();
    if (p->has_tpot_seconds()) tpot = p->tpot_seconds();
    std::string measured_ttft = Cell(m.ttft_seconds, "%.3f");
    if (m.ttft_seconds.has_value() && m.ttft_statistic != "p50") {
      measured_ttft += m.ttft_statistic == "mean" ? " (mean)" : " *";
      unnamed_statistic |= m.ttft_statistic != "mean";
    }
    table.AddRow({m.closed_loop ? Plural(static_cast<int64_t>(m.load), "user", "users")
                                : absl::StrFormat("%g req/s", m.load),
                  m.source, Cell(m.output_tokens_per_second, "%.1f"),
                  absl::StrFormat("%.1f", p->output_tokens_per_second()),
                  Difference(m.output_tokens_per_second, p->output_tokens_per_second()),
                  measured_ttft, Cell(ttft, "%.3f"), Difference(m.ttft_seconds, ttft),
                  Cell(m.tpot_seconds, "%.4f"), Cell(tpot, "%.4f"),
                  Difference(m.tpot_seconds, tpot)});
  }
  if (rows == 0) return;
  out << "\nmeasured beside predicted (DIFF = predicted − measured, % of measured):\n";
  table.Print(out);
  if (unnamed_statistic) {
    out << "* the source does not say which statistic its TTFT figure is\n";
  }
  const bool corrected = std::any_of(
      curve.notes().begin(), curve.notes().end(),
      [](const std::string& n) { return n.find(kMeasuredCorrectionNote) != std::string::npos; });
  if (corrected) {
    out << "the prediction is corrected by these rows (the measurement at each measured load): "
           "how the model does on a row it did not see is `capplan accuracy --baseline ID` "
           "(rows held out one at a time)\n";
  }
}

}  // namespace capplan::service
