// TLS and mutual TLS on the gRPC port, with certificates made by openssl when
// the test runs, and server reflection switched on and off.
#include <string>

#include "absl/synchronization/notification.h"
#include "capplan/v1/planner.grpc.pb.h"
#include "gmock/gmock.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "service/server/server.h"
#include "tests/test_common/loopback_server.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"
#include "tests/test_common/tls_certs.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::capplan::testing::TempDir;
using ::capplan::testing::TestCertificates;
using ::testing::HasSubstr;

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(certs_.Make()) << certs_.error();
    capplan::testing::WriteMiniCatalogue(data_);
  }

  ServerOptions Options(bool mutual) const {
    ServerOptions options = capplan::testing::LoopbackServerOptions(data_.path().string());
    options.tls_cert_file = certs_.Pem("server");
    options.tls_key_file = certs_.Key("server");
    if (mutual) options.tls_client_ca_file = certs_.Pem("ca");
    return options;
  }

  // ListHardware over a channel with these credentials: the status.
  static grpc::Status Call(const PlannerServer& server,
                           std::shared_ptr<grpc::ChannelCredentials> credentials) {
    auto stub = v1::CapacityPlanner::NewStub(
        grpc::CreateChannel("127.0.0.1:" + std::to_string(server.port()), credentials));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    v1::ListHardwareResponse response;
    grpc::Status status = stub->ListHardware(&context, {}, &response);
    if (status.ok()) {
      EXPECT_EQ(response.hardware_size(), 1);
    }
    return status;
  }

  std::shared_ptr<grpc::ChannelCredentials> Tls(const std::string& ca,
                                                const std::string& client = "") const {
    grpc::SslCredentialsOptions ssl;
    ssl.pem_root_certs = certs_.Read(certs_.Pem(ca));
    if (!client.empty()) {
      ssl.pem_cert_chain = certs_.Read(certs_.Pem(client));
      ssl.pem_private_key = certs_.Read(certs_.Key(client));
    }
    return grpc::SslCredentials(ssl);
  }

  TestCertificates certs_;
  TempDir data_;
};

TEST_F(TlsTest, ServesATlsClientAndRefusesAPlaintextOne) {
  auto server = PlannerServer::Create(Options(false));
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_TRUE(Call(**server, Tls("ca")).ok());
  EXPECT_EQ(Call(**server, grpc::InsecureChannelCredentials()).error_code(),
            grpc::StatusCode::UNAVAILABLE);
  // A client that trusts another CA does not accept the server's certificate.
  EXPECT_EQ(Call(**server, Tls("other-ca")).error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, MutualTlsRefusesAClientWithoutACertificateOrWithAForeignOne) {
  auto server = PlannerServer::Create(Options(true));
  ASSERT_TRUE(server.ok()) << server.status();
  EXPECT_TRUE(Call(**server, Tls("ca", "client")).ok());
  EXPECT_EQ(Call(**server, Tls("ca")).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Call(**server, Tls("ca", "other-client")).error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(Call(**server, grpc::InsecureChannelCredentials()).error_code(),
            grpc::StatusCode::UNAVAILABLE);
}

TEST_F(TlsTest, CertificateWithoutKeyIsInvalid) {
  ServerOptions options = Options(false);
  options.tls_key_file.clear();
  EXPECT_THAT(PlannerServer::Create(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ServerOptions.tls_key_file is empty; tls_cert_file and "
                                 "tls_key_file go together")));
}

TEST_F(TlsTest, ClientCaWithoutServerCertificateIsInvalid) {
  ServerOptions options = capplan::testing::LoopbackServerOptions(data_.path().string());
  options.tls_client_ca_file = certs_.Pem("ca");
  EXPECT_THAT(ValidateServerOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ServerOptions.tls_client_ca_file = \"" + certs_.Pem("ca") +
                                 "\"; mutual TLS needs tls_cert_file")));
}

TEST_F(TlsTest, KeyFileThatIsNotAKeyIsNamed) {
  ServerOptions options = Options(false);
  options.tls_key_file = certs_.Pem("server");  // a certificate, not a key
  EXPECT_THAT(PlannerServer::Create(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ServerOptions.tls_key_file = \"" + certs_.Pem("server") +
                                 "\"; must be a PEM file holding \"PRIVATE KEY-----\"")));
}

TEST_F(TlsTest, MissingCertificateFileIsNamed) {
  ServerOptions options = Options(false);
  options.tls_cert_file = (data_.path() / "absent.pem").string();
  EXPECT_THAT(PlannerServer::Create(options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ServerOptions.tls_cert_file = \"" + options.tls_cert_file +
                                 "\"; cannot read it")));
}

// ServerReflectionInfo with one list_services request, as a unary call of raw
// bytes (a bidi stream of one message each way): the status and the reply.
grpc::Status ListServices(const PlannerServer& server, std::string* reply) {
  auto channel = grpc::CreateChannel("127.0.0.1:" + std::to_string(server.port()),
                                     grpc::InsecureChannelCredentials());
  grpc::GenericStub stub(channel);
  // ServerReflectionRequest{list_services: ""}: field 7, length-delimited, empty.
  const std::string bytes("\x3a\x00", 2);
  grpc::Slice slice(bytes);
  grpc::ByteBuffer request(&slice, 1);
  grpc::ByteBuffer response;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  absl::Notification done;
  grpc::Status result;
  stub.UnaryCall(&context, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", {},
                 &request, &response, [&](grpc::Status status) {
                   result = std::move(status);
                   done.Notify();
                 });
  done.WaitForNotification();
  std::vector<grpc::Slice> slices;
  if (result.ok() && response.Dump(&slices).ok()) {
    for (const grpc::Slice& s : slices) reply->append(s.begin(), s.end());
  }
  return result;
}

TEST(Reflection, OnListsThePlannerServiceOffIsUnimplemented) {
  TempDir data;
  capplan::testing::WriteMiniCatalogue(data);
  ServerOptions options = capplan::testing::LoopbackServerOptions(data.path().string());
  {
    auto server = PlannerServer::Create(options);
    ASSERT_TRUE(server.ok()) << server.status();
    std::string reply;
    ASSERT_TRUE(ListServices(**server, &reply).ok());
    EXPECT_THAT(reply, HasSubstr("capplan.v1.CapacityPlanner"));
  }
  options.reflection = false;
  // After a server with reflection in the same process: the switch is per server.
  auto server = PlannerServer::Create(options);
  ASSERT_TRUE(server.ok()) << server.status();
  std::string reply;
  EXPECT_EQ(ListServices(**server, &reply).error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

}  // namespace
}  // namespace capplan::service
