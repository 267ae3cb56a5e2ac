#ifndef CAPPLAN_SERVICE_RPC_GRPC_SERVICE_H_
#define CAPPLAN_SERVICE_RPC_GRPC_SERVICE_H_

#include <optional>
#include <string>

#include "absl/strings/string_view.h"
#include "capplan/v1/planner.grpc.pb.h"
#include "service/planner/planner.h"

namespace capplan::service {

// The RPC boundary: each handler calls the planner and maps its status.
// Metrics are recorded by the server's interceptor.
//
// Writes (PutBaseline) need `write_token` as "authorization: Bearer <token>"
// metadata: without a configured token every write is PERMISSION_DENIED; a
// missing or wrong token is UNAUTHENTICATED. Tokens are compared in constant
// time and never logged or echoed.
class PlannerGrpcService final : public v1::CapacityPlanner::Service {
 public:
  explicit PlannerGrpcService(PlannerApi* planner,
                              std::optional<std::string> write_token = std::nullopt)
      : planner_(planner), write_token_(std::move(write_token)) {}

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

  PlannerApi* planner_;
  std::optional<std::string> write_token_;
};

// Equal strings, in time that depends only on their lengths.
bool ConstantTimeEquals(absl::string_view a, absl::string_view b);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_RPC_GRPC_SERVICE_H_
