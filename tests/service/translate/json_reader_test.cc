#include "service/translate/json_reader.h"

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr size_t kMax = 1 << 20;

google::protobuf::Struct Parse(const std::string& json) {
  absl::StatusOr<google::protobuf::Struct> s = ParseJsonObject("config.json", json, kMax);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? *s : google::protobuf::Struct();
}

// --------------------------------------------------------------- parse

TEST(ParseJsonObject, ReadsAnObject) {
  const google::protobuf::Struct s = Parse(R"({"hidden_size": 4096, "name": "x"})");
  EXPECT_EQ(s.fields().size(), 2u);
  EXPECT_EQ(s.fields().at("hidden_size").number_value(), 4096);
}

TEST(ParseJsonObject, NotAnObjectNamesTheDocument) {
  EXPECT_THAT(
      ParseJsonObject("config.json", "[1, 2]", kMax),
      StatusIs(absl::StatusCode::kInvalidArgument, StartsWith("config.json: not a JSON object: ")));
  EXPECT_THAT(
      ParseJsonObject("bench.json", "{\"a\": ", kMax),
      StatusIs(absl::StatusCode::kInvalidArgument, StartsWith("bench.json: not a JSON object: ")));
}

TEST(ParseJsonObject, TextLargerThanTheLimitIsRefusedBeforeParsing) {
  // 11 bytes against a limit of 10; the text would parse.
  EXPECT_THAT(ParseJsonObject("config.json", R"({"a": 1234})", 10),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("config.json: size = 11 bytes; must be at most 10")));
  EXPECT_TRUE(ParseJsonObject("config.json", R"({"a": 1234})", 11).ok());
}

// ---------------------------------------------------------- ShowJsonValue

TEST(ShowJsonValue, NumbersAsWrittenStringsQuotedAndCut) {
  const google::protobuf::Struct s = Parse(
      R"({"i": 32, "neg": -7, "f": 0.5, "big": 1e20, "t": true, "l": [1], "o": {"a": 1},
          "s": "rope"})");
  EXPECT_EQ(ShowJsonValue(s.fields().at("i")), "32");
  EXPECT_EQ(ShowJsonValue(s.fields().at("neg")), "-7");
  EXPECT_EQ(ShowJsonValue(s.fields().at("f")), "0.5");
  // Not below 1e15: printed as a double, not as an integer.
  EXPECT_EQ(ShowJsonValue(s.fields().at("big")), "1e+20");
  EXPECT_EQ(ShowJsonValue(s.fields().at("t")), "true");
  EXPECT_EQ(ShowJsonValue(s.fields().at("l")), "[...]");
  EXPECT_EQ(ShowJsonValue(s.fields().at("o")), "{...}");
  EXPECT_EQ(ShowJsonValue(s.fields().at("s")), "\"rope\"");
  google::protobuf::Value null_value;
  null_value.set_null_value(google::protobuf::NULL_VALUE);
  EXPECT_EQ(ShowJsonValue(null_value), "null");
  google::protobuf::Value long_string;
  long_string.set_string_value(std::string(100, 'x'));
  EXPECT_EQ(ShowJsonValue(long_string), "\"" + std::string(80, 'x') + "\"");
}

// ------------------------------------------------------------- integers

TEST(JsonReader, PathIsPrefixPlusKey) {
  const google::protobuf::Struct s = Parse("{}");
  JsonReader r(s, "config.json", "quantization_config.");
  EXPECT_EQ(r.Path("bits"), "quantization_config.bits");
  EXPECT_EQ(r.document(), "config.json");
  EXPECT_EQ(r.prefix(), "quantization_config.");
}

TEST(JsonReader, NullCountsAsAbsent) {
  const google::protobuf::Struct s = Parse(R"({"head_dim": null, "x": 1})");
  JsonReader r(s, "config.json", "");
  EXPECT_FALSE(r.Has("head_dim"));
  EXPECT_EQ(r.Find("head_dim"), nullptr);
  EXPECT_TRUE(r.Has("x"));
  EXPECT_EQ(*r.Int("head_dim", 1, 128), 128);
}

TEST(JsonReader, OptIntReadsIntegersAndAbsence) {
  const google::protobuf::Struct s = Parse(R"({"n": 8, "whole": 3.0})");
  JsonReader r(s, "config.json", "");
  EXPECT_EQ(**r.OptInt("n", 1), 8);
  // JSON has one number type: 3.0 is the integer 3.
  EXPECT_EQ(**r.OptInt("whole", 1), 3);
  EXPECT_FALSE(r.OptInt("absent", 1)->has_value());
}

TEST(JsonReader, OptIntNamesDocumentPathValueAndRule) {
  const google::protobuf::Struct s =
      Parse(R"({"zero": 0, "neg": -2, "frac": 2.5, "text": "8", "huge": 4294967296, "list": [1]})");
  JsonReader r(s, "config.json", "text_config.");
  EXPECT_THAT(r.OptInt("zero", 1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("config.json: text_config.zero = 0; must be positive")));
  EXPECT_THAT(r.OptInt("neg", 0),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("config.json: text_config.neg = -2; must be at least 0")));
  EXPECT_THAT(r.OptInt("frac", 1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("config.json: text_config.frac = 2.5; must be an integer")));
  EXPECT_THAT(r.OptInt("text", 1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("config.json: text_config.text = \"8\"; must be an integer")));
  // 2^32 is one past the default bound, UINT32_MAX = 4294967295.
  EXPECT_THAT(r.OptInt("huge", 1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("config.json: text_config.huge = 4294967296; must be at most "
                          "4294967295")));
  EXPECT_THAT(r.OptInt("list", 1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("config.json: text_config.list = [...]; must be an integer")));
}

