#include "service/translate/load_translation.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "service/translate/deployment_resolver.h"

namespace capplan::service {
namespace {

absl::Status Invalid(const std::string& field, double value, const std::string& rule) {
  return absl::InvalidArgumentError(absl::StrCat(field, " = ", value, "; ", rule));
}

absl::Status CheckPositive(const std::string& field, double value) {
  if (!std::isfinite(value) || !(value > 0)) return Invalid(field, value, "must be > 0");
  return absl::OkStatus();
}

std::optional<double> Figure(const v1::LatencyFigures& f, bool prefer_mean) {
  if (prefer_mean && f.has_mean_seconds()) return f.mean_seconds();
  if (f.has_p50_seconds()) return f.p50_seconds();
  if (f.has_mean_seconds()) return f.mean_seconds();
  if (f.has_reported_seconds()) return f.reported_seconds();
  return std::nullopt;
}

std::string Where(const std::string& baseline, const std::string& sweep, const std::string& row) {
  return absl::StrCat(baseline.empty() ? "calibration" : baseline, "/", sweep, "/", row);
}

// One sweep row as a point; the workload is the sweep's, with the row's
// own derived output where the sweep states none.
std::optional<SourcedPoint> RowPoint(const v1::SweepRow& row, const v1::Sweep& sweep,
                                     const v1::WorkloadSpec& workload, bool closed_loop,
                                     const v1::SpeculativeDecoding& speculation,
                                     const std::string& baseline_id) {
  if (!row.has_concurrency() && !row.has_arrival_rate_rps()) return std::nullopt;
  SourcedPoint sp;
  sp.baseline_id = baseline_id;
  sp.sweep = sweep.name();
  model::MeasuredPoint& p = sp.point;
  if (row.has_concurrency() && (closed_loop || !row.has_arrival_rate_rps())) {
    p.concurrency = static_cast<int>(row.concurrency());
  } else {
    p.arrival_rate_rps = row.arrival_rate_rps();
  }
  p.source = Where(baseline_id, sweep.name(),
                   p.concurrency.has_value() ? absl::StrCat("c=", *p.concurrency)
                                             : absl::StrCat("rate=", *p.arrival_rate_rps));
  p.workload = ToModelWorkload(workload);
  // A synchronized run's prompts: the requests it sent (completed and failed).
  if (p.workload.synchronized && row.has_requests() && row.requests() > 0) {
    p.workload.num_prompts = static_cast<int64_t>(row.requests()) + row.failed_requests();
  }
  // The run's own stated lengths first: runs of one sweep differ a little
  // (random lengths drawn per run, a dataset sampled per run).
  if (row.has_mean_input_tokens()) p.workload.input_tokens = row.mean_input_tokens();
  if (row.has_mean_output_tokens()) {
    p.workload.output_tokens = row.mean_output_tokens();
  } else if (!(sweep.workload().has_output_tokens() && sweep.workload().output_tokens() > 0) &&
             row.has_output_tokens_per_second() && row.has_requests_per_second() &&
             row.requests_per_second() > 0) {
    p.workload.output_tokens = row.output_tokens_per_second() / row.requests_per_second();
  }
  if (row.has_output_tokens_per_second())
    p.output_tokens_per_second = row.output_tokens_per_second();
  if (row.has_requests_per_second()) p.requests_per_second = row.requests_per_second();
  if (row.has_per_user_output_tokens_per_second()) {
    p.per_user_output_tokens_per_second = row.per_user_output_tokens_per_second();
  }
  p.ttft_seconds = Figure(row.ttft(), false);
  p.ttft_is_mean = !row.ttft().has_p50_seconds() && row.ttft().has_mean_seconds();
  if (row.ttft().has_p95_seconds()) p.ttft_p95_seconds = row.ttft().p95_seconds();
  p.tpot_seconds = Figure(row.tpot(), true);
  p.e2e_seconds = Figure(row.e2e(), false);
  sp.speculative = SpeculationOn(speculation);
  sp.draft_tokens = DraftTokens(speculation);
  return sp;
}

// The mean, range and count of a figure the sweep's rows state.
struct RowsMean {
  double mean = 0;
  double lo = 0;
  double hi = 0;
  int rows = 0;
};
std::optional<RowsMean> MeanOfRows(const v1::Sweep& sweep, bool (v1::SweepRow::*has)() const,
                                   double (v1::SweepRow::*value)() const) {
  RowsMean m;
  double sum = 0;
  for (const v1::SweepRow& row : sweep.rows()) {
    if (!(row.*has)()) continue;
    const double v = (row.*value)();
    m.lo = m.rows == 0 ? v : std::min(m.lo, v);
    m.hi = m.rows == 0 ? v : std::max(m.hi, v);
    sum += v;
    ++m.rows;
  }
  if (m.rows == 0) return std::nullopt;
  m.mean = sum / m.rows;
  return m;
}

std::string RowsMeanNote(const v1::Baseline& baseline, const v1::Sweep& sweep,
                         absl::string_view what, const std::string& mean, const RowsMean& m) {
  return absl::StrFormat(
      "%s/%s states no single %s length: %s tokens per request, the mean of the %d rows that "
      "state one (%.0f to %.0f; those rows are fitted at their own)",
      baseline.id(), sweep.name(), what, mean, m.rows, m.lo, m.hi);
}

}  // namespace

int DraftTokens(const v1::SpeculativeDecoding& s) {
  return SpeculationOn(s) ? std::max<int>(1, static_cast<int>(s.num_speculative_tokens())) : 0;
}

model::Workload ToModelWorkload(const v1::WorkloadSpec& w) {
  model::Workload out;
  out.input_tokens = w.input_tokens();
  out.output_tokens = w.output_tokens();
  out.input_tokens_cv = w.has_input_tokens_cv() ? w.input_tokens_cv() : 0.0;
  out.output_tokens_cv = w.has_output_tokens_cv() ? w.output_tokens_cv() : 0.0;
  out.synchronized = w.synchronized();
  if (w.has_num_prompts()) out.num_prompts = w.num_prompts();
  out.prefix_cache_hit_rate = w.has_prefix_cache_hit_rate() ? w.prefix_cache_hit_rate() : 0.0;
  return out;
}

absl::StatusOr<v1::WorkloadSpec> SweepWorkload(const v1::Baseline& baseline, const v1::Sweep& sweep,
                                               std::vector<std::string>* notes) {
  v1::WorkloadSpec w;
  const v1::Workload& sw = sweep.workload();
  const std::optional<RowsMean> stated_output =
      MeanOfRows(sweep, &v1::SweepRow::has_mean_output_tokens, &v1::SweepRow::mean_output_tokens);
  const std::optional<RowsMean> stated_input =
      MeanOfRows(sweep, &v1::SweepRow::has_mean_input_tokens, &v1::SweepRow::mean_input_tokens);
  if (sw.has_output_tokens() && sw.output_tokens() > 0) {
    w.set_output_tokens(sw.output_tokens());
  } else if (stated_output.has_value()) {
    w.set_output_tokens(stated_output->mean);
    if (notes != nullptr) {
      notes->push_back(RowsMeanNote(baseline, sweep, "output",
                                    absl::StrFormat("%.1f", w.output_tokens()), *stated_output));
    }
  } else {
    double sum = 0;
    int n = 0;
    for (const v1::SweepRow& row : sweep.rows()) {
      if (row.has_output_tokens_per_second() && row.has_requests_per_second() &&
          row.requests_per_second() > 0) {
        sum += row.output_tokens_per_second() / row.requests_per_second();
        ++n;
      }
    }
    if (n == 0) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "baseline '%s' sweep '%s' states no output length and no row gives both output tok/s "
          "and req/s to derive it",
          baseline.id(), sweep.name()));
    }
    w.set_output_tokens(sum / n);
    if (notes != nullptr) {
      notes->push_back(absl::StrFormat(
          "%s/%s states no output length: %.1f tokens per request derived as output tok/s ÷ "
          "req/s (mean of %d rows; each row fitted at its own ratio)",
          baseline.id(), sweep.name(), w.output_tokens(), n));
    }
  }
  if (sw.has_input_tokens() && sw.input_tokens() > 0) {
    w.set_input_tokens(sw.input_tokens());
  } else if (stated_input.has_value()) {
    w.set_input_tokens(stated_input->mean);
    if (notes != nullptr) {
      notes->push_back(RowsMeanNote(baseline, sweep, "input",
                                    absl::StrFormat("%.0f", w.input_tokens()), *stated_input));
    }
  } else {
    std::optional<double> input;
    std::string from;
    for (const v1::SustainedRun& run : baseline.sustained_runs()) {
      if (run.workload().has_input_tokens() && run.workload().input_tokens() > 0) {
        input = run.workload().input_tokens();
        from = absl::StrCat("the input of its sustained run '", run.name(), "'");
        break;
      }
    }
    if (!input.has_value()) {
      input = w.output_tokens();
      from = "its output length (assumed)";
    }
    w.set_input_tokens(*input);
    if (notes != nullptr) {
      notes->push_back(absl::StrFormat("%s/%s states no input length: %.0f tokens, %s",
                                       baseline.id(), sweep.name(), *input, from));
    }
  }
  if (sw.has_prefix_cache_hit_rate()) w.set_prefix_cache_hit_rate(sw.prefix_cache_hit_rate());
  if (sw.synchronized()) w.set_synchronized(true);
  return w;
}

