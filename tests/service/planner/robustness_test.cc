// Whatever a client sends, the planner answers with a result or a status:
// no crash, no hang, no NaN in an answer. Seeded random requests built from
// extreme values for every numeric field the planning RPCs read.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>
#include <string>

#include "google/protobuf/descriptor.h"
#include "google/protobuf/message.h"
#include "google/protobuf/reflection.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "service/planner/planner.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

class Randomizer {
 public:
  explicit Randomizer(uint64_t seed) : rng_(seed) {}

  // Changes `count` random fields somewhere in `m` (descending into
  // sub-messages) to extreme or ordinary values; strings come from `ids`.
  void Mutate(Message* m, int count, const std::vector<std::string>& ids) {
    for (int i = 0; i < count; ++i) MutateOne(m, 0, ids);
  }

 private:
  void MutateOne(Message* m, int depth, const std::vector<std::string>& ids) {
    const auto* d = m->GetDescriptor();
    const auto* r = m->GetReflection();
    if (d->field_count() == 0) return;
    const FieldDescriptor* f = d->field(Pick(d->field_count()));
    if (f->is_repeated()) {
      if (Chance(0.3)) {
        r->ClearField(m, f);
      } else {
        AddRepeated(m, f, depth, ids);
      }
      return;
    }
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_MESSAGE:
        if (depth < 4) MutateOne(r->MutableMessage(m, f), depth + 1, ids);
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        r->SetDouble(m, f, Double());
        break;
      case FieldDescriptor::CPPTYPE_FLOAT:
        r->SetFloat(m, f, static_cast<float>(Double()));
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        r->SetUInt32(m, f, static_cast<uint32_t>(Int()));
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        r->SetUInt64(m, f, Int());
        break;
      case FieldDescriptor::CPPTYPE_INT32:
        r->SetInt32(m, f, static_cast<int32_t>(Int()));
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        r->SetInt64(m, f, static_cast<int64_t>(Int()));
        break;
      case FieldDescriptor::CPPTYPE_BOOL:
        r->SetBool(m, f, Chance(0.5));
        break;
      case FieldDescriptor::CPPTYPE_ENUM: {
        const auto* e = f->enum_type();
        r->SetEnum(m, f, e->value(Pick(e->value_count())));
        break;
      }
      case FieldDescriptor::CPPTYPE_STRING:
        r->SetString(m, f, ids[Pick(ids.size())]);
        break;
    }
  }

  void AddRepeated(Message* m, const FieldDescriptor* f, int depth,
                   const std::vector<std::string>& ids) {
    const auto* r = m->GetReflection();
    switch (f->cpp_type()) {
      case FieldDescriptor::CPPTYPE_MESSAGE:
        if (depth < 3) MutateOne(r->AddMessage(m, f), depth + 1, ids);
        break;
      case FieldDescriptor::CPPTYPE_DOUBLE:
        r->AddDouble(m, f, Double());
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        r->AddUInt32(m, f, static_cast<uint32_t>(Int()));
        break;
      case FieldDescriptor::CPPTYPE_STRING:
        r->AddString(m, f, ids[Pick(ids.size())]);
        break;
      default:
        break;
    }
  }
  bool Chance(double p) { return std::uniform_real_distribution<double>(0, 1)(rng_) < p; }
  size_t Pick(size_t n) { return std::uniform_int_distribution<size_t>(0, n - 1)(rng_); }
  double Double() {
    static const double kValues[] = {0,
                                     -1,
                                     1e-300,
                                     0.5,
                                     1,
                                     2,
                                     8,
                                     100,
                                     1e6,
                                     1e300,
                                     std::numeric_limits<double>::infinity(),
                                     std::numeric_limits<double>::quiet_NaN(),
                                     -1e9};
    return kValues[Pick(std::size(kValues))];
  }
  uint64_t Int() {
    static const uint64_t kValues[] = {0,
                                       1,
                                       2,
                                       3,
                                       7,
                                       8,
                                       64,
                                       4096,
                                       65536,
                                       1u << 31,
                                       std::numeric_limits<uint32_t>::max(),
                                       std::numeric_limits<uint64_t>::max()};
    return kValues[Pick(std::size(kValues))];
  }
  std::mt19937_64 rng_;
};

