#include "service/planner/validate.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "base/digits.h"
#include "base/status_macros.h"
#include "model/queueing.h"
#include "service/planner/prepared.h"
#include "service/planner/validate_checks.h"
#include "service/translate/deployment_resolver.h"
#include "service/translate/enum_names.h"
#include "service/translate/hf_config.h"
#include "service/translate/launch_line.h"
#include "service/translate/load_translation.h"
#include "service/translate/model_translation.h"
#include "service/translate/request_validation.h"

namespace capplan::service {
namespace {

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr char kPath[] = "ValidateRequest.deployment";

const absl::flat_hash_set<std::string>& KnownCodes() {
  static const auto* const kCodes = new absl::flat_hash_set<std::string>{
      kDoesNotFit,          kKvPoolBelowOneRequest, kConcurrencyAboveSafe, kTtftSloMissed,
      kTpotSloMissed,       kE2eSloMissed,          kUnstableLoad,         kContextBeyondNative,
      kNoQualityEvidence,   kFarFromBaselines,      kUnknownEngineVersion, kUnmodelledFlag,
      kWorkloadFromBaseline};
  return *kCodes;
}

bool IsQuantized(v1::WeightFormat format) {
  return format != v1::WEIGHT_FORMAT_UNSPECIFIED && format != v1::WEIGHT_FORMAT_FP32 &&
         format != v1::WEIGHT_FORMAT_BF16 && format != v1::WEIGHT_FORMAT_FP16;
}

std::string FormatName(v1::WeightFormat format) {
  std::string name = v1::WeightFormat_Name(format);
  return name.substr(std::string("WEIGHT_FORMAT_").size());
}

// The request's deployment, with the launch line (when given) read into it.
absl::StatusOr<v1::Deployment> DeploymentOf(const v1::ValidateRequest& request,
                                            FindingList* findings) {
  if (request.launch_line().empty()) return request.deployment();
  if (!request.deployment().baseline_id().empty()) {
    return absl::InvalidArgumentError(
        "ValidateRequest.deployment.baseline_id is set with a launch_line; give one or the "
        "other");
  }
  absl::StatusOr<LaunchLine> launch = ParseLaunchLine(request.launch_line());
  if (!launch.ok()) {
    return absl::Status(launch.status().code(),
                        absl::StrCat("ValidateRequest.launch_line: ", launch.status().message()));
  }
  v1::Deployment d = launch->deployment;
  const v1::Deployment& given = request.deployment();
  d.set_hardware_id(given.hardware_id());
  if (given.has_hardware()) *d.mutable_hardware() = given.hardware();
  if (given.has_gpu_count()) d.set_gpu_count(given.gpu_count());
  if (given.has_model_config_json()) d.set_model_config_json(given.model_config_json());
  // What a launch line cannot say: the engine's version.
  if (!given.engine().version().empty()) d.mutable_engine()->set_version(given.engine().version());
  if (given.weight_format() != v1::WEIGHT_FORMAT_UNSPECIFIED) {
    d.set_weight_format(given.weight_format());
  }
  for (const std::string& flag : launch->unmodelled_flags) {
    findings->Add(v1::SEVERITY_INFO, kUnmodelledFlag, "ValidateRequest.launch_line",
                  absl::StrCat("'", flag,
                               "' is not modelled; its effect on memory and speed "
                               "is not in these figures"));
  }
  return d;
}

absl::Status CheckRequest(const v1::ValidateRequest& request) {
  for (int i = 0; i < request.allow_size(); ++i) {
    if (!KnownCodes().contains(request.allow(i))) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "ValidateRequest.allow[%d] = \"%s\"; not a finding code (%s)", i, request.allow(i),
          absl::StrJoin(std::vector<std::string>(KnownCodes().begin(), KnownCodes().end()), ", ")));
    }
  }
  const v1::ExpectedLoad& load = request.expected_load();
  if (load.has_concurrent_users() && (load.concurrent_users() == 0 ||
                                      load.concurrent_users() > model::kMaxClosedLoopConcurrency)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ValidateRequest.expected_load.concurrent_users = %d; must be in [1, %d]",
                        load.concurrent_users(), model::kMaxClosedLoopConcurrency));
  }
  if (load.has_requests_per_second() &&
      !(std::isfinite(load.requests_per_second()) && load.requests_per_second() > 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ValidateRequest.expected_load.requests_per_second = %g; must be > 0",
                        load.requests_per_second()));
  }
  if ((load.has_concurrent_users() || load.has_requests_per_second()) && !request.has_workload() &&
      request.deployment().baseline_id().empty()) {
    return absl::InvalidArgumentError(
        "ValidateRequest.workload.input_tokens and ValidateRequest.workload.output_tokens are "
        "not set; an expected load needs the request shape (or a deployment from a baseline, "
        "whose measured workload is then used)");
  }
  return absl::OkStatus();
}

