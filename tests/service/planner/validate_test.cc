#include "service/planner/validate.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "service/planner/findings.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::k000;
using ::capplan::testing::k002;
using ::capplan::testing::StatusIs;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::Pair;
using ::testing::StartsWith;
using ::testing::UnorderedElementsAre;

const Catalog& Bundled() { return testing::BundledCatalogue(); }

v1::ValidateRequest Request(const std::string& text) {
  v1::ValidateRequest r;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &r)) << text;
  return r;
}

// The findings with `code`.
std::vector<v1::Finding> FindingsWith(const v1::ValidateResponse& r, const std::string& code) {
  std::vector<v1::Finding> out;
  for (const v1::Finding& f : r.findings()) {
    if (f.code() == code) out.push_back(f);
  }
  return out;
}

// The one check that raises `code`.
v1::Check CheckFor(const v1::ValidateResponse& r, const std::string& code) {
  std::vector<v1::Check> found;
  for (const v1::Check& c : r.checks()) {
    if (c.code() == code) found.push_back(c);
  }
  EXPECT_EQ(found.size(), 1u) << code;
  return found.empty() ? v1::Check() : found.front();
}

int Errors(const v1::ValidateResponse& r) {
  int n = 0;
  for (const v1::Finding& f : r.findings()) n += f.severity() == v1::SEVERITY_ERROR;
  return n;
}

// qwen3-8b: bf16, native context 40,960 tokens (no rope scaling); 16 GB of
// weights fit an 80 GB H100 with room for a 40,960-token request.
constexpr char kQwenOnH100[] =
    R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-h100-sxm-80gb"
                    engine { version: "0.11.0" } })";

// ---------------------------------------------------------------- context

TEST(Validate, ContextBeyondNativeIsClampedAndReported) {
  absl::StatusOr<v1::ValidateResponse> r = Validate(
      Bundled(), Request(R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-h100-sxm-80gb"
                                         engine { version: "0.11.0" max_model_len: 1000000 } })"));
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<v1::Finding> f = FindingsWith(*r, kContextBeyondNative);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity(), v1::SEVERITY_ERROR);
  EXPECT_EQ(f[0].field(), "ValidateRequest.deployment.engine.max_model_len");
  EXPECT_EQ(f[0].message(),
            "max_model_len = 1000000 tokens exceeds the model's context of 40960 tokens; the "
            "remaining checks use 40960");
  EXPECT_THAT(f[0].figures(), UnorderedElementsAre(Pair("max_model_len_tokens", 1000000.0),
                                                   Pair("model_context_tokens", 40960.0)));
  const v1::Check c = CheckFor(*r, kContextBeyondNative);
  EXPECT_FALSE(c.passed());
  EXPECT_EQ(c.detail(), "max_model_len 1000000, model limit 40960");
  // The rest is planned at the model's limit, which fits.
  EXPECT_EQ(r->memory().deployment().max_model_len(), 40960u);
  EXPECT_TRUE(r->memory().fits());
  EXPECT_EQ(Errors(*r), 1);
  EXPECT_EQ(r->verdict(), v1::VERDICT_FAIL);
}

TEST(Validate, ContextWithinTheModelPassesAndUnsetIsSkipped) {
  absl::StatusOr<v1::ValidateResponse> r = Validate(
      Bundled(), Request(R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-h100-sxm-80gb"
                                         engine { version: "0.11.0" max_model_len: 8192 } })"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(CheckFor(*r, kContextBeyondNative).passed());
  EXPECT_TRUE(FindingsWith(*r, kContextBeyondNative).empty());
  EXPECT_EQ(r->memory().deployment().max_model_len(), 8192u);
  r = Validate(Bundled(), Request(kQwenOnH100));
  ASSERT_TRUE(r.ok()) << r.status();
  const v1::Check skipped = CheckFor(*r, kContextBeyondNative);
  EXPECT_TRUE(skipped.skipped());
  EXPECT_EQ(skipped.detail(), "max_model_len not set: the engine's default applies");
}

