#ifndef CAPPLAN_SERVICE_SERVER_SERVER_H_
#define CAPPLAN_SERVICE_SERVER_SERVER_H_

#include <memory>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpcpp/server.h"
#include "prometheus/exposer.h"
#include "prometheus/registry.h"
#include "service/catalog/store.h"
#include "service/planner/planner.h"
#include "service/rpc/grpc_service.h"
#include "service/server/metrics.h"

namespace capplan::service {

struct ServerOptions {
  // host:port for gRPC; port 0 picks a free one (see PlannerServer::port()).
  std::string listen_address = "127.0.0.1:50051";
  // host:port for /metrics; empty = no metrics endpoint (the registry still
  // counts, for in-process tests).
  std::string metrics_address = "127.0.0.1:9464";
  std::string data_dir;
  // Largest request or response message, bytes.
  int max_message_bytes = 4 * 1024 * 1024;
  // A file holding the bearer token for writes (PutBaseline); empty = writes
  // refused. The token is the file's first line, at least 16 characters.
  std::string write_token_file;
  // Reload when the data directory changes (another replica wrote to it),
  // checked this often; zero = only on SIGHUP.
  absl::Duration reload_poll = absl::ZeroDuration();

  // TLS on the gRPC port: PEM files of the server's certificate chain and
  // private key, both or neither (neither: plaintext). With tls_client_ca_file
  // as well, every client must present a certificate that CA signed (mutual
  // TLS); a client without one is refused in the handshake.
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;

  // gRPC server reflection (grpc.reflection.v1alpha), so generic clients such
  // as grpcurl work without our .proto files. On by default: it describes the
  // API (which ships in proto/ anyway) and no catalogue data; switch it off to
  // show a caller nothing beyond the methods it already knows.
  bool reflection = true;

  // The /metrics endpoint's worker threads and how long one waits for a
  // request or a write before dropping the connection: a client that
  // connects and sends nothing (or half a request) holds a worker at most
  // this long, so a few half-open connections cannot block scrapes for the
  // web server's default 30 s.
  int metrics_threads = 4;
  absl::Duration metrics_request_timeout = absl::Seconds(2);
};

// Checks the options on their own (addresses have a port, sizes positive).
absl::Status ValidateServerOptions(const ServerOptions& options);

// The gRPC server with health, reflection and metrics, serving one catalogue.
class PlannerServer {
 public:
  // Loads and validates the catalogue, then binds. Fails (and binds nothing)
  // on an invalid catalogue or a taken port.
  static absl::StatusOr<std::unique_ptr<PlannerServer>> Create(const ServerOptions& options);
  ~PlannerServer();

  int port() const { return port_; }
  // "host:port" the metrics endpoint listens on, or empty.
  std::string metrics_endpoint() const;
  const Catalog& catalog() const { return *planner_.catalog(); }
  Metrics& metrics() { return metrics_; }

  // Reloads the catalogue from data_dir; on failure the previous catalogue
  // keeps serving and the error is returned.
  absl::Status Reload();
  // Reloads when the store's change token moved since the last load; false
  // when nothing changed.
  absl::StatusOr<bool> ReloadIfChanged();

  // Stops accepting RPCs, lets in-flight ones finish until `drain`, then
  // cancels the rest.
  void Shutdown(absl::Duration drain);
  void Wait();

 private:
  PlannerServer(const ServerOptions& options, std::shared_ptr<DirectoryStore> store,
                std::shared_ptr<const Catalog> catalog, std::optional<std::string> write_token,
                std::shared_ptr<prometheus::Registry> registry);
  void Loaded(const Catalog& catalog);

  ServerOptions options_;
  std::shared_ptr<DirectoryStore> store_;
  absl::Mutex reload_mu_;
  std::string change_token_ ABSL_GUARDED_BY(reload_mu_);
  std::shared_ptr<prometheus::Registry> registry_;
  Metrics metrics_;
  Planner planner_;
  PlannerGrpcService service_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_SERVER_SERVER_H_
