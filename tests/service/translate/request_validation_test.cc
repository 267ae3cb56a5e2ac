#include "service/translate/request_validation.h"

#include <cmath>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::service {
namespace {

using ::capplan::testing::IsOk;
using ::capplan::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::SizeIs;

template <typename Message>
Message Parse(const std::string& text) {
  Message m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &m)) << text;
  return m;
}

TEST(EchoString, ShortValuesAreQuotedWhole) { EXPECT_EQ(EchoString("qwen3-8b"), "\"qwen3-8b\""); }

TEST(EchoString, LongValuesAreCutWithTheirSize) {
  const std::string echoed = EchoString(std::string(100000, 'a'));
  EXPECT_LE(echoed.size(), kMaxEchoBytes);
  EXPECT_THAT(echoed, HasSubstr("…\" (100000 bytes)"));
}

TEST(EchoString, CutsOnACharacterBoundary) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "é";  // two bytes each
  const std::string echoed = EchoString(text);
  EXPECT_LE(echoed.size(), kMaxEchoBytes);
  // Every é survived whole: the cut is not inside one.
  const std::string before = echoed.substr(1, echoed.find("…") - 1);
  EXPECT_EQ(before.size() % 2, 0u);
}

TEST(ValidateStructure, UnknownEnumValueIsRefusedWithItsPathAndTheKnownValues) {
  v1::PlanMemoryRequest r;
  r.mutable_deployment()->set_weight_format(static_cast<v1::WeightFormat>(99));
  EXPECT_THAT(
      ValidateStructure(r, "PlanMemoryRequest"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("PlanMemoryRequest.deployment.weight_format = 99; not a "
                               "known WeightFormat value"),
                     HasSubstr("(UNSPECIFIED, FP32, BF16, FP16"), HasSubstr("NVFP4, MXFP4)"))));
}

TEST(ValidateStructure, UnknownEnumInsideARepeatedMessageNamesItsIndex) {
  v1::PredictLoadRequest r;
  r.add_calibration();
  r.add_calibration()->mutable_speculative()->set_method(static_cast<v1::SpeculativeMethod>(42));
  EXPECT_THAT(ValidateStructure(r, "PredictLoadRequest"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PredictLoadRequest.calibration[1].speculative.method = 42")));
}

TEST(ValidateStructure, NonFiniteDoublesAreRefused) {
  for (double bad : {std::nan(""), std::numeric_limits<double>::infinity(),
                     -std::numeric_limits<double>::infinity()}) {
    v1::ValidateRequest r;
    r.mutable_workload()->set_input_tokens(bad);
    EXPECT_THAT(ValidateStructure(r, "ValidateRequest"),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("ValidateRequest.workload.input_tokens = ")))
        << bad;
  }
}

TEST(ValidateStructure, IntegersBeyondWhatTheModelCanHoldAreRefused) {
  v1::PlanMemoryRequest r;
  r.set_mean_sequence_tokens(std::numeric_limits<uint64_t>::max());
  EXPECT_THAT(ValidateStructure(r, "PlanMemoryRequest"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanMemoryRequest.mean_sequence_tokens = 18446744073709551615; "
                                 "must be at most 9007199254740992 (2^53)")));
  v1::PredictLoadRequest p;
  p.set_operator_concurrency_gate(std::numeric_limits<uint32_t>::max());
  EXPECT_THAT(ValidateStructure(p, "PredictLoadRequest"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PredictLoadRequest.operator_concurrency_gate = 4294967295; "
                                 "must be at most 2147483647")));
}

TEST(ValidateStructure, LongStringsAreRefusedAndEchoedCut) {
  v1::ValidateRequest r;
  r.set_launch_line(std::string(kMaxLaunchLineBytes + 1, 'x'));
  absl::Status s = ValidateStructure(r, "ValidateRequest");
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
                          HasSubstr("ValidateRequest.launch_line = \"xxx")));
  EXPECT_THAT(std::string(s.message()), SizeIs(::testing::Lt(kMaxEchoBytes + 128)));
  // A config.json may be larger than other strings.
  v1::PlanMemoryRequest m;
  m.mutable_deployment()->set_model_config_json(std::string(kMaxStringBytes * 2, ' '));
  EXPECT_THAT(ValidateStructure(m, "PlanMemoryRequest"), IsOk());
  m.mutable_deployment()->set_model_config_json(std::string(kMaxConfigJsonBytes + 1, ' '));
  EXPECT_THAT(ValidateStructure(m, "PlanMemoryRequest"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanMemoryRequest.deployment.model_config_json = ")));
}

TEST(ValidateStructure, TooManyRepeatedEntriesAreRefused) {
  v1::ValidateRequest r;
  for (int i = 0; i <= kMaxRepeatedEntries; ++i) r.add_allow("X");
  EXPECT_THAT(ValidateStructure(r, "ValidateRequest"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ValidateRequest.allow has 4097 entries; must be at most "
                                 "4096")));
}