std::vector<std::string> Ids(const Catalog& c) {
  std::vector<std::string> ids = {"", "nope", "{\"hidden_size\": 1}", "vllm serve x --tp 0"};
  ids.push_back(c.models().front().id());
  ids.push_back(c.hardware().front().id());
  ids.push_back(c.baselines().front().id());
  ids.push_back("qwen3-8b");
  ids.push_back("nvidia-h100-sxm-80gb");
  return ids;
}

bool AllFinite(const Message& m) {
  const auto* r = m.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  r->ListFields(m, &fields);
  for (const FieldDescriptor* f : fields) {
    int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
    for (int i = 0; i < n; ++i) {
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        if (!AllFinite(f->is_repeated() ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f))) {
          return false;
        }
      } else if (f->cpp_type() == FieldDescriptor::CPPTYPE_DOUBLE) {
        double v = f->is_repeated() ? r->GetRepeatedDouble(m, f, i) : r->GetDouble(m, f);
        if (!std::isfinite(v)) return false;
      }
    }
  }
  return true;
}

template <typename Request, typename Response>
void Hammer(absl::StatusOr<Response> (Planner::*rpc)(const Request&, model::Budget*),
            const std::string& valid, int rounds, uint64_t seed) {
  const Catalog& catalog = testing::BundledCatalogue();
  Planner planner(std::shared_ptr<const Catalog>(&catalog, [](const Catalog*) {}));
  // CAPPLAN_ROBUSTNESS_SCALE=N runs N times as many (long runs by hand).
  if (const char* scale = std::getenv("CAPPLAN_ROBUSTNESS_SCALE")) {
    rounds *= std::max(1, std::atoi(scale));
  }
  Randomizer random(seed);
  std::vector<std::string> ids = Ids(catalog);
  int answered = 0;
  for (int i = 0; i < rounds; ++i) {
    Request request;
    ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(valid, &request)) << valid;
    if (i > 0) random.Mutate(&request, 1 + i % 3, ids);
    absl::StatusOr<Response> response = (planner.*rpc)(request, nullptr);
    if (response.ok()) {
      ++answered;
      EXPECT_TRUE(AllFinite(*response)) << request.ShortDebugString();
    } else {
      EXPECT_FALSE(response.status().message().empty()) << request.ShortDebugString();
      EXPECT_NE(response.status().code(), absl::StatusCode::kInternal)
          << response.status() << "\n"
          << request.ShortDebugString();
    }
  }
  std::printf("%d of %d mutated requests answered, the rest refused with a reason\n", answered,
              rounds);
  // The unmutated first request must be answered, or the test proves nothing.
  EXPECT_GE(answered, 1);
}

constexpr char kDeployment[] = R"(deployment { model_id: "qwen3-8b" hardware_id:
    "nvidia-h100-sxm-80gb" engine { max_model_len: 8192 } } )";

TEST(Robustness, PlanMemorySurvivesMutatedRequests) {
  Hammer(&Planner::PlanMemory, std::string(kDeployment) + "mean_sequence_tokens: 1000", 400, 1);
}
TEST(Robustness, PredictLoadSurvivesMutatedRequests) {
  Hammer(&Planner::PredictLoad,
         std::string(kDeployment) + R"(workload { input_tokens: 500 output_tokens: 200 }
             closed_loop { concurrencies: [1, 2, 4, 8] } slo { ttft_p95_seconds: 1 })",
         300, 2);
}
TEST(Robustness, PlanSurvivesMutatedRequests) {
  Hammer(&Planner::Plan,
         std::string(kDeployment) + R"(workload { input_tokens: 500 output_tokens: 200 }
             slo { ttft_p95_seconds: 1 } target_requests_per_second: 10)",
         60, 3);
}
TEST(Robustness, ValidateSurvivesMutatedRequests) {
  Hammer(&Planner::Validate,
         std::string(kDeployment) + R"(workload { input_tokens: 500 output_tokens: 200 }
             slo { ttft_p95_seconds: 1 } expected_load { concurrent_users: 16 })",
         150, 4);
}

}  // namespace
}  // namespace capplan::service