// A passing long-generation or repetition-loop gate in a baseline of the
// same model family and weight format.
bool HasQualityEvidence(const Catalog& catalog, const v1::Model& model, v1::WeightFormat format,
                        std::string* where) {
  for (const v1::Baseline& b : catalog.baselines()) {
    const v1::Model* m = catalog.FindModel(b.deployment().model_id());
    if (m == nullptr || m->family().empty() || m->family() != model.family()) continue;
    v1::WeightFormat f = b.deployment().has_quantization() ? b.deployment().quantization().format()
                                                           : m->quantization().format();
    if (f != format) continue;
    for (const v1::QualityGate& gate : b.quality_gates()) {
      if (!gate.passed()) continue;
      for (const std::string& check : gate.checks()) {
        if (check == "long_generation" || check == "repetition_loop") {
          *where = absl::StrCat(b.id(), " (", gate.name(), ")");
          return true;
        }
      }
    }
  }
  return false;
}

// The context check runs first: past the model's context nothing else is
// meaningful at that length, so the rest is checked at the model's limit.
// `resolved` was resolved without max_model_len; this sets it.
void CheckContext(uint64_t requested_len, ResolvedDeployment* resolved, FindingList* findings) {
  const char kName[] = "context within the model's native length";
  if (requested_len == 0) {
    findings->Skip(kName, kContextBeyondNative,
                   "max_model_len not set: the engine's default applies");
    return;
  }
  const uint64_t limit = static_cast<uint64_t>(model::ContextLimitTokens(resolved->input.arch));
  const bool beyond = requested_len > limit;
  findings->Check(kName, kContextBeyondNative, !beyond,
                  absl::StrFormat("max_model_len %d, model limit %d", requested_len, limit));
  if (beyond) {
    findings->Add(v1::SEVERITY_ERROR, kContextBeyondNative,
                  "ValidateRequest.deployment.engine.max_model_len",
                  absl::StrFormat("max_model_len = %d tokens exceeds the model's context of %d "
                                  "tokens; the remaining checks use %d",
                                  requested_len, limit, limit),
                  {{"max_model_len_tokens", static_cast<double>(requested_len)},
                   {"model_context_tokens", static_cast<double>(limit)}});
  }
  resolved->engine.set_max_model_len(std::min(requested_len, limit));
  resolved->input.settings = ToEngineSettings(resolved->engine);
}

// The weights, overheads and state fit; the pool may still be short.
bool WeightsFit(const v1::MemoryPlan& memory) {
  return memory.fits() || memory.binding() == v1::MEMORY_BINDING_KV_POOL;
}

void CheckFit(const v1::MemoryPlan& memory, FindingList* findings) {
  const bool fits = WeightsFit(memory);
  findings->Check(
      "weights and overheads fit the GPU", kDoesNotFit, fits,
      absl::StrFormat("used %.2f GiB of %.2f GiB per GPU", memory.per_gpu().used_bytes() / kGiB,
                      memory.per_gpu().capacity_bytes() / kGiB));
  if (fits) return;
  findings->Add(v1::SEVERITY_ERROR, kDoesNotFit, kPath,
                absl::StrFormat("the deployment does not fit: %s is short by %.2f GiB per GPU",
                                ShortName(memory.binding()), memory.shortfall_bytes() / kGiB),
                {{"shortfall_bytes", static_cast<double>(memory.shortfall_bytes())},
                 {"capacity_bytes", static_cast<double>(memory.per_gpu().capacity_bytes())}});
}

