// PutBaseline through a real server: the token gate, validation and lint at
// the door, the file in the data directory, and the baseline served at once;
// a second replica on the same directory picks it up by polling.
#include <filesystem>
#include <fstream>
#include <string>

#include "capplan/v1/planner.grpc.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "service/server/server.h"
#include "tests/test_common/loopback_server.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::TempDir;
using ::testing::HasSubstr;

constexpr char kToken[] = "s3cret-token-of-32-characters-xx";

v1::Baseline NewBaseline(const std::string& id) {
  v1::Baseline b;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    title: "ingested"
    provenance { source_document: "https://github.com/o/r/blob/b474d1e053c35c9aef8c02aae4efbc0d8675f033/run.json" }
    deployment {
      hardware_id: "test-gpu-24gb"
      gpu_count: 1
      model_id: "test-model"
      engine { kind: ENGINE_KIND_VLLM version: "0.11.0" }
    }
    sweeps { name: "s" closed_loop: true workload { input_tokens: 500 output_tokens: 100 }
      rows { concurrency: 1 requests_per_second: 0.5 output_tokens_per_second: 50
             ttft { p50_seconds: 0.1 } e2e { p50_seconds: 2.0 } }
      rows { concurrency: 4 requests_per_second: 1.8 output_tokens_per_second: 180
             ttft { p50_seconds: 0.12 } e2e { p50_seconds: 2.2 } } }
  )",
                                                            &b));
  b.set_id(id);
  return b;
}

struct WritableServer {
  TempDir dir;
  std::unique_ptr<PlannerServer> server;
  std::unique_ptr<v1::CapacityPlanner::Stub> stub;
};

std::unique_ptr<WritableServer> Start(bool with_token) {
  auto w = std::make_unique<WritableServer>();
  capplan::testing::WriteMiniCatalogue(w->dir);
  ServerOptions options = capplan::testing::LoopbackServerOptions(w->dir.path().string());
  if (with_token) {
    w->dir.Write("token", std::string(kToken) + "\n");
    options.write_token_file = (w->dir.path() / "token").string();
  }
  auto server = PlannerServer::Create(options);
  EXPECT_TRUE(server.ok()) << server.status();
  if (!server.ok()) return nullptr;
  w->server = *std::move(server);
  w->stub = v1::CapacityPlanner::NewStub(grpc::CreateChannel(
      "127.0.0.1:" + std::to_string(w->server->port()), grpc::InsecureChannelCredentials()));
  return w;
}

grpc::Status Put(v1::CapacityPlanner::Stub& stub, const v1::Baseline& b, const char* token,
                 v1::PutBaselineResponse* response, bool replace = false) {
  grpc::ClientContext context;
  if (token != nullptr) context.AddMetadata("authorization", std::string("Bearer ") + token);
  v1::PutBaselineRequest request;
  *request.mutable_baseline() = b;
  request.set_replace(replace);
  return stub.PutBaseline(&context, request, response);
}

TEST(PutBaseline, WithoutATokenFileEveryWriteIsRefused) {
  auto w = Start(false);
  ASSERT_NE(w, nullptr);
  v1::PutBaselineResponse response;
  grpc::Status s = Put(*w->stub, NewBaseline("new-one"), kToken, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::PERMISSION_DENIED);
  EXPECT_THAT(s.error_message(), HasSubstr("--write_token_file"));
  EXPECT_FALSE(std::filesystem::exists(w->dir.path() / "baselines" / "new-one.txtpb"));
}

