#include "service/server/metrics.h"

#include <chrono>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "grpcpp/server_context.h"
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

using grpc::experimental::InterceptionHookPoints;

// How far before a call's deadline (as its context states it) gRPC may cancel
// it: a cancellation this close to the deadline is the deadline's.
constexpr std::chrono::milliseconds kDeadlineSlack(100);

// Counts every call with the code its client sees: a request that did not
// decode is INVALID_ARGUMENT (gRPC's own answer, INTERNAL, is replaced); an
// OK answer after the deadline or the client's cancellation is what the
// client got, DEADLINE_EXCEEDED or CANCELLED; a request above the size limit
// is refused by the service (RESOURCE_EXHAUSTED, ServiceLimits) and counted
// like any other. A call that ends without a status of its own is counted
// when the interceptor goes, with RESOURCE_EXHAUSTED when its message never
// arrived and CANCELLED otherwise. (A request above twice the limit is refused
// by gRPC's transport before any interceptor exists: not counted.)
class MetricsInterceptor : public grpc::experimental::Interceptor {
 public:
  MetricsInterceptor(Metrics* metrics, grpc::experimental::ServerRpcInfo* info)
      : metrics_(metrics),
        method_(info->method()),
        context_(info->server_context()),
        start_(std::chrono::steady_clock::now()) {
    metrics_->RpcStarted(method_);
  }

  ~MetricsInterceptor() override {
    if (counted_) return;
    // The context is being destroyed: only its deadline is still safe to read.
    Count(!received_                            ? grpc::StatusCode::RESOURCE_EXHAUSTED
          : context_ != nullptr && AtDeadline() ? grpc::StatusCode::DEADLINE_EXCEEDED
                                                : grpc::StatusCode::CANCELLED);
  }

  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::POST_RECV_MESSAGE)) {
      received_ = true;
      undecodable_ = methods->GetRecvMessage() == nullptr;
    }
    if (methods->QueryInterceptionHookPoint(InterceptionHookPoints::PRE_SEND_STATUS)) {
      grpc::Status status = methods->GetSendStatus();
      if (undecodable_ && status.error_code() == grpc::StatusCode::INTERNAL) {
        status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                              absl::StrCat(method_,
                                           ": the request bytes do not decode as the method's "
                                           "request message (a protocol buffer)"));
        methods->ModifySendStatus(status);
      }
      Count(ClientCode(status.error_code()));
    }
    methods->Proceed();
  }

 private:
  // An OK or CANCELLED status at the deadline is the client's
  // DEADLINE_EXCEEDED (gRPC cancels a call at its deadline, on a clock that
  // may run up to kDeadlineSlack ahead of the context's, so the handler may
  // see the cancellation first); an OK after the client went is CANCELLED.
  grpc::StatusCode ClientCode(grpc::StatusCode code) const {
    if (context_ == nullptr) return code;
    if (code != grpc::StatusCode::OK && code != grpc::StatusCode::CANCELLED) return code;
    if (AtDeadline()) return grpc::StatusCode::DEADLINE_EXCEEDED;
    if (context_->IsCancelled()) return grpc::StatusCode::CANCELLED;
    return code;
  }

  bool AtDeadline() const {
    return context_->deadline() <= std::chrono::system_clock::now() + kDeadlineSlack;
  }

  void Count(grpc::StatusCode code) {
    counted_ = true;
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    metrics_->RpcHandled(method_, code, seconds);
  }

  Metrics* metrics_;
  std::string method_;
  grpc::ServerContextBase* context_;
  std::chrono::steady_clock::time_point start_;
  bool received_ = false;
  bool undecodable_ = false;
  bool counted_ = false;
};

class MetricsInterceptorFactory : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit MetricsInterceptorFactory(Metrics* metrics) : metrics_(metrics) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    return new MetricsInterceptor(metrics_, info);
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
