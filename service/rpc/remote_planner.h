#ifndef CAPPLAN_SERVICE_RPC_REMOTE_PLANNER_H_
#define CAPPLAN_SERVICE_RPC_REMOTE_PLANNER_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/time/time.h"
#include "capplan/v1/planner.grpc.pb.h"
#include "grpcpp/security/credentials.h"
#include "service/planner/planner.h"

namespace capplan::service {

// What a TLS channel to the server uses, as PEM text.
struct ChannelTls {
  std::string ca_pem;    // roots the server's certificate must chain to; empty: the system's
  std::string cert_pem;  // the client's certificate chain and key, for mutual TLS (both or
  std::string key_pem;   // neither)
};

// TLS credentials from `tls`, or plaintext when it is absent.
std::shared_ptr<grpc::ChannelCredentials> ChannelCredentialsFor(
    const std::optional<ChannelTls>& tls);

// PlannerApi over gRPC: the CLI's --server mode. Unreachable servers come
// back as UNAVAILABLE with the address in the message. Budgets are ignored:
// the server applies its own cap, and each call carries the timeout as its
// deadline.
class RemotePlanner : public PlannerApi {
 public:
  // `write_token` goes with writes as "authorization: Bearer <token>".
  // `credentials` null: plaintext.
  RemotePlanner(const std::string& address, absl::Duration timeout,
                std::optional<std::string> write_token = std::nullopt,
                std::shared_ptr<grpc::ChannelCredentials> credentials = nullptr);

  absl::StatusOr<v1::ListHardwareResponse> ListHardware(
      const v1::ListHardwareRequest& request) override;
  absl::StatusOr<v1::Hardware> GetHardware(const v1::GetHardwareRequest& request) override;
  absl::StatusOr<v1::ListModelsResponse> ListModels(const v1::ListModelsRequest& request) override;
  absl::StatusOr<v1::ModelInfo> GetModel(const v1::GetModelRequest& request) override;
  absl::StatusOr<v1::ListBaselinesResponse> ListBaselines(
      const v1::ListBaselinesRequest& request) override;
  absl::StatusOr<v1::Baseline> GetBaseline(const v1::GetBaselineRequest& request) override;
  absl::StatusOr<v1::MemoryPlan> PlanMemory(const v1::PlanMemoryRequest& request,
                                            model::Budget* budget) override;
  absl::StatusOr<v1::LoadCurve> PredictLoad(const v1::PredictLoadRequest& request,
                                            model::Budget* budget) override;
  absl::StatusOr<v1::PlanResponse> Plan(const v1::PlanRequest& request,
                                        model::Budget* budget) override;
  absl::StatusOr<v1::ValidateResponse> Validate(const v1::ValidateRequest& request,
                                                model::Budget* budget) override;
  absl::StatusOr<v1::LintResponse> Lint(const v1::LintRequest& request) override;
  absl::StatusOr<v1::AccuracyResponse> Accuracy(const v1::AccuracyRequest& request,
                                                model::Budget* budget) override;
  absl::StatusOr<v1::LoadCurve> SimulateLoad(const v1::PredictLoadRequest& request,
                                             model::Budget* budget) override;
  absl::StatusOr<v1::PutBaselineResponse> PutBaseline(
      const v1::PutBaselineRequest& request) override;
  // The RPC deadline is the earlier of the client's timeout and `deadline`.
  absl::StatusOr<v1::SearchConfigsResponse> SearchConfigs(const v1::SearchConfigsRequest& request,
                                                          absl::Time deadline,
                                                          model::Budget* budget) override;

 private:
  template <typename Request, typename Response, typename Method>
  absl::StatusOr<Response> Call(Method method, const Request& request, bool with_token = false,
                                absl::Time deadline = absl::InfiniteFuture());

  std::string address_;
  std::optional<std::string> write_token_;
  absl::Duration timeout_;
  std::unique_ptr<v1::CapacityPlanner::Stub> stub_;
};

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_RPC_REMOTE_PLANNER_H_
