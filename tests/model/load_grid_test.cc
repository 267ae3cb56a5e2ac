#include "model/load_grid.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace capplan::model {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST(ConcurrencyGrid, EveryConcurrencyUpToTheTopBelow256) {
  EXPECT_THAT(ConcurrencyGrid(8), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
  // An included value already on the grid is not repeated.
  EXPECT_EQ(ConcurrencyGrid(16, 4).size(), 16u);
  EXPECT_THAT(ConcurrencyGrid(1), ElementsAre(1));
}

TEST(ConcurrencyGrid, StepsOfAQuarterPast256) {
  // 256 · 1.25^k: 320, 400, 500, 625, 781.25 → 781, 976.5625 → 976;
  // 1220.7 is past the top. 256 + 6 = 262 points; the top itself is not one.
  const std::vector<int> grid = ConcurrencyGrid(1000);
  ASSERT_EQ(grid.size(), 262u);
  EXPECT_EQ(grid[255], 256);
  EXPECT_THAT(std::vector<int>(grid.begin() + 256, grid.end()),
              ElementsAre(320, 400, 500, 625, 781, 976));
}

TEST(ConcurrencyGrid, IncludeIsAddedInOrderEvenPastTheTop) {
  std::vector<int> grid = ConcurrencyGrid(1000, 999);
  ASSERT_EQ(grid.size(), 263u);
  EXPECT_THAT(std::vector<int>(grid.end() - 3, grid.end()), ElementsAre(781, 976, 999));
  grid = ConcurrencyGrid(300, 1000);
  // 1..256, then 320 > 300 stops the steps; 1000 is added.
  ASSERT_EQ(grid.size(), 257u);
  EXPECT_EQ(grid.back(), 1000);
  EXPECT_EQ(grid[255], 256);
}

TEST(ConcurrencyGrid, EmptyBelowOne) {
  EXPECT_THAT(ConcurrencyGrid(0), IsEmpty());
  EXPECT_THAT(ConcurrencyGrid(0, 5), ElementsAre(5));
}

TEST(RateGrid, SixtyFourthsOfTheUnit) {
  // 2 · k / 64 for k = 1..4.
  EXPECT_THAT(RateGrid(2.0, 4), ElementsAre(0.03125, 0.0625, 0.09375, 0.125));
  // k = 64 is the unit itself, exactly (× 64 and ÷ 64 are exact).
  const std::vector<double> grid = RateGrid(0.3, 128);
  ASSERT_EQ(grid.size(), 128u);
  EXPECT_EQ(grid[63], 0.3);
  EXPECT_EQ(grid[127], 0.6);
  EXPECT_THAT(RateGrid(1.0, 0), IsEmpty());
  EXPECT_THAT(RateGrid(1.0, -3), IsEmpty());
}

}  // namespace
}  // namespace capplan::model
