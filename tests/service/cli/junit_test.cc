#include "service/cli/junit.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace capplan::service {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kPython[] = "/usr/bin/python3";

// A file in the test's temporary directory, removed with the object.
class TempFile {
 public:
  explicit TempFile(const std::string& stem) {
    const char* dir = std::getenv("TEST_TMPDIR");
    path_ = absl::StrCat(dir != nullptr ? dir : "/tmp", "/capplan_junit_", stem, "_", getpid());
  }
  ~TempFile() { std::remove(path_.c_str()); }
  const std::string& path() const { return path_; }
  void Write(const std::string& text) const {
    std::ofstream out(path_, std::ios::binary);
    out << text;
  }
  std::string Read() const {
    std::ifstream in(path_, std::ios::binary);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
  }

 private:
  std::string path_;
};

// The Python checks are part of the suite: without Python they fail (never
// skip), naming what to install.
bool HavePython() { return access(kPython, X_OK) == 0; }
constexpr char kMissingPython[] =
    "/usr/bin/python3 not found: install python3 (scripts/test.sh installs it); the JUnit "
    "document cannot be checked against Python's XML parser without it";

// Exit status of Python's own XML parser on the document.
int ParseWithPython(const std::string& xml) {
  TempFile file("doc.xml");
  file.Write(xml);
  std::string command =
      absl::StrCat(kPython, " -c \"import xml.etree.ElementTree as E,sys; E.parse(sys.argv[1])\" '",
                   file.path(), "' 2>/dev/null");
  return std::system(command.c_str());
}

// Every element as Python's parser reads it: {"elements": [{"tag", "attrib",
// "text"}, ...]} in document order, decoded into a Struct.
google::protobuf::Struct ElementsSeenByPython(const std::string& xml) {
  TempFile doc("seen.xml");
  TempFile dump("seen.json");
  doc.Write(xml);
  std::string script =
      "import json,sys,xml.etree.ElementTree as E\n"
      "r=E.parse(sys.argv[1]).getroot()\n"
      "out=[{'tag':e.tag,'attrib':dict(e.attrib),'text':e.text or ''} for e in r.iter()]\n"
      "open(sys.argv[2],'w',encoding='utf-8').write(json.dumps({'elements':out}))\n";
  TempFile script_file("seen.py");
  script_file.Write(script);
  std::string command =
      absl::StrCat(kPython, " '", script_file.path(), "' '", doc.path(), "' '", dump.path(), "'");
  google::protobuf::Struct parsed;
  if (std::system(command.c_str()) != 0) return parsed;
  google::protobuf::util::JsonParseOptions options;
  if (!google::protobuf::util::JsonStringToMessage(dump.Read(), &parsed, options).ok()) {
    parsed.Clear();
  }
  return parsed;
}

// Text with everything XML must escape, control characters, ill-formed
// UTF-8 and a few well-formed multi-byte characters.
const std::string& NastyText() {
  static const std::string* const kText =
      new std::string(std::string("a & b < c > d \"e\" 'f' ]]> <!-- x --> \t tab\nline\r\n") +
                      std::string("nul:") + std::string(1, '\0') + "bell:\x07 esc:\x1b" +
                      " bad:\xC3 \xFF\xFE lone:\xE2\x82 over:\xC0\xAF surrogate:\xED\xA0\x80" +
                      " ok:\xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x9A\x80 nonchar:\xEF\xBF\xBF");
  return *kText;
}

