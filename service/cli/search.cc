#include "service/cli/search.h"

#include <algorithm>
#include <fstream>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "service/catalog/entity_text.h"
#include "service/cli/cli.h"
#include "service/cli/deployment_flags.h"
#include "service/cli/format.h"
#include "service/cli/svg_plot.h"
#include "service/planner/search.h"
#include "service/translate/enum_names.h"

namespace capplan::service {
namespace {

std::vector<std::string> Items(const CliArgs& a, const std::string& flag) {
  std::vector<std::string> out;
  if (auto v = a.Get(flag)) {
    for (absl::string_view part : absl::StrSplit(*v, ',', absl::SkipWhitespace())) {
      out.emplace_back(absl::StripAsciiWhitespace(part));
    }
  }
  return out;
}

absl::Status ApplyListFlags(const CliArgs& a, v1::SearchConstraints* c) {
  for (const std::string& id : Items(a, "gpus")) c->add_hardware_ids(id);
  // Cards the catalogue lacks, one file each (comma-separated), searched beside --gpus.
  for (const std::string& path : Items(a, "hardware-file")) {
    CAPPLAN_ASSIGN_OR_RETURN(std::string text, ReadFileForFlag("hardware-file", path));
    CAPPLAN_RETURN_IF_ERROR(ParseEntityFile(path, text, ValidationRules{.require_citations = false},
                                            c->add_hardware()));
  }
  for (const std::string& v : Items(a, "vendors")) c->add_vendors(v);
  for (const std::string& f : Items(a, "weight-formats")) {
    CAPPLAN_ASSIGN_OR_RETURN(v1::WeightFormat w, WeightFormatFromName("--weight-formats", f));
    c->add_weight_formats(w);
  }
  for (const std::string& k : Items(a, "kv-cache-dtypes")) {
    CAPPLAN_ASSIGN_OR_RETURN(v1::KvCacheDtype d, KvCacheDtypeFromName("--kv-cache-dtypes", k));
    c->add_kv_cache_dtypes(d);
  }
  for (const std::string& e : Items(a, "engines")) {
    CAPPLAN_ASSIGN_OR_RETURN(v1::EngineKind k, EngineKindFromName("--engines", e));
    c->add_engines(k);
  }
  for (const std::string& s : Items(a, "max-num-seqs")) {
    uint32_t v = 0;
    if (!absl::SimpleAtoi(s, &v) || v == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--max-num-seqs = %s; '%s' is not a positive integer (give e.g. 64,128,256)",
          *a.Get("max-num-seqs"), s));
    }
    c->add_max_num_seqs(v);
  }
  for (const std::string& p : Items(a, "price")) {
    std::pair<std::string, std::string> kv = absl::StrSplit(p, absl::MaxSplits('=', 1));
    double price = 0;
    if (kv.first.empty() || !absl::SimpleAtod(kv.second, &price)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--price = %s; '%s' is not GPU_ID=PRICE (give e.g. nvidia-h100-sxm-80gb=2.5)",
          *a.Get("price"), p));
    }
    (*c->mutable_price_per_gpu_hour())[kv.first] = price;
  }
  return absl::OkStatus();
}

