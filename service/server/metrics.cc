#include "service/server/metrics.h"

#include <chrono>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "model/lint.h"

namespace capplan::service {
namespace {

struct MethodLabels {
  std::string service;
  std::string method;
};

MethodLabels SplitMethod(absl::string_view full_method) {
  static constexpr absl::string_view kKnown[] = {"capplan.v1.CapacityPlanner",
                                                 "grpc.health.v1.Health",
                                                 "grpc.reflection.v1alpha.ServerReflection"};
  std::vector<absl::string_view> parts = absl::StrSplit(absl::StripPrefix(full_method, "/"), '/');
  if (parts.size() == 2) {
    for (absl::string_view known : kKnown) {
      if (parts[0] == known && parts[1].size() <= 64) {
        return {std::string(parts[0]), std::string(parts[1])};
      }
    }
  }
  return {"other", "other"};
}

class MetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(Metrics* metrics, std::string method)
      : metrics_(metrics), method_(std::move(method)), start_(std::chrono::steady_clock::now()) {
    metrics_->RpcStarted(method_);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_STATUS)) {
      grpc::Status status = methods->GetSendStatus();
      double seconds =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
      metrics_->RpcHandled(method_, status.error_code(), seconds);
    }
    methods->Proceed();
  }

 private:
  Metrics* metrics_;
  std::string method_;
  std::chrono::steady_clock::time_point start_;
};

class MetricsInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(Metrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new MetricsInterceptor(metrics_, info->method());
  }

 private:
  Metrics* metrics_;
};

}  // namespace

std::string StatusCodeName(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "Canceled";
    case grpc::StatusCode::UNKNOWN:
      return "Unknown";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "InvalidArgument";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DeadlineExceeded";
    case grpc::StatusCode::NOT_FOUND:
      return "NotFound";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "AlreadyExists";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PermissionDenied";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "ResourceExhausted";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FailedPrecondition";
    case grpc::StatusCode::ABORTED:
      return "Aborted";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OutOfRange";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "Unimplemented";
    case grpc::StatusCode::INTERNAL:
      return "Internal";
    case grpc::StatusCode::UNAVAILABLE:
      return "Unavailable";
    case grpc::StatusCode::DATA_LOSS:
      return "DataLoss";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "Unauthenticated";
    default:
      return "Unknown";
  }
}

Metrics::Metrics(std::shared_ptr<prometheus::Registry> registry)
    : registry_(std::move(registry)),
      started_(prometheus::BuildCounter()
                   .Name("grpc_server_started_total")
                   .Help("RPCs started on the server.")
                   .Register(*registry_)),
      handled_(prometheus::BuildCounter()
                   .Name("grpc_server_handled_total")
                   .Help("RPCs completed on the server, by status code.")
                   .Register(*registry_)),
      handling_seconds_(prometheus::BuildHistogram()
                            .Name("grpc_server_handling_seconds")
                            .Help("Time from an RPC's start to its status.")
                            .Register(*registry_)),
      catalog_entries_(prometheus::BuildGauge()
                           .Name("capplan_catalog_entries")
                           .Help("Entities in the loaded catalogue, by kind.")
                           .Register(*registry_)),
      reloads_(prometheus::BuildCounter()
                   .Name("capplan_catalog_reloads_total")
                   .Help("Catalogue loads and reloads, by result.")
                   .Register(*registry_)),
      last_reload_success_(prometheus::BuildGauge()
                               .Name("capplan_catalog_last_reload_success")
                               .Help("1 when the last catalogue load or reload succeeded, else 0.")
                               .Register(*registry_)
                               .Add({})),
      last_reload_success_timestamp_(
          prometheus::BuildGauge()
              .Name("capplan_catalog_last_reload_success_timestamp_seconds")
              .Help("Unix time of the last successful catalogue load or reload.")
              .Register(*registry_)
              .Add({})),
      build_info_(prometheus::BuildGauge()
                      .Name("capplan_build_info")
                      .Help("Always 1; the labels say which build runs.")
                      .Register(*registry_)),
      lint_findings_(prometheus::BuildGauge()
                         .Name("capplan_lint_findings")
                         .Help("Lint findings of the loaded catalogue's baselines, by code.")
                         .Register(*registry_)) {
  build_info_.Add({{"version", CAPPLAN_VERSION}}).Set(1);
}

void Metrics::RpcStarted(absl::string_view full_method) {
  MethodLabels labels = SplitMethod(full_method);
  started_
      .Add({{"grpc_type", "unary"},
            {"grpc_service", labels.service},
            {"grpc_method", labels.method}})
      .Increment();
}

void Metrics::RpcHandled(absl::string_view full_method, grpc::StatusCode code, double seconds) {
  MethodLabels labels = SplitMethod(full_method);
  handled_
      .Add({{"grpc_type", "unary"},
            {"grpc_service", labels.service},
            {"grpc_method", labels.method},
            {"grpc_code", StatusCodeName(code)}})
      .Increment();
  // Buckets from 10 µs to 10 s: the planner answers in microseconds.
  static const prometheus::Histogram::BucketBoundaries kBuckets = {
      1e-5, 3e-5, 1e-4, 3e-4, 1e-3, 3e-3, 1e-2, 3e-2, 0.1, 0.3, 1, 3, 10};
  handling_seconds_
      .Add({{"grpc_type", "unary"},
            {"grpc_service", labels.service},
            {"grpc_method", labels.method}},
           kBuckets)
      .Observe(seconds);
}

void Metrics::SetCatalog(const Catalog& catalog) {
  catalog_entries_.Add({{"kind", "hardware"}}).Set(static_cast<double>(catalog.hardware().size()));
  catalog_entries_.Add({{"kind", "model"}}).Set(static_cast<double>(catalog.models().size()));
  catalog_entries_.Add({{"kind", "baseline"}}).Set(static_cast<double>(catalog.baselines().size()));
  catalog_entries_.Add({{"kind", "engine_preset"}})
      .Set(static_cast<double>(catalog.engine_presets().size()));
  catalog_entries_.Add({{"kind", "prior"}}).Set(static_cast<double>(catalog.priors().size()));
}

void Metrics::SetLintFindings(const std::vector<v1::LintFinding>& findings) {
  absl::flat_hash_map<std::string, int> counts;
  for (model::LintCode code : model::kLintCodes) counts[model::LintCodeName(code)] = 0;
  for (const v1::LintFinding& f : findings) {
    auto it = counts.find(f.code());
    if (it != counts.end()) ++it->second;  // only the known codes: a bounded label set
  }
  for (const auto& [code, n] : counts) {
    lint_findings_.Add({{"code", code}}).Set(static_cast<double>(n));
  }
}

void Metrics::CatalogReload(bool ok, double unix_seconds) {
  reloads_.Add({{"result", ok ? "success" : "failure"}}).Increment();
  last_reload_success_.Set(ok ? 1 : 0);
  if (ok) last_reload_success_timestamp_.Set(unix_seconds);
}

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
Metrics::NewInterceptorFactory() {
  return std::make_unique<MetricsInterceptorFactory>(this);
}

}  // namespace capplan::service
