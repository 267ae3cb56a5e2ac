#include "service/cli/svg_plot_labels.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace capplan::service {
namespace {

const Box kArea{0, 0, 400, 200};

LabelRequest At(const std::string& text, std::vector<LabelPosition> candidates) {
  return {text, 11, std::move(candidates), kArea};
}

TEST(TextBox, WidthGrowsWithTheTextAndFollowsTheAnchor) {
  const Box start = TextBox("knee 8", 11, {100, 50, Anchor::kStart});
  const Box end = TextBox("knee 8", 11, {100, 50, Anchor::kEnd});
  const Box middle = TextBox("knee 8", 11, {100, 50, Anchor::kMiddle});
  EXPECT_DOUBLE_EQ(start.left, 100);
  EXPECT_DOUBLE_EQ(end.right, 100);
  EXPECT_DOUBLE_EQ(middle.left + middle.right, 200);
  EXPECT_DOUBLE_EQ(TextBox("88888", 11, {0, 0, Anchor::kStart}).right, 5 * kGlyphWidthEm * 11);
  EXPECT_LT(TextBox("iiiii", 11, {0, 0, Anchor::kStart}).right,
            TextBox("mmmmm", 11, {0, 0, Anchor::kStart}).right);
  EXPECT_LT(start.top, 50);  // ascent above the baseline
  EXPECT_GT(start.bottom, 50);
  // A CJK glyph takes a full em; a UTF-8 sequence counts once.
  EXPECT_DOUBLE_EQ(TextBox("\xE6\x8E\x92", 10, {0, 0, Anchor::kStart}).right, 10);
  EXPECT_DOUBLE_EQ(TextBox("\xC3\x97", 10, {0, 0, Anchor::kStart}).right, 8.5);  // ×
}

TEST(PlaceLabels, ASecondLabelMovesToItsNextFreeCandidate) {
  const std::vector<LabelPosition> same = {{100, 20, Anchor::kStart}, {100, 34, Anchor::kStart}};
  std::vector<PlacedLabel> placed = PlaceLabels({At("knee 8.366", same), At("safe 8", same)}, {});
  ASSERT_EQ(placed.size(), 2u);
  ASSERT_TRUE(placed[0].placed && placed[1].placed);
  EXPECT_DOUBLE_EQ(placed[0].position.y, 20);
  EXPECT_DOUBLE_EQ(placed[1].position.y, 34);
  EXPECT_FALSE(placed[0].box.Intersects(placed[1].box));
}

TEST(PlaceLabels, ObstaclesAndTheAreaAreRespected) {
  // The first candidate sits on the legend, the second leaves the area.
  const Box legend{90, 0, 300, 30};
  std::vector<PlacedLabel> placed = PlaceLabels(
      {At("label",
          {{100, 20, Anchor::kStart}, {390, 60, Anchor::kStart}, {100, 60, Anchor::kStart}})},
      {legend});
  ASSERT_TRUE(placed[0].placed);
  EXPECT_DOUBLE_EQ(placed[0].position.x, 100);
  EXPECT_DOUBLE_EQ(placed[0].position.y, 60);
  EXPECT_TRUE(placed[0].box.Inside(kArea));
}

TEST(PlaceLabels, ALabelWithNoFreeCandidateIsLeftOut) {
  const std::vector<LabelPosition> one = {{100, 20, Anchor::kStart}};
  std::vector<PlacedLabel> placed = PlaceLabels({At("first", one), At("second", one)}, {});
  EXPECT_TRUE(placed[0].placed);
  EXPECT_FALSE(placed[1].placed);
}

TEST(Box, TouchingEdgesDoNotIntersect) {
  EXPECT_FALSE((Box{0, 0, 10, 10}).Intersects(Box{10, 0, 20, 10}));
  EXPECT_TRUE((Box{0, 0, 10, 10}).Intersects(Box{9, 9, 20, 20}));
}

}  // namespace
}  // namespace capplan::service