absl::StatusOr<v1::WorkloadSpec> BaselineWorkload(const v1::Baseline& baseline,
                                                  absl::string_view workload_path,
                                                  std::vector<std::string>* notes) {
  for (const v1::SustainedRun& run : baseline.sustained_runs()) {
    if (run.workload().has_input_tokens() && run.workload().has_output_tokens()) {
      v1::WorkloadSpec w;
      w.set_input_tokens(run.workload().input_tokens());
      w.set_output_tokens(run.workload().output_tokens());
      if (notes != nullptr) {
        notes->push_back(absl::StrFormat(
            "workload from baseline %s, run %s: %.0f input + %.0f output tokens per request",
            baseline.id(), run.name(), w.input_tokens(), w.output_tokens()));
      }
      return w;
    }
  }
  if (baseline.sweeps_size() == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s.input_tokens and %s.output_tokens are not set and baseline %s states no workload; "
        "give them",
        workload_path, workload_path, baseline.id()));
  }
  return SweepWorkload(baseline, baseline.sweeps(0), notes);
}

absl::StatusOr<std::vector<SourcedPoint>> BaselinePoints(const v1::Baseline& baseline,
                                                         bool with_variants,
                                                         std::vector<std::string>* notes) {
  std::vector<SourcedPoint> out;
  const v1::SpeculativeDecoding& deployed = baseline.deployment().engine().speculative();
  std::optional<v1::WorkloadSpec> first_workload;
  for (const v1::Sweep& sweep : baseline.sweeps()) {
    absl::StatusOr<v1::WorkloadSpec> w = SweepWorkload(baseline, sweep, notes);
    if (!w.ok()) {
      if (notes != nullptr) notes->push_back(std::string(w.status().message()));
      continue;
    }
    if (!first_workload.has_value()) first_workload = *w;
    const v1::SpeculativeDecoding& spec = sweep.has_speculative() ? sweep.speculative() : deployed;
    for (const v1::SweepRow& row : sweep.rows()) {
      std::optional<SourcedPoint> p =
          RowPoint(row, sweep, *w, sweep.closed_loop(), spec, baseline.id());
      if (p.has_value()) out.push_back(*std::move(p));
    }
  }
  // Single long-context runs that state their workload and speculative
  // setting: a long prefill (TTFT) and decoding at a long context (TPOT)
  // separate FLOPs and KV reads from weight reads.
  for (const v1::LongContextRun& run : baseline.long_context_runs()) {
    const v1::Workload& w = run.workload();
    if (!w.has_input_tokens() || !w.has_output_tokens() || !run.has_speculative() ||
        run.speculative().method() == v1::SPECULATIVE_METHOD_UNSPECIFIED ||
        run.concurrency() != 1) {
      continue;
    }
    SourcedPoint sp;
    sp.baseline_id = baseline.id();
    sp.sweep = run.name();
    sp.point.source = Where(baseline.id(), run.name(), "c=1");
    sp.point.concurrency = 1;
    sp.point.workload.input_tokens = w.input_tokens();
    sp.point.workload.output_tokens = w.output_tokens();
    sp.point.ttft_seconds = Figure(run.ttft(), false);
    sp.point.tpot_seconds = Figure(run.tpot(), true);
    sp.speculative = SpeculationOn(run.speculative());
    sp.draft_tokens = DraftTokens(run.speculative());
    if (sp.point.ttft_seconds.has_value() || sp.point.tpot_seconds.has_value()) {
      out.push_back(std::move(sp));
    }
  }
  if (with_variants && first_workload.has_value()) {
    for (const v1::SpeculativeVariant& v : baseline.speculative_variants()) {
      // Only variants that state a speculative setting and a throughput;
      // they fit the acceptance rate, not the step-time coefficients.
      if (!SpeculationOn(v.speculative()) || !v.has_concurrency() ||
          !v.has_output_tokens_per_second()) {
        continue;
      }
      SourcedPoint sp;
      sp.baseline_id = baseline.id();
      sp.sweep = v.name();
      sp.point.source = Where(baseline.id(), v.name(), absl::StrCat("c=", v.concurrency()));
      sp.point.concurrency = static_cast<int>(v.concurrency());
      sp.point.workload = ToModelWorkload(*first_workload);
      sp.point.output_tokens_per_second = v.output_tokens_per_second();
      sp.point.per_user_output_tokens_per_second =
          v.output_tokens_per_second() / static_cast<double>(v.concurrency());
      sp.point.ttft_seconds = Figure(v.ttft(), false);
      sp.speculative = true;
      sp.draft_tokens = DraftTokens(v.speculative());
      out.push_back(std::move(sp));
    }
  }
  return out;
}

