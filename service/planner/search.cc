#include "service/planner/search.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <system_error>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "model/capacity.h"
#include "model/memory_model.h"
#include "model/search.h"
#include "service/catalog/suggest.h"
#include "service/planner/kv_tier.h"
#include "service/planner/plan.h"
#include "service/translate/deployment_resolver.h"
#include "service/translate/hf_config.h"
#include "service/translate/launch_command.h"
#include "service/translate/load_translation.h"
#include "service/translate/model_translation.h"

namespace capplan::service {
namespace {

constexpr char kPath[] = "SearchConfigsRequest";
// Relative margin on both axes of the cost front's pruning estimate.
constexpr double kFrontMargin = 0.1;

// One card × engine × weight format (× speculation): resolved once.
struct Template {
  const v1::Hardware* hardware = nullptr;
  bool inline_card = false;  // the request's own card (SearchConstraints.hardware)
  v1::EngineKind engine = v1::ENGINE_KIND_VLLM;
  v1::WeightFormat format = v1::WEIGHT_FORMAT_UNSPECIFIED;  // the checkpoint's
  bool speculative = false;
  std::optional<ResolvedDeployment> resolved;
  // The resolved model prepared once for its candidates' memory plans.
  std::optional<model::PreparedMemoryModel> memory;
  absl::Status status;
  std::optional<double> price;
  std::string price_source;
};

// One candidate: a template with a parallelism, KV dtype and sequence limit.
struct Spec {
  int template_index = 0;
  uint32_t tp = 1, pp = 1, ep = 1;
  v1::KvCacheDtype kv = v1::KV_CACHE_DTYPE_AUTO;
  uint32_t max_num_seqs = 0;
  uint32_t gpus() const { return tp * pp; }
};

// A candidate that passed memory and bounds, with what it can at best reach.
struct Survivor {
  int spec = 0;
  int replicas_lower = 1;
  std::optional<double> cost_per_million_lower;
  std::optional<double> monthly_cost_lower;
  double capacity_upper = 0;   // output tokens per month per replica
  double speed_upper = 0;      // per-user output tok/s
  double speed_estimate = 0;   // per-user output tok/s where the load is capped
  std::pair<int, double> key;  // objective bound: (unpriced?, value), smaller first
};

absl::Status Invalid(const std::string& field, const std::string& value, const std::string& rule) {
  return absl::InvalidArgumentError(absl::StrCat(kPath, ".", field, " = ", value, "; ", rule));
}

absl::Status CheckPositive(const std::string& field, bool has, double v) {
  if (has && !(std::isfinite(v) && v > 0)) return Invalid(field, absl::StrCat(v), "must be > 0");
  return absl::OkStatus();
}

absl::Status ValidateConstraints(const v1::SearchConstraints& c) {
  const std::string p = "constraints.";
  if (c.has_max_gpus_per_replica() &&
      (c.max_gpus_per_replica() < 1 || c.max_gpus_per_replica() > kSearchMaxGpusPerReplica)) {
    return Invalid(p + "max_gpus_per_replica", absl::StrCat(c.max_gpus_per_replica()),
                   absl::StrCat("must be in [1, ", kSearchMaxGpusPerReplica, "]"));
  }
  if (c.has_max_gpus_total() && c.max_gpus_total() < 1) {
    return Invalid(p + "max_gpus_total", "0", "must be >= 1");
  }
  for (int i = 0; i < c.max_num_seqs_size(); ++i) {
    if (c.max_num_seqs(i) < 1 || c.max_num_seqs(i) > model::kMaxSlots) {
      return Invalid(absl::StrCat(p, "max_num_seqs[", i, "]"), absl::StrCat(c.max_num_seqs(i)),
                     absl::StrCat("must be in [1, ", model::kMaxSlots, "]"));
    }
  }
  for (int i = 0; i < c.weight_formats_size(); ++i) {
    if (c.weight_formats(i) == v1::WEIGHT_FORMAT_UNSPECIFIED) {
      return Invalid(absl::StrCat(p, "weight_formats[", i, "]"), "WEIGHT_FORMAT_UNSPECIFIED",
                     "must name a format");
    }
  }
  for (int i = 0; i < c.engines_size(); ++i) {
    if (c.engines(i) != v1::ENGINE_KIND_VLLM && c.engines(i) != v1::ENGINE_KIND_SGLANG) {
      return Invalid(absl::StrCat(p, "engines[", i, "]"), v1::EngineKind_Name(c.engines(i)),
                     "must be ENGINE_KIND_VLLM or ENGINE_KIND_SGLANG");
    }
  }
  for (int i = 0; i < c.kv_cache_dtypes_size(); ++i) {
    if (c.kv_cache_dtypes(i) == v1::KV_CACHE_DTYPE_UNSPECIFIED) {
      return Invalid(absl::StrCat(p, "kv_cache_dtypes[", i, "]"), "KV_CACHE_DTYPE_UNSPECIFIED",
                     "must name a dtype (AUTO for the model's)");
    }
  }
  for (const auto& [id, price] : c.price_per_gpu_hour()) {
    if (!(std::isfinite(price) && price > 0)) {
      return Invalid(absl::StrCat(p, "price_per_gpu_hour[\"", id, "\"]"), absl::StrCat(price),
                     "must be > 0");
    }
  }
  return absl::OkStatus();
}

absl::Status ValidateTarget(const v1::SearchConfigsRequest& r) {
  switch (r.target_case()) {
    case v1::SearchConfigsRequest::kTargetRequestsPerSecond:
      return CheckPositive("target_requests_per_second", true, r.target_requests_per_second());
    case v1::SearchConfigsRequest::kTargetConcurrentUsers:
      return CheckPositive("target_concurrent_users", true, r.target_concurrent_users());
    case v1::SearchConfigsRequest::kTargetTokensPerMonth:
      return CheckPositive("target_tokens_per_month", true, r.target_tokens_per_month());
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          kPath,
          ".target is not set; give target_concurrent_users, target_requests_per_second "
          "or target_tokens_per_month"));
  }
}

}  // namespace

