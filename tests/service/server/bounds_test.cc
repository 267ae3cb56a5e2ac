// The server's bounds (issue 14): deadlines and cancellation stop the work,
// a busy server refuses instead of queueing without end, a drain stops work
// in flight at its deadline, undecodable bytes are INVALID_ARGUMENT, and every
// call is counted with the code its client sees. A real server in-process on
// a free loopback port; the handler's exit is observed through the server's
// own limiter and metrics, not through sleeps.
#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "capplan/v1/planner.grpc.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/byte_buffer.h"
#include "gtest/gtest.h"
#include "service/rpc/grpc_status.h"
#include "service/server/server.h"
#include "tests/test_common/loopback_server.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::AnyOf;
using ::testing::HasSubstr;
using Clock = std::chrono::steady_clock;

constexpr char kService[] = "/capplan.v1.CapacityPlanner/";

std::unique_ptr<PlannerServer> Start(ServerOptions options) {
  absl::StatusOr<std::unique_ptr<PlannerServer>> server = PlannerServer::Create(options);
  EXPECT_TRUE(server.ok()) << server.status();
  return server.ok() ? *std::move(server) : nullptr;
}

ServerOptions BundledOptions() {
  ServerOptions options = capplan::testing::LoopbackServerOptions(testing::BundledDataDir());
  // The tests' heavy request must be admitted, to be stopped by other means.
  options.max_work_units = 1e15;
  return options;
}

std::shared_ptr<grpc::Channel> ChannelTo(const PlannerServer& server) {
  return grpc::CreateChannel("127.0.0.1:" + std::to_string(server.port()),
                             grpc::InsecureChannelCredentials());
}

double Count(PlannerServer& server, const std::string& method, const std::string& code) {
  double total = 0;
  for (const prometheus::MetricFamily& family : server.metrics().registry()->Collect()) {
    if (family.name != "grpc_server_handled_total") continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      std::map<std::string, std::string> labels;
      for (const auto& label : metric.label) labels[label.name] = label.value;
      if (labels["grpc_method"] == method && labels["grpc_code"] == code) {
        total += metric.counter.value;
      }
    }
  }
  return total;
}

// Waits (bounded) until `done` holds; the time it first held.
template <typename Predicate>
Clock::time_point WaitUntil(Predicate done, std::chrono::seconds limit = std::chrono::seconds(30)) {
  const Clock::time_point give_up = Clock::now() + limit;
  while (!done() && Clock::now() < give_up) std::this_thread::yield();
  return Clock::now();
}

// About two minutes of work (the issue's 83 s request): 4,096 points near
// 16,384 users with think time on 8,192 slots.
v1::PredictLoadRequest HeavyRequest() {
  v1::PredictLoadRequest r;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(
        deployment {
          model_id: "qwen3-8b"
          hardware_id: "nvidia-b200-180gb"
          gpu_count: 8
          parallelism { tp: 8 }
          engine { max_num_seqs: 8192 max_model_len: 8192 }
        }
        workload { input_tokens: 200 output_tokens: 100 input_tokens_cv: 0.3 output_tokens_cv: 0.5 }
        closed_loop { think_time_seconds: 10 }
      )pb",
      &r));
  for (int n = 16384 - 4095; n <= 16384; ++n) r.mutable_closed_loop()->add_concurrencies(n);
  return r;
}

