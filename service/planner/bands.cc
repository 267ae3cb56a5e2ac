#include "service/planner/bands.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "service/planner/held_out.h"

namespace capplan::service {
namespace {

constexpr absl::string_view kAnyTier = "ANY";

// The level-quantile of xs (nearest rank, xs non-empty).
double Quantile(std::vector<double> xs, double level) {
  std::sort(xs.begin(), xs.end());
  const size_t rank = static_cast<size_t>(std::ceil(level * static_cast<double>(xs.size())));
  return xs[std::min(xs.size() - 1, rank == 0 ? 0 : rank - 1)];
}

// The metric's entry: its tier's before the pooled one ("ANY"), and among
// those one set for the figure's kind (fitted on rows or a prior's) before
// one set for both.
const v1::ErrorBandScale* EntryFor(absl::Span<const v1::ErrorBandScale> scales, v1::Tier tier,
                                   absl::string_view metric, bool fitted_on_rows) {
  const std::string key = TierKey(tier);
  const v1::ErrorBandScale* best = nullptr;
  int best_rank = 0;
  for (const v1::ErrorBandScale& s : scales) {
    if (s.metric() != metric) continue;
    if (s.has_fitted_on_rows() && s.fitted_on_rows() != fitted_on_rows) continue;
    const int rank = (s.tier() == key        ? 4
                      : s.tier() == kAnyTier ? 2
                                             : 0) +
                     (s.has_fitted_on_rows() ? 1 : 0);
    if (rank >= 2 && rank > best_rank) {
      best = &s;
      best_rank = rank;
    }
  }
  return best;
}

double Widened(double raw, bool fitted_on_rows, double run_to_run) {
  return fitted_on_rows ? std::hypot(raw, run_to_run) : raw;
}

v1::ErrorBandScale ScaleOf(const std::string& tier, const std::string& metric,
                           const std::vector<double>& ratios, double level) {
  v1::ErrorBandScale s;
  s.set_tier(tier);
  s.set_metric(metric);
  s.set_predictions(static_cast<uint32_t>(ratios.size()));
  s.set_scale(std::max(1.0, Quantile(ratios, level)));
  const long inside = std::count_if(ratios.begin(), ratios.end(), [](double r) { return r <= 1; });
  s.set_raw_coverage(static_cast<double>(inside) / static_cast<double>(ratios.size()));
  return s;
}

}  // namespace

absl::string_view ProvenanceMetricOf(absl::string_view accuracy_metric) {
  if (absl::StartsWith(accuracy_metric, "ttft")) return "ttft";
  if (accuracy_metric == "tpot") return "tpot";
  if (absl::StartsWith(accuracy_metric, "e2e")) return "e2e";
  return "throughput";
}

std::string TierKey(v1::Tier tier) {
  return std::string(absl::StripPrefix(v1::Tier_Name(tier), "TIER_"));
}

std::vector<v1::ErrorBandScale> CatalogBandScales(const Catalog& catalog) {
  for (const v1::EfficiencyPrior& p : catalog.priors()) {
    if (p.level() == v1::PRIOR_LEVEL_GLOBAL) {
      return {p.band_scales().begin(), p.band_scales().end()};
    }
  }
  return {};
}

double BandScaleFor(absl::Span<const v1::ErrorBandScale> scales, v1::Tier tier,
                    absl::string_view metric, bool fitted_on_rows) {
  const v1::ErrorBandScale* s = EntryFor(scales, tier, metric, fitted_on_rows);
  return s != nullptr ? s->scale() : 1.0;
}

double ScaledBand(absl::Span<const v1::ErrorBandScale> scales, v1::Tier tier,
                  absl::string_view metric, double raw, bool fitted_on_rows) {
  const v1::ErrorBandScale* s = EntryFor(scales, tier, metric, fitted_on_rows);
  if (s == nullptr) return raw;
  return Widened(raw, fitted_on_rows, s->run_to_run_fraction()) * s->scale();
}

std::vector<v1::ErrorBandScale> BandScalesFrom(
    absl::Span<const v1::AccuracyPrediction* const> predictions, double level) {
  auto banded = [](const v1::AccuracyPrediction* p) {
    return p->has_raw_band_fraction() && p->raw_band_fraction() > 0;
  };
  std::map<std::string, std::vector<double>> fitted_errors;
  // The run-to-run term from another run of the configuration: a baseline
  // left out and predicted from a fit on the rows of its siblings. (A row
  // held out of its own sweep is the same run and would understate it.)
  for (const v1::AccuracyPrediction* p : predictions) {
    if (banded(p) && p->fitted_on_rows() && p->mode() == v1::ACCURACY_MODE_BASELINES) {
      fitted_errors[std::string(ProvenanceMetricOf(p->metric()))].push_back(
          std::abs(p->error_fraction()));
    }
  }
  std::map<std::string, double> run_to_run;
  for (const auto& [metric, errors] : fitted_errors) run_to_run[metric] = Quantile(errors, level);
  // One factor per metric and kind of figure (fitted on rows, a prior's):
  // their raw bands come from different places.
  std::map<std::pair<std::string, bool>, std::vector<double>> by_group;
  std::map<std::pair<std::string, bool>, int> inside_raw;
  for (const v1::AccuracyPrediction* p : predictions) {
    if (!banded(p)) continue;
    const std::string metric(ProvenanceMetricOf(p->metric()));
    const double band = Widened(p->raw_band_fraction(), p->fitted_on_rows(), run_to_run[metric]);
    const std::pair<std::string, bool> group{metric, p->fitted_on_rows()};
    by_group[group].push_back(std::abs(p->error_fraction()) / band);
    inside_raw[group] += std::abs(p->error_fraction()) <= p->raw_band_fraction();
  }
  std::vector<v1::ErrorBandScale> out;
  for (const auto& [group, ratios] : by_group) {
    out.push_back(ScaleOf(std::string(kAnyTier), group.first, ratios, level));
    out.back().set_fitted_on_rows(group.second);
    if (group.second) out.back().set_run_to_run_fraction(run_to_run[group.first]);
    // Coverage of the raw band itself, before the run-to-run term.
    out.back().set_raw_coverage(static_cast<double>(inside_raw[group]) /
                                static_cast<double>(ratios.size()));
  }
  return out;
}

double BandCoverage(absl::Span<const v1::AccuracyPrediction* const> predictions,
                    absl::Span<const v1::ErrorBandScale> scales) {
  int banded = 0;
  int inside = 0;
  for (const v1::AccuracyPrediction* p : predictions) {
    if (!p->has_raw_band_fraction() || !(p->raw_band_fraction() > 0)) continue;
    ++banded;
    const double band = ScaledBand(scales, p->tier(), ProvenanceMetricOf(p->metric()),
                                   p->raw_band_fraction(), p->fitted_on_rows());
    inside += std::abs(p->error_fraction()) <= band;
  }
  return banded > 0 ? static_cast<double>(inside) / banded : 0.0;
}

absl::StatusOr<std::vector<v1::AccuracyPrediction>> HeldOutPredictions(const Catalog& catalog) {
  std::vector<v1::AccuracyPrediction> out;
  for (v1::AccuracyMode mode : {v1::ACCURACY_MODE_BASELINES, v1::ACCURACY_MODE_ALTERNATE_ROWS}) {
    v1::AccuracyRequest request;
    request.set_mode(mode);
    CAPPLAN_ASSIGN_OR_RETURN(v1::AccuracyResponse r, Accuracy(catalog, request));
    for (v1::AccuracyPrediction& p : *r.mutable_predictions()) out.push_back(std::move(p));
  }
  return out;
}

absl::StatusOr<std::vector<v1::ErrorBandScale>> FitBandScales(const Catalog& catalog) {
  CAPPLAN_ASSIGN_OR_RETURN(std::vector<v1::AccuracyPrediction> predictions,
                           HeldOutPredictions(catalog));
  std::vector<const v1::AccuracyPrediction*> all;
  for (const v1::AccuracyPrediction& p : predictions) all.push_back(&p);
  return BandScalesFrom(all, kBandLevel);
}

}  // namespace capplan::service
