// JSON reading for the ingest parsers: a syntax check that knows positions
// (protobuf's reader does not say where it stopped), the rewrite of Python's
// non-finite literals, and typed key access with full key paths in errors.

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "google/protobuf/util/json_util.h"
#include "service/translate/ingest_internal.h"

namespace capplan::service::ingest_internal {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

constexpr int kMaxJsonDepth = 64;

// Line and column (1-based) of a byte offset.
std::string Position(absl::string_view text, size_t offset) {
  offset = std::min(offset, text.size());
  int line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < offset; ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return absl::StrCat("line ", line, ", column ", offset - line_start + 1);
}

bool IsJsonSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

// Checks the syntax of the top-level values of a text and collects each one's
// extent, rewriting the non-finite literals into strings on the way.
class JsonScanner {
 public:
  JsonScanner(absl::string_view file_name, absl::string_view text)
      : file_(file_name), text_(text) {}

  struct Extent {
    size_t begin = 0;
    std::string rewritten;  // empty: the original bytes [begin, end) are valid JSON
    size_t end = 0;
  };

  absl::StatusOr<std::vector<Extent>> Scan() {
    std::vector<Extent> out;
    SkipSpace();
    while (pos_ < text_.size()) {
      if (out.size() >= kMaxIngestRunsPerFile) {
        return absl::OutOfRangeError(absl::StrCat(file_, ": more than ", kMaxIngestRunsPerFile,
                                                  " JSON values; split the file"));
      }
      Extent e;
      e.begin = pos_;
      copied_ = pos_;
      rewritten_.clear();
      absl::Status s = ScanValue();
      if (!s.ok()) return s;
      e.end = pos_;
      if (copied_ != e.begin) {
        rewritten_.append(text_.data() + copied_, pos_ - copied_);
        e.rewritten = std::move(rewritten_);
      }
      out.push_back(std::move(e));
      SkipSpace();
    }
    return out;
  }

 private:
  enum class State { kValue, kValueOrEnd, kKeyOrEnd, kKey, kColon, kAfterValue };