TEST(ServerBounds, ADeadlineStopsTheHandlerWithinASecond) {
  std::unique_ptr<PlannerServer> server = Start(BundledOptions());
  ASSERT_NE(server, nullptr);
  auto stub = v1::CapacityPlanner::NewStub(ChannelTo(*server));
  grpc::ClientContext context;
  const Clock::time_point start = Clock::now();
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(1));
  v1::LoadCurve curve;
  grpc::Status status = stub->PredictLoad(&context, HeavyRequest(), &curve);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  // The handler's exit: its limiter slot freed, and the call counted.
  const Clock::time_point exited = WaitUntil([&] {
    return server->service().limiter().running() == 0 &&
           Count(*server, "PredictLoad", "DeadlineExceeded") == 1;
  });
  const double seconds = std::chrono::duration<double>(exited - start).count();
  EXPECT_EQ(server->service().limiter().running(), 0);
  EXPECT_EQ(Count(*server, "PredictLoad", "DeadlineExceeded"), 1);
  EXPECT_EQ(Count(*server, "PredictLoad", "OK"), 0);
  // Deadline (1 s) plus a few milliseconds to notice it.
  EXPECT_LT(seconds, 1.25);
}

TEST(ServerBounds, AClientThatCancelsStopsTheHandler) {
  std::unique_ptr<PlannerServer> server = Start(BundledOptions());
  ASSERT_NE(server, nullptr);
  auto stub = v1::CapacityPlanner::NewStub(ChannelTo(*server));
  grpc::ClientContext context;
  std::thread call([&] {
    v1::LoadCurve curve;
    grpc::Status status = stub->PredictLoad(&context, HeavyRequest(), &curve);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  });
  WaitUntil([&] { return server->service().limiter().running() == 1; });
  ASSERT_EQ(server->service().limiter().running(), 1);
  const Clock::time_point cancelled = Clock::now();
  context.TryCancel();
  const Clock::time_point exited = WaitUntil([&] {
    return server->service().limiter().running() == 0 &&
           Count(*server, "PredictLoad", "Canceled") == 1;
  });
  call.join();
  EXPECT_EQ(Count(*server, "PredictLoad", "Canceled"), 1);
  EXPECT_LT(std::chrono::duration<double>(exited - cancelled).count(), 0.5);
}

TEST(ServerBounds, ABusyServerRefusesRatherThanQueueingWithoutEnd) {
  ServerOptions options = BundledOptions();
  options.max_concurrent_expensive_rpcs = 1;
  options.max_queued_expensive_rpcs = 1;
  std::unique_ptr<PlannerServer> server = Start(options);
  ASSERT_NE(server, nullptr);
  auto stub = v1::CapacityPlanner::NewStub(ChannelTo(*server));
  grpc::ClientContext running_context;
  grpc::ClientContext queued_context;
  std::thread running([&] {
    v1::LoadCurve curve;
    stub->PredictLoad(&running_context, HeavyRequest(), &curve);
  });
  WaitUntil([&] { return server->service().limiter().running() == 1; });
  std::thread queued([&] {
    v1::LoadCurve curve;
    stub->PredictLoad(&queued_context, HeavyRequest(), &curve);
  });
  WaitUntil([&] { return server->service().limiter().waiting() == 1; });
  ASSERT_EQ(server->service().limiter().waiting(), 1);
  // A third expensive call: refused at once, naming the limits.
  grpc::ClientContext context;
  v1::PlanResponse plan;
  grpc::Status status = stub->Plan(&context, v1::PlanRequest(), &plan);
  EXPECT_THAT(FromGrpcStatus(status),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("Plan: the server is busy: 1 expensive calls running")));
  // Look-ups are not expensive: they still answer.
  grpc::ClientContext lookup;
  v1::ListHardwareResponse hardware;
  EXPECT_TRUE(stub->ListHardware(&lookup, {}, &hardware).ok());
  // The waiting call stops waiting when its client goes.
  queued_context.TryCancel();
  queued.join();
  WaitUntil([&] { return server->service().limiter().waiting() == 0; });
  EXPECT_EQ(server->service().limiter().waiting(), 0);
  running_context.TryCancel();
  running.join();
  WaitUntil([&] { return server->service().limiter().running() == 0; });
  EXPECT_EQ(Count(*server, "Plan", "ResourceExhausted"), 1);
  EXPECT_EQ(Count(*server, "PredictLoad", "Canceled"), 2);
}

