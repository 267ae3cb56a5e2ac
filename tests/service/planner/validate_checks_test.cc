#include "service/planner/validate_checks.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "service/translate/enum_names.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::IsOk;
using ::capplan::testing::StatusIs;
using ::testing::Each;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

const Catalog& Bundled() { return testing::BundledCatalogue(); }

// AddLoadChecks on a deployment prepared as Validate prepares it.
struct ChecksRun {
  PreparedDeployment deployment;
  v1::ValidateRequest request;
  v1::ValidateResponse response;
  std::vector<v1::Tier> tiers;
  absl::Status status;
  WorkCounters counters;

  std::vector<v1::Finding> Findings(const std::string& code) const {
    std::vector<v1::Finding> out;
    for (const v1::Finding& f : response.findings()) {
      if (f.code() == code) out.push_back(f);
    }
    return out;
  }
  v1::Check CheckFor(const std::string& code) const {
    std::vector<v1::Check> found;
    for (const v1::Check& c : response.checks()) {
      if (c.code() == code) found.push_back(c);
    }
    EXPECT_EQ(found.size(), 1u) << code;
    return found.empty() ? v1::Check() : found.front();
  }
};

std::unique_ptr<ChecksRun> AddChecks(const std::string& request_text) {
  auto run = std::make_unique<ChecksRun>();
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(request_text, &run->request))
      << request_text;
  absl::StatusOr<ResolvedDeployment> r =
      ResolveDeployment(Bundled(), run->request.deployment(), "ValidateRequest.deployment");
  EXPECT_TRUE(r.ok()) << r.status();
  if (!r.ok()) return run;
  absl::StatusOr<PreparedDeployment> d =
      PrepareDeployment(Bundled(), *std::move(r), std::nullopt, nullptr);
  EXPECT_TRUE(d.ok()) << d.status();
  if (!d.ok()) return run;
  run->deployment = *std::move(d);
  *run->response.mutable_memory() = run->deployment.memory;
  FindingList findings(&run->response);
  run->status = AddLoadChecks(Bundled(), run->deployment, run->request, &findings, &run->response,
                              &run->tiers, &run->counters);
  return run;
}

// qwen3-8b on an H100 with the engine's sequence limit at 8.
constexpr char kDeployment[] =
    R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-h100-sxm-80gb"
                    engine { version: "0.11.0" max_num_seqs: 8 max_model_len: 8192 } }
       workload { input_tokens: 1000 output_tokens: 200 } )";

const v1::LoadCurvePoint* PointAtUsers(const v1::LoadCurve& curve, uint32_t users) {
  for (const v1::LoadCurvePoint& p : curve.points()) {
    if (p.has_concurrency() && p.concurrency() == users) return &p;
  }
  return nullptr;
}

// ------------------------------------------------------------------- users

TEST(AddLoadChecks, UsersWithinTheSafeConcurrencyPassAndSloIsCheckedThere) {
  std::unique_ptr<ChecksRun> run = AddChecks(std::string(kDeployment) +
                                             "expected_load { concurrent_users: 4 } "
                                             "slo { ttft_p95_seconds: 100 }");
  ASSERT_THAT(run->status, IsOk());
  const v1::Check safe = run->CheckFor(kConcurrencyAboveSafe);
  EXPECT_TRUE(safe.passed());
  ASSERT_TRUE(run->response.has_load());
  const v1::LoadCurve& curve = run->response.load();
  const uint32_t safe_users = curve.safe_operating_point().concurrency();
  EXPECT_GE(safe_users, 4u);
  EXPECT_EQ(safe.detail(),
            absl::StrFormat("4 users expected; safe up to %d (limit: %s)", safe_users,
                            ShortName(curve.safe_operating_point().binding())));
  // The grid runs 1 .. max(2 · 4, 16) = 16 and includes the users.
  ASSERT_EQ(curve.points_size(), 16);
  EXPECT_EQ(curve.points(15).concurrency(), 16u);
  const v1::LoadCurvePoint* at = PointAtUsers(curve, 4);
  ASSERT_NE(at, nullptr);
  const v1::Check ttft = run->CheckFor(kTtftSloMissed);
  EXPECT_TRUE(ttft.passed());
  EXPECT_EQ(ttft.detail(),
            absl::StrFormat("TTFT p95 %.3f s at 4 users; SLO 100.000 s", at->ttft_p95_seconds()));
  EXPECT_TRUE(run->CheckFor(kTpotSloMissed).skipped());
  EXPECT_EQ(run->CheckFor(kTpotSloMissed).detail(), "no SLO given");
  EXPECT_TRUE(run->CheckFor(kE2eSloMissed).skipped());
  const v1::Check stable = run->CheckFor(kUnstableLoad);
  EXPECT_TRUE(stable.skipped());
  EXPECT_EQ(stable.detail(), "closed loop (users): always stable");
  EXPECT_EQ(run->response.findings_size(), 0);
  // One tier per metric of the curve.
  EXPECT_EQ(run->tiers.size(), 4u);
}

