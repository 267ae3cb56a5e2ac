#include "service/cli/svg_plot.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/catalog/file_util.h"
#include "service/cli/svg_plot_labels.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/svg_check.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::HavePython;
using ::capplan::testing::HaveRsvgConvert;
using ::capplan::testing::IsOk;
using ::capplan::testing::kMissingPython;
using ::capplan::testing::kMissingRsvg;
using ::capplan::testing::ParseSvg;
using ::capplan::testing::Rendering;
using ::capplan::testing::RenderSvg;
using ::capplan::testing::StatusIs;
using ::capplan::testing::SvgElement;
using ::testing::HasSubstr;
using ::testing::Not;

// A hand-made curve (not model output): flat TTFT, then a jump, then one
// unstable point.
v1::LoadCurve Curve(bool closed) {
  v1::LoadCurve c;
  const double loads[] = {1, 2, 4, 8, 16};
  const double ttft[] = {0.2, 0.21, 0.22, 3.0, -1};
  for (int i = 0; i < 5; ++i) {
    v1::LoadCurvePoint* p = c.add_points();
    if (closed)
      p->set_concurrency(static_cast<uint32_t>(loads[i]));
    else
      p->set_arrival_rate_rps(loads[i] / 4);
    p->set_output_tokens_per_second(30 * loads[i]);
    p->set_stable(ttft[i] > 0);
    if (ttft[i] > 0) {
      p->set_ttft_p50_seconds(ttft[i]);
      p->set_ttft_p95_seconds(1.5 * ttft[i]);
    }
  }
  if (closed) {
    c.mutable_knee()->set_concurrency(6);
  } else {
    c.mutable_knee()->set_arrival_rate_rps(1.5);
  }
  c.mutable_safe_operating_point()->set_found(true);
  if (closed)
    c.mutable_safe_operating_point()->set_concurrency(4);
  else
    c.mutable_safe_operating_point()->set_arrival_rate_rps(1);
  return c;
}

TEST(LoadCurveSvg, HasAxesWithUnitsKneeSloAndLegend) {
  std::string svg = LoadCurveSvg(Curve(true), 0.5, "test <model>");
  EXPECT_THAT(svg, HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, HasSubstr("concurrency (users)"));
  EXPECT_THAT(svg, HasSubstr("output throughput (tok/s)"));
  EXPECT_THAT(svg, HasSubstr("TTFT (s)"));
  EXPECT_THAT(svg, HasSubstr("TTFT p50"));
  EXPECT_THAT(svg, HasSubstr("TTFT p95"));
  EXPECT_THAT(svg, HasSubstr("knee 6"));
  EXPECT_THAT(svg, HasSubstr("TTFT p95 SLO 0.5 s"));
  EXPECT_THAT(svg, HasSubstr("unstable"));
  EXPECT_THAT(svg, HasSubstr("test &lt;model&gt;"));
  EXPECT_THAT(svg, HasSubstr("</svg>"));
  // Four stable TTFT points per percentile line, five throughput points.
  size_t circles = 0;
  for (size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1)) {
    ++circles;
  }
  EXPECT_EQ(circles, 5u + 4u + 4u);
}

TEST(LoadCurveSvg, OpenLoopAxisIsArrivalRateWithoutSloLine) {
  std::string svg = LoadCurveSvg(Curve(false), std::nullopt, "t");
  EXPECT_THAT(svg, HasSubstr("arrival rate (req/s)"));
  EXPECT_THAT(svg, Not(HasSubstr("SLO")));
}

// Measured rows beside the curve: one per load, with the source's labels
// on some and a TTFT p95 on one.
std::vector<MeasuredPoint> Measured() {
  std::vector<MeasuredPoint> out;
  const double loads[] = {1, 2, 4, 8, 16};
  const char* labels[] = {"interactive", "interactive", "sweet spot", "production", "queueing"};
  for (int i = 0; i < 5; ++i) {
    MeasuredPoint m;
    m.source = "test-baseline/sweep";
    m.label = labels[i];
    m.load = loads[i];
    m.output_tokens_per_second = 28 * loads[i];
    m.ttft_seconds = i < 4 ? 0.21 + 0.01 * i : 2.8;
    m.ttft_statistic = "p50";
    if (i == 3) m.ttft_p95_seconds = 0.4;
    out.push_back(m);
  }
  return out;
}

