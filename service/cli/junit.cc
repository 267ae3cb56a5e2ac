#include "service/cli/junit.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace capplan::service {
namespace {

constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD

// Length of the well-formed UTF-8 sequence at s[i] (and its code point), or
// 0 when the bytes there are not one.
size_t Utf8Sequence(absl::string_view s, size_t i, uint32_t* code_point) {
  auto byte = [&](size_t k) { return static_cast<unsigned char>(s[k]); };
  unsigned char b0 = byte(i);
  size_t len = 0;
  uint32_t cp = 0;
  if (b0 < 0x80) {
    *code_point = b0;
    return 1;
  } else if (b0 >= 0xC2 && b0 <= 0xDF) {
    len = 2;
    cp = b0 & 0x1F;
  } else if (b0 >= 0xE0 && b0 <= 0xEF) {
    len = 3;
    cp = b0 & 0x0F;
  } else if (b0 >= 0xF0 && b0 <= 0xF4) {
    len = 4;
    cp = b0 & 0x07;
  } else {
    return 0;
  }
  if (i + len > s.size()) return 0;
  for (size_t k = 1; k < len; ++k) {
    unsigned char b = byte(i + k);
    if ((b & 0xC0) != 0x80) return 0;
    cp = (cp << 6) | (b & 0x3F);
  }
  // Overlong forms, surrogates and values past U+10FFFF are ill-formed.
  if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
      (cp >= 0xD800 && cp <= 0xDFFF)) {
    return 0;
  }
  *code_point = cp;
  return len;
}

void AppendProblem(std::string* out, const char* element, const JunitProblem& p) {
  absl::StrAppend(out, "      <", element, " message=\"", XmlEscape(p.message, true), "\" type=\"",
                  XmlEscape(p.type, true), "\"");
  if (p.text.empty()) {
    absl::StrAppend(out, "/>\n");
  } else {
    absl::StrAppend(out, ">", XmlEscape(p.text, false), "</", element, ">\n");
  }
}

struct Counts {
  size_t tests = 0, failures = 0, errors = 0, skipped = 0;
  double time_seconds = 0;
};

Counts Count(const JunitSuite& suite) {
  Counts c;
  c.tests = suite.cases.size();
  for (const JunitCase& t : suite.cases) {
    if (t.error.has_value()) {
      ++c.errors;
    } else if (t.failure.has_value()) {
      ++c.failures;
    } else if (t.skipped.has_value()) {
      ++c.skipped;
    }
    c.time_seconds += t.time_seconds.value_or(0);
  }
  if (suite.time_seconds.has_value()) c.time_seconds = *suite.time_seconds;
  return c;
}

std::string CountAttributes(const Counts& c) {
  return absl::StrFormat("tests=\"%d\" failures=\"%d\" errors=\"%d\" skipped=\"%d\" time=\"%.3f\"",
                         c.tests, c.failures, c.errors, c.skipped, c.time_seconds);
}

void AppendSuite(std::string* out, const JunitSuite& suite) {
  absl::StrAppend(out, "  <testsuite name=\"", XmlEscape(suite.name, true), "\" ",
                  CountAttributes(Count(suite)), ">\n");
  for (const JunitCase& t : suite.cases) {
    absl::StrAppend(out, "    <testcase name=\"", XmlEscape(t.name, true), "\" classname=\"",
                    XmlEscape(t.classname, true), "\"");
    if (t.time_seconds.has_value()) {
      absl::StrAppend(out, absl::StrFormat(" time=\"%.3f\"", *t.time_seconds));
    }
    bool empty = !t.failure && !t.error && !t.skipped && !t.system_out;
    if (empty) {
      absl::StrAppend(out, "/>\n");
      continue;
    }
    absl::StrAppend(out, ">\n");
    // An error outranks a failure; a case carries at most one of them, or a skip.
    if (t.error.has_value()) {
      AppendProblem(out, "error", *t.error);
    } else if (t.failure.has_value()) {
      AppendProblem(out, "failure", *t.failure);
    } else if (t.skipped.has_value()) {
      if (t.skipped->empty()) {
        absl::StrAppend(out, "      <skipped/>\n");
      } else {
        absl::StrAppend(out, "      <skipped message=\"", XmlEscape(*t.skipped, true), "\"/>\n");
      }
    }
    if (t.system_out.has_value()) {
      absl::StrAppend(out, "      <system-out>", XmlEscape(*t.system_out, false),
                      "</system-out>\n");
    }
    absl::StrAppend(out, "    </testcase>\n");
  }
  absl::StrAppend(out, "  </testsuite>\n");
}

}  // namespace

std::string XmlEscape(absl::string_view text, bool attribute) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    uint32_t cp = 0;
    size_t len = Utf8Sequence(text, i, &cp);
    if (len == 0) {
      out.append(kReplacement);
      ++i;
      continue;
    }
    if (len > 1) {
      if (cp == 0xFFFE || cp == 0xFFFF) {
        out.append(kReplacement);
      } else {
        absl::StrAppend(&out, text.substr(i, len));
      }
      i += len;
      continue;
    }
    char c = text[i++];
    switch (c) {
      case '&':
        out.append("&amp;");
        break;
      case '<':
        out.append("&lt;");
        break;
      case '>':
        out.append("&gt;");
        break;
      case '"':
        out.append("&quot;");
        break;
      case '\'':
        out.append("&apos;");
        break;
      case '\t':
        out.append(attribute ? "&#9;" : "\t");
        break;
      case '\n':
        out.append(attribute ? "&#10;" : "\n");
        break;
      case '\r':
        out.append("&#13;");
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppend(&out, absl::StrFormat("\\x%02X", static_cast<unsigned char>(c)));
        } else {
          out.push_back(c);
        }
    }
  }
  return out;
}

std::string JunitXml(const std::vector<JunitSuite>& suites, absl::string_view root_name) {
  Counts total;
  for (const JunitSuite& s : suites) {
    Counts c = Count(s);
    total.tests += c.tests;
    total.failures += c.failures;
    total.errors += c.errors;
    total.skipped += c.skipped;
    total.time_seconds += c.time_seconds;
  }
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  absl::StrAppend(&out, "<testsuites name=\"", XmlEscape(root_name, true), "\" ",
                  CountAttributes(total), ">\n");
  for (const JunitSuite& s : suites) AppendSuite(&out, s);
  absl::StrAppend(&out, "</testsuites>\n");
  return out;
}

std::string JunitXml(const JunitSuite& suite) { return JunitXml({suite}, suite.name); }

}  // namespace capplan::service