TEST(AddLoadChecks, UsersAboveTheSafeConcurrencyAreAnError) {
  // 64 users against 8 slots (max_num_seqs).
  std::unique_ptr<ChecksRun> run =
      AddChecks(std::string(kDeployment) + "expected_load { concurrent_users: 64 }");
  ASSERT_THAT(run->status, IsOk());
  ASSERT_TRUE(run->response.has_load());
  const v1::LoadCurve& curve = run->response.load();
  EXPECT_EQ(curve.slots().slots(), 8u);
  EXPECT_EQ(curve.slots().bound(), v1::SLOT_BOUND_RUNNING_REQUEST_LIMIT);
  const uint32_t safe_users = curve.safe_operating_point().concurrency();
  ASSERT_LE(safe_users, 8u);
  const std::vector<v1::Finding> f = run->Findings(kConcurrencyAboveSafe);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity(), v1::SEVERITY_ERROR);
  EXPECT_EQ(f[0].field(), "ValidateRequest.expected_load.concurrent_users");
  EXPECT_EQ(f[0].message(),
            absl::StrFormat("64 concurrent users exceed the safe concurrency of %d (bound by %s; "
                            "8 slots bound by RUNNING_REQUEST_LIMIT)",
                            safe_users, ShortName(curve.safe_operating_point().binding())));
  EXPECT_THAT(f[0].figures(),
              UnorderedElementsAre(Pair("expected_users", 64.0),
                                   Pair("safe_users", static_cast<double>(safe_users)),
                                   Pair("slots", 8.0)));
  EXPECT_FALSE(run->CheckFor(kConcurrencyAboveSafe).passed());
  // The grid: 1 .. 2 · 64 = 128.
  EXPECT_EQ(curve.points_size(), 128);
}

TEST(AddLoadChecks, SloMissedAtTheExpectedUsers) {
  std::unique_ptr<ChecksRun> run = AddChecks(std::string(kDeployment) +
                                             "expected_load { concurrent_users: 2 } "
                                             "slo { ttft_p95_seconds: 1e-6 tpot_seconds: 1e-6 "
                                             "e2e_p95_seconds: 1e6 }");
  ASSERT_THAT(run->status, IsOk());
  const v1::LoadCurvePoint* at = PointAtUsers(run->response.load(), 2);
  ASSERT_NE(at, nullptr);
  std::vector<v1::Finding> ttft = run->Findings(kTtftSloMissed);
  ASSERT_EQ(ttft.size(), 1u);
  EXPECT_EQ(ttft[0].severity(), v1::SEVERITY_ERROR);
  EXPECT_EQ(ttft[0].field(), "ValidateRequest.slo.ttft_p95_seconds");
  EXPECT_EQ(ttft[0].message(),
            absl::StrFormat("TTFT p95 at 2 users is %.3f s, above the SLO of 0.000 s",
                            at->ttft_p95_seconds()));
  EXPECT_THAT(ttft[0].figures(),
              UnorderedElementsAre(Pair("predicted_seconds", at->ttft_p95_seconds()),
                                   Pair("slo_seconds", 1e-6)));
  std::vector<v1::Finding> tpot = run->Findings(kTpotSloMissed);
  ASSERT_EQ(tpot.size(), 1u);
  EXPECT_EQ(tpot[0].field(), "ValidateRequest.slo.tpot_seconds");
  EXPECT_THAT(tpot[0].figures(), UnorderedElementsAre(Pair("predicted_seconds", at->tpot_seconds()),
                                                      Pair("slo_seconds", 1e-6)));
  // A generous end-to-end SLO passes.
  EXPECT_TRUE(run->Findings(kE2eSloMissed).empty());
  EXPECT_TRUE(run->CheckFor(kE2eSloMissed).passed());
}

