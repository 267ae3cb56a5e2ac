#ifndef CAPPLAN_SERVICE_CLI_JUNIT_H_
#define CAPPLAN_SERVICE_CLI_JUNIT_H_

// JUnit XML for CI systems (Jenkins, GitLab, GitHub test reporters):
// `capplan validate --junit FILE` writes one test case per check, and a
// failed check carries its finding.
//
// The output is one <testsuites> root holding <testsuite> elements with
// tests/failures/errors/skipped counts computed from the cases, in the
// de-facto schema those tools read (Ant's JUnit report format).

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace capplan::service {

// A <failure> or <error>: message and type become attributes, text the body.
struct JunitProblem {
  std::string message;  // one line: "KV pool holds 0.6 requests of 131072 tokens"
  std::string type;     // a stable code: "KV_POOL_BELOW_ONE_REQUEST"
  std::string text;     // free text, any length: figures, the field path
};

struct JunitCase {
  std::string name;       // the check: "KV_POOL_BELOW_ONE_REQUEST"
  std::string classname;  // groups cases in reports: "capplan.validate.memory"
  std::optional<double> time_seconds;
  std::optional<JunitProblem> failure;  // the check failed
  std::optional<JunitProblem> error;    // the check could not run
  std::optional<std::string> skipped;   // skipped, with the reason ("" = none given)
  std::optional<std::string> system_out;
};

struct JunitSuite {
  std::string name;  // "capplan validate"
  std::vector<JunitCase> cases;
  std::optional<double> time_seconds;
};

// The whole document, UTF-8, with an XML declaration.
std::string JunitXml(const JunitSuite& suite);
std::string JunitXml(const std::vector<JunitSuite>& suites, absl::string_view root_name);

// Text made safe for XML 1.0: & < > " ' become entities; in an attribute
// tab, newline and carriage return become character references (so parsers
// keep them); in text a carriage return does. Control characters XML 1.0
// cannot carry at all (U+0000–U+001F other than tab, newline, CR) are written
// visibly as "\xNN"; ill-formed UTF-8 and U+FFFE/U+FFFF become U+FFFD.
std::string XmlEscape(absl::string_view text, bool attribute);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_JUNIT_H_
