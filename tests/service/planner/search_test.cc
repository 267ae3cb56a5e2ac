#include "service/planner/search.h"

#include <set>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "model/budget.h"
#include "service/planner/plan.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

const Catalog& Bundled() { return testing::BundledCatalogue(); }

v1::SearchConfigsRequest Request(const std::string& text) {
  v1::SearchConfigsRequest r;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &r)) << text;
  return r;
}

// The issue's question: Llama-3.1-70B, 1000 + 200 tokens, 200 users,
// TTFT p95 < 1 s, TPOT < 50 ms.
constexpr char kIssue[] =
    "model_id: \"llama-3.1-70b-instruct\" "
    "workload { input_tokens: 1000 output_tokens: 200 } "
    "slo { ttft_p95_seconds: 1 tpot_seconds: 0.05 } target_concurrent_users: 200 ";

const v1::SearchConfigsResponse& IssueSearch() {
  static const auto* const kResponse = [] {
    absl::StatusOr<v1::SearchConfigsResponse> r = SearchConfigs(Bundled(), Request(kIssue));
    EXPECT_TRUE(r.ok()) << r.status();
    return new v1::SearchConfigsResponse(r.ok() ? *r : v1::SearchConfigsResponse());
  }();
  return *kResponse;
}

TEST(SearchConfigs, EvaluatesThousandsOfCandidatesAndFindsSeveralCardTypes) {
  const v1::SearchConfigsResponse& r = IssueSearch();
  EXPECT_GE(r.candidates_enumerated(), 10000u);
  EXPECT_GE(r.candidates_evaluated(), 1000u);
  EXPECT_FALSE(r.truncated()) << r.truncated_reason();
  ASSERT_FALSE(r.cost_front().empty());
  std::set<std::string> cards;
  for (const auto* front : {&r.cost_front(), &r.capacity_front(), &r.top()}) {
    for (const v1::SearchCandidate& c : *front) cards.insert(c.deployment().hardware_id());
  }
  EXPECT_GE(cards.size(), 2u);
  // Every candidate is accounted for: refused for a reason or evaluated.
  uint64_t refused = 0;
  for (const v1::SearchRefusalCount& c : r.refusals()) refused += c.count();
  EXPECT_GT(refused, 0u);
  EXPECT_LE(r.exact_evaluations(), r.bound_evaluations());
}

// The exact phase on two threads: batches pruned against the answers before
// them, committed in order, so the fronts and the top-k are the one-thread
// ones (the counts of exact evaluations may grow, never shrink).
TEST(SearchConfigs, TwoThreadsGiveTheOneThreadAnswer) {
  const v1::SearchConfigsResponse& one = IssueSearch();
  v1::SearchConfigsRequest two_threads = Request(kIssue);
  two_threads.set_threads(2);
  absl::StatusOr<v1::SearchConfigsResponse> two = SearchConfigs(Bundled(), two_threads);
  ASSERT_TRUE(two.ok()) << two.status();
  auto same = [](const auto& a, const auto& b, const char* what) {
    ASSERT_EQ(a.size(), b.size()) << what;
    for (int i = 0; i < a.size(); ++i) {
      EXPECT_EQ(a[i].SerializeAsString(), b[i].SerializeAsString()) << what << "[" << i << "]";
    }
  };
  same(one.cost_front(), two->cost_front(), "cost_front");
  same(one.capacity_front(), two->capacity_front(), "capacity_front");
  same(one.top(), two->top(), "top");
  EXPECT_GE(two->exact_evaluations(), one.exact_evaluations());
  EXPECT_EQ(two->candidates_enumerated(), one.candidates_enumerated());
}

