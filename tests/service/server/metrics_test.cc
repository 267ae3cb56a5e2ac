#include "service/server/metrics.h"

#include <map>
#include <string>

#include "gtest/gtest.h"

namespace capplan::service {
namespace {

double Value(const prometheus::Registry& registry, const std::string& name,
             const std::map<std::string, std::string>& labels) {
  double total = 0;
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      bool match = true;
      for (const auto& [key, value] : labels) {
        bool has = false;
        for (const auto& label : metric.label) has |= label.name == key && label.value == value;
        match &= has;
      }
      if (match) {
        total += metric.counter.value + metric.gauge.value +
                 static_cast<double>(metric.histogram.sample_count);
      }
    }
  }
  return total;
}

TEST(Metrics, CountsStartedHandledAndLatencyByMethodAndCode) {
  auto registry = std::make_shared<prometheus::Registry>();
  Metrics metrics(registry);
  metrics.RpcStarted("/capplan.v1.CapacityPlanner/GetModel");
  metrics.RpcHandled("/capplan.v1.CapacityPlanner/GetModel", grpc::StatusCode::NOT_FOUND, 1e-4);
  metrics.RpcHandled("/capplan.v1.CapacityPlanner/GetModel", grpc::StatusCode::OK, 2e-4);
  EXPECT_EQ(Value(*registry, "grpc_server_started_total", {{"grpc_method", "GetModel"}}), 1);
  EXPECT_EQ(Value(*registry, "grpc_server_handled_total",
                  {{"grpc_method", "GetModel"}, {"grpc_code", "NotFound"}}),
            1);
  EXPECT_EQ(Value(*registry, "grpc_server_handling_seconds", {{"grpc_method", "GetModel"}}), 2);
  EXPECT_EQ(Value(*registry, "capplan_build_info", {}), 1);
}

TEST(Metrics, UnknownServicesShareOneLabelSoClientsCannotGrowTheSeries) {
  auto registry = std::make_shared<prometheus::Registry>();
  Metrics metrics(registry);
  for (int i = 0; i < 100; ++i) {
    metrics.RpcHandled("/evil.Service/Method" + std::to_string(i), grpc::StatusCode::UNIMPLEMENTED,
                       0);
  }
  EXPECT_EQ(Value(*registry, "grpc_server_handled_total",
                  {{"grpc_service", "other"}, {"grpc_method", "other"}}),
            100);
  size_t series = 0;
  for (const auto& family : registry->Collect()) {
    if (family.name == "grpc_server_handled_total") series = family.metric.size();
  }
  EXPECT_EQ(series, 1u);
}

TEST(StatusCodeName, MatchesGrpcPrometheusLabels) {
  EXPECT_EQ(StatusCodeName(grpc::StatusCode::OK), "OK");
  EXPECT_EQ(StatusCodeName(grpc::StatusCode::INVALID_ARGUMENT), "InvalidArgument");
  EXPECT_EQ(StatusCodeName(grpc::StatusCode::FAILED_PRECONDITION), "FailedPrecondition");
}

}  // namespace
}  // namespace capplan::service
