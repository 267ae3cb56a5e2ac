#include "model/load_grid.h"

#include <algorithm>

namespace capplan::model {

std::vector<int> ConcurrencyGrid(int top, std::optional<int> include) {
  std::vector<int> grid;
  for (int c = 1; c <= std::min(top, 256); ++c) grid.push_back(c);
  for (double c = 256; c <= top; c *= 1.25) grid.push_back(static_cast<int>(c));
  if (include.has_value()) grid.push_back(*include);
  std::sort(grid.begin(), grid.end());
  grid.erase(std::unique(grid.begin(), grid.end()), grid.end());
  return grid;
}

std::vector<double> RateGrid(double unit_rps, int sixty_fourths) {
  std::vector<double> rates;
  rates.reserve(std::max(0, sixty_fourths));
  for (int k = 1; k <= sixty_fourths; ++k) rates.push_back(unit_rps * k / 64.0);
  return rates;
}

}  // namespace capplan::model
