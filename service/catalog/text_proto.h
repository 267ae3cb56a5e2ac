// Text-format protobuf parsing with the position of the first error.
#ifndef CAPPLAN_SERVICE_CATALOG_TEXT_PROTO_H_
#define CAPPLAN_SERVICE_CATALOG_TEXT_PROTO_H_

#include <string>

#include "absl/strings/str_format.h"
#include "google/protobuf/io/tokenizer.h"

namespace capplan::service {

// Keeps the first error a TextFormat::Parser reports (1-based line and
// column); warnings are ignored.
class FirstParseError : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (has_error_) return;
    has_error_ = true;
    line_ = line + 1;
    column_ = column + 1;
    message_ = message;
  }
  void AddWarning(int, google::protobuf::io::ColumnNumber, const std::string&) override {}

  bool has_error() const { return has_error_; }
  int line() const { return line_; }
  int column() const { return column_; }
  const std::string& message() const { return message_; }
  // "line:column: message", or "parse error" when nothing was reported.
  std::string ToString() const {
    return has_error_ ? absl::StrFormat("%d:%d: %s", line_, column_, message_) : "parse error";
  }

 private:
  bool has_error_ = false;
  int line_ = 0;
  int column_ = 0;
  std::string message_;
};

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CATALOG_TEXT_PROTO_H_
