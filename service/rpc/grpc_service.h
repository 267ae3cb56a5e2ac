#ifndef CAPPLAN_SERVICE_RPC_GRPC_SERVICE_H_
#define CAPPLAN_SERVICE_RPC_GRPC_SERVICE_H_

#include "capplan/v1/planner.grpc.pb.h"
#include "service/planner/planner.h"

namespace capplan::service {

// The RPC boundary: each handler calls the planner and maps its status.
// Metrics are recorded by the server's interceptor.
class PlannerGrpcService final : public v1::CapacityPlanner::Service {
 public:
  explicit PlannerGrpcService(PlannerApi* planner) : planner_(planner) {}

  grpc::Status ListHardware(grpc::ServerContext* context,
                            const v1::ListHardwareRequest* request,
                            v1::ListHardwareResponse* response) override;
  grpc::Status GetHardware(grpc::ServerContext* context,
                           const v1::GetHardwareRequest* request,
                           v1::Hardware* response) override;
  grpc::Status ListModels(grpc::ServerContext* context,
                          const v1::ListModelsRequest* request,
                          v1::ListModelsResponse* response) override;
  grpc::Status GetModel(grpc::ServerContext* context,
                        const v1::GetModelRequest* request,
                        v1::ModelInfo* response) override;
  grpc::Status ListBaselines(grpc::ServerContext* context,
                             const v1::ListBaselinesRequest* request,
                             v1::ListBaselinesResponse* response) override;
  grpc::Status GetBaseline(grpc::ServerContext* context,
                           const v1::GetBaselineRequest* request,
                           v1::Baseline* response) override;
  grpc::Status PlanMemory(grpc::ServerContext* context,
                          const v1::PlanMemoryRequest* request,
                          v1::MemoryPlan* response) override;
  grpc::Status PredictLoad(grpc::ServerContext* context,
                           const v1::PredictLoadRequest* request,
                           v1::LoadCurve* response) override;
  grpc::Status Plan(grpc::ServerContext* context, const v1::PlanRequest* request,
                    v1::PlanResponse* response) override;
  grpc::Status Validate(grpc::ServerContext* context, const v1::ValidateRequest* request,
                        v1::ValidateResponse* response) override;

 private:
  PlannerApi* planner_;
};

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_RPC_GRPC_SERVICE_H_