absl::Status ValidateSearchRequest(const v1::SearchConfigsRequest& r) {
  if (r.model_source_case() == v1::SearchConfigsRequest::MODEL_SOURCE_NOT_SET ||
      (r.has_model_id() && r.model_id().empty())) {
    return absl::InvalidArgumentError(
        absl::StrCat(kPath,
                     ".model_id is empty; set model_id (a catalogue or Hugging Face id) or "
                     "model_config_json"));
  }
  if (!r.has_workload()) {
    return absl::InvalidArgumentError(absl::StrCat(
        kPath, ".workload is missing; give input_tokens and output_tokens per request"));
  }
  LoadQuery q;
  q.path = kPath;
  q.workload = r.workload();
  q.slo = r.slo();
  CAPPLAN_RETURN_IF_ERROR(ValidateLoadQuery(q));
  CAPPLAN_RETURN_IF_ERROR(CheckPositive("min_user_tokens_per_second",
                                        r.has_min_user_tokens_per_second(),
                                        r.min_user_tokens_per_second()));
  CAPPLAN_RETURN_IF_ERROR(ValidateTarget(r));
  CAPPLAN_RETURN_IF_ERROR(ValidateConstraints(r.constraints()));
  if (r.has_top_k() && (r.top_k() < 1 || r.top_k() > kSearchMaxTopK)) {
    return Invalid("top_k", absl::StrCat(r.top_k()),
                   absl::StrCat("must be in [1, ", kSearchMaxTopK, "]"));
  }
  if (r.has_max_candidates() &&
      (r.max_candidates() < 1 || r.max_candidates() > kSearchMaxCandidates)) {
    return Invalid("max_candidates", absl::StrCat(r.max_candidates()),
                   absl::StrCat("must be in [1, ", kSearchMaxCandidates, "]"));
  }
  if (r.has_threads() && (r.threads() < 1 || r.threads() > kSearchMaxThreads)) {
    return Invalid("threads", absl::StrCat(r.threads()),
                   absl::StrCat("must be in [1, ", kSearchMaxThreads, "]"));
  }
  if (r.has_duty_factor() && !(r.duty_factor() > 0 && r.duty_factor() <= 1)) {
    return Invalid("duty_factor", absl::StrCat(r.duty_factor()), "must be in (0, 1]");
  }
  CAPPLAN_RETURN_IF_ERROR(
      CheckPositive("time_budget_seconds", r.has_time_budget_seconds(), r.time_budget_seconds()));
  if (r.has_max_model_len() &&
      r.max_model_len() < r.workload().input_tokens() + r.workload().output_tokens()) {
    return Invalid("max_model_len", absl::StrCat(r.max_model_len()),
                   absl::StrFormat("must hold one request: >= input + output = %.0f tokens",
                                   r.workload().input_tokens() + r.workload().output_tokens()));
  }
  return absl::OkStatus();
}

namespace {

// ----------------------------------------------------------------- requests

v1::Slo SearchSlo(const v1::SearchConfigsRequest& r) {
  v1::Slo slo = r.slo();
  if (r.has_min_user_tokens_per_second()) {
    const double tpot = 1.0 / r.min_user_tokens_per_second();
    if (!slo.has_tpot_seconds() || tpot < slo.tpot_seconds()) slo.set_tpot_seconds(tpot);
  }
  return slo;
}

uint64_t MaxModelLen(const v1::SearchConfigsRequest& r) {
  if (r.has_max_model_len()) return r.max_model_len();
  const double tokens = 2 * (r.workload().input_tokens() + r.workload().output_tokens());
  return static_cast<uint64_t>(std::ceil(tokens / 1024.0)) * 1024;
}

bool UsersTarget(const v1::SearchConfigsRequest& r) {
  return r.target_case() == v1::SearchConfigsRequest::kTargetConcurrentUsers;
}

void SetTarget(const v1::SearchConfigsRequest& r, v1::PlanRequest* plan) {
  switch (r.target_case()) {
    case v1::SearchConfigsRequest::kTargetRequestsPerSecond:
      plan->set_target_requests_per_second(r.target_requests_per_second());
      break;
    case v1::SearchConfigsRequest::kTargetConcurrentUsers:
      plan->set_target_concurrent_users(r.target_concurrent_users());
      break;
    case v1::SearchConfigsRequest::kTargetTokensPerMonth:
      plan->set_target_tokens_per_month(r.target_tokens_per_month());
      break;
    default:
      break;
  }
}

v1::PlanRequest UntargetedPlanRequest(const v1::SearchConfigsRequest& r,
                                      const v1::Deployment& deployment,
                                      std::optional<double> price) {
  v1::PlanRequest plan;
  *plan.mutable_deployment() = deployment;
  *plan.mutable_workload() = r.workload();
  *plan.mutable_slo() = SearchSlo(r);
  if (r.has_duty_factor()) plan.set_duty_factor(r.duty_factor());
  if (price.has_value()) plan.set_price_per_gpu_hour(*price);
  plan.set_kv_tier_id(r.kv_tier_id());
  for (uint64_t l : r.kv_restore_context_tokens()) plan.add_kv_restore_context_tokens(l);
  return plan;
}

v1::Deployment DeploymentFor(const v1::SearchConfigsRequest& r, const Template& t, const Spec& s) {
  v1::Deployment d;
  if (r.has_model_config_json()) {
    d.set_model_config_json(r.model_config_json());
  } else {
    d.set_model_id(r.model_id());
  }
  if (t.inline_card) {
    *d.mutable_hardware() = *t.hardware;
  } else {
    d.set_hardware_id(t.hardware->id());
  }
  d.set_gpu_count(s.gpus());
  d.mutable_parallelism()->set_tp(s.tp);
  d.mutable_parallelism()->set_pp(s.pp);
  if (s.ep > 1) d.mutable_parallelism()->set_ep(s.ep);
  if (t.format != v1::WEIGHT_FORMAT_UNSPECIFIED) d.set_weight_format(t.format);
  v1::EngineSettings* e = d.mutable_engine();
  e->set_kind(t.engine);
  e->set_max_model_len(MaxModelLen(r));
  e->set_max_num_seqs(s.max_num_seqs);
  e->set_kv_cache_dtype(s.kv);
  if (t.speculative) {
    e->set_speculative_method(v1::SPECULATIVE_METHOD_MTP);
    e->set_num_speculative_tokens(1);
  }
  return d;
}

// ----------------------------------------------------------------- enumeration

// The model the search is for (its heads, layers, experts and checkpoint).
absl::StatusOr<v1::Model> SearchModel(const Catalog& catalog, const v1::SearchConfigsRequest& r) {
  if (r.has_model_config_json()) {
    absl::StatusOr<v1::Model> m = ModelFromHfConfig(r.model_config_json());
    if (!m.ok()) {
      return absl::Status(m.status().code(),
                          absl::StrCat(kPath, ".model_config_json: ", m.status().message()));
    }
    return *m;
  }
  const v1::Model* m = catalog.FindModel(r.model_id());
  if (m == nullptr) {
    return absl::NotFoundError(absl::StrFormat(
        "%s.model_id = \"%s\"; not in the catalogue (ListModels lists them; or send the "
        "model's config.json as model_config_json)",
        kPath, r.model_id()));
  }
  return *m;
}

absl::StatusOr<std::vector<const v1::Hardware*>> SearchCards(const Catalog& catalog,
                                                             const v1::SearchConstraints& c) {
  std::vector<const v1::Hardware*> cards;
  for (int i = 0; i < c.hardware_ids_size(); ++i) {
    const v1::Hardware* h = catalog.FindHardware(c.hardware_ids(i));
    if (h == nullptr) {
      return absl::NotFoundError(absl::StrFormat(
          "%s.constraints.hardware_ids[%d] = \"%s\"; not in the catalogue (ListHardware lists "
          "them)",
          kPath, i, c.hardware_ids(i)));
    }
    cards.push_back(h);
  }
  absl::flat_hash_set<std::string> inline_ids;
  for (int i = 0; i < c.hardware_size(); ++i) {
    const std::string path = absl::StrCat(kPath, ".constraints.hardware[", i, "]");
    CAPPLAN_RETURN_IF_ERROR(CheckInlineHardware(catalog, c.hardware(i), path));
    if (!inline_ids.insert(c.hardware(i).id()).second) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s.id = \"%s\"; must be unique (another card of the request has it)",
                          path, c.hardware(i).id()));
    }
    cards.push_back(&c.hardware(i));
  }
  if (c.hardware_ids_size() == 0 && c.hardware_size() == 0) {
    for (const v1::Hardware& h : catalog.hardware()) cards.push_back(&h);
  }
  if (c.vendors_size() > 0) {
    std::vector<const v1::Hardware*> kept;
    for (const v1::Hardware* h : cards) {
      for (const std::string& v : c.vendors()) {
        if (absl::EqualsIgnoreCase(v, h->vendor())) kept.push_back(h);
      }
    }
    cards = std::move(kept);
  }
  if (cards.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(kPath, ".constraints: no card matches hardware_ids, hardware and vendors"));
  }
  return cards;
}