// ------------------------------------------------------------------ memory

TEST(Validate, DeploymentThatDoesNotFitFailsAndSkipsTheLoadChecks) {
  // 70B in bf16 (~141 GB) on one 24 GB card.
  absl::StatusOr<v1::ValidateResponse> r =
      Validate(Bundled(), Request(R"(deployment { model_id: "llama-3.1-70b-instruct"
                                         hardware_id: "nvidia-rtx-4090-24gb" }
                            workload { input_tokens: 100 output_tokens: 100 }
                            expected_load { concurrent_users: 4 })"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->memory().fits());
  EXPECT_EQ(r->memory().binding(), v1::MEMORY_BINDING_WEIGHTS);
  const std::vector<v1::Finding> f = FindingsWith(*r, kDoesNotFit);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity(), v1::SEVERITY_ERROR);
  EXPECT_EQ(f[0].field(), "ValidateRequest.deployment");
  EXPECT_THAT(f[0].message(), StartsWith("the deployment does not fit: WEIGHTS is short by "));
  EXPECT_THAT(
      f[0].figures(),
      UnorderedElementsAre(
          Pair("shortfall_bytes", static_cast<double>(r->memory().shortfall_bytes())),
          Pair("capacity_bytes", static_cast<double>(r->memory().per_gpu().capacity_bytes()))));
  EXPECT_FALSE(CheckFor(*r, kDoesNotFit).passed());
  // No KV-pool finding on top: the weights are the reason, and the pool
  // check is skipped for it (not a warning about a pool of 0 tokens).
  EXPECT_TRUE(FindingsWith(*r, kKvPoolBelowOneRequest).empty());
  EXPECT_TRUE(CheckFor(*r, kKvPoolBelowOneRequest).skipped());
  EXPECT_EQ(CheckFor(*r, kKvPoolBelowOneRequest).detail(),
            "the weights and overheads do not fit the GPU");
  for (const char* code : {kConcurrencyAboveSafe, kUnstableLoad, kTtftSloMissed}) {
    EXPECT_TRUE(CheckFor(*r, code).skipped()) << code;
    EXPECT_EQ(CheckFor(*r, code).detail(), "the weights and overheads do not fit the GPU") << code;
  }
  EXPECT_FALSE(r->has_load());
  EXPECT_EQ(r->verdict(), v1::VERDICT_FAIL);
}

TEST(Validate, KvPoolBelowOneRequestOfMaxModelLen) {
  // Llama 3.1 8B on a 24 GB card at its full 131,072 tokens: the weights
  // fit, but one request needs 131,072 × 128 KiB = 16 GiB of KV cache.
  absl::StatusOr<v1::ValidateResponse> r =
      Validate(Bundled(), Request(R"(deployment { model_id: "llama-3.1-8b-instruct"
                                         hardware_id: "nvidia-rtx-4090-24gb"
                                         engine { version: "0.11.0" max_model_len: 131072 } })"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(FindingsWith(*r, kDoesNotFit).empty());
  EXPECT_TRUE(CheckFor(*r, kDoesNotFit).passed());
  const uint64_t pool = r->memory().kv_pool_tokens();
  ASSERT_LT(pool, 131072u);
  const std::vector<v1::Finding> f = FindingsWith(*r, kKvPoolBelowOneRequest);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity(), v1::SEVERITY_ERROR);
  EXPECT_EQ(f[0].field(), "ValidateRequest.deployment.engine.max_model_len");
  EXPECT_EQ(f[0].message(),
            absl::StrCat("the KV pool holds ", pool,
                         " tokens, fewer than one request of max_model_len = 131072 (the engine "
                         "refuses to start); lower max_model_len or add memory"));
  EXPECT_THAT(f[0].figures(),
              UnorderedElementsAre(Pair("kv_pool_tokens", static_cast<double>(pool)),
                                   Pair("max_model_len_tokens", 131072.0)));
  // The detail groups the digits as the CLI's tables do (38416 -> 38,416).
  std::string grouped = absl::StrCat(pool);
  for (int i = static_cast<int>(grouped.size()) - 3; i > 0; i -= 3) grouped.insert(i, ",");
  EXPECT_EQ(CheckFor(*r, kKvPoolBelowOneRequest).detail(),
            absl::StrCat("KV pool ", grouped, " tokens, max_model_len 131,072 tokens"));
  EXPECT_EQ(r->verdict(), v1::VERDICT_FAIL);
}

