// capplan-server: the gRPC planner on the catalogue in --data_dir.
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <memory>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/time/time.h"
#include "service/server/reloader.h"
#include "service/server/server.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:50051",
          "gRPC listen address host:port (port 0 picks a free port)");
ABSL_FLAG(std::string, metrics_listen, "127.0.0.1:9464",
          "Prometheus /metrics address host:port; empty disables it");
ABSL_FLAG(std::string, data_dir, CAPPLAN_DEFAULT_DATA_DIR,
          "catalogue directory (hardware/, models/, baselines/, engines/)");
ABSL_FLAG(int, max_message_bytes, 4 * 1024 * 1024, "largest request or response message, bytes");
ABSL_FLAG(absl::Duration, drain_timeout, absl::Seconds(10),
          "on SIGTERM, how long in-flight RPCs may take to finish");
ABSL_FLAG(std::string, write_token_file, "",
          "file whose first line is the bearer token for PutBaseline; empty refuses writes");
ABSL_FLAG(absl::Duration, reload_poll, absl::ZeroDuration(),
          "reload when the data directory changes, checked this often (e.g. 10s); 0 = on "
          "SIGHUP only");
ABSL_FLAG(std::string, tls_cert_file, "",
          "PEM certificate chain for TLS on the gRPC port (with --tls_key_file); empty = "
          "plaintext");
ABSL_FLAG(std::string, tls_key_file, "", "PEM private key of --tls_cert_file");
ABSL_FLAG(std::string, tls_client_ca_file, "",
          "PEM CA certificates; when set, clients must present a certificate signed by one "
          "(mutual TLS)");
ABSL_FLAG(bool, reflection, true,
          "serve gRPC server reflection (generic clients such as grpcurl need it)");
ABSL_FLAG(int, metrics_threads, 4, "worker threads of the /metrics endpoint");
ABSL_FLAG(absl::Duration, metrics_request_timeout, absl::Seconds(2),
          "how long /metrics waits for a request (or a write) before dropping the connection");

namespace {

using capplan::service::PlannerServer;
using capplan::service::Reloader;

capplan::service::ServerOptions OptionsFromFlags() {
  capplan::service::ServerOptions options;
  options.listen_address = absl::GetFlag(FLAGS_listen);
  options.metrics_address = absl::GetFlag(FLAGS_metrics_listen);
  options.data_dir = absl::GetFlag(FLAGS_data_dir);
  options.max_message_bytes = absl::GetFlag(FLAGS_max_message_bytes);
  options.write_token_file = absl::GetFlag(FLAGS_write_token_file);
  options.reload_poll = absl::GetFlag(FLAGS_reload_poll);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert_file);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key_file);
  options.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca_file);
  options.reflection = absl::GetFlag(FLAGS_reflection);
  options.metrics_threads = absl::GetFlag(FLAGS_metrics_threads);
  options.metrics_request_timeout = absl::GetFlag(FLAGS_metrics_request_timeout);
  return options;
}

void PrintStarted(const PlannerServer& server, const capplan::service::ServerOptions& options,
                  const char* argv0) {
  const capplan::service::Catalog& catalog = server.catalog();
  std::string host = options.listen_address.substr(0, options.listen_address.rfind(':'));
  std::string grpc_address = host + ":" + std::to_string(server.port());
  std::cout << "capplan-server: catalogue " << options.data_dir << " (" << catalog.hardware().size()
            << " hardware, " << catalog.models().size() << " models, " << catalog.baselines().size()
            << " baselines)\n"
            << "capplan-server: gRPC on " << grpc_address
            << (options.tls_cert_file.empty() ? "" : " (TLS)");
  if (!server.metrics_endpoint().empty()) {
    std::cout << ", metrics on http://" << server.metrics_endpoint() << "/metrics";
  }
  // The CLI is built beside the server.
  std::string cli = std::filesystem::path(argv0).parent_path().append("capplan").string();
  std::cout << "\ncapplan-server: try  " << cli << " baselines list --server " << grpc_address
            << "\n"
            << std::flush;
}

// Reloads run on their own thread: SIGHUP and the poll only ask for one, so
// the signal thread is always free to take SIGTERM.
std::unique_ptr<Reloader> StartReloader(PlannerServer* server, absl::Duration poll) {
  auto reload = [server] {
    absl::Status reloaded = server->Reload();
    if (reloaded.ok()) {
      std::cout << "capplan-server: catalogue reloaded\n" << std::flush;
    } else {
      std::cerr << "capplan-server: reload failed, keeping the previous catalogue:\n"
                << reloaded.message() << "\n";
    }
  };
  // Replicas sharing the data directory: pick up what another one wrote.
  auto changed = [server] {
    absl::StatusOr<bool> reloaded = server->ReloadIfChanged();
    if (!reloaded.ok()) {
      std::cerr << "capplan-server: the data directory changed but does not load, keeping the "
                   "previous catalogue:\n"
                << reloaded.status().message() << "\n";
    } else if (*reloaded) {
      std::cout << "capplan-server: catalogue reloaded (the data directory changed)\n"
                << std::flush;
    }
  };
  return std::make_unique<Reloader>(reload, changed, poll);
}

// What the signal thread acts on, set once the server runs.
std::atomic<PlannerServer*> g_server{nullptr};
std::atomic<Reloader*> g_reloader{nullptr};

// The one thread that takes SIGTERM, SIGINT and SIGHUP, from before the
// catalogue loads: SIGTERM during start-up exits at once, later it drains.
void HandleSignals(sigset_t signals) {
  for (;;) {
    int signal = 0;
    if (sigwait(&signals, &signal) != 0) continue;
    if (signal == SIGHUP) {
      if (Reloader* reloader = g_reloader.load()) reloader->Request();
      continue;
    }
    PlannerServer* server = g_server.load();
    if (server == nullptr) {
      std::cerr << "capplan-server: stopped during start-up\n";
      std::_Exit(0);
    }
    std::cout << "capplan-server: draining and stopping\n" << std::flush;
    server->Shutdown(absl::GetFlag(FLAGS_drain_timeout));
    return;
  }
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "capplan-server --listen 127.0.0.1:50051 --metrics_listen "
      "127.0.0.1:9464 --data_dir DIR [--tls_cert_file F --tls_key_file F "
      "[--tls_client_ca_file F]]");
  absl::ParseCommandLine(argc, argv);

  // Block the signals we handle before any thread starts; one thread waits.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  std::thread waiter(HandleSignals, signals);

  const capplan::service::ServerOptions options = OptionsFromFlags();
  auto server = PlannerServer::Create(options);
  if (!server.ok()) {
    std::cerr << "capplan-server: " << server.status().message() << "\n";
    std::_Exit(1);  // the signal thread waits in sigwait and cannot be joined
  }
  PrintStarted(**server, options, argv[0]);
  std::unique_ptr<Reloader> reloader = StartReloader(server->get(), options.reload_poll);
  g_reloader.store(reloader.get());
  g_server.store(server->get());

  (*server)->Wait();
  waiter.join();
  g_reloader.store(nullptr);
  if (!reloader->Stop(absl::Seconds(5))) {
    // A reload stuck in the file system must not keep the process alive; it
    // still uses the server, so leave without destroying anything.
    std::cerr << "capplan-server: a catalogue reload is still running; exiting without it\n";
    std::cout << std::flush;
    std::_Exit(0);
  }
  return 0;
}
