#include "service/cli/lint.h"

#include <string>

#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "service/cli/format.h"

namespace capplan::service {
namespace {

std::string SeverityName(v1::Severity s) {
  switch (s) {
    case v1::SEVERITY_ERROR:
      return "ERROR";
    case v1::SEVERITY_WARNING:
      return "WARNING";
    case v1::SEVERITY_INFO:
      return "INFO";
    default:
      return "-";
  }
}

absl::StatusOr<int> RunLint(CliContext& ctx) {
  if (ctx.args.positional().size() != 1) {
    return absl::InvalidArgumentError("usage: capplan lint [--baseline ID] [--json]");
  }
  v1::LintRequest request;
  request.set_baseline_id(ctx.args.Get("baseline").value_or(""));
  CAPPLAN_ASSIGN_OR_RETURN(v1::LintResponse response, ctx.planner->Lint(request));
  int errors = 0, warnings = 0;
  for (const v1::LintFinding& f : response.findings()) {
    (f.severity() == v1::SEVERITY_ERROR ? errors : warnings) += 1;
  }
  if (ctx.json) {
    CAPPLAN_RETURN_IF_ERROR(PrintJson(response, ctx.out));
  } else {
    TextTable table({"BASELINE", "CODE", "SEVERITY", "FIELD", "FINDING"});
    for (const v1::LintFinding& f : response.findings()) {
      table.AddRow({f.baseline_id(), f.code(), SeverityName(f.severity()), f.field(), f.message()});
    }
    if (response.findings_size() > 0) table.Print(ctx.out);
    ctx.out << absl::StrFormat("%d %s checked: %d %s, %d %s\n", response.baselines_checked(),
                               response.baselines_checked() == 1 ? "baseline" : "baselines", errors,
                               errors == 1 ? "error" : "errors", warnings,
                               warnings == 1 ? "warning" : "warnings");
  }
  return errors > 0 ? 1 : 0;
}

}  // namespace

CliCommandSpec LintCommandSpec() { return {"lint", &RunLint, {"baseline"}, {}}; }

}  // namespace capplan::service
