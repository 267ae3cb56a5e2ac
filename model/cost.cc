#include "model/cost.h"

#include <algorithm>
#include <cmath>

#include "base/status_macros.h"

namespace capplan::model {
namespace {

// Poisson sums span mean ± 12·sqrt(mean) + 20 (queueing.cc).
double PoissonSpan(double mean) { return 12.0 * std::sqrt(std::max(0.0, mean)) + 20.0; }

struct ServerShape {
  int slots = 1;
  int nodes = 1;
  double co_arrival_q = 0;  // chance another user completes at the same boundary
  double saturation_rps = 0;
};

ServerShape ShapeOf(const LoadCurveRequest& r, const Slots& slots) {
  ServerShape s;
  s.slots = slots.slots;
  s.nodes = (r.workload.input_tokens_cv > 0 || r.workload.output_tokens_cv > 0) ? kLengthNodes : 1;
  const RequestPhaseFeatures f = ComputeRequestPhaseFeatures(
      r.model.inputs, r.model.scheduler, r.model.speculative, r.workload, slots.slots);
  const RequestPhaseTimes t = ToPhaseTimes(f, r.model.coefficients, r.workload.output_tokens);
  if (t.life_seconds > 0 && std::isfinite(t.life_seconds)) {
    s.co_arrival_q =
        r.workload.synchronized ? 1.0 : std::clamp(t.mean_step_seconds / t.life_seconds, 0.0, 1.0);
    s.saturation_rps = slots.slots / t.life_seconds;
  } else {
    s.co_arrival_q = 1.0;  // unknown: assume the worst
  }
  return s;
}

double ClosedPointUnits(const ServerShape& s, int n, double z) {
  const double marginals = z > 0 ? 2.0 * (n + 1) * kMarginalWorkUnitsPerUser : 2.0 * (n + 1);
  const int in_service = std::min(n, s.slots);
  double atom_units = 0;
  // Without think time the atoms and the wait branches are split by the
  // co-arrivals' positions.
  double positions = 1;
  if (z > 0) {
    atom_units = std::min(in_service, kAtomBins) * s.nodes * 2.0 * kAtomWorkUnits;
  } else {
    // Every user is in the system: one population, split by co-arrivals.
    if (n > 1) {
      const int others = std::min(n - 1, s.slots);
      const double mean = others * s.co_arrival_q;
      positions += std::min<double>(others, std::ceil(mean + PoissonSpan(mean)));
    }
    atom_units = s.nodes * 2.0 * positions * kCoArrivalAtomWorkUnits;
  }
  double erlangs = 0;
  if (n > s.slots) {
    erlangs = z > 0 ? std::min<double>(n - s.slots,
                                       2 * PoissonSpan(std::min<double>(z * s.saturation_rps, n)))
                    : std::min<double>(positions, kCoArrivalWaitBins);
  }
  const double wait_units = s.nodes * erlangs * kErlangWorkUnits;
  return marginals + kCdfEvaluationsPerPoint * (atom_units + wait_units);
}

double OpenPointUnits(const ServerShape& s) {
  const double stationary = s.slots * kStationaryWorkUnitsPerSlot;
  const double atom_units = std::min(s.slots, kAtomBins) * s.nodes * 2.0 * kAtomWorkUnits;
  const double wait_units = s.nodes * kGeometricWaitWorkUnits;
  return stationary + kCdfEvaluationsPerPoint * (atom_units + wait_units);
}

}  // namespace

absl::StatusOr<LoadCurveWork> EstimateLoadCurveWork(const LoadCurveRequest& r) {
  CAPPLAN_ASSIGN_OR_RETURN(const Slots slots, ComputeSlots(r.limits, r.workload));
  LoadCurveWork work;
  work.slots = slots;
  const ServerShape shape = ShapeOf(r, slots);
  work.server_units = static_cast<double>(slots.slots) * kServerWorkUnitsPerSlot;
  for (int n : r.concurrencies) {
    work.points_units += ClosedPointUnits(shape, std::max(1, n), r.think_time_seconds);
  }
  work.points_units += r.arrival_rates_rps.size() * OpenPointUnits(shape);
  work.total_units = work.server_units + work.points_units;
  return work;
}

}  // namespace capplan::model
