#include "service/rpc/grpc_service.h"

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
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

grpc::Status PlannerGrpcService::CheckSize(const google::protobuf::Message& request) const {
  const size_t bytes = request.ByteSizeLong();
  if (bytes <= limits_.max_request_bytes) return grpc::Status::OK;
  return grpc::Status(
      grpc::StatusCode::RESOURCE_EXHAUSTED,
      absl::StrFormat("%s is %d bytes; must be at most %d (the server's --max_message_bytes)",
                      request.GetDescriptor()->name(), bytes, limits_.max_request_bytes));
}

absl::StatusOr<PlannerGrpcService::Admission> PlannerGrpcService::Admit(
    grpc::ServerContext& context, const google::protobuf::Message& request, const char* name) {
  grpc::Status size = CheckSize(request);
  if (!size.ok()) {
    return absl::Status(static_cast<absl::StatusCode>(size.error_code()), size.error_message());
  }
  std::unique_ptr<model::Budget> budget =
      CallBudget(context, drain_, limits_.max_work_units, limits_.budget_poll_stride);
  absl::StatusOr<ConcurrencyLimiter::Slot> slot = limiter_.Acquire(*budget, name);
  if (!slot.ok()) return slot.status();
  return Admission{std::move(budget), *std::move(slot)};
}

template <typename Request, typename Response, typename Method>
grpc::Status PlannerGrpcService::Lookup(Method method, const Request* request, Response* response) {
  grpc::Status size = CheckSize(*request);
  if (!size.ok()) return size;
  return Handle(planner_, method, request, response);
}