std::vector<v1::WeightFormat> SearchFormats(const v1::SearchConstraints& c, const v1::Model& m) {
  if (c.weight_formats_size() > 0) {
    std::vector<v1::WeightFormat> out;
    for (int f : c.weight_formats()) {
      const auto format = static_cast<v1::WeightFormat>(f);
      out.push_back(format == m.quantization().format() ? v1::WEIGHT_FORMAT_UNSPECIFIED : format);
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
    return out;
  }
  std::vector<v1::WeightFormat> out = {v1::WEIGHT_FORMAT_UNSPECIFIED};
  // A 16-bit checkpoint: also FP8 (online) and 4-bit AWQ (a quantized checkpoint).
  if (!m.has_quantization()) {
    out.push_back(v1::WEIGHT_FORMAT_FP8_PER_TENSOR);
    out.push_back(v1::WEIGHT_FORMAT_INT4_AWQ);
  }
  return out;
}

template <typename Enum, typename List>
std::vector<Enum> OrDefault(const List& list, std::vector<Enum> fallback) {
  if (list.empty()) return fallback;
  std::vector<Enum> out;
  for (int v : list) out.push_back(static_cast<Enum>(v));
  return out;
}

std::vector<uint32_t> PowersOfTwoUpTo(uint32_t n) {
  std::vector<uint32_t> out;
  for (uint32_t g = 1; g <= n; g *= 2) out.push_back(g);
  return out;
}

// The price of one GPU-hour: the request's, the catalogue's, or none.
void SetPrice(const v1::SearchConstraints& c, Template* t) {
  auto it = c.price_per_gpu_hour().find(t->hardware->id());
  if (it != c.price_per_gpu_hour().end()) {
    t->price = it->second;
    t->price_source = "request";
  } else if (t->hardware->has_price_per_hour()) {
    t->price = t->hardware->price_per_hour();
    t->price_source = absl::StrCat("catalogue (", t->hardware->price_as_of(), ")");
  } else {
    t->price_source = "no price";
  }
}

}  // namespace

namespace {

// ----------------------------------------------------------------- the search

class Searcher {
 public:
  Searcher(const Catalog& catalog, const v1::SearchConfigsRequest& request, absl::Time deadline,
           WorkCounters* counters, model::Budget* stop)
      : catalog_(catalog),
        request_(request),
        deadline_(deadline),
        counters_(counters),
        stop_(stop) {
    if (request.has_duty_factor()) period_.duty_factor = request.duty_factor();
    top_k_ = request.has_top_k() ? request.top_k() : kSearchDefaultTopK;
    objective_ = request.objective() == v1::SEARCH_OBJECTIVE_UNSPECIFIED ? v1::SEARCH_OBJECTIVE_COST
                                                                         : request.objective();
    workload_ = ToModelWorkload(request.workload());
    slo_ = SearchSlo(request);
  }

  absl::StatusOr<v1::SearchConfigsResponse> Run();

