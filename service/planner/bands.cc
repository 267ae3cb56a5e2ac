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
                    absl::string_view metric) {
  const std::string key = TierKey(tier);
  const v1::ErrorBandScale* pooled = nullptr;
  for (const v1::ErrorBandScale& s : scales) {
    if (s.metric() != metric) continue;
    if (s.tier() == key) return s.scale();
    if (s.tier() == kAnyTier) pooled = &s;
  }
  return pooled != nullptr ? pooled->scale() : 1.0;
}

std::vector<v1::ErrorBandScale> BandScalesFrom(
    absl::Span<const v1::AccuracyPrediction* const> predictions, double level) {
  std::map<std::string, std::vector<double>> by_metric;
  for (const v1::AccuracyPrediction* p : predictions) {
    if (!p->has_raw_band_fraction() || !(p->raw_band_fraction() > 0)) continue;
    const double ratio = std::abs(p->error_fraction()) / p->raw_band_fraction();
    const std::string metric(ProvenanceMetricOf(p->metric()));
    by_metric[metric].push_back(ratio);
  }
  std::vector<v1::ErrorBandScale> out;
  for (const auto& [metric, ratios] : by_metric) {
    out.push_back(ScaleOf(std::string(kAnyTier), metric, ratios, level));
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
    const double band = p->raw_band_fraction() *
                        BandScaleFor(scales, p->tier(), ProvenanceMetricOf(p->metric()));
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