absl::StatusOr<std::vector<SourcedPoint>> InlinePoints(const std::vector<v1::Sweep>& sweeps,
                                                       const v1::WorkloadSpec& request_workload,
                                                       const std::string& path) {
  std::vector<SourcedPoint> out;
  for (size_t i = 0; i < sweeps.size(); ++i) {
    const v1::Sweep& sweep = sweeps[i];
    const std::string sp_path = absl::StrCat(path, ".calibration[", i, "]");
    v1::WorkloadSpec w = request_workload;
    const v1::Workload& sw = sweep.workload();
    if (sw.has_input_tokens()) {
      CAPPLAN_RETURN_IF_ERROR(CheckPositive(sp_path + ".workload.input_tokens", sw.input_tokens()));
      w.set_input_tokens(sw.input_tokens());
    }
    if (sw.has_output_tokens()) {
      CAPPLAN_RETURN_IF_ERROR(
          CheckPositive(sp_path + ".workload.output_tokens", sw.output_tokens()));
      w.set_output_tokens(sw.output_tokens());
    }
    if (sw.has_prefix_cache_hit_rate()) w.set_prefix_cache_hit_rate(sw.prefix_cache_hit_rate());
    if (sw.synchronized()) w.set_synchronized(true);
    if (sweep.rows().empty()) {
      return absl::InvalidArgumentError(sp_path + ".rows is empty; give at least one row");
    }
    for (int j = 0; j < sweep.rows_size(); ++j) {
      const v1::SweepRow& row = sweep.rows(j);
      const std::string rp = absl::StrCat(sp_path, ".rows[", j, "]");
      if (!row.has_concurrency() && !row.has_arrival_rate_rps()) {
        return absl::InvalidArgumentError(rp + ": set concurrency or arrival_rate_rps");
      }
      if (row.has_concurrency() && row.concurrency() == 0) {
        return Invalid(rp + ".concurrency", 0, "must be >= 1");
      }
      if (row.has_arrival_rate_rps()) {
        CAPPLAN_RETURN_IF_ERROR(CheckPositive(rp + ".arrival_rate_rps", row.arrival_rate_rps()));
      }
      for (const auto& [name, has, value] :
           {std::make_tuple("output_tokens_per_second", row.has_output_tokens_per_second(),
                            row.output_tokens_per_second()),
            std::make_tuple("per_user_output_tokens_per_second",
                            row.has_per_user_output_tokens_per_second(),
                            row.per_user_output_tokens_per_second()),
            std::make_tuple("requests_per_second", row.has_requests_per_second(),
                            row.requests_per_second()),
            std::make_tuple("mean_input_tokens", row.has_mean_input_tokens(),
                            row.mean_input_tokens()),
            std::make_tuple("mean_output_tokens", row.has_mean_output_tokens(),
                            row.mean_output_tokens())}) {
        if (has) CAPPLAN_RETURN_IF_ERROR(CheckPositive(absl::StrCat(rp, ".", name), value));
      }
      if (!(w.input_tokens() >= 1) || !(w.output_tokens() >= 1)) {
        return absl::InvalidArgumentError(
            absl::StrCat(sp_path,
                         ".workload: input_tokens and output_tokens are needed (the sweep's or the "
                         "request's)"));
      }
      std::optional<SourcedPoint> p = RowPoint(
          row, sweep, w, sweep.closed_loop() || row.has_concurrency(), sweep.speculative(), "");
      if (p.has_value()) {
        p->point.source = absl::StrCat(rp);
        out.push_back(*std::move(p));
      }
    }
  }
  return out;
}