// Runs `call` on its own thread, shuts `server` down with `drain` once the
// call is in its handler, and returns the seconds until the server has
// exited (Wait returns when the handler has returned); the call's status in
// `status`.
template <typename Call>
double SecondsToDrainOneCall(PlannerServer& server, absl::Duration drain, Call call,
                             grpc::Status* status) {
  std::thread caller([&] { *status = call(); });
  WaitUntil([&] { return server.service().limiter().running() == 1; });
  EXPECT_EQ(server.service().limiter().running(), 1);
  const Clock::time_point start = Clock::now();
  server.Shutdown(drain);
  server.Wait();
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  caller.join();
  return seconds;
}

TEST(ServerBounds, ShutdownStopsWorkInFlightAtTheDrainDeadline) {
  std::unique_ptr<PlannerServer> server = Start(BundledOptions());
  ASSERT_NE(server, nullptr);
  auto stub = v1::CapacityPlanner::NewStub(ChannelTo(*server));
  grpc::Status status;
  const double seconds = SecondsToDrainOneCall(
      *server, absl::Milliseconds(300),
      [&] {
        grpc::ClientContext context;
        v1::LoadCurve curve;
        return stub->PredictLoad(&context, HeavyRequest(), &curve);
      },
      &status);
  EXPECT_LT(seconds, 0.3 + 1.0);
  EXPECT_GE(seconds, 0.29);
  EXPECT_THAT(status.error_code(),
              AnyOf(grpc::StatusCode::UNAVAILABLE, grpc::StatusCode::CANCELLED));
  EXPECT_EQ(server->service().limiter().running(), 0);
}

// A search (most of a second of work) in flight ends at the drain deadline
// too, not when it is done.
TEST(ServerBounds, ShutdownStopsASearchInFlightAtTheDrainDeadline) {
  std::unique_ptr<PlannerServer> server = Start(BundledOptions());
  ASSERT_NE(server, nullptr);
  auto stub = v1::CapacityPlanner::NewStub(ChannelTo(*server));
  v1::SearchConfigsRequest request;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"pb(model_id: "llama-3.1-70b-instruct"
           workload { input_tokens: 1000 output_tokens: 200 }
           slo { ttft_p95_seconds: 1 tpot_seconds: 0.05 }
           target_concurrent_users: 200)pb",
      &request));
  grpc::Status status;
  const double seconds = SecondsToDrainOneCall(
      *server, absl::Milliseconds(100),
      [&] {
        grpc::ClientContext context;
        v1::SearchConfigsResponse response;
        return stub->SearchConfigs(&context, request, &response);
      },
      &status);
  // The whole search takes about 0.9 s on this machine (issue 13's figure);
  // stopped, the handler ends within the drain time and a few candidates.
  EXPECT_LT(seconds, 0.1 + 0.5);
  EXPECT_THAT(status.error_code(),
              AnyOf(grpc::StatusCode::UNAVAILABLE, grpc::StatusCode::CANCELLED));
  EXPECT_EQ(server->service().limiter().running(), 0);
}

// Sends `bytes` as the request of `method`, undecoded.
grpc::Status SendRaw(grpc::Channel* channel, const std::string& method, const std::string& bytes) {
  grpc::GenericStub stub(channel->shared_from_this());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::Status status;
  absl::Notification done;
  stub.UnaryCall(&context, method, grpc::StubOptions(), &request, &response, [&](grpc::Status s) {
    status = std::move(s);
    done.Notify();
  });
  done.WaitForNotification();
  return status;
}

