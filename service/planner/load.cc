#include "service/planner/load.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <set>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "model/step_inputs.h"
#include "model/architecture.h"
#include "model/memory_model.h"
#include "service/planner/memory.h"
#include "service/translate/model_translation.h"
#include "base/status_macros.h"

namespace capplan::service {
namespace {

// A card whose memory is unknown (the baseline withholds it): the memory
// model is asked for weights and KV bytes per token only, with no memory
// limit; the pool comes from the baseline's own statement.
constexpr double kUnboundedMemoryBytes = 1e15;
// Relative tolerance for "a row measured the request's point".
constexpr double kSameWorkloadTolerance = 0.05;
// Weight (in observations) of the roofline regulariser for rank-deficient
// fits.
constexpr double kRooflinePriorWeight = 0.1;

int DraftTokens(const v1::SpeculativeDecoding& s) {
  return SpeculationOn(s) ? std::max<int>(1, static_cast<int>(s.num_speculative_tokens())) : 0;
}

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

model::Workload ToModelWorkload(const v1::WorkloadSpec& w) {
  model::Workload out;
  out.input_tokens = w.input_tokens();
  out.output_tokens = w.output_tokens();
  out.input_tokens_cv = w.has_input_tokens_cv() ? w.input_tokens_cv() : 0.0;
  out.output_tokens_cv = w.has_output_tokens_cv() ? w.output_tokens_cv() : 0.0;
  out.prefix_cache_hit_rate = w.has_prefix_cache_hit_rate() ? w.prefix_cache_hit_rate() : 0.0;
  return out;
}

// Peak FLOP/s of the format the GEMMs run in (model::GemmFormatPreference):
// the first the card states a peak for.
std::pair<double, std::string> ComputePeak(const v1::Hardware& hardware,
                                           model::WeightFormat format, model::NumberType native) {
  for (model::GemmFormat g : model::GemmFormatPreference(format, native)) {
    v1::NumberFormat f = v1::NUMBER_FORMAT_BF16;
    switch (g) {
      case model::GemmFormat::kFp4: f = v1::NUMBER_FORMAT_FP4; break;
      case model::GemmFormat::kFp8: f = v1::NUMBER_FORMAT_FP8; break;
      case model::GemmFormat::kFp16: f = v1::NUMBER_FORMAT_FP16; break;
      case model::GemmFormat::kBf16: f = v1::NUMBER_FORMAT_BF16; break;
    }
    double peak = PeakFlops(hardware, f);
    if (peak > 0) {
      std::string name = v1::NumberFormat_Name(f);
      return {peak, name.substr(name.rfind('_') + 1)};
    }
  }
  return {0, ""};
}

v1::MemoryPlan WithheldMemoryPlan(const ResolvedDeployment& r, const model::MemoryPlan& m) {
  v1::MemoryPlan plan;
  FillWeightsByComponent(m, plan.mutable_weights_by_component());
  plan.mutable_per_gpu()->set_weights_bytes(
      static_cast<uint64_t>(std::llround(m.per_gpu.weights_bytes)));
  plan.set_kv_bytes_per_token(static_cast<uint64_t>(std::llround(m.kv_bytes_per_token)));
  plan.set_fits(true);
  plan.set_binding_constraint("NONE");
  FillResolvedDeploymentCommon(r, m, plan.mutable_deployment());
  plan.mutable_provenance()->set_tier(v1::TIER_ROOFLINE);
  if (r.baseline != nullptr) plan.mutable_provenance()->add_baseline_ids(r.baseline->id());
  plan.add_notes(
      "the baseline withholds its GPU: weights and KV bytes per token are the model's; the "
      "card's memory, hence the KV pool size, is unknown to the memory model");
  return plan;
}

std::string Where(const std::string& baseline, const std::string& sweep, const std::string& row) {
  return absl::StrCat(baseline.empty() ? "calibration" : baseline, "/", sweep, "/", row);
}

}  // namespace

// ------------------------------------------------------------------ validation

absl::Status ValidateLoadQuery(const LoadQuery& q) {
  const std::string& p = q.path;
  const v1::WorkloadSpec& w = q.workload;
  CAPPLAN_RETURN_IF_ERROR(CheckPositive(p + ".workload.input_tokens", w.input_tokens()));
  CAPPLAN_RETURN_IF_ERROR(CheckPositive(p + ".workload.output_tokens", w.output_tokens()));
  if (w.output_tokens() < 1 || w.input_tokens() < 1) {
    return Invalid(p + (w.input_tokens() < 1 ? ".workload.input_tokens" : ".workload.output_tokens"),
                   w.input_tokens() < 1 ? w.input_tokens() : w.output_tokens(),
                   "must be >= 1 token");
  }
  for (const auto& [name, has, value] :
       {std::make_tuple("input_tokens_cv", w.has_input_tokens_cv(), w.input_tokens_cv()),
        std::make_tuple("output_tokens_cv", w.has_output_tokens_cv(), w.output_tokens_cv())}) {
    if (has && (!std::isfinite(value) || value < 0 || value > 4)) {
      return Invalid(absl::StrCat(p, ".workload.", name), value, "must be in [0, 4]");
    }
  }
  if (w.has_prefix_cache_hit_rate() &&
      (!std::isfinite(w.prefix_cache_hit_rate()) || w.prefix_cache_hit_rate() < 0 ||
       w.prefix_cache_hit_rate() >= 1)) {
    return Invalid(p + ".workload.prefix_cache_hit_rate", w.prefix_cache_hit_rate(),
                   "must be in [0, 1)");
  }
  if (q.closed_loop.has_value() == q.open_loop.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(
        p, ".load: ", q.closed_loop.has_value() ? "both" : "neither",
        " of closed_loop and open_loop set; set exactly one (closed_loop.concurrencies or "
        "open_loop.arrival_rates_rps)"));
  }
  if (q.closed_loop.has_value()) {
    const std::string f = p + ".closed_loop.concurrencies";
    const auto& cs = q.closed_loop->concurrencies();
    if (cs.empty()) return absl::InvalidArgumentError(f + " is empty; give at least one");
    if (cs.size() > model::kMaxLoadPoints) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s has %d entries; must be at most %d", f, cs.size(), model::kMaxLoadPoints));
    }
    for (int i = 0; i < cs.size(); ++i) {
      if (cs[i] < 1 || cs[i] > static_cast<uint32_t>(model::kMaxClosedLoopConcurrency)) {
        return Invalid(absl::StrCat(f, "[", i, "]"), cs[i],
                       absl::StrCat("must be in [1, ", model::kMaxClosedLoopConcurrency, "]"));
      }
      if (i > 0 && cs[i] <= cs[i - 1]) {
        return Invalid(absl::StrCat(f, "[", i, "]"), cs[i],
                       absl::StrCat("must be greater than ", f, "[", i - 1, "] = ", cs[i - 1],
                                    " (strictly increasing)"));
      }
    }
    if (q.closed_loop->has_think_time_seconds()) {
      double z = q.closed_loop->think_time_seconds();
      if (!std::isfinite(z) || z < 0) {
        return Invalid(p + ".closed_loop.think_time_seconds", z, "must be >= 0");
      }
    }
  } else {
    const std::string f = p + ".open_loop.arrival_rates_rps";
    const auto& rs = q.open_loop->arrival_rates_rps();
    if (rs.empty()) return absl::InvalidArgumentError(f + " is empty; give at least one");
    if (rs.size() > model::kMaxLoadPoints) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s has %d entries; must be at most %d", f, rs.size(), model::kMaxLoadPoints));
    }
    for (int i = 0; i < rs.size(); ++i) {
      CAPPLAN_RETURN_IF_ERROR(CheckPositive(absl::StrCat(f, "[", i, "]"), rs[i]));
      if (i > 0 && rs[i] <= rs[i - 1]) {
        return Invalid(absl::StrCat(f, "[", i, "]"), rs[i],
                       absl::StrCat("must be greater than ", f, "[", i - 1, "] = ", rs[i - 1],
                                    " (strictly increasing)"));
      }
    }
  }
  const v1::Slo& slo = q.slo;
  if (slo.has_ttft_p95_seconds()) {
    CAPPLAN_RETURN_IF_ERROR(CheckPositive(p + ".slo.ttft_p95_seconds", slo.ttft_p95_seconds()));
  }
  if (slo.has_tpot_seconds()) {
    CAPPLAN_RETURN_IF_ERROR(CheckPositive(p + ".slo.tpot_seconds", slo.tpot_seconds()));
  }
  if (slo.has_e2e_p95_seconds()) {
    CAPPLAN_RETURN_IF_ERROR(CheckPositive(p + ".slo.e2e_p95_seconds", slo.e2e_p95_seconds()));
  }
  if (q.operator_concurrency_gate.has_value() && *q.operator_concurrency_gate == 0) {
    return Invalid(p + ".operator_concurrency_gate", 0, "must be >= 1");
  }
  return absl::OkStatus();
}

