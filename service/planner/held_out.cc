#include "service/planner/held_out.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "model/robust_fit.h"
#include "service/catalog/suggest.h"
#include "service/planner/accuracy.h"
#include "service/planner/bands.h"
#include "service/planner/load.h"
#include "service/planner/prepared.h"
#include "service/planner/priors.h"
#include "service/translate/load_translation.h"

namespace capplan::service {
namespace {

constexpr const char* kMetrics[] = {"output_tokens_per_second", "ttft_p50", "tpot", "e2e_p50"};

struct Prepared {
  std::shared_ptr<const Catalog> held_out;  // the catalogue without the baseline
  std::string hardware_class;
  std::string engine;
  std::vector<SourcedPoint> points;  // plain rows at a concurrency or a rate
};

std::string EngineLabel(v1::EngineKind kind) {
  switch (kind) {
    case v1::ENGINE_KIND_VLLM:
      return "vllm";
    case v1::ENGINE_KIND_SGLANG:
      return "sglang";
    case v1::ENGINE_KIND_TRTLLM:
      return "trtllm";
    default:
      return "unstated";
  }
}

// The baseline's plain rows and a catalogue without it, priors refitted.
absl::StatusOr<Prepared> Prepare(const Catalog& catalog, const v1::Baseline& b) {
  CAPPLAN_ASSIGN_OR_RETURN(BaselineFitSetup setup,
                           PrepareBaselineFit(catalog, b, false, 1, "a held-out check", nullptr));
  Prepared p;
  for (SourcedPoint& sp : setup.points) {
    if (!sp.speculative) p.points.push_back(std::move(sp));
  }
  if (p.points.empty()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("baseline '%s' has no plain rows at a concurrency or a rate", b.id()));
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::vector<v1::EfficiencyPrior> priors, FitPriors(catalog, {b.id()}));
  CAPPLAN_ASSIGN_OR_RETURN(p.held_out, catalog.WithoutBaselines({b.id()}, std::move(priors)));
  const ResolvedDeployment& r = setup.deployment.resolved;
  p.hardware_class =
      PriorId(v1::PRIOR_LEVEL_CLASS, ClassKeyOf(*r.hardware,
                                                std::max<uint32_t>(1, r.parallelism.tp()) *
                                                    std::max<uint32_t>(1, r.parallelism.pp()),
                                                r.engine.kind()));
  p.engine = EngineLabel(r.engine.kind());
  return p;
}

// The rows as the user's own calibration sweep (one sweep per row: each row
// carries its own workload).
std::vector<v1::Sweep> AsCalibration(const std::vector<const SourcedPoint*>& rows) {
  std::vector<v1::Sweep> sweeps;
  for (const SourcedPoint* sp : rows) {
    const model::MeasuredPoint& m = sp->point;
    v1::Sweep s;
    s.set_name(m.source);
    s.set_closed_loop(m.concurrency.has_value());
    s.mutable_workload()->set_input_tokens(m.workload.input_tokens);
    s.mutable_workload()->set_output_tokens(m.workload.output_tokens);
    s.mutable_workload()->set_synchronized(m.workload.synchronized);
    v1::SweepRow* row = s.add_rows();
    if (m.workload.synchronized) row->set_requests(static_cast<uint32_t>(m.workload.num_prompts));
    if (m.concurrency.has_value()) row->set_concurrency(*m.concurrency);
    if (m.arrival_rate_rps.has_value()) row->set_arrival_rate_rps(*m.arrival_rate_rps);
    if (m.output_tokens_per_second.has_value()) {
      row->set_output_tokens_per_second(*m.output_tokens_per_second);
    }
    if (m.requests_per_second.has_value()) row->set_requests_per_second(*m.requests_per_second);
    if (m.per_user_output_tokens_per_second.has_value()) {
      row->set_per_user_output_tokens_per_second(*m.per_user_output_tokens_per_second);
    }
    if (m.ttft_seconds.has_value()) row->mutable_ttft()->set_p50_seconds(*m.ttft_seconds);
    if (m.tpot_seconds.has_value()) row->mutable_tpot()->set_mean_seconds(*m.tpot_seconds);
    if (m.e2e_seconds.has_value()) row->mutable_e2e()->set_p50_seconds(*m.e2e_seconds);
    sweeps.push_back(std::move(s));
  }
  return sweeps;
}

// One held-out row predicted through PredictLoad.
absl::StatusOr<v1::LoadCurve> PredictRow(const Catalog& held_out, const v1::Baseline& b,
                                         const SourcedPoint& row,
                                         const std::vector<v1::Sweep>& calibration) {
  v1::PredictLoadRequest request;
  *request.mutable_deployment() = DeploymentOfBaseline(b);
  request.mutable_workload()->set_input_tokens(row.point.workload.input_tokens);
  request.mutable_workload()->set_output_tokens(row.point.workload.output_tokens);
  request.mutable_workload()->set_synchronized(row.point.workload.synchronized);
  if (row.point.workload.synchronized) {
    request.mutable_workload()->set_num_prompts(
        static_cast<uint32_t>(row.point.workload.num_prompts));
  }
  if (row.point.concurrency.has_value()) {
    request.mutable_closed_loop()->add_concurrencies(*row.point.concurrency);
  } else {
    request.mutable_open_loop()->add_arrival_rates_rps(*row.point.arrival_rate_rps);
  }
  if (b.deployment().has_concurrency_gate()) {
    request.set_operator_concurrency_gate(b.deployment().concurrency_gate());
  }
  for (const v1::Sweep& s : calibration) *request.add_calibration() = s;
  return PredictLoad(held_out, request);
}

std::optional<double> Band(const v1::LoadCurve& curve, const std::string& metric, v1::Tier* tier) {
  const std::string name = metric == "ttft_p50"  ? "ttft"
                           : metric == "tpot"    ? "tpot"
                           : metric == "e2e_p50" ? "e2e"
                                                 : "throughput";
  for (const v1::MetricProvenance& p : curve.provenance()) {
    if (p.metric() != name) continue;
    *tier = p.tier();
    if (p.error_band_fraction() > 0) return p.error_band_fraction();
  }
  return std::nullopt;
}

void AddPredictions(const Prepared& p, const v1::Baseline& b, const SourcedPoint& row,
                    const v1::LoadCurve& curve, absl::Span<const v1::ErrorBandScale> scales,
                    v1::AccuracyMode mode, v1::AccuracyResponse* out) {
  if (curve.points_size() != 1) return;
  const v1::LoadCurvePoint& pt = curve.points(0);
  const model::MeasuredPoint& m = row.point;
  std::optional<double> tps = m.output_tokens_per_second;
  if (!tps.has_value() && m.per_user_output_tokens_per_second.has_value() &&
      m.concurrency.has_value()) {
    tps = *m.per_user_output_tokens_per_second * *m.concurrency;
  }
  const std::pair<std::optional<double>, std::optional<double>> figures[] = {
      {tps, pt.output_tokens_per_second()},
      {m.ttft_seconds,
       pt.has_ttft_p50_seconds() ? std::optional<double>(pt.ttft_p50_seconds()) : std::nullopt},
      {m.tpot_seconds,
       pt.has_tpot_seconds() ? std::optional<double>(pt.tpot_seconds()) : std::nullopt},
      {m.e2e_seconds,
       pt.has_e2e_p50_seconds() ? std::optional<double>(pt.e2e_p50_seconds()) : std::nullopt}};
  for (int i = 0; i < 4; ++i) {
    const auto& [measured, predicted] = figures[i];
    if (!measured.has_value() || !predicted.has_value() || !(*measured > 0) || !(*predicted > 0)) {
      continue;
    }
    v1::AccuracyPrediction* a = out->add_predictions();
    a->set_baseline_id(b.id());
    a->set_source(m.source);
    a->set_metric(kMetrics[i]);
    a->set_measured(*measured);
    a->set_predicted(*predicted);
    a->set_error_fraction(*predicted / *measured - 1);
    a->set_hardware_class(p.hardware_class);
    a->set_engine(p.engine);
    a->set_mode(mode);
    v1::Tier tier = v1::TIER_UNSPECIFIED;
    // The held-out catalogue's priors are refitted and carry no band scales:
    // the curve's band is raw; the outer catalogue's scales make it the band
    // a user would be told.
    if (std::optional<double> band = Band(curve, kMetrics[i], &tier)) {
      a->set_raw_band_fraction(*band);
      a->set_fitted_on_rows(curve.coefficients().observations() > 0);
      a->set_band_fraction(
          ScaledBand(scales, tier, ProvenanceMetricOf(kMetrics[i]), *band, a->fitted_on_rows()));
    }
    a->set_tier(tier);
  }
}

absl::Status OneBaseline(const Catalog& catalog, const v1::Baseline& b, v1::AccuracyMode mode,
                         v1::AccuracyResponse* out) {
  CAPPLAN_ASSIGN_OR_RETURN(Prepared p, Prepare(catalog, b));
  if (mode == v1::ACCURACY_MODE_ALTERNATE_ROWS && p.points.size() < 2) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "baseline '%s' has %d plain row; alternate rows need 2", b.id(), p.points.size()));
  }
  for (size_t i = 0; i < p.points.size(); ++i) {
    std::vector<const SourcedPoint*> train;
    if (mode == v1::ACCURACY_MODE_ALTERNATE_ROWS) {
      for (size_t j = 0; j < p.points.size(); ++j) {
        if (j % 2 != i % 2) train.push_back(&p.points[j]);
      }
    }
    absl::StatusOr<v1::LoadCurve> curve =
        PredictRow(*p.held_out, b, p.points[i], AsCalibration(train));
    if (!curve.ok()) {
      out->add_notes(absl::StrFormat("%s: not predicted: %s", p.points[i].point.source,
                                     curve.status().message()));
      continue;
    }
    AddPredictions(p, b, p.points[i], *curve, CatalogBandScales(catalog), mode, out);
  }
  return absl::OkStatus();
}