// ---------------------------------------------------------- engine version

TEST(Validate, EngineVersionNewerThanEveryPresetIsAWarning) {
  // vllm-v1-0.21, the newest vLLM preset since issue 12, is checked through 0.24.0.
  absl::StatusOr<v1::ValidateResponse> r = Validate(
      Bundled(), Request(R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-h100-sxm-80gb"
                                         engine { version: "99.0" } })"));
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<v1::Finding> f = FindingsWith(*r, kUnknownEngineVersion);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(f[0].field(), "ValidateRequest.deployment.engine.version");
  EXPECT_EQ(f[0].message(),
            "engine version '99.0' is newer than every preset; behaviour of preset vllm-v1-0.21 "
            "assumed");
  EXPECT_FALSE(CheckFor(*r, kUnknownEngineVersion).passed());
  EXPECT_EQ(CheckFor(*r, kUnknownEngineVersion).detail(), "vllm-v1-0.21");
}

TEST(Validate, NoEngineVersionIsAnInfoAndACoveredVersionNothing) {
  absl::StatusOr<v1::ValidateResponse> r = Validate(
      Bundled(),
      Request(R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-h100-sxm-80gb" })"));
  ASSERT_TRUE(r.ok()) << r.status();
  std::vector<v1::Finding> f = FindingsWith(*r, kUnknownEngineVersion);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity(), v1::SEVERITY_INFO);
  // The newest vLLM preset since issue 12.
  EXPECT_EQ(f[0].message(), "no engine version given; preset vllm-v1-0.21 (the newest) assumed");
  EXPECT_TRUE(CheckFor(*r, kUnknownEngineVersion).passed());
  r = Validate(Bundled(), Request(kQwenOnH100));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(FindingsWith(*r, kUnknownEngineVersion).empty());
  EXPECT_TRUE(CheckFor(*r, kUnknownEngineVersion).passed());
}

// -------------------------------------------------------- quality evidence

TEST(Validate, NativeWeightsNeedNoQualityEvidence) {
  absl::StatusOr<v1::ValidateResponse> r = Validate(Bundled(), Request(kQwenOnH100));
  ASSERT_TRUE(r.ok()) << r.status();
  const v1::Check c = CheckFor(*r, kNoQualityEvidence);
  EXPECT_TRUE(c.skipped());
  EXPECT_EQ(c.detail(), "weights in their native dtype");
}

TEST(Validate, QuantizedWithoutAPassingGateIsAWarning) {
  absl::StatusOr<v1::ValidateResponse> r = Validate(
      Bundled(), Request(R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-h100-sxm-80gb"
                                         engine { version: "0.11.0" }
                                         weight_format: WEIGHT_FORMAT_FP8_PER_TENSOR })"));
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<v1::Finding> f = FindingsWith(*r, kNoQualityEvidence);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(f[0].field(), "ValidateRequest.deployment.weight_format");
  EXPECT_THAT(f[0].message(), StartsWith("no baseline of model family 'qwen3' in FP8_PER_TENSOR "
                                         "passed a long-generation or repetition-loop gate"));
  EXPECT_FALSE(CheckFor(*r, kNoQualityEvidence).passed());
  // A warning alone does not fail.
  EXPECT_EQ(Errors(*r), 0);
  EXPECT_EQ(r->verdict(), v1::VERDICT_PASS);
}

