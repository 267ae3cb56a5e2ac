#include "service/rpc/remote_planner.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "service/rpc/grpc_status.h"

namespace capplan::service {

std::shared_ptr<grpc::ChannelCredentials> ChannelCredentialsFor(
    const std::optional<ChannelTls>& tls) {
  if (!tls.has_value()) return grpc::InsecureChannelCredentials();
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = tls->ca_pem;
  ssl.pem_cert_chain = tls->cert_pem;
  ssl.pem_private_key = tls->key_pem;
  return grpc::SslCredentials(ssl);
}

RemotePlanner::RemotePlanner(const std::string& address, absl::Duration timeout,
                             std::optional<std::string> write_token,
                             std::shared_ptr<grpc::ChannelCredentials> credentials)
    : address_(address),
      write_token_(std::move(write_token)),
      timeout_(timeout),
      stub_(v1::CapacityPlanner::NewStub(grpc::CreateChannel(
          address, credentials != nullptr ? credentials : grpc::InsecureChannelCredentials()))) {}

template <typename Request, typename Response, typename Method>
absl::StatusOr<Response> RemotePlanner::Call(Method method, const Request& request, bool with_token,
                                             absl::Time deadline) {
  grpc::ClientContext context;
  if (with_token && write_token_.has_value()) {
    context.AddMetadata("authorization", absl::StrCat("Bearer ", *write_token_));
  }
  context.set_deadline(absl::ToChronoTime(std::min(absl::Now() + timeout_, deadline)));
  Response response;
  grpc::Status status = (stub_.get()->*method)(&context, request, &response);
  if (!status.ok()) {
    absl::Status converted = FromGrpcStatus(status);
    if (converted.code() == absl::StatusCode::kUnavailable ||
        converted.code() == absl::StatusCode::kDeadlineExceeded) {
      return absl::UnavailableError(
          absl::StrCat("server ", address_, " unreachable: ", converted.message()));
    }
    return converted;
  }
  return response;
}

absl::StatusOr<v1::ListHardwareResponse> RemotePlanner::ListHardware(
    const v1::ListHardwareRequest& request) {
  return Call<v1::ListHardwareRequest, v1::ListHardwareResponse>(
      &v1::CapacityPlanner::Stub::ListHardware, request);
}
absl::StatusOr<v1::Hardware> RemotePlanner::GetHardware(const v1::GetHardwareRequest& request) {
  return Call<v1::GetHardwareRequest, v1::Hardware>(&v1::CapacityPlanner::Stub::GetHardware,
                                                    request);
}
absl::StatusOr<v1::ListModelsResponse> RemotePlanner::ListModels(
    const v1::ListModelsRequest& request) {
  return Call<v1::ListModelsRequest, v1::ListModelsResponse>(&v1::CapacityPlanner::Stub::ListModels,
                                                             request);
}
absl::StatusOr<v1::ModelInfo> RemotePlanner::GetModel(const v1::GetModelRequest& request) {
  return Call<v1::GetModelRequest, v1::ModelInfo>(&v1::CapacityPlanner::Stub::GetModel, request);
}
absl::StatusOr<v1::ListBaselinesResponse> RemotePlanner::ListBaselines(
    const v1::ListBaselinesRequest& request) {
  return Call<v1::ListBaselinesRequest, v1::ListBaselinesResponse>(
      &v1::CapacityPlanner::Stub::ListBaselines, request);
}
absl::StatusOr<v1::Baseline> RemotePlanner::GetBaseline(const v1::GetBaselineRequest& request) {
  return Call<v1::GetBaselineRequest, v1::Baseline>(&v1::CapacityPlanner::Stub::GetBaseline,
                                                    request);
}

absl::StatusOr<v1::MemoryPlan> RemotePlanner::PlanMemory(const v1::PlanMemoryRequest& request,
                                                         model::Budget*) {
  return Call<v1::PlanMemoryRequest, v1::MemoryPlan>(&v1::CapacityPlanner::Stub::PlanMemory,
                                                     request);
}

absl::StatusOr<v1::LoadCurve> RemotePlanner::PredictLoad(const v1::PredictLoadRequest& request,
                                                         model::Budget*) {
  return Call<v1::PredictLoadRequest, v1::LoadCurve>(&v1::CapacityPlanner::Stub::PredictLoad,
                                                     request);
}

absl::StatusOr<v1::SearchConfigsResponse> RemotePlanner::SearchConfigs(
    const v1::SearchConfigsRequest& request, absl::Time deadline, model::Budget*) {
  return Call<v1::SearchConfigsRequest, v1::SearchConfigsResponse>(
      &v1::CapacityPlanner::Stub::SearchConfigs, request, false, deadline);
}

absl::StatusOr<v1::PlanResponse> RemotePlanner::Plan(const v1::PlanRequest& request,
                                                     model::Budget*) {
  return Call<v1::PlanRequest, v1::PlanResponse>(&v1::CapacityPlanner::Stub::Plan, request);
}

absl::StatusOr<v1::ValidateResponse> RemotePlanner::Validate(const v1::ValidateRequest& request,
                                                             model::Budget*) {
  return Call<v1::ValidateRequest, v1::ValidateResponse>(&v1::CapacityPlanner::Stub::Validate,
                                                         request);
}

absl::StatusOr<v1::LintResponse> RemotePlanner::Lint(const v1::LintRequest& request) {
  return Call<v1::LintRequest, v1::LintResponse>(&v1::CapacityPlanner::Stub::Lint, request);
}
absl::StatusOr<v1::AccuracyResponse> RemotePlanner::Accuracy(const v1::AccuracyRequest& request,
                                                             model::Budget*) {
  return Call<v1::AccuracyRequest, v1::AccuracyResponse>(&v1::CapacityPlanner::Stub::Accuracy,
                                                         request);
}
absl::StatusOr<v1::LoadCurve> RemotePlanner::SimulateLoad(const v1::PredictLoadRequest& request,
                                                          model::Budget*) {
  return Call<v1::PredictLoadRequest, v1::LoadCurve>(&v1::CapacityPlanner::Stub::SimulateLoad,
                                                     request);
}
absl::StatusOr<v1::PutBaselineResponse> RemotePlanner::PutBaseline(
    const v1::PutBaselineRequest& request) {
  return Call<v1::PutBaselineRequest, v1::PutBaselineResponse>(
      &v1::CapacityPlanner::Stub::PutBaseline, request, /*with_token=*/true);
}

}  // namespace capplan::service