void CheckPoolHoldsOneRequest(const v1::MemoryPlan& memory, FindingList* findings) {
  const char kName[] = "KV pool holds one request of max_model_len";
  const uint64_t max_len = memory.deployment().max_model_len();
  if (!WeightsFit(memory)) {
    findings->Skip(kName, kKvPoolBelowOneRequest, "the weights and overheads do not fit the GPU");
    return;
  }
  const bool one_request = memory.kv_pool_tokens() >= max_len;
  findings->Check(kName, kKvPoolBelowOneRequest, one_request,
                  absl::StrFormat("KV pool %s tokens, max_model_len %s tokens",
                                  GroupThousands(absl::StrCat(memory.kv_pool_tokens())),
                                  GroupThousands(absl::StrCat(max_len))));
  if (one_request) return;
  findings->Add(v1::SEVERITY_ERROR, kKvPoolBelowOneRequest,
                "ValidateRequest.deployment.engine.max_model_len",
                absl::StrFormat("the KV pool holds %d tokens, fewer than one request of "
                                "max_model_len = %d (the engine refuses to start); lower "
                                "max_model_len or add memory",
                                memory.kv_pool_tokens(), max_len),
                {{"kv_pool_tokens", static_cast<double>(memory.kv_pool_tokens())},
                 {"max_model_len_tokens", static_cast<double>(max_len)}});
}

void SkipMemoryChecks(const v1::Baseline& baseline, FindingList* findings) {
  const std::string why = absl::StrFormat(
      "baseline %s withholds its GPU: the card's memory is unknown (the load checks use the KV "
      "pool the baseline states)",
      baseline.id());
  findings->Skip("weights and overheads fit the GPU", kDoesNotFit, why);
  findings->Skip("KV pool holds one request of max_model_len", kKvPoolBelowOneRequest, why);
}

void CheckEngineVersion(const PreparedDeployment& d, FindingList* findings) {
  const v1::PlanProvenance& provenance = d.memory.provenance();
  const bool version_known = !provenance.engine_version_newer_than_presets();
  findings->Check("engine version covered by a preset", kUnknownEngineVersion, version_known,
                  provenance.engine_preset_id());
  if (!version_known) {
    findings->Add(v1::SEVERITY_WARNING, kUnknownEngineVersion,
                  "ValidateRequest.deployment.engine.version",
                  absl::StrFormat("engine version '%s' is newer than every preset; behaviour of "
                                  "preset %s assumed",
                                  d.resolved.engine.version(), provenance.engine_preset_id()));
  } else if (provenance.engine_version_assumed()) {
    findings->Add(v1::SEVERITY_INFO, kUnknownEngineVersion,
                  "ValidateRequest.deployment.engine.version",
                  absl::StrFormat("no engine version given; preset %s (the newest) assumed",
                                  provenance.engine_preset_id()));
  }
}

void CheckQualityEvidence(const Catalog& catalog, const ResolvedDeployment& r,
                          FindingList* findings) {
  const char kName[] = "quality evidence for the weight format";
  const v1::WeightFormat format = r.quantization.format();
  if (!IsQuantized(format)) {
    findings->Skip(kName, kNoQualityEvidence, "weights in their native dtype");
    return;
  }
  std::string where;
  const bool evidence = HasQualityEvidence(catalog, r.model, format, &where);
  findings->Check(kName, kNoQualityEvidence, evidence,
                  evidence ? where : "no passing long-generation or repetition-loop gate");
  if (evidence) return;
  findings->Add(
      v1::SEVERITY_WARNING, kNoQualityEvidence, "ValidateRequest.deployment.weight_format",
      absl::StrFormat("no baseline of model family '%s' in %s passed a long-generation "
                      "or repetition-loop gate; quantized models typically fail by "
                      "looping in long generations",
                      r.model.family().empty() ? "(none)" : r.model.family(), FormatName(format)));
}

// Without an expected load only the memory account is computed: the check
// then speaks of it alone (a measured deployment's load figures come from
// its baseline only when a load is asked for).
void CheckBackedByBaselines(const std::vector<v1::Tier>& tiers, bool load_checked,
                            FindingList* findings) {
  if (!load_checked && tiers.size() <= 1) {
    findings->Skip("figures backed by a baseline", kFarFromBaselines,
                   "no expected load: only the memory account was computed");
    return;
  }
  const bool near = std::any_of(tiers.begin(), tiers.end(), [](v1::Tier t) {
    return t == v1::TIER_MEASURED || t == v1::TIER_CALIBRATED;
  });
  findings->Check("figures backed by a baseline", kFarFromBaselines, near,
                  near ? "at least one figure is measured or calibrated"
                       : "every figure is extrapolated or roofline");
  if (near) return;
  findings->Add(v1::SEVERITY_WARNING, kFarFromBaselines, kPath,
                "no baseline measured this configuration at this load (nor calibrates it): "
                "every figure is extrapolated or from the roofline model; treat them as "
                "estimates");
}