// A KV tier: every answer carries the tier report Plan gives its
// deployment; a tier the catalogue lacks, or a context no candidate can
// hold, is refused before anything is enumerated.
TEST(SearchConfigs, AKvTierComesWithEveryAnswerAsPlanGivesIt) {
  v1::SearchConfigsRequest r = Request(kIssue);
  r.mutable_constraints()->add_hardware_ids("nvidia-h100-sxm-80gb");
  r.set_kv_tier_id("host-dram-pcie5-x16");
  r.add_kv_restore_context_tokens(1024);
  r.add_kv_restore_context_tokens(2048);
  absl::StatusOr<v1::SearchConfigsResponse> s = SearchConfigs(Bundled(), r);
  ASSERT_TRUE(s.ok()) << s.status();
  ASSERT_FALSE(s->top().empty());
  for (const v1::SearchCandidate& c : s->top()) {
    ASSERT_TRUE(c.has_kv_tier());
    EXPECT_EQ(c.kv_tier().tier_id(), "host-dram-pcie5-x16");
    ASSERT_EQ(c.kv_tier().points_size(), 2);
    absl::StatusOr<v1::PlanResponse> plan = Plan(Bundled(), PlanRequestFor(r, c));
    ASSERT_TRUE(plan.ok()) << plan.status();
    EXPECT_EQ(plan->kv_tier().SerializeAsString(), c.kv_tier().SerializeAsString());
  }
  v1::SearchConfigsRequest unknown = r;
  unknown.set_kv_tier_id("local-nvme");
  EXPECT_THAT(SearchConfigs(Bundled(), unknown),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("SearchConfigsRequest.kv_tier_id = \"local-nvme\"")));
  v1::SearchConfigsRequest too_long = r;
  too_long.add_kv_restore_context_tokens(1000000);
  EXPECT_THAT(SearchConfigs(Bundled(), too_long),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("SearchConfigsRequest.kv_restore_context_tokens[2] = 1000000")));
  v1::SearchConfigsRequest no_tier = r;
  no_tier.clear_kv_tier_id();
  EXPECT_THAT(SearchConfigs(Bundled(), no_tier),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("without kv_tier_id")));
}

// A front entry re-asked through Plan with its deployment gives the same
// figures and meets the SLO.
TEST(SearchConfigs, EveryFrontEntryIsWhatPlanSays) {
  const v1::SearchConfigsRequest request = Request(kIssue);
  const v1::SearchConfigsResponse& r = IssueSearch();
  int checked = 0;
  for (const auto* list : {&r.cost_front(), &r.capacity_front(), &r.top()}) {
    for (const v1::SearchCandidate& c : *list) {
      SCOPED_TRACE(c.launch_line());
      absl::StatusOr<v1::PlanResponse> plan = Plan(Bundled(), PlanRequestFor(request, c));
      ASSERT_TRUE(plan.ok()) << plan.status();
      const v1::OperatingPoint& safe = plan->safe_closed_loop();
      ASSERT_TRUE(safe.found());
      EXPECT_EQ(safe.concurrent_users(), c.safe_point().concurrent_users());
      EXPECT_DOUBLE_EQ(safe.ttft_p95_seconds(), c.safe_point().ttft_p95_seconds());
      EXPECT_DOUBLE_EQ(safe.tpot_seconds(), c.safe_point().tpot_seconds());
      EXPECT_LE(safe.ttft_p95_seconds(), 1.0);
      EXPECT_LE(safe.tpot_seconds(), 0.05);
      EXPECT_EQ(plan->sizing().replicas(), c.replicas());
      EXPECT_EQ(plan->sizing().gpus(), c.total_gpus());
      EXPECT_GE(c.replicas() * safe.concurrent_users(), 200u);
      EXPECT_DOUBLE_EQ(plan->capacity().output_tokens_per_month(),
                       c.capacity().output_tokens_per_month());
      EXPECT_EQ(plan->has_cost_per_million_output_tokens(), c.has_cost_per_million_output_tokens());
      if (c.has_cost_per_million_output_tokens()) {
        EXPECT_DOUBLE_EQ(plan->cost_per_million_output_tokens(),
                         c.cost_per_million_output_tokens());
      }
      EXPECT_FALSE(c.launch_line().empty());
      ++checked;
    }
  }
  EXPECT_GT(checked, 2);
}

