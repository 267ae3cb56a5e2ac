#ifndef CAPPLAN_SERVICE_CLI_HELP_H_
#define CAPPLAN_SERVICE_CLI_HELP_H_

// The CLI's manual: `capplan --help` (every command, one line each),
// `capplan CMD --help` / `capplan help CMD` (every flag of the command with
// its unit and default) and `capplan help concepts`.
//
// The help is data: one line per command and one per flag in help.cc. The
// flags a command's help lists are the flags its parser accepts (its
// CliCommandSpec), each looked up in the flag table, so a flag added to a
// parser without a line in the table shows as undocumented (and the CLI
// tests fail).

#include <optional>
#include <string>
#include <vector>

#include "service/cli/context.h"

namespace capplan::service {

// One flag as the help shows it.
struct FlagHelp {
  std::string name;           // "max-model-len"
  std::string value;          // "N"; empty for a switch
  std::string unit;           // "tokens"; "-" when the value has none
  std::string default_value;  // "the model's context", "none", "10"
  std::string meaning;        // one line
};

// The help of `flag` in `command`: the command's own line ("lint:baseline")
// before the shared one ("baseline"); nullopt when neither exists.
std::optional<FlagHelp> FindFlagHelp(const std::string& command, const std::string& flag);

// The flags every command takes (--server, --data-dir, ...).
const std::vector<std::string>& GlobalValuedFlags();
const std::vector<std::string>& GlobalSwitches();

// The marker a flag without a help line carries in the help.
inline constexpr char kUndocumented[] = "(undocumented)";

// `capplan --help`: usage, every command in `commands` with its one line,
// the global flags, where to read more, exit codes.
std::string TopLevelHelp(const std::vector<CliCommandSpec>& commands);

// `capplan CMD --help`: the command's usage, its line, and a table of every
// flag its parser accepts (FLAG, UNIT, DEFAULT, MEANING).
std::string CommandHelp(const CliCommandSpec& spec);

// `capplan help concepts` (the same text is the README's "Concepts").
const std::string& ConceptsText();

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_HELP_H_
