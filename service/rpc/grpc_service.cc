#include "service/rpc/grpc_service.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
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

constexpr char kBearer[] = "Bearer ";

}  // namespace

bool ConstantTimeEquals(absl::string_view a, absl::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    const unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff |= x ^ y;
  }
  return diff == 0;
}

grpc::Status PlannerGrpcService::Authorize(const grpc::ServerContext& context) const {
  if (!write_token_.has_value()) {
    return grpc::Status(grpc::StatusCode::PERMISSION_DENIED,
                        "writes are disabled on this server (start it with --write_token_file)");
  }
  const auto& metadata = context.client_metadata();
  auto it = metadata.find("authorization");
  if (it == metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "PutBaseline needs 'authorization: Bearer <token>' metadata");
  }
  const absl::string_view value(it->second.data(), it->second.size());
  if (!absl::StartsWith(value, kBearer) ||
      !ConstantTimeEquals(value.substr(sizeof(kBearer) - 1), *write_token_)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "the write token is not valid");
  }
  return grpc::Status::OK;
}

grpc::Status PlannerGrpcService::Lint(grpc::ServerContext*, const v1::LintRequest* request,
                                      v1::LintResponse* response) {
  return Handle(planner_, &PlannerApi::Lint, request, response);
}

grpc::Status PlannerGrpcService::Accuracy(grpc::ServerContext*, const v1::AccuracyRequest* request,
                                          v1::AccuracyResponse* response) {
  return Handle(planner_, &PlannerApi::Accuracy, request, response);
}

grpc::Status PlannerGrpcService::SimulateLoad(grpc::ServerContext*,
                                              const v1::PredictLoadRequest* request,
                                              v1::LoadCurve* response) {
  return Handle(planner_, &PlannerApi::SimulateLoad, request, response);
}

grpc::Status PlannerGrpcService::PutBaseline(grpc::ServerContext* context,
                                             const v1::PutBaselineRequest* request,
                                             v1::PutBaselineResponse* response) {
  grpc::Status allowed = Authorize(*context);
  if (!allowed.ok()) return allowed;
  return Handle(planner_, &PlannerApi::PutBaseline, request, response);
}

grpc::Status PlannerGrpcService::ListHardware(grpc::ServerContext*,
                                              const v1::ListHardwareRequest* request,
                                              v1::ListHardwareResponse* response) {
  return Handle(planner_, &PlannerApi::ListHardware, request, response);
}

grpc::Status PlannerGrpcService::GetHardware(grpc::ServerContext*,
                                             const v1::GetHardwareRequest* request,
                                             v1::Hardware* response) {
  return Handle(planner_, &PlannerApi::GetHardware, request, response);
}

grpc::Status PlannerGrpcService::ListModels(grpc::ServerContext*,
                                            const v1::ListModelsRequest* request,
                                            v1::ListModelsResponse* response) {
  return Handle(planner_, &PlannerApi::ListModels, request, response);
}

grpc::Status PlannerGrpcService::GetModel(grpc::ServerContext*, const v1::GetModelRequest* request,
                                          v1::ModelInfo* response) {
  return Handle(planner_, &PlannerApi::GetModel, request, response);
}

grpc::Status PlannerGrpcService::ListBaselines(grpc::ServerContext*,
                                               const v1::ListBaselinesRequest* request,
                                               v1::ListBaselinesResponse* response) {
  return Handle(planner_, &PlannerApi::ListBaselines, request, response);
}

grpc::Status PlannerGrpcService::GetBaseline(grpc::ServerContext*,
                                             const v1::GetBaselineRequest* request,
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

grpc::Status PlannerGrpcService::SearchConfigs(grpc::ServerContext* context,
                                               const v1::SearchConfigsRequest* request,
                                               v1::SearchConfigsResponse* response) {
  // No client deadline is gRPC's infinite future, far beyond any search.
  const auto deadline = context->deadline();
  const absl::Time limit = absl::Now() + absl::Hours(24);
  const absl::Time until =
      deadline >= absl::ToChronoTime(limit) ? limit : absl::FromChrono(deadline);
  absl::StatusOr<v1::SearchConfigsResponse> result = planner_->SearchConfigs(*request, until);
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

grpc::Status PlannerGrpcService::Validate(grpc::ServerContext*, const v1::ValidateRequest* request,
                                          v1::ValidateResponse* response) {
  return Handle(planner_, &PlannerApi::Validate, request, response);
}

}  // namespace capplan::service