TEST(SearchConfigs, FrontsAreParetoOptimal) {
  const v1::SearchConfigsResponse& r = IssueSearch();
  for (int i = 1; i < r.cost_front_size(); ++i) {
    EXPECT_GT(r.cost_front(i).cost_per_million_output_tokens(),
              r.cost_front(i - 1).cost_per_million_output_tokens());
    EXPECT_GT(r.cost_front(i).user_output_tokens_per_second(),
              r.cost_front(i - 1).user_output_tokens_per_second());
  }
  for (int i = 1; i < r.capacity_front_size(); ++i) {
    EXPECT_GT(r.capacity_front(i).gpus_per_replica(), r.capacity_front(i - 1).gpus_per_replica());
    EXPECT_GT(r.capacity_front(i).capacity().output_tokens_per_month(),
              r.capacity_front(i - 1).capacity().output_tokens_per_month());
  }
  for (int i = 1; i < r.top_size(); ++i) {
    EXPECT_GE(r.top(i).monthly_cost(), r.top(i - 1).monthly_cost());
  }
}

TEST(SearchConfigs, CardsWithoutAPriceSayNoPrice) {
  v1::SearchConfigsRequest request = Request(kIssue);
  // No catalogue card without a price meets this SLO (the unpriced ones are China-market parts,
  // the DGX Spark and small cards; data/hardware/README.md), so the request brings one: the
  // MI355X, which meets it, with its price taken away.
  v1::Hardware unpriced = *Bundled().FindHardware("amd-mi355x-288gb");
  unpriced.set_id("unpriced-mi355x");
  unpriced.clear_price_per_hour();
  unpriced.clear_price_as_of();
  unpriced.clear_sources();
  *request.mutable_constraints()->add_hardware() = unpriced;
  request.mutable_constraints()->add_hardware_ids("nvidia-h100-sxm-80gb");
  request.set_objective(v1::SEARCH_OBJECTIVE_GPUS);
  absl::StatusOr<v1::SearchConfigsResponse> r = SearchConfigs(Bundled(), request);
  ASSERT_TRUE(r.ok()) << r.status();
  bool saw_unpriced = false;
  for (const auto* list : {&r->top(), &r->capacity_front()}) {
    for (const v1::SearchCandidate& c : *list) {
      if (c.deployment().hardware().id() != "unpriced-mi355x") continue;
      saw_unpriced = true;
      EXPECT_EQ(c.price_source(), "no price");
      EXPECT_FALSE(c.has_cost_per_million_output_tokens());
      EXPECT_FALSE(c.has_monthly_cost());
      EXPECT_FALSE(c.on_cost_front());
    }
  }
  EXPECT_TRUE(saw_unpriced);
  for (const v1::SearchCandidate& c : r->cost_front()) {
    EXPECT_EQ(c.deployment().hardware_id(), "nvidia-h100-sxm-80gb");
  }
  EXPECT_THAT(r->notes(), ::testing::Contains(HasSubstr("unpriced-mi355x: no price")));
}

TEST(SearchConfigs, RequestPriceOverridesTheCatalogue) {
  v1::SearchConfigsRequest request = Request(kIssue);
  request.mutable_constraints()->add_hardware_ids("nvidia-h100-sxm-80gb");
  (*request.mutable_constraints()->mutable_price_per_gpu_hour())["nvidia-h100-sxm-80gb"] = 1.25;
  absl::StatusOr<v1::SearchConfigsResponse> r = SearchConfigs(Bundled(), request);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->top().empty());
  EXPECT_EQ(r->top(0).price_per_gpu_hour(), 1.25);
  EXPECT_EQ(r->top(0).price_source(), "request");
}

TEST(SearchConfigs, CandidateCapTruncates) {
  v1::SearchConfigsRequest request = Request(kIssue);
  request.set_max_candidates(50);
  absl::StatusOr<v1::SearchConfigsResponse> r = SearchConfigs(Bundled(), request);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->truncated());
  EXPECT_THAT(r->truncated_reason(), HasSubstr("candidate cap 50"));
  EXPECT_EQ(r->candidates_enumerated(), 50u);
}