void FillCurvePoint(const model::LoadPoint& p, v1::LoadCurvePoint* out) {
  if (p.concurrency.has_value()) out->set_concurrency(static_cast<uint32_t>(*p.concurrency));
  if (p.arrival_rate_rps.has_value()) out->set_arrival_rate_rps(*p.arrival_rate_rps);
  out->set_output_tokens_per_second(p.output_tokens_per_second);
  out->set_requests_per_second(p.requests_per_second);
  // A point before a cut curve's safe point carries only the quantiles its
  // SLO check read (latencies_partial): the others were not computed (0).
  auto set = [&p](double value, void (v1::LoadCurvePoint::*setter)(double),
                  v1::LoadCurvePoint* point) {
    if (!p.latencies_partial || value > 0) (point->*setter)(value);
  };
  if (p.stable && p.ttft.has_value()) {
    set(p.ttft->p50_seconds, &v1::LoadCurvePoint::set_ttft_p50_seconds, out);
    set(p.ttft->p90_seconds, &v1::LoadCurvePoint::set_ttft_p90_seconds, out);
    set(p.ttft->p95_seconds, &v1::LoadCurvePoint::set_ttft_p95_seconds, out);
    set(p.ttft->p99_seconds, &v1::LoadCurvePoint::set_ttft_p99_seconds, out);
  }
  if (p.stable && p.tpot_seconds.has_value()) out->set_tpot_seconds(*p.tpot_seconds);
  if (p.stable && p.e2e.has_value()) {
    set(p.e2e->p50_seconds, &v1::LoadCurvePoint::set_e2e_p50_seconds, out);
    set(p.e2e->p95_seconds, &v1::LoadCurvePoint::set_e2e_p95_seconds, out);
  }
  out->set_mean_batch_size(p.mean_batch_size);
  if (p.stable && p.mean_queue_length.has_value()) out->set_mean_queue_length(*p.mean_queue_length);
  out->set_utilization(p.utilization);
  out->set_stable(p.stable);
  out->set_slot_wait_probability(p.slot_wait_probability);
}