JunitSuite MixedSuite() {
  JunitSuite suite;
  suite.name = "capplan validate";
  JunitCase pass{"DOES_NOT_FIT", "capplan.validate.memory", 0.002, {}, {}, {}, {}};
  JunitCase pass2{"TTFT_SLO_MISSED", "capplan.validate.latency", {}, {}, {}, {}, "p95 0.41 s"};
  JunitCase fail{"KV_POOL_BELOW_ONE_REQUEST",
                 "capplan.validate.memory",
                 0.001,
                 JunitProblem{"KV pool holds 0.61 requests of 131072 tokens",
                              "KV_POOL_BELOW_ONE_REQUEST", "kv_pool_tokens = 79872 < 131072"},
                 {},
                 {},
                 {}};
  JunitCase fail2{"NO_QUALITY_EVIDENCE",
                  "capplan.validate.quality",
                  {},
                  JunitProblem{NastyText(), "NO_QUALITY_EVIDENCE", NastyText()},
                  {},
                  {},
                  NastyText()};
  JunitCase error{"UNKNOWN_ENGINE_VERSION",
                  "capplan.validate.engine",
                  {},
                  {},
                  JunitProblem{"version 9.9 is unknown", "UNKNOWN_ENGINE_VERSION", ""},
                  {},
                  {}};
  JunitCase skipped{"UNSTABLE_LOAD",
                    "capplan.validate.load",
                    {},
                    {},
                    {},
                    std::string("no expected load given"),
                    {}};
  suite.cases = {pass, pass2, fail, fail2, error, skipped};
  return suite;
}

// ---------------------------------------------------------- well-formedness

TEST(JunitXml, PythonParsesAMixedSuite) {
  ASSERT_TRUE(HavePython()) << kMissingPython;
  EXPECT_EQ(ParseWithPython(JunitXml(MixedSuite())), 0) << JunitXml(MixedSuite());
}

TEST(JunitXml, PythonRejectsABrokenDocument) {
  // The check itself can fail: an unescaped & and a control byte are refused.
  ASSERT_TRUE(HavePython()) << kMissingPython;
  EXPECT_NE(ParseWithPython("<testsuites><testsuite name=\"a & b\"/></testsuites>"), 0);
  EXPECT_NE(ParseWithPython(std::string("<testsuites>\x01</testsuites>")), 0);
}

TEST(JunitXml, PythonParsesAnEmptySuite) {
  ASSERT_TRUE(HavePython()) << kMissingPython;
  JunitSuite empty;
  empty.name = "";
  std::string xml = JunitXml(empty);
  EXPECT_EQ(ParseWithPython(xml), 0) << xml;
  EXPECT_THAT(xml, HasSubstr("tests=\"0\" failures=\"0\" errors=\"0\" skipped=\"0\""));
}

TEST(JunitXml, PythonReadsBackWhatWasWritten) {
  ASSERT_TRUE(HavePython()) << kMissingPython;
  google::protobuf::Struct seen = ElementsSeenByPython(JunitXml(MixedSuite()));
  ASSERT_TRUE(seen.fields().contains("elements")) << "Python could not read the document";
  const auto& elements = seen.fields().at("elements").list_value().values();
  // testsuites, testsuite, 6 testcases, 2 failures, 1 error, 1 skipped, 2 system-out.
  ASSERT_EQ(elements.size(), 14);
  auto tag = [&](int i) { return elements[i].struct_value().fields().at("tag").string_value(); };
  auto attr = [&](int i, const std::string& name) {
    const auto& a = elements[i].struct_value().fields().at("attrib").struct_value().fields();
    return a.contains(name) ? a.at(name).string_value() : std::string("<absent>");
  };
  auto text = [&](int i) { return elements[i].struct_value().fields().at("text").string_value(); };
  EXPECT_EQ(tag(0), "testsuites");
  EXPECT_EQ(tag(1), "testsuite");
  EXPECT_EQ(attr(1, "name"), "capplan validate");
  EXPECT_EQ(attr(1, "tests"), "6");
  EXPECT_EQ(attr(1, "failures"), "2");
  EXPECT_EQ(attr(1, "errors"), "1");
  EXPECT_EQ(attr(1, "skipped"), "1");
  EXPECT_EQ(attr(0, "tests"), "6");

  // The nasty text as a parser must decode it: entities undone, tab and
  // newline kept in attributes (written as character references), CR kept,
  // control bytes visible as \xNN, ill-formed UTF-8 and U+FFFF as U+FFFD.
  const std::string fffd = "\xEF\xBF\xBD";
  const std::string decoded =
      "a & b < c > d \"e\" 'f' ]]> <!-- x --> \t tab\nline\r\n"
      "nul:\\x00bell:\\x07 esc:\\x1B bad:" +
      fffd + " " + fffd + fffd + " lone:" + fffd + fffd + " over:" + fffd + fffd +
      " surrogate:" + fffd + fffd + fffd +
      " ok:\xE4\xB8\xAD\xE6\x96\x87 \xF0\x9F\x9A\x80 nonchar:" + fffd;
  int failure_with_nasty_text = -1;
  for (int i = 0; i < elements.size(); ++i) {
    if (tag(i) == "failure" && attr(i, "type") == "NO_QUALITY_EVIDENCE") {
      failure_with_nasty_text = i;
    }
  }
  ASSERT_GE(failure_with_nasty_text, 0);
  EXPECT_EQ(attr(failure_with_nasty_text, "message"), decoded);
  EXPECT_EQ(text(failure_with_nasty_text), decoded);
  EXPECT_EQ(text(failure_with_nasty_text + 1), decoded);  // its <system-out>
  EXPECT_EQ(tag(failure_with_nasty_text + 1), "system-out");
}