TEST(Validate, AGateOfTheSameFamilyAndFormatIsEvidence) {
  // seed-000's model (family qwen3.5-moe, INT4) passed "long-generation-16k",
  // the first of its gates with a long_generation or repetition_loop check.
  absl::StatusOr<v1::ValidateResponse> r =
      Validate(Bundled(), Request(absl::StrCat("deployment { baseline_id: \"", k000,
                                               "\" hardware_id: \"nvidia-h200-sxm-141gb\" }")));
  ASSERT_TRUE(r.ok()) << r.status();
  const v1::Check c = CheckFor(*r, kNoQualityEvidence);
  EXPECT_TRUE(c.passed());
  EXPECT_FALSE(c.skipped());
  EXPECT_EQ(c.detail(), absl::StrCat(k000, " (long-generation-16k)"));
  EXPECT_TRUE(FindingsWith(*r, kNoQualityEvidence).empty());
}

// --------------------------------------------------------- far from baselines

TEST(Validate, NoBaselineOfTheConfigurationIsFarFromBaselines) {
  // No baseline was measured on an RTX A6000.
  absl::StatusOr<v1::ValidateResponse> r = Validate(
      Bundled(), Request(R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-rtx-a6000-48gb"
                                         engine { version: "0.11.0" } }
                            workload { input_tokens: 1000 output_tokens: 200 }
                            expected_load { concurrent_users: 4 })"));
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<v1::Finding> f = FindingsWith(*r, kFarFromBaselines);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(f[0].field(), "ValidateRequest.deployment");
  EXPECT_EQ(CheckFor(*r, kFarFromBaselines).detail(), "every figure is extrapolated or roofline");
}

// Without an expected load only the memory account is computed: the check
// does not claim that no baseline measured the configuration.
TEST(Validate, WithoutALoadTheBaselineCheckIsSkipped) {
  absl::StatusOr<v1::ValidateResponse> r = Validate(Bundled(), Request(kQwenOnH100));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(FindingsWith(*r, kFarFromBaselines).empty());
  const v1::Check c = CheckFor(*r, kFarFromBaselines);
  EXPECT_TRUE(c.skipped());
  EXPECT_EQ(c.detail(), "no expected load: only the memory account was computed");
}

// An expected load without a workload, on a baseline's deployment, is
// checked at the workload the baseline measured (as Plan does): the answer
// equals the one for that workload given explicitly.
TEST(Validate, ABaselinesWorkloadIsUsedWhenTheRequestGivesNone) {
  const char kId[] = "vllm-0.11-qwen3-8b-h100x1-sharegpt-closed";
  const v1::Baseline* b = Bundled().FindBaseline(kId);
  ASSERT_NE(b, nullptr);
  ASSERT_GT(b->sweeps_size(), 0);
  const v1::Workload& w = b->sweeps(0).workload();
  ASSERT_TRUE(w.has_input_tokens() && w.has_output_tokens());
  const std::string base = absl::StrCat("deployment { baseline_id: \"", kId, "\" } ",
                                        "expected_load { concurrent_users: 16 }");
  absl::StatusOr<v1::ValidateResponse> implicit = Validate(Bundled(), Request(base));
  ASSERT_TRUE(implicit.ok()) << implicit.status();
  const std::vector<v1::Finding> notes = FindingsWith(*implicit, kWorkloadFromBaseline);
  ASSERT_FALSE(notes.empty());
  EXPECT_EQ(notes[0].severity(), v1::SEVERITY_INFO);
  EXPECT_EQ(notes[0].field(), "ValidateRequest.workload");
  EXPECT_THAT(notes[0].message(), HasSubstr(kId));
  ASSERT_TRUE(implicit->has_load());
  EXPECT_FALSE(CheckFor(*implicit, kConcurrencyAboveSafe).skipped());

  absl::StatusOr<v1::ValidateResponse> explicit_workload = Validate(
      Bundled(), Request(absl::StrFormat("%s workload { input_tokens: %f output_tokens: %f }", base,
                                         w.input_tokens(), w.output_tokens())));
  ASSERT_TRUE(explicit_workload.ok()) << explicit_workload.status();
  ASSERT_TRUE(explicit_workload->has_load());
  ASSERT_EQ(implicit->load().points_size(), explicit_workload->load().points_size());
  for (int i = 0; i < implicit->load().points_size(); ++i) {
    EXPECT_DOUBLE_EQ(implicit->load().points(i).output_tokens_per_second(),
                     explicit_workload->load().points(i).output_tokens_per_second());
  }
  EXPECT_TRUE(FindingsWith(*explicit_workload, kWorkloadFromBaseline).empty());
}

