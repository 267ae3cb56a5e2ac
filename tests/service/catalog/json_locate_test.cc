#include "service/catalog/json_locate.h"

#include <string>

#include "gtest/gtest.h"

namespace capplan::service {
namespace {

TEST(JsonSyntaxErrorOffset, WellFormedDocumentsHaveNone) {
  for (const char* text :
       {"{}", " [1, -2.5e3, true, false, null] ", R"({"a": {"b": ["\u00e9\n", 0.5]}})", "0"}) {
    EXPECT_EQ(JsonSyntaxErrorOffset(text), std::nullopt) << text;
  }
}

TEST(JsonSyntaxErrorOffset, PointsAtTheFirstBadByte) {
  EXPECT_EQ(JsonSyntaxErrorOffset(R"({"a": 1,,})"), 8u);
  EXPECT_EQ(JsonSyntaxErrorOffset(R"({"a" 1})"), 5u);
  EXPECT_EQ(JsonSyntaxErrorOffset(R"({"a": 01})"), 7u);
  EXPECT_EQ(JsonSyntaxErrorOffset(R"({"a": tru})"), 9u);
  EXPECT_EQ(JsonSyntaxErrorOffset(R"({"a": "x"} trailing)"), 11u);
  EXPECT_EQ(JsonSyntaxErrorOffset(R"({"a": "unterminated)"), 19u);
  EXPECT_EQ(JsonSyntaxErrorOffset(R"(["\q"])"), 3u);
  EXPECT_EQ(JsonSyntaxErrorOffset(""), 0u);
}

TEST(JsonSyntaxErrorOffset, RefusesDeepNestingWithoutRecursingOnIt) {
  const std::string deep(100000, '[');
  EXPECT_EQ(JsonSyntaxErrorOffset(deep), 65u);
}

TEST(LocationOfOffset, CountsLinesAndColumnsFromOne) {
  EXPECT_EQ(LocationOfOffset("ab\ncd", 0).line, 1);
  EXPECT_EQ(LocationOfOffset("ab\ncd", 4).line, 2);
  EXPECT_EQ(LocationOfOffset("ab\ncd", 4).column, 2);
}

TEST(LocateJsonKey, FindsTheKeyUnderEitherSpellingAndTheIndexedOccurrence) {
  const std::string text =
      "{\n \"memoryBytes\": 1,\n \"peak_compute\": [\n  {\"dense_flops_per_second\": 1},\n"
      "  {\"denseFlopsPerSecond\": 2}]}";
  Location at = LocateJsonKey(text, "memory_bytes");
  EXPECT_EQ(at.line, 2);
  EXPECT_EQ(at.column, 2);
  at = LocateJsonKey(text, "peak_compute[1].dense_flops_per_second");
  EXPECT_EQ(at.line, 5);
  EXPECT_EQ(at.column, 4);
  // A key inside a string value is not a key.
  at = LocateJsonKey("{\"id\": \"\\\"name\\\": x\",\n\"name\": 1}", "name");
  EXPECT_EQ(at.line, 2);
  // Absent: the top of the file.
  at = LocateJsonKey(text, "power_watts");
  EXPECT_EQ(at.line, 1);
  EXPECT_EQ(at.column, 1);
}

}  // namespace
}  // namespace capplan::service
