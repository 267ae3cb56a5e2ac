#include "service/rpc/grpc_service.h"

#include "service/rpc/grpc_status.h"

namespace capplan::service {
namespace {

// Calls one planner operation and maps its result onto the RPC.
template <typename Request, typename Response, typename Method>
grpc::Status Handle(PlannerApi* planner, Method method, const Request* request,
                    Response* response) {
  absl::StatusOr<Response> result = (planner->*method)(*request);
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

}  // namespace

grpc::Status PlannerGrpcService::ListHardware(
    grpc::ServerContext*, const v1::ListHardwareRequest* request,
    v1::ListHardwareResponse* response) {
  return Handle(planner_, &PlannerApi::ListHardware, request, response);
}

grpc::Status PlannerGrpcService::GetHardware(
    grpc::ServerContext*, const v1::GetHardwareRequest* request,
    v1::Hardware* response) {
  return Handle(planner_, &PlannerApi::GetHardware, request, response);
}

grpc::Status PlannerGrpcService::ListModels(grpc::ServerContext*,
                                            const v1::ListModelsRequest* request,
                                            v1::ListModelsResponse* response) {
  return Handle(planner_, &PlannerApi::ListModels, request, response);
}

grpc::Status PlannerGrpcService::GetModel(grpc::ServerContext*,
                                          const v1::GetModelRequest* request,
                                          v1::ModelInfo* response) {
  return Handle(planner_, &PlannerApi::GetModel, request, response);
}

grpc::Status PlannerGrpcService::ListBaselines(
    grpc::ServerContext*, const v1::ListBaselinesRequest* request,
    v1::ListBaselinesResponse* response) {
  return Handle(planner_, &PlannerApi::ListBaselines, request, response);
}

grpc::Status PlannerGrpcService::GetBaseline(
    grpc::ServerContext*, const v1::GetBaselineRequest* request,
    v1::Baseline* response) {
  return Handle(planner_, &PlannerApi::GetBaseline, request, response);
}

grpc::Status PlannerGrpcService::PlanMemory(grpc::ServerContext*,
                                            const v1::PlanMemoryRequest* request,
                                            v1::MemoryPlan* response) {
  return Handle(planner_, &PlannerApi::PlanMemory, request, response);
}

grpc::Status PlannerGrpcService::PredictLoad(grpc::ServerContext*,
                                             const v1::PredictLoadRequest* request,
                                             v1::LoadCurve* response) {
  return Handle(planner_, &PlannerApi::PredictLoad, request, response);
}

grpc::Status PlannerGrpcService::Plan(grpc::ServerContext*, const v1::PlanRequest* request,
                                      v1::PlanResponse* response) {
  return Handle(planner_, &PlannerApi::Plan, request, response);
}

grpc::Status PlannerGrpcService::Validate(grpc::ServerContext*,
                                          const v1::ValidateRequest* request,
                                          v1::ValidateResponse* response) {
  return Handle(planner_, &PlannerApi::Validate, request, response);
}

}  // namespace capplan::service
