#include "service/server/server.h"

#include <exception>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "base/status_macros.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/impl/server_builder_option.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "service/catalog/file_util.h"
#include "service/planner/lint.h"

namespace capplan::service {
namespace {

absl::Status CheckAddress(absl::string_view field, const std::string& address, bool allow_empty) {
  if (address.empty() && allow_empty) return absl::OkStatus();
  size_t colon = address.rfind(':');
  int port = 0;
  if (colon == std::string::npos || colon == 0 ||
      !absl::SimpleAtoi(address.substr(colon + 1), &port) || port < 0 || port > 65535) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ServerOptions.%s = \"%s\"; must be host:port with a port in [0, "
                        "65535]",
                        field, address));
  }
  return absl::OkStatus();
}

// The write token: the file's first line, trimmed.
absl::StatusOr<std::optional<std::string>> ReadWriteToken(const std::string& file) {
  if (file.empty()) return std::optional<std::string>();
  absl::StatusOr<std::string> text = ReadRegularFile(file, 4096);
  if (!text.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ServerOptions.write_token_file = \"%s\"; cannot read it (%s)", file,
                        text.status().message()));
  }
  const std::string token(absl::StripAsciiWhitespace(text->substr(0, text->find('\n'))));
  if (token.size() < 16) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ServerOptions.write_token_file = \"%s\"; its first line must be a token of at least "
        "16 characters",
        file));
  }
  return std::optional<std::string>(token);
}

constexpr size_t kMaxPemFileBytes = 1 << 20;

// A PEM file's text; `marker` is what a file of the right kind holds.
absl::StatusOr<std::string> ReadPem(absl::string_view field, const std::string& file,
                                    absl::string_view marker) {
  absl::StatusOr<std::string> text = ReadRegularFile(file, kMaxPemFileBytes);
  if (!text.ok()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ServerOptions.%s = \"%s\"; cannot read it (%s)", field, file, text.status().message()));
  }
  if (text->find(std::string(marker)) == std::string::npos) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ServerOptions.%s = \"%s\"; must be a PEM file holding \"%s\"", field, file, marker));
  }
  return text;
}

// Plaintext, TLS, or mutual TLS as the options say.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> ServerCredentialsFor(
    const ServerOptions& options) {
  if (options.tls_cert_file.empty()) return grpc::InsecureServerCredentials();
  CAPPLAN_ASSIGN_OR_RETURN(
      std::string cert, ReadPem("tls_cert_file", options.tls_cert_file, "-----BEGIN CERTIFICATE"));
  CAPPLAN_ASSIGN_OR_RETURN(std::string key,
                           ReadPem("tls_key_file", options.tls_key_file, "PRIVATE KEY-----"));
  const bool mutual = !options.tls_client_ca_file.empty();
  grpc::SslServerCredentialsOptions ssl(
      mutual ? GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY
             : GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  if (mutual) {
    CAPPLAN_ASSIGN_OR_RETURN(
        ssl.pem_root_certs,
        ReadPem("tls_client_ca_file", options.tls_client_ca_file, "-----BEGIN CERTIFICATE"));
  }
  ssl.pem_key_cert_pairs.push_back({std::move(key), std::move(cert)});
  return grpc::SslServerCredentials(ssl);
}

// Adds server reflection to one builder, or takes it out: the plugin is
// chosen per server rather than through gRPC's process-wide registration,
// which would give every later server reflection whatever its options.
class ReflectionOption : public grpc::ServerBuilderOption {
 public:
  explicit ReflectionOption(bool enabled) : enabled_(enabled) {}
  void UpdateArguments(grpc::ChannelArguments*) override {}
  void UpdatePlugins(std::vector<std::unique_ptr<grpc::ServerBuilderPlugin>>* plugins) override {
    grpc::reflection::ProtoServerReflectionPlugin probe;
    const std::string name = probe.name();
    std::erase_if(*plugins, [&](const auto& plugin) { return plugin->name() == name; });
    if (enabled_)
      plugins->push_back(std::make_unique<grpc::reflection::ProtoServerReflectionPlugin>());
  }

 private:
  bool enabled_;
};

// The web server's options for /metrics (civetweb's names).
std::vector<std::string> ExposerOptions(const ServerOptions& options) {
  return {"listening_ports",
          options.metrics_address,
          "num_threads",
          absl::StrCat(options.metrics_threads),
          "request_timeout_ms",
          absl::StrCat(absl::ToInt64Milliseconds(options.metrics_request_timeout)),
          "enable_keep_alive",
          "no"};
}

absl::Status CheckTls(const ServerOptions& options) {
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("ServerOptions.%s is empty; tls_cert_file and tls_key_file go together",
                        options.tls_cert_file.empty() ? "tls_cert_file" : "tls_key_file"));
  }
  if (!options.tls_client_ca_file.empty() && options.tls_cert_file.empty()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ServerOptions.tls_client_ca_file = \"%s\"; mutual TLS needs tls_cert_file and "
        "tls_key_file as well",
        options.tls_client_ca_file));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateServerOptions(const ServerOptions& options) {
  CAPPLAN_RETURN_IF_ERROR(CheckAddress("listen_address", options.listen_address, false));
  CAPPLAN_RETURN_IF_ERROR(CheckAddress("metrics_address", options.metrics_address, true));
  if (options.data_dir.empty()) {
    return absl::InvalidArgumentError(
        "ServerOptions.data_dir is empty; must name the catalogue directory");
  }
  if (options.reload_poll < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat("ServerOptions.reload_poll = ", absl::FormatDuration(options.reload_poll),
                     "; must be >= 0"));
  }
  if (options.max_message_bytes <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ServerOptions.max_message_bytes = %d; must be > 0", options.max_message_bytes));
  }
  if (options.metrics_threads < 1 || options.metrics_threads > 64) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "ServerOptions.metrics_threads = %d; must be in [1, 64]", options.metrics_threads));
  }
  if (options.metrics_request_timeout < absl::Milliseconds(100) ||
      options.metrics_request_timeout > absl::Seconds(60)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "ServerOptions.metrics_request_timeout = ",
        absl::FormatDuration(options.metrics_request_timeout), "; must be in [100ms, 60s]"));
  }
  return CheckTls(options);
}

