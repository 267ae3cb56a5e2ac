#ifndef CAPPLAN_TESTS_TEST_COMMON_CLI_RUNNER_H_
#define CAPPLAN_TESTS_TEST_COMMON_CLI_RUNNER_H_

// Runs the `capplan` CLI in-process and captures what it prints.

#include <sstream>
#include <string>
#include <vector>

#include "service/cli/cli.h"

namespace capplan::testing {

struct CliResult {
  int code;
  std::string out;
  std::string err;
};

inline CliResult RunCapplan(const std::vector<std::string>& args) {
  std::ostringstream out, err;
  int code = service::RunCli(args, out, err);
  return {code, out.str(), err.str()};
}

}  // namespace capplan::testing

#endif  // CAPPLAN_TESTS_TEST_COMMON_CLI_RUNNER_H_
