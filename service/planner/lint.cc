#include "service/planner/lint.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "model/lint.h"
#include "service/catalog/suggest.h"
#include "service/planner/prepared.h"
#include "service/translate/deployment_resolver.h"

namespace capplan::service {
namespace {

// TTFT and end-to-end latency of the same statistic: medians, else means,
// else the figures reported without a name.
std::pair<std::optional<double>, std::optional<double>> SameStatistic(
    const v1::LatencyFigures& ttft, const v1::LatencyFigures& e2e) {
  if (ttft.has_p50_seconds() && e2e.has_p50_seconds()) {
    return {ttft.p50_seconds(), e2e.p50_seconds()};
  }
  if (ttft.has_mean_seconds() && e2e.has_mean_seconds()) {
    return {ttft.mean_seconds(), e2e.mean_seconds()};
  }
  if (ttft.has_reported_seconds() && e2e.has_reported_seconds()) {
    return {ttft.reported_seconds(), e2e.reported_seconds()};
  }
  // One side only: enough for the unit check.
  auto any = [](const v1::LatencyFigures& f) -> std::optional<double> {
    if (f.has_p50_seconds()) return f.p50_seconds();
    if (f.has_mean_seconds()) return f.mean_seconds();
    if (f.has_reported_seconds()) return f.reported_seconds();
    return std::nullopt;
  };
  return {any(ttft), any(e2e)};
}

model::LintRow ToLintRow(const v1::SweepRow& row, const v1::Workload& workload,
                         const std::string& path) {
  model::LintRow r;
  r.path = path;
  if (row.has_concurrency()) r.concurrency = row.concurrency();
  if (row.has_arrival_rate_rps()) r.arrival_rate_rps = row.arrival_rate_rps();
  if (row.has_requests_per_second()) r.requests_per_second = row.requests_per_second();
  if (row.has_output_tokens_per_second()) {
    r.output_tokens_per_second = row.output_tokens_per_second();
  }
  if (row.has_per_user_output_tokens_per_second()) {
    r.per_user_output_tokens_per_second = row.per_user_output_tokens_per_second();
  }
  // The run's own stated length first, else the sweep's.
  if (row.has_mean_output_tokens()) {
    r.output_tokens_per_request = row.mean_output_tokens();
  } else if (workload.has_output_tokens()) {
    r.output_tokens_per_request = workload.output_tokens();
  }
  std::tie(r.ttft_seconds, r.e2e_seconds) = SameStatistic(row.ttft(), row.e2e());
  return r;
}

void LintSweeps(const v1::Baseline& b, std::vector<model::LintFinding>* out) {
  for (int i = 0; i < b.sweeps_size(); ++i) {
    const v1::Sweep& sweep = b.sweeps(i);
    std::vector<model::LintRow> rows;
    for (int j = 0; j < sweep.rows_size(); ++j) {
      rows.push_back(ToLintRow(sweep.rows(j), sweep.workload(),
                               absl::StrCat("sweeps[", i, "].rows[", j, "]")));
    }
    std::vector<model::LintFinding> f = model::LintRows(rows, sweep.closed_loop());
    out->insert(out->end(), f.begin(), f.end());
  }
}

// A sustained run is one open-loop row at its offered rate.
void LintSustainedRuns(const v1::Baseline& b, std::vector<model::LintFinding>* out) {
  for (int i = 0; i < b.sustained_runs_size(); ++i) {
    const v1::SustainedRun& run = b.sustained_runs(i);
    model::LintRow r;
    r.path = absl::StrCat("sustained_runs[", i, "]");
    if (run.has_arrival_rate_rps()) r.requests_per_second = run.arrival_rate_rps();
    if (run.has_output_tokens_per_second()) {
      r.output_tokens_per_second = run.output_tokens_per_second();
    }
    if (run.workload().has_output_tokens()) {
      r.output_tokens_per_request = run.workload().output_tokens();
    }
    std::vector<model::LintFinding> f = model::LintRows({r}, false);
    out->insert(out->end(), f.begin(), f.end());
  }
}

// Per-GPU accounts against the card, and the weight shards against the
// whole model.
void LintMemoryFigures(const Catalog& catalog, const v1::Baseline& b,
                       std::vector<model::LintFinding>* out) {
  for (int i = 0; i < b.memory_accounts_size(); ++i) {
    const v1::MemoryAccount& a = b.memory_accounts(i);
    if (a.scope() != "per GPU") continue;
    model::LintMemoryAccount m;
    m.path = absl::StrCat("memory_accounts[", i, "]");
    if (a.has_used_bytes()) m.used_bytes = static_cast<double>(a.used_bytes());
    if (a.has_capacity_bytes()) m.capacity_bytes = static_cast<double>(a.capacity_bytes());
    // Weights and non-torch memory either together or apart, never both.
    const bool together = a.has_weights_and_non_torch_bytes();
    for (const auto& [has, v] :
         {std::make_pair(!together && a.has_weights_bytes(), a.weights_bytes()),
          std::make_pair(together, a.weights_and_non_torch_bytes()),
          std::make_pair(a.has_activation_peak_bytes(), a.activation_peak_bytes()),
          std::make_pair(!together && a.has_non_torch_bytes(), a.non_torch_bytes()),
          std::make_pair(a.has_cuda_graph_bytes(), a.cuda_graph_bytes()),
          std::make_pair(a.has_kv_cache_bytes(), a.kv_cache_bytes())}) {
      if (has) m.part_bytes.push_back(static_cast<double>(v));
    }
    if (!m.capacity_bytes.has_value()) {
      const v1::Hardware* hw = catalog.FindHardware(b.deployment().hardware_id());
      if (hw != nullptr && hw->usable_memory_bytes() > 0) {
        m.capacity_bytes = static_cast<double>(hw->usable_memory_bytes());
      }
    }
    std::vector<model::LintFinding> f = model::LintMemory(m);
    out->insert(out->end(), f.begin(), f.end());
  }
  std::optional<double> whole;
  for (const v1::WeightFootprint& w : b.weight_footprints()) {
    if (w.scope() == "whole model") whole = static_cast<double>(w.bytes());
  }
  const int gpus = static_cast<int>(b.deployment().gpu_count());
  for (int i = 0; whole.has_value() && i < b.weight_footprints_size(); ++i) {
    const v1::WeightFootprint& w = b.weight_footprints(i);
    if (w.scope() != "per GPU") continue;
    std::vector<model::LintFinding> f = model::LintShards(
        absl::StrCat("weight_footprints[", i, "]"), static_cast<double>(w.bytes()), gpus, *whole);
    out->insert(out->end(), f.begin(), f.end());
  }
}

// The model's KV bytes per token per GPU for the baseline's own deployment.
std::optional<double> KvBytesPerToken(const Catalog& catalog, const v1::Baseline& b) {
  v1::Deployment d;
  d.set_baseline_id(b.id());
  absl::StatusOr<ResolvedDeployment> r =
      ResolveDeploymentAllowingWithheldHardware(catalog, d, "baseline");
  if (!r.ok()) return std::nullopt;
  absl::StatusOr<PreparedDeployment> p =
      PrepareDeployment(catalog, *std::move(r), std::nullopt, nullptr);
  if (!p.ok() || !(p->model_memory.kv_bytes_per_token > 0)) return std::nullopt;
  return p->model_memory.kv_bytes_per_token;
}

void LintKvPools(const Catalog& catalog, const v1::Baseline& b,
                 std::vector<model::LintFinding>* out) {
  std::optional<double> kv_bytes;
  for (const v1::MemoryAccount& a : b.memory_accounts()) {
    if (a.scope() == "per GPU" && a.has_kv_cache_bytes()) kv_bytes = a.kv_cache_bytes();
  }
  if (!kv_bytes.has_value()) return;
  const std::optional<double> per_token = KvBytesPerToken(catalog, b);
  if (!per_token.has_value()) return;
  for (int i = 0; i < b.kv_pools_size(); ++i) {
    const v1::KvPool& pool = b.kv_pools(i);
    if (!pool.has_tokens()) continue;
    std::vector<model::LintFinding> f =
        model::LintKvPool(absl::StrCat("kv_pools[", i, "]"), static_cast<double>(pool.tokens()),
                          *kv_bytes, *per_token);
    out->insert(out->end(), f.begin(), f.end());
  }
}

v1::LintFinding ToProto(const model::LintFinding& f, const std::string& baseline_id) {
  v1::LintFinding out;
  out.set_code(model::LintCodeName(f.code));
  out.set_severity(f.severity == model::LintSeverity::kError ? v1::SEVERITY_ERROR
                                                             : v1::SEVERITY_WARNING);
  out.set_baseline_id(baseline_id);
  out.set_field(f.field_path);
  out.set_message(f.message);
  out.set_measured(f.measured);
  out.set_expected(f.expected);
  return out;
}

}  // namespace

std::vector<v1::LintFinding> LintBaseline(const Catalog& catalog, const v1::Baseline& b) {
  std::vector<model::LintFinding> found =
      model::LintSource("provenance.source_document", b.provenance().source_document());
  LintSweeps(b, &found);
  LintSustainedRuns(b, &found);
  LintMemoryFigures(catalog, b, &found);
  LintKvPools(catalog, b, &found);
  std::vector<v1::LintFinding> out;
  out.reserve(found.size());
  for (const model::LintFinding& f : found) out.push_back(ToProto(f, b.id()));
  return out;
}

absl::StatusOr<v1::LintResponse> Lint(const Catalog& catalog, const v1::LintRequest& request) {
  v1::LintResponse response;
  auto add = [&](const v1::Baseline& b) {
    for (v1::LintFinding& f : LintBaseline(catalog, b)) *response.add_findings() = std::move(f);
    response.set_baselines_checked(response.baselines_checked() + 1);
  };
  if (request.baseline_id().empty()) {
    for (const v1::Baseline& b : catalog.baselines()) add(b);
    return response;
  }
  const v1::Baseline* b = catalog.FindBaseline(request.baseline_id());
  if (b == nullptr) {
    return absl::NotFoundError(absl::StrFormat(
        "LintRequest.baseline_id = \"%s\"; no such baseline%s (ListBaselines "
        "lists them)",
        request.baseline_id().substr(0, 256),
        DidYouMean(SuggestBaselines(catalog, request.baseline_id().substr(0, 256)))));
  }
  add(*b);
  return response;
}

bool HasError(const std::vector<v1::LintFinding>& findings) {
  return std::any_of(findings.begin(), findings.end(),
                     [](const v1::LintFinding& f) { return f.severity() == v1::SEVERITY_ERROR; });
}

}  // namespace capplan::service