absl::Status ApplyNumberFlags(const CliArgs& a, v1::SearchConfigsRequest* r) {
  v1::SearchConstraints* c = r->mutable_constraints();
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> per, a.GetInt("max-gpus-per-replica", 1));
  if (per.has_value()) c->set_max_gpus_per_replica(*per);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> total, a.GetInt("max-gpus-total", 1));
  if (total.has_value()) c->set_max_gpus_total(*total);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> k, a.GetInt("top-k", 1));
  if (k.has_value()) r->set_top_k(*k);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> cap, a.GetInt("max-candidates", 1));
  if (cap.has_value()) r->set_max_candidates(*cap);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> len, a.GetInt("max-model-len", 1));
  if (len.has_value()) r->set_max_model_len(*len);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> users, a.GetInt("target-users", 1));
  if (users.has_value()) r->set_target_concurrent_users(*users);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> rps, a.GetDouble("target-rps"));
  if (rps.has_value()) r->set_target_requests_per_second(*rps);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> tpm, a.GetDouble("target-tokens-per-month"));
  if (tpm.has_value()) r->set_target_tokens_per_month(*tpm);
  if (users.has_value() + rps.has_value() + tpm.has_value() > 1) {
    return absl::InvalidArgumentError(
        "--target-rps, --target-users and --target-tokens-per-month exclude each other");
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> tps, a.GetDouble("min-user-tps"));
  if (tps.has_value()) r->set_min_user_tokens_per_second(*tps);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> duty, a.GetDouble("duty-factor"));
  if (duty.has_value()) r->set_duty_factor(*duty);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> budget, a.GetDouble("time-budget"));
  if (budget.has_value()) r->set_time_budget_seconds(*budget);
  if (std::optional<std::string> tier = a.Get("kv-tier"); tier.has_value()) {
    r->set_kv_tier_id(*tier);
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::vector<uint64_t> contexts, KvRestoreContexts(a));
  for (uint64_t l : contexts) r->add_kv_restore_context_tokens(l);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> threads,
                           a.GetInt("threads", 1, kSearchMaxThreads));
  if (threads.has_value()) r->set_threads(static_cast<uint32_t>(*threads));
  return absl::OkStatus();
}

absl::StatusOr<v1::SearchObjective> Objective(const CliArgs& a) {
  const std::string o = absl::AsciiStrToLower(a.Get("objective").value_or("cost"));
  if (o == "cost") return v1::SEARCH_OBJECTIVE_COST;
  if (o == "gpus") return v1::SEARCH_OBJECTIVE_GPUS;
  if (o == "speed" || o == "user-speed") return v1::SEARCH_OBJECTIVE_USER_SPEED;
  return absl::InvalidArgumentError(
      absl::StrFormat("--objective = %s; must be cost, gpus or speed", o));
}

std::string Opt(bool has, double v, const char* format) {
  return has ? absl::StrFormat(format, v) : std::string("-");
}

std::string Weights(const v1::Deployment& d) {
  if (d.weight_format() == v1::WEIGHT_FORMAT_UNSPECIFIED) return "ckpt";
  return absl::AsciiStrToLower(v1::WeightFormat_Name(d.weight_format()).substr(14));
}

std::string WorstTier(const v1::SearchCandidate& c) {
  v1::Tier worst = v1::TIER_MEASURED;
  double band = 0;
  for (const v1::MetricProvenance& p : c.provenance()) {
    worst = std::max(worst, p.tier());
    band = std::max(band, p.error_band_fraction());
  }
  return absl::StrFormat("%s ±%.0f%%", TierName(worst), 100 * band);
}