// ------------------------------------------------------------ deployment

model::SpeculativeDecoding SpeculationFor(const DeploymentPerformance& perf, int draft_tokens,
                                          double acceptance_rate) {
  model::SpeculativeDecoding s;
  if (perf.speculative.has_value()) {
    s = *perf.speculative;
  } else if (perf.draft.has_value()) {
    s = *perf.draft;
  }
  s.draft_tokens = draft_tokens;
  s.acceptance_rate = std::clamp(acceptance_rate, 0.0, 1.0);
  return s;
}

absl::StatusOr<DeploymentPerformance> DescribePerformance(const Catalog& catalog,
                                                          const ResolvedDeployment& r) {
  DeploymentPerformance perf;
  perf.hardware_withheld = r.hardware == nullptr;
  model::MemoryPlanInput input = r.input;
  if (perf.hardware_withheld) input.hardware.memory_bytes = kUnboundedMemoryBytes;
  CAPPLAN_ASSIGN_OR_RETURN(model::MemoryPlan m, model::PlanMemory(input));
  if (perf.hardware_withheld) {
    perf.memory = WithheldMemoryPlan(r, m);
  } else {
    CAPPLAN_ASSIGN_OR_RETURN(perf.memory, PlanMemoryFor(catalog, r, std::nullopt));
  }

  const model::ModelArchitecture& arch = r.input.arch;
  const int tp = static_cast<int>(std::max<uint32_t>(1, r.parallelism.tp()));
  const int pp = static_cast<int>(std::max<uint32_t>(1, r.parallelism.pp()));
  model::StepTimeInputs& in = perf.inputs;
  in = model::StepInputsFromMemoryPlan(arch, m, tp, pp);
  if (perf.hardware_withheld) {
    in.memory_bandwidth_bytes_per_second = 1;
    in.peak_flops_per_second = 1;
    if (tp > 1) in.link_bandwidth_bytes_per_second = 1;
    perf.notes.push_back(
        "the baseline withholds its GPU: bandwidths and peak FLOP/s are taken as 1 (unknown "
        "units), so the fitted β's carry the card's own speeds; figures hold for that card only");
  } else {
    const v1::Hardware& hw = *r.hardware;
    in.memory_bandwidth_bytes_per_second = hw.memory_bandwidth_bytes_per_second();
    auto [peak, format] = ComputePeak(hw, r.input.quantization.format, arch.native_dtype);
    if (!(in.memory_bandwidth_bytes_per_second > 0) || !(peak > 0)) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "hardware '%s' states no memory bandwidth or 16-bit peak compute; the step-time "
          "model needs both",
          hw.id()));
    }
    in.peak_flops_per_second = peak;
    perf.notes.push_back(absl::StrFormat("GEMMs counted at the card's dense %s peak", format));
    if (tp > 1) {
      v1::Interconnect link = hw.intra_node();
      if (r.baseline != nullptr && r.baseline->deployment().has_interconnect() &&
          r.baseline->deployment().hardware_id() == hw.id()) {
        const v1::Interconnect& own = r.baseline->deployment().interconnect();
        if (own.kind() != v1::LINK_KIND_UNSPECIFIED) link.set_kind(own.kind());
        if (own.bandwidth_bytes_per_second() > 0) {
          link.set_bandwidth_bytes_per_second(own.bandwidth_bytes_per_second());
        }
        link.set_peer_to_peer(own.peer_to_peer());
      }
      double bw = link.bandwidth_bytes_per_second();
      if (!(bw > 0)) {
        return absl::FailedPreconditionError(absl::StrFormat(
            "hardware '%s' states no intra-node link bandwidth; tp = %d needs it", hw.id(), tp));
      }
      const bool staged = link.kind() == v1::LINK_KIND_PCIE && !link.peer_to_peer();
      bw = model::AllReduceLinkBandwidth(bw, staged);
      if (staged) {
        perf.notes.push_back(
            "PCIe without peer-to-peer: all-reduce traffic staged through host memory (half the "
            "link bandwidth)");
      }
      in.link_bandwidth_bytes_per_second = bw;
    }
  }

  perf.scheduler.max_batched_tokens = static_cast<int>(std::max<int64_t>(1, m.max_num_batched_tokens));
  if (m.max_num_seqs > 0) perf.limits.max_running_requests = static_cast<int>(m.max_num_seqs);
  if (m.state_slots > 0 && m.state_bytes_per_request > 0) {
    perf.limits.state_slots = static_cast<int>(std::min<int64_t>(m.state_slots, model::kMaxSlots));
  }
  if (!perf.hardware_withheld) {
    if (perf.memory.kv_pool_tokens() > 0) {
      perf.limits.kv_pool_tokens = static_cast<double>(perf.memory.kv_pool_tokens());
    }
  } else if (r.baseline != nullptr) {
    for (const v1::KvPool& pool : r.baseline->kv_pools()) {
      if (pool.has_tokens() && pool.tokens() > 0) {
        perf.limits.kv_pool_tokens = static_cast<double>(pool.tokens());
      } else if (pool.has_max_concurrent_sequences() && pool.has_at_sequence_tokens()) {
        perf.limits.kv_pool_tokens =
            pool.max_concurrent_sequences() * static_cast<double>(pool.at_sequence_tokens());
        perf.notes.push_back(absl::StrFormat(
            "KV pool taken as %s's %g sequences × %d tokens = %.0f tokens (derived from its "
            "statement '%s')",
            r.baseline->id(), pool.max_concurrent_sequences(), pool.at_sequence_tokens(),
            *perf.limits.kv_pool_tokens, pool.name()));
      }
      if (perf.limits.kv_pool_tokens.has_value()) {
        perf.memory.set_kv_pool_tokens(
            static_cast<uint64_t>(std::llround(*perf.limits.kv_pool_tokens)));
        break;
      }
    }
  }

  auto draft_pass = [&](const model::MemoryPlan& plan) {
    return model::DraftPassFromMemoryPlan(arch, plan, tp);
  };
  const v1::SpeculativeDecoding& spec = r.engine.speculative();
  if (SpeculationOn(spec)) {
    model::SpeculativeDecoding s = draft_pass(m);
    s.draft_tokens = DraftTokens(spec);
    s.acceptance_rate = spec.acceptance_rate();
    perf.speculative = s;
    if (spec.method() == v1::SPECULATIVE_METHOD_MTP) perf.draft = s;
  } else if (arch.num_mtp_layers > 0) {
    // The deployment does not speculate, but the model ships MTP layers:
    // what a draft pass would cost, for fitting measured MTP rows.
    model::MemoryPlanInput with_mtp = input;
    with_mtp.settings.speculative_method = model::SpeculativeMethod::kMtp;
    with_mtp.settings.num_speculative_tokens = 1;
    absl::StatusOr<model::MemoryPlan> mtp_plan = model::PlanMemory(with_mtp);
    if (mtp_plan.ok()) perf.draft = draft_pass(*mtp_plan);
  }
  return perf;
}

