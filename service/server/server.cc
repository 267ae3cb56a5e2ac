#include "service/server/server.h"

#include <exception>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "base/status_macros.h"

namespace capplan::service {
namespace {

absl::Status CheckAddress(absl::string_view field, const std::string& address,
                          bool allow_empty) {
  if (address.empty() && allow_empty) return absl::OkStatus();
  size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ServerOptions.%s = \"%s\"; must be host:port with a port in [0, "
        "65535]",
        field, address));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateServerOptions(const ServerOptions& options) {
  CAPPLAN_RETURN_IF_ERROR(
      CheckAddress("listen_address", options.listen_address, false));
  CAPPLAN_RETURN_IF_ERROR(
      CheckAddress("metrics_address", options.metrics_address, true));
  if (options.data_dir.empty()) {
    return absl::InvalidArgumentError(
        "ServerOptions.data_dir is empty; must name the catalogue directory");
  }
  if (options.max_message_bytes <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ServerOptions.max_message_bytes = %d; must be > 0",
        options.max_message_bytes));
  }
  return absl::OkStatus();
}

PlannerServer::PlannerServer(const ServerOptions& options,
                             std::shared_ptr<const Catalog> catalog,
                             std::shared_ptr<prometheus::Registry> registry)
    : options_(options),
      registry_(std::move(registry)),
      metrics_(registry_),
      planner_(std::move(catalog)),
      service_(&planner_) {}

PlannerServer::~PlannerServer() {
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
  }
}

absl::StatusOr<std::unique_ptr<PlannerServer>> PlannerServer::Create(
    const ServerOptions& options) {
  CAPPLAN_RETURN_IF_ERROR(ValidateServerOptions(options));
  absl::StatusOr<std::shared_ptr<const Catalog>> catalog =
      Catalog::LoadFromDirectory(options.data_dir);
  if (!catalog.ok()) {
    return absl::Status(catalog.status().code(),
                        absl::StrCat("catalogue '", options.data_dir,
                                     "' is invalid:\n",
                                     catalog.status().message()));
  }
  std::unique_ptr<PlannerServer> server(new PlannerServer(
      options, *catalog, std::make_shared<prometheus::Registry>()));
  server->metrics_.SetCatalog(**catalog);
  server->metrics_.CatalogReload(true);

  if (!options.metrics_address.empty()) {
    try {
      server->exposer_ =
          std::make_unique<prometheus::Exposer>(options.metrics_address);
    } catch (const std::exception& e) {
      return absl::UnavailableError(absl::StrFormat(
          "cannot serve metrics on %s: %s (is the port taken?)",
          options.metrics_address, e.what()));
    }
    server->exposer_->RegisterCollectable(server->registry_);
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen_address,
                           grpc::InsecureServerCredentials(), &server->port_);
  builder.RegisterService(&server->service_);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  // A second server on a taken port must fail, not share it silently.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>>
      interceptors;
  interceptors.push_back(server->metrics_.NewInterceptorFactory());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    server->server_.reset();
    return absl::UnavailableError(absl::StrFormat(
        "cannot listen on %s (is the port taken, or the address not local?)",
        options.listen_address));
  }
  grpc::HealthCheckServiceInterface* health =
      server->server_->GetHealthCheckService();
  health->SetServingStatus("", true);
  health->SetServingStatus(v1::CapacityPlanner::service_full_name(), true);
  return server;
}

std::string PlannerServer::metrics_endpoint() const {
  if (exposer_ == nullptr) return "";
  std::vector<int> ports = exposer_->GetListeningPorts();
  std::string host = options_.metrics_address.substr(
      0, options_.metrics_address.rfind(':'));
  return absl::StrCat(host, ":", ports.empty() ? 0 : ports.front());
}

absl::Status PlannerServer::Reload() {
  absl::StatusOr<std::shared_ptr<const Catalog>> catalog =
      Catalog::LoadFromDirectory(options_.data_dir);
  metrics_.CatalogReload(catalog.ok());
  if (!catalog.ok()) return catalog.status();
  metrics_.SetCatalog(**catalog);
  planner_.SwapCatalog(*std::move(catalog));
  return absl::OkStatus();
}

void PlannerServer::Shutdown(absl::Duration drain) {
  if (server_ == nullptr) return;
  grpc::HealthCheckServiceInterface* health = server_->GetHealthCheckService();
  if (health != nullptr) health->Shutdown();
  server_->Shutdown(absl::ToChronoTime(absl::Now() + drain));
}

void PlannerServer::Wait() {
  if (server_ != nullptr) server_->Wait();
}

}  // namespace capplan::service
