#include "service/cli/load.h"

#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "service/catalog/file_util.h"
#include "service/catalog/text_proto.h"
#include "service/cli/catalog_print.h"
#include "service/cli/cli.h"
#include "service/cli/deployment_flags.h"
#include "service/cli/format.h"
#include "service/cli/svg_plot.h"
#include "service/planner/accuracy.h"
#include "service/planner/load.h"
#include "service/translate/enum_names.h"
#include "service/translate/load_translation.h"

namespace capplan::service {
namespace {

absl::StatusOr<std::vector<uint32_t>> ParseConcurrencies(const std::string& text) {
  std::vector<uint32_t> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    uint32_t v = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &v) || v == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--concurrency = %s; '%s' is not a positive integer (give e.g. 1,2,4,8)", text, part));
    }
    out.push_back(v);
  }
  if (out.empty()) {
    return absl::InvalidArgumentError("--concurrency is empty; give e.g. 1,2,4,8");
  }
  return out;
}

absl::StatusOr<std::vector<double>> ParseRates(const std::string& text) {
  std::vector<double> out;
  for (absl::string_view part : absl::StrSplit(text, ',', absl::SkipWhitespace())) {
    double v = 0;
    if (!absl::SimpleAtod(absl::StripAsciiWhitespace(part), &v)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--rate = %s; '%s' is not a number (give req/s, e.g. 0.5,1,2)", text, part));
    }
    out.push_back(v);
  }
  if (out.empty()) return absl::InvalidArgumentError("--rate is empty; give e.g. 0.5,1,2");
  return out;
}

std::string Opt(bool has, double v, const char* format) {
  return has ? absl::StrFormat(format, v) : std::string("-");
}

// The spread, prefix-cache and synchronized flags on the sweep's workload
// (the flags' own or the baseline sweep's).
absl::Status ApplyWorkloadShapeFlags(const CliArgs& args, v1::PredictLoadRequest& request) {
  for (const auto& [flag, setter] :
       std::vector<std::pair<const char*, void (v1::WorkloadSpec::*)(double)>>{
           {"prefix-cache-hit-rate", &v1::WorkloadSpec::set_prefix_cache_hit_rate},
           {"input-tokens-cv", &v1::WorkloadSpec::set_input_tokens_cv},
           {"output-tokens-cv", &v1::WorkloadSpec::set_output_tokens_cv}}) {
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> v, args.GetDouble(flag));
    if (!v.has_value()) continue;
    if (!request.has_workload()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--", flag, " shapes a workload you give: add --input-tokens and --output-tokens"));
    }
    (request.mutable_workload()->*setter)(*v);
  }
  if (args.Has("synchronized")) {
    if (!request.has_workload()) {
      return absl::InvalidArgumentError(
          "--synchronized describes fixed-length requests: give --input-tokens and "
          "--output-tokens too");
    }
    request.mutable_workload()->set_synchronized(true);
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<uint32_t> prompts, NumPromptsFlag(args));
  if (prompts.has_value()) {
    if (!request.has_workload()) {
      return absl::InvalidArgumentError(
          "--num-prompts counts a workload's prompts: add --input-tokens and --output-tokens");
    }
    request.mutable_workload()->set_num_prompts(*prompts);
  }
  return absl::OkStatus();
}