void FillKnee(const model::Knee& knee, bool closed_loop, v1::Knee* out) {
  if (closed_loop) {
    out->set_concurrency(knee.load);
  } else {
    out->set_arrival_rate_rps(knee.load);
  }
  out->set_last_flat_index(static_cast<uint32_t>(knee.last_flat_index));
  out->set_first_steep_index(static_cast<uint32_t>(knee.first_steep_index));
}

void FillSafePoint(const model::LoadCurve& curve, v1::SafeOperatingPoint* out) {
  out->set_binding(ToProtoBinding(curve.safe.binding));
  if (!curve.safe.index.has_value()) return;
  const model::LoadPoint& p = curve.points[*curve.safe.index];
  out->set_found(true);
  if (p.concurrency.has_value()) out->set_concurrency(static_cast<uint32_t>(*p.concurrency));
  if (p.arrival_rate_rps.has_value()) out->set_arrival_rate_rps(*p.arrival_rate_rps);
  FillCurvePoint(p, out->mutable_point());
}

void FillStepTimeFit(const model::StepTimeCoefficients& c,
                     const std::optional<model::CalibrationResult>& fit, v1::StepTimeFit* out) {
  out->set_alpha_seconds(c.alpha_seconds);
  out->set_beta_weights(c.beta_weights);
  out->set_beta_kv(c.beta_kv);
  out->set_beta_flops(c.beta_flops);
  out->set_beta_comm(c.beta_comm);
  out->set_request_latency_seconds(c.request_latency_seconds);
  if (!fit.has_value()) return;
  for (int j = 0; j < model::kNumStepFeatures; ++j) {
    if (fit->identified[j]) out->add_identified(model::StepFeatureName(j));
  }
  out->set_used_prior(fit->used_prior);
  out->set_observations(static_cast<uint32_t>(fit->observations.size()));
  if (fit->relative_error_band.has_value()) out->set_relative_error_band(*fit->relative_error_band);
  if (fit->relative_rms_residual.has_value()) {
    out->set_relative_rms_residual(*fit->relative_rms_residual);
  }
}

