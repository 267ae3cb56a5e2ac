#include "model/load_grid.h"

#include <algorithm>
#include <set>

namespace capplan::model {

std::vector<int> ConcurrencyGrid(int top, std::optional<int> include) {
  std::set<int> grid;
  for (int c = 1; c <= std::min(top, 256); ++c) grid.insert(c);
  for (double c = 256; c <= top; c *= 1.25) grid.insert(static_cast<int>(c));
  if (include.has_value()) grid.insert(*include);
  return std::vector<int>(grid.begin(), grid.end());
}

std::vector<double> RateGrid(double unit_rps, int sixty_fourths) {
  std::vector<double> rates;
  rates.reserve(std::max(0, sixty_fourths));
  for (int k = 1; k <= sixty_fourths; ++k) rates.push_back(unit_rps * k / 64.0);
  return rates;
}

}  // namespace capplan::model