// The PredictLoadRequest of sweep's (and simulate's) flags; *baseline is
// --baseline's entry, when given (its measured rows go beside the prediction).
absl::StatusOr<v1::PredictLoadRequest> SweepRequest(CliContext& ctx, absl::string_view command,
                                                    std::optional<v1::Baseline>* baseline_out) {
  if (ctx.args.positional().size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "usage: capplan ", command,
        " (--model ID | --model-config FILE | --baseline ID) (--gpu ID | --hardware-file FILE) "
        "--input-tokens N --output-tokens N (--concurrency 1,2,4 | --rate 0.5,1) [...]"));
  }
  v1::PredictLoadRequest request;
  CAPPLAN_ASSIGN_OR_RETURN(*request.mutable_deployment(), DeploymentFromFlags(ctx.args));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> input, ctx.args.GetDouble("input-tokens"));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> output, ctx.args.GetDouble("output-tokens"));
  std::optional<v1::Baseline>& baseline = *baseline_out;
  baseline.reset();
  if (auto id = ctx.args.Get("baseline")) {
    v1::GetBaselineRequest get;
    get.set_id(*id);
    CAPPLAN_ASSIGN_OR_RETURN(baseline, ctx.planner->GetBaseline(get));
  }
  const bool baseline_sweep = baseline.has_value() && !baseline->sweeps().empty();
  if (input.has_value() || output.has_value() || !baseline_sweep) {
    v1::WorkloadSpec* w = request.mutable_workload();
    if (baseline_sweep) {
      std::vector<std::string> ignored;
      CAPPLAN_ASSIGN_OR_RETURN(*w, SweepWorkload(*baseline, baseline->sweeps(0), &ignored));
    }
    if (input.has_value()) w->set_input_tokens(*input);
    if (output.has_value()) w->set_output_tokens(*output);
    if (!baseline_sweep && (!input.has_value() || !output.has_value())) {
      return absl::InvalidArgumentError(
          "give the workload: --input-tokens N and --output-tokens N (or --baseline ID with a "
          "measured sweep)");
    }
  }
  CAPPLAN_RETURN_IF_ERROR(ApplyWorkloadShapeFlags(ctx.args, request));
  auto concurrency = ctx.args.Get("concurrency");
  auto rate = ctx.args.Get("rate");
  if (concurrency.has_value() && rate.has_value()) {
    return absl::InvalidArgumentError("--concurrency and --rate exclude each other");
  }
  if (concurrency.has_value()) {
    CAPPLAN_ASSIGN_OR_RETURN(std::vector<uint32_t> cs, ParseConcurrencies(*concurrency));
    for (uint32_t c : cs) request.mutable_closed_loop()->add_concurrencies(c);
  } else if (rate.has_value()) {
    CAPPLAN_ASSIGN_OR_RETURN(std::vector<double> rs, ParseRates(*rate));
    for (double r : rs) request.mutable_open_loop()->add_arrival_rates_rps(r);
  } else if (baseline_sweep) {
    for (const v1::SweepRow& row : baseline->sweeps(0).rows()) {
      if (row.has_concurrency())
        request.mutable_closed_loop()->add_concurrencies(row.concurrency());
    }
  }
  if (!concurrency.has_value() && !rate.has_value() && !request.has_closed_loop()) {
    return absl::InvalidArgumentError(
        "give the load: --concurrency 1,2,4,8 (closed loop) or --rate 0.5,1,2 (req/s, open loop)");
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> think, ctx.args.GetDouble("think-time"));
  if (think.has_value()) {
    if (!request.has_closed_loop()) {
      return absl::InvalidArgumentError("--think-time applies to --concurrency (closed loop)");
    }
    request.mutable_closed_loop()->set_think_time_seconds(*think);
  }
  CAPPLAN_RETURN_IF_ERROR(ApplySloFlags(ctx.args, [&request] { return request.mutable_slo(); }));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> gate, ctx.args.GetInt("concurrency-gate", 1));
  if (gate.has_value()) request.set_operator_concurrency_gate(static_cast<uint32_t>(*gate));
  if (auto file = ctx.args.Get("calibration")) {
    CAPPLAN_ASSIGN_OR_RETURN(std::string text, ReadFileForFlag("calibration", *file));
    absl::StatusOr<std::vector<v1::Sweep>> sweeps = ParseCalibrationSweeps(text);
    if (!sweeps.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--calibration = %s; %s", *file, sweeps.status().message()));
    }
    for (v1::Sweep& s : *sweeps) *request.add_calibration() = std::move(s);
  }
  request.set_no_catalog_calibration(ctx.args.Has("no-catalog-calibration"));
  if (request.no_catalog_calibration() && request.calibration().empty()) {
    return absl::InvalidArgumentError(
        "--no-catalog-calibration without --calibration FILE leaves nothing to fit on");
  }
  return request;
}