// ----------------------------------------------------------- by hand

struct EscapeCase {
  const char* name;
  std::string input;
  bool attribute;
  std::string expected;
};

void PrintTo(const EscapeCase& c, std::ostream* os) { *os << c.name; }

class XmlEscapeTest : public ::testing::TestWithParam<EscapeCase> {};

TEST_P(XmlEscapeTest, EscapesAsXmlRequires) {
  EXPECT_EQ(XmlEscape(GetParam().input, GetParam().attribute), GetParam().expected);
}

INSTANTIATE_TEST_SUITE_P(
    All, XmlEscapeTest,
    ::testing::Values(
        EscapeCase{"FiveEntitiesInText", "&<>\"'", false, "&amp;&lt;&gt;&quot;&apos;"},
        EscapeCase{"FiveEntitiesInAttribute", "&<>\"'", true, "&amp;&lt;&gt;&quot;&apos;"},
        EscapeCase{"AlreadyEscapedIsEscapedAgain", "&amp;", false, "&amp;amp;"},
        EscapeCase{"WhitespaceInText", "a\tb\nc\rd", false, "a\tb\nc&#13;d"},
        EscapeCase{"WhitespaceInAttribute", "a\tb\nc\rd", true, "a&#9;b&#10;c&#13;d"},
        EscapeCase{"ControlCharacters", std::string("\0\x01\x1f", 3), false, "\\x00\\x01\\x1F"},
        EscapeCase{"DeleteIsAllowed", "\x7f", false, "\x7f"},
        EscapeCase{"MultiByteKept", "\xE4\xB8\xAD \xF0\x9F\x9A\x80", true,
                   "\xE4\xB8\xAD \xF0\x9F\x9A\x80"},
        EscapeCase{"StrayContinuationByte", "a\x80z", false, "a\xEF\xBF\xBDz"},
        EscapeCase{"TruncatedSequenceAtEnd", "a\xE4\xB8", false, "a\xEF\xBF\xBD\xEF\xBF\xBD"},
        EscapeCase{"OverlongSlash", "\xC0\xAF", false, "\xEF\xBF\xBD\xEF\xBF\xBD"},
        EscapeCase{"NonCharacterFFFE", "\xEF\xBF\xBE", false, "\xEF\xBF\xBD"},
        EscapeCase{"BeyondUnicode", "\xF4\x90\x80\x80", false,
                   "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD"},
        EscapeCase{"PlainTextUnchanged", "KV_POOL_BELOW_ONE_REQUEST", true,
                   "KV_POOL_BELOW_ONE_REQUEST"}),
    [](const ::testing::TestParamInfo<EscapeCase>& info) { return info.param.name; });

