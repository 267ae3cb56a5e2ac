// The CLI commands defined outside cli.cc, in one list.
#include "service/cli_context.h"

namespace capplan::service {

const std::vector<CliCommandSpec>& ExtraCliCommands() {
  static const auto* const kCommands = new std::vector<CliCommandSpec>{};
  return *kCommands;
}

}  // namespace capplan::service