double KneeLoad(const v1::Knee& knee) {
  return knee.has_concurrency() ? knee.concurrency() : knee.arrival_rate_rps();
}

v1::Tier ToProtoTier(model::Tier tier) {
  switch (tier) {
    case model::Tier::kMeasured:
      return v1::TIER_MEASURED;
    case model::Tier::kCalibrated:
      return v1::TIER_CALIBRATED;
    case model::Tier::kExtrapolated:
      return v1::TIER_EXTRAPOLATED;
    case model::Tier::kRoofline:
      return v1::TIER_ROOFLINE;
  }
  return v1::TIER_UNSPECIFIED;
}

v1::LoadBinding ToProtoBinding(model::BindingLimit binding) {
  switch (binding) {
    case model::BindingLimit::kLoadRange:
      return v1::LOAD_BINDING_LOAD_RANGE;
    case model::BindingLimit::kTtftP95:
      return v1::LOAD_BINDING_TTFT_P95;
    case model::BindingLimit::kTpot:
      return v1::LOAD_BINDING_TPOT;
    case model::BindingLimit::kE2eP95:
      return v1::LOAD_BINDING_E2E_P95;
    case model::BindingLimit::kSlotWait:
      return v1::LOAD_BINDING_SLOT_WAIT;
    case model::BindingLimit::kStability:
      return v1::LOAD_BINDING_STABILITY;
  }
  return v1::LOAD_BINDING_UNSPECIFIED;
}

v1::SlotBound ToProtoSlotBound(model::SlotBound bound) {
  switch (bound) {
    case model::SlotBound::kRunningRequestLimit:
      return v1::SLOT_BOUND_RUNNING_REQUEST_LIMIT;
    case model::SlotBound::kOperatorGate:
      return v1::SLOT_BOUND_OPERATOR_GATE;
    case model::SlotBound::kKvPool:
      return v1::SLOT_BOUND_KV_POOL;
    case model::SlotBound::kStateSlots:
      return v1::SLOT_BOUND_STATE_SLOTS;
  }
  return v1::SLOT_BOUND_UNSPECIFIED;
}

}  // namespace capplan::service