namespace {

// The deployment's slot limits behind `gate`; with no limit at all (a
// withheld card without a stated pool), the model's largest slot count.
model::SlotLimits LimitsWithGate(const DeploymentPerformance& perf, std::optional<int> gate) {
  model::SlotLimits limits = perf.limits;
  limits.operator_concurrency_gate = gate;
  if (!limits.max_running_requests.has_value() && !gate.has_value() &&
      !limits.kv_pool_tokens.has_value() && !limits.state_slots.has_value()) {
    limits.max_running_requests = model::kMaxSlots;
  }
  return limits;
}

}  // namespace

absl::StatusOr<model::CalibrationContext> CalibrationContextFor(
    const DeploymentPerformance& perf, const model::Workload& workload, std::optional<int> gate) {
  CAPPLAN_ASSIGN_OR_RETURN(model::Slots slots,
                           model::ComputeSlots(LimitsWithGate(perf, gate), workload));
  model::CalibrationContext ctx;
  ctx.inputs = perf.inputs;
  ctx.scheduler = perf.scheduler;
  ctx.slots = slots.slots;
  return ctx;
}

// ------------------------------------------------------------------ points

absl::StatusOr<v1::WorkloadSpec> SweepWorkload(const v1::Baseline& baseline,
                                               const v1::Sweep& sweep,
                                               std::vector<std::string>* notes) {
  v1::WorkloadSpec w;
  const v1::Workload& sw = sweep.workload();
  if (sw.has_output_tokens() && sw.output_tokens() > 0) {
    w.set_output_tokens(sw.output_tokens());
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
  return w;
}

namespace {

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
  if (!(sweep.workload().has_output_tokens() && sweep.workload().output_tokens() > 0) &&
      row.has_output_tokens_per_second() && row.has_requests_per_second() &&
      row.requests_per_second() > 0) {
    p.workload.output_tokens = row.output_tokens_per_second() / row.requests_per_second();
  }
  if (row.has_output_tokens_per_second()) p.output_tokens_per_second = row.output_tokens_per_second();
  if (row.has_requests_per_second()) p.requests_per_second = row.requests_per_second();
  if (row.has_per_user_output_tokens_per_second()) {
    p.per_user_output_tokens_per_second = row.per_user_output_tokens_per_second();
  }
  p.ttft_seconds = Figure(row.ttft(), false);
  p.tpot_seconds = Figure(row.tpot(), true);
  p.e2e_seconds = Figure(row.e2e(), false);
  sp.has_ttft = p.ttft_seconds.has_value();
  sp.has_tpot = p.tpot_seconds.has_value();
  sp.has_e2e = p.e2e_seconds.has_value();
  sp.has_throughput = p.output_tokens_per_second.has_value() ||
                      p.per_user_output_tokens_per_second.has_value() ||
                      p.requests_per_second.has_value();
  sp.speculative = SpeculationOn(speculation);
  sp.draft_tokens = DraftTokens(speculation);
  return sp;
}

}  // namespace

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
    sp.has_ttft = sp.point.ttft_seconds.has_value();
    sp.has_tpot = sp.point.tpot_seconds.has_value();
    sp.speculative = SpeculationOn(run.speculative());
    sp.draft_tokens = DraftTokens(run.speculative());
    if (sp.has_ttft || sp.has_tpot) out.push_back(std::move(sp));
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
      sp.has_ttft = sp.point.ttft_seconds.has_value();
      sp.has_throughput = true;
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
      for (const auto& [name, has, value] : {
               std::make_tuple("output_tokens_per_second", row.has_output_tokens_per_second(),
                               row.output_tokens_per_second()),
               std::make_tuple("per_user_output_tokens_per_second",
                               row.has_per_user_output_tokens_per_second(),
                               row.per_user_output_tokens_per_second()),
               std::make_tuple("requests_per_second", row.has_requests_per_second(),
                               row.requests_per_second())}) {
        if (has) CAPPLAN_RETURN_IF_ERROR(CheckPositive(absl::StrCat(rp, ".", name), value));
      }
      if (!(w.input_tokens() >= 1) || !(w.output_tokens() >= 1)) {
        return absl::InvalidArgumentError(absl::StrCat(
            sp_path, ".workload: input_tokens and output_tokens are needed (the sweep's or the "
                     "request's)"));
      }
      std::optional<SourcedPoint> p =
          RowPoint(row, sweep, w, sweep.closed_loop() || row.has_concurrency(),
                   sweep.speculative(), "");
      if (p.has_value()) {
        p->point.source = absl::StrCat(rp);
        out.push_back(*std::move(p));
      }
    }
  }
  return out;
}

