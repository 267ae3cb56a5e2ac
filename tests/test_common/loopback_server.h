#ifndef CAPPLAN_TESTS_TEST_COMMON_LOOPBACK_SERVER_H_
#define CAPPLAN_TESTS_TEST_COMMON_LOOPBACK_SERVER_H_

#include <string>

#include "service/server/server.h"

namespace capplan::testing {

// A server for tests: loopback on a free port (PlannerServer::port()), no
// metrics endpoint (the registry still counts), serving `data_dir`.
inline service::ServerOptions LoopbackServerOptions(const std::string& data_dir) {
  service::ServerOptions options;
  options.listen_address = "127.0.0.1:0";
  options.metrics_address = "";
  options.data_dir = data_dir;
  return options;
}

}  // namespace capplan::testing

#endif  // CAPPLAN_TESTS_TEST_COMMON_LOOPBACK_SERVER_H_
