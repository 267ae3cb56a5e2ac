// capplan validate: a deployment spec or an engine launch line, checked, with
// a verdict, the findings, an exit code and optionally a JUnit report.
#include "service/cli/validate.h"

#include <cstdio>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/status_macros.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "service/catalog/file_util.h"
#include "service/catalog/text_proto.h"
#include "service/cli/cli.h"
#include "service/cli/deployment_flags.h"
#include "service/cli/format.h"
#include "service/cli/junit.h"

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

// Optional workload, SLO and expected load from flags (they override a spec).
absl::Status ApplyLoadFlags(const CliArgs& args, v1::ValidateRequest* request) {
  CAPPLAN_RETURN_IF_ERROR(
      ApplyWorkloadFlags(args, [request] { return request->mutable_workload(); }));
  CAPPLAN_RETURN_IF_ERROR(ApplySloFlags(args, [request] { return request->mutable_slo(); }));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> users, args.GetInt("users", 1));
  if (users.has_value()) request->mutable_expected_load()->set_concurrent_users(*users);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> rps, args.GetDouble("rps"));
  if (rps.has_value()) request->mutable_expected_load()->set_requests_per_second(*rps);
  return absl::OkStatus();
}

absl::StatusOr<v1::ValidateRequest> RequestFromFlags(const CliArgs& args) {
  v1::ValidateRequest request;
  if (args.Has("spec")) {
    if (args.Has("launch") || args.Has("model") || args.Has("baseline")) {
      return absl::InvalidArgumentError("--spec excludes --launch, --model and --baseline");
    }
    std::string path = *args.Get("spec");
    CAPPLAN_ASSIGN_OR_RETURN(std::string text, ReadFileForFlag("spec", path));
    CAPPLAN_ASSIGN_OR_RETURN(request, ParseValidateSpec(path, text));
  } else if (args.Has("launch")) {
    request.set_launch_line(*args.Get("launch"));
    CAPPLAN_RETURN_IF_ERROR(ApplyHardwareFlags(args, request.mutable_deployment()));
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> gpus, args.GetInt("gpus", 1));
    if (gpus.has_value()) request.mutable_deployment()->set_gpu_count(*gpus);
    if (auto config = args.Get("model-config")) {
      CAPPLAN_ASSIGN_OR_RETURN(std::string json, ReadFileForFlag("model-config", *config));
      request.mutable_deployment()->set_model_config_json(json);
    }
    if (!args.Has("gpu") && !args.Has("hardware-file")) {
      return absl::InvalidArgumentError(
          "--launch needs --gpu ID or --hardware-file FILE (a launch line does not name the "
          "GPU)");
    }
  } else {
    CAPPLAN_ASSIGN_OR_RETURN(*request.mutable_deployment(), DeploymentFromFlags(args));
  }
  CAPPLAN_RETURN_IF_ERROR(ApplyLoadFlags(args, &request));
  for (const std::string& code : args.GetAll("allow")) request.add_allow(code);
  return request;
}

// A failed check fails the verdict only through an ERROR finding of its
// code; a check whose findings are warnings (or allowed errors) is a warning.
bool FailsVerdict(const v1::Check& check, const v1::ValidateResponse& response) {
  if (check.skipped() || check.passed()) return false;
  for (const v1::Finding& f : response.findings()) {
    if (f.code() == check.code() && f.severity() == v1::SEVERITY_ERROR) return true;
  }
  return false;
}

std::string ResultName(const v1::Check& check, const v1::ValidateResponse& response) {
  if (check.skipped()) return "skipped";
  if (check.passed()) return "pass";
  return FailsVerdict(check, response) ? "FAIL" : "warning";
}

// The findings of `code`, one per line, with their figures.
std::string FindingsText(const v1::ValidateResponse& response, const std::string& code,
                         std::string* first_message) {
  std::string text;
  for (const v1::Finding& f : response.findings()) {
    if (f.code() != code) continue;
    if (first_message != nullptr && first_message->empty()) *first_message = f.message();
    text += absl::StrCat(SeverityName(f.severity()), " ", f.code(), " at ", f.field(), ": ",
                         f.message(), "\n");
    for (const auto& [key, value] : f.figures()) text += absl::StrFormat("  %s = %g\n", key, value);
  }
  return text;
}

