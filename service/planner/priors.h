#ifndef CAPPLAN_SERVICE_PLANNER_PRIORS_H_
#define CAPPLAN_SERVICE_PLANNER_PRIORS_H_

// The efficiency priors learned from the corpus (DESIGN §4): a hierarchy of
// pooled fits over the catalogue's baselines with a known card —
//   GLOBAL        every baseline, towards the roofline (kRooflinePriorWeight)
//   ARCHITECTURE  vendor + architecture, towards GLOBAL (kLevelPriorWeight)
//   CLASS         + interconnect + engine, towards ARCHITECTURE
// and a configuration's own rows towards its CLASS (kOwnRowsPriorWeight).
// Speculative rows are left out (their acceptance rate is the
// configuration's own). `capplan priors` writes the result into data/priors/;
// a test refits the bundled catalogue and checks the files equal the fit.

#include <functional>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "capplan/v1/catalog.pb.h"
#include "model/calibration.h"
#include "service/catalog/catalog.h"

namespace capplan::service {

// How many observations' worth each level's prior counts for. Chosen, not
// fitted: a level with a handful of rows moves most of the way to them.
inline constexpr double kLevelPriorWeight = 4;
// A configuration's own rows against its class prior: chosen by
// cross-validation, the value of {0.1, 0.3, 0.5, 0.7, 1, 2, 4} with the
// smallest sum of the alternate-rows median errors of output tok/s and TTFT
// p50 over the corpus (capplan accuracy --mode alternate: 0.5 gives 12.3% and
// 29.0%; 2, the earlier choice, 20.2% and 25.4%).
inline constexpr double kOwnRowsPriorWeight = 0.5;

// Fits every level on the catalogue's baselines except `excluded` (the
// leave-one-baseline-out accuracy refits without the baseline it predicts).
absl::StatusOr<std::vector<v1::EfficiencyPrior>> FitPriors(
    const Catalog& catalog, const std::set<std::string>& excluded = {});

// The class key of a deployment: the card's vendor and architecture, the
// link a TP/PP group spans (LINK_KIND_NONE for one GPU) and the engine.
struct HardwareClassKey {
  std::string vendor;        // lowercase
  std::string architecture;  // lowercase
  v1::LinkKind link = v1::LINK_KIND_NONE;
  v1::EngineKind engine = v1::ENGINE_KIND_UNSPECIFIED;
};
HardwareClassKey ClassKeyOf(const v1::Hardware& hardware, uint32_t gpus_per_group,
                            v1::EngineKind engine);
std::string PriorId(v1::PriorLevel level, const HardwareClassKey& key);

// The prior for a key: its CLASS, else its ARCHITECTURE, else GLOBAL; when
// that prior was not learned on the key's link (an ARCHITECTURE or GLOBAL
// prior for a multi-GPU deployment), β_comm is the LINK prior's, or 1 (the
// link at its specification) when no baseline used that link. The fixed
// costs per step (α) and per request are the engine's software, not the
// card's: an ARCHITECTURE prior none of whose classes ran the key's engine
// lends only its efficiencies (β), and α and the request latency are the
// GLOBAL prior's. The id names what was combined ("global+link-nvlink",
// "amd-cdna-3+global-overheads"). Absent when `priors` is empty.
// `usable` passes over a CLASS or ARCHITECTURE prior it refuses (see
// LearnedOnFamily) for the level above (the architecture's, else the global
// prior).
std::optional<v1::EfficiencyPrior> ClosestPrior(
    const std::vector<v1::EfficiencyPrior>& priors, const HardwareClassKey& key,
    const std::function<bool(const v1::EfficiencyPrior&)>& usable = nullptr);

// Whether a prior learned per-token efficiencies on a model of the
// deployment's family: a mixture of experts spends its extra time per token
// in expert routing and grouped GEMMs (and, under EP, in all-to-all) that a
// dense model does not have, and a dense model the other way round, so a
// CLASS or ARCHITECTURE prior all of whose baselines ran the other family is
// passed over for the level above; the GLOBAL prior pools every baseline.
// (The LINK level's β_comm is still lent across families: with β_comm = 1
// for dense models the catalogue's dense multi-GPU runs at saturation were
// over-predicted 1.6-9x; one β for small decode and large prefill messages is
// the limit there.) True when the prior names no baseline, or one that
// `catalog` lacks (it may be of either family).
bool LearnedOnFamily(const Catalog& catalog, const v1::EfficiencyPrior& prior, bool moe);

model::StepTimeCoefficients CoefficientsOf(const v1::EfficiencyPrior& prior);

// A prior's coefficients as the prior of a fit, worth `weight` observations.
model::CoefficientPrior AsCoefficientPrior(const v1::EfficiencyPrior& prior, double weight);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_PRIORS_H_