// The call's budget (the client gone, the server draining) ends the search
// with its status, not an answer; polled between candidates.
TEST(SearchConfigs, AStoppedBudgetEndsTheSearchWithItsStatus) {
  int polls = 0;
  model::Budget budget(1e18, [&polls]() -> absl::Status {
    return ++polls > 3 ? absl::UnavailableError("the server is shutting down") : absl::OkStatus();
  });
  absl::StatusOr<v1::SearchConfigsResponse> r =
      SearchConfigs(Bundled(), Request(kIssue), absl::InfiniteFuture(), nullptr, &budget);
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kUnavailable, HasSubstr("shutting down")));
  EXPECT_EQ(polls, 4);  // stopped at the first poll that said so
  // A budget that never stops gives the answer the search gives without one.
  model::Budget open(1e18, [] { return absl::OkStatus(); });
  absl::StatusOr<v1::SearchConfigsResponse> full =
      SearchConfigs(Bundled(), Request(kIssue), absl::InfiniteFuture(), nullptr, &open);
  ASSERT_TRUE(full.ok()) << full.status();
  EXPECT_FALSE(full->truncated());
  EXPECT_EQ(full->exact_evaluations(), IssueSearch().exact_evaluations());
  EXPECT_GT(open.polls(), 3);
}

TEST(SearchConfigs, PassedDeadlineReturnsTruncatedAnswer) {
  absl::StatusOr<v1::SearchConfigsResponse> r =
      SearchConfigs(Bundled(), Request(kIssue), absl::Now() - absl::Seconds(1));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->truncated());
  EXPECT_THAT(r->truncated_reason(), HasSubstr("deadline"));
  EXPECT_EQ(r->exact_evaluations(), 0u);
}

TEST(SearchConfigs, ImpossibleSloRefusesEverythingByItsBound) {
  v1::SearchConfigsRequest request = Request(kIssue);
  request.mutable_slo()->set_tpot_seconds(1e-4);  // 10,000 tok/s per user
  absl::StatusOr<v1::SearchConfigsResponse> r = SearchConfigs(Bundled(), request);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->top().empty());
  EXPECT_EQ(r->exact_evaluations(), 0u);
  bool slo = false;
  for (const v1::SearchRefusalCount& c : r->refusals()) {
    if (c.reason() == v1::SEARCH_REFUSAL_SLO_MISSED) slo = c.count() > 0;
  }
  EXPECT_TRUE(slo);
}

TEST(SearchConfigs, UnknownModelIsNotFound) {
  v1::SearchConfigsRequest request = Request(kIssue);
  request.set_model_id("no-such-model");
  EXPECT_THAT(SearchConfigs(Bundled(), request),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("SearchConfigsRequest.model_id")));
}

TEST(SearchConfigs, UnknownCardIsNotFoundWithItsIndex) {
  v1::SearchConfigsRequest request = Request(kIssue);
  request.mutable_constraints()->add_hardware_ids("nvidia-h100-sxm-80gb");
  request.mutable_constraints()->add_hardware_ids("nvidia-h999");
  EXPECT_THAT(SearchConfigs(Bundled(), request),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("SearchConfigsRequest.constraints.hardware_ids[1]")));
}

// ---------------------------------------------------------- inline cards

// The H100 SXM's own figures under an id the catalogue lacks.
v1::Hardware InlineH100(const std::string& id) {
  v1::Hardware card = *Bundled().FindHardware("nvidia-h100-sxm-80gb");
  card.set_id(id);
  card.clear_sources();
  return card;
}

TEST(SearchConfigs, ACardTheCatalogueLacksIsSearchedWhole) {
  v1::SearchConfigsRequest request = Request(kIssue);
  *request.mutable_constraints()->add_hardware() = InlineH100("my-h100");
  request.mutable_constraints()->add_engines(v1::ENGINE_KIND_VLLM);
  absl::StatusOr<v1::SearchConfigsResponse> r = SearchConfigs(Bundled(), request);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_FALSE(r->top().empty());
  int checked = 0;
  for (const auto* list : {&r->cost_front(), &r->top()}) {
    for (const v1::SearchCandidate& c : *list) {
      // Only the request's card (no hardware_ids: not the whole catalogue), carried whole.
      EXPECT_EQ(c.deployment().hardware_id(), "");
      EXPECT_EQ(c.deployment().hardware().id(), "my-h100");
      // Its price came with it.
      EXPECT_EQ(c.price_per_gpu_hour(), InlineH100("x").price_per_hour());
      // Plan, asked with the candidate's deployment, agrees.
      absl::StatusOr<v1::PlanResponse> plan = Plan(Bundled(), PlanRequestFor(request, c));
      ASSERT_TRUE(plan.ok()) << plan.status();
      EXPECT_EQ(plan->safe_closed_loop().concurrent_users(), c.safe_point().concurrent_users());
      ++checked;
    }
  }
  EXPECT_GT(checked, 0);
}