 private:
  absl::Status Enumerate();
  void MakeTemplates(const std::vector<const v1::Hardware*>& cards);
  void MemoryAndBounds();
  std::optional<Survivor> Bound(int spec_index, const model::MemoryPlanInput& input,
                                const model::MemoryPlan& plan);
  model::StepTimeCoefficients Coefficients(const Spec& spec, const model::MemoryPlanInput& input,
                                           const model::MemoryPlan& plan);
  void Exact();
  bool Needed(const Survivor& s) const;
  // One survivor evaluated as Plan evaluates it: the candidate, or why it is
  // refused. Reads the searcher only (safe on several threads at once).
  struct Outcome {
    std::optional<v1::SearchCandidate> candidate;
    v1::SearchRefusal refusal = v1::SEARCH_REFUSAL_UNSPECIFIED;
    std::string why;
  };
  Outcome Evaluate(const Survivor& s, WorkCounters* counters) const;
  void Commit(const Survivor& s, Outcome outcome);
  void Refuse(v1::SearchRefusal reason, const Spec& spec, absl::string_view why);
  std::pair<int, double> Key(const v1::SearchCandidate& c) const;
  void Finish();
  bool PastDeadline();
  std::string Describe(const Spec& s) const;

  const Catalog& catalog_;
  const v1::SearchConfigsRequest& request_;
  absl::Time deadline_;
  WorkCounters* counters_;
  model::Budget* stop_;  // may be null
  bool stopped_ = false;
  model::CapacityPeriod period_;
  uint32_t top_k_ = kSearchDefaultTopK;
  v1::SearchObjective objective_ = v1::SEARCH_OBJECTIVE_COST;
  model::Workload workload_;
  v1::Slo slo_;
  v1::Model model_;
  absl::Time start_ = absl::Now();

