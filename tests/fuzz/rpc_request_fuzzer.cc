// Bytes -> a request message -> the planner behind the RPC (its validator,
// resolution, the model): what a client can send over gRPC, after the
// transport's own parsing. Which RPCs one binary covers is chosen at build
// time (CAPPLAN_FUZZ_RPC_GROUP), so a slow RPC does not starve the fast ones:
//   0 catalogue reads (ListHardware, GetHardware, ListModels, GetModel,
//     ListBaselines, GetBaseline), 1 PlanMemory, 2 PredictLoad, 3 Plan,
//   4 Validate, 5 Lint and Accuracy, 6 PutBaseline (an in-memory store).
// Within a group the first byte chooses the RPC.
#include <cstddef>
#include <cstdint>
#include <memory>

#include "service/planner/planner.h"
#include "tests/fuzz/fuzz_common.h"

#ifndef CAPPLAN_FUZZ_RPC_GROUP
#error "CAPPLAN_FUZZ_RPC_GROUP must name the group of RPCs"
#endif

namespace capplan::fuzz {
namespace {

// Accepts every write and keeps nothing: PutBaseline runs its validation,
// lint and catalogue rebuild, and the file system stays out of the loop.
class DiscardingStore : public service::CatalogStore {
 public:
  absl::StatusOr<std::shared_ptr<const service::Catalog>> Load() const override {
    return BundledCatalogue();
  }
  absl::StatusOr<service::StoredEntity> PutBaseline(const v1::Baseline& b, bool) override {
    return service::StoredEntity{"baselines/" + b.id() + ".txtpb", false};
  }
  absl::StatusOr<service::StoredEntity> PutModel(const v1::Model& m, bool) override {
    return service::StoredEntity{"models/" + m.id() + ".txtpb", false};
  }
  absl::StatusOr<service::StoredEntity> PutPrior(const v1::EfficiencyPrior& p, bool) override {
    return service::StoredEntity{"priors/" + p.id() + ".txtpb", false};
  }
  absl::StatusOr<std::string> ChangeToken() const override { return std::string("fixed"); }
};

template <typename Request, typename Response>
void Call(service::Planner& planner,
          absl::StatusOr<Response> (service::Planner::*rpc)(const Request&),
          const std::string& bytes) {
  Request request;
  if (!request.ParseFromString(bytes)) {
    Report(Request::descriptor()->name().c_str(), absl::DataLossError("does not parse"));
    return;  // the transport refuses these
  }
  absl::StatusOr<Response> response = (planner.*rpc)(request);
  Report(Request::descriptor()->name().c_str(), response.status());
  if (response.ok()) {
    std::string out;
    response->SerializeToString(&out);
  }
}

void Run(size_t group, const uint8_t* data, size_t size) {
  static service::Planner* const planner =
      new service::Planner(BundledCatalogue(), std::make_shared<DiscardingStore>());
  using P = service::Planner;
  switch (group) {
    case 0: {
      Selected s = Select(data, size, 6);
      switch (s.choice) {
        case 0:
          return Call(*planner, &P::ListHardware, s.payload);
        case 1:
          return Call(*planner, &P::GetHardware, s.payload);
        case 2:
          return Call(*planner, &P::ListModels, s.payload);
        case 3:
          return Call(*planner, &P::GetModel, s.payload);
        case 4:
          return Call(*planner, &P::ListBaselines, s.payload);
        default:
          return Call(*planner, &P::GetBaseline, s.payload);
      }
    }
    case 1:
      return Call(*planner, &P::PlanMemory, Bytes(data, size));
    case 2:
      return Call(*planner, &P::PredictLoad, Bytes(data, size));
    case 3:
      return Call(*planner, &P::Plan, Bytes(data, size));
    case 4:
      return Call(*planner, &P::Validate, Bytes(data, size));
    case 5: {
      Selected s = Select(data, size, 2);
      if (s.choice == 0) return Call(*planner, &P::Lint, s.payload);
      // Accuracy over the whole catalogue (no baseline_id) refits every
      // baseline: seconds a run under the sanitizers, and nothing in the
      // request but its mode to vary. The unit tests cover it; here each
      // request names a baseline.
      v1::AccuracyRequest probe;
      if (probe.ParseFromString(s.payload) && probe.baseline_id().empty()) return;
      return Call(*planner, &P::Accuracy, s.payload);
    }
    default:
      return Call(*planner, &P::PutBaseline, Bytes(data, size));
  }
}

}  // namespace
}  // namespace capplan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  capplan::fuzz::Run(CAPPLAN_FUZZ_RPC_GROUP, data, size);
  return 0;
}