TEST(ServerBounds, UndecodableBytesAreInvalidArgumentAndNoByteStringIsInternal) {
  ServerOptions options = capplan::testing::LoopbackServerOptions(testing::BundledDataDir());
  std::unique_ptr<PlannerServer> server = Start(options);
  ASSERT_NE(server, nullptr);
  std::shared_ptr<grpc::Channel> channel = ChannelTo(*server);
  // A length-delimited field longer than the message: never decodes.
  const std::string truncated("\x0a\x7f\x01\x02", 4);
  for (const char* method : {"PlanMemory", "PredictLoad", "Plan", "Validate", "GetHardware"}) {
    grpc::Status status = SendRaw(channel.get(), std::string(kService) + method, truncated);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << method << ": " << status.error_message();
    EXPECT_THAT(status.error_message(), HasSubstr("do not decode"));
    EXPECT_EQ(Count(*server, method, "InvalidArgument"), 1) << method;
    EXPECT_EQ(Count(*server, method, "Internal"), 0) << method;
  }
  std::mt19937_64 random(14);
  for (int i = 0; i < 24; ++i) {
    std::string bytes(1 + random() % 64, '\0');
    for (char& c : bytes) c = static_cast<char>(random());
    grpc::Status status = SendRaw(channel.get(), std::string(kService) + "PlanMemory", bytes);
    EXPECT_NE(status.error_code(), grpc::StatusCode::INTERNAL) << status.error_message();
    EXPECT_NE(status.error_code(), grpc::StatusCode::UNKNOWN) << status.error_message();
  }
  EXPECT_EQ(Count(*server, "PlanMemory", "Internal"), 0);
}

TEST(ServerBounds, ARequestAboveTheSizeLimitIsRefusedAndCounted) {
  ServerOptions options = capplan::testing::LoopbackServerOptions(testing::BundledDataDir());
  options.max_message_bytes = 64 * 1024;
  std::unique_ptr<PlannerServer> server = Start(options);
  ASSERT_NE(server, nullptr);
  auto stub = v1::CapacityPlanner::NewStub(ChannelTo(*server));
  v1::ValidateRequest request;
  request.set_launch_line(std::string(100 * 1024, 'x'));
  grpc::ClientContext context;
  v1::ValidateResponse response;
  grpc::Status status = stub->Validate(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED) << status.error_message();
  EXPECT_THAT(status.error_message(),
              HasSubstr(absl::StrCat("ValidateRequest is ", request.ByteSizeLong(),
                                     " bytes; must be at most 65536")));
  WaitUntil([&] { return Count(*server, "Validate", "ResourceExhausted") == 1; });
  EXPECT_EQ(Count(*server, "Validate", "ResourceExhausted"), 1);
  EXPECT_EQ(Count(*server, "Validate", "Internal"), 0);
}

TEST(ServerBounds, ACallPastItsDeadlineIsCountedAsTheClientSawIt) {
  std::unique_ptr<PlannerServer> server = Start(BundledOptions());
  ASSERT_NE(server, nullptr);
  auto stub = v1::CapacityPlanner::NewStub(ChannelTo(*server));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::milliseconds(50));
  v1::LoadCurve curve;
  grpc::Status status = stub->PredictLoad(&context, HeavyRequest(), &curve);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  WaitUntil([&] { return Count(*server, "PredictLoad", "DeadlineExceeded") == 1; });
  EXPECT_EQ(Count(*server, "PredictLoad", "DeadlineExceeded"), 1);
  EXPECT_EQ(Count(*server, "PredictLoad", "OK"), 0);
}

TEST(ServerBounds, ALongIdComesBackAsAShortMessage) {
  ServerOptions options = capplan::testing::LoopbackServerOptions(testing::BundledDataDir());
  std::unique_ptr<PlannerServer> server = Start(options);
  ASSERT_NE(server, nullptr);
  auto stub = v1::CapacityPlanner::NewStub(ChannelTo(*server));
  v1::GetBaselineRequest request;
  request.set_id(std::string(100 * 1000, 'b'));
  grpc::ClientContext context;
  v1::Baseline baseline;
  grpc::Status status = stub->GetBaseline(&context, request, &baseline);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("GetBaselineRequest.id = \"bbb"));
  EXPECT_LT(status.error_message().size(), 512u);
}

}  // namespace
}  // namespace capplan::service
