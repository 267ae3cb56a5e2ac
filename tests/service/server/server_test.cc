#include "service/server/server.h"

#include <sys/stat.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <future>
#include <iostream>
#include <string>

#include "capplan/v1/planner.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "service/rpc/grpc_status.h"
#include "tests/test_common/loopback_server.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::IsOk;
using ::capplan::testing::StatusIs;
using ::capplan::testing::TempDir;
using ::capplan::testing::WriteMiniCatalogue;
using ::testing::AllOf;
using ::testing::HasSubstr;

ServerOptions TestOptions(const TempDir& dir) {
  return capplan::testing::LoopbackServerOptions(dir.path().string());
}

std::unique_ptr<v1::CapacityPlanner::Stub> StubFor(const PlannerServer& server) {
  return v1::CapacityPlanner::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(server.port()), grpc::InsecureChannelCredentials()));
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
  EXPECT_THAT(ValidateServerOptions(options), IsOk());
}

TEST(ServerOptions, AddressWithoutPortIsInvalid) {
  ServerOptions options;
  options.data_dir = "/x";
  options.listen_address = "localhost";
  EXPECT_THAT(ValidateServerOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ServerOptions.listen_address = \"localhost\"; must be "
                                 "host:port")));
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
  EXPECT_THAT(FromGrpcStatus(status),
              StatusIs(absl::StatusCode::kNotFound,
                       HasSubstr("hardware 'no-such-gpu' is not in the catalogue")));

  grpc::ClientContext empty_context;
  v1::ModelInfo info;
  status = stub->GetModel(&empty_context, {}, &info);
  EXPECT_THAT(FromGrpcStatus(status), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("GetModelRequest.id is empty")));

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
      "127.0.0.1:" + std::to_string((*server)->port()), grpc::InsecureChannelCredentials()));
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
  // The catalogue loader's code (a parse error is INVALID_ARGUMENT) and its location.
  EXPECT_THAT(PlannerServer::Create(TestOptions(dir)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("catalogue '" + dir.path().string() + "' is invalid:\n"),
                             HasSubstr("hardware/test-gpu-24gb.txtpb:4:15:"))));
}

TEST(PlannerServer, TakenPortIsAnError) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  auto first = PlannerServer::Create(TestOptions(dir));
  ASSERT_TRUE(first.ok()) << first.status();
  ServerOptions options = TestOptions(dir);
  options.listen_address = "127.0.0.1:" + std::to_string((*first)->port());
  EXPECT_THAT(PlannerServer::Create(options),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("cannot listen on " + options.listen_address)));
}

TEST(PlannerServer, FailedReloadKeepsServingThePreviousCatalogue) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  auto server = PlannerServer::Create(TestOptions(dir));
  ASSERT_TRUE(server.ok()) << server.status();
  dir.Write("models/broken.txtpb", "# proto-message: Model\nid: {\n");
  EXPECT_THAT((*server)->Reload(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("models/broken.txtpb:2:")));

  auto stub = StubFor(**server);
  grpc::ClientContext context;
  v1::GetModelRequest request;
  request.set_id("test-model");
  v1::ModelInfo info;
  EXPECT_TRUE(stub->GetModel(&context, request, &info).ok());
  EXPECT_EQ(CounterValue(*(*server)->metrics().registry(), "capplan_catalog_reloads_total",
                         {{"result", "failure"}}),
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
  // The listening port is closed after Wait(): the channel cannot connect,
  // so the call fails fast with UNAVAILABLE (not a deadline, not an answer).
  EXPECT_THAT(
      FromGrpcStatus(stub->ListHardware(&context, {}, &response)),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("failed to connect to all addresses")));
}

// Runs `create` on its own thread and fails (and ends the binary, since a
// hung thread cannot be stopped) when it takes longer than 20 s.
absl::StatusOr<std::unique_ptr<PlannerServer>> CreateWithin20s(const ServerOptions& options) {
  auto pending =
      std::async(std::launch::async, [options] { return PlannerServer::Create(options); });
  if (pending.wait_for(std::chrono::seconds(20)) != std::future_status::ready) {
    ADD_FAILURE() << "PlannerServer::Create hung on " << options.data_dir;
    std::cerr << "PlannerServer::Create hung; ending the test binary\n";
    std::_Exit(1);
  }
  return pending.get();
}

TEST(PlannerServer, RefusesToStartOnAnEmptyFolder) {
  TempDir dir;
  std::filesystem::create_directories(dir.path() / "hardware");
  EXPECT_THAT(CreateWithin20s(TestOptions(dir)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("holds 0 hardware and 0 model entries; it needs at least one "
                                 "of each")));
}