// Allow-listed codes become warnings; any ERROR left fails.
void SetVerdict(const v1::ValidateRequest& request, v1::ValidateResponse* response) {
  const absl::flat_hash_set<std::string> allowed(request.allow().begin(), request.allow().end());
  bool fail = false;
  for (v1::Finding& f : *response->mutable_findings()) {
    if (f.severity() == v1::SEVERITY_ERROR && allowed.contains(f.code())) {
      f.set_severity(v1::SEVERITY_WARNING);
      f.set_message(absl::StrCat(f.message(), " (allowed)"));
    }
    fail |= f.severity() == v1::SEVERITY_ERROR;
  }
  response->set_verdict(fail ? v1::VERDICT_FAIL : v1::VERDICT_PASS);
}

std::optional<uint64_t> MeanSequence(const v1::ValidateRequest& request) {
  if (!request.has_workload()) return std::nullopt;
  const double tokens =
      std::round(request.workload().input_tokens() + request.workload().output_tokens());
  // Converted only where the conversion is defined (NaN and figures past 2^53
  // are no request's length; the workload's validation refuses them).
  if (!(tokens <= 0x1p53)) return std::nullopt;
  return static_cast<uint64_t>(std::max(1.0, tokens));
}

}  // namespace

absl::StatusOr<v1::ValidateResponse> Validate(const Catalog& catalog,
                                              const v1::ValidateRequest& request,
                                              WorkCounters* counters, model::Budget* budget) {
  CAPPLAN_RETURN_IF_ERROR(ValidateValidateRequest(request));
  CAPPLAN_RETURN_IF_ERROR(CheckRequest(request));
  v1::ValidateResponse response;
  FindingList findings(&response);
  CAPPLAN_ASSIGN_OR_RETURN(v1::Deployment deployment, DeploymentOf(request, &findings));
  // An expected load with no workload takes the workload the deployment's
  // baseline measured (as Plan does).
  v1::ValidateRequest with_workload;
  const v1::ValidateRequest* req = &request;
  const uint64_t requested_len = deployment.engine().max_model_len();
  deployment.mutable_engine()->clear_max_model_len();
  // A baseline that withholds its GPU is validated as Plan and PredictLoad
  // plan it: on its own measured rows, in the card's unknown units.
  CAPPLAN_ASSIGN_OR_RETURN(ResolvedDeployment r,
                           ResolveDeploymentAllowingWithheldHardware(catalog, deployment, kPath));
  // Without the request's own max_model_len, the baseline's (if any) applies.
  CheckContext(requested_len > 0 ? requested_len : r.engine.max_model_len(), &r, &findings);
  const bool has_load = request.expected_load().has_concurrent_users() ||
                        request.expected_load().has_requests_per_second();
  if (has_load && !request.has_workload() && r.baseline != nullptr) {
    std::vector<std::string> notes;
    with_workload = request;
    CAPPLAN_ASSIGN_OR_RETURN(*with_workload.mutable_workload(),
                             BaselineWorkload(*r.baseline, "ValidateRequest.workload", &notes));
    findings.Add(v1::SEVERITY_INFO, kWorkloadFromBaseline, "ValidateRequest.workload",
                 absl::StrFormat("no workload given: baseline %s's, %.1f input + %.1f output "
                                 "tokens per request",
                                 r.baseline->id(), with_workload.workload().input_tokens(),
                                 with_workload.workload().output_tokens()));
    for (const std::string& note : notes) {
      findings.Add(v1::SEVERITY_INFO, kWorkloadFromBaseline, "ValidateRequest.workload", note);
    }
    req = &with_workload;
  }
  CAPPLAN_ASSIGN_OR_RETURN(PreparedDeployment d,
                           PrepareDeployment(catalog, std::move(r), MeanSequence(*req), counters));
  if (req->has_workload()) {
    CAPPLAN_RETURN_IF_ERROR(CheckWorkloadWithinContext(req->workload(), d, "ValidateRequest"));
  }
  *response.mutable_memory() = d.memory;
  if (d.hardware_withheld) {
    SkipMemoryChecks(*d.resolved.baseline, &findings);
  } else {
    CheckFit(d.memory, &findings);
    CheckPoolHoldsOneRequest(d.memory, &findings);
  }
  CheckEngineVersion(d, &findings);
  CheckQualityEvidence(catalog, d.resolved, &findings);
  std::vector<v1::Tier> tiers = {d.memory.provenance().tier()};
  CAPPLAN_RETURN_IF_ERROR(
      AddLoadChecks(catalog, d, *req, &findings, &response, &tiers, counters, budget));
  CheckBackedByBaselines(tiers, has_load, &findings);
  SetVerdict(*req, &response);
  return response;
}

}  // namespace capplan::service