// -------------------------------------------------------------------- fitting

namespace {

double SquaredLogError(double predicted, double measured) {
  if (!(predicted > 0) || !(measured > 0)) return 1e6;
  const double e = std::log(predicted / measured);
  return e * e;
}

// Calibrates without a prior; when the rows leave a direction of the
// coefficients undetermined (e.g. FLOPs and all-reduce bytes both grow with
// tokens), regularises weakly towards the roofline (α = 0, every β = 1: the
// hardware at its specification), which only decides what the data leave
// open.
absl::StatusOr<model::CalibrationResult> CalibrateOrRegularise(
    const model::CalibrationContext& ctx, const std::vector<model::MeasuredPoint>& points) {
  model::CalibrationOptions strict;
  strict.require_identifiable = true;
  absl::StatusOr<model::CalibrationResult> r =
      model::Calibrate(ctx, points, std::nullopt, strict);
  if (r.ok() || r.status().code() != absl::StatusCode::kFailedPrecondition) return r;
  model::CoefficientPrior prior;
  prior.coefficients = model::StepTimeCoefficients::Roofline();
  prior.weight = kRooflinePriorWeight;
  return model::Calibrate(ctx, points, prior);
}


}  // namespace

absl::StatusOr<PerformanceFit> FitPerformance(const model::CalibrationContext& ctx,
                                              const DeploymentPerformance& perf,
                                              const std::vector<SourcedPoint>& points) {
  std::vector<model::MeasuredPoint> plain, spec;
  for (const SourcedPoint& sp : points) {
    if (sp.speculative) {
      model::MeasuredPoint p = sp.point;
      p.speculative = SpeculationFor(perf, sp.draft_tokens, 0.0);
      spec.push_back(std::move(p));
    } else {
      plain.push_back(sp.point);
    }
  }
  PerformanceFit out;
  if (spec.empty() ||
      (!perf.speculative.has_value() && !perf.draft.has_value() && !plain.empty())) {
    // No speculative rows, or no draft layers to model them with: the plain
    // rows alone.
    if (plain.empty()) return absl::FailedPreconditionError("no measured rows to fit on");
    CAPPLAN_ASSIGN_OR_RETURN(out.calibration, CalibrateOrRegularise(ctx, plain));
  } else {
    // Coefficients and the acceptance rate together: for each acceptance
    // rate the coefficients are fitted on every row; the rate whose fit
    // leaves the smallest (Huber-weighted) relative residuals wins.
    std::optional<model::CalibrationResult> best;
    double best_loss = std::numeric_limits<double>::infinity();
    double best_a = 0;
    auto fit_at = [&](double a) -> double {
      std::vector<model::MeasuredPoint> ps = plain;
      for (model::MeasuredPoint p : spec) {
        p.speculative->acceptance_rate = a;
        ps.push_back(std::move(p));
      }
      absl::StatusOr<model::CalibrationResult> r = CalibrateOrRegularise(ctx, ps);
      if (!r.ok()) return std::numeric_limits<double>::infinity();
      double loss = 0;
      for (const model::Observation& o : r->observations) {
        loss += o.huber_weight * SquaredLogError(o.fitted_seconds, o.observed_seconds);
      }
      if (loss < best_loss) best_loss = loss, best = *r, best_a = a;
      return loss;
    };
    model::MinimiseOnUnitInterval(fit_at);
    if (!best.has_value()) {
      return absl::FailedPreconditionError(
          "the measured rows cannot determine the step-time coefficients at any acceptance rate");
    }
    out.calibration = *best;
    out.acceptance_rate = best_a;
  }
  out.observations = static_cast<int>(out.calibration.observations.size());
  return out;
}

