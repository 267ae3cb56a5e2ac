#include "service/cli/priors.h"

#include <filesystem>
#include <set>
#include <string>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "service/catalog/store.h"
#include "service/cli/format.h"
#include "service/planner/bands.h"
#include "service/planner/priors.h"

namespace capplan::service {
namespace {

// The previous set's files that the new fit does not hold any more.
absl::Status RemoveStale(const std::string& dir, const std::set<std::string>& ids) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(fs::path(dir) / "priors", ec)) {
    if (e.path().extension() != ".txtpb" || ids.count(e.path().stem().string())) continue;
    fs::remove(e.path(), ec);
    if (ec) return absl::UnavailableError(absl::StrCat("cannot remove ", e.path().string()));
  }
  return absl::OkStatus();
}

absl::StatusOr<int> RunPriors(CliContext& ctx) {
  if (ctx.args.Has("server")) {
    return absl::InvalidArgumentError(
        "capplan priors reads a catalogue directory: give --data-dir or --out-dir, not --server");
  }
  const std::string dir =
      ctx.args.Get("out-dir").value_or(ctx.args.Get("data-dir").value_or(CAPPLAN_DEFAULT_DATA_DIR));
  CAPPLAN_ASSIGN_OR_RETURN(std::shared_ptr<const Catalog> catalog, Catalog::LoadFromDirectory(dir));
  CAPPLAN_ASSIGN_OR_RETURN(std::vector<v1::EfficiencyPrior> priors, FitPriors(*catalog));
  // The band factors come from held-out predictions, whose priors are
  // refitted without the held-out baseline: they do not depend on the
  // stored priors.
  CAPPLAN_ASSIGN_OR_RETURN(std::vector<v1::ErrorBandScale> scales, FitBandScales(*catalog));
  for (v1::EfficiencyPrior& p : priors) {
    if (p.level() != v1::PRIOR_LEVEL_GLOBAL) continue;
    for (const v1::ErrorBandScale& s : scales) *p.add_band_scales() = s;
    p.set_band_level(kBandLevel);
  }
  if (ctx.args.Has("out-dir")) {
    CAPPLAN_ASSIGN_OR_RETURN(std::unique_ptr<DirectoryStore> store, DirectoryStore::Open(dir));
    std::set<std::string> ids;
    for (const v1::EfficiencyPrior& p : priors) {
      CAPPLAN_RETURN_IF_ERROR(store->PutPrior(p, /*replace=*/true).status());
      ids.insert(p.id());
    }
    CAPPLAN_RETURN_IF_ERROR(RemoveStale(dir, ids));
  }
  TextTable table({"PRIOR", "BASELINES", "ROWS", "ALPHA (ms)", "REQUEST (ms)", "ETA WEIGHTS",
                   "ETA KV", "ETA FLOPS", "ETA COMM", "HELD-OUT ERROR"});
  for (const v1::EfficiencyPrior& p : priors) {
    table.AddRow(
        {p.id(), absl::StrCat(p.baseline_ids_size()), absl::StrCat(p.observations()),
         absl::StrFormat("%.2f", 1e3 * p.alpha_seconds()),
         absl::StrFormat("%.0f", 1e3 * p.request_latency_seconds()),
         absl::StrFormat("%.2f", 1 / p.beta_weights()), absl::StrFormat("%.2f", 1 / p.beta_kv()),
         absl::StrFormat("%.2f", 1 / p.beta_flops()), absl::StrFormat("%.3f", 1 / p.beta_comm()),
         p.leave_one_out_relative_error() > 0
             ? absl::StrFormat("%.0f%%", 100 * p.leave_one_out_relative_error())
             : "-"});
  }
  table.Print(ctx.out);
  TextTable bands({"TIER", "METRIC", "FIGURES", "HELD-OUT PREDICTIONS", "RUN TO RUN (±%)",
                   "RAW COVERAGE (%)", "BAND FACTOR"});
  for (const v1::ErrorBandScale& s : scales) {
    const bool prior_figures = s.has_fitted_on_rows() && !s.fitted_on_rows();
    bands.AddRow({s.tier(), s.metric(),
                  !s.has_fitted_on_rows() ? "all"
                  : prior_figures         ? "a prior's"
                                          : "fitted on rows",
                  absl::StrCat(s.predictions()),
                  prior_figures ? "-" : absl::StrFormat("%.1f", 100 * s.run_to_run_fraction()),
                  absl::StrFormat("%.0f", 100 * s.raw_coverage()),
                  absl::StrFormat("%.2f", s.scale())});
  }
  ctx.out << absl::StrFormat(
      "\nerror-band factors (each band widened to hold %.0f%% of held-out errors; a figure "
      "fitted on measured rows first gets the run-to-run term in quadrature):\n",
      100 * kBandLevel);
  bands.Print(ctx.out);
  ctx.out << absl::StrFormat(
      "%d %s%s (efficiency η = 1/β: 1 is the card's peak)\n", priors.size(),
      priors.size() == 1 ? "prior" : "priors",
      ctx.args.Has("out-dir") ? absl::StrCat(" written to ", dir, "/priors") : "");
  return 0;
}

}  // namespace

CliCommandSpec PriorsCommandSpec() { return {"priors", &RunPriors, {"out-dir"}, {}}; }

}  // namespace capplan::service
