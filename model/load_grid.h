// The load grids Plan and Validate search a curve on.
#ifndef CAPPLAN_MODEL_LOAD_GRID_H_
#define CAPPLAN_MODEL_LOAD_GRID_H_

#include <optional>
#include <vector>

namespace capplan::model {

// Concurrencies 1..min(top, 256), then steps of ×1.25 up to top, plus
// `include`; increasing, without repeats.
std::vector<int> ConcurrencyGrid(int top, std::optional<int> include = std::nullopt);

// Arrival rates unit·k/64 for k = 1..sixty_fourths.
std::vector<double> RateGrid(double unit_rps, int sixty_fourths);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_LOAD_GRID_H_
