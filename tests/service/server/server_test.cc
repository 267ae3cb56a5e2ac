#include "service/server/server.h"

#include <string>

#include "capplan/v1/planner.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "tests/test_common/loopback_server.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::TempDir;
using ::capplan::testing::WriteMiniCatalogue;
using ::testing::HasSubstr;

ServerOptions TestOptions(const TempDir& dir) {
  return capplan::testing::LoopbackServerOptions(dir.path().string());
}

std::unique_ptr<v1::CapacityPlanner::Stub> StubFor(const PlannerServer& server) {
  return v1::CapacityPlanner::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(server.port()),
      grpc::InsecureChannelCredentials()));
}

double CounterValue(const prometheus::Registry& registry, const std::string& name,
                    const std::map<std::string, std::string>& labels) {
  double total = 0;
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      bool match = true;
      for (const auto& [key, value] : labels) {
        bool has = false;
        for (const prometheus::ClientMetric::Label& label : metric.label) {
          has |= label.name == key && label.value == value;
        }
        match &= has;
      }
      if (match) total += metric.counter.value + metric.gauge.value;
    }
  }
  return total;
}

TEST(ServerOptions, DefaultsAreValidOnceDataDirIsSet) {
  ServerOptions options;
  options.data_dir = "/some/dir";
  EXPECT_TRUE(ValidateServerOptions(options).ok());
}

TEST(ServerOptions, AddressWithoutPortIsInvalid) {
  ServerOptions options;
  options.data_dir = "/x";
  options.listen_address = "localhost";
  absl::Status status = ValidateServerOptions(options);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("ServerOptions.listen_address = \"localhost\""));
}

TEST(PlannerServer, AnswersCatalogueRpcsAndCountsThem) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  auto server = PlannerServer::Create(TestOptions(dir));
  ASSERT_TRUE(server.ok()) << server.status();
  auto stub = StubFor(**server);

  grpc::ClientContext list_context;
  v1::ListBaselinesResponse baselines;
  ASSERT_TRUE(stub->ListBaselines(&list_context, {}, &baselines).ok());
  ASSERT_EQ(baselines.baselines_size(), 1);
  EXPECT_EQ(baselines.baselines(0).id(), "test-baseline");

  grpc::ClientContext get_context;
  v1::GetHardwareRequest missing;
  missing.set_id("no-such-gpu");
  v1::Hardware hardware;
  grpc::Status status = stub->GetHardware(&get_context, missing, &hardware);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("no-such-gpu"));

  grpc::ClientContext empty_context;
  v1::ModelInfo info;
  status = stub->GetModel(&empty_context, {}, &info);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("GetModelRequest.id is empty"));

  const prometheus::Registry& registry = *(*server)->metrics().registry();
  EXPECT_EQ(CounterValue(registry, "grpc_server_handled_total",
                         {{"grpc_method", "ListBaselines"}, {"grpc_code", "OK"}}),
            1);
  EXPECT_EQ(CounterValue(registry, "grpc_server_handled_total",
                         {{"grpc_method", "GetHardware"}, {"grpc_code", "NotFound"}}),
            1);
  EXPECT_EQ(CounterValue(registry, "capplan_catalog_entries", {{"kind", "baseline"}}), 1);
}

TEST(PlannerServer, HealthIsServingAfterLoad) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  auto server = PlannerServer::Create(TestOptions(dir));
  ASSERT_TRUE(server.ok()) << server.status();
  auto health = grpc::health::v1::Health::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string((*server)->port()),
      grpc::InsecureChannelCredentials()));
  for (const std::string& service : {std::string(""), std::string("capplan.v1.CapacityPlanner")}) {
    grpc::ClientContext context;
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    ASSERT_TRUE(health->Check(&context, request, &response).ok());
    EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::SERVING);
  }
}

TEST(PlannerServer, RefusesInvalidCatalogueWithLocation) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  dir.Write("hardware/test-gpu-24gb.txtpb",
            "# proto-file: capplan/v1/catalog.proto\n"
            "# proto-message: Hardware\nid: \"test-gpu-24gb\"\nmemory_bytes: -1\n");
  auto server = PlannerServer::Create(TestOptions(dir));
  ASSERT_FALSE(server.ok());
  EXPECT_THAT(std::string(server.status().message()),
              HasSubstr("hardware/test-gpu-24gb.txtpb:4:15:"));
}

TEST(PlannerServer, TakenPortIsAnError) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  auto first = PlannerServer::Create(TestOptions(dir));
  ASSERT_TRUE(first.ok()) << first.status();
  ServerOptions options = TestOptions(dir);
  options.listen_address = "127.0.0.1:" + std::to_string((*first)->port());
  auto second = PlannerServer::Create(options);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kUnavailable);
}

TEST(PlannerServer, FailedReloadKeepsServingThePreviousCatalogue) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  auto server = PlannerServer::Create(TestOptions(dir));
  ASSERT_TRUE(server.ok()) << server.status();
  dir.Write("models/broken.txtpb", "# proto-message: Model\nid: {\n");
  absl::Status reload = (*server)->Reload();
  EXPECT_EQ(reload.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(reload.message()), HasSubstr("models/broken.txtpb:2:"));

  auto stub = StubFor(**server);
  grpc::ClientContext context;
  v1::GetModelRequest request;
  request.set_id("test-model");
  v1::ModelInfo info;
  EXPECT_TRUE(stub->GetModel(&context, request, &info).ok());
  EXPECT_EQ(CounterValue(*(*server)->metrics().registry(),
                         "capplan_catalog_reloads_total", {{"result", "failure"}}),
            1);
}

TEST(PlannerServer, ShutdownDrainsAndStops) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  auto server = PlannerServer::Create(TestOptions(dir));
  ASSERT_TRUE(server.ok()) << server.status();
  (*server)->Shutdown(absl::Seconds(1));
  (*server)->Wait();
  auto stub = StubFor(**server);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
  v1::ListHardwareResponse response;
  EXPECT_FALSE(stub->ListHardware(&context, {}, &response).ok());
}

}  // namespace
}  // namespace capplan::service
