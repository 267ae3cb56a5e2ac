#include "service/cli/svg_plot.h"

#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_replace.h"
#include "service/cli/svg_plot_labels.h"
#include "service/translate/load_translation.h"

namespace capplan::service {
namespace {

constexpr double kWidth = 760;
constexpr double kPanelHeight = 260;
constexpr double kLeft = 80, kRight = 30, kTop = 50, kGap = 70, kBottom = 60;
constexpr double kFont = 11;
constexpr double kMarker = 7;  // side of a measured point's square
constexpr char kThroughputColour[] = "#1f77b4";
constexpr char kP50Colour[] = "#2ca02c";
constexpr char kP95Colour[] = "#d62728";
constexpr char kMeasuredColour[] = "#000000";

using Points = std::vector<std::pair<double, double>>;

std::string Escape(const std::string& s) {
  return absl::StrReplaceAll(s, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

const char* AnchorName(Anchor a) {
  switch (a) {
    case Anchor::kStart:
      return "start";
    case Anchor::kMiddle:
      return "middle";
    case Anchor::kEnd:
      return "end";
  }
  return "start";
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
  Box Area() const { return {kLeft, top, kWidth - kRight, top + kPanelHeight}; }
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

void Polyline(const Panel& p, const Points& xy, const std::string& colour, std::string* svg) {
  if (xy.empty()) return;
  std::string points;
  for (const auto& [x, y] : xy) absl::StrAppendFormat(&points, "%.1f,%.1f ", p.X(x), p.Y(y));
  absl::StrAppendFormat(svg,
                        "<polyline class=\"predicted\" points=\"%s\" fill=\"none\" stroke=\"%s\" "
                        "stroke-width=\"2\"/>\n",
                        points, colour);
  for (const auto& [x, y] : xy) {
    absl::StrAppendFormat(svg, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"2.5\" fill=\"%s\"/>\n", p.X(x),
                          p.Y(y), colour);
  }
}

// A measured point: a hollow square with its source as a tooltip; its box
// is an obstacle for labels.
void MeasuredMarker(const Panel& p, double x, double y, const std::string& colour,
                    const std::string& tooltip, std::string* svg, std::vector<Box>* obstacles) {
  const double cx = p.X(x), cy = p.Y(y);
  absl::StrAppendFormat(svg,
                        "<rect class=\"measured\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                        "height=\"%.1f\" fill=\"white\" stroke=\"%s\" stroke-width=\"1.5\">"
                        "<title>%s</title></rect>\n",
                        cx - kMarker / 2, cy - kMarker / 2, kMarker, kMarker, colour,
                        Escape(tooltip));
  obstacles->push_back(
      {cx - kMarker / 2 - 1, cy - kMarker / 2 - 1, cx + kMarker / 2 + 1, cy + kMarker / 2 + 1});
}

struct LegendEntry {
  std::string colour;
  std::string text;
  bool square = false;  // a measured marker rather than a line
};

// Legend entries in the panel's top-right corner; their boxes are obstacles.
void Legend(const Panel& p, const std::vector<LegendEntry>& entries, std::string* svg,
            std::vector<Box>* obstacles) {
  double width = 0;
  for (const LegendEntry& e : entries) {
    width = std::max(width, TextBox(e.text, kFont, {0, 0, Anchor::kStart}).right);
  }
  const double lx = kWidth - kRight - 34 - width, y0 = p.top + 16;
  double ly = y0;
  for (const LegendEntry& e : entries) {
    if (e.square) {
      absl::StrAppendFormat(svg,
                            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" "
                            "fill=\"white\" stroke=\"%s\" stroke-width=\"1.5\"/>",
                            lx + 10 - kMarker / 2, ly - kMarker / 2, kMarker, kMarker, e.colour);
    } else {
      absl::StrAppendFormat(svg,
                            "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                            "stroke-width=\"2\"/>",
                            lx, ly, lx + 20, ly, e.colour);
    }
    absl::StrAppendFormat(svg,
                          "<text class=\"legend\" x=\"%.1f\" y=\"%.1f\" font-size=\"11\">%s"
                          "</text>\n",
                          lx + 26, ly + 4, Escape(e.text));
    ly += 16;
  }
  if (!entries.empty()) obstacles->push_back({lx - 4, y0 - 10, kWidth - kRight - 2, ly - 6});
}

// A vertical mark's label: beside the line, stepping down the panel.
LabelRequest MarkLabel(const Panel& p, double x, const std::string& text) {
  LabelRequest r{text, kFont, {}, p.Area()};
  for (double y = p.top + 13; y < p.top + kPanelHeight; y += 14) {
    r.candidates.push_back({p.X(x) + 4, y, Anchor::kStart});
    r.candidates.push_back({p.X(x) - 4, y, Anchor::kEnd});
  }
  return r;
}

// The SLO line's label: above or below the line, moving right.
LabelRequest LineLabel(const Panel& p, double y, const std::string& text) {
  LabelRequest r{text, kFont, {}, p.Area()};
  for (double x = kLeft + 6; x < kWidth - kRight; x += 40) {
    r.candidates.push_back({x, p.Y(y) - 4, Anchor::kStart});
    r.candidates.push_back({x, p.Y(y) + 13, Anchor::kStart});
  }
  return r;
}

// A measured point's label: around its marker, nearest first.
LabelRequest PointLabel(const Panel& p, double x, double y, const std::string& text) {
  LabelRequest r{text, kFont, {}, p.Area()};
  const double cx = p.X(x), cy = p.Y(y);
  for (double d : {6.0, 14.0, 24.0}) {
    r.candidates.push_back({cx + d, cy - d + 2, Anchor::kStart});
    r.candidates.push_back({cx + d, cy + d + 8, Anchor::kStart});
    r.candidates.push_back({cx - d, cy - d + 2, Anchor::kEnd});
    r.candidates.push_back({cx - d, cy + d + 8, Anchor::kEnd});
    r.candidates.push_back({cx, cy - d - 2, Anchor::kMiddle});
    r.candidates.push_back({cx, cy + d + 10, Anchor::kMiddle});
  }
  return r;
}

struct Label {
  LabelRequest request;
  std::string colour;
};

void EmitLabels(const std::vector<Label>& labels, const std::vector<Box>& obstacles,
                std::string* svg) {
  std::vector<LabelRequest> requests;
  for (const Label& l : labels) requests.push_back(l.request);
  const std::vector<PlacedLabel> placed = PlaceLabels(requests, obstacles);
  for (size_t i = 0; i < labels.size(); ++i) {
    if (!placed[i].placed) continue;
    const LabelPosition& at = placed[i].position;
    absl::StrAppendFormat(svg,
                          "<text class=\"label\" x=\"%.1f\" y=\"%.1f\" font-size=\"%.0f\" "
                          "text-anchor=\"%s\" fill=\"%s\">%s</text>\n",
                          at.x, at.y, labels[i].request.font_size, AnchorName(at.anchor),
                          labels[i].colour, Escape(labels[i].request.text));
  }
}

void VerticalLine(const Panel& p, double x, const std::string& colour, std::string* svg) {
  absl::StrAppendFormat(svg,
                        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" "
                        "stroke-dasharray=\"6 4\"/>\n",
                        p.X(x), p.top, p.X(x), p.top + kPanelHeight, colour);
}

// What the curve and the measured points hold, per panel.
struct PlotData {
  bool closed = true;
  Points throughput, p50, p95;
  std::vector<double> unstable;
  std::vector<const MeasuredPoint*> measured;
  double x_max = 0, t_max = 0, y_max = 0;
};

PlotData Gather(const v1::LoadCurve& curve, std::optional<double> slo,
                const std::vector<MeasuredPoint>& measured) {
  PlotData d;
  d.closed = curve.points_size() > 0 && curve.points(0).has_concurrency();
  for (const v1::LoadCurvePoint& p : curve.points()) {
    const double x = d.closed ? static_cast<double>(p.concurrency()) : p.arrival_rate_rps();
    d.x_max = std::max(d.x_max, x);
    d.throughput.emplace_back(x, p.output_tokens_per_second());
    d.t_max = std::max(d.t_max, p.output_tokens_per_second());
    if (p.has_ttft_p50_seconds() && p.has_ttft_p95_seconds()) {
      d.p50.emplace_back(x, p.ttft_p50_seconds());
      d.p95.emplace_back(x, p.ttft_p95_seconds());
      d.y_max = std::max(d.y_max, p.ttft_p95_seconds());
    } else {
      d.unstable.push_back(x);
    }
  }
  for (const MeasuredPoint& m : measured) {
    if (m.closed_loop != d.closed || !(m.load > 0)) continue;
    d.measured.push_back(&m);
    d.x_max = std::max(d.x_max, m.load);
    d.t_max = std::max(d.t_max, m.output_tokens_per_second.value_or(0));
    d.y_max = std::max({d.y_max, m.ttft_seconds.value_or(0), m.ttft_p95_seconds.value_or(0)});
  }
  if (slo.has_value()) d.y_max = std::max(d.y_max, *slo);
  return d;
}

std::string MeasuredText(const MeasuredPoint& m, const std::string& value) {
  return m.label.empty() ? value : absl::StrCat(m.label, ": ", value);
}

// The measured markers of both panels, with their labels queued.
void DrawMeasured(const PlotData& d, const Panel& top, const Panel& bottom, std::string* svg,
                  std::vector<Box>* obstacles, std::vector<Label>* labels) {
  for (const MeasuredPoint* m : d.measured) {
    const std::string where = absl::StrCat(m->source, m->closed_loop ? " at " : " at rate ",
                                           Num(m->load), m->closed_loop ? " users" : " req/s");
    if (m->output_tokens_per_second.has_value()) {
      const std::string text =
          MeasuredText(*m, absl::StrCat(Num(*m->output_tokens_per_second), " tok/s"));
      MeasuredMarker(top, m->load, *m->output_tokens_per_second, kMeasuredColour,
                     absl::StrCat("measured ", text, " (", where, ")"), svg, obstacles);
      labels->push_back({PointLabel(top, m->load, *m->output_tokens_per_second, text), "#000"});
    }
    if (m->ttft_seconds.has_value()) {
      const std::string text = MeasuredText(*m, absl::StrCat(Num(*m->ttft_seconds), " s"));
      MeasuredMarker(
          bottom, m->load, *m->ttft_seconds, kP50Colour,
          absl::StrCat("measured TTFT (", m->ttft_statistic, ") ", text, " (", where, ")"), svg,
          obstacles);
      labels->push_back({PointLabel(bottom, m->load, *m->ttft_seconds, text), "#1a6e1a"});
    }
    if (m->ttft_p95_seconds.has_value()) {
      MeasuredMarker(
          bottom, m->load, *m->ttft_p95_seconds, kP95Colour,
          absl::StrCat("measured TTFT p95 ", Num(*m->ttft_p95_seconds), " s (", where, ")"), svg,
          obstacles);
    }
  }
}

std::string Header(const std::string& title, double height) {
  return absl::StrFormat(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
      "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%.1f\" y=\"24\" font-size=\"15\" text-anchor=\"middle\">%s</text>\n",
      kWidth, height, kWidth, height, kWidth / 2, Escape(title));
}

}  // namespace

std::string LoadCurveSvg(const v1::LoadCurve& curve, std::optional<double> ttft_slo_seconds,
                         const std::string& title, const std::vector<MeasuredPoint>& measured) {
  const PlotData d = Gather(curve, ttft_slo_seconds, measured);
  auto [xm, xs] = NiceAxis(d.x_max);
  auto [tm, ts] = NiceAxis(d.t_max);
  auto [ym, ys] = NiceAxis(d.y_max);
  std::string svg = Header(title, kTop + 2 * kPanelHeight + kGap + kBottom);
  const std::string x_label = d.closed ? "concurrency (users)" : "arrival rate (req/s)";
  const Panel top{kTop, xm, tm};
  const Panel bottom{kTop + kPanelHeight + kGap, xm, ym};
  Axes(top, xs, ts, x_label, "output throughput (tok/s)", &svg);
  Axes(bottom, xs, ys, x_label, "TTFT (s)", &svg);
  Polyline(top, d.throughput, kThroughputColour, &svg);
  Polyline(bottom, d.p50, kP50Colour, &svg);
  Polyline(bottom, d.p95, kP95Colour, &svg);
  std::vector<Box> obstacles;
  std::vector<Label> labels;
  for (double x : d.unstable) {
    const LabelPosition at{bottom.X(x), bottom.top + kPanelHeight - 4, Anchor::kMiddle};
    absl::StrAppendFormat(&svg,
                          "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" fill=\"%s\" "
                          "text-anchor=\"middle\">×</text>\n",
                          at.x, at.y, kP95Colour);
    obstacles.push_back(TextBox("×", 12, at));
  }
  if (curve.has_knee() && KneeLoad(curve.knee()) <= xm) {
    const double x = KneeLoad(curve.knee());
    for (const Panel* p : {&top, &bottom}) {
      VerticalLine(*p, x, "#9467bd", &svg);
      labels.push_back({MarkLabel(*p, x, absl::StrCat("knee ", Num(x))), "#9467bd"});
    }
  }
  const v1::SafeOperatingPoint& s = curve.safe_operating_point();
  if (s.found()) {
    const double x = s.has_concurrency() ? s.concurrency() : s.arrival_rate_rps();
    VerticalLine(bottom, x, "#ff7f0e", &svg);
    labels.push_back({MarkLabel(bottom, x, absl::StrCat("safe ", Num(x))), "#c25a00"});
  }
  if (ttft_slo_seconds.has_value()) {
    absl::StrAppendFormat(&svg,
                          "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#000\" "
                          "stroke-dasharray=\"2 3\"/>\n",
                          kLeft, bottom.Y(*ttft_slo_seconds), kWidth - kRight,
                          bottom.Y(*ttft_slo_seconds));
    labels.push_back({LineLabel(bottom, *ttft_slo_seconds,
                                absl::StrCat("TTFT p95 SLO ", Num(*ttft_slo_seconds), " s")),
                      "#000"});
  }
  DrawMeasured(d, top, bottom, &svg, &obstacles, &labels);
  std::vector<LegendEntry> top_legend = {{kThroughputColour, "predicted output"}};
  std::vector<LegendEntry> bottom_legend = {{kP50Colour, "TTFT p50 predicted"},
                                            {kP95Colour, "TTFT p95 predicted"}};
  if (!d.measured.empty()) {
    top_legend.push_back({kMeasuredColour, "measured output", true});
    bottom_legend.push_back({kP50Colour, "TTFT measured (p50 or stated)", true});
  }
  if (!d.unstable.empty()) bottom_legend.push_back({kP95Colour, "× unstable (no latency)"});
  Legend(top, top_legend, &svg, &obstacles);
  Legend(bottom, bottom_legend, &svg, &obstacles);
  EmitLabels(labels, obstacles, &svg);
  svg += "</svg>\n";
  return svg;
}

}  // namespace capplan::service

namespace capplan::service {
namespace {

// Each front point's label placed around its dot, apart from the others,
// the dots and the title (a label with no free place is left out: the table
// lists every candidate).
void FrontLabels(const Panel& p, const Points& xy, const std::vector<std::string>& texts,
                 const std::string& colour, std::vector<Box>* obstacles,
                 std::vector<Label>* labels) {
  for (size_t i = 0; i < xy.size() && i < texts.size(); ++i) {
    const double cx = p.X(xy[i].first), cy = p.Y(xy[i].second);
    obstacles->push_back({cx - 3.5, cy - 3.5, cx + 3.5, cy + 3.5});
    labels->push_back({PointLabel(p, xy[i].first, xy[i].second, texts[i]), colour});
  }
}

std::string CandidateLabel(const v1::SearchCandidate& c) {
  const v1::Deployment& d = c.deployment();
  return absl::StrFormat("%d×%s", c.gpus_per_replica(),
                         d.has_hardware() ? d.hardware().id() : d.hardware_id());
}

}  // namespace

std::string SearchFrontSvg(const v1::SearchConfigsResponse& response, const std::string& title) {
  Points cost, capacity;
  std::vector<std::string> cost_labels, capacity_labels;
  double cx = 0, cy = 0, gx = 0, gy = 0;
  for (const v1::SearchCandidate& c : response.cost_front()) {
    cost.emplace_back(c.cost_per_million_output_tokens(), c.user_output_tokens_per_second());
    cost_labels.push_back(CandidateLabel(c));
    cx = std::max(cx, c.cost_per_million_output_tokens());
    cy = std::max(cy, c.user_output_tokens_per_second());
  }
  for (const v1::SearchCandidate& c : response.capacity_front()) {
    capacity.emplace_back(c.gpus_per_replica(), c.capacity().output_tokens_per_month() / 1e6);
    capacity_labels.push_back(CandidateLabel(c));
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
  Polyline(top, cost, "#1f77b4", &svg);
  Polyline(bottom, capacity, "#2ca02c", &svg);
  std::vector<Box> obstacles = {TextBox(title, 15, {kWidth / 2, 24, Anchor::kMiddle})};
  std::vector<Label> labels;
  FrontLabels(top, cost, cost_labels, "#333", &obstacles, &labels);
  FrontLabels(bottom, capacity, capacity_labels, "#333", &obstacles, &labels);
  EmitLabels(labels, obstacles, &svg);
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