void PrintCandidates(const std::vector<const v1::SearchCandidate*>& list, std::ostream& out) {
  TextTable t({"#", "GPU", "GPUS (TPxPP)", "ENGINE", "WEIGHTS", "KV", "SEQS", "REPLICAS",
               "TOTAL GPUS", "USER TOK/S", "TTFT P95 (s)", "OUT TOK/MONTH/REPLICA (M)", "$/GPU-H",
               "$/M OUT TOK", "$/MONTH", "FRONT", "TIER (BAND)"});
  int i = 0;
  for (const v1::SearchCandidate* c : list) {
    const v1::Deployment& d = c->deployment();
    const v1::OperatingPoint& s = c->safe_point();
    // A card of the request's own (--hardware-file) travels whole, not by id.
    const std::string& card = d.has_hardware() ? d.hardware().id() : d.hardware_id();
    t.AddRow(
        {absl::StrCat(++i), card,
         absl::StrFormat("%d (%dx%d)", c->gpus_per_replica(), d.parallelism().tp(),
                         d.parallelism().pp()),
         EngineName(d.engine().kind()), Weights(d),
         absl::AsciiStrToLower(v1::KvCacheDtype_Name(d.engine().kv_cache_dtype()).substr(15)),
         absl::StrCat(d.engine().max_num_seqs()), absl::StrCat(c->replicas()),
         absl::StrCat(c->total_gpus()), absl::StrFormat("%.1f", c->user_output_tokens_per_second()),
         Opt(s.has_ttft_p95_seconds(), s.ttft_p95_seconds(), "%.3f"),
         FormatScaled(c->capacity().output_tokens_per_month(), 1e6, 0),
         c->has_price_per_gpu_hour() ? absl::StrFormat("%.2f", c->price_per_gpu_hour())
                                     : "no price",
         Opt(c->has_cost_per_million_output_tokens(), c->cost_per_million_output_tokens(), "%.3f"),
         Opt(c->has_monthly_cost(), c->monthly_cost(), "%.0f"),
         absl::StrCat(c->on_cost_front() ? "C" : "", c->on_capacity_front() ? "G" : ""),
         WorstTier(*c)});
  }
  t.Print(out);
}

void PrintSearch(const v1::SearchConfigsResponse& r, std::ostream& out) {
  out << absl::StrFormat(
      "candidates: %d enumerated, %d memory-planned, %d bounded, %d evaluated exactly "
      "(%.0f ms)%s\n",
      r.candidates_enumerated(), r.candidates_evaluated(), r.bound_evaluations(),
      r.exact_evaluations(), 1000 * r.elapsed_seconds(),
      r.truncated() ? absl::StrCat("; TRUNCATED: ", r.truncated_reason()) : "");
  TextTable refused({"REFUSED", "COUNT", "EXAMPLE"});
  for (const v1::SearchRefusalCount& c : r.refusals()) {
    refused.AddRow({v1::SearchRefusal_Name(c.reason()).substr(15), absl::StrCat(c.count()),
                    c.example().substr(0, 110)});
  }
  refused.Print(out);
  std::vector<const v1::SearchCandidate*> top;
  for (const v1::SearchCandidate& c : r.top()) top.push_back(&c);
  out << "\ntop " << top.size() << " by "
      << absl::AsciiStrToLower(v1::SearchObjective_Name(r.objective()).substr(17)) << ":\n";
  PrintCandidates(top, out);
  std::vector<const v1::SearchCandidate*> front;
  for (const v1::SearchCandidate& c : r.cost_front()) front.push_back(&c);
  out << "\ncost front ($/M output tokens against per-user tok/s):\n";
  PrintCandidates(front, out);
  front.clear();
  for (const v1::SearchCandidate& c : r.capacity_front()) front.push_back(&c);
  out << "\ncapacity front (GPUs per replica against output tokens/month per replica):\n";
  PrintCandidates(front, out);
  out << "\nlaunch lines (top):\n";
  int i = 0;
  for (const v1::SearchCandidate* c : top) out << "  #" << ++i << " " << c->launch_line() << "\n";
  if (!top.empty() && top.front()->has_kv_tier()) {
    out << "\nKV tier " << top.front()->kv_tier().tier_id()
        << " (top): restore vs recompute, cold-restore peak tok/s per replica:\n";
    i = 0;
    for (const v1::SearchCandidate* c : top) {
      const v1::KvTierReport& k = c->kv_tier();
      double lo = 0, hi = 0;
      for (const v1::KvRestorePoint& p : k.points()) {
        lo = lo == 0 ? p.speedup() : std::min(lo, p.speedup());
        hi = std::max(hi, p.speedup());
      }
      out << absl::StrFormat(
          "  #%d restore %.1f-%.1fx faster than recompute (%d contexts); cold restore %.0f vs "
          "%.0f tok/s recomputed (%+.0f%%, %s)\n",
          ++i, lo, hi, k.points_size(), k.restore_output_tokens_per_second(),
          k.recompute_output_tokens_per_second(), 100 * k.throughput_gain_fraction(),
          k.tier_bound() ? "the tier binds" : "the GPUs bind");
    }
  }
  for (const std::string& n : r.notes()) out << "note: " << n << "\n";
}