std::vector<SvgElement> Elements(const std::string& svg) {
  std::string error;
  std::vector<SvgElement> elements = ParseSvg(svg, &error);
  EXPECT_FALSE(elements.empty()) << "Python's XML parser rejects the SVG: " << error;
  return elements;
}

std::vector<const SvgElement*> WithClass(const std::vector<SvgElement>& elements,
                                         const std::string& tag, const std::string& cls) {
  std::vector<const SvgElement*> out;
  for (const SvgElement& e : elements) {
    if (e.tag == tag && e.Attribute("class") == cls) out.push_back(&e);
  }
  return out;
}

Anchor AnchorOf(const SvgElement& e) {
  const std::string a = e.Attribute("text-anchor");
  return a == "end" ? Anchor::kEnd : a == "middle" ? Anchor::kMiddle : Anchor::kStart;
}

// The box of a <text> as the plot estimates it (TextBox holds the rendered
// ink: TextBoxHoldsTheInkRsvgConvertDraws checks that against the renderer).
Box BoxOf(const SvgElement& e) {
  return TextBox(e.text, e.Number("font-size"), {e.Number("x"), e.Number("y"), AnchorOf(e)});
}

TEST(LoadCurveSvg, ParsesAsXmlWithTwoPanelsCurvesAndMeasuredPoints) {
  ASSERT_TRUE(HavePython()) << kMissingPython;
  const std::vector<SvgElement> e = Elements(LoadCurveSvg(Curve(true), 0.5, "t", Measured()));
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e[0].tag, "svg");
  EXPECT_EQ(e[0].Attribute("width"), "760");
  EXPECT_EQ(e[0].Attribute("viewBox"), "0 0 760 700");
  EXPECT_EQ(WithClass(e, "polyline", "predicted").size(), 3u);  // throughput, p50, p95
  // Five output points, five TTFT points and one TTFT p95: eleven squares,
  // each with a tooltip naming where it was measured.
  std::vector<const SvgElement*> squares = WithClass(e, "rect", "measured");
  EXPECT_EQ(squares.size(), 11u);
  int titles = 0;
  for (const SvgElement& x : e) {
    titles += x.tag == "title" && x.text.find("test-baseline/sweep") != std::string::npos;
  }
  EXPECT_EQ(titles, 11);
  std::vector<std::string> labels;
  for (const SvgElement* l : WithClass(e, "text", "label")) labels.push_back(l->text);
  EXPECT_THAT(labels, ::testing::Contains("knee 6"));
  EXPECT_THAT(labels, ::testing::Contains("safe 4"));
  EXPECT_THAT(labels, ::testing::Contains("TTFT p95 SLO 0.5 s"));
  EXPECT_THAT(labels, ::testing::Contains("production: 224 tok/s"));
  std::vector<std::string> legend;
  for (const SvgElement* l : WithClass(e, "text", "legend")) legend.push_back(l->text);
  EXPECT_THAT(legend, ::testing::Contains("measured output"));
}

TEST(LoadCurveSvg, MeasuredPointsOfTheOtherLoopKindAreNotDrawn) {
  ASSERT_TRUE(HavePython()) << kMissingPython;
  std::vector<MeasuredPoint> measured = Measured();
  for (MeasuredPoint& m : measured) m.closed_loop = false;
  const std::vector<SvgElement> e = Elements(LoadCurveSvg(Curve(true), 0.5, "t", measured));
  EXPECT_TRUE(WithClass(e, "rect", "measured").empty());
}