TEST(JsonReader, MaxIntegerIsTheCallersBound) {
  const google::protobuf::Struct s = Parse(R"({"tokens": 4294967296})");
  JsonReader wide(s, "bench.json", "", int64_t{1} << 40);
  EXPECT_EQ(**wide.OptInt("tokens", 0), int64_t{4294967296});
  JsonReader narrow(s, "bench.json", "", 1000);
  EXPECT_THAT(narrow.OptInt("tokens", 0),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("bench.json: tokens = 4294967296; must be at most 1000")));
}

TEST(JsonReader, IntFallsBackOnlyWhenAbsent) {
  const google::protobuf::Struct s = Parse(R"({"n": 0})");
  JsonReader r(s, "config.json", "");
  EXPECT_EQ(*r.Int("absent", 1, 42), 42);
  // Present but invalid is an error, not the fallback.
  EXPECT_THAT(r.Int("n", 1, 42), StatusIs(absl::StatusCode::kInvalidArgument,
                                          Eq("config.json: n = 0; must be positive")));
}

TEST(JsonReader, RequiredIntSaysWhyWhenMissing) {
  const google::protobuf::Struct s = Parse(R"({"hidden_size": 64})");
  JsonReader r(s, "config.json", "");
  EXPECT_EQ(*r.RequiredInt("hidden_size", 1, "the width of every layer"), 64);
  EXPECT_THAT(r.RequiredInt("num_hidden_layers", 1, "the model has layers"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("config.json: num_hidden_layers is missing; the model has layers")));
  EXPECT_THAT(r.Missing("vocab_size", "needed for the LM head"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("config.json: vocab_size is missing; needed for the LM head")));
}

// -------------------------------------------------------------- doubles

TEST(JsonReader, DoublesAndTheirErrors) {
  const google::protobuf::Struct s = Parse(R"({"theta": 1e6, "eps": 1e-5, "s": "fast"})");
  JsonReader r(s, "config.json", "rope_scaling.");
  EXPECT_DOUBLE_EQ(**r.OptDouble("theta"), 1e6);
  EXPECT_DOUBLE_EQ(*r.Double("eps", 1.0), 1e-5);
  EXPECT_DOUBLE_EQ(*r.Double("absent", 2.5), 2.5);
  EXPECT_FALSE(r.OptDouble("absent")->has_value());
  EXPECT_THAT(r.OptDouble("s"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("config.json: rope_scaling.s = \"fast\"; must be a number")));
  EXPECT_THAT(r.Double("s", 1.0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rope_scaling.s = ")));
}

// ------------------------------------------------- bools, strings, lists

TEST(JsonReader, BoolStringListObjectWithFallbacksAndErrors) {
  const google::protobuf::Struct s =
      Parse(R"({"tie": true, "act": "silu", "layers": ["a", "b"], "q": {"bits": 4}, "n": 1})");
  JsonReader r(s, "config.json", "");
  EXPECT_TRUE(*r.Bool("tie", false));
  EXPECT_FALSE(*r.Bool("absent", false));
  EXPECT_EQ(*r.String("act", ""), "silu");
  EXPECT_EQ(*r.String("absent", "gelu"), "gelu");
  ASSERT_NE(*r.List("layers"), nullptr);
  EXPECT_EQ((*r.List("layers"))->values_size(), 2);
  EXPECT_EQ(*r.List("absent"), nullptr);
  ASSERT_NE(*r.Object("q"), nullptr);
  EXPECT_EQ((*r.Object("q"))->fields().at("bits").number_value(), 4);
  EXPECT_EQ(*r.Object("absent"), nullptr);

  EXPECT_THAT(r.Bool("act", false),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("config.json: act = \"silu\"; must be true or false")));
  EXPECT_THAT(r.String("n", ""), StatusIs(absl::StatusCode::kInvalidArgument,
                                          Eq("config.json: n = 1; must be a string")));
  EXPECT_THAT(r.List("q"), StatusIs(absl::StatusCode::kInvalidArgument,
                                    Eq("config.json: q = {...}; must be a list")));
  EXPECT_THAT(r.Object("layers"), StatusIs(absl::StatusCode::kInvalidArgument,
                                           Eq("config.json: layers = [...]; must be an object")));
}

TEST(JsonReader, ErrorIsTheOneWording) {
  const google::protobuf::Struct s = Parse(R"({"num_key_value_heads": 0})");
  JsonReader r(s, "config.json", "");
  EXPECT_THAT(
      r.Error("num_key_value_heads", s.fields().at("num_key_value_heads"), "must be positive"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               Eq("config.json: num_key_value_heads = 0; must be positive")));
}

}  // namespace
}  // namespace capplan::service
