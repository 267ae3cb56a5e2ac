#include "service/cli/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "service/translate/load_translation.h"

namespace capplan::service {
namespace {

constexpr double kWidth = 760;
constexpr double kPanelHeight = 260;
constexpr double kLeft = 80, kRight = 30, kTop = 50, kGap = 70, kBottom = 60;

std::string Escape(const std::string& s) {
  return absl::StrReplaceAll(s, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

// A "nice" upper bound and tick step for [0, max].
std::pair<double, double> NiceAxis(double max) {
  if (!(max > 0) || !std::isfinite(max)) return {1, 0.2};
  double raw = max / 5;
  double mag = std::pow(10, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  }
  return {std::ceil(max / step) * step, step};
}

std::string Num(double v) {
  if (v == 0) return "0";
  if (std::abs(v) >= 100) return absl::StrFormat("%.0f", v);
  if (std::abs(v) >= 1) return absl::StrFormat("%.4g", v);
  return absl::StrFormat("%.3g", v);
}

struct Panel {
  double top;
  double x_max;
  double y_max;
  double X(double x) const { return kLeft + (kWidth - kLeft - kRight) * x / x_max; }
  double Y(double y) const { return top + kPanelHeight * (1 - y / y_max); }
};

void Axes(const Panel& p, double x_step, double y_step, const std::string& x_label,
          const std::string& y_label, std::string* svg) {
  absl::StrAppendFormat(svg,
                        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                        "fill=\"none\" stroke=\"#444\"/>\n",
                        kLeft, p.top, kWidth - kLeft - kRight, kPanelHeight);
  for (double y = 0; y <= p.y_max * (1 + 1e-9); y += y_step) {
    absl::StrAppendFormat(svg,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>"
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"end\">%s"
                          "</text>\n",
                          kLeft, p.Y(y), kWidth - kRight, p.Y(y), kLeft - 6, p.Y(y) + 4, Num(y));
  }
  for (double x = 0; x <= p.x_max * (1 + 1e-9); x += x_step) {
    absl::StrAppendFormat(svg,
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"middle\">%s"
                          "</text>\n",
                          p.X(x), p.top + kPanelHeight + 16, Num(x));
  }
  absl::StrAppendFormat(svg,
                        "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">%s"
                        "</text>\n",
                        (kLeft + kWidth - kRight) / 2, p.top + kPanelHeight + 34, Escape(x_label));
  absl::StrAppendFormat(svg,
                        "<text transform=\"translate(%.1f,%.1f) rotate(-90)\" font-size=\"12\" "
                        "text-anchor=\"middle\">%s</text>\n",
                        kLeft - 52, p.top + kPanelHeight / 2, Escape(y_label));
}

void Polyline(const Panel& p, const std::vector<std::pair<double, double>>& xy,
              const std::string& colour, const std::string& dash, std::string* svg) {
  if (xy.empty()) return;
  std::string points;
  for (const auto& [x, y] : xy) absl::StrAppendFormat(&points, "%.1f,%.1f ", p.X(x), p.Y(y));
  absl::StrAppendFormat(
      svg, "<polyline points=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", points,
      colour, dash.empty() ? "" : absl::StrCat(" stroke-dasharray=\"", dash, "\""));
  for (const auto& [x, y] : xy) {
    absl::StrAppendFormat(svg, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n", p.X(x),
                          p.Y(y), colour);
  }
}

void VerticalMark(const Panel& p, double x, const std::string& colour, const std::string& label,
                  std::string* svg) {
  if (!(x >= 0) || x > p.x_max) return;
  absl::StrAppendFormat(svg,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                        "stroke-dasharray=\"6 4\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" "
                        "fill=\"%s\">%s</text>\n",
                        p.X(x), p.top, p.X(x), p.top + kPanelHeight, colour, p.X(x) + 4, p.top + 12,
                        colour, Escape(label));
}

}  // namespace

std::string LoadCurveSvg(const v1::LoadCurve& curve, std::optional<double> ttft_slo_seconds,
                         const std::string& title) {
  const bool closed = curve.points_size() > 0 && curve.points(0).has_concurrency();
  auto load = [&](const v1::LoadCurvePoint& p) {
    return closed ? static_cast<double>(p.concurrency()) : p.arrival_rate_rps();
  };
  std::vector<std::pair<double, double>> tput, p50, p95;
  std::vector<double> unstable;
  double x_max = 0, t_max = 0, y_max = 0;
  for (const v1::LoadCurvePoint& p : curve.points()) {
    const double x = load(p);
    x_max = std::max(x_max, x);
    tput.emplace_back(x, p.output_tokens_per_second());
    t_max = std::max(t_max, p.output_tokens_per_second());
    if (p.has_ttft_p50_seconds() && p.has_ttft_p95_seconds()) {
      p50.emplace_back(x, p.ttft_p50_seconds());
      p95.emplace_back(x, p.ttft_p95_seconds());
      y_max = std::max(y_max, p.ttft_p95_seconds());
    } else {
      unstable.push_back(x);
    }
  }
  if (ttft_slo_seconds.has_value()) y_max = std::max(y_max, *ttft_slo_seconds);
  auto [xm, xs] = NiceAxis(x_max);
  auto [tm, ts] = NiceAxis(t_max);
  auto [ym, ys] = NiceAxis(y_max);
  const double height = kTop + 2 * kPanelHeight + kGap + kBottom;
  std::string svg = absl::StrFormat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%.1f\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">%s</text>\n",
      kWidth, height, kWidth, height, kWidth / 2, Escape(title));
  const std::string x_label = closed ? "concurrency (users)" : "arrival rate (req/s)";
  Panel top{kTop, xm, tm};
  Panel bottom{kTop + kPanelHeight + kGap, xm, ym};
  Axes(top, xs, ts, x_label, "output throughput (tok/s)", &svg);
  Axes(bottom, xs, ys, x_label, "TTFT (s)", &svg);
  Polyline(top, tput, "#1f77b4", "", &svg);
  Polyline(bottom, p50, "#2ca02c", "", &svg);
  Polyline(bottom, p95, "#d62728", "", &svg);
  for (double x : unstable) {
    absl::StrAppendFormat(&svg,
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"#d62728\" "
                          "text-anchor=\"middle\">×</text>\n",
                          bottom.X(x), bottom.top + kPanelHeight - 4);
  }
  if (curve.has_knee()) {
    for (const Panel* p : {&top, &bottom}) {
      VerticalMark(*p, KneeLoad(curve.knee()), "#9467bd",
                   absl::StrCat("knee ", Num(KneeLoad(curve.knee()))), &svg);
    }
  }
  if (curve.safe_operating_point().found()) {
    const v1::SafeOperatingPoint& s = curve.safe_operating_point();
    double x = s.has_concurrency() ? s.concurrency() : s.arrival_rate_rps();
    VerticalMark(bottom, x, "#ff7f0e", absl::StrCat("safe ", Num(x)), &svg);
  }
  if (ttft_slo_seconds.has_value()) {
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" "
                          "stroke-dasharray=\"2 3\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">"
                          "TTFT p95 SLO %s s</text>\n",
                          kLeft, bottom.Y(*ttft_slo_seconds), kWidth - kRight,
                          bottom.Y(*ttft_slo_seconds), kLeft + 6, bottom.Y(*ttft_slo_seconds) - 4,
                          Num(*ttft_slo_seconds));
  }
  // Legend.
  double lx = kWidth - kRight - 170, ly = bottom.top + 16;
  for (const auto& [colour, name] : std::vector<std::pair<std::string, std::string>>{
           {"#2ca02c", "TTFT p50"}, {"#d62728", "TTFT p95"}}) {
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                          "stroke-width=\"2\"/><text x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s"
                          "</text>\n",
                          lx, ly, lx + 20, ly, colour, lx + 26, ly + 4, name);
    ly += 16;
  }
  if (!unstable.empty()) {
    absl::StrAppendFormat(&svg,
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" fill=\"#d62728\">× "
                          "unstable (no latency)</text>\n",
                          lx, ly + 4);
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace capplan::service

namespace capplan::service {
namespace {

void PointLabels(const Panel& p, const std::vector<std::pair<double, double>>& xy,
                 const std::vector<std::string>& labels, std::string* svg) {
  for (size_t i = 0; i < xy.size() && i < labels.size(); ++i) {
    absl::StrAppendFormat(svg,
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"10\" fill=\"#333\">%s</text>\n",
                          p.X(xy[i].first) + 5, p.Y(xy[i].second) - 5, Escape(labels[i]));
  }
}

std::string Label(const v1::SearchCandidate& c) {
  const v1::Deployment& d = c.deployment();
  return absl::StrFormat("%d×%s", c.gpus_per_replica(),
                         d.has_hardware() ? d.hardware().id() : d.hardware_id());
}

}  // namespace

std::string SearchFrontSvg(const v1::SearchConfigsResponse& response, const std::string& title) {
  std::vector<std::pair<double, double>> cost, capacity;
  std::vector<std::string> cost_labels, capacity_labels;
  double cx = 0, cy = 0, gx = 0, gy = 0;
  for (const v1::SearchCandidate& c : response.cost_front()) {
    cost.emplace_back(c.cost_per_million_output_tokens(), c.user_output_tokens_per_second());
    cost_labels.push_back(Label(c));
    cx = std::max(cx, c.cost_per_million_output_tokens());
    cy = std::max(cy, c.user_output_tokens_per_second());
  }
  for (const v1::SearchCandidate& c : response.capacity_front()) {
    capacity.emplace_back(c.gpus_per_replica(), c.capacity().output_tokens_per_month() / 1e6);
    capacity_labels.push_back(Label(c));
    gx = std::max(gx, static_cast<double>(c.gpus_per_replica()));
    gy = std::max(gy, c.capacity().output_tokens_per_month() / 1e6);
  }
  auto [cxm, cxs] = NiceAxis(cx * 1.15);
  auto [cym, cys] = NiceAxis(cy * 1.1);
  auto [gxm, gxs] = NiceAxis(gx * 1.15);
  auto [gym, gys] = NiceAxis(gy * 1.1);
  const double height = kTop + 2 * kPanelHeight + kGap + kBottom;
  std::string svg = absl::StrFormat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%.1f\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">%s</text>\n",
      kWidth, height, kWidth, height, kWidth / 2, Escape(title));
  Panel top{kTop, cxm, cym};
  Panel bottom{kTop + kPanelHeight + kGap, gxm, gym};
  Axes(top, cxs, cys, "cost per million output tokens (USD)", "per-user output (tok/s)", &svg);
  Axes(bottom, gxs, gys, "GPUs per replica", "output tokens/month per replica (millions)", &svg);
  Polyline(top, cost, "#1f77b4", "", &svg);
  Polyline(bottom, capacity, "#2ca02c", "", &svg);
  PointLabels(top, cost, cost_labels, &svg);
  PointLabels(bottom, capacity, capacity_labels, &svg);
  if (cost.empty()) {
    absl::StrAppendFormat(&svg,
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"middle\">"
                          "no priced candidate: no cost front</text>\n",
                          kWidth / 2, kTop + kPanelHeight / 2);
  }
  svg += "</svg>\n";
  return svg;
}

}  // namespace capplan::service