// The case: "safe 8" drawn on "knee 8.366"; and crowded measured
// labels. No two label or legend boxes meet, and each stays in the plot.
TEST(LoadCurveSvg, LabelsNeverOverlap) {
  ASSERT_TRUE(HavePython()) << kMissingPython;
  v1::LoadCurve curve = Curve(true);
  curve.mutable_knee()->set_concurrency(8.366);
  curve.mutable_safe_operating_point()->set_concurrency(8);
  std::vector<MeasuredPoint> measured = Measured();
  for (int i = 0; i < 12; ++i) {  // a dense cluster near the knee
    MeasuredPoint m = measured[3];
    m.load = 7.5 + 0.1 * i;
    m.label = "crowded";
    measured.push_back(m);
  }
  const std::vector<SvgElement> e = Elements(LoadCurveSvg(curve, 0.3, "t", measured));
  std::vector<std::pair<std::string, Box>> boxes;
  for (const char* cls : {"label", "legend"}) {
    for (const SvgElement* t : WithClass(e, "text", cls)) boxes.emplace_back(t->text, BoxOf(*t));
  }
  std::vector<std::string> texts;
  for (const auto& [text, box] : boxes) texts.push_back(text);
  EXPECT_THAT(texts, ::testing::Contains("knee 8.366"));
  EXPECT_THAT(texts, ::testing::Contains("safe 8"));
  for (size_t i = 0; i < boxes.size(); ++i) {
    EXPECT_GE(boxes[i].second.left, 0) << boxes[i].first;
    EXPECT_LE(boxes[i].second.right, 760) << boxes[i].first;
    for (size_t j = i + 1; j < boxes.size(); ++j) {
      EXPECT_FALSE(boxes[i].second.Intersects(boxes[j].second))
          << "'" << boxes[i].first << "' overlaps '" << boxes[j].first << "'";
    }
  }
}

TEST(LoadCurveSvg, RsvgConvertRendersItAtItsSize) {
  ASSERT_TRUE(HaveRsvgConvert()) << kMissingRsvg;
  for (bool closed : {true, false}) {
    const Rendering r = RenderSvg(LoadCurveSvg(Curve(closed), 0.5, "test <model> × 4", Measured()));
    ASSERT_TRUE(r.ok) << r.error;
    EXPECT_EQ(r.width, 760);
    EXPECT_EQ(r.height, 700);
  }
}

TEST(LoadCurveSvg, RsvgConvertRejectsABrokenDocument) {
  ASSERT_TRUE(HaveRsvgConvert()) << kMissingRsvg;
  EXPECT_FALSE(RenderSvg("<svg xmlns=\"http://www.w3.org/2000/svg\"><text>a & b</svg>").ok);
}

// The estimate label placement relies on: what rsvg-convert draws of a
// label lies inside TextBox (Latin, digits, signs and CJK).
TEST(LoadCurveSvg, TextBoxHoldsTheInkRsvgConvertDraws) {
  ASSERT_TRUE(HaveRsvgConvert()) << kMissingRsvg;
  ASSERT_TRUE(HavePython()) << kMissingPython;
  for (const std::string text :
       {"knee 8.366", "safe 8", "TTFT p95 SLO 0.5 s", "WWWWMMMM mmww", "production: 224 tok/s",
        "0123456789 %+×", "ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz",
        "queueing (\xE6\x8E\x92\xE9\x98\x9F): 7.183 s"}) {
    const LabelPosition at{12, 24, Anchor::kStart};
    const Box box = TextBox(text, 11, at);
    const std::string svg = absl::StrCat(
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"320\" height=\"36\" "
        "font-family=\"sans-serif\"><rect width=\"100%\" height=\"100%\" fill=\"white\"/>"
        "<text x=\"12\" y=\"24\" font-size=\"11\">",
        absl::StrReplaceAll(text, {{"&", "&amp;"}, {"<", "&lt;"}}), "</text></svg>");
    const Rendering r = RenderSvg(svg, /*measure_ink=*/true);
    ASSERT_TRUE(r.ok) << r.error;
    ASSERT_GE(r.ink_right, 0) << "nothing drawn for '" << text << "'";
    EXPECT_GE(r.ink_left, std::floor(box.left) - 1) << text;
    EXPECT_LE(r.ink_right, std::ceil(box.right)) << text;
    EXPECT_GE(r.ink_top, std::floor(box.top) - 1) << text;
    EXPECT_LE(r.ink_bottom, std::ceil(box.bottom)) << text;
  }
}

