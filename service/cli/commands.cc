// The CLI commands defined outside cli.cc, in one list.
#include "service/cli/context.h"
#include "service/cli/ingest.h"
#include "service/cli/lint.h"
#include "service/cli/load.h"
#include "service/cli/plan.h"
#include "service/cli/priors.h"
#include "service/cli/search.h"
#include "service/cli/validate.h"

namespace capplan::service {

const std::vector<CliCommandSpec>& ExtraCliCommands() {
  static const auto* const kCommands = [] {
    auto* commands = new std::vector<CliCommandSpec>{};
    for (CliCommandSpec& spec : LoadCliCommands()) commands->push_back(std::move(spec));
    commands->push_back(PlanCommandSpec());
    commands->push_back(SearchCommandSpec());
    commands->push_back(ValidateCommandSpec());
    commands->push_back(LintCommandSpec());
    commands->push_back(IngestCommandSpec());
    commands->push_back(PriorsCommandSpec());
    return commands;
  }();
  return *kCommands;
}

}  // namespace capplan::service