  std::vector<Template> templates_;
  // The coefficients Plan will use, per template and parallelism.
  std::map<std::tuple<int, uint32_t, uint32_t, uint32_t>, model::StepTimeCoefficients> fits_;
  std::vector<Spec> specs_;
  std::vector<Survivor> survivors_;
  std::vector<v1::SearchCandidate> exact_;
  std::vector<model::FrontPoint> cost_points_, capacity_points_;
  std::vector<std::pair<int, double>> top_keys_;  // sorted
  std::map<v1::SearchRefusal, std::pair<uint32_t, std::string>> refusals_;
  v1::SearchConfigsResponse response_;
};

bool Searcher::PastDeadline() {
  if (absl::Now() < deadline_) {
    // Not the deadline: the client gone or the server draining ends the
    // search without an answer.
    if (stop_ != nullptr && stop_->PollNow()) stopped_ = true;
    return stopped_;
  }
  if (!response_.truncated()) {
    response_.set_truncated(true);
    response_.set_truncated_reason("deadline: the answer holds what was found until then");
  }
  return true;
}

std::string Searcher::Describe(const Spec& s) const {
  const Template& t = templates_[s.template_index];
  return absl::StrFormat("%d × %s tp %d pp %d%s, %s, weights %s, kv %s, max_num_seqs %d", s.gpus(),
                         t.hardware->id(), s.tp, s.pp, s.ep > 1 ? absl::StrCat(" ep ", s.ep) : "",
                         t.engine == v1::ENGINE_KIND_SGLANG ? "sglang" : "vllm",
                         t.format == v1::WEIGHT_FORMAT_UNSPECIFIED
                             ? std::string("checkpoint")
                             : v1::WeightFormat_Name(t.format).substr(14),
                         v1::KvCacheDtype_Name(s.kv).substr(15), s.max_num_seqs);
}

void Searcher::Refuse(v1::SearchRefusal reason, const Spec& spec, absl::string_view why) {
  auto& [count, example] = refusals_[reason];
  if (count++ == 0) example = absl::StrCat(Describe(spec), ": ", why);
}

void Searcher::MakeTemplates(const std::vector<const v1::Hardware*>& cards) {
  const v1::SearchConstraints& c = request_.constraints();
  const auto engines =
      OrDefault<v1::EngineKind>(c.engines(), {v1::ENGINE_KIND_VLLM, v1::ENGINE_KIND_SGLANG});
  std::vector<bool> speculation = {false};
  if (c.speculative_decoding() && model_.num_mtp_layers() > 0) speculation.push_back(true);
  for (const v1::Hardware* h : cards) {
    for (v1::EngineKind e : engines) {
      for (v1::WeightFormat f : SearchFormats(c, model_)) {
        for (bool spec : speculation) {
          Template t;
          t.hardware = h;
          t.inline_card = catalog_.FindHardware(h->id()) == nullptr;
          t.engine = e;
          t.format = f;
          t.speculative = spec;
          SetPrice(c, &t);
          Spec probe{0, 1, 1, 1, v1::KV_CACHE_DTYPE_AUTO, 1};
          absl::StatusOr<ResolvedDeployment> r = ResolveDeployment(
              catalog_, DeploymentFor(request_, t, probe), absl::StrCat(kPath, ".candidate"));
          if (r.ok()) {
            t.resolved = *std::move(r);
            absl::StatusOr<model::PreparedMemoryModel> m =
                model::PreparedMemoryModel::Create(t.resolved->input);
            if (m.ok()) t.memory = *std::move(m);
          } else {
            t.status = r.status();
          }
          templates_.push_back(std::move(t));
        }
      }
    }
  }
}

absl::Status Searcher::Enumerate() {
  CAPPLAN_ASSIGN_OR_RETURN(model_, SearchModel(catalog_, request_));
  const v1::SearchConstraints& c = request_.constraints();
  CAPPLAN_ASSIGN_OR_RETURN(std::vector<const v1::Hardware*> cards, SearchCards(catalog_, c));
  MakeTemplates(cards);
  const uint32_t max_gpus =
      c.has_max_gpus_per_replica() ? c.max_gpus_per_replica() : kSearchDefaultMaxGpusPerReplica;
  const auto kvs = OrDefault<v1::KvCacheDtype>(c.kv_cache_dtypes(),
                                               {v1::KV_CACHE_DTYPE_AUTO, v1::KV_CACHE_DTYPE_FP8});
  // Element by element: GCC 12 takes the range constructor over a
  // RepeatedField for a free of a non-heap pointer (-Wfree-nonheap-object).
  std::vector<uint32_t> seqs;
  for (uint32_t n : c.max_num_seqs()) seqs.push_back(n);
  if (seqs.empty()) seqs = {32, 64, 128, 256, 512};
  const bool moe = model_.has_moe() && c.try_expert_parallel();
  const uint32_t cap =
      request_.has_max_candidates() ? request_.max_candidates() : kSearchDefaultMaxCandidates;
  for (int ti = 0; ti < static_cast<int>(templates_.size()); ++ti) {
    const v1::Hardware& h = *templates_[ti].hardware;
    uint32_t per_node = h.max_gpus_per_node() > 0 ? h.max_gpus_per_node() : 8;
    const uint32_t limit = c.allow_multi_node() ? max_gpus : std::min(max_gpus, per_node);
    for (uint32_t gpus : PowersOfTwoUpTo(limit)) {
      for (uint32_t pp : PowersOfTwoUpTo(gpus)) {
        const uint32_t tp = gpus / pp;
        for (uint32_t ep : moe&& tp > 1 ? std::vector<uint32_t>{1, tp} : std::vector<uint32_t>{1}) {
          for (v1::KvCacheDtype kv : kvs) {
            for (uint32_t s : seqs) {
              if (specs_.size() >= cap) {
                response_.set_truncated(true);
                response_.set_truncated_reason(absl::StrFormat(
                    "candidate cap %d: the rest of the space was not enumerated", cap));
                return absl::OkStatus();
              }
              specs_.push_back(Spec{ti, tp, pp, ep, kv, s});
            }
          }
        }
      }
    }
  }
  return absl::OkStatus();
}

// The resolved input with the candidate's parallelism and engine knobs, set
// the way ResolveDeployment sets them.
model::MemoryPlanInput InputFor(const ResolvedDeployment& r, const Spec& s) {
  model::MemoryPlanInput in = r.input;
  v1::Parallelism p = r.parallelism;
  p.set_tp(s.tp);
  p.set_pp(s.pp);
  p.set_dp(1);
  p.set_ep(std::max<uint32_t>(1, s.ep));
  in.parallelism = ToParallelism(p);
  v1::EngineConfig e = r.engine;
  e.set_kv_cache_dtype(s.kv);
  e.set_max_num_seqs(s.max_num_seqs);
  in.settings = ToEngineSettings(e);
  return in;
}

void Searcher::MemoryAndBounds() {
  for (int i = 0; i < static_cast<int>(specs_.size()); ++i) {
    if (i % 256 == 0 && PastDeadline()) return;
    const Spec& s = specs_[i];
    const Template& t = templates_[s.template_index];
    if (!t.resolved.has_value()) {
      Refuse(t.status.code() == absl::StatusCode::kFailedPrecondition ? v1::SEARCH_REFUSAL_NO_MODEL
                                                                      : v1::SEARCH_REFUSAL_INVALID,
             s, t.status.message());
      continue;
    }
    const model::MemoryPlanInput input = InputFor(*t.resolved, s);
    if (counters_ != nullptr) ++counters_->memory_plans;
    absl::StatusOr<model::MemoryPlan> plan = t.memory.has_value()
                                                 ? t.memory->Plan(input.parallelism, input.settings)
                                                 : model::PlanMemory(input);
    response_.set_candidates_evaluated(response_.candidates_evaluated() + 1);
    if (!plan.ok()) {
      Refuse(v1::SEARCH_REFUSAL_INVALID, s, plan.status().message());
      continue;
    }
    if (!plan->fits) {
      const bool kv = plan->binding_constraint == model::BindingConstraint::kKvPool ||
                      plan->binding_constraint == model::BindingConstraint::kStateSlots;
      Refuse(kv ? v1::SEARCH_REFUSAL_KV_BELOW_ONE_REQUEST : v1::SEARCH_REFUSAL_DOES_NOT_FIT, s,
             absl::StrFormat("%s binds, short by %.2f GiB per GPU",
                             model::BindingConstraintName(plan->binding_constraint),
                             plan->shortfall_bytes / (1024.0 * 1024 * 1024)));
      continue;
    }
    std::optional<Survivor> survivor = Bound(i, input, *plan);
    if (survivor.has_value()) survivors_.push_back(*survivor);
  }
}

// What ChooseFit gives the deployment (its own baselines' fit, else the
// closest prior, else the roofline); memoised per template and parallelism,
// which are what select the baselines and the prior class.
model::StepTimeCoefficients Searcher::Coefficients(const Spec& s,
                                                   const model::MemoryPlanInput& input,
                                                   const model::MemoryPlan& plan) {
  const auto key = std::make_tuple(s.template_index, s.tp, s.pp, s.ep);
  auto it = fits_.find(key);
  if (it != fits_.end()) return it->second;
  model::StepTimeCoefficients c = model::StepTimeCoefficients::Roofline();
  const Template& t = templates_[s.template_index];
  if (!t.speculative) {
    ResolvedDeployment r = *t.resolved;
    r.input = input;
    r.gpu_count = s.gpus();
    r.parallelism.set_tp(s.tp);
    r.parallelism.set_pp(s.pp);
    r.parallelism.set_ep(std::max<uint32_t>(1, s.ep));
    r.parallelism.set_dp(1);
    absl::StatusOr<PreparedDeployment> d =
        PrepareDeployment(catalog_, std::move(r), std::nullopt, counters_, &plan);
    LoadQuery q;
    q.path = kPath;
    q.workload = request_.workload();
    q.slo = slo_;
    std::vector<std::string> notes;
    if (d.ok() && d->performance_status.ok()) {
      absl::StatusOr<FitSource> fit = ChooseFit(catalog_, *d, q, std::nullopt, &notes, counters_);
      if (fit.ok() && fit->fit.has_value()) c = fit->fit->calibration.coefficients;
    }
  }
  fits_.emplace(key, c);
  return c;
}

std::optional<Survivor> Searcher::Bound(int index, const model::MemoryPlanInput& input,
                                        const model::MemoryPlan& plan) {
  const Spec& s = specs_[index];
  const Template& t = templates_[s.template_index];
  absl::StatusOr<BoundInputs> in = BoundInputsFor(
      *t.resolved, input, plan, t.memory.has_value() ? &t.memory->parameter_counts() : nullptr);
  if (!in.ok()) {
    Refuse(v1::SEARCH_REFUSAL_NO_MODEL, s, in.status().message());
    return std::nullopt;
  }
  absl::StatusOr<model::Slots> slots = model::ComputeSlots(in->limits, workload_);
  if (!slots.ok()) {
    Refuse(v1::SEARCH_REFUSAL_KV_BELOW_ONE_REQUEST, s, slots.status().message());
    return std::nullopt;
  }
  std::optional<double> ttft, tpot;
  if (slo_.has_ttft_p95_seconds()) ttft = slo_.ttft_p95_seconds();
  if (slo_.has_tpot_seconds()) tpot = slo_.tpot_seconds();
  response_.set_bound_evaluations(response_.bound_evaluations() + 1);
  in->model.coefficients = Coefficients(s, input, plan);
  absl::StatusOr<model::RooflineBounds> b =
      model::ComputeModelBounds(in->model, workload_, slots->slots, ttft, tpot);
  if (!b.ok() || b->slo_missed || b->max_requests_per_second <= 0) {
    Refuse(v1::SEARCH_REFUSAL_SLO_MISSED, s,
           !b.ok() ? std::string(b.status().message())
                   : absl::StrFormat("floors TTFT %.3f s, TPOT %.4f s already miss the SLO",
                                     b->ttft_lower_seconds, b->tpot_lower_seconds));
    return std::nullopt;
  }
  absl::StatusOr<model::MonthlyCapacity> cap = model::MonthlyCapacityFromRequests(
      b->max_requests_per_second, workload_.input_tokens, workload_.output_tokens, period_);
  if (!cap.ok()) return std::nullopt;
  double per_replica = b->max_requests_per_second, target = 0;
  switch (request_.target_case()) {
    case v1::SearchConfigsRequest::kTargetConcurrentUsers:
      per_replica = b->max_users;
      target = request_.target_concurrent_users();
      break;
    case v1::SearchConfigsRequest::kTargetTokensPerMonth:
      per_replica = cap->tokens_per_month_total;
      target = request_.target_tokens_per_month();
      break;
    default:
      target = request_.target_requests_per_second();
  }
  Survivor v;
  v.spec = index;
  v.replicas_lower = model::ReplicasForTarget(target, per_replica).value_or(1);
  const v1::SearchConstraints& c = request_.constraints();
  if (c.has_max_gpus_total() &&
      static_cast<uint64_t>(v.replicas_lower) * s.gpus() > c.max_gpus_total()) {
    Refuse(v1::SEARCH_REFUSAL_OVER_GPU_LIMIT, s,
           absl::StrFormat("needs at least %d replicas × %d GPUs > max_gpus_total %d",
                           v.replicas_lower, s.gpus(), c.max_gpus_total()));
    return std::nullopt;
  }
  v.capacity_upper = cap->output_tokens_per_month;
  v.speed_upper = 1.0 / b->tpot_lower_seconds;
  v.speed_estimate = b->user_tokens_per_second_at_max_users;
  const double gpus = static_cast<double>(v.replicas_lower) * s.gpus();
  if (t.price.has_value()) {
    v.cost_per_million_lower =
        model::CostPerMillionOutputTokens(*t.price, s.gpus(), period_, v.capacity_upper)
            .value_or(0);
    v.monthly_cost_lower = *t.price * gpus * 24 * period_.days;
  }
  switch (objective_) {
    case v1::SEARCH_OBJECTIVE_GPUS:
      v.key = {0, gpus};
      break;
    case v1::SEARCH_OBJECTIVE_USER_SPEED:
      v.key = {0, -v.speed_upper};
      break;
    default:
      v.key =
          t.price.has_value() ? std::make_pair(0, *v.monthly_cost_lower) : std::make_pair(1, gpus);
  }
  return v;
}

std::pair<int, double> Searcher::Key(const v1::SearchCandidate& c) const {
  switch (objective_) {
    case v1::SEARCH_OBJECTIVE_GPUS:
      return {0, static_cast<double>(c.total_gpus())};
    case v1::SEARCH_OBJECTIVE_USER_SPEED:
      return {0, -c.user_output_tokens_per_second()};
    default:
      return c.has_monthly_cost() ? std::make_pair(0, c.monthly_cost())
                                  : std::make_pair(1, static_cast<double>(c.total_gpus()));
  }
}

// Whether the survivor's bounds can still reach a front or the top-k.
bool Searcher::Needed(const Survivor& s) const {
  const Spec& spec = specs_[s.spec];
  // The safe point's speed is 1 ÷ TPOT at a load the bounds cannot pin
  // down from below: the cost front is pruned on the estimate at the capped
  // load, with a margin on both axes.
  if (s.cost_per_million_lower.has_value() &&
      !model::Dominated(cost_points_, {*s.cost_per_million_lower * (1 - kFrontMargin),
                                       s.speed_estimate * (1 + kFrontMargin)})) {
    return true;
  }
  if (!model::Dominated(capacity_points_, {static_cast<double>(spec.gpus()), s.capacity_upper})) {
    return true;
  }
  return top_keys_.size() < top_k_ || s.key < top_keys_[top_k_ - 1];
}

void Searcher::Exact() {
  std::stable_sort(survivors_.begin(), survivors_.end(),
                   [](const Survivor& a, const Survivor& b) { return a.key < b.key; });
  const size_t threads = std::min<size_t>(request_.has_threads() ? request_.threads() : 1,
                                          std::max<size_t>(1, std::thread::hardware_concurrency()));
  // Batches of `threads` survivors, each pruned against the answers of the
  // batches before it, evaluated at once, and committed in order.
  size_t next = 0;
  std::vector<const Survivor*> batch;
  while (next < survivors_.size()) {
    if (PastDeadline()) return;
    batch.clear();
    while (next < survivors_.size() && batch.size() < threads) {
      const Survivor& s = survivors_[next++];
      if (!Needed(s)) {
        Refuse(v1::SEARCH_REFUSAL_DOMINATED, specs_[s.spec],
               "its roofline bounds cannot reach either front or the top-k");
        continue;
      }
      batch.push_back(&s);
    }
    std::vector<Outcome> outcomes(batch.size());
    if (batch.size() == 1) {
      outcomes[0] = Evaluate(*batch[0], counters_);
    } else if (!batch.empty()) {
      std::vector<WorkCounters> counts(batch.size());
      std::vector<std::thread> workers;
      workers.reserve(batch.size() - 1);
      // Survivors no thread could be started for are evaluated here.
      size_t started = 1;
      for (; started < batch.size(); ++started) {
        try {
          workers.emplace_back([&, i = started] { outcomes[i] = Evaluate(*batch[i], &counts[i]); });
        } catch (const std::system_error&) {
          break;
        }
      }
      outcomes[0] = Evaluate(*batch[0], &counts[0]);
      for (size_t i = started; i < batch.size(); ++i) outcomes[i] = Evaluate(*batch[i], &counts[i]);
      for (std::thread& w : workers) w.join();
      if (counters_ != nullptr) {
        for (const WorkCounters& c : counts) {
          counters_->memory_plans += c.memory_plans;
          counters_->fits += c.fits;
        }
      }
    }
    for (size_t i = 0; i < batch.size(); ++i) Commit(*batch[i], std::move(outcomes[i]));
  }
}

void Searcher::Commit(const Survivor& s, Outcome outcome) {
  response_.set_exact_evaluations(response_.exact_evaluations() + 1);
  if (!outcome.candidate.has_value()) {
    Refuse(outcome.refusal, specs_[s.spec], outcome.why);
    return;
  }
  v1::SearchCandidate& c = *outcome.candidate;
  if (c.has_cost_per_million_output_tokens()) {
    cost_points_.push_back({c.cost_per_million_output_tokens(), c.user_output_tokens_per_second()});
  }
  capacity_points_.push_back(
      {static_cast<double>(c.gpus_per_replica()), c.capacity().output_tokens_per_month()});
  const auto key = Key(c);
  top_keys_.insert(std::upper_bound(top_keys_.begin(), top_keys_.end(), key), key);
  exact_.push_back(std::move(c));
}

// Plan on the candidate, then the target's sizing; refusals counted here.
Searcher::Outcome Searcher::Evaluate(const Survivor& s, WorkCounters* counters) const {
  const Spec& spec = specs_[s.spec];
  const Template& t = templates_[spec.template_index];
  v1::SearchCandidate c;
  *c.mutable_deployment() = DeploymentFor(request_, t, spec);
  v1::PlanRequest plan_request = UntargetedPlanRequest(request_, c.deployment(), t.price);
  absl::StatusOr<v1::PlanResponse> plan = Plan(catalog_, plan_request, counters);
  auto refuse = [](v1::SearchRefusal reason, absl::string_view why) {
    Outcome o;
    o.refusal = reason;
    o.why = std::string(why);
    return o;
  };
  if (!plan.ok()) {
    const bool kv = absl::StrContains(plan.status().message(), "cannot hold one request");
    return refuse(kv ? v1::SEARCH_REFUSAL_KV_BELOW_ONE_REQUEST
                     : (plan.status().code() == absl::StatusCode::kInvalidArgument
                            ? v1::SEARCH_REFUSAL_INVALID
                            : v1::SEARCH_REFUSAL_SLO_MISSED),
                  plan.status().message());
  }
  if (!plan->memory().fits()) {
    return refuse(v1::SEARCH_REFUSAL_DOES_NOT_FIT, "does not fit (with the measured figures)");
  }
  const v1::OperatingPoint& safe =
      UsersTarget(request_) ? plan->safe_closed_loop() : plan->safe_open_loop();
  if (!safe.found() || !safe.has_tpot_seconds() || !(safe.tpot_seconds() > 0)) {
    return refuse(safe.binding() == v1::LOAD_BINDING_STABILITY ? v1::SEARCH_REFUSAL_UNSTABLE
                                                               : v1::SEARCH_REFUSAL_SLO_MISSED,
                  "no load meets the SLO");
  }
  SetTarget(request_, &plan_request);
  if (!AddSizing(plan_request, spec.gpus(), &*plan).ok()) {
    return refuse(v1::SEARCH_REFUSAL_SLO_MISSED, "no safe load for the target");
  }
  const v1::Sizing& sizing = plan->sizing();
  const v1::SearchConstraints& k = request_.constraints();
  if (k.has_max_gpus_total() && sizing.gpus() > k.max_gpus_total()) {
    return refuse(v1::SEARCH_REFUSAL_OVER_GPU_LIMIT,
                  absl::StrFormat("%d GPUs for the target > max_gpus_total %d", sizing.gpus(),
                                  k.max_gpus_total()));
  }
  const uint32_t per_node = std::max<uint32_t>(1, t.hardware->max_gpus_per_node());
  c.set_gpus_per_replica(spec.gpus());
  c.set_nodes_per_replica((spec.gpus() + per_node - 1) / per_node);
  c.set_replicas(sizing.replicas());
  c.set_total_gpus(sizing.gpus());
  *c.mutable_safe_point() = safe;
  c.set_user_output_tokens_per_second(1.0 / safe.tpot_seconds());
  *c.mutable_capacity() = plan->capacity();
  c.set_output_tokens_per_month_total(sizing.replicas() *
                                      plan->capacity().output_tokens_per_month());
  c.set_price_source(t.price_source);
  if (t.price.has_value()) {
    c.set_price_per_gpu_hour(*t.price);
    c.set_monthly_cost(*t.price * sizing.gpus() * 24 * plan->capacity().days_per_month());
  }
  if (plan->has_cost_per_million_output_tokens()) {
    c.set_cost_per_million_output_tokens(plan->cost_per_million_output_tokens());
  }
  c.set_kv_pool_tokens(plan->memory().kv_pool_tokens());
  *c.mutable_provenance() = plan->provenance();
  if (plan->has_scaling()) *c.mutable_scaling() = plan->scaling();
  if (plan->has_kv_tier()) *c.mutable_kv_tier() = plan->kv_tier();
  Outcome done;
  done.candidate = std::move(c);
  return done;
}

void AddLaunchLine(const Catalog& catalog, v1::SearchCandidate* c) {
  absl::StatusOr<ResolvedDeployment> r =
      ResolveDeployment(catalog, c->deployment(), absl::StrCat(kPath, ".candidate"));
  if (!r.ok()) return;
  LaunchCommand line = FormatLaunchCommand(*r);
  c->set_launch_line(line.line);
  for (std::string& n : line.notes) c->add_notes(std::move(n));
  if (c->nodes_per_replica() > 1) {
    c->add_notes(absl::StrFormat("one replica spans %d nodes", c->nodes_per_replica()));
  }
}

void Searcher::Finish() {
  std::vector<model::FrontPoint> cost, capacity;
  std::vector<int> priced;
  for (int i = 0; i < static_cast<int>(exact_.size()); ++i) {
    const v1::SearchCandidate& c = exact_[i];
    if (c.has_cost_per_million_output_tokens()) {
      priced.push_back(i);
      cost.push_back({c.cost_per_million_output_tokens(), c.user_output_tokens_per_second()});
    }
    capacity.push_back(
        {static_cast<double>(c.gpus_per_replica()), c.capacity().output_tokens_per_month()});
  }
  for (int i : model::ParetoFront(cost)) exact_[priced[i]].set_on_cost_front(true);
  for (int i : model::ParetoFront(capacity)) exact_[i].set_on_capacity_front(true);
  for (v1::SearchCandidate& c : exact_) {
    if (c.on_cost_front() || c.on_capacity_front()) AddLaunchLine(catalog_, &c);
  }
  for (int i : model::ParetoFront(cost)) *response_.add_cost_front() = exact_[priced[i]];
  for (int i : model::ParetoFront(capacity)) *response_.add_capacity_front() = exact_[i];
  std::vector<int> order(exact_.size());
  for (int i = 0; i < static_cast<int>(order.size()); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return Key(exact_[a]) < Key(exact_[b]); });
  for (int i = 0; i < static_cast<int>(order.size()) && i < static_cast<int>(top_k_); ++i) {
    v1::SearchCandidate* c = response_.add_top();
    *c = exact_[order[i]];
    if (c->launch_line().empty()) AddLaunchLine(catalog_, c);
  }
  for (const auto& [reason, entry] : refusals_) {
    v1::SearchRefusalCount* r = response_.add_refusals();
    r->set_reason(reason);
    r->set_count(entry.first);
    r->set_example(entry.second);
  }
  response_.set_objective(objective_);
  response_.set_elapsed_seconds(absl::ToDoubleSeconds(absl::Now() - start_));
}