// Crowded fronts: twelve cost-front points close together and six capacity
// points. Every label stays apart from the others and from the dots; the
// document parses and rsvg-convert renders it at its size.
v1::SearchConfigsResponse CrowdedFronts() {
  v1::SearchConfigsResponse r;
  for (int i = 0; i < 12; ++i) {
    v1::SearchCandidate* c = r.add_cost_front();
    c->set_cost_per_million_output_tokens(1.0 + 0.02 * i);
    c->set_user_output_tokens_per_second(40 + 0.5 * i);
    c->set_gpus_per_replica(1 + i % 4);
    c->mutable_deployment()->set_hardware_id(i % 2 ? "nvidia-h100-sxm-80gb" : "nvidia-l40s-48gb");
  }
  for (int i = 0; i < 6; ++i) {
    v1::SearchCandidate* c = r.add_capacity_front();
    c->set_gpus_per_replica(1 << (i % 4));
    c->mutable_capacity()->set_output_tokens_per_month(1e9 * (1 + i));
    c->mutable_deployment()->set_hardware_id("nvidia-h100-sxm-80gb");
  }
  return r;
}

TEST(SearchFrontSvg, LabelsNeverOverlapAndItRenders) {
  ASSERT_TRUE(HavePython()) << kMissingPython;
  const std::string svg = SearchFrontSvg(CrowdedFronts(), "search <fronts>");
  const std::vector<SvgElement> e = Elements(svg);
  ASSERT_FALSE(e.empty());
  EXPECT_EQ(e[0].tag, "svg");
  EXPECT_EQ(WithClass(e, "polyline", "predicted").size(), 2u);  // the two fronts
  std::vector<Box> boxes;
  std::vector<std::string> texts;
  for (const SvgElement* t : WithClass(e, "text", "label")) {
    boxes.push_back(BoxOf(*t));
    texts.push_back(t->text);
  }
  ASSERT_GE(boxes.size(), 6u);  // most of the 18 points keep a label
  std::vector<Box> dots;
  for (const SvgElement& x : e) {
    if (x.tag != "circle") continue;
    const double cx = x.Number("cx"), cy = x.Number("cy");
    dots.push_back({cx - 2.5, cy - 2.5, cx + 2.5, cy + 2.5});
  }
  EXPECT_EQ(dots.size(), 18u);
  for (size_t i = 0; i < boxes.size(); ++i) {
    EXPECT_GE(boxes[i].left, 0) << texts[i];
    EXPECT_LE(boxes[i].right, 760) << texts[i];
    for (size_t j = i + 1; j < boxes.size(); ++j) {
      EXPECT_FALSE(boxes[i].Intersects(boxes[j])) << texts[i] << " / " << texts[j];
    }
    for (const Box& d : dots) EXPECT_FALSE(boxes[i].Intersects(d)) << texts[i];
  }
  ASSERT_TRUE(HaveRsvgConvert()) << kMissingRsvg;
  const Rendering r = RenderSvg(svg);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.width, 760);
}

TEST(WriteFileAtomically, WritesWholeFileAndLeavesNothingOnFailure) {
  capplan::testing::TempDir dir;
  std::string path = (dir.path() / "plot.svg").string();
  ASSERT_THAT(WriteFileAtomically(path, "hello"), IsOk());
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "hello");
  // Only the target remains (no temporary file).
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 1);
  // A directory that does not exist: an error, and no file.
  std::string bad = (dir.path() / "missing" / "plot.svg").string();
  EXPECT_THAT(WriteFileAtomically(bad, "x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cannot write " + bad + ": cannot create a file in " +
                                 (dir.path() / "missing").string())));
  EXPECT_FALSE(std::filesystem::exists(bad));
  // Renaming onto a directory fails and removes the temporary file.
  std::filesystem::create_directories(dir.path() / "adir");
  std::filesystem::create_directories(dir.path() / "adir" / "inner");
  const std::string adir = (dir.path() / "adir").string();
  EXPECT_THAT(WriteFileAtomically(adir, "x"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("cannot write " + adir + ": it is not a regular file")));
  files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) {
    (void)e;
    ++files;
  }
  EXPECT_EQ(files, 2);  // plot.svg and adir
}

}  // namespace
}  // namespace capplan::service
