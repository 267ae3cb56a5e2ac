#include "service/cli/plan.h"

#include <cmath>
#include <optional>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "service/cli/cli.h"
#include "service/cli/deployment_flags.h"
#include "service/cli/format.h"
#include "service/translate/enum_names.h"

namespace capplan::service {
namespace {

std::string Tokens(double v) {
  if (!(v > 0)) return "-";
  if (v >= 1e9) return absl::StrFormat("%.3g billion", v / 1e9);
  if (v >= 1e6) return absl::StrFormat("%.3g million", v / 1e6);
  return absl::StrFormat("%.0f", v);
}

struct PlanPrintOptions {
  double min_user_rate = kDefaultMinUserTokensPerSecond;
  std::string currency = "USD";
  double price_per_gpu_hour = 0;
};

void PrintCapacity(const char* title, const v1::Capacity& c, std::ostream& out) {
  out << title << " (" << c.at() << ")\n";
  out << absl::StrFormat(
      "  %s tokens/month in+out, %s output tokens/month (%.0f-day month, duty %.2f)\n"
      "  %s tok/s in+out, %s output tok/s\n",
      Tokens(c.tokens_per_month_total()), Tokens(c.output_tokens_per_month()), c.days_per_month(),
      c.duty_factor(), FormatScaled(c.tokens_per_second_total(), 1, 1),
      FormatScaled(c.output_tokens_per_second(), 1, 1));
}

std::string NoSafePointReason(v1::LoadBinding binding) {
  switch (binding) {
    case v1::LOAD_BINDING_DOES_NOT_FIT:
      return "the deployment does not fit";
    case v1::LOAD_BINDING_SLOT_WAIT:
      return "even the lightest load has more than 1% of requests waiting for a slot "
             "(SLOT_WAIT; see capplan help concepts)";
    case v1::LOAD_BINDING_STABILITY:
      return "even the lightest load saturates the deployment (STABILITY)";
    default:
      return "even the lightest load misses the SLO (binding: " + ShortName(binding) + ")";
  }
}

void PrintPoint(const char* title, const v1::OperatingPoint& p, double min_rate,
                std::ostream& out) {
  if (!p.found()) {
    out << title << ": none — " << NoSafePointReason(p.binding()) << "\n";
    return;
  }
  out << title << ": ";
  if (p.has_concurrent_users()) out << Plural(p.concurrent_users(), "user", "users") << ", ";
  out << absl::StrFormat("%.3f req/s, %.1f output tok/s", p.requests_per_second(),
                         p.output_tokens_per_second());
  auto s = [](bool has, double v) { return has ? absl::StrFormat("%.3f s", v) : std::string("-"); };
  out << "; TTFT p50/p95/p99 " << s(p.has_ttft_p50_seconds(), p.ttft_p50_seconds()) << " / "
      << s(p.has_ttft_p95_seconds(), p.ttft_p95_seconds()) << " / "
      << s(p.has_ttft_p99_seconds(), p.ttft_p99_seconds()) << ", TPOT "
      << s(p.has_tpot_seconds(), p.tpot_seconds());
  if (p.has_tpot_seconds() && p.tpot_seconds() > 0) {
    out << absl::StrFormat(" (%.1f tok/s per user while decoding)", 1 / p.tpot_seconds());
  }
  out << "; binding: " << ShortName(p.binding()) << "\n";
  std::optional<double> tpot;
  if (p.has_tpot_seconds()) tpot = p.tpot_seconds();
  if (auto warning = SlowUserWarning(tpot, min_rate)) out << "  " << *warning << "\n";
}

std::string SafeLoad(const v1::Sizing& s) {
  if (s.unit() == "users") {
    return Plural(static_cast<int64_t>(std::llround(s.safe_load_per_replica())), "user", "users");
  }
  return absl::StrFormat("%.3g %s", s.safe_load_per_replica(), s.unit());
}

// A replica over several nodes: X_N against N·X_1 and TTFT p99 against one node.
void PrintScaling(const v1::ScalingAssessment& s, std::ostream& out) {
  out << "scaling over " << Plural(s.nodes(), "node", "nodes") << " of "
      << Plural(s.gpus_per_node(), "GPU", "GPUs") << ": ";
  if (s.throughput_one_node() > 0) {
    out << absl::StrFormat("X_N %.0f tok/s vs N·X_1 = %d × %.0f tok/s: efficiency %.0f%%%s",
                           s.throughput(), s.nodes(), s.throughput_one_node(), 100 * s.efficiency(),
                           s.efficiency_below_threshold()
                               ? absl::StrFormat(" (BELOW %.0f%%)", 100 * s.min_efficiency())
                               : "");
    if (s.has_ttft_p99_degradation_fraction()) {
      out << absl::StrFormat("; TTFT p99 %+.0f%% vs one node%s",
                             100 * s.ttft_p99_degradation_fraction(),
                             s.ttft_p99_degraded() ? " (DEGRADED)" : "");
    }
  }
  out << "\n  " << s.note() << "\n";
}

// A KV storage tier: restore against recompute per context, and the
// cold-restore workload's peak throughput either way.
void PrintKvTier(const v1::KvTierReport& t, std::ostream& out) {
  out << absl::StrFormat("\nKV tier %s (%s): %.1f GB/s into the replica, latency %.2f ms\n",
                         t.tier_id(), t.tier_name(), t.effective_bandwidth_bytes_per_second() / 1e9,
                         1e3 * t.latency_seconds());
  TextTable table({"CONTEXT (tokens)", "KV (GB)", "RESTORE (s)", "RECOMPUTE (s)", "SPEEDUP (x)"});
  for (const v1::KvRestorePoint& p : t.points()) {
    table.AddRow(
        {FormatCount(static_cast<double>(p.context_tokens())),
         absl::StrFormat("%.2f", p.kv_bytes() / 1e9), absl::StrFormat("%.3f", p.restore_seconds()),
         absl::StrFormat("%.3f", p.recompute_seconds()), absl::StrFormat("%.1f", p.speedup())});
  }
  table.Print(out);
  out << absl::StrFormat(
      "cold restore (every input restored), peak per replica: recompute %.0f tok/s; restore "
      "%.0f tok/s (GPUs %.0f, tier %.0f: %s), %+.0f%%\n",
      t.recompute_output_tokens_per_second(), t.restore_output_tokens_per_second(),
      t.restore_gpu_output_tokens_per_second(), t.restore_tier_output_tokens_per_second(),
      t.tier_bound() ? "the tier binds" : "the GPUs bind", 100 * t.throughput_gain_fraction());
  out << "  " << t.note() << "\n";
}

void PrintSizingAndCost(const v1::PlanResponse& plan, const PlanPrintOptions& options,
                        std::ostream& out) {
  if (plan.has_sizing()) {
    const v1::Sizing& s = plan.sizing();
    out << "\nsizing for " << s.target() << ": " << Plural(s.replicas(), "replica", "replicas")
        << ", " << Plural(s.gpus(), "GPU", "GPUs") << " (safe " << SafeLoad(s) << " per replica)\n";
  }
  if (plan.has_scaling()) PrintScaling(plan.scaling(), out);
  if (plan.has_kv_tier()) PrintKvTier(plan.kv_tier(), out);
  if (plan.has_cost_per_million_output_tokens()) {
    const uint32_t gpus = plan.memory().deployment().gpu_count();
    out << absl::StrFormat(
        "cost: %.4f %s per million output tokens at the safe point (%.2f %s per GPU-hour × %s "
        "per replica)\n",
        plan.cost_per_million_output_tokens(), options.currency, options.price_per_gpu_hour,
        options.currency, Plural(gpus, "GPU", "GPUs"));
  }
}

void PrintPlan(const v1::PlanResponse& plan, const PlanPrintOptions& options, std::ostream& out) {
  const v1::MemoryPlan& m = plan.memory();
  const v1::ResolvedDeployment& d = m.deployment();
  out << "deployment: " << (d.model_id().empty() ? "(config.json)" : d.model_id()) << " on "
      << Plural(d.gpu_count(), "GPU", "GPUs") << " × "
      << (d.hardware_id().empty() ? "(unspecified GPU)" : d.hardware_id()) << ", tp " << d.tp()
      << "\n";
  out << "memory: KV pool " << FormatCount(static_cast<double>(m.kv_pool_tokens()))
      << " tokens, fits: " << (m.fits() ? "yes" : "NO") << "\n\n";
  PrintPoint("safe point, closed loop", plan.safe_closed_loop(), options.min_user_rate, out);
  PrintPoint("safe point, open loop", plan.safe_open_loop(), options.min_user_rate, out);
  out << "\n";
  PrintCapacity("capacity at the safe point", plan.capacity(), out);
  PrintCapacity("capacity at PEAK (not a promise)", plan.capacity_at_peak(), out);
  PrintSizingAndCost(plan, options, out);
  for (const v1::MeasuredCapacity& mc : plan.measured_capacity()) {
    out << "\nmeasured (" << mc.baseline_id() << ", " << mc.run() << "):\n";
    if (mc.has_from_requests()) PrintCapacity(" from its request rate", mc.from_requests(), out);
    if (mc.has_from_output_rate()) {
      PrintCapacity(" from its output rate", mc.from_output_rate(), out);
    }
    out << "  " << mc.note() << "\n";
  }
  out << "\n";
  if (plan.provenance_size() > 0) {
    TextTable tiers({"METRIC", "TIER", "ERROR BAND (±%)", "BASELINES"});
    for (const v1::MetricProvenance& p : plan.provenance()) {
      tiers.AddRow({p.metric(), TierName(p.tier()),
                    p.error_band_fraction() > 0
                        ? absl::StrFormat("%.0f", 100 * p.error_band_fraction())
                        : "-",
                    p.baseline_ids().empty() ? "-" : absl::StrJoin(p.baseline_ids(), ", ")});
    }
    tiers.Print(out);
  }
  for (const std::string& note : plan.notes()) out << "note: " << note << "\n";
}

absl::StatusOr<int> PlanCommand(CliContext& ctx) {
  if (ctx.args.positional().size() != 1) {
    return absl::InvalidArgumentError(
        "usage: capplan plan (--model ID | --baseline ID) (--gpu ID | --hardware-file FILE) "
        "--input-tokens N --output-tokens N [...]");
  }
  v1::PlanRequest request;
  CAPPLAN_ASSIGN_OR_RETURN(*request.mutable_deployment(), DeploymentFromFlags(ctx.args));
  const CliArgs& a = ctx.args;
  CAPPLAN_RETURN_IF_ERROR(ApplyWorkloadFlags(a, [&request] { return request.mutable_workload(); }));
  CAPPLAN_RETURN_IF_ERROR(ApplySloFlags(a, [&request] { return request.mutable_slo(); }));
  struct Opt {
    const char* flag;
    void (*set)(v1::PlanRequest*, double);
  };
  const Opt options[] = {
      {"target-rps", [](v1::PlanRequest* r, double v) { r->set_target_requests_per_second(v); }},
      {"target-tokens-per-month",
       [](v1::PlanRequest* r, double v) { r->set_target_tokens_per_month(v); }},
      {"duty-factor", [](v1::PlanRequest* r, double v) { r->set_duty_factor(v); }},
      {"price-per-gpu-hour", [](v1::PlanRequest* r, double v) { r->set_price_per_gpu_hour(v); }},
      {"think-time", [](v1::PlanRequest* r, double v) { r->set_think_time_seconds(v); }},
  };
  for (const Opt& o : options) {
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> v, a.GetDouble(o.flag));
    if (v.has_value()) o.set(&request, *v);
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> users, a.GetInt("target-users", 1));
  if (users.has_value()) request.set_target_concurrent_users(*users);
  int targets = a.Has("target-rps") + a.Has("target-users") + a.Has("target-tokens-per-month");
  if (targets > 1) {
    return absl::InvalidArgumentError(
        "--target-rps, --target-users and --target-tokens-per-month exclude each other");
  }
  if (std::optional<std::string> tier = a.Get("kv-tier"); tier.has_value()) {
    request.set_kv_tier_id(*tier);
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::vector<uint64_t> contexts, KvRestoreContexts(a));
  for (uint64_t l : contexts) request.add_kv_restore_context_tokens(l);
  PlanPrintOptions print;
  CAPPLAN_ASSIGN_OR_RETURN(print.min_user_rate, MinUserTokensPerSecond(a));
  print.currency = a.Get("currency").value_or("USD");
  if (print.currency.empty() || print.currency.size() > 8) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--currency = ", print.currency, "; give a currency code or sign, e.g. USD, EUR, CNY"));
  }
  print.price_per_gpu_hour = request.price_per_gpu_hour();
  CAPPLAN_ASSIGN_OR_RETURN(v1::PlanResponse plan, ctx.planner->Plan(request, nullptr));
  if (ctx.json) {
    CAPPLAN_RETURN_IF_ERROR(PrintJson(plan, ctx.out));
  } else {
    PrintPlan(plan, print, ctx.out);
  }
  return kExitOk;
}

}  // namespace

CliCommandSpec PlanCommandSpec() {
  std::vector<std::string> valued = DeploymentValuedFlags();
  for (const char* flag :
       {"input-tokens", "output-tokens", "ttft-p95", "tpot", "e2e-p95", "target-rps",
        "target-users", "target-tokens-per-month", "duty-factor", "price-per-gpu-hour",
        "think-time", "currency", "min-user-tokens-per-second", "kv-tier", "kv-restore-context"}) {
    valued.push_back(flag);
  }
  for (const std::string& f : WorkloadShapeFlags()) valued.push_back(f);
  std::vector<std::string> switches = DeploymentSwitches();
  switches.push_back("synchronized");
  return {"plan", &PlanCommand, valued, switches};
}

}  // namespace capplan::service
