#include "service/catalog/entity_checks.h"

#include <string>

#include "capplan/v1/catalog.pb.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace capplan::service {
namespace {

using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

struct Utf8Case {
  std::string text;
  size_t first_invalid;
};

class FirstInvalidUtf8Test : public ::testing::TestWithParam<Utf8Case> {};

TEST_P(FirstInvalidUtf8Test, FindsTheFirstBadByte) {
  EXPECT_EQ(FirstInvalidUtf8(GetParam().text), GetParam().first_invalid);
}

constexpr size_t kValid = absl::string_view::npos;
INSTANTIATE_TEST_SUITE_P(
    Cases, FirstInvalidUtf8Test,
    ::testing::Values(Utf8Case{"", kValid}, Utf8Case{"plain ascii", kValid},
                      Utf8Case{"NVIDIA H100 \xc3\x97 8 \xe2\x80\x94 \xf0\x9f\x9a\x80", kValid},
                      Utf8Case{"A\xff", 1},             // never a UTF-8 byte
                      Utf8Case{"ab\xc3", 2},            // truncated sequence
                      Utf8Case{"\xc0\xaf", 0},          // overlong '/'
                      Utf8Case{"\xe0\x80\xaf", 0},      // overlong, three bytes
                      Utf8Case{"x\xed\xa0\x80", 1},     // a UTF-16 surrogate
                      Utf8Case{"\xf4\x90\x80\x80", 0},  // above U+10FFFF
                      Utf8Case{"ok\xe2\x82", 2},        // cut in the middle
                      Utf8Case{"\xe2\x28\xa1", 0}));    // bad continuation

v1::Model ModelFrom(const std::string& text) {
  v1::Model model;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &model)) << text;
  return model;
}

TEST(CheckEntityStructure, CleanEntityHasNoFindings) {
  EXPECT_THAT(CheckEntityStructure(ModelFrom(R"(id: "m" aliases: "a" aliases: "b"
      layer_blocks { repeat: 1 layers { count: 2 } } layer_blocks { repeat: 2 layers { count: 2 } })")),
              IsEmpty());
}

TEST(CheckEntityStructure, InvalidUtf8NamesTheFieldAndTheByte) {
  EXPECT_THAT(CheckEntityStructure(ModelFrom(R"(id: "m" family: "q\xffwen")")),
              ElementsAre(AllOf(Field(&Finding::field_path, "family"),
                                Field(&Finding::message,
                                      "family = \"q\\xffwen\"; must be valid UTF-8 (byte 2 is "
                                      "not)"))));
  EXPECT_THAT(
      CheckEntityStructure(ModelFrom(R"(id: "m" sources { document: "d" note: "\xc0\xaf" })")),
      ElementsAre(Field(&Finding::field_path, "sources[0].note")));
}

TEST(CheckEntityStructure, DuplicateRepeatedStringIsRefused) {
  EXPECT_THAT(CheckEntityStructure(ModelFrom(R"(id: "m" aliases: "a" aliases: "b" aliases: "a")")),
              ElementsAre(AllOf(Field(&Finding::field_path, "aliases[2]"),
                                Field(&Finding::message,
                                      "aliases[2] = \"a\"; must be unique (aliases[0] has it)"))));
}

TEST(CheckEntityStructure, DuplicateNamedEntryIsRefused) {
  v1::Baseline baseline;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"(id: "b" sweeps { name: "s" } sweeps { name: "t" } sweeps { name: "s" })", &baseline));
  EXPECT_THAT(
      CheckEntityStructure(baseline),
      ElementsAre(AllOf(Field(&Finding::field_path, "sweeps[2].name"),
                        Field(&Finding::message,
                              "sweeps[2].name = \"s\"; must be unique (sweeps[0].name has it)"))));
}

TEST(CheckEntityStructure, IdenticalUnnamedEntriesAreRefused) {
  v1::Baseline baseline;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(
      R"(id: "b" sweeps { name: "s" rows { concurrency: 1 } rows { concurrency: 2 }
                                    rows { concurrency: 1 } })",
      &baseline));
  EXPECT_THAT(CheckEntityStructure(baseline),
              ElementsAre(AllOf(Field(&Finding::field_path, "sweeps[0].rows[2]"),
                                Field(&Finding::message,
                                      "sweeps[0].rows[2]; must not repeat sweeps[0].rows[0] "
                                      "(the same entry twice)"))));
}

TEST(CheckEntityStructure, ALayerStackMayRepeatItsLayers) {
  EXPECT_THAT(CheckEntityStructure(ModelFrom(R"(id: "m" layer_blocks { repeat: 4
      layers { count: 3 attention: ATTENTION_KIND_LINEAR } layers { count: 1 }
      layers { count: 3 attention: ATTENTION_KIND_LINEAR } layers { count: 1 } }
      layer_blocks { repeat: 4 layers { count: 1 } })")),
              IsEmpty());
}

TEST(CheckEntityStructure, AMillionDuplicatesGiveAShortList) {
  v1::Model model;
  model.set_id("m");
  for (int i = 0; i < 1000000; ++i) model.add_aliases("same");
  EXPECT_THAT(CheckEntityStructure(model), SizeIs(kMaxStructureFindings));
}

}  // namespace
}  // namespace capplan::service
