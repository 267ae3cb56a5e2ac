#include "service/planner/priors.h"

#include <cmath>
#include <map>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/status_macros.h"
#include "model/load_fit.h"
#include "service/planner/prepared.h"

namespace capplan::service {
namespace {

// One baseline's plain rows with its class key.
struct Member {
  std::string baseline_id;
  HardwareClassKey key;
  model::CalibrationGroup group;
};

std::string LinkName(v1::LinkKind link) {
  switch (link) {
    case v1::LINK_KIND_NVLINK:
      return "nvlink";
    case v1::LINK_KIND_XGMI:
      return "xgmi";
    case v1::LINK_KIND_PCIE:
      return "pcie";
    case v1::LINK_KIND_NVLINK_C2C:
      return "c2c";
    default:
      return "single";
  }
}

std::string EngineName(v1::EngineKind engine) {
  switch (engine) {
    case v1::ENGINE_KIND_VLLM:
      return "vllm";
    case v1::ENGINE_KIND_SGLANG:
      return "sglang";
    case v1::ENGINE_KIND_TRTLLM:
      return "trtllm";
    default:
      return "engine";
  }
}

std::string Kebab(const std::string& s) {
  std::string out;
  for (char c : absl::AsciiStrToLower(s)) {
    if (absl::ascii_isalnum(c)) {
      out.push_back(c);
    } else if (!out.empty() && out.back() != '-') {
      out.push_back('-');
    }
  }
  while (!out.empty() && out.back() == '-') out.pop_back();
  return out;
}

// Relative errors of `c` on a group's observations (fitted ÷ observed − 1).
void AddErrors(const model::CalibrationGroup& g, const model::StepTimeCoefficients& c,
               std::vector<double>* errors) {
  for (size_t i = 0; i < g.points.size(); ++i) {
    absl::StatusOr<std::vector<model::Observation>> obs =
        model::PointObservations(g.context, g.points[i], static_cast<int>(i));
    if (!obs.ok()) continue;
    for (const model::Observation& o : *obs) {
      errors->push_back(model::StepSeconds(c, o.features) / o.observed_seconds - 1);
    }
  }
}

// The baselines a prior can learn from: a known card, plain rows.
std::vector<Member> Members(const Catalog& catalog, const std::set<std::string>& excluded) {
  std::vector<Member> out;
  for (const v1::Baseline& b : catalog.baselines()) {
    if (excluded.count(b.id()) || b.deployment().hardware_id().empty()) continue;
    const v1::Hardware* hw = catalog.FindHardware(b.deployment().hardware_id());
    if (hw == nullptr) continue;
    absl::StatusOr<BaselineFitSetup> setup =
        PrepareBaselineFit(catalog, b, false, 1, "a prior", nullptr);
    if (!setup.ok()) continue;
    Member m;
    m.baseline_id = b.id();
    const v1::Parallelism& p = setup->deployment.resolved.parallelism;
    m.key = ClassKeyOf(*hw, std::max<uint32_t>(1, p.tp()) * std::max<uint32_t>(1, p.pp()),
                       setup->deployment.resolved.engine.kind());
    m.group.name = b.id();
    m.group.context = setup->context;
    for (const SourcedPoint& sp : setup->points) {
      if (!sp.speculative) m.group.points.push_back(sp.point);
    }
    std::vector<double> errors;  // rows that yield no observation teach nothing
    AddErrors(m.group, model::StepTimeCoefficients::Roofline(), &errors);
    if (!errors.empty()) out.push_back(std::move(m));
  }
  return out;
}

absl::StatusOr<model::CalibrationResult> FitGroups(const std::vector<const Member*>& members,
                                                   const model::CoefficientPrior& prior) {
  std::vector<model::CalibrationGroup> groups;
  for (const Member* m : members) groups.push_back(m->group);
  return model::CalibratePooled(groups, prior);
}

// RMS relative error of the level on each member it was fitted without; 0
// for a single member.
double LeaveOneOutError(const std::vector<const Member*>& members,
                        const model::CoefficientPrior& prior) {
  if (members.size() < 2) return 0;
  std::vector<double> errors;
  for (size_t i = 0; i < members.size(); ++i) {
    std::vector<const Member*> rest;
    for (size_t j = 0; j < members.size(); ++j) {
      if (j != i) rest.push_back(members[j]);
    }
    absl::StatusOr<model::CalibrationResult> fit = FitGroups(rest, prior);
    if (fit.ok()) AddErrors(members[i]->group, fit->coefficients, &errors);
  }
  if (errors.empty()) return 0;
  double ss = 0;
  for (double e : errors) ss += e * e;
  return std::sqrt(ss / errors.size());
}

absl::StatusOr<v1::EfficiencyPrior> FitLevel(v1::PriorLevel level, const HardwareClassKey& key,
                                             const std::vector<const Member*>& members,
                                             const model::CoefficientPrior& prior) {
  CAPPLAN_ASSIGN_OR_RETURN(model::CalibrationResult fit, FitGroups(members, prior));
  v1::EfficiencyPrior p;
  p.set_id(PriorId(level, key));
  p.set_level(level);
  if (level != v1::PRIOR_LEVEL_GLOBAL) {
    p.set_vendor(key.vendor);
    p.set_architecture(key.architecture);
  }
  if (level == v1::PRIOR_LEVEL_LINK) {
    p.clear_vendor();
    p.clear_architecture();
    p.set_link(key.link);
  }
  if (level == v1::PRIOR_LEVEL_CLASS) {
    p.set_link(key.link);
    p.set_engine(key.engine);
  }
  const model::StepTimeCoefficients& c = fit.coefficients;
  p.set_alpha_seconds(c.alpha_seconds);
  p.set_beta_weights(c.beta_weights);
  p.set_beta_kv(c.beta_kv);
  p.set_beta_flops(c.beta_flops);
  p.set_beta_comm(c.beta_comm);
  p.set_request_latency_seconds(c.request_latency_seconds);
  for (int j = 0; j < model::kNumStepFeatures; ++j) {
    if (fit.identified[j]) p.add_identified(model::StepFeatureName(j));
  }
  p.set_observations(static_cast<uint32_t>(fit.observations.size()));
  for (const Member* m : members) p.add_baseline_ids(m->baseline_id);
  p.set_leave_one_out_relative_error(LeaveOneOutError(members, prior));
  p.set_fit_note(absl::StrFormat(
      "pooled robust fit of %d baselines' rows (%d observations), shrunk towards %s worth %g "
      "observations; written by capplan priors",
      members.size(), fit.observations.size(),
      level == v1::PRIOR_LEVEL_GLOBAL ? "the roofline" : "the level above", prior.weight));
  return p;
}

}  // namespace

HardwareClassKey ClassKeyOf(const v1::Hardware& hw, uint32_t gpus_per_group,
                            v1::EngineKind engine) {
  HardwareClassKey k;
  k.vendor = absl::AsciiStrToLower(hw.vendor());
  k.architecture = absl::AsciiStrToLower(hw.architecture());
  k.link = gpus_per_group > 1 ? hw.intra_node().kind() : v1::LINK_KIND_NONE;
  k.engine = engine;
  return k;
}

std::string PriorId(v1::PriorLevel level, const HardwareClassKey& key) {
  switch (level) {
    case v1::PRIOR_LEVEL_GLOBAL:
      return "global";
    case v1::PRIOR_LEVEL_ARCHITECTURE:
      return Kebab(absl::StrCat(key.vendor, "-", key.architecture));
    case v1::PRIOR_LEVEL_LINK:
      return absl::StrCat("link-", LinkName(key.link));
    default:
      return Kebab(absl::StrCat(key.vendor, "-", key.architecture, "-", LinkName(key.link), "-",
                                EngineName(key.engine)));
  }
}

model::StepTimeCoefficients CoefficientsOf(const v1::EfficiencyPrior& p) {
  return {p.alpha_seconds(), p.beta_weights(), p.beta_kv(),
          p.beta_flops(),    p.beta_comm(),    p.request_latency_seconds()};
}

model::CoefficientPrior AsCoefficientPrior(const v1::EfficiencyPrior& p, double weight) {
  model::CoefficientPrior prior;
  prior.coefficients = CoefficientsOf(p);
  prior.weight = weight;
  return prior;
}

namespace {

// Whether a CLASS prior of the key's vendor and architecture (any link) was
// learned on the key's engine: then the architecture's data holds its runs.
bool EngineRanOn(const std::vector<v1::EfficiencyPrior>& priors, const HardwareClassKey& key) {
  for (const v1::EfficiencyPrior& p : priors) {
    if (p.level() == v1::PRIOR_LEVEL_CLASS && p.engine() == key.engine &&
        absl::AsciiStrToLower(p.vendor()) == key.vendor &&
        absl::AsciiStrToLower(p.architecture()) == key.architecture) {
      return true;
    }
  }
  return false;
}

}  // namespace

std::optional<v1::EfficiencyPrior> ClosestPrior(
    const std::vector<v1::EfficiencyPrior>& priors, const HardwareClassKey& key,
    const std::function<bool(const v1::EfficiencyPrior&)>& usable) {
  auto ok = [&](const v1::EfficiencyPrior& p) { return usable == nullptr || usable(p); };
  const v1::EfficiencyPrior* architecture = nullptr;
  const v1::EfficiencyPrior* global = nullptr;
  const v1::EfficiencyPrior* link = nullptr;
  const std::string class_id = PriorId(v1::PRIOR_LEVEL_CLASS, key);
  const std::string arch_id = PriorId(v1::PRIOR_LEVEL_ARCHITECTURE, key);
  const std::string link_id = PriorId(v1::PRIOR_LEVEL_LINK, key);
  for (const v1::EfficiencyPrior& p : priors) {
    if (p.id() == class_id && ok(p)) return p;
    if (p.id() == arch_id && ok(p)) architecture = &p;
    if (p.id() == link_id) link = &p;
    if (p.level() == v1::PRIOR_LEVEL_GLOBAL) global = &p;
  }
  const v1::EfficiencyPrior* base = architecture != nullptr ? architecture : global;
  if (base == nullptr) return std::nullopt;
  v1::EfficiencyPrior out = *base;
  if (base == architecture && global != nullptr && !EngineRanOn(priors, key)) {
    out.set_alpha_seconds(global->alpha_seconds());
    out.set_request_latency_seconds(global->request_latency_seconds());
    out.set_id(absl::StrCat(out.id(), "+", global->id(), "-overheads"));
  }
  if (key.link == v1::LINK_KIND_NONE) return out;  // one GPU: no all-reduce
  out.set_beta_comm(link != nullptr ? link->beta_comm() : 1.0);
  out.set_id(absl::StrCat(base->id(), "+", link != nullptr ? link->id() : "roofline-link"));
  return out;
}

bool LearnedOnFamily(const Catalog& catalog, const v1::EfficiencyPrior& prior, bool moe) {
  bool known = false;
  for (const std::string& id : prior.baseline_ids()) {
    const v1::Baseline* b = catalog.FindBaseline(id);
    const v1::Model* m = b == nullptr ? nullptr : catalog.FindModel(b->deployment().model_id());
    if (m == nullptr) return true;  // a baseline the catalogue lacks may be of either family
    known = true;
    if ((m->moe().num_routed_experts() > 0) == moe) return true;
  }
  return !known;
}

absl::StatusOr<std::vector<v1::EfficiencyPrior>> FitPriors(const Catalog& catalog,
                                                           const std::set<std::string>& excluded) {
  const std::vector<Member> members = Members(catalog, excluded);
  std::vector<v1::EfficiencyPrior> out;
  if (members.empty()) return out;
  std::vector<const Member*> all;
  std::map<std::string, std::vector<const Member*>> by_arch, by_class, by_link;
  for (const Member& m : members) {
    all.push_back(&m);
    if (m.key.link != v1::LINK_KIND_NONE)
      by_link[PriorId(v1::PRIOR_LEVEL_LINK, m.key)].push_back(&m);
    by_arch[PriorId(v1::PRIOR_LEVEL_ARCHITECTURE, m.key)].push_back(&m);
    by_class[PriorId(v1::PRIOR_LEVEL_CLASS, m.key)].push_back(&m);
  }
  model::CoefficientPrior roofline;
  roofline.coefficients = model::StepTimeCoefficients::Roofline();
  roofline.weight = model::kRooflinePriorWeight;
  CAPPLAN_ASSIGN_OR_RETURN(v1::EfficiencyPrior global,
                           FitLevel(v1::PRIOR_LEVEL_GLOBAL, {}, all, roofline));
  out.push_back(global);
  for (const auto& [id, group] : by_link) {
    CAPPLAN_ASSIGN_OR_RETURN(v1::EfficiencyPrior p,
                             FitLevel(v1::PRIOR_LEVEL_LINK, group.front()->key, group,
                                      AsCoefficientPrior(global, kLevelPriorWeight)));
    out.push_back(std::move(p));
  }
  std::map<std::string, v1::EfficiencyPrior> arch_priors;
  for (const auto& [id, group] : by_arch) {
    CAPPLAN_ASSIGN_OR_RETURN(v1::EfficiencyPrior p,
                             FitLevel(v1::PRIOR_LEVEL_ARCHITECTURE, group.front()->key, group,
                                      AsCoefficientPrior(global, kLevelPriorWeight)));
    arch_priors[id] = p;
    out.push_back(std::move(p));
  }
  for (const auto& [id, group] : by_class) {
    const v1::EfficiencyPrior& parent =
        arch_priors.at(PriorId(v1::PRIOR_LEVEL_ARCHITECTURE, group.front()->key));
    CAPPLAN_ASSIGN_OR_RETURN(v1::EfficiencyPrior p,
                             FitLevel(v1::PRIOR_LEVEL_CLASS, group.front()->key, group,
                                      AsCoefficientPrior(parent, kLevelPriorWeight)));
    out.push_back(std::move(p));
  }
  return out;
}

}  // namespace capplan::service