absl::StatusOr<int> Sweep(CliContext& ctx) {
  std::optional<v1::Baseline> baseline;
  CAPPLAN_ASSIGN_OR_RETURN(v1::PredictLoadRequest request, SweepRequest(ctx, "sweep", &baseline));
  CAPPLAN_ASSIGN_OR_RETURN(v1::LoadCurve curve, ctx.planner->PredictLoad(request, nullptr));
  LoadReportOptions report;
  CAPPLAN_ASSIGN_OR_RETURN(report.min_user_tokens_per_second, MinUserTokensPerSecond(ctx.args));
  if (baseline.has_value()) report.measured = BaselinePointsFor(*baseline, request);
  for (int i = 0; i < request.calibration_size(); ++i) {
    for (MeasuredPoint& p :
         MeasuredPointsOf(request.calibration(i), absl::StrCat("calibration[", i, "]"))) {
      report.measured.push_back(std::move(p));
    }
  }
  if (auto svg = ctx.args.Get("svg")) {
    const v1::ResolvedDeployment& d = curve.memory().deployment();
    std::string title =
        absl::StrFormat("%s on %s × %s", d.model_id().empty() ? "model" : d.model_id(),
                        Plural(d.gpu_count(), "GPU", "GPUs"),
                        d.hardware_id().empty() ? "(GPU withheld)" : d.hardware_id());
    std::optional<double> slo;
    if (request.slo().has_ttft_p95_seconds()) slo = request.slo().ttft_p95_seconds();
    CAPPLAN_RETURN_IF_ERROR(
        WriteFileAtomically(*svg, LoadCurveSvg(curve, slo, title, report.measured)));
  }
  if (ctx.json) {
    CAPPLAN_RETURN_IF_ERROR(PrintJson(curve, ctx.out));
    return kExitOk;
  }
  PrintLoadCurve(curve, report, ctx.out);
  return kExitOk;
}

// The simulator's points beside the analytical model's: the second opinion
// and how far the two differ.
void PrintSimulation(const v1::LoadCurve& sim, const v1::LoadCurve& model, std::ostream& out) {
  const bool closed = sim.points_size() > 0 && sim.points(0).has_concurrency();
  TextTable t({closed ? "USERS" : "RATE (req/s)", "OUTPUT (tok/s) SIM", "MODEL", "TTFT p50 (s) SIM",
               "MODEL", "TTFT p95 (s) SIM", "MODEL", "TPOT (s) SIM", "MODEL", "BATCH (req) SIM",
               "STABLE SIM"});
  auto f = [](bool has, double v, const char* fmt) {
    return has ? absl::StrFormat(fmt, v) : std::string("-");
  };
  for (int i = 0; i < sim.points_size(); ++i) {
    const v1::LoadCurvePoint& s = sim.points(i);
    const v1::LoadCurvePoint& m = model.points(i);
    t.AddRow({closed ? absl::StrCat(s.concurrency()) : absl::StrFormat("%g", s.arrival_rate_rps()),
              absl::StrFormat("%.1f", s.output_tokens_per_second()),
              absl::StrFormat("%.1f", m.output_tokens_per_second()),
              f(s.has_ttft_p50_seconds(), s.ttft_p50_seconds(), "%.3f"),
              f(m.has_ttft_p50_seconds(), m.ttft_p50_seconds(), "%.3f"),
              f(s.has_ttft_p95_seconds(), s.ttft_p95_seconds(), "%.3f"),
              f(m.has_ttft_p95_seconds(), m.ttft_p95_seconds(), "%.3f"),
              f(s.has_tpot_seconds(), s.tpot_seconds(), "%.4f"),
              f(m.has_tpot_seconds(), m.tpot_seconds(), "%.4f"),
              absl::StrFormat("%.2f", s.mean_batch_size()), s.stable() ? "yes" : "no"});
  }
  t.Print(out);
  for (const std::string& n : sim.notes()) out << "note: " << n << "\n";
}