PlannerServer::PlannerServer(const ServerOptions& options, std::shared_ptr<DirectoryStore> store,
                             std::shared_ptr<const Catalog> catalog,
                             std::optional<std::string> write_token,
                             std::shared_ptr<prometheus::Registry> registry)
    : options_(options),
      store_(store),
      registry_(std::move(registry)),
      metrics_(registry_),
      planner_(std::move(catalog), std::move(store)),
      service_(&planner_, std::move(write_token)) {}

void PlannerServer::Loaded(const Catalog& catalog) {
  metrics_.SetCatalog(catalog);
  absl::StatusOr<v1::LintResponse> lint = service::Lint(catalog, v1::LintRequest());
  if (lint.ok()) {
    metrics_.SetLintFindings({lint->findings().begin(), lint->findings().end()});
  }
}

PlannerServer::~PlannerServer() {
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
  }
}

absl::StatusOr<std::unique_ptr<PlannerServer>> PlannerServer::Create(const ServerOptions& options) {
  CAPPLAN_RETURN_IF_ERROR(ValidateServerOptions(options));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<std::string> token,
                           ReadWriteToken(options.write_token_file));
  // Opening the store removes what interrupted writes left behind.
  CAPPLAN_ASSIGN_OR_RETURN(std::shared_ptr<DirectoryStore> store,
                           DirectoryStore::Open(options.data_dir));
  CAPPLAN_ASSIGN_OR_RETURN(std::string change_token, store->ChangeToken());
  absl::StatusOr<std::shared_ptr<const Catalog>> catalog = store->Load();
  if (!catalog.ok()) {
    return absl::Status(catalog.status().code(),
                        absl::StrCat("catalogue '", options.data_dir, "' is invalid:\n",
                                     catalog.status().message()));
  }
  std::unique_ptr<PlannerServer> server(new PlannerServer(
      options, store, *catalog, std::move(token), std::make_shared<prometheus::Registry>()));
  {
    absl::MutexLock lock(&server->reload_mu_);
    server->change_token_ = change_token;
  }
  server->Loaded(**catalog);
  server->metrics_.CatalogReload(true, absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  CAPPLAN_ASSIGN_OR_RETURN(std::shared_ptr<grpc::ServerCredentials> credentials,
                           ServerCredentialsFor(options));

  if (!options.metrics_address.empty()) {
    try {
      server->exposer_ = std::make_unique<prometheus::Exposer>(ExposerOptions(options));
    } catch (const std::exception& e) {
      return absl::UnavailableError(
          absl::StrFormat("cannot serve metrics on %s: %s (is the port taken?)",
                          options.metrics_address, e.what()));
    }
    server->exposer_->RegisterCollectable(server->registry_);
  }

  grpc::EnableDefaultHealthCheckService(true);
  grpc::ServerBuilder builder;
  builder.SetOption(std::make_unique<ReflectionOption>(options.reflection));
  builder.AddListeningPort(options.listen_address, credentials, &server->port_);
  builder.RegisterService(&server->service_);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  // A second server on a taken port must fail, not share it silently.
  builder.AddChannelArgument(GRPC_ARG_ALLOW_REUSEPORT, 0);
  std::vector<std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>> interceptors;
  interceptors.push_back(server->metrics_.NewInterceptorFactory());
  builder.experimental().SetInterceptorCreators(std::move(interceptors));
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    server->server_.reset();
    return absl::UnavailableError(absl::StrFormat(
        "cannot listen on %s (is the port taken, or the address not local?%s)",
        options.listen_address,
        options.tls_cert_file.empty() ? "" : " or do the TLS certificate and key not match?"));
  }
  grpc::HealthCheckServiceInterface* health = server->server_->GetHealthCheckService();
  health->SetServingStatus("", true);
  health->SetServingStatus(v1::CapacityPlanner::service_full_name(), true);
  return server;
}

std::string PlannerServer::metrics_endpoint() const {
  if (exposer_ == nullptr) return "";
  std::vector<int> ports = exposer_->GetListeningPorts();
  std::string host = options_.metrics_address.substr(0, options_.metrics_address.rfind(':'));
  return absl::StrCat(host, ":", ports.empty() ? 0 : ports.front());
}

absl::Status PlannerServer::Reload() {
  absl::MutexLock lock(&reload_mu_);
  absl::StatusOr<std::string> token = store_->ChangeToken();
  absl::StatusOr<std::shared_ptr<const Catalog>> catalog = store_->Load();
  metrics_.CatalogReload(catalog.ok(), absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch()));
  if (!catalog.ok()) return catalog.status();
  if (token.ok()) change_token_ = *token;
  Loaded(**catalog);
  planner_.SwapCatalog(*std::move(catalog));
  return absl::OkStatus();
}

absl::StatusOr<bool> PlannerServer::ReloadIfChanged() {
  CAPPLAN_ASSIGN_OR_RETURN(std::string token, store_->ChangeToken());
  {
    absl::MutexLock lock(&reload_mu_);
    if (token == change_token_) return false;
  }
  absl::Status reloaded = Reload();
  if (!reloaded.ok()) {
    // Not retried until the directory changes again.
    absl::MutexLock lock(&reload_mu_);
    change_token_ = token;
    return reloaded;
  }
  return true;
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