template <typename Request, typename Response, typename Method>
grpc::Status PlannerGrpcService::Bounded(grpc::ServerContext* context, const char* name,
                                         Method method, const Request* request,
                                         Response* response) {
  absl::StatusOr<Admission> admitted = Admit(*context, *request, name);
  if (!admitted.ok()) return ToGrpcStatus(admitted.status());
  model::Budget& budget = *admitted->budget;
  absl::StatusOr<Response> result = (planner_->*method)(*request, &budget);
  // Once stopped, the budget's reason is the call's status.
  if (!budget.status().ok()) return ToGrpcStatus(budget.status());
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

template <typename Request, typename Response, typename Method>
grpc::Status PlannerGrpcService::Limited(grpc::ServerContext* context, const char* name,
                                         Method method, const Request* request,
                                         Response* response) {
  absl::StatusOr<Admission> admitted = Admit(*context, *request, name);
  if (!admitted.ok()) return ToGrpcStatus(admitted.status());
  return Handle(planner_, method, request, response);
}

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

grpc::Status PlannerGrpcService::Lint(grpc::ServerContext* context, const v1::LintRequest* request,
                                      v1::LintResponse* response) {
  return Limited(context, "Lint", &PlannerApi::Lint, request, response);
}

grpc::Status PlannerGrpcService::Accuracy(grpc::ServerContext* context,
                                          const v1::AccuracyRequest* request,
                                          v1::AccuracyResponse* response) {
  return Bounded(context, "Accuracy", &PlannerApi::Accuracy, request, response);
}

grpc::Status PlannerGrpcService::SimulateLoad(grpc::ServerContext* context,
                                              const v1::PredictLoadRequest* request,
                                              v1::LoadCurve* response) {
  return Bounded(context, "SimulateLoad", &PlannerApi::SimulateLoad, request, response);
}

grpc::Status PlannerGrpcService::PutBaseline(grpc::ServerContext* context,
                                             const v1::PutBaselineRequest* request,
                                             v1::PutBaselineResponse* response) {
  grpc::Status size = CheckSize(*request);
  if (!size.ok()) return size;
  grpc::Status allowed = Authorize(*context);
  if (!allowed.ok()) return allowed;
  return Limited(context, "PutBaseline", &PlannerApi::PutBaseline, request, response);
}

grpc::Status PlannerGrpcService::ListHardware(grpc::ServerContext*,
                                              const v1::ListHardwareRequest* request,
                                              v1::ListHardwareResponse* response) {
  return Lookup(&PlannerApi::ListHardware, request, response);
}

grpc::Status PlannerGrpcService::GetHardware(grpc::ServerContext*,
                                             const v1::GetHardwareRequest* request,
                                             v1::Hardware* response) {
  return Lookup(&PlannerApi::GetHardware, request, response);
}

grpc::Status PlannerGrpcService::ListModels(grpc::ServerContext*,
                                            const v1::ListModelsRequest* request,
                                            v1::ListModelsResponse* response) {
  return Lookup(&PlannerApi::ListModels, request, response);
}

grpc::Status PlannerGrpcService::GetModel(grpc::ServerContext*, const v1::GetModelRequest* request,
                                          v1::ModelInfo* response) {
  return Lookup(&PlannerApi::GetModel, request, response);
}

grpc::Status PlannerGrpcService::ListBaselines(grpc::ServerContext*,
                                               const v1::ListBaselinesRequest* request,
                                               v1::ListBaselinesResponse* response) {
  return Lookup(&PlannerApi::ListBaselines, request, response);
}

grpc::Status PlannerGrpcService::GetBaseline(grpc::ServerContext*,
                                             const v1::GetBaselineRequest* request,
                                             v1::Baseline* response) {
  return Lookup(&PlannerApi::GetBaseline, request, response);
}

grpc::Status PlannerGrpcService::PlanMemory(grpc::ServerContext* context,
                                            const v1::PlanMemoryRequest* request,
                                            v1::MemoryPlan* response) {
  return Bounded(context, "PlanMemory", &PlannerApi::PlanMemory, request, response);
}

grpc::Status PlannerGrpcService::PredictLoad(grpc::ServerContext* context,
                                             const v1::PredictLoadRequest* request,
                                             v1::LoadCurve* response) {
  return Bounded(context, "PredictLoad", &PlannerApi::PredictLoad, request, response);
}

grpc::Status PlannerGrpcService::Plan(grpc::ServerContext* context, const v1::PlanRequest* request,
                                      v1::PlanResponse* response) {
  return Bounded(context, "Plan", &PlannerApi::Plan, request, response);
}

grpc::Status PlannerGrpcService::SearchConfigs(grpc::ServerContext* context,
                                               const v1::SearchConfigsRequest* request,
                                               v1::SearchConfigsResponse* response) {
  // The search bounds itself by the deadline (a truncated answer); the
  // call's budget ends it when the client goes away or the server drains.
  // It takes a limiter slot like every planning call and is refused when
  // the server is busy.
  grpc::Status size = CheckSize(*request);
  if (!size.ok()) return size;
  std::unique_ptr<model::Budget> budget =
      CallBudget(*context, drain_, limits_.max_work_units, limits_.budget_poll_stride);
  absl::StatusOr<ConcurrencyLimiter::Slot> slot = limiter_.Acquire(*budget, "SearchConfigs");
  if (!slot.ok()) return ToGrpcStatus(slot.status());
  // No client deadline is gRPC's infinite future, far beyond any search.
  const auto deadline = context->deadline();
  const absl::Time limit = absl::Now() + absl::Hours(24);
  const absl::Time until =
      deadline >= absl::ToChronoTime(limit) ? limit : absl::FromChrono(deadline);
  absl::StatusOr<v1::SearchConfigsResponse> result =
      planner_->SearchConfigs(*request, until, budget.get());
  if (!result.ok()) return ToGrpcStatus(result.status());
  *response = *std::move(result);
  return grpc::Status::OK;
}

grpc::Status PlannerGrpcService::Validate(grpc::ServerContext* context,
                                          const v1::ValidateRequest* request,
                                          v1::ValidateResponse* response) {
  return Bounded(context, "Validate", &PlannerApi::Validate, request, response);
}

}  // namespace capplan::service