TEST(PlannerServer, RefusesToStartOnAFifoWithoutHanging) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  const std::string fifo = (dir.path() / "baselines/fifo.txtpb").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  EXPECT_THAT(CreateWithin20s(TestOptions(dir)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(fifo + ": is a FIFO; must be a regular file")));
}

TEST(PlannerServer, RefusesToStartOnASymlinkToDevZero) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  std::filesystem::create_symlink("/dev/zero", dir.path() / "models/zero.txtpb");
  const std::string link = (dir.path() / "models/zero.txtpb").string();
  EXPECT_THAT(CreateWithin20s(TestOptions(dir)),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr(link + ": resolves to /dev/zero, outside the directory")));
}

TEST(PlannerServer, ReloadRefusesAFifoAndAnEmptiedFolderAndKeepsTheLastGood) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  auto server = CreateWithin20s(TestOptions(dir));
  ASSERT_TRUE(server.ok()) << server.status();
  const prometheus::Registry& registry = *(*server)->metrics().registry();
  EXPECT_EQ(CounterValue(registry, "capplan_catalog_last_reload_success", {}), 1);
  const double loaded_at =
      CounterValue(registry, "capplan_catalog_last_reload_success_timestamp_seconds", {});
  EXPECT_GT(loaded_at, 1.7e9);  // a Unix time, in seconds

  const std::string fifo = (dir.path() / "hardware/fifo.txtpb").string();
  ASSERT_EQ(mkfifo(fifo.c_str(), 0644), 0);
  auto reload = std::async(std::launch::async, [&] { return (*server)->Reload(); });
  ASSERT_EQ(reload.wait_for(std::chrono::seconds(20)), std::future_status::ready)
      << "Reload hung on a FIFO";
  EXPECT_THAT(reload.get(), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is a FIFO")));
  EXPECT_EQ(CounterValue(registry, "capplan_catalog_last_reload_success", {}), 0);
  EXPECT_EQ(CounterValue(registry, "capplan_catalog_last_reload_success_timestamp_seconds", {}),
            loaded_at);

  std::filesystem::remove_all(dir.path());
  std::filesystem::create_directories(dir.path());
  EXPECT_THAT((*server)->Reload(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                            HasSubstr("holds 0 hardware and 0 model entries")));
  EXPECT_EQ((*server)->catalog().baselines().size(), 1u);  // the last good one serves
  auto stub = StubFor(**server);
  grpc::ClientContext context;
  v1::ListBaselinesResponse baselines;
  ASSERT_TRUE(stub->ListBaselines(&context, {}, &baselines).ok());
  EXPECT_EQ(baselines.baselines_size(), 1);
  EXPECT_EQ(CounterValue(registry, "capplan_catalog_reloads_total", {{"result", "failure"}}), 2);
}

TEST(PlannerServer, SuccessfulReloadSetsTheGaugeBackAndMovesTheTimestamp) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  auto server = PlannerServer::Create(TestOptions(dir));
  ASSERT_TRUE(server.ok()) << server.status();
  const prometheus::Registry& registry = *(*server)->metrics().registry();
  dir.Write("models/broken.txtpb", "# proto-message: Model\nid: {\n");
  ASSERT_FALSE((*server)->Reload().ok());
  const double before =
      CounterValue(registry, "capplan_catalog_last_reload_success_timestamp_seconds", {});
  std::filesystem::remove(dir.path() / "models/broken.txtpb");
  absl::SleepFor(absl::Milliseconds(20));
  ASSERT_THAT((*server)->Reload(), IsOk());
  EXPECT_EQ(CounterValue(registry, "capplan_catalog_last_reload_success", {}), 1);
  EXPECT_GT(CounterValue(registry, "capplan_catalog_last_reload_success_timestamp_seconds", {}),
            before);
}

TEST(ServerOptions, MetricsEndpointLimitsAreChecked) {
  ServerOptions options;
  options.data_dir = "/x";
  options.metrics_threads = 0;
  EXPECT_THAT(ValidateServerOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ServerOptions.metrics_threads = 0; must be in [1, 64]")));
  options.metrics_threads = 4;
  options.metrics_request_timeout = absl::Milliseconds(10);
  EXPECT_THAT(ValidateServerOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ServerOptions.metrics_request_timeout = 10ms; must be in "
                                 "[100ms, 60s]")));
}

}  // namespace
}  // namespace capplan::service