void Summarise(const std::string& group, const std::string& metric,
               const std::vector<const v1::AccuracyPrediction*>& preds, v1::AccuracyResponse* out) {
  if (preds.empty()) return;
  std::vector<double> errors;
  int within = 0, banded = 0, covered = 0;
  for (const v1::AccuracyPrediction* a : preds) {
    errors.push_back(std::abs(a->error_fraction()));
    const double ratio = a->predicted() / a->measured();
    within += ratio >= 0.5 && ratio <= 2.0;
    if (a->has_band_fraction()) {
      ++banded;
      covered += std::abs(a->error_fraction()) <= a->band_fraction();
    }
  }
  v1::AccuracySummary* s = out->add_summaries();
  s->set_group(group);
  s->set_metric(metric);
  s->set_count(static_cast<uint32_t>(preds.size()));
  s->set_median_abs_error_fraction(model::Median(errors));
  s->set_max_abs_error_fraction(*std::max_element(errors.begin(), errors.end()));
  s->set_within_2x_fraction(static_cast<double>(within) / preds.size());
  if (banded > 0) s->set_band_coverage_fraction(static_cast<double>(covered) / banded);
}

void AddSummaries(v1::AccuracyResponse* out) {
  std::map<std::pair<std::string, std::string>, std::vector<const v1::AccuracyPrediction*>> groups;
  for (const v1::AccuracyPrediction& a : out->predictions()) {
    for (const std::string& g :
         {std::string("all"), absl::StrCat("class ", a.hardware_class()),
          absl::StrCat("engine ", a.engine()), absl::StrCat("baseline ", a.baseline_id())}) {
      groups[{g, a.metric()}].push_back(&a);
    }
  }
  for (const auto& [key, preds] : groups) Summarise(key.first, key.second, preds, out);
}