TEST(Validate, ABaselinesOwnConfigurationIsBackedByIt) {
  absl::StatusOr<v1::ValidateResponse> r =
      Validate(Bundled(), Request(absl::StrCat("deployment { baseline_id: \"", k002, "\" }",
                                               "workload { input_tokens: 1000 output_tokens: 200 }",
                                               "expected_load { concurrent_users: 4 }")));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(FindingsWith(*r, kFarFromBaselines).empty());
  const v1::Check c = CheckFor(*r, kFarFromBaselines);
  EXPECT_TRUE(c.passed());
  EXPECT_EQ(c.detail(), "at least one figure is measured or calibrated");
}

// --------------------------------------------------------------- allow list

TEST(Validate, AllowListTurnsAnErrorIntoAWarning) {
  const std::string text = R"(deployment { model_id: "qwen3-8b" hardware_id: "nvidia-h100-sxm-80gb"
                                            engine { version: "0.11.0" max_model_len: 1000000 } })";
  absl::StatusOr<v1::ValidateResponse> failing = Validate(Bundled(), Request(text));
  ASSERT_TRUE(failing.ok()) << failing.status();
  ASSERT_EQ(failing->verdict(), v1::VERDICT_FAIL);
  absl::StatusOr<v1::ValidateResponse> r =
      Validate(Bundled(), Request(text + " allow: \"CONTEXT_BEYOND_NATIVE\""));
  ASSERT_TRUE(r.ok()) << r.status();
  const std::vector<v1::Finding> f = FindingsWith(*r, kContextBeyondNative);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity(), v1::SEVERITY_WARNING);
  EXPECT_EQ(f[0].message(),
            "max_model_len = 1000000 tokens exceeds the model's context of 40960 tokens; the "
            "remaining checks use 40960 (allowed)");
  EXPECT_EQ(Errors(*r), 0);
  EXPECT_EQ(r->verdict(), v1::VERDICT_PASS);
  // Allowing another code changes nothing.
  r = Validate(Bundled(), Request(text + " allow: \"DOES_NOT_FIT\""));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->verdict(), v1::VERDICT_FAIL);
}

// ------------------------------------------------------------- launch line

TEST(Validate, LaunchLineIsReadAndUnmodelledFlagsAreInfo) {
  absl::StatusOr<v1::ValidateResponse> r = Validate(
      Bundled(), Request(R"(launch_line: "vllm serve Qwen/Qwen3-8B --max-model-len 8192 --seed 7"
                            deployment { hardware_id: "nvidia-h100-sxm-80gb"
                                         engine { version: "0.11.0" } })"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->memory().deployment().model_id(), "qwen3-8b");
  EXPECT_EQ(r->memory().deployment().max_model_len(), 8192u);
  EXPECT_EQ(r->memory().deployment().engine_version(), "0.11.0");
  const std::vector<v1::Finding> f = FindingsWith(*r, kUnmodelledFlag);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].severity(), v1::SEVERITY_INFO);
  EXPECT_EQ(f[0].field(), "ValidateRequest.launch_line");
  EXPECT_THAT(f[0].message(), StartsWith("'--seed 7' is not modelled"));
}

// ---------------------------------------------------------- invalid requests

struct BadCase {
  std::string name;
  std::string text;
  std::string message;
};

class ValidateErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(ValidateErrors, AreInvalidArgumentNamingTheField) {
  EXPECT_THAT(Validate(Bundled(), Request(GetParam().text)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ValidateErrors,
    ::testing::Values(
        BadCase{"UnknownAllowCode", std::string(kQwenOnH100) + R"( allow: "NOPE")",
                "ValidateRequest.allow[0] = \"NOPE\"; not a finding code"},
        BadCase{"ZeroUsers",
                std::string(kQwenOnH100) + R"( workload { input_tokens: 10 output_tokens: 10 }
                                               expected_load { concurrent_users: 0 })",
                "ValidateRequest.expected_load.concurrent_users = 0; must be in [1, 16384]"},
        BadCase{"NegativeRate",
                std::string(kQwenOnH100) + R"( workload { input_tokens: 10 output_tokens: 10 }
                                               expected_load { requests_per_second: -1 })",
                "ValidateRequest.expected_load.requests_per_second = -1; must be > 0"},
        BadCase{
            "LoadWithoutWorkload",
            std::string(kQwenOnH100) + " expected_load { concurrent_users: 4 }",
            "ValidateRequest.workload.input_tokens and ValidateRequest.workload.output_tokens are "
            "not set; an expected load needs the request shape"},
        BadCase{"LaunchLineWithBaseline",
                absl::StrCat("launch_line: \"vllm serve Qwen/Qwen3-8B\" deployment { baseline_id: "
                             "\"",
                             k002, "\" }"),
                "ValidateRequest.deployment.baseline_id is set with a launch_line"},
        BadCase{"BrokenLaunchLine",
                R"(launch_line: "vllm serve 'Qwen/Qwen3-8B"
               deployment { hardware_id: "nvidia-l4-24gb" })",
                "ValidateRequest.launch_line: launch line: unterminated ' quote"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

TEST(Validate, UnknownIdsAreNotFound) {
  EXPECT_THAT(Validate(Bundled(), Request(R"(deployment { model_id: "qwen3-8b"
                                                          hardware_id: "gpu-x" })")),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("ValidateRequest.deployment.hardware_id = \"gpu-x\"")));
  EXPECT_THAT(Validate(Bundled(), Request(R"(deployment { model_id: "nope"
                                                          hardware_id: "nvidia-l4-24gb" })")),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("ValidateRequest.deployment.model_id = \"nope\"; not in the "
                                 "catalogue")));
}

// ------------------------------------------------------------ prepare once

TEST(Validate, UsersAndRateArePlannedOnceAndFittedOnce) {
  // Both load checks draw their curves from one prepared load.
  WorkCounters counters;
  absl::StatusOr<v1::ValidateResponse> r = Validate(
      Bundled(),
      Request(absl::StrCat("deployment { baseline_id: \"", k002, "\" }",
                           "workload { input_tokens: 1000 output_tokens: 200 }",
                           "expected_load { concurrent_users: 4 requests_per_second: 0.5 }")),
      &counters);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(CheckFor(*r, kConcurrencyAboveSafe).skipped());
  EXPECT_FALSE(CheckFor(*r, kUnstableLoad).skipped());
  EXPECT_EQ(counters.memory_plans, 1);
  EXPECT_LE(counters.fits, 1);
}

// Found by fuzz_rpc_validate: a workload of 1e272 tokens was rounded and
// converted to an integer (undefined behaviour) before anything checked it;
// the boundary validator now refuses it first, by its own bound.
TEST(Validate, WorkloadBeyondAnyIntegerIsRefusedNotConverted) {
  EXPECT_THAT(Validate(Bundled(), Request(R"(deployment { model_id: "qwen3-8b"
                  hardware_id: "nvidia-h100-sxm-80gb" engine { max_model_len: 8192 } }
                  workload { input_tokens: 500 output_tokens: 1.0565890622713305e+272 }
                  slo { ttft_p95_seconds: 1 } expected_load { concurrent_users: 16 })")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ValidateRequest.workload.output_tokens = 1.05659e+272; "
                                 "must be at most")));
}

}  // namespace
}  // namespace capplan::service
