#ifndef CAPPLAN_SERVICE_RPC_GRPC_SERVICE_H_
#define CAPPLAN_SERVICE_RPC_GRPC_SERVICE_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "capplan/v1/planner.grpc.pb.h"
#include "google/protobuf/message.h"
#include "service/planner/planner.h"
#include "service/rpc/call_limits.h"

namespace capplan::service {

// What bounds the service's calls (call_limits.h).
struct ServiceLimits {
  // Expensive calls (every planning RPC; not the catalogue look-ups) running
  // at once, and waiting for a turn; a call beyond both is RESOURCE_EXHAUSTED.
  int max_concurrent_expensive_rpcs = 4;
  int max_queued_expensive_rpcs = 8;
  // Cap on one load curve's estimated work (PlannerLimits).
  double max_work_units = PlannerLimits::kDefaultMaxWorkUnits;
  // The stop signal is polled every this many checks of the model's loops
  // (a check is a counter increment; a poll reads the clock, and asks gRPC
  // about the client at most once a millisecond: call_limits.cc). A loop
  // step is microseconds, so a stop is seen within about a millisecond.
  int budget_poll_stride = 64;
  // Largest request, bytes: a larger one is RESOURCE_EXHAUSTED here, where the
  // metrics count it (the server lets gRPC's transport take up to twice as
  // much, so such calls reach a handler; the transport refuses beyond that,
  // before any handler or count).
  size_t max_request_bytes = 4 * 1024 * 1024;
};

// The RPC boundary: each handler calls the planner and maps its status.
// Metrics are recorded by the server's interceptor. Expensive calls run under
// a budget (the call's deadline, the client's presence, the drain deadline)
// and the limiter; a call whose budget stopped returns the budget's status
// (DEADLINE_EXCEEDED, CANCELLED, UNAVAILABLE), never a partial answer.
//
// Writes (PutBaseline) need `write_token` as "authorization: Bearer <token>"
// metadata: without a configured token every write is PERMISSION_DENIED; a
// missing or wrong token is UNAUTHENTICATED. Tokens are compared in constant
// time and never logged or echoed.
class PlannerGrpcService final : public v1::CapacityPlanner::Service {
 public:
  explicit PlannerGrpcService(PlannerApi* planner,
                              std::optional<std::string> write_token = std::nullopt,
                              ServiceLimits limits = {})
      : planner_(planner),
        write_token_(std::move(write_token)),
        limits_(limits),
        limiter_(limits.max_concurrent_expensive_rpcs, limits.max_queued_expensive_rpcs) {}

  // From `deadline` on, running and waiting calls stop (UNAVAILABLE).
  void Drain(absl::Time deadline) { drain_.Set(deadline); }
  const ConcurrencyLimiter& limiter() const { return limiter_; }

  grpc::Status ListHardware(grpc::ServerContext* context, const v1::ListHardwareRequest* request,
                            v1::ListHardwareResponse* response) override;
  grpc::Status GetHardware(grpc::ServerContext* context, const v1::GetHardwareRequest* request,
                           v1::Hardware* response) override;
  grpc::Status ListModels(grpc::ServerContext* context, const v1::ListModelsRequest* request,
                          v1::ListModelsResponse* response) override;
  grpc::Status GetModel(grpc::ServerContext* context, const v1::GetModelRequest* request,
                        v1::ModelInfo* response) override;
  grpc::Status ListBaselines(grpc::ServerContext* context, const v1::ListBaselinesRequest* request,
                             v1::ListBaselinesResponse* response) override;
  grpc::Status GetBaseline(grpc::ServerContext* context, const v1::GetBaselineRequest* request,
                           v1::Baseline* response) override;
  grpc::Status PlanMemory(grpc::ServerContext* context, const v1::PlanMemoryRequest* request,
                          v1::MemoryPlan* response) override;
  grpc::Status PredictLoad(grpc::ServerContext* context, const v1::PredictLoadRequest* request,
                           v1::LoadCurve* response) override;
  grpc::Status Plan(grpc::ServerContext* context, const v1::PlanRequest* request,
                    v1::PlanResponse* response) override;
  grpc::Status Validate(grpc::ServerContext* context, const v1::ValidateRequest* request,
                        v1::ValidateResponse* response) override;
  grpc::Status Lint(grpc::ServerContext* context, const v1::LintRequest* request,
                    v1::LintResponse* response) override;
  grpc::Status Accuracy(grpc::ServerContext* context, const v1::AccuracyRequest* request,
                        v1::AccuracyResponse* response) override;
  grpc::Status SimulateLoad(grpc::ServerContext* context, const v1::PredictLoadRequest* request,
                            v1::LoadCurve* response) override;
  grpc::Status PutBaseline(grpc::ServerContext* context, const v1::PutBaselineRequest* request,
                           v1::PutBaselineResponse* response) override;
  grpc::Status SearchConfigs(grpc::ServerContext* context, const v1::SearchConfigsRequest* request,
                             v1::SearchConfigsResponse* response) override;

 private:
  grpc::Status Authorize(const grpc::ServerContext& context) const;
  // RESOURCE_EXHAUSTED when `request` is above limits_.max_request_bytes.
  grpc::Status CheckSize(const google::protobuf::Message& request) const;
  // A planning call let in: its budget and its limiter slot, held until the
  // call returns.
  struct Admission {
    std::unique_ptr<model::Budget> budget;
    ConcurrencyLimiter::Slot slot;
  };
  // The size check, the call's budget, then a limiter slot.
  absl::StatusOr<Admission> Admit(grpc::ServerContext& context,
                                  const google::protobuf::Message& request, const char* name);
  // A look-up: the size check, then the planner.
  template <typename Request, typename Response, typename Method>
  grpc::Status Lookup(Method method, const Request* request, Response* response);
  // Runs `method` under the call's budget and a limiter slot.
  template <typename Request, typename Response, typename Method>
  grpc::Status Bounded(grpc::ServerContext* context, const char* name, Method method,
                       const Request* request, Response* response);
  // The same for an operation that takes no budget (bounded by the catalogue).
  template <typename Request, typename Response, typename Method>
  grpc::Status Limited(grpc::ServerContext* context, const char* name, Method method,
                       const Request* request, Response* response);

  PlannerApi* planner_;
  std::optional<std::string> write_token_;
  ServiceLimits limits_;
  ConcurrencyLimiter limiter_;
  DrainSignal drain_;
};

// Equal strings, in time that depends only on their lengths.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_RPC_GRPC_SERVICE_H_