// Leave one row out, in the response's shape.
absl::StatusOr<v1::AccuracyResponse> RowsMode(const Catalog& catalog, const std::string& id) {
  CAPPLAN_ASSIGN_OR_RETURN(AccuracyReport report, LeaveOneRowOut(catalog, id));
  v1::AccuracyResponse out;
  out.set_mode(v1::ACCURACY_MODE_ROWS);
  for (const AccuracyRow& r : report.rows) {
    v1::AccuracyPrediction* a = out.add_predictions();
    a->set_baseline_id(r.baseline_id);
    a->set_source(r.source);
    a->set_metric(r.metric);
    a->set_measured(r.measured);
    a->set_predicted(r.predicted);
    a->set_error_fraction(r.error_fraction);
  }
  for (const std::string& n : report.notes) out.add_notes(n);
  AddSummaries(&out);
  return out;
}

}  // namespace

v1::Deployment DeploymentOfBaseline(const v1::Baseline& b) {
  const v1::DeploymentConfig& c = b.deployment();
  v1::Deployment d;
  d.set_model_id(c.model_id());
  d.set_hardware_id(c.hardware_id());
  if (c.gpu_count() > 0) d.set_gpu_count(c.gpu_count());
  if (c.has_quantization()) {
    d.set_weight_format(c.quantization().format());
    if (c.quantization().group_size() > 0) d.set_weight_group_size(c.quantization().group_size());
  }
  if (c.parallelism().tp() > 0) d.mutable_parallelism()->set_tp(c.parallelism().tp());
  if (c.parallelism().pp() > 0) d.mutable_parallelism()->set_pp(c.parallelism().pp());
  if (c.parallelism().ep() > 0) d.mutable_parallelism()->set_ep(c.parallelism().ep());
  if (c.parallelism().dp_attention()) d.mutable_parallelism()->set_dp_attention(true);
  const v1::EngineConfig& e = c.engine();
  v1::EngineSettings* s = d.mutable_engine();
  s->set_kind(e.kind());
  s->set_version(e.version());
  if (e.gpu_memory_utilization() > 0) s->set_gpu_memory_utilization(e.gpu_memory_utilization());
  if (e.mem_fraction_static() > 0) s->set_mem_fraction_static(e.mem_fraction_static());
  if (e.kv_cache_free_gpu_memory_fraction() > 0) {
    s->set_kv_cache_free_gpu_memory_fraction(e.kv_cache_free_gpu_memory_fraction());
  }
  if (e.max_model_len() > 0) s->set_max_model_len(e.max_model_len());
  if (e.max_num_batched_tokens() > 0) s->set_max_num_batched_tokens(e.max_num_batched_tokens());
  if (e.max_num_seqs() > 0) s->set_max_num_seqs(e.max_num_seqs());
  if (e.enforce_eager()) s->set_enforce_eager(true);
  if (e.has_enable_prefix_caching()) s->set_enable_prefix_caching(e.enable_prefix_caching());
  if (e.block_size() > 0) s->set_block_size(e.block_size());
  s->set_kv_cache_dtype(e.kv_cache_dtype());
  s->set_sampler_backend(e.sampler_backend());
  if (e.language_model_only()) s->set_language_model_only(true);
  if (e.has_free_memory_at_start_bytes()) {
    s->set_free_memory_at_start_bytes(e.free_memory_at_start_bytes());
  }
  if (e.speculative().method() != v1::SPECULATIVE_METHOD_UNSPECIFIED) {
    s->set_speculative_method(e.speculative().method());
    s->set_num_speculative_tokens(e.speculative().num_speculative_tokens());
  }
  return d;
}