  absl::Status ErrorAt(size_t offset, absl::string_view what) const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ": not valid JSON at ", Position(text_, offset), ": ", what));
  }
  absl::Status EndsEarly() const {
    return absl::InvalidArgumentError(
        absl::StrCat(file_, ": JSON ends early at ", Position(text_, text_.size()), " (byte ",
                     text_.size(), "): ", stack_.size(), " unclosed ",
                     stack_.size() == 1 ? "bracket" : "brackets", "; the file looks truncated"));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && IsJsonSpace(text_[pos_])) ++pos_;
  }
  bool At(absl::string_view word) const { return absl::StartsWith(text_.substr(pos_), word); }
  // Replaces [pos_, pos_ + length) by a JSON string holding the same word.
  void RewriteAsString(size_t length) {
    rewritten_.append(text_.data() + copied_, pos_ - copied_);
    absl::StrAppend(&rewritten_, "\"", text_.substr(pos_, length), "\"");
    pos_ += length;
    copied_ = pos_;
  }

  absl::Status ScanString() {
    ++pos_;
    while (pos_ < text_.size()) {
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return absl::OkStatus();
      }
      if (c < 0x20) return ErrorAt(pos_, "control character inside a string");
      if (c == '\\') {
        if (pos_ + 1 >= text_.size()) break;
        const char e = text_[pos_ + 1];
        if (e == 'u') {
          for (size_t i = 2; i < 6; ++i) {
            if (pos_ + i >= text_.size()) return EndsEarly();
            if (!absl::ascii_isxdigit(static_cast<unsigned char>(text_[pos_ + i]))) {
              return ErrorAt(pos_, "\\u must be followed by four hex digits");
            }
          }
          pos_ += 6;
          continue;
        }
        if (!absl::StrContains("\"\\/bfnrt", e)) return ErrorAt(pos_, "unknown escape");
        pos_ += 2;
        continue;
      }
      ++pos_;
    }
    return EndsEarly();
  }

  absl::Status ScanNumber() {
    const size_t start = pos_;
    auto digits = [&] {
      const size_t from = pos_;
      while (pos_ < text_.size() && absl::ascii_isdigit(static_cast<unsigned char>(text_[pos_]))) {
        ++pos_;
      }
      return pos_ - from;
    };
    auto need_digits = [&](absl::string_view what) {
      if (digits() > 0) return absl::OkStatus();
      return pos_ >= text_.size() ? EndsEarly() : ErrorAt(start, what);
    };
    if (text_[pos_] == '-') ++pos_;
    absl::Status s = need_digits("a number needs digits");
    if (s.ok() && pos_ < text_.size() && text_[pos_] == '.') {
      ++pos_;
      s = need_digits("a number needs digits after '.'");
    }
    if (s.ok() && pos_ < text_.size() && (text_[pos_] == 'e' || text_[pos_] == 'E')) {
      ++pos_;
      if (pos_ < text_.size() && (text_[pos_] == '+' || text_[pos_] == '-')) ++pos_;
      s = need_digits("a number needs digits in its exponent");
    }
    return s;
  }

  // A scalar or the opening of a container, at pos_.
  absl::Status ScanValueStart(State& state) {
    const char c = text_[pos_];
    if (c == '{' || c == '[') {
      if (static_cast<int>(stack_.size()) >= kMaxJsonDepth) {
        return ErrorAt(pos_, absl::StrCat("nested deeper than ", kMaxJsonDepth));
      }
      stack_.push_back(c);
      ++pos_;
      state = c == '{' ? State::kKeyOrEnd : State::kValueOrEnd;
      return absl::OkStatus();
    }
    state = State::kAfterValue;
    if (c == '"') return ScanString();
    for (absl::string_view word : {"-Infinity", "Infinity", "NaN"}) {
      if (At(word)) {
        RewriteAsString(word.size());
        return absl::OkStatus();
      }
    }
    if (c == '-' || absl::ascii_isdigit(static_cast<unsigned char>(c))) return ScanNumber();
    for (absl::string_view word : {"true", "false", "null"}) {
      if (At(word)) {
        pos_ += word.size();
        return absl::OkStatus();
      }
    }
    for (absl::string_view word : {"-Infinity", "Infinity", "NaN", "true", "false", "null"}) {
      if (absl::StartsWith(word, text_.substr(pos_))) return EndsEarly();
    }
    return ErrorAt(pos_, "expected a value");
  }

  absl::Status ScanAfterValue(State& state, bool& done) {
    if (stack_.empty()) {
      done = true;
      return absl::OkStatus();
    }
    const char c = text_[pos_];
    const char top = stack_.back();
    if (c == ',') {
      ++pos_;
      state = top == '{' ? State::kKey : State::kValue;
    } else if ((c == '}' && top == '{') || (c == ']' && top == '[')) {
      ++pos_;
      stack_.pop_back();
    } else {
      return ErrorAt(pos_, top == '{' ? "expected ',' or '}'" : "expected ',' or ']'");
    }
    return absl::OkStatus();
  }

  absl::Status ScanValue() {
    State state = State::kValue;
    for (;;) {
      if (state == State::kAfterValue && stack_.empty()) return absl::OkStatus();
      SkipSpace();
      if (pos_ >= text_.size()) return EndsEarly();
      const char c = text_[pos_];
      absl::Status s;
      switch (state) {
        case State::kValueOrEnd:
          if (c == ']') {
            ++pos_;
            stack_.pop_back();
            state = State::kAfterValue;
            break;
          }
          [[fallthrough]];
        case State::kValue:
          s = ScanValueStart(state);
          break;
        case State::kKeyOrEnd:
          if (c == '}') {
            ++pos_;
            stack_.pop_back();
            state = State::kAfterValue;
            break;
          }
          [[fallthrough]];
        case State::kKey:
          if (c != '"') return ErrorAt(pos_, "expected a key in double quotes");
          s = ScanString();
          state = State::kColon;
          break;
        case State::kColon:
          if (c != ':') return ErrorAt(pos_, "expected ':' after a key");
          ++pos_;
          state = State::kValue;
          break;
        case State::kAfterValue: {
          bool done = false;
          s = ScanAfterValue(state, done);
          if (done) return absl::OkStatus();
          break;
        }
      }
      if (!s.ok()) return s;
    }
  }

  std::string file_;
  absl::string_view text_;
  size_t pos_ = 0;
  size_t copied_ = 0;
  std::string rewritten_;
  std::vector<char> stack_;
};

bool IsNonFiniteWord(const Value& v) {
  if (v.kind_case() != Value::kStringValue) return false;
  const std::string& s = v.string_value();
  return s == "NaN" || s == "Infinity" || s == "-Infinity";
}

}  // namespace

absl::StatusOr<std::vector<JsonDocument>> ParseJsonDocuments(absl::string_view file_name,
                                                             absl::string_view text) {
  JsonScanner scanner(file_name, text);
  absl::StatusOr<std::vector<JsonScanner::Extent>> extents = scanner.Scan();
  if (!extents.ok()) return extents.status();
  if (extents->empty()) {
    return absl::InvalidArgumentError(absl::StrCat(file_name, ": holds no JSON value"));
  }
  std::vector<JsonDocument> docs;
  docs.reserve(extents->size());
  size_t counted = 0;
  int line = 1;
  for (const JsonScanner::Extent& e : *extents) {
    line += static_cast<int>(std::count(text.begin() + counted, text.begin() + e.begin, '\n'));
    counted = e.begin;
    const absl::string_view json =
        e.rewritten.empty() ? text.substr(e.begin, e.end - e.begin) : e.rewritten;
    JsonDocument doc;
    doc.line = line;
    const auto status = google::protobuf::util::JsonStringToMessage(
        google::protobuf::StringPiece(json.data(), json.size()), &doc.value);
    if (!status.ok()) {
      const std::string message(status.message());
      const std::vector<absl::string_view> first =
          absl::StrSplit(message, absl::MaxSplits('\n', 1));
      return absl::InvalidArgumentError(absl::StrCat(file_name, ": JSON value starting on line ",
                                                     line, " not accepted: ", first[0]));
    }
    docs.push_back(std::move(doc));
  }
  return docs;
}

