#ifndef CAPPLAN_SERVICE_PLANNER_BANDS_H_
#define CAPPLAN_SERVICE_PLANNER_BANDS_H_

// Honest error bands. A figure's raw band comes from the fit that produced
// it (the residuals of its own rows, or the held-out error of the prior it
// took), or for a figure the measured rows correct from the correction's
// leave-one-row-out error (load.cc RawBand), widened with distance from the
// measured range (model/provenance).
// Raw bands are not calibrated: on held-out rows far fewer errors fall inside
// them than a reader would expect. The catalogue's global prior therefore
// carries one factor per (tier, metric), set so that on the held-out
// predictions of `capplan accuracy` (leave one baseline out, and alternate
// rows) a share kBandLevel of the errors lies inside the scaled band; every
// band the planner states is raw × that factor.

#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "capplan/v1/catalog.pb.h"
#include "capplan/v1/planner.pb.h"
#include "service/catalog/catalog.h"

namespace capplan::service {

// The stated level of every band: 80% of errors inside it.
inline constexpr double kBandLevel = 0.8;

// The curve provenance metric ("throughput", "ttft", "tpot", "e2e") of an
// accuracy metric ("output_tokens_per_second", "ttft_p50", ...).
absl::string_view ProvenanceMetricOf(absl::string_view accuracy_metric);

// "CALIBRATED" for TIER_CALIBRATED.
std::string TierKey(v1::Tier tier);

// The catalogue's factors (its GLOBAL prior's band_scales); empty when absent.
std::vector<v1::ErrorBandScale> CatalogBandScales(const Catalog& catalog);

// The factor for a figure: its (tier, metric) entry, else the metric's
// pooled entry (tier "ANY"); among those, one set for the figure's kind
// (fitted on rows or a prior's) before one set for both; else 1.
double BandScaleFor(absl::Span<const v1::ErrorBandScale> scales, v1::Tier tier,
                    absl::string_view metric, bool fitted_on_rows = false);

// The band a user is told for a figure with raw band `raw`: for a figure
// from a fit on measured rows, sqrt(raw² + run_to_run²); then × the factor
// (BandScaleFor's entry).
double ScaledBand(absl::Span<const v1::ErrorBandScale> scales, v1::Tier tier,
                  absl::string_view metric, double raw, bool fitted_on_rows);

// The factors from held-out predictions with a raw band, over every tier
// ("ANY"): first, per metric, the run-to-run term, the level-quantile of
// |error| of the leave-one-baseline-out predictions fitted on rows (another
// run of the configuration; a row held out of its own sweep is the same run);
// then, per metric and kind of figure (fitted on rows, a prior's), the scale,
// the level-quantile of |error| ÷ the band widened by the term (never below
// 1: a band is never narrowed). Not per tier: the raw bands already widen
// from calibrated to extrapolated figures, and a factor per tier set on the
// few held-out predictions of each could undo that order. BandScaleFor still
// honours a (tier, metric) entry a catalogue holds.
std::vector<v1::ErrorBandScale> BandScalesFrom(
    absl::Span<const v1::AccuracyPrediction* const> predictions, double level);

// The share of predictions whose |error| lies inside ScaledBand.
double BandCoverage(absl::Span<const v1::AccuracyPrediction* const> predictions,
                    absl::Span<const v1::ErrorBandScale> scales);

// Every held-out prediction of the catalogue's baselines, both modes
// (leave one baseline out; alternate rows).
absl::StatusOr<std::vector<v1::AccuracyPrediction>> HeldOutPredictions(const Catalog& catalog);

// BandScalesFrom(HeldOutPredictions(catalog), kBandLevel).
absl::StatusOr<std::vector<v1::ErrorBandScale>> FitBandScales(const Catalog& catalog);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_PLANNER_BANDS_H_