absl::StatusOr<int> SearchCommand(CliContext& ctx) {
  if (ctx.args.positional().size() != 1) {
    return absl::InvalidArgumentError(
        "usage: capplan search (--model ID | --model-config FILE) --input-tokens N "
        "--output-tokens N (--target-users N | --target-rps R | --target-tokens-per-month T) "
        "[...]");
  }
  CAPPLAN_ASSIGN_OR_RETURN(v1::SearchConfigsRequest request, SearchRequestFromFlags(ctx.args));
  CAPPLAN_ASSIGN_OR_RETURN(v1::SearchConfigsResponse response,
                           ctx.planner->SearchConfigs(request, absl::InfiniteFuture(),
                                                      /*budget=*/nullptr));
  if (auto svg = ctx.args.Get("svg")) {
    std::ofstream file(*svg);
    file << SearchFrontSvg(response, "capplan search: Pareto fronts");
    if (!file) {
      return absl::InvalidArgumentError(absl::StrFormat("--svg = %s; cannot write the file", *svg));
    }
  }
  if (ctx.json) {
    CAPPLAN_RETURN_IF_ERROR(PrintJson(response, ctx.out));
  } else {
    PrintSearch(response, ctx.out);
  }
  return kExitOk;
}

}  // namespace

absl::StatusOr<v1::SearchConfigsRequest> SearchRequestFromFlags(const CliArgs& a) {
  v1::SearchConfigsRequest r;
  if (a.Has("model") == a.Has("model-config")) {
    return absl::InvalidArgumentError("give exactly one of --model ID and --model-config FILE");
  }
  if (auto id = a.Get("model")) r.set_model_id(*id);
  if (auto path = a.Get("model-config")) {
    CAPPLAN_ASSIGN_OR_RETURN(*r.mutable_model_config_json(),
                             ReadFileForFlag("model-config", *path));
  }
  CAPPLAN_RETURN_IF_ERROR(ApplyWorkloadFlags(a, [&r] { return r.mutable_workload(); }));
  CAPPLAN_RETURN_IF_ERROR(ApplySloFlags(a, [&r] { return r.mutable_slo(); }));
  CAPPLAN_RETURN_IF_ERROR(ApplyNumberFlags(a, &r));
  CAPPLAN_RETURN_IF_ERROR(ApplyListFlags(a, r.mutable_constraints()));
  CAPPLAN_ASSIGN_OR_RETURN(v1::SearchObjective objective, Objective(a));
  r.set_objective(objective);
  if (a.Has("speculative")) r.mutable_constraints()->set_speculative_decoding(true);
  if (a.Has("multi-node")) r.mutable_constraints()->set_allow_multi_node(true);
  if (a.Has("expert-parallel")) r.mutable_constraints()->set_try_expert_parallel(true);
  return r;
}

CliCommandSpec SearchCommandSpec() {
  return {"search",
          &SearchCommand,
          {"model",
           "model-config",
           "input-tokens",
           "output-tokens",
           "ttft-p95",
           "tpot",
           "e2e-p95",
           "min-user-tps",
           "target-users",
           "target-rps",
           "target-tokens-per-month",
           "gpus",
           "vendors",
           "max-gpus-per-replica",
           "max-gpus-total",
           "weight-formats",
           "kv-cache-dtypes",
           "engines",
           "max-num-seqs",
           "price",
           "objective",
           "top-k",
           "max-candidates",
           "time-budget",
           "threads",
           "kv-tier",
           "kv-restore-context",
           "duty-factor",
           "max-model-len",
           "svg",
           "hardware-file"},
          {"speculative", "multi-node", "expert-parallel", "synchronized"}};
}

}  // namespace capplan::service