JunitSuite ToJunit(const v1::ValidateResponse& response) {
  JunitSuite suite;
  suite.name = "capplan validate";
  for (const v1::Check& check : response.checks()) {
    JunitCase c;
    c.name = check.name();
    c.classname = absl::StrCat("capplan.validate.", absl::AsciiStrToLower(check.code()));
    if (check.skipped()) {
      c.skipped = check.detail();
    } else if (FailsVerdict(check, response)) {
      JunitProblem problem;
      problem.type = check.code();
      problem.text = FindingsText(response, check.code(), &problem.message);
      if (problem.message.empty()) problem.message = check.detail();
      c.failure = problem;
    } else if (!check.passed()) {
      c.system_out = absl::StrCat("warning: ", check.detail(), "\n",
                                  FindingsText(response, check.code(), nullptr));
    } else {
      c.system_out = check.detail();
    }
    suite.cases.push_back(std::move(c));
  }
  return suite;
}

void PrintValidation(const v1::ValidateResponse& response, std::ostream& out) {
  out << "verdict: " << (response.verdict() == v1::VERDICT_PASS ? "PASS" : "FAIL") << "\n\n";
  TextTable table({"SEVERITY", "CODE", "FIELD", "MESSAGE"});
  for (const v1::Finding& f : response.findings()) {
    table.AddRow({SeverityName(f.severity()), f.code(), f.field(), f.message()});
  }
  if (response.findings_size() > 0) {
    table.Print(out);
    out << "\n";
  }
  TextTable checks({"CHECK", "RESULT", "DETAIL"});
  for (const v1::Check& c : response.checks()) {
    checks.AddRow({c.name(), ResultName(c, response), c.detail()});
  }
  checks.Print(out);
}

}  // namespace

absl::StatusOr<v1::ValidateRequest> ParseValidateSpec(const std::string& path,
                                                      const std::string& text) {
  v1::ValidateRequest request;
  size_t first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    google::protobuf::util::JsonParseOptions options;
    options.ignore_unknown_fields = false;
    auto status = google::protobuf::util::JsonStringToMessage(text, &request, options);
    if (!status.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: not a valid ValidateRequest in JSON: %s", path, std::string(status.message())));
    }
    return request;
  }
  google::protobuf::TextFormat::Parser parser;
  FirstParseError errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(text, &request)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s:%s (a ValidateRequest in text format)", path, errors.ToString()));
  }
  return request;
}

absl::StatusOr<int> ValidateCommand(CliContext& ctx) {
  if (ctx.args.positional().size() != 1) {
    return absl::InvalidArgumentError(
        "usage: capplan validate (--spec FILE | --launch LINE "
        "(--gpu ID | --hardware-file FILE) | --model ID --gpu ID ...)");
  }
  CAPPLAN_ASSIGN_OR_RETURN(v1::ValidateRequest request, RequestFromFlags(ctx.args));
  CAPPLAN_ASSIGN_OR_RETURN(v1::ValidateResponse response, ctx.planner->Validate(request, nullptr));
  if (auto junit = ctx.args.Get("junit")) {
    absl::Status written = WriteFileAtomically(*junit, JunitXml(ToJunit(response)));
    if (!written.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("--junit = %s; %s", *junit, written.message()));
    }
  }
  if (ctx.json) {
    CAPPLAN_RETURN_IF_ERROR(PrintJson(response, ctx.out));
  } else {
    PrintValidation(response, ctx.out);
  }
  return response.verdict() == v1::VERDICT_PASS ? kExitOk : kExitFail;
}

CliCommandSpec ValidateCommandSpec() {
  std::vector<std::string> valued = DeploymentValuedFlags();
  for (const char* flag : {"spec", "launch", "input-tokens", "output-tokens", "ttft-p95", "tpot",
                           "e2e-p95", "users", "rps", "allow", "junit"}) {
    valued.push_back(flag);
  }
  for (const std::string& f : WorkloadShapeFlags()) valued.push_back(f);
  std::vector<std::string> switches = DeploymentSwitches();
  switches.push_back("synchronized");
  return {"validate", &ValidateCommand, valued, switches};
}

}  // namespace capplan::service