absl::StatusOr<v1::SearchConfigsResponse> Searcher::Run() {
  CAPPLAN_RETURN_IF_ERROR(Enumerate());
  response_.set_candidates_enumerated(static_cast<uint32_t>(specs_.size()));
  const absl::Time enumerated = absl::Now();
  MemoryAndBounds();
  const absl::Time bounded = absl::Now();
  Exact();
  const absl::Time exact = absl::Now();
  if (stopped_) return stop_->status();
  Finish();
  response_.add_notes(absl::StrFormat(
      "time: enumeration %.1f ms, memory and bounds %.1f ms (%d coefficient sets), exact %.1f ms",
      absl::ToDoubleMilliseconds(enumerated - start_),
      absl::ToDoubleMilliseconds(bounded - enumerated), fits_.size(),
      absl::ToDoubleMilliseconds(exact - bounded)));
  for (const Template& t : templates_) {
    if (!t.price.has_value()) {
      response_.add_notes(absl::StrFormat(
          "%s: no price (none in the catalogue or the request): left out of the cost front",
          t.hardware->id()));
    }
  }
  std::vector<std::string> notes(response_.notes().begin(), response_.notes().end());
  notes.erase(std::unique(notes.begin(), notes.end()), notes.end());
  response_.clear_notes();
  for (std::string& n : notes) response_.add_notes(std::move(n));
  return std::move(response_);
}

}  // namespace