// ------------------------------------------------------------------ predict

v1::ClosedLoopAxis ConcurrencyGrid(uint32_t top, std::optional<uint32_t> include) {
  std::set<uint32_t> grid;
  for (uint32_t c = 1; c <= std::min<uint32_t>(top, 256); ++c) grid.insert(c);
  for (double c = 256; c <= top; c *= 1.25) grid.insert(static_cast<uint32_t>(c));
  if (include.has_value()) grid.insert(*include);
  v1::ClosedLoopAxis axis;
  for (uint32_t c : grid) axis.add_concurrencies(c);
  return axis;
}

v1::OpenLoopAxis RateGrid(double unit_rps, int sixty_fourths) {
  v1::OpenLoopAxis axis;
  for (int k = 1; k <= sixty_fourths; ++k) axis.add_arrival_rates_rps(unit_rps * k / 64.0);
  return axis;
}

std::optional<int> BaselineGate(const v1::Baseline& b) {
  if (!b.deployment().has_concurrency_gate()) return std::nullopt;
  return static_cast<int>(b.deployment().concurrency_gate());
}

absl::StatusOr<BaselineFitSetup> PrepareBaselineFit(const Catalog& catalog,
                                                    const v1::Baseline& b,
                                                    bool allow_withheld_hardware,
                                                    size_t min_rows,
                                                    absl::string_view purpose) {
  v1::Deployment d;
  d.set_baseline_id(b.id());
  CAPPLAN_ASSIGN_OR_RETURN(ResolvedDeployment r,
                           allow_withheld_hardware
                               ? ResolveDeploymentAllowingWithheldHardware(catalog, d, "baseline")
                               : ResolveDeployment(catalog, d, "baseline"));
  BaselineFitSetup setup;
  CAPPLAN_ASSIGN_OR_RETURN(setup.performance, DescribePerformance(catalog, r));
  std::vector<std::string> ignored;
  CAPPLAN_ASSIGN_OR_RETURN(setup.points, BaselinePoints(b, true, &ignored));
  if (setup.points.size() < std::max<size_t>(min_rows, 1)) {
    return absl::FailedPreconditionError(
        absl::StrFormat("baseline '%s' has %d measured rows; %s needs at least %d", b.id(),
                        setup.points.size(), std::string(purpose), min_rows));
  }
  CAPPLAN_ASSIGN_OR_RETURN(setup.context,
                           CalibrationContextFor(setup.performance,
                                                 setup.points.front().point.workload,
                                                 BaselineGate(b)));
  return setup;
}

int TransferRank(const v1::Hardware& target, const v1::Hardware& candidate,
                 bool same_model) {
  auto same = [](const std::string& a, const std::string& b) {
    return !a.empty() && absl::AsciiStrToLower(a) == absl::AsciiStrToLower(b);
  };
  int hardware_class = 0;
  if (target.id() == candidate.id()) {
    hardware_class = 3;
  } else if (same(target.vendor(), candidate.vendor()) &&
             same(target.architecture(), candidate.architecture())) {
    hardware_class = 2;
  } else if (same(target.vendor(), candidate.vendor())) {
    hardware_class = 1;
  }
  return 2 * hardware_class + (same_model ? 1 : 0);
}

