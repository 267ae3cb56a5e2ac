#ifndef CAPPLAN_SERVICE_SERVER_METRICS_H_
#define CAPPLAN_SERVICE_SERVER_METRICS_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "capplan/v1/planner.pb.h"
#include "grpcpp/support/server_interceptor.h"
#include "grpcpp/support/status_code_enum.h"
#include "prometheus/counter.h"
#include "prometheus/family.h"
#include "prometheus/gauge.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"
#include "service/catalog/catalog.h"

namespace capplan::service {

// The server's Prometheus metrics, on a registry the caller owns. Names follow
// the grpc-prometheus conventions that existing gRPC dashboards expect.
class Metrics {
 public:
  explicit Metrics(std::shared_ptr<prometheus::Registry> registry);

  // `full_method` is "/package.Service/Method"; services outside the known
  // set are labelled "other" so a client cannot grow the label space.
  void RpcStarted(absl::string_view full_method);
  void RpcHandled(absl::string_view full_method, grpc::StatusCode code, double seconds);

  void SetCatalog(const Catalog& catalog);
  // capplan_lint_findings{code}: the catalogue's lint findings by code
  // (every code present, 0 when none).
  void SetLintFindings(const std::vector<v1::LintFinding>& findings);
  // Counts a load or reload (capplan_catalog_reloads_total{result}) and sets
  // capplan_catalog_last_reload_success (1 or 0) and, on success,
  // capplan_catalog_last_reload_success_timestamp_seconds to `unix_seconds`
  // (Prometheus' own prometheus_config_last_reload_success* pair, so an alert
  // can say "the last reload failed" and "no reload succeeded for an hour").
  void CatalogReload(bool ok, double unix_seconds);

  // Per-RPC counters and latency through a gRPC server interceptor.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> NewInterceptorFactory();

  const std::shared_ptr<prometheus::Registry>& registry() const { return registry_; }

 private:
  std::shared_ptr<prometheus::Registry> registry_;
  prometheus::Family<prometheus::Counter>& started_;
  prometheus::Family<prometheus::Counter>& handled_;
  prometheus::Family<prometheus::Histogram>& handling_seconds_;
  prometheus::Family<prometheus::Gauge>& catalog_entries_;
  prometheus::Family<prometheus::Counter>& reloads_;
  prometheus::Gauge& last_reload_success_;
  prometheus::Gauge& last_reload_success_timestamp_;
  prometheus::Family<prometheus::Gauge>& build_info_;
  prometheus::Family<prometheus::Gauge>& lint_findings_;
};

// "OK", "INVALID_ARGUMENT", ... as grpc-prometheus labels them.
std::string StatusCodeName(grpc::StatusCode code);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_SERVER_METRICS_H_