std::string ShowJson(const Value& v) {
  switch (v.kind_case()) {
    case Value::kNumberValue: {
      const double x = v.number_value();
      if (std::floor(x) == x && std::fabs(x) < 1e15) {
        return absl::StrCat(static_cast<int64_t>(x));
      }
      return absl::StrCat(x);
    }
    case Value::kStringValue:
      if (IsNonFiniteWord(v)) return v.string_value();
      return absl::StrCat("\"", absl::CHexEscape(v.string_value().substr(0, 80)),
                          v.string_value().size() > 80 ? "…" : "", "\"");
    case Value::kBoolValue:
      return v.bool_value() ? "true" : "false";
    case Value::kListValue:
      return "[...]";
    case Value::kStructValue:
      return "{...}";
    default:
      return "null";
  }
}

JsonObject::JsonObject(const Struct& object, std::string where, std::string path)
    : object_(&object), where_(std::move(where)), path_(std::move(path)) {}

std::string JsonObject::Path(absl::string_view key) const {
  return path_.empty() ? std::string(key) : absl::StrCat(path_, ".", key);
}

const Value* JsonObject::Find(absl::string_view key) const {
  auto it = object_->fields().find(std::string(key));
  if (it == object_->fields().end() || it->second.kind_case() == Value::kNullValue) {
    return nullptr;
  }
  return &it->second;
}

std::vector<std::string> JsonObject::SortedKeys() const {
  std::vector<std::string> keys;
  keys.reserve(object_->fields().size());
  for (const auto& [key, value] : object_->fields()) keys.push_back(key);
  std::sort(keys.begin(), keys.end());
  return keys;
}

absl::Status JsonObject::Error(absl::string_view key, const Value& value,
                               absl::string_view rule) const {
  return absl::InvalidArgumentError(
      absl::StrCat(where_, ": key \"", Path(key), "\" = ", ShowJson(value), "; ", rule));
}

absl::StatusOr<std::optional<double>> JsonObject::Figure(absl::string_view key) const {
  const Value* v = Find(key);
  if (v == nullptr) return std::optional<double>();
  if (IsNonFiniteWord(*v)) return Error(key, *v, "must be a finite number");
  if (v->kind_case() != Value::kNumberValue) return Error(key, *v, "must be a number");
  if (!std::isfinite(v->number_value())) return Error(key, *v, "must be a finite number");
  if (v->number_value() < 0) return Error(key, *v, "must not be negative");
  return std::optional<double>(v->number_value());
}

absl::StatusOr<std::optional<uint64_t>> JsonObject::Count(absl::string_view key, uint64_t min,
                                                          uint64_t max) const {
  const Value* v = Find(key);
  if (v == nullptr) return std::optional<uint64_t>();
  if (v->kind_case() != Value::kNumberValue || !std::isfinite(v->number_value()) ||
      std::floor(v->number_value()) != v->number_value()) {
    return Error(key, *v, "must be a whole number");
  }
  const double x = v->number_value();
  if (x < static_cast<double>(min)) return Error(key, *v, absl::StrCat("must be at least ", min));
  if (x > static_cast<double>(max)) return Error(key, *v, absl::StrCat("must be at most ", max));
  return std::optional<uint64_t>(static_cast<uint64_t>(x));
}

absl::StatusOr<std::optional<std::string>> JsonObject::String(absl::string_view key) const {
  const Value* v = Find(key);
  if (v == nullptr) return std::optional<std::string>();
  if (v->kind_case() != Value::kStringValue) return Error(key, *v, "must be a string");
  return std::optional<std::string>(v->string_value());
}

absl::StatusOr<std::optional<JsonObject>> JsonObject::Object(absl::string_view key) const {
  const Value* v = Find(key);
  if (v == nullptr) return std::optional<JsonObject>();
  if (v->kind_case() != Value::kStructValue) return Error(key, *v, "must be an object");
  return std::optional<JsonObject>(JsonObject(v->struct_value(), where_, Path(key)));
}

absl::StatusOr<const ListValue*> JsonObject::List(absl::string_view key) const {
  const Value* v = Find(key);
  if (v == nullptr) return static_cast<const ListValue*>(nullptr);
  if (v->kind_case() != Value::kListValue) return Error(key, *v, "must be a list");
  return &v->list_value();
}

absl::StatusOr<JsonObject> RootObject(const JsonDocument& doc, std::string where,
                                      absl::string_view what) {
  if (doc.value.kind_case() != Value::kStructValue) {
    return absl::InvalidArgumentError(absl::StrCat(
        where, ": the JSON value is ", ShowJson(doc.value), "; ", what, " must be a JSON object"));
  }
  return JsonObject(doc.value.struct_value(), std::move(where), "");
}

}  // namespace capplan::service::ingest_internal