namespace {

struct FitSource {
  std::optional<PerformanceFit> fit;
  v1::Tier base_tier = v1::TIER_ROOFLINE;  // CALIBRATED, EXTRAPOLATED or ROOFLINE
  std::vector<std::string> baseline_ids;
  bool inline_calibration = false;
  std::vector<SourcedPoint> own_points;   // this configuration's rows
  std::vector<SourcedPoint> inline_points;  // the request's calibration rows
};

bool OwnBaseline(const v1::Baseline& b, const ResolvedDeployment& r) {
  if (r.hardware == nullptr) return r.baseline == &b;
  return BaselineMatches(b, r);
}

void AddUnique(std::vector<std::string>* ids, const std::string& id) {
  if (!id.empty() && std::find(ids->begin(), ids->end(), id) == ids->end()) ids->push_back(id);
}

// Fits a baseline of another configuration on its own deployment (its
// coefficients are efficiencies, so they carry over).
absl::StatusOr<PerformanceFit> FitOtherBaseline(const Catalog& catalog, const v1::Baseline& b) {
  CAPPLAN_ASSIGN_OR_RETURN(BaselineFitSetup setup,
                           PrepareBaselineFit(catalog, b, false, 1, "a transfer"));
  return FitPerformance(setup.context, setup.performance, setup.points);
}

const char* TransferClassName(int rank) {
  switch (rank / 2) {
    case 3:
      return "same card";
    case 2:
      return "same architecture";
    case 1:
      return "same vendor";
    default:
      return "another vendor";
  }
}

absl::StatusOr<FitSource> ChooseFit(const Catalog& catalog, const ResolvedDeployment& r,
                                    const DeploymentPerformance& perf, const LoadQuery& q,
                                    std::optional<int> gate, std::vector<std::string>* notes) {
  FitSource src;
  std::vector<SourcedPoint> points;
  std::optional<int> fit_gate = gate;
  if (!q.no_catalog_calibration) {
    for (const v1::Baseline& b : catalog.baselines()) {
      if (!OwnBaseline(b, r)) continue;
      CAPPLAN_ASSIGN_OR_RETURN(std::vector<SourcedPoint> ps, BaselinePoints(b, true, notes));
      if (ps.empty()) continue;
      AddUnique(&src.baseline_ids, b.id());
      if (!q.operator_concurrency_gate.has_value() && BaselineGate(b).has_value()) {
        fit_gate = BaselineGate(b);
      }
      for (SourcedPoint& p : ps) {
        src.own_points.push_back(p);
        points.push_back(std::move(p));
      }
    }
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::vector<SourcedPoint> inline_points,
                           InlinePoints(q.calibration, q.workload, q.path));
  if (!inline_points.empty()) {
    src.inline_calibration = true;
    src.inline_points = inline_points;
    for (SourcedPoint& p : inline_points) points.push_back(std::move(p));
  }
  if (!points.empty()) {
    CAPPLAN_ASSIGN_OR_RETURN(model::CalibrationContext ctx,
                             CalibrationContextFor(perf, points.front().point.workload, fit_gate));
    absl::StatusOr<PerformanceFit> fit = FitPerformance(ctx, perf, points);
    if (!fit.ok()) {
      return absl::Status(fit.status().code(),
                          absl::StrCat("fitting the step-time model on ", points.size(),
                                       " measured rows: ", fit.status().message()));
    }
    src.fit = *std::move(fit);
    src.base_tier = v1::TIER_CALIBRATED;
    return src;
  }
  if (!q.no_catalog_calibration) {
    // Another configuration with a known card, closest hardware class first.
    std::vector<std::pair<int, const v1::Baseline*>> candidates;
    for (const v1::Baseline& b : catalog.baselines()) {
      if (b.deployment().hardware_id().empty() || b.sweeps().empty()) continue;
      const v1::Hardware* hw = catalog.FindHardware(b.deployment().hardware_id());
      if (hw == nullptr) continue;
      const bool same_model = !r.model_id.empty() && b.deployment().model_id() == r.model_id;
      const int rank = r.hardware != nullptr ? TransferRank(*r.hardware, *hw, same_model)
                                             : static_cast<int>(same_model);
      candidates.emplace_back(rank, &b);
    }
    std::stable_sort(candidates.begin(), candidates.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    for (const auto& [rank, b] : candidates) {
      absl::StatusOr<PerformanceFit> fit = FitOtherBaseline(catalog, *b);
      if (!fit.ok()) continue;
      src.fit = *std::move(fit);
      src.base_tier = v1::TIER_EXTRAPOLATED;
      src.baseline_ids.push_back(b->id());
      notes->push_back(absl::StrFormat(
          "no baseline measured this configuration: step-time efficiencies transferred from "
          "'%s' (%s on %s, %s) by roofline ratios",
          b->id(), b->deployment().model_id(), b->deployment().hardware_id(),
          TransferClassName(rank)));
      return src;
    }
  }
  notes->push_back(
      "no measured rows apply: roofline step times (α = 0, every β = 1), an optimistic bound");
  return src;
}

std::string MetricName(int metric) {
  static const char* const kNames[] = {"throughput", "ttft", "tpot", "e2e"};
  return kNames[metric];
}

// Relative RMS misfit of the fit's observations of one kind.
std::optional<double> KindBand(const model::CalibrationResult& fit, model::ObservationKind kind) {
  double ss = 0;
  int n = 0;
  for (const model::Observation& o : fit.observations) {
    if (o.kind != kind || o.huber_weight < 0.5) continue;
    const double e = o.fitted_seconds / o.observed_seconds - 1;
    ss += e * e;
    ++n;
  }
  if (n < 2) return fit.relative_error_band;
  return std::sqrt(ss / n);
}

void FillPoint(const model::LoadPoint& p, v1::LoadCurvePoint* out) {
  if (p.concurrency.has_value()) out->set_concurrency(static_cast<uint32_t>(*p.concurrency));
  if (p.arrival_rate_rps.has_value()) out->set_arrival_rate_rps(*p.arrival_rate_rps);
  out->set_output_tokens_per_second(p.output_tokens_per_second);
  out->set_requests_per_second(p.requests_per_second);
  if (p.stable && p.ttft.has_value()) {
    out->set_ttft_p50_seconds(p.ttft->p50_seconds);
    out->set_ttft_p90_seconds(p.ttft->p90_seconds);
    out->set_ttft_p95_seconds(p.ttft->p95_seconds);
    out->set_ttft_p99_seconds(p.ttft->p99_seconds);
  }
  if (p.stable && p.tpot_seconds.has_value()) out->set_tpot_seconds(*p.tpot_seconds);
  if (p.stable && p.e2e.has_value()) {
    out->set_e2e_p50_seconds(p.e2e->p50_seconds);
    out->set_e2e_p95_seconds(p.e2e->p95_seconds);
  }
  out->set_mean_batch_size(p.mean_batch_size);
  if (p.stable && p.mean_queue_length.has_value()) out->set_mean_queue_length(*p.mean_queue_length);
  out->set_utilization(p.utilization);
  out->set_stable(p.stable);
  out->set_slot_wait_probability(p.slot_wait_probability);
}

bool Near(double a, double b) { return std::abs(a - b) <= kSameWorkloadTolerance * std::max(a, b); }

// Whether a measured row of this configuration stands at curve point `p` for
// `metric` (0 throughput, 1 TTFT, 2 TPOT, 3 e2e): same speculation, same
// workload, same load.
bool RowMeasures(const SourcedPoint& sp, const model::LoadPoint& p, int metric, bool spec_on,
                 int draft, const model::Workload& workload, double think_time_seconds) {
  if (sp.speculative != spec_on || (spec_on && sp.draft_tokens != draft)) return false;
  const bool has = metric == 0 ? sp.has_throughput
                   : metric == 1 ? sp.has_ttft
                   : metric == 2 ? sp.has_tpot
                                 : sp.has_e2e;
  if (!has || !Near(sp.point.workload.input_tokens, workload.input_tokens) ||
      !Near(sp.point.workload.output_tokens, workload.output_tokens)) {
    return false;
  }
  if (p.concurrency.has_value() && sp.point.concurrency == p.concurrency &&
      think_time_seconds == sp.point.think_time_seconds) {
    return true;
  }
  return p.arrival_rate_rps.has_value() && sp.point.arrival_rate_rps.has_value() &&
         Near(*sp.point.arrival_rate_rps, *p.arrival_rate_rps);
}

}  // namespace

absl::StatusOr<v1::LoadCurve> PredictLoadFor(const Catalog& catalog, const ResolvedDeployment& r,
                                             const LoadQuery& q) {
  CAPPLAN_RETURN_IF_ERROR(ValidateLoadQuery(q));
  CAPPLAN_ASSIGN_OR_RETURN(DeploymentPerformance perf, DescribePerformance(catalog, r));
  std::vector<std::string> notes = perf.notes;
  const model::Workload workload = ToModelWorkload(q.workload);

  std::optional<int> gate;
  if (q.operator_concurrency_gate.has_value()) {
    gate = static_cast<int>(*q.operator_concurrency_gate);
  } else if (r.baseline != nullptr && BaselineGate(*r.baseline).has_value()) {
    gate = BaselineGate(*r.baseline);
    notes.push_back(absl::StrFormat("operator concurrency gate %d from baseline '%s'", *gate,
                                    r.baseline->id()));
  }

  CAPPLAN_ASSIGN_OR_RETURN(FitSource src, ChooseFit(catalog, r, perf, q, gate, &notes));
  // A deployment that cannot start serves nothing: no curve to draw.
  if (!perf.hardware_withheld && !perf.memory.fits()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s.deployment does not fit: %s is short by %.2f GiB per GPU (PlanMemory shows the "
        "account); there is no load to predict",
        q.path, perf.memory.binding_constraint(),
        static_cast<double>(perf.memory.shortfall_bytes()) / (1024.0 * 1024 * 1024)));
  }