// -------------------------------------------------------------------- rate

TEST(AddLoadChecks, StableRateChecksTheSloAtThatRate) {
  std::unique_ptr<ChecksRun> run = AddChecks(std::string(kDeployment) +
                                             "expected_load { requests_per_second: 0.5 } "
                                             "slo { ttft_p95_seconds: 100 }");
  ASSERT_THAT(run->status, IsOk());
  ASSERT_TRUE(run->response.has_load());
  const v1::LoadCurve& curve = run->response.load();
  // Rates 0.5 · k / 64 for k = 1..128: 0.5 is point 64.
  ASSERT_EQ(curve.points_size(), 128);
  EXPECT_DOUBLE_EQ(curve.points(0).arrival_rate_rps(), 0.5 / 64);
  const v1::LoadCurvePoint& at = curve.points(63);
  EXPECT_DOUBLE_EQ(at.arrival_rate_rps(), 0.5);
  ASSERT_TRUE(at.stable());
  const v1::Check stable = run->CheckFor(kUnstableLoad);
  EXPECT_TRUE(stable.passed());
  EXPECT_EQ(stable.detail(),
            absl::StrFormat("0.500 req/s expected; utilization %.2f", at.utilization()));
  EXPECT_EQ(
      run->CheckFor(kTtftSloMissed).detail(),
      absl::StrFormat("TTFT p95 %.3f s at 0.500 req/s; SLO 100.000 s", at.ttft_p95_seconds()));
  const v1::Check safe = run->CheckFor(kConcurrencyAboveSafe);
  EXPECT_TRUE(safe.skipped());
  EXPECT_EQ(safe.detail(), "no expected concurrent users given");
  EXPECT_EQ(run->response.findings_size(), 0);
}

TEST(AddLoadChecks, RatePastSaturationIsUnstable) {
  std::unique_ptr<ChecksRun> run = AddChecks(std::string(kDeployment) +
                                             "expected_load { requests_per_second: 10000 } "
                                             "slo { ttft_p95_seconds: 1 }");
  ASSERT_THAT(run->status, IsOk());
  const std::vector<v1::Finding> f = run->Findings(kUnstableLoad);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity(), v1::SEVERITY_ERROR);
  EXPECT_EQ(f[0].field(), "ValidateRequest.expected_load.requests_per_second");
  EXPECT_EQ(f[0].message(),
            "10000.000 req/s is at or past the deployment's saturation: the queue grows without "
            "bound");
  EXPECT_EQ(f[0].figures().at("expected_rps"), 10000.0);
  EXPECT_GE(f[0].figures().at("utilization"), 1.0);
  EXPECT_FALSE(run->CheckFor(kUnstableLoad).passed());
  for (const char* code : {kTtftSloMissed, kTpotSloMissed, kE2eSloMissed}) {
    EXPECT_TRUE(run->CheckFor(code).skipped()) << code;
    EXPECT_EQ(run->CheckFor(code).detail(), "unstable: no latency figures") << code;
  }
}

TEST(AddLoadChecks, UsersAndRateShareOnePreparedLoad) {
  std::unique_ptr<ChecksRun> run = AddChecks(std::string(kDeployment) +
                                             "expected_load { concurrent_users: 4 "
                                             "requests_per_second: 0.5 }");
  ASSERT_THAT(run->status, IsOk());
  EXPECT_FALSE(run->CheckFor(kConcurrencyAboveSafe).skipped());
  EXPECT_FALSE(run->CheckFor(kUnstableLoad).skipped());
  // The response keeps the users' (closed-loop) curve.
  EXPECT_TRUE(run->response.load().points(0).has_concurrency());
  // Two curves, four metrics each.
  EXPECT_EQ(run->tiers.size(), 8u);
  EXPECT_LE(run->counters.fits, 1);
}

