#include "service/catalog/json_locate.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace capplan::service {
namespace {

constexpr int kMaxDepth = 64;

// A recursive-descent reader that stops at the first byte it cannot accept.
class JsonScanner {
 public:
  explicit JsonScanner(absl::string_view text) : text_(text) {}

  // True when the whole text is one value; otherwise pos() is the error.
  bool Document() {
    if (!Value(0)) return false;
    Blank();
    return pos_ == text_.size();
  }
  size_t pos() const { return pos_; }

 private:
  bool AtEnd() const { return pos_ >= text_.size(); }
  char Peek() const { return AtEnd() ? '\0' : text_[pos_]; }
  void Blank() {
    while (!AtEnd() && (Peek() == ' ' || Peek() == '\t' || Peek() == '\n' || Peek() == '\r')) {
      ++pos_;
    }
  }
  bool Eat(char c) {
    Blank();
    if (Peek() != c) return false;
    ++pos_;
    return true;
  }

  bool Value(int depth) {
    Blank();
    if (depth > kMaxDepth) return false;
    switch (Peek()) {
      case '{':
        return Container(depth, '}', true);
      case '[':
        return Container(depth, ']', false);
      case '"':
        return String();
      case 't':
        return Literal("true");
      case 'f':
        return Literal("false");
      case 'n':
        return Literal("null");
      default:
        return Number();
    }
  }

  // An object (keyed) or an array: '{' or '[' already under pos_.
  bool Container(int depth, char close, bool keyed) {
    ++pos_;
    if (Eat(close)) return true;
    while (true) {
      if (keyed) {
        Blank();
        if (!String() || !Eat(':')) return false;
      }
      if (!Value(depth + 1)) return false;
      if (Eat(close)) return true;
      if (!Eat(',')) return false;
    }
  }

  bool String() {
    if (Peek() != '"') return false;
    ++pos_;
    while (!AtEnd()) {
      const unsigned char c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        return true;
      }
      if (c < 0x20) return false;
      if (c == '\\') {
        ++pos_;
        if (Peek() == 'u') {
          for (int i = 0; i < 4; ++i) {
            ++pos_;
            if (!absl::ascii_isxdigit(Peek())) return false;
          }
        } else if (std::string("\"\\/bfnrt").find(Peek()) == std::string::npos || AtEnd()) {
          return false;
        }
      }
      ++pos_;
    }
    return false;
  }

  bool Literal(absl::string_view word) {
    for (char c : word) {
      if (Peek() != c) return false;
      ++pos_;
    }
    return true;
  }

  bool Digits() {
    if (!absl::ascii_isdigit(Peek())) return false;
    while (absl::ascii_isdigit(Peek())) ++pos_;
    return true;
  }

  bool Number() {
    if (Peek() == '-') ++pos_;
    if (Peek() == '0') {
      ++pos_;
    } else if (!Digits()) {
      return false;
    }
    if (Peek() == '.') {
      ++pos_;
      if (!Digits()) return false;
    }
    if (Peek() == 'e' || Peek() == 'E') {
      ++pos_;
      if (Peek() == '+' || Peek() == '-') ++pos_;
      if (!Digits()) return false;
    }
    return true;
  }

  absl::string_view text_;
  size_t pos_ = 0;
};

std::string LowerCamel(absl::string_view snake) {
  std::string out;
  bool upper = false;
  for (char c : snake) {
    if (c == '_') {
      upper = true;
      continue;
    }
    out.push_back(upper ? absl::ascii_toupper(c) : c);
    upper = false;
  }
  return out;
}

// Offsets of `"key"` followed by blanks and ':'.
std::vector<size_t> KeyOffsets(absl::string_view text, absl::string_view key) {
  std::vector<size_t> offsets;
  const std::string quoted = absl::StrCat("\"", key, "\"");
  for (size_t at = text.find(quoted); at != absl::string_view::npos;
       at = text.find(quoted, at + 1)) {
    size_t after = at + quoted.size();
    while (after < text.size() && absl::ascii_isspace(text[after])) ++after;
    if (after < text.size() && text[after] == ':') offsets.push_back(at);
  }
  return offsets;
}

}  // namespace

std::optional<size_t> JsonSyntaxErrorOffset(absl::string_view text) {
  JsonScanner scanner(text);
  if (scanner.Document()) return std::nullopt;
  return scanner.pos();
}

Location LocationOfOffset(absl::string_view text, size_t offset) {
  Location at;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++at.line;
      at.column = 1;
    } else {
      ++at.column;
    }
  }
  return at;
}

Location LocateJsonKey(absl::string_view text, absl::string_view field_path) {
  int occurrence = 0;
  std::string leaf;
  for (absl::string_view part : absl::StrSplit(field_path, '.')) {
    const size_t bracket = part.find('[');
    int index = 0;
    if (bracket != absl::string_view::npos &&
        absl::SimpleAtoi(part.substr(bracket + 1, part.size() - bracket - 2), &index)) {
      occurrence = index;
    }
    leaf = std::string(part.substr(0, bracket));
  }
  std::vector<size_t> offsets = KeyOffsets(text, leaf);
  const std::string camel = LowerCamel(leaf);
  if (camel != leaf) {
    const std::vector<size_t> more = KeyOffsets(text, camel);
    offsets.insert(offsets.end(), more.begin(), more.end());
    std::sort(offsets.begin(), offsets.end());
  }
  if (offsets.empty()) return Location{};
  return LocationOfOffset(text, offsets[std::min<size_t>(occurrence, offsets.size() - 1)]);
}

}  // namespace capplan::service
