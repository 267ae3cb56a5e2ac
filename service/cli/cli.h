#ifndef CAPPLAN_SERVICE_CLI_CLI_H_
#define CAPPLAN_SERVICE_CLI_CLI_H_

#include <ostream>
#include <string>
#include <vector>

namespace capplan::service {

// Exit codes of the `capplan` CLI.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFail = 1;     // a verdict of FAIL (validate)
inline constexpr int kExitInvalid = 2;  // bad input, unknown id, no server

// Runs `capplan <args...>` (args exclude the program name), printing results
// to `out` and errors to `err`; returns the exit code. Offline on the
// catalogue in --data-dir (default: the bundled data/), or against a server
// with --server host:port; both give identical answers.
int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_CLI_H_
