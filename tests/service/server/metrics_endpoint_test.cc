// The /metrics endpoint under half-open connections: a client that connects
// and sends nothing, or half a request, holds a worker only for
// ServerOptions.metrics_request_timeout, so a scrape behind them finishes
// within a bound instead of the web server's default 30 s per connection.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/server/server.h"
#include "tests/test_common/loopback_server.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::testing::HasSubstr;

int Connect(int port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// GET /metrics on a fresh connection; the whole reply ("" when it fails or
// nothing comes within 60 s).
std::string Scrape(int port) {
  const int fd = Connect(port);
  if (fd < 0) return "";
  timeval timeout{60, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof(timeout));
  const std::string request = "GET /metrics HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n";
  std::string reply;
  if (::send(fd, request.data(), request.size(), MSG_NOSIGNAL) ==
      static_cast<ssize_t>(request.size())) {
    char buffer[4096];
    for (ssize_t n; (n = ::recv(fd, buffer, sizeof(buffer), 0)) > 0;) reply.append(buffer, n);
  }
  ::close(fd);
  return reply;
}

int PortOf(const std::string& endpoint) {
  int port = 0;
  EXPECT_TRUE(absl::SimpleAtoi(endpoint.substr(endpoint.rfind(':') + 1), &port)) << endpoint;
  return port;
}

TEST(MetricsEndpoint, HalfOpenConnectionsCannotBlockAScrapeForLong) {
  capplan::testing::TempDir data;
  capplan::testing::WriteMiniCatalogue(data);
  ServerOptions options = capplan::testing::LoopbackServerOptions(data.path().string());
  options.metrics_address = "127.0.0.1:0";
  options.metrics_threads = 2;
  options.metrics_request_timeout = absl::Seconds(1);
  auto server = PlannerServer::Create(options);
  ASSERT_TRUE(server.ok()) << server.status();
  const int port = PortOf((*server)->metrics_endpoint());
  ASSERT_GT(port, 0) << (*server)->metrics_endpoint();

  // Twice as many idle connections as workers: half send nothing, half send
  // the start of a request and never finish it.
  std::vector<int> idle;
  for (int i = 0; i < 2 * options.metrics_threads; ++i) {
    const int fd = Connect(port);
    ASSERT_GE(fd, 0);
    if (i % 2 == 1) {
      const std::string partial = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
      ASSERT_EQ(::send(fd, partial.data(), partial.size(), MSG_NOSIGNAL),
                static_cast<ssize_t>(partial.size()));
    }
    idle.push_back(fd);
  }
  const auto start = std::chrono::steady_clock::now();
  const std::string reply = Scrape(port);
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  for (int fd : idle) ::close(fd);

  EXPECT_THAT(reply, HasSubstr("200 OK"));
  EXPECT_THAT(reply, HasSubstr("capplan_catalog_last_reload_success 1"));
  // The idle connections hold both workers for one timeout each, in two
  // rounds: about 2 s. The default 30 s timeout would take a minute.
  EXPECT_LT(seconds, 6.0) << "the scrape waited behind the half-open connections";
}

}  // namespace
}  // namespace capplan::service
