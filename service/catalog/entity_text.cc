#include "service/catalog/entity_text.h"

#include <optional>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "service/catalog/entity_checks.h"
#include "service/catalog/json_locate.h"
#include "service/catalog/text_proto.h"

namespace capplan::service {
namespace {

bool LooksLikeJson(const std::string& display, const std::string& text) {
  const std::string lower = absl::AsciiStrToLower(display);
  if (absl::EndsWith(lower, ".json")) return true;
  for (const char* ext : {".txtpb", ".textproto", ".pbtxt", ".prototxt"}) {
    if (absl::EndsWith(lower, ext)) return false;
  }
  const size_t first = text.find_first_not_of(" \t\r\n");
  return first != std::string::npos && text[first] == '{';
}

// The findings as the error of the whole entity, one per line, each placed by
// `where` ("display:line:column: " or "display: ").
template <typename Where>
absl::Status FindingsError(const std::vector<Finding>& findings, Where where) {
  std::vector<std::string> lines;
  for (const Finding& finding : findings) lines.push_back(where(finding) + finding.message);
  return absl::InvalidArgumentError(absl::StrJoin(lines, "\n"));
}

// Encoding and duplicates first (CheckEntityStructure): the per-kind rules
// assume both.
std::vector<Finding> Check(const google::protobuf::Message& entity, const ValidationRules& rules) {
  std::vector<Finding> findings = CheckEntityStructure(entity);
  if (findings.empty()) findings = ValidateEntity(entity, rules);
  return findings;
}

}  // namespace

absl::Status ParseTextEntity(const std::string& display, const std::string& text,
                             const ValidationRules& rules, google::protobuf::Message* message) {
  google::protobuf::TextFormat::Parser parser;
  FirstParseError errors;
  parser.RecordErrorsTo(&errors);
  google::protobuf::TextFormat::ParseInfoTree locations;
  parser.WriteLocationsTo(&locations);
  if (!parser.ParseFromString(text, message)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s:%d:%d: %s", display, errors.line(), errors.column(),
                        errors.has_error() ? errors.message() : "parse error"));
  }
  std::vector<Finding> findings = Check(*message, rules);
  if (findings.empty()) return absl::OkStatus();
  return FindingsError(findings, [&](const Finding& f) {
    const Location at = LocateField(*message, locations, f.field_path);
    return absl::StrFormat("%s:%d:%d: ", display, at.line, at.column);
  });
}

absl::Status ParseEntityFile(const std::string& display, const std::string& text,
                             const ValidationRules& rules, google::protobuf::Message* message) {
  if (!LooksLikeJson(display, text)) return ParseTextEntity(display, text, rules, message);
  const std::string type = message->GetDescriptor()->name();
  if (std::optional<size_t> bad = JsonSyntaxErrorOffset(text)) {
    const Location at = LocationOfOffset(text, *bad);
    return absl::InvalidArgumentError(
        absl::StrFormat("%s:%d:%d: not valid JSON here (a %s in JSON expected)", display, at.line,
                        at.column, type));
  }
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  const auto status = google::protobuf::util::JsonStringToMessage(text, message, options);
  if (!status.ok()) {
    // The parser's message starts with the field it refused: "foo: Cannot find
    // field." or "(memory_bytes): invalid value ...".
    const std::string reason(status.message());
    std::string field = reason.substr(0, reason.find(": "));
    field = std::string(absl::StripSuffix(absl::StripPrefix(field, "("), ")"));
    const Location at = LocateJsonKey(text, field);
    return absl::InvalidArgumentError(
        absl::StrFormat("%s:%d:%d: not a valid %s: %s", display, at.line, at.column, type, reason));
  }
  std::vector<Finding> findings = Check(*message, rules);
  if (findings.empty()) return absl::OkStatus();
  return FindingsError(findings, [&](const Finding& f) {
    const Location at = LocateJsonKey(text, f.field_path);
    return absl::StrFormat("%s:%d:%d: ", display, at.line, at.column);
  });
}

}  // namespace capplan::service