absl::StatusOr<int> Simulate(CliContext& ctx) {
  if (ctx.args.Has("svg")) {
    return absl::InvalidArgumentError("--svg draws sweep's curve; capplan simulate prints a table");
  }
  std::optional<v1::Baseline> baseline;
  CAPPLAN_ASSIGN_OR_RETURN(v1::PredictLoadRequest request,
                           SweepRequest(ctx, "simulate", &baseline));
  CAPPLAN_ASSIGN_OR_RETURN(v1::LoadCurve sim, ctx.planner->SimulateLoad(request, nullptr));
  if (ctx.json) {
    CAPPLAN_RETURN_IF_ERROR(PrintJson(sim, ctx.out));
    return kExitOk;
  }
  CAPPLAN_ASSIGN_OR_RETURN(v1::LoadCurve model, ctx.planner->PredictLoad(request, nullptr));
  if (model.points_size() != sim.points_size()) {
    return absl::InternalError("simulate: the model and the simulator drew different points");
  }
  PrintSimulation(sim, model, ctx.out);
  return kExitOk;
}

absl::StatusOr<v1::AccuracyMode> AccuracyModeOf(const CliArgs& args) {
  const std::string mode = args.Get("mode").value_or("rows");
  if (mode == "rows") return v1::ACCURACY_MODE_ROWS;
  if (mode == "baselines") return v1::ACCURACY_MODE_BASELINES;
  if (mode == "alternate") return v1::ACCURACY_MODE_ALTERNATE_ROWS;
  return absl::InvalidArgumentError(
      absl::StrCat("--mode = ", mode, "; must be rows, baselines or alternate"));
}

void PrintAccuracySummary(const v1::AccuracyResponse& r, std::ostream& out) {
  TextTable summary({"GROUP", "METRIC", "ROWS", "MEDIAN |ERROR| (%)", "WITHIN 2x (%)",
                     "MAX |ERROR| (%)", "BAND COVERAGE (%)"});
  for (const v1::AccuracySummary& s : r.summaries()) {
    summary.AddRow({s.group(), s.metric(), absl::StrCat(s.count()),
                    absl::StrFormat("%.1f", 100 * s.median_abs_error_fraction()),
                    absl::StrFormat("%.0f", 100 * s.within_2x_fraction()),
                    absl::StrFormat("%.1f", 100 * s.max_abs_error_fraction()),
                    s.has_band_coverage_fraction()
                        ? absl::StrFormat("%.0f", 100 * s.band_coverage_fraction())
                        : "-"});
  }
  summary.Print(out);
}

absl::StatusOr<int> Accuracy(CliContext& ctx) {
  if (ctx.args.positional().size() != 1) {
    return absl::InvalidArgumentError(
        "usage: capplan accuracy [--mode rows|baselines|alternate] [--baseline ID]");
  }
  v1::AccuracyRequest request;
  CAPPLAN_ASSIGN_OR_RETURN(v1::AccuracyMode mode, AccuracyModeOf(ctx.args));
  request.set_mode(mode);
  request.set_baseline_id(ctx.args.Get("baseline").value_or(""));
  CAPPLAN_ASSIGN_OR_RETURN(v1::AccuracyResponse r, ctx.planner->Accuracy(request, nullptr));
  if (ctx.json) {
    CAPPLAN_RETURN_IF_ERROR(PrintJson(r, ctx.out));
    return kExitOk;
  }
  TextTable rows({"BASELINE", "HELD-OUT ROW", "METRIC", "MEASURED", "PREDICTED", "ERROR (%)"});
  for (const v1::AccuracyPrediction& p : r.predictions()) {
    rows.AddRow({p.baseline_id(), p.source().substr(p.source().find('/') + 1), p.metric(),
                 absl::StrFormat("%.4g", p.measured()), absl::StrFormat("%.4g", p.predicted()),
                 absl::StrFormat("%+.1f", 100 * p.error_fraction())});
  }
  rows.Print(ctx.out);
  ctx.out << "\nsummary ("
          << (mode == v1::ACCURACY_MODE_ROWS        ? "leave one row out"
              : mode == v1::ACCURACY_MODE_BASELINES ? "leave the baseline out: nothing of it seen"
                                                    : "calibrated on alternate rows")
          << "; throughput in tok/s, latencies in s):\n";
  PrintAccuracySummary(r, ctx.out);
  for (const std::string& n : r.notes()) ctx.out << "note: " << n << "\n";
  return kExitOk;
}