TEST(SearchConfigs, InlineCardsAreSearchedBesideCatalogueIds) {
  auto enumerated = [](bool catalogue_card, bool inline_card) {
    v1::SearchConfigsRequest request = Request(kIssue);
    if (catalogue_card) request.mutable_constraints()->add_hardware_ids("nvidia-l40s-48gb");
    if (inline_card) *request.mutable_constraints()->add_hardware() = InlineH100("my-h100");
    absl::StatusOr<v1::SearchConfigsResponse> r = SearchConfigs(Bundled(), request);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->candidates_enumerated() : 0;
  };
  const uint64_t l40s = enumerated(true, false);
  const uint64_t mine = enumerated(false, true);
  ASSERT_GT(l40s, 0u);
  ASSERT_GT(mine, 0u);
  // Both cards' spaces, and not the whole catalogue's.
  EXPECT_EQ(enumerated(true, true), l40s + mine);
}

struct InlineCardCase {
  std::string name;
  std::string card_change;  // text proto merged over InlineH100("my-h100")
  bool twice;               // the card given twice
  std::string message;
};

class SearchInlineCardErrors : public ::testing::TestWithParam<InlineCardCase> {};

TEST_P(SearchInlineCardErrors, AreInvalidArgumentAtTheCardsPath) {
  v1::SearchConfigsRequest request = Request(kIssue);
  v1::Hardware card = InlineH100("my-h100");
  ASSERT_TRUE(google::protobuf::TextFormat::MergeFromString(GetParam().card_change, &card));
  request.mutable_constraints()->add_hardware_ids("nvidia-l40s-48gb");
  *request.mutable_constraints()->add_hardware() = InlineH100("other-card");
  *request.mutable_constraints()->add_hardware() = card;
  if (GetParam().twice) *request.mutable_constraints()->add_hardware() = card;
  EXPECT_THAT(SearchConfigs(Bundled(), request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, SearchInlineCardErrors,
    ::testing::Values(
        InlineCardCase{"BandwidthInGbPerSecond", "memory_bandwidth_bytes_per_second: 3350", false,
                       "SearchConfigsRequest.constraints.hardware[1].memory_bandwidth_bytes_per_"
                       "second = 3350; must be in [1e+10, 1e+15] bytes/s"},
        InlineCardCase{"ShadowsACatalogueCard", "id: \"nvidia-h100-sxm-80gb\"", false,
                       "SearchConfigsRequest.constraints.hardware[1].id = "
                       "\"nvidia-h100-sxm-80gb\"; names a catalogue card"},
        InlineCardCase{"GivenTwice", "", true,
                       "SearchConfigsRequest.constraints.hardware[2].id = \"my-h100\"; must be "
                       "unique"}),
    [](const ::testing::TestParamInfo<InlineCardCase>& info) { return info.param.name; });

// ------------------------------------------------------------- validation

struct InvalidCase {
  std::string name;
  std::string change;  // text proto merged over kIssue
  std::string path;
};

class SearchValidation : public ::testing::TestWithParam<InvalidCase> {};

TEST_P(SearchValidation, NamesTheFieldPath) {
  v1::SearchConfigsRequest request = Request(kIssue);
  if (GetParam().change == "CLEAR_WORKLOAD") {
    request.clear_workload();
  } else if (GetParam().change == "CLEAR_TARGET") {
    request.clear_target();
  } else if (GetParam().change == "CLEAR_MODEL") {
    request.clear_model_source();
  } else {
    ASSERT_TRUE(google::protobuf::TextFormat::MergeFromString(GetParam().change, &request));
  }
  EXPECT_THAT(ValidateSearchRequest(request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().path)));
  EXPECT_THAT(SearchConfigs(Bundled(), request),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().path)));
}