  model::LoadCurveRequest req;
  // The knee on the median TTFT: at the lightest load the p95 has no
  // contention in it at all, so the p95's rise from its lightest-load value
  // is mostly prefill contention, not the slot queue the knee is about.
  req.knee.metric = model::KneeMetric::kTtftP50;
  req.model.inputs = perf.inputs;
  req.model.scheduler = perf.scheduler;
  req.model.coefficients =
      src.fit.has_value() ? src.fit->calibration.coefficients : model::StepTimeCoefficients::Roofline();
  if (perf.speculative.has_value()) {
    double a = perf.speculative->acceptance_rate;
    if (!(a > 0)) {
      if (src.fit.has_value() && src.fit->acceptance_rate.has_value()) {
        a = *src.fit->acceptance_rate;
        notes.push_back(absl::StrFormat(
            "speculative acceptance rate %.3f per draft token, fitted on the measured "
            "speculative rows",
            a));
      } else {
        return absl::FailedPreconditionError(absl::StrFormat(
            "%s.deployment: speculative decoding with %d draft tokens, but no acceptance rate is "
            "known (no measured speculative rows for this model); turn speculation off "
            "(speculative_method NONE) or calibrate with a speculative sweep",
            q.path, perf.speculative->draft_tokens));
      }
    }
    req.model.speculative = SpeculationFor(perf, perf.speculative->draft_tokens, a);
  }
  req.workload = workload;
  req.limits = LimitsWithGate(perf, gate);
  if (q.closed_loop.has_value()) {
    for (uint32_t c : q.closed_loop->concurrencies()) req.concurrencies.push_back(static_cast<int>(c));
    req.think_time_seconds = q.closed_loop->think_time_seconds();
  } else {
    for (double x : q.open_loop->arrival_rates_rps()) req.arrival_rates_rps.push_back(x);
  }
  if (q.slo.has_ttft_p95_seconds()) req.slo.ttft_p95_seconds = q.slo.ttft_p95_seconds();
  if (q.slo.has_tpot_seconds()) req.slo.tpot_seconds = q.slo.tpot_seconds();
  if (q.slo.has_e2e_p95_seconds()) req.slo.e2e_p95_seconds = q.slo.e2e_p95_seconds();

  absl::StatusOr<model::LoadCurve> curve = model::PredictLoadCurve(req);
  if (!curve.ok()) {
    return absl::Status(curve.status().code(),
                        absl::StrCat(q.path, ": ", curve.status().message()));
  }
  v1::LoadCurve out;
  for (const model::LoadPoint& p : curve->points) FillPoint(p, out.add_points());
  if (curve->knee.has_value()) {
    v1::Knee* k = out.mutable_knee();
    k->set_load(curve->knee->load);
    k->set_last_flat_index(static_cast<uint32_t>(curve->knee->last_flat_index));
    k->set_first_steep_index(static_cast<uint32_t>(curve->knee->first_steep_index));
  }
  v1::SafeOperatingPoint* safe = out.mutable_safe_operating_point();
  safe->set_binding(model::BindingLimitName(curve->safe.binding));
  if (curve->safe.index.has_value()) {
    const model::LoadPoint& p = curve->points[*curve->safe.index];
    safe->set_found(true);
    if (p.concurrency.has_value()) safe->set_concurrency(static_cast<uint32_t>(*p.concurrency));
    if (p.arrival_rate_rps.has_value()) safe->set_arrival_rate_rps(*p.arrival_rate_rps);
    FillPoint(p, safe->mutable_point());
  }
  out.mutable_slots()->set_slots(static_cast<uint32_t>(curve->slots.slots));
  out.mutable_slots()->set_bound(model::SlotBoundName(curve->slots.bound));