TEST(ValidateStructure, ADefaultRequestIsValid) {
  EXPECT_THAT(ValidateStructure(v1::PredictLoadRequest(), "PredictLoadRequest"), IsOk());
  EXPECT_THAT(ValidateStructure(v1::PlanRequest(), "PlanRequest"), IsOk());
}

TEST(ValidateId, RefusesLongIdsEchoingThemCut) {
  const absl::Status s = ValidateId(std::string(100000, 'a'), "GetHardwareRequest.id");
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
                          AllOf(HasSubstr("GetHardwareRequest.id = \"aaa"),
                                HasSubstr("(100000 bytes); must be at most 256 bytes"))));
  EXPECT_LT(s.message().size(), 400u);
}

TEST(ValidateId, RefusesBlanksAndControlCharacters) {
  EXPECT_THAT(ValidateId("qwen 3", "X.id"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("X.id = \"qwen 3\"; must be printable ASCII")));
  EXPECT_THAT(ValidateId(std::string("a\0b", 3), "X.id"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("X.id = ")));
  EXPECT_THAT(ValidateId("meta-llama/Llama-3.1-8B-Instruct", "X.id"), IsOk());
  EXPECT_THAT(ValidateId("", "X.id"), IsOk());
}

struct FieldCase {
  const char* name;
  const char* request;  // a PredictLoadRequest
  const char* message;
};

void PrintTo(const FieldCase& c, std::ostream* os) { *os << c.name; }

class PredictLoadFieldTest : public ::testing::TestWithParam<FieldCase> {};

TEST_P(PredictLoadFieldTest, IsInvalidArgumentNamingFieldValueAndRule) {
  const FieldCase& c = GetParam();
  EXPECT_THAT(ValidatePredictLoadRequest(Parse<v1::PredictLoadRequest>(c.request)),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)));
}