TEST(JunitXml, CountsAndStructureByHand) {
  std::string xml = JunitXml(MixedSuite());
  EXPECT_EQ(xml.rfind("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n", 0), 0u);
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"capplan validate\" tests=\"6\" failures=\"2\" "
                             "errors=\"1\" skipped=\"1\" time=\"0.003\">"));
  EXPECT_THAT(xml, HasSubstr("<testcase name=\"DOES_NOT_FIT\" "
                             "classname=\"capplan.validate.memory\" time=\"0.002\"/>"));
  EXPECT_THAT(xml, HasSubstr("<failure message=\"KV pool holds 0.61 requests of 131072 "
                             "tokens\" type=\"KV_POOL_BELOW_ONE_REQUEST\">kv_pool_tokens = "
                             "79872 &lt; 131072</failure>"));
  EXPECT_THAT(xml, HasSubstr("<error message=\"version 9.9 is unknown\" "
                             "type=\"UNKNOWN_ENGINE_VERSION\"/>"));
  EXPECT_THAT(xml, HasSubstr("<skipped message=\"no expected load given\"/>"));
  EXPECT_THAT(xml, HasSubstr("<system-out>p95 0.41 s</system-out>"));
  // Exactly one root, opened once and closed last.
  EXPECT_EQ(xml.find("<testsuites"), xml.rfind("<testsuites"));
  EXPECT_EQ(xml.substr(xml.size() - std::string("</testsuites>\n").size()), "</testsuites>\n");
  // Nothing raw from the nasty text reaches the document.
  EXPECT_THAT(xml, Not(HasSubstr("]]> <!--")));
  EXPECT_EQ(xml.find('\0'), std::string::npos);
  EXPECT_EQ(xml.find('\x07'), std::string::npos);
}

TEST(JunitXml, ErrorOutranksFailureInOneCase) {
  JunitSuite suite;
  suite.name = "s";
  JunitCase both{"X", "c", {}, JunitProblem{"f", "F", ""}, JunitProblem{"e", "E", ""}, {}, {}};
  suite.cases = {both};
  std::string xml = JunitXml(suite);
  EXPECT_THAT(xml, HasSubstr("tests=\"1\" failures=\"0\" errors=\"1\" skipped=\"0\""));
  EXPECT_THAT(xml, HasSubstr("<error message=\"e\""));
  EXPECT_THAT(xml, Not(HasSubstr("<failure")));
}

TEST(JunitXml, SuiteTimeOverridesTheSumOfCases) {
  JunitSuite suite = MixedSuite();
  suite.time_seconds = 1.25;
  EXPECT_THAT(JunitXml(suite), HasSubstr("skipped=\"1\" time=\"1.250\">"));
}

TEST(JunitXml, SeveralSuitesSumUnderOneRoot) {
  JunitSuite a = MixedSuite();
  JunitSuite b;
  b.name = "second";
  b.cases = {JunitCase{"ok", "c", {}, {}, {}, {}, {}},
             JunitCase{"bad", "c", {}, JunitProblem{"m", "T", ""}, {}, {}, {}}};
  std::string xml = JunitXml({a, b}, "capplan & co");
  EXPECT_THAT(xml, HasSubstr("<testsuites name=\"capplan &amp; co\" tests=\"8\" failures=\"3\" "
                             "errors=\"1\" skipped=\"1\""));
  EXPECT_THAT(xml, HasSubstr("<testsuite name=\"second\" tests=\"2\" failures=\"1\" errors=\"0\" "
                             "skipped=\"0\""));
  ASSERT_TRUE(HavePython()) << kMissingPython;
  EXPECT_EQ(ParseWithPython(xml), 0) << xml;
}

TEST(JunitXml, SkippedWithoutReasonIsAnEmptyElement) {
  JunitSuite suite;
  suite.name = "s";
  suite.cases = {JunitCase{"X", "c", {}, {}, {}, std::string(), {}}};
  EXPECT_THAT(JunitXml(suite), HasSubstr("<skipped/>"));
}

}  // namespace
}  // namespace capplan::service