std::vector<std::string> SweepValuedFlags() {
  std::vector<std::string> flags = DeploymentValuedFlags();
  for (const char* f :
       {"input-tokens", "output-tokens", "concurrency", "rate", "think-time", "ttft-p95", "tpot",
        "e2e-p95", "calibration", "svg", "concurrency-gate", "min-user-tokens-per-second"}) {
    flags.push_back(f);
  }
  for (const std::string& f : WorkloadShapeFlags()) flags.push_back(f);
  return flags;
}

std::vector<std::string> SweepSwitches() {
  std::vector<std::string> s = DeploymentSwitches();
  s.push_back("no-catalog-calibration");
  s.push_back("synchronized");
  return s;
}

}  // namespace

std::vector<CliCommandSpec> LoadCliCommands() {
  return {
      {"sweep", &Sweep, SweepValuedFlags(), SweepSwitches()},
      {"simulate", &Simulate, SweepValuedFlags(), SweepSwitches()},
      {"accuracy", &Accuracy, {"baseline", "mode"}, {}},
  };
}

absl::StatusOr<std::vector<v1::Sweep>> ParseCalibrationSweeps(const std::string& text) {
  absl::string_view body = absl::StripAsciiWhitespace(text);
  google::protobuf::util::JsonParseOptions json;
  std::vector<v1::Sweep> out;
  if (!body.empty() && body.front() == '[') {
    // A JSON array of sweeps: parse it as a request's calibration list.
    v1::PredictLoadRequest wrapper;
    std::string wrapped = absl::StrCat("{\"calibration\": ", body, "}");
    auto s = google::protobuf::util::JsonStringToMessage(wrapped, &wrapper, json);
    if (!s.ok())
      return absl::InvalidArgumentError(absl::StrCat("not a JSON array of sweeps: ", s.ToString()));
    out.assign(wrapper.calibration().begin(), wrapper.calibration().end());
  } else if (!body.empty() && body.front() == '{') {
    v1::Sweep sweep;
    auto s = google::protobuf::util::JsonStringToMessage(std::string(body), &sweep, json);
    if (s.ok()) {
      out.push_back(sweep);
    } else {
      v1::PredictLoadRequest request;
      auto r = google::protobuf::util::JsonStringToMessage(std::string(body), &request, json);
      if (!r.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("not a JSON Sweep (", s.ToString(), ") nor a request with calibration"));
      }
      out.assign(request.calibration().begin(), request.calibration().end());
    }
  } else {
    v1::Sweep sweep;
    google::protobuf::TextFormat::Parser sweep_parser;
    FirstParseError sweep_error;
    sweep_parser.RecordErrorsTo(&sweep_error);
    if (sweep_parser.ParseFromString(std::string(body), &sweep)) {
      out.push_back(sweep);
    } else {
      v1::PredictLoadRequest request;
      google::protobuf::TextFormat::Parser request_parser;
      FirstParseError request_error;
      request_parser.RecordErrorsTo(&request_error);
      if (!request_parser.ParseFromString(std::string(body), &request)) {
        return absl::InvalidArgumentError(
            absl::StrCat("neither a text-format Sweep (", sweep_error.ToString(),
                         ") nor `calibration { ... }` blocks of a PredictLoadRequest (",
                         request_error.ToString(), ")"));
      }
      out.assign(request.calibration().begin(), request.calibration().end());
    }
  }
  if (out.empty()) return absl::InvalidArgumentError("holds no sweep");
  return out;
}