// ------------------------------------------------------------------ skips

TEST(AddLoadChecks, WithoutALoadEveryLoadCheckIsSkipped) {
  std::unique_ptr<ChecksRun> run = AddChecks(std::string(kDeployment));
  ASSERT_THAT(run->status, IsOk());
  ASSERT_EQ(run->response.checks_size(), 5);
  for (const v1::Check& c : run->response.checks()) {
    EXPECT_TRUE(c.skipped()) << c.name();
    EXPECT_EQ(c.detail(), "no expected load (workload and users or req/s) given");
  }
  EXPECT_FALSE(run->response.has_load());
  EXPECT_TRUE(run->tiers.empty());
}

TEST(AddLoadChecks, ADeploymentThatDoesNotFitSkipsThem) {
  std::unique_ptr<ChecksRun> run = AddChecks(
      R"(deployment { model_id: "llama-3.1-70b-instruct" hardware_id: "nvidia-rtx-4090-24gb" }
         workload { input_tokens: 100 output_tokens: 100 } expected_load { concurrent_users: 1 })");
  ASSERT_THAT(run->status, IsOk());
  ASSERT_EQ(run->response.checks_size(), 5);
  ASSERT_EQ(run->response.memory().binding(), v1::MEMORY_BINDING_WEIGHTS);
  for (const v1::Check& c : run->response.checks()) {
    EXPECT_TRUE(c.skipped());
    EXPECT_EQ(c.detail(), "the weights and overheads do not fit the GPU");
  }
}

// The weights fit but the KV pool cannot hold one request of max_model_len:
// the skipped checks say that, not that the weights do not fit.
TEST(AddLoadChecks, APoolTooSmallForOneRequestSaysSo) {
  std::unique_ptr<ChecksRun> run = AddChecks(
      R"(deployment { model_id: "llama-3.1-8b-instruct" hardware_id: "nvidia-l4-24gb"
                      engine { max_model_len: 131072 } }
         workload { input_tokens: 100 output_tokens: 100 } expected_load { concurrent_users: 1 })");
  ASSERT_THAT(run->status, IsOk());
  ASSERT_FALSE(run->response.memory().fits());
  ASSERT_EQ(run->response.memory().binding(), v1::MEMORY_BINDING_KV_POOL);
  ASSERT_EQ(run->response.checks_size(), 5);
  for (const v1::Check& c : run->response.checks()) {
    EXPECT_TRUE(c.skipped()) << c.name();
    EXPECT_EQ(c.detail(),
              "the KV pool cannot hold one request of max_model_len: the engine would not start");
  }
}

// ----------------------------------------------------------------- errors

TEST(AddLoadChecks, RequestLongerThanMaxModelLenIsInvalid) {
  std::unique_ptr<ChecksRun> run = AddChecks(
      R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-h100-sxm-80gb"
                      engine { max_model_len: 8192 } }
         workload { input_tokens: 6000 output_tokens: 4000 }
         expected_load { concurrent_users: 1 })");
  EXPECT_THAT(run->status,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("ValidateRequest.workload: input_tokens + output_tokens = 10000; must "
                          "not exceed the deployment's max_model_len = 8192")));
}

TEST(AddLoadChecks, WorkloadErrorsNameTheValidateRequestPath) {
  std::unique_ptr<ChecksRun> run = AddChecks(
      R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-h100-sxm-80gb" }
         workload { input_tokens: 0 output_tokens: 100 } expected_load { concurrent_users: 1 })");
  EXPECT_THAT(run->status, StatusIs(absl::StatusCode::kInvalidArgument,
                                    HasSubstr("ValidateRequest.workload.input_tokens = 0; must be "
                                              "> 0")));
  run = AddChecks(
      R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-h100-sxm-80gb" }
         workload { input_tokens: 100 output_tokens: 100 } slo { tpot_seconds: -1 }
         expected_load { concurrent_users: 1 })");
  EXPECT_THAT(run->status,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ValidateRequest.slo.tpot_seconds = -1; must be > 0")));
}

}  // namespace
}  // namespace capplan::service