INSTANTIATE_TEST_SUITE_P(
    All, PredictLoadFieldTest,
    ::testing::Values(
        FieldCase{"GateBeyondSlots", "operator_concurrency_gate: 100000",
                  "PredictLoadRequest.operator_concurrency_gate = 100000; must be in [1, 65536]"},
        FieldCase{"ZeroGate", "operator_concurrency_gate: 0",
                  "PredictLoadRequest.operator_concurrency_gate = 0; must be in [1, 65536]"},
        FieldCase{"HugeBatchedTokens",
                  "deployment { engine { max_num_batched_tokens: 9223372036854775807 } }",
                  "PredictLoadRequest.deployment.engine.max_num_batched_tokens = "
                  "9223372036854775807; must be at most 9007199254740992"},
        FieldCase{"BatchedTokensBeyondAnyContext",
                  "deployment { engine { max_num_batched_tokens: 1000000000 } }",
                  "PredictLoadRequest.deployment.engine.max_num_batched_tokens = 1000000000; "
                  "must be in [1, 134217728]"},
        FieldCase{"HugeMaxNumSeqs", "deployment { engine { max_num_seqs: 2000000000 } }",
                  "PredictLoadRequest.deployment.engine.max_num_seqs = 2000000000; must be in "
                  "[1, 1048576]"},
        FieldCase{"GraphsBeyondAnyBatch",
                  "deployment { engine { max_cudagraph_batch_size: 2000000 } }",
                  "PredictLoadRequest.deployment.engine.max_cudagraph_batch_size = 2000000; "
                  "must be in [0, 1048576]"},
        FieldCase{"FractionAboveOne", "deployment { engine { gpu_memory_utilization: 1.5 } }",
                  "PredictLoadRequest.deployment.engine.gpu_memory_utilization = 1.5; must be "
                  "at most 1"},
        FieldCase{"TpBeyondAnyMachine", "deployment { parallelism { tp: 5000 } }",
                  "PredictLoadRequest.deployment.parallelism.tp = 5000; must be in [1, 1024]"},
        FieldCase{"GpuCountZero", "deployment { gpu_count: 0 }",
                  "PredictLoadRequest.deployment.gpu_count = 0; must be in [1, 4096]"},
        FieldCase{"LongVersion",
                  "deployment { engine { version: "
                  "\"0.1.2.3.4.5.6.7.8.9.10.11.12.13.14.15.16.17.18.19.20.21.22.23.24.25.26\" } }",
                  "PredictLoadRequest.deployment.engine.version = \"0.1.2"},
        FieldCase{"PromptBeyondAnyContext", "workload { input_tokens: 1e12 output_tokens: 1 }",
                  "PredictLoadRequest.workload.input_tokens = 1e+12; must be at most 1.34218e+08"},
        FieldCase{"ZeroOutput", "workload { input_tokens: 100 output_tokens: 0 }",
                  "PredictLoadRequest.workload.output_tokens = 0; must be > 0"},
        FieldCase{"SpreadAboveFour",
                  "workload { input_tokens: 100 output_tokens: 10 output_tokens_cv: 5 }",
                  "PredictLoadRequest.workload.output_tokens_cv = 5; must be at most 4"},
        FieldCase{"HitRateOne",
                  "workload { input_tokens: 100 output_tokens: 10 prefix_cache_hit_rate: 1 }",
                  "PredictLoadRequest.workload.prefix_cache_hit_rate = 1; must be in [0, 1)"},
        FieldCase{"SloZero", "slo { ttft_p95_seconds: 0 }",
                  "PredictLoadRequest.slo.ttft_p95_seconds = 0; must be > 0"},
        FieldCase{"ConcurrencyBeyondMax", "closed_loop { concurrencies: [1, 20000] }",
                  "PredictLoadRequest.closed_loop.concurrencies[1] = 20000; must be in [1, "
                  "16384]"},
        FieldCase{"ThinkTimeBeyondMax", "closed_loop { concurrencies: 1 think_time_seconds: 1e9 }",
                  "PredictLoadRequest.closed_loop.think_time_seconds = 1e+09; must be at most "
                  "1e+06"},
        FieldCase{"RateBeyondMax", "open_loop { arrival_rates_rps: 1e12 }",
                  "PredictLoadRequest.open_loop.arrival_rates_rps[0] = 1e+12; must be at most "
                  "1e+09"},
        FieldCase{"HardwareIdWithBlank", "deployment { hardware_id: \"nvidia h100\" }",
                  "PredictLoadRequest.deployment.hardware_id = \"nvidia h100\"; must be "
                  "printable ASCII"}),
    [](const ::testing::TestParamInfo<FieldCase>& info) { return info.param.name; });

TEST(ValidatePredictLoadRequest, TooManyCalibrationRowsInAll) {
  v1::PredictLoadRequest r;
  for (int s = 0; s < 2; ++s) {
    v1::Sweep* sweep = r.add_calibration();
    for (int i = 0; i < kMaxCalibrationRows / 2 + 1; ++i) sweep->add_rows();
  }
  EXPECT_THAT(ValidatePredictLoadRequest(r),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PredictLoadRequest.calibration has 4098 rows in all; must be "
                                 "at most 4096")));
}