INSTANTIATE_TEST_SUITE_P(
    Fields, SearchValidation,
    ::testing::Values(
        InvalidCase{"NoModel", "CLEAR_MODEL", "SearchConfigsRequest.model_id is empty"},
        InvalidCase{"NoWorkload", "CLEAR_WORKLOAD", "SearchConfigsRequest.workload is missing"},
        InvalidCase{"NoTarget", "CLEAR_TARGET", "SearchConfigsRequest.target is not set"},
        InvalidCase{"ZeroInput", "workload { input_tokens: 0 }",
                    "SearchConfigsRequest.workload.input_tokens = 0"},
        InvalidCase{"NegativeTtft", "slo { ttft_p95_seconds: -1 }",
                    "SearchConfigsRequest.slo.ttft_p95_seconds = -1"},
        InvalidCase{"ZeroUserSpeed", "min_user_tokens_per_second: 0",
                    "SearchConfigsRequest.min_user_tokens_per_second = 0"},
        InvalidCase{"ZeroUsers", "target_concurrent_users: 0",
                    "SearchConfigsRequest.target_concurrent_users = 0"},
        InvalidCase{"NegativeRate", "target_requests_per_second: -2",
                    "SearchConfigsRequest.target_requests_per_second = -2"},
        InvalidCase{"GpusPerReplica", "constraints { max_gpus_per_replica: 0 }",
                    "SearchConfigsRequest.constraints.max_gpus_per_replica = 0"},
        InvalidCase{"GpusPerReplicaHigh", "constraints { max_gpus_per_replica: 65 }",
                    "SearchConfigsRequest.constraints.max_gpus_per_replica = 65"},
        InvalidCase{"GpusTotal", "constraints { max_gpus_total: 0 }",
                    "SearchConfigsRequest.constraints.max_gpus_total = 0"},
        InvalidCase{"Seqs", "constraints { max_num_seqs: 64 max_num_seqs: 0 }",
                    "SearchConfigsRequest.constraints.max_num_seqs[1] = 0"},
        InvalidCase{"Format", "constraints { weight_formats: WEIGHT_FORMAT_UNSPECIFIED }",
                    "SearchConfigsRequest.constraints.weight_formats[0]"},
        InvalidCase{"Engine", "constraints { engines: ENGINE_KIND_TRTLLM }",
                    "SearchConfigsRequest.constraints.engines[0] = ENGINE_KIND_TRTLLM"},
        InvalidCase{"KvDtype", "constraints { kv_cache_dtypes: KV_CACHE_DTYPE_UNSPECIFIED }",
                    "SearchConfigsRequest.constraints.kv_cache_dtypes[0]"},
        InvalidCase{"Price",
                    "constraints { price_per_gpu_hour { key: \"nvidia-l4-24gb\" value: -1 } }",
                    "SearchConfigsRequest.constraints.price_per_gpu_hour[\"nvidia-l4-24gb\"] = -1"},
        InvalidCase{"TopK", "top_k: 0", "SearchConfigsRequest.top_k = 0"},
        InvalidCase{"TopKHigh", "top_k: 101", "SearchConfigsRequest.top_k = 101"},
        InvalidCase{"ThreadsZero", "threads: 0", "SearchConfigsRequest.threads = 0"},
        InvalidCase{"ThreadsHigh", "threads: 65", "SearchConfigsRequest.threads = 65"},
        InvalidCase{"Cap", "max_candidates: 0", "SearchConfigsRequest.max_candidates = 0"},
        InvalidCase{"CapHigh", "max_candidates: 200001",
                    "SearchConfigsRequest.max_candidates = 200001"},
        InvalidCase{"Duty", "duty_factor: 1.5", "SearchConfigsRequest.duty_factor = 1.5"},
        InvalidCase{"Budget", "time_budget_seconds: 0",
                    "SearchConfigsRequest.time_budget_seconds = 0"},
        InvalidCase{"ShortContext", "max_model_len: 512",
                    "SearchConfigsRequest.max_model_len = 512"}),
    [](const ::testing::TestParamInfo<InvalidCase>& info) { return info.param.name; });

}  // namespace
}  // namespace capplan::service