  v1::StepTimeFit* fit = out.mutable_coefficients();
  const model::StepTimeCoefficients& c = req.model.coefficients;
  fit->set_alpha_seconds(c.alpha_seconds);
  fit->set_beta_weights(c.beta_weights);
  fit->set_beta_kv(c.beta_kv);
  fit->set_beta_flops(c.beta_flops);
  fit->set_beta_comm(c.beta_comm);
  if (src.fit.has_value()) {
    const model::CalibrationResult& cal = src.fit->calibration;
    for (int j = 0; j < model::kNumStepFeatures; ++j) {
      if (cal.identified[j]) fit->add_identified(model::StepFeatureName(j));
    }
    fit->set_used_prior(cal.used_prior);
    fit->set_observations(static_cast<uint32_t>(cal.observations.size()));
    if (cal.relative_error_band.has_value()) fit->set_relative_error_band(*cal.relative_error_band);
    if (cal.relative_rms_residual.has_value()) {
      fit->set_relative_rms_residual(*cal.relative_rms_residual);
    }
  }

  // Provenance per metric. The measured range is the in-service population
  // of this configuration's rows with the request's speculative setting.
  const bool spec_on = perf.speculative.has_value();
  const int draft = spec_on ? perf.speculative->draft_tokens : 0;
  std::optional<double> lo, hi;
  for (const std::vector<SourcedPoint>* set : {&src.own_points, &src.inline_points}) {
    for (const SourcedPoint& sp : *set) {
      if (sp.speculative != spec_on || !sp.point.concurrency.has_value()) continue;
      double n = *sp.point.concurrency;
      lo = std::min(lo.value_or(n), n);
      hi = std::max(hi.value_or(n), n);
    }
  }
  for (int metric = 0; metric < 4; ++metric) {
    v1::MetricProvenance* mp = out.add_provenance();
    mp->set_metric(MetricName(metric));
    for (const std::string& id : src.baseline_ids) mp->add_baseline_ids(id);
    if (!src.fit.has_value()) {
      mp->set_tier(v1::TIER_ROOFLINE);
      continue;
    }
    std::optional<double> band = KindBand(
        src.fit->calibration,
        metric == 1 ? model::ObservationKind::kTtft : model::ObservationKind::kTpot);
    bool all_measured = true;
    bool all_inside = src.base_tier == v1::TIER_CALIBRATED && lo.has_value();
    double widest = band.value_or(0);
    for (const model::LoadPoint& p : curve->points) {
      all_measured = all_measured &&
                     std::any_of(src.own_points.begin(), src.own_points.end(),
                                 [&](const SourcedPoint& sp) {
                                   return RowMeasures(sp, p, metric, spec_on, draft, workload,
                                                      req.think_time_seconds);
                                 });
      const double n = p.concurrency.has_value() ? *p.concurrency : std::max(1.0, p.mean_batch_size);
      if (lo.has_value() && (n < *lo || n > *hi)) all_inside = false;
      if (band.has_value() && lo.has_value()) {
        model::CalibrationResult fit_band;  // only the band is read
        fit_band.relative_error_band = band;
        absl::StatusOr<std::optional<double>> b =
            model::RelativeErrorBandAt(fit_band, std::max(n, 1e-9), *lo, *hi, {});
        if (b.ok() && b->has_value()) widest = std::max(widest, **b);
      }
    }
    v1::Tier tier = src.base_tier;
    if (src.base_tier == v1::TIER_CALIBRATED) {
      tier = all_measured ? v1::TIER_MEASURED
                          : (all_inside ? v1::TIER_CALIBRATED : v1::TIER_EXTRAPOLATED);
    }
    mp->set_tier(tier);
    mp->set_error_band_fraction(widest);
  }
  if (src.inline_calibration) notes.push_back("fitted on the request's calibration sweeps too");
  *out.mutable_memory() = perf.memory;
  for (std::string& n : notes) {
    if (std::find(out.notes().begin(), out.notes().end(), n) == out.notes().end()) {
      out.add_notes(std::move(n));
    }
  }
  return out;
}

absl::StatusOr<v1::LoadCurve> PredictLoad(const Catalog& catalog,
                                          const v1::PredictLoadRequest& request) {
  LoadQuery q;
  q.path = "PredictLoadRequest";
  q.workload = request.workload();
  std::vector<std::string> notes;
  if (request.has_closed_loop()) q.closed_loop = request.closed_loop();
  if (request.has_open_loop()) q.open_loop = request.open_loop();
  q.slo = request.slo();
  if (request.has_operator_concurrency_gate()) {
    q.operator_concurrency_gate = request.operator_concurrency_gate();
  }
  const bool from_baseline = !request.has_workload() && !request.deployment().baseline_id().empty();
  if (!from_baseline) CAPPLAN_RETURN_IF_ERROR(ValidateLoadQuery(q));
  CAPPLAN_ASSIGN_OR_RETURN(
      ResolvedDeployment r,
      ResolveDeploymentAllowingWithheldHardware(catalog, request.deployment(),
                                                "PredictLoadRequest.deployment"));
  if (!request.has_workload() && r.baseline != nullptr && !r.baseline->sweeps().empty()) {
    CAPPLAN_ASSIGN_OR_RETURN(q.workload,
                             SweepWorkload(*r.baseline, r.baseline->sweeps(0), &notes));
  }
  q.calibration.assign(request.calibration().begin(), request.calibration().end());
  q.no_catalog_calibration = request.no_catalog_calibration();
  CAPPLAN_RETURN_IF_ERROR(ValidateLoadQuery(q));
  CAPPLAN_ASSIGN_OR_RETURN(v1::LoadCurve curve, PredictLoadFor(catalog, r, q));
  for (std::string& n : notes) {
    if (std::find(curve.notes().begin(), curve.notes().end(), n) == curve.notes().end()) {
      curve.add_notes(std::move(n));
    }
  }
  return curve;
}

}  // namespace capplan::service
