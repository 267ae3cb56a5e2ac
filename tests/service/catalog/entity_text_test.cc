#include "service/catalog/entity_text.h"

#include <string>

#include "capplan/v1/catalog.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::HasSubstr;

constexpr ValidationRules kInline{.require_citations = false};

constexpr char kCardText[] = R"(# a card the catalogue lacks
id: "acme-x1-64gb"
vendor: "Acme"
name: "Acme X1 64GB"
memory_bytes: 68719476736
usable_memory_bytes: 68000000000
memory_bandwidth_bytes_per_second: 2.5e12
peak_compute { format: NUMBER_FORMAT_BF16 dense_flops_per_second: 5e14 }
)";

constexpr char kCardJson[] = R"({
  "id": "acme-x1-64gb",
  "vendor": "Acme",
  "name": "Acme X1 64GB",
  "memoryBytes": "68719476736",
  "usable_memory_bytes": 68000000000,
  "memory_bandwidth_bytes_per_second": 2.5e12,
  "peak_compute": [{"format": "NUMBER_FORMAT_BF16", "dense_flops_per_second": 5e14}]
})";

TEST(ParseEntityFile, ReadsTextFormatAndJsonAlike) {
  v1::Hardware from_text, from_json;
  ASSERT_TRUE(ParseEntityFile("card.txtpb", kCardText, kInline, &from_text).ok());
  ASSERT_TRUE(ParseEntityFile("card.json", kCardJson, kInline, &from_json).ok());
  EXPECT_EQ(from_text.SerializeAsString(), from_json.SerializeAsString());
  EXPECT_EQ(from_json.memory_bandwidth_bytes_per_second(), 2.5e12);
}

TEST(ParseEntityFile, DetectsTheFormatByExtensionThenByContent) {
  v1::Hardware h;
  // No telling extension: the leading '{' says JSON.
  EXPECT_TRUE(ParseEntityFile("card", kCardJson, kInline, &h).ok());
  EXPECT_TRUE(ParseEntityFile("card", kCardText, kInline, &h).ok());
  // The extension wins over the content: JSON text in a .txtpb is a text-format error.
  EXPECT_THAT(ParseEntityFile("card.txtpb", kCardJson, kInline, &h),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("card.txtpb:1:1: ")));
  EXPECT_THAT(ParseEntityFile("card.JSON", kCardText, kInline, &h),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("card.JSON:1:1: ")));
}

TEST(ParseEntityFile, TextSyntaxErrorsNameLineAndColumn) {
  v1::Hardware h;
  EXPECT_THAT(
      ParseEntityFile("card.txtpb", "id: \"x\"\nvendor \"Acme\"\n", kInline, &h),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("card.txtpb:2:8: Expected \":\"")));
  EXPECT_THAT(ParseEntityFile("card.txtpb", "id: \"x\"\n\n  bandwidth: 3\n", kInline, &h),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("card.txtpb:3:12: Message type \"capplan.v1.Hardware\" has no "
                                 "field named \"bandwidth\"")));
}

TEST(ParseEntityFile, TextValidationFindingsSitAtTheirField) {
  std::string text = kCardText;
  text.replace(text.find("2.5e12"), 6, "-1");
  v1::Hardware h;
  EXPECT_THAT(ParseEntityFile("card.txtpb", text, kInline, &h),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("card.txtpb:7:1: memory_bandwidth_bytes_per_second = -1; must be "
                                 "> 0")));
}

TEST(ParseEntityFile, JsonErrorsNameLineAndColumnToo) {
  v1::Hardware h;
  // A syntax error at its byte: the missing value after "vendor":.
  EXPECT_THAT(ParseEntityFile("card.json", "{\n  \"id\": \"x\",\n  \"vendor\": }\n", kInline, &h),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("card.json:3:13: not valid JSON here")));
  // A field the message lacks, at its key.
  EXPECT_THAT(ParseEntityFile("card.json", "{\n  \"id\": \"x\",\n   \"speed\": 1}", kInline, &h),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("card.json:3:4: ")));
  // A finding of the validator, at the key of the second peak_compute entry.
  std::string json = kCardJson;
  json.replace(json.find("}]"), 2,
               "},\n    {\"format\": \"NUMBER_FORMAT_FP8\", \"denseFlopsPerSecond\": -1}]");
  EXPECT_THAT(ParseEntityFile("card.json", json, kInline, &h),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("card.json:9:37: peak_compute[1].dense_flops_per_second = -1")));
}

TEST(ParseEntityFile, StructureIsCheckedAsForACatalogueFile) {
  v1::Hardware h;
  // The same peak twice, at the second one's line; in JSON too.
  const std::string text =
      std::string(kCardText) +
      "peak_compute { format: NUMBER_FORMAT_BF16 dense_flops_per_second: 5e14 }\n";
  EXPECT_THAT(ParseEntityFile("card.txtpb", text, kInline, &h),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("card.txtpb:9:1: peak_compute[1]; must not repeat "
                                 "peak_compute[0] (the same entry twice)")));
  std::string json = kCardJson;
  json.replace(json.find("}]"), 2,
               "},\n    {\"format\": \"NUMBER_FORMAT_BF16\", \"dense_flops_per_second\": 5e14}]");
  EXPECT_THAT(ParseEntityFile("card.json", json, kInline, &h),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("peak_compute[1]; must not repeat peak_compute[0]")));
}

TEST(ParseEntityFile, CitationsAreRequiredWhenTheRulesSaySo) {
  v1::Hardware h;
  EXPECT_THAT(ParseEntityFile("card.txtpb", kCardText, ValidationRules{}, &h),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("card.txtpb:5:1: memory_bytes has no citation")));
}

}  // namespace
}  // namespace capplan::service