TEST(ValidatePredictLoadRequest, ATypicalRequestIsValid) {
  EXPECT_THAT(ValidatePredictLoadRequest(Parse<v1::PredictLoadRequest>(R"pb(
                deployment {
                  model_id: "meta-llama/Llama-3.1-8B-Instruct"
                  hardware_id: "nvidia-h100-sxm-80gb"
                  engine { max_num_seqs: 256 gpu_memory_utilization: 0.9 }
                }
                workload { input_tokens: 1000 output_tokens: 200 output_tokens_cv: 0.5 }
                closed_loop {
                  concurrencies: [ 1, 2, 4, 8 ]
                  think_time_seconds: 1
                }
                slo { ttft_p95_seconds: 1 }
                operator_concurrency_gate: 64
              )pb")),
              IsOk());
}

TEST(ValidatePlanRequest, RefusesInfiniteAndZeroCosts) {
  EXPECT_THAT(ValidatePlanRequest(Parse<v1::PlanRequest>("price_per_gpu_hour: 0")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanRequest.price_per_gpu_hour = 0; must be > 0")));
  v1::PlanRequest r;
  r.set_price_per_gpu_hour(std::numeric_limits<double>::infinity());
  EXPECT_THAT(ValidatePlanRequest(r),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanRequest.price_per_gpu_hour = inf; must be a finite number")));
  EXPECT_THAT(
      ValidatePlanRequest(Parse<v1::PlanRequest>("price_per_gpu_hour: 1e300")),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("PlanRequest.price_per_gpu_hour = 1e+300; must be at most 1e+06")));
}

TEST(ValidatePlanRequest, RefusesTargetsBeyondTheirRange) {
  EXPECT_THAT(ValidatePlanRequest(Parse<v1::PlanRequest>("target_concurrent_users: 0")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanRequest.target_concurrent_users = 0; must be in [1, ")));
  EXPECT_THAT(ValidatePlanRequest(Parse<v1::PlanRequest>("target_tokens_per_month: 1e30")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanRequest.target_tokens_per_month = 1e+30")));
  EXPECT_THAT(ValidatePlanRequest(Parse<v1::PlanRequest>("duty_factor: 1.5")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanRequest.duty_factor = 1.5; must be at most 1")));
}

TEST(ValidateValidateRequest, RefusesANanWorkload) {
  v1::ValidateRequest r;
  r.mutable_workload()->set_input_tokens(std::nan(""));
  r.mutable_workload()->set_output_tokens(100);
  EXPECT_THAT(ValidateValidateRequest(r),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ValidateRequest.workload.input_tokens = nan; must be a finite "
                                 "number")));
}

TEST(ValidateValidateRequest, RefusesTooManyAllowCodesAndBadLoads) {
  v1::ValidateRequest r;
  for (int i = 0; i <= kMaxAllowCodes; ++i) r.add_allow("DOES_NOT_FIT");
  EXPECT_THAT(ValidateValidateRequest(r),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ValidateRequest.allow has 65 entries; must be at most 64")));
  EXPECT_THAT(ValidateValidateRequest(
                  Parse<v1::ValidateRequest>("expected_load { requests_per_second: 0 }")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ValidateRequest.expected_load.requests_per_second = 0")));
}

TEST(ValidatePlanMemoryRequest, RefusesAMeanSequenceBeyondAnyContext) {
  EXPECT_THAT(ValidatePlanMemoryRequest(
                  Parse<v1::PlanMemoryRequest>("mean_sequence_tokens: 18446744073709551615")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanMemoryRequest.mean_sequence_tokens = "
                                 "18446744073709551615")));
  EXPECT_THAT(
      ValidatePlanMemoryRequest(Parse<v1::PlanMemoryRequest>("mean_sequence_tokens: 200000000")),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("PlanMemoryRequest.mean_sequence_tokens = 200000000; must be in [1, "
                         "134217728]")));
}

TEST(ValidateLookupRequest, NamesTheIdFieldAndCutsIt) {
  v1::GetBaselineRequest r;
  r.set_id(std::string(100000, 'b'));
  const absl::Status s = ValidateLookupRequest(r);
  EXPECT_THAT(
      s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("GetBaselineRequest.id = \"bbb")));
  EXPECT_LT(s.message().size(), 400u);
  v1::ListHardwareRequest list;
  list.set_vendor("Advanced Micro Devices");  // a filter may have blanks
  EXPECT_THAT(ValidateLookupRequest(list), IsOk());
  list.set_vendor(std::string(300, 'v'));
  EXPECT_THAT(ValidateLookupRequest(list),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ListHardwareRequest.vendor = \"vvv")));
}

TEST(ValidateAccuracyRequest, RefusesAnUnknownMode) {
  v1::AccuracyRequest r;
  r.set_mode(static_cast<v1::AccuracyMode>(7));
  EXPECT_THAT(ValidateAccuracyRequest(r),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("AccuracyRequest.mode = 7; not a known AccuracyMode value")));
}

}  // namespace
}  // namespace capplan::service