TEST(PutBaseline, MissingOrWrongTokenIsUnauthenticatedAndNeverEchoed) {
  auto w = Start(true);
  ASSERT_NE(w, nullptr);
  v1::PutBaselineResponse response;
  grpc::Status none = Put(*w->stub, NewBaseline("new-one"), nullptr, &response);
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  grpc::Status wrong = Put(*w->stub, NewBaseline("new-one"), "wrong-token-wrong-token", &response);
  EXPECT_EQ(wrong.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(wrong.error_message(), ::testing::Not(HasSubstr(kToken)));
  EXPECT_THAT(wrong.error_message(), ::testing::Not(HasSubstr("wrong-token")));
  // A prefix of the right token is wrong too.
  grpc::Status prefix = Put(*w->stub, NewBaseline("new-one"), "s3cret", &response);
  EXPECT_EQ(prefix.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_FALSE(std::filesystem::exists(w->dir.path() / "baselines" / "new-one.txtpb"));
}

TEST(PutBaseline, TheRightTokenWritesTheFileAndServesItAtOnce) {
  auto w = Start(true);
  ASSERT_NE(w, nullptr);
  v1::PutBaselineResponse response;
  grpc::Status s = Put(*w->stub, NewBaseline("new-one"), kToken, &response);
  ASSERT_TRUE(s.ok()) << s.error_message();
  EXPECT_EQ(response.file(), "baselines/new-one.txtpb");
  EXPECT_FALSE(response.replaced());
  EXPECT_TRUE(std::filesystem::exists(w->dir.path() / "baselines" / "new-one.txtpb"));
  grpc::ClientContext get;
  v1::GetBaselineRequest request;
  request.set_id("new-one");
  v1::Baseline served;
  ASSERT_TRUE(w->stub->GetBaseline(&get, request, &served).ok());
  EXPECT_EQ(served.sweeps(0).rows_size(), 2);
  // The file reloads to the same catalogue.
  EXPECT_TRUE(w->server->Reload().ok());
  // An existing id needs replace.
  grpc::Status again = Put(*w->stub, NewBaseline("new-one"), kToken, &response);
  EXPECT_EQ(again.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  ASSERT_TRUE(Put(*w->stub, NewBaseline("new-one"), kToken, &response, true).ok());
  EXPECT_TRUE(response.replaced());
}

TEST(PutBaseline, InvalidOrLintErrorsAreRefusedWithTheFieldPath) {
  auto w = Start(true);
  ASSERT_NE(w, nullptr);
  v1::PutBaselineResponse response;
  v1::Baseline unknown_gpu = NewBaseline("bad-gpu");
  unknown_gpu.mutable_deployment()->set_hardware_id("no-such-gpu");
  grpc::Status s = Put(*w->stub, unknown_gpu, kToken, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("deployment.hardware_id"));
  // TTFT above the end-to-end latency cannot be a real run.
  v1::Baseline impossible = NewBaseline("impossible");
  impossible.mutable_sweeps(0)->mutable_rows(0)->mutable_ttft()->set_p50_seconds(5);
  s = Put(*w->stub, impossible, kToken, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("PutBaselineRequest.baseline.sweeps[0].rows[0].ttft"));
  EXPECT_THAT(s.error_message(), HasSubstr("TTFT_ABOVE_E2E"));
  v1::Baseline bad_id = NewBaseline("Bad Id");
  s = Put(*w->stub, bad_id, kToken, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("PutBaselineRequest.baseline.id"));
  for (const char* id : {"bad-gpu", "impossible"}) {
    EXPECT_FALSE(
        std::filesystem::exists(w->dir.path() / "baselines" / (std::string(id) + ".txtpb")));
  }
}

// A card the catalogue lacks, written with the baseline that measured it.
v1::Hardware NewCard(bool cited) {
  v1::Hardware h;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(R"(
    id: "acme-x1-64gb" vendor: "Acme" name: "Acme X1" architecture: "Hopper"
    memory_bytes: 68719476736 usable_memory_bytes: 68000000000
    memory_bandwidth_bytes_per_second: 2.5e12
    peak_compute { format: NUMBER_FORMAT_BF16 dense_flops_per_second: 5e14 })",
                                                            &h));
  if (cited) {
    v1::Citation* c = h.add_sources();
    for (const char* f : {"memory_bytes", "usable_memory_bytes",
                          "memory_bandwidth_bytes_per_second", "peak_compute"}) {
      c->add_fields(f);
    }
    c->set_document("https://example.com/acme-x1-datasheet.pdf");
  }
  return h;
}

grpc::Status PutWithCard(v1::CapacityPlanner::Stub& stub, const std::string& baseline_id,
                         const v1::Hardware& card, v1::PutBaselineResponse* response) {
  grpc::ClientContext context;
  context.AddMetadata("authorization", std::string("Bearer ") + kToken);
  v1::PutBaselineRequest request;
  *request.mutable_baseline() = NewBaseline(baseline_id);
  request.mutable_baseline()->mutable_deployment()->set_hardware_id(card.id());
  *request.mutable_hardware() = card;
  return stub.PutBaseline(&context, request, response);
}

TEST(PutBaseline, ACardWithItsSourcesIsWrittenBesideTheBaselineAndServed) {
  auto w = Start(/*with_token=*/true);
  ASSERT_NE(w, nullptr);
  v1::PutBaselineResponse response;
  // Uncited figures are refused: a catalogue entry cites every figure.
  grpc::Status status = PutWithCard(*w->stub, "run-on-acme", NewCard(/*cited=*/false), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("PutBaselineRequest.hardware.memory_bytes: memory_bytes has no citation"));
  EXPECT_FALSE(std::filesystem::exists(w->dir.path() / "hardware" / "acme-x1-64gb.txtpb"));

  status = PutWithCard(*w->stub, "run-on-acme", NewCard(/*cited=*/true), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(std::filesystem::exists(w->dir.path() / "hardware" / "acme-x1-64gb.txtpb"));
  grpc::ClientContext get_context;
  v1::GetHardwareRequest get;
  get.set_id("acme-x1-64gb");
  v1::Hardware served;
  ASSERT_TRUE(w->stub->GetHardware(&get_context, get, &served).ok());
  EXPECT_EQ(served.memory_bandwidth_bytes_per_second(), 2.5e12);

  // The same id with other figures is another card: refused, the file kept.
  v1::Hardware other = NewCard(/*cited=*/true);
  other.set_memory_bandwidth_bytes_per_second(3e12);
  status = PutWithCard(*w->stub, "second-run-on-acme", other, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::ALREADY_EXISTS);
  EXPECT_THAT(status.error_message(),
              HasSubstr("PutBaselineRequest.hardware.id = \"acme-x1-64gb\"; the catalogue holds "
                        "a different card"));
  EXPECT_FALSE(std::filesystem::exists(w->dir.path() / "baselines" / "second-run-on-acme.txtpb"));
  grpc::ClientContext again_context;
  v1::Hardware kept;
  ASSERT_TRUE(w->stub->GetHardware(&again_context, get, &kept).ok());
  EXPECT_EQ(kept.memory_bandwidth_bytes_per_second(), 2.5e12);

  // The same card again, with another run on it, is not rewritten.
  status = PutWithCard(*w->stub, "second-run-on-acme", NewCard(/*cited=*/true), &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
}

TEST(PutBaseline, AReplicaOnTheSameDirectoryPicksTheWriteUpWhenItPolls) {
  auto writer = Start(true);
  ASSERT_NE(writer, nullptr);
  ServerOptions options = capplan::testing::LoopbackServerOptions(writer->dir.path().string());
  auto reader = PlannerServer::Create(options);
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::StatusOr<bool> unchanged = (*reader)->ReloadIfChanged();
  ASSERT_TRUE(unchanged.ok());
  EXPECT_FALSE(*unchanged);
  v1::PutBaselineResponse response;
  ASSERT_TRUE(Put(*writer->stub, NewBaseline("shared-one"), kToken, &response).ok());
  absl::StatusOr<bool> changed = (*reader)->ReloadIfChanged();
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_NE((*reader)->catalog().FindBaseline("shared-one"), nullptr);
}

}  // namespace
}  // namespace capplan::service