namespace {

void PrintCurveHeader(const v1::LoadCurve& curve, std::ostream& out) {
  const v1::ResolvedDeployment& d = curve.memory().deployment();
  const bool speculative = d.speculative_method() != v1::SPECULATIVE_METHOD_UNSPECIFIED &&
                           d.speculative_method() != v1::SPECULATIVE_METHOD_NONE;
  out << "deployment: " << (d.model_id().empty() ? "(config.json)" : d.model_id()) << " on "
      << Plural(d.gpu_count(), "GPU", "GPUs") << " × "
      << (d.hardware_id().empty() ? "(GPU withheld)" : d.hardware_id()) << ", tp " << d.tp()
      << ", ep " << d.ep() << ", " << EngineName(d.engine());
  if (speculative) {
    v1::SpeculativeDecoding s;
    s.set_method(d.speculative_method());
    s.set_num_speculative_tokens(d.num_speculative_tokens());
    out << ", speculative " << SpeculationText(s);
  }
  out << "\n";
  out << "slots: " << Plural(curve.slots().slots(), "request", "requests")
      << " at once (bound: " << ShortName(curve.slots().bound()) << ")";
  if (curve.memory().kv_pool_tokens() > 0) {
    out << ", KV pool " << FormatCount(static_cast<double>(curve.memory().kv_pool_tokens()))
        << " tokens";
  }
  out << "\n\n";
}

// Output tokens per request over its median end-to-end time: the rate a user
// sees including the wait for the first token.
std::optional<double> PerUserRate(const v1::LoadCurvePoint& p) {
  if (!p.has_e2e_p50_seconds() || !(p.e2e_p50_seconds() > 0) || !(p.requests_per_second() > 0)) {
    return std::nullopt;
  }
  return p.output_tokens_per_second() / p.requests_per_second() / p.e2e_p50_seconds();
}

void PrintCurveTable(const v1::LoadCurve& curve, bool closed, std::ostream& out) {
  TextTable table({closed ? "USERS" : "RATE (req/s)", "OUTPUT (tok/s)", "DECODE (tok/s/user)",
                   "PER USER incl. TTFT (tok/s)", "REQ/S (req/s)", "TTFT p50 (s)", "TTFT p95 (s)",
                   "TTFT p99 (s)", "TPOT (s)", "E2E p50 (s)", "E2E p95 (s)", "BATCH (req)",
                   "QUEUE (req)", "UTIL (%)", "STABLE"});
  for (const v1::LoadCurvePoint& p : curve.points()) {
    const std::optional<double> per_user = PerUserRate(p);
    table.AddRow(
        {closed ? absl::StrCat(p.concurrency()) : absl::StrFormat("%.3g", p.arrival_rate_rps()),
         absl::StrFormat("%.1f", p.output_tokens_per_second()),
         p.has_tpot_seconds() && p.tpot_seconds() > 0
             ? absl::StrFormat("%.1f", 1 / p.tpot_seconds())
             : "-",
         per_user.has_value() ? absl::StrFormat("%.1f", *per_user) : "-",
         absl::StrFormat("%.3f", p.requests_per_second()),
         Opt(p.has_ttft_p50_seconds(), p.ttft_p50_seconds(), "%.3f"),
         Opt(p.has_ttft_p95_seconds(), p.ttft_p95_seconds(), "%.3f"),
         Opt(p.has_ttft_p99_seconds(), p.ttft_p99_seconds(), "%.3f"),
         Opt(p.has_tpot_seconds(), p.tpot_seconds(), "%.4f"),
         Opt(p.has_e2e_p50_seconds(), p.e2e_p50_seconds(), "%.2f"),
         Opt(p.has_e2e_p95_seconds(), p.e2e_p95_seconds(), "%.2f"),
         absl::StrFormat("%.2f", p.mean_batch_size()),
         Opt(p.has_mean_queue_length(), p.mean_queue_length(), "%.2f"),
         absl::StrFormat("%.0f", 100 * p.utilization()), p.stable() ? "yes" : "NO"});
  }
  table.Print(out);
}

void PrintKneeAndSafePoint(const v1::LoadCurve& curve, bool closed, double min_rate,
                           std::ostream& out) {
  auto load_text = [&](double load) {
    return closed ? absl::StrFormat("%.4g %s", load, load == 1 ? "user" : "users")
                  : absl::StrFormat("%.3g req/s", load);
  };
  if (curve.has_knee()) {
    const v1::Knee& k = curve.knee();
    auto load_at = [&](uint32_t i) {
      const v1::LoadCurvePoint& p = curve.points(static_cast<int>(i));
      return load_text(closed ? p.concurrency() : p.arrival_rate_rps());
    };
    out << "knee: " << load_text(KneeLoad(k))
        << " (median TTFT passes twice its lowest-load value between "
        << load_at(k.last_flat_index()) << " and " << load_at(k.first_steep_index()) << ")\n";
  } else {
    out << "knee: none (median TTFT stays below twice its lowest-load value over the whole "
           "range)\n";
  }
  const v1::SafeOperatingPoint& s = curve.safe_operating_point();
  if (!s.found()) {
    out << "safe operating point: none — even the lightest load misses (" << ShortName(s.binding())
        << ")\n";
    return;
  }
  out << "safe operating point: "
      << (s.has_concurrency() ? Plural(s.concurrency(), "user", "users")
                              : absl::StrFormat("%.3g req/s", s.arrival_rate_rps()))
      << absl::StrFormat(", %.1f output tok/s", s.point().output_tokens_per_second());
  if (s.point().has_tpot_seconds() && s.point().tpot_seconds() > 0) {
    out << absl::StrFormat(", %.1f tok/s per user while decoding (1/TPOT)",
                           1 / s.point().tpot_seconds());
  }
  out << " (next step bound by " << ShortName(s.binding()) << ")\n";
  std::optional<double> tpot;
  if (s.point().has_tpot_seconds()) tpot = s.point().tpot_seconds();
  if (auto warning = SlowUserWarning(tpot, min_rate)) out << *warning << "\n";
}

}  // namespace