namespace {

// The tier is looked up and the contexts checked before anything is
// enumerated, so a typo fails at once rather than once per candidate.
absl::Status CheckKvTier(const Catalog& catalog, const v1::SearchConfigsRequest& r) {
  CAPPLAN_RETURN_IF_ERROR(CheckKvRestoreContexts(
      r.kv_restore_context_tokens(), !r.kv_tier_id().empty(), static_cast<int64_t>(MaxModelLen(r)),
      "SearchConfigsRequest", "the candidates'"));
  if (r.kv_tier_id().empty()) return absl::OkStatus();
  return CheckKvTierId(catalog, r.kv_tier_id(), "SearchConfigsRequest.kv_tier_id");
}

}  // namespace

absl::StatusOr<v1::SearchConfigsResponse> SearchConfigs(const Catalog& catalog,
                                                        const v1::SearchConfigsRequest& request,
                                                        absl::Time deadline, WorkCounters* counters,
                                                        model::Budget* stop) {
  CAPPLAN_RETURN_IF_ERROR(ValidateSearchRequest(request));
  CAPPLAN_RETURN_IF_ERROR(CheckKvTier(catalog, request));
  if (request.has_time_budget_seconds()) {
    deadline = std::min(deadline, absl::Now() + absl::Seconds(request.time_budget_seconds()));
  }
  Searcher searcher(catalog, request, deadline, counters, stop);
  return searcher.Run();
}

v1::PlanRequest PlanRequestFor(const v1::SearchConfigsRequest& request,
                               const v1::SearchCandidate& candidate) {
  std::optional<double> price;
  if (candidate.has_price_per_gpu_hour()) price = candidate.price_per_gpu_hour();
  v1::PlanRequest plan = UntargetedPlanRequest(request, candidate.deployment(), price);
  SetTarget(request, &plan);
  return plan;
}

}  // namespace capplan::service