absl::StatusOr<v1::AccuracyResponse> Accuracy(const Catalog& catalog,
                                              const v1::AccuracyRequest& request) {
  const v1::AccuracyMode mode =
      request.mode() == v1::ACCURACY_MODE_UNSPECIFIED ? v1::ACCURACY_MODE_ROWS : request.mode();
  if (!request.baseline_id().empty() && catalog.FindBaseline(request.baseline_id()) == nullptr) {
    return absl::NotFoundError(absl::StrFormat(
        "AccuracyRequest.baseline_id = \"%s\"; no such baseline%s (ListBaselines lists them)",
        request.baseline_id().substr(0, 256),
        DidYouMean(SuggestBaselines(catalog, request.baseline_id().substr(0, 256)))));
  }
  if (mode == v1::ACCURACY_MODE_ROWS) return RowsMode(catalog, request.baseline_id());
  v1::AccuracyResponse out;
  out.set_mode(mode);
  for (const v1::Baseline& b : catalog.baselines()) {
    if (!request.baseline_id().empty() && b.id() != request.baseline_id()) continue;
    if (b.deployment().hardware_id().empty() || b.sweeps().empty()) continue;
    absl::Status s = OneBaseline(catalog, b, mode, &out);
    if (!s.ok()) out.add_notes(absl::StrCat(b.id(), ": ", s.message()));
  }
  AddSummaries(&out);
  return out;
}

}  // namespace capplan::service