void PrintLoadCurve(const v1::LoadCurve& curve, const LoadReportOptions& options,
                    std::ostream& out) {
  PrintCurveHeader(curve, out);
  const bool closed = curve.points_size() > 0 && curve.points(0).has_concurrency();
  PrintCurveTable(curve, closed, out);
  PrintMeasuredBeside(curve, options.measured, out);
  out << "\n";
  PrintKneeAndSafePoint(curve, closed, options.min_user_tokens_per_second, out);
  const v1::StepTimeFit& f = curve.coefficients();
  out << absl::StrFormat(
      "step-time fit: alpha %.2f ms, beta weights %.3g, kv %.3g, flops %.3g, comm %.3g "
      "(%s",
      1e3 * f.alpha_seconds(), f.beta_weights(), f.beta_kv(), f.beta_flops(), f.beta_comm(),
      Plural(f.observations(), "observation", "observations"));
  if (f.has_relative_error_band()) {
    out << absl::StrFormat(", error band ±%.1f%%", 100 * f.relative_error_band());
  }
  out << ")\n";
  TextTable prov({"METRIC", "TIER", "ERROR BAND (±%)", "BASELINES"});
  for (const v1::MetricProvenance& p : curve.provenance()) {
    prov.AddRow(
        {p.metric(), TierName(p.tier()),
         p.error_band_fraction() > 0 ? absl::StrFormat("%.1f", 100 * p.error_band_fraction()) : "-",
         p.baseline_ids().empty() ? "-" : absl::StrJoin(p.baseline_ids(), ", ")});
  }
  prov.Print(out);
  for (const std::string& n : curve.notes()) out << "note: " << n << "\n";
}

}  // namespace capplan::service
