#ifndef CAPPLAN_SERVICE_CLI_CONTEXT_H_
#define CAPPLAN_SERVICE_CLI_CONTEXT_H_

#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "capplan/v1/planner.pb.h"
#include "google/protobuf/message.h"
#include "service/catalog/catalog.h"
#include "service/cli/args.h"
#include "service/planner/planner.h"

namespace capplan::service {

// What a CLI command works with: its parsed arguments, the planner (local or
// remote — commands never tell the difference) and where to print.
struct CliContext {
  CliArgs args;
  std::unique_ptr<PlannerApi> planner;
  std::ostream& out;
  std::ostream& err;
  bool json = false;
};

// A command returns its exit code (0, or 1 for a FAIL verdict); an error
// status exits 2 with the message on stderr.
using CliCommand = absl::StatusOr<int> (*)(CliContext& ctx);

// A command of the CLI and the flags it takes (besides the global --server,
// --data-dir, --timeout-seconds, --json, --help).
struct CliCommandSpec {
  std::string name;
  CliCommand run;
  std::vector<std::string> valued;
  std::vector<std::string> switches;
};

// Commands defined outside cli.cc (load, plan, validate, accuracy); each
// file adds its specs to the list in commands.cc.
const std::vector<CliCommandSpec>& ExtraCliCommands();

// Every command the CLI runs, in the order `capplan --help` lists them:
// the catalogue commands and memory (cli.cc), then ExtraCliCommands().
const std::vector<CliCommandSpec>& AllCliCommands();

// Prints `message` as proto3 JSON with snake_case names.
absl::Status PrintJson(const google::protobuf::Message& message, std::ostream& out);

// Short names for enums in human-readable output.
std::string EngineName(v1::EngineKind kind);
std::string TierName(v1::Tier tier);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_CONTEXT_H_
