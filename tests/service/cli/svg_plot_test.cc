#include "service/cli/svg_plot.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/catalog/file_util.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::IsOk;
using ::capplan::testing::StatusIs;
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
