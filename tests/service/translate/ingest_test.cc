// The ingest entry point: format names, detection by content, and hostile
// input (empty, binary, truncated, malformed, non-finite, wrong types, huge,
// random bytes) refused with the file and the key or position named.

#include "service/translate/ingest.h"

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/ingest_fixtures.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

std::string Fixture(const std::string& path) { return capplan::testing::IngestFixture(path); }

// A vLLM result object with one key replaced by `value` (raw JSON).
std::string VllmRunWith(const std::string& key, const std::string& value) {
  return absl::StrCat(R"({"request_rate": "inf", "completed": 40, "mean_itl_ms": 20.0, ")", key,
                      "\": ", value, "}");
}

TEST(IngestFormatNames, EveryFormatRoundTripsThroughItsName) {
  for (IngestFormat f :
       {IngestFormat::kAuto, IngestFormat::kVllmJson, IngestFormat::kVllmConsole,
        IngestFormat::kSglangJsonl, IngestFormat::kSglangConsole, IngestFormat::kGuidellmJson,
        IngestFormat::kAiperfJson, IngestFormat::kEngineLog}) {
    absl::StatusOr<IngestFormat> back = IngestFormatFromName(IngestFormatName(f));
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(*back, f) << IngestFormatName(f);
  }
  EXPECT_EQ(IngestFormatName(IngestFormat::kSglangJsonl), "sglang-jsonl");
  EXPECT_EQ(*IngestFormatFromName(" VLLM-Console "), IngestFormat::kVllmConsole);
}

TEST(IngestFormatNames, UnknownNameListsTheKnownOnes) {
  EXPECT_THAT(IngestFormatFromName("csv"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("format = \"csv\"; must be one of auto, vllm-json, vllm-console, "
                                 "sglang-jsonl, sglang-console, guidellm-json, aiperf-json, "
                                 "engine-log")));
}

struct DetectCase {
  const char* path;
  IngestFormat format;
};

class IngestDetect : public ::testing::TestWithParam<DetectCase> {};

TEST_P(IngestDetect, ContentGivesTheFormat) {
  const DetectCase& c = GetParam();
  absl::StatusOr<IngestFormat> f = DetectIngestFormat(c.path, Fixture(c.path));
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(*f, c.format) << IngestFormatName(*f);
  absl::StatusOr<IngestedFile> parsed = ParseMeasurementFile(c.path, Fixture(c.path));
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->format, c.format);
  EXPECT_TRUE(!parsed->runs.empty() || parsed->engine_log.has_value());
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, IngestDetect,
    ::testing::Values(
        DetectCase{"vllm-json/glm47_gaudi3_conc1.json", IngestFormat::kVllmJson},
        DetectCase{"vllm-json/nerdalert_results.jsonl", IngestFormat::kVllmJson},
        DetectCase{"vllm-json/dstack_h100_16qps.trimmed.json", IngestFormat::kVllmJson},
        DetectCase{"vllm-json/results_qwen35_fp8_cc_tp4_isl1024_osl1024_conc16.json",
                   IngestFormat::kVllmJson},
        DetectCase{"vllm-console/gpustack_dsr1_h200_c4.txt", IngestFormat::kVllmConsole},
        DetectCase{"vllm-console/dennislee_qwen2_n10.txt", IngestFormat::kVllmConsole},
        DetectCase{"vllm-console/schema_two_blocks.txt", IngestFormat::kVllmConsole},
        DetectCase{"sglang-jsonl/schema_three_runs.jsonl", IngestFormat::kSglangJsonl},
        DetectCase{"sglang-jsonl/datacrunch_llama33_70b_online.jsonl", IngestFormat::kSglangJsonl},
        DetectCase{"sglang-console/cookbook_llama31_70b.txt", IngestFormat::kSglangConsole},
        DetectCase{"sglang-console/schema_block.txt", IngestFormat::kSglangConsole},
        DetectCase{"guidellm/benchmarks_stripped.json", IngestFormat::kGuidellmJson},
        DetectCase{"guidellm/schema_v05_concurrent_and_constant.json", IngestFormat::kGuidellmJson},
        DetectCase{"aiperf/inferencemax_conc16.profile_export_aiperf.json",
                   IngestFormat::kAiperfJson},
        DetectCase{"aiperf/perf_analyzer_issue298_streaming.profile_export_genai_perf.json",
                   IngestFormat::kAiperfJson},
        DetectCase{"aiperf/schema_records_layout_rate5.json", IngestFormat::kAiperfJson},
        DetectCase{"engine-log/dennislee_vllm_v1_qwen2_7b_a100.log", IngestFormat::kEngineLog},
        DetectCase{"engine-log/sglang-2025-03.log", IngestFormat::kEngineLog},
        DetectCase{"engine-log/trtllm-2024-04.log", IngestFormat::kEngineLog},
        DetectCase{"engine-log/vllm_v0_refusal_excerpt.log", IngestFormat::kEngineLog}));

TEST(IngestInput, EmptyAndBlankFilesAreRefused) {
  for (const std::string text : {"", "  \n\t\r\n", "\xEF\xBB\xBF\n"}) {
    EXPECT_THAT(
        ParseMeasurementFile("run.json", text),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("run.json: the file is empty")));
  }
}

TEST(IngestInput, NulBytesAreBinary) {
  const std::string text("{\"completed\": 1\0\0\0}", 19);
  EXPECT_THAT(ParseMeasurementFile("run.json", text),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("run.json: binary data (a NUL byte at offset 15)")));
}

TEST(IngestInput, InvalidUtf8IsRefused) {
  EXPECT_THAT(ParseMeasurementFile("bench.txt", "Successful requests: 1\n\xFF\xFE"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("bench.txt: not UTF-8 text (byte 0xFF at offset 23)")));
}

TEST(IngestInput, ControlCharacterSoupIsBinary) {
  std::string text(4000, '\x01');
  text += "GPU KV cache size: 10 tokens\n";
  EXPECT_THAT(ParseMeasurementFile("dump.bin", text),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("dump.bin: binary data")));
}

TEST(IngestInput, InputAboveTheCapIsOutOfRangeBeforeParsing) {
  const std::string text(kMaxIngestFileBytes + 1, '{');
  EXPECT_THAT(ParseMeasurementFile("huge.json", text),
              StatusIs(absl::StatusCode::kOutOfRange,
                       AllOf(HasSubstr("huge.json: 16777217 bytes"), HasSubstr("16 MiB"))));
  EXPECT_THAT(DetectIngestFormat("huge.json", text), StatusIs(absl::StatusCode::kOutOfRange));
}

TEST(IngestInput, TruncatedJsonNamesFileAndPosition) {
  const std::string text = Fixture("vllm-json/glm47_gaudi3_conc8.json");
  const std::string cut = text.substr(0, text.find("\"mean_tpot_ms\"") + 10);
  EXPECT_THAT(ParseMeasurementFile("c8.json", cut),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("c8.json: JSON ends early at line 23, column 13"),
                             HasSubstr("1 unclosed bracket"), HasSubstr("truncated"))));
}

TEST(IngestInput, MalformedJsonNamesLineAndColumn) {
  EXPECT_THAT(ParseMeasurementFile("run.json", "{\"completed\": 10,\n  \"duration\" 5}"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("run.json: not valid JSON at line 2, column 14: expected ':'")));
  EXPECT_THAT(ParseMeasurementFile("run.json", "{\"completed\": 10,, \"duration\": 5}"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("run.json: not valid JSON at line 1, column 18: expected a key")));
  EXPECT_THAT(ParseMeasurementFile("run.json", "{\"completed\": 1e400}"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("run.json: JSON value starting on line 1 not accepted")));
}

TEST(IngestInput, DeepNestingIsRefusedWithoutRecursion) {
  const std::string text = std::string(100000, '[') + std::string(100000, ']');
  EXPECT_THAT(ParseMeasurementFile("deep.json", text, IngestFormat::kVllmJson),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("deep.json: not valid JSON at line 1, column 65: nested deeper "
                                 "than 64")));
}

TEST(IngestInput, WordWhereANumberBelongsNamesTheKey) {
  EXPECT_THAT(ParseMeasurementFile("run.json", VllmRunWith("median_ttft_ms", "\"abc\"")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("run.json: key \"median_ttft_ms\" = \"abc\"; must be a number")));
}

TEST(IngestInput, NonFiniteAndNegativeFiguresAreRefusedWithTheirKey) {
  EXPECT_THAT(ParseMeasurementFile("run.json", VllmRunWith("mean_tpot_ms", "NaN")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("key \"mean_tpot_ms\" = NaN; must be a finite number")));
  EXPECT_THAT(ParseMeasurementFile("run.json", VllmRunWith("p99_itl_ms", "Infinity")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("key \"p99_itl_ms\" = Infinity; must be a finite number")));
  EXPECT_THAT(ParseMeasurementFile("run.json", VllmRunWith("output_throughput", "-Infinity")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("key \"output_throughput\" = -Infinity")));
  EXPECT_THAT(ParseMeasurementFile("run.json", VllmRunWith("mean_e2el_ms", "-3.5")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("key \"mean_e2el_ms\" = -3.5; must not be negative")));
}

TEST(IngestInput, WrongTypesAreRefusedWithTheirKey) {
  EXPECT_THAT(ParseMeasurementFile("run.json", VllmRunWith("num_prompts", "\"80\"")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("key \"num_prompts\" = \"80\"; must be a whole number")));
  EXPECT_THAT(ParseMeasurementFile("run.json", VllmRunWith("failed", "2.5")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("key \"failed\" = 2.5; must be a whole number")));
  EXPECT_THAT(ParseMeasurementFile("run.json", VllmRunWith("model_id", "[1, 2]")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("key \"model_id\" = [...]; must be a string")));
  EXPECT_THAT(ParseMeasurementFile("run.json", VllmRunWith("max_concurrency", "0")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("key \"max_concurrency\" = 0; must be at least 1")));
}

TEST(IngestInput, RequestRateSpellingsOfInfinityAreABurstOrClosedLoop) {
  for (const std::string rate : {"\"inf\"", "Infinity", "\"Infinity\""}) {
    const std::string text =
        absl::StrCat(R"({"request_rate": )", rate, R"(, "num_prompts": 100, "completed": 100})");
    absl::StatusOr<IngestedFile> f = ParseMeasurementFile("run.json", text);
    ASSERT_TRUE(f.ok()) << rate << ": " << f.status();
    ASSERT_EQ(f->runs.size(), 1u);
    EXPECT_EQ(f->runs[0].load, LoadKind::kBurst) << rate;
    EXPECT_EQ(f->runs[0].request_rate_rps, std::nullopt) << rate;
  }
  absl::StatusOr<IngestedFile> closed =
      ParseMeasurementFile("run.json", VllmRunWith("max_concurrency", "4"));
  ASSERT_TRUE(closed.ok()) << closed.status();
  EXPECT_EQ(closed->runs[0].load, LoadKind::kClosedLoop);
}

TEST(IngestInput, ZeroOrNegativeRequestRateIsRefused) {
  EXPECT_THAT(ParseMeasurementFile("run.json", R"({"request_rate": 0, "completed": 1})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("key \"request_rate\" = 0; must be positive (or \"inf\")")));
  EXPECT_THAT(
      ParseMeasurementFile("run.json", R"({"request_rate": -Infinity, "completed": 1})"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("key \"request_rate\" = -Infinity")));
}

TEST(IngestInput, JsonOfNoKnownFormatIsRefused) {
  EXPECT_THAT(ParseMeasurementFile("package.json", R"({"name": "x", "version": "1.0"})"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("package.json: JSON of no known benchmark format")));
  EXPECT_THAT(ParseMeasurementFile("list.json", "[1, 2, 3]", IngestFormat::kVllmJson),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("list.json: the JSON value is [...]; a benchmark run must be a "
                                 "JSON object")));
  EXPECT_THAT(
      ParseMeasurementFile("run.json", R"({"model_id": "m"})", IngestFormat::kVllmJson),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("run.json: no benchmark figures")));
}

TEST(IngestInput, TextOfNoKnownFormatIsRefused) {
  EXPECT_THAT(ParseMeasurementFile("notes.txt", "hello\nworld\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("notes.txt: neither JSON nor a \"Serving Benchmark Result\"")));
  EXPECT_THAT(ParseMeasurementFile("notes.txt", "hello\n", IngestFormat::kVllmConsole),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("notes.txt: no \"Serving Benchmark Result\" block")));
}

TEST(IngestInput, MoreRunsThanTheCapIsOutOfRange) {
  std::string text;
  for (size_t i = 0; i <= kMaxIngestRunsPerFile; ++i) text += "{\"completed\": 1}\n";
  EXPECT_THAT(ParseMeasurementFile("many.jsonl", text),
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("many.jsonl: more than 10000")));
  std::string blocks;
  for (size_t i = 0; i <= kMaxIngestRunsPerFile; ++i) {
    blocks += "== Serving Benchmark Result ==\nSuccessful requests: 1\n==========\n";
  }
  EXPECT_THAT(ParseMeasurementFile("many.txt", blocks),
              StatusIs(absl::StatusCode::kOutOfRange, HasSubstr("many.txt: more than 10000")));
}

// Inputs near the cap parse in one pass; a quadratic parser would not finish.
TEST(IngestInput, LargeInputsNearTheCapParse) {
  std::string log;
  while (log.size() < kMaxIngestFileBytes - 200) {
    log += "(EngineCore_0 pid=1) INFO 09-04 01:29:26 [core.py:1] nothing to see here\n";
  }
  log += "INFO [kv_cache_utils.py:849] GPU KV cache size: 1,234 tokens\n";
  absl::StatusOr<IngestedFile> f = ParseMeasurementFile("big.log", log);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->engine_log->kv_pool_tokens, 1234u);

  const std::string run = Fixture("vllm-json/glm47_gaudi3_conc8.json");
  std::string jsonl;
  int lines = 0;
  while (jsonl.size() + run.size() < kMaxIngestFileBytes && lines < 9000) {
    std::string one = run;
    one.erase(std::remove(one.begin(), one.end(), '\n'), one.end());
    jsonl += one + "\n";
    ++lines;
  }
  f = ParseMeasurementFile("big.jsonl", jsonl);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->runs.size(), static_cast<size_t>(lines));

  // One long wrapped log record (lower-case continuation lines) stays linear too.
  std::string wrapped = "INFO GPU KV cache size: 5 tokens\n";
  while (wrapped.size() < kMaxIngestFileBytes - 100) wrapped += "continued text of one record\n";
  f = ParseMeasurementFile("wrapped.log", wrapped);
  ASSERT_TRUE(f.ok()) << f.status();
  EXPECT_EQ(f->engine_log->kv_pool_tokens, 5u);
}

// Random bytes and damaged real files never crash, and every refusal is one of
// the documented codes.
TEST(IngestInput, DamagedAndRandomInputNeverCrashes) {
  std::mt19937 rng(20260314);
  const std::vector<std::string> seeds = {
      Fixture("vllm-json/glm47_gaudi3_conc8.json"),
      Fixture("vllm-console/schema_two_blocks.txt"),
      Fixture("sglang-jsonl/schema_three_runs.jsonl"),
      Fixture("guidellm/benchmarks_stripped.json"),
      Fixture("aiperf/schema_records_layout_rate5.json"),
      Fixture("engine-log/dennislee_vllm_v1_qwen2_7b_a100.log"),
  };
  int parsed = 0, refused = 0;
  for (size_t seed = 0; seed < seeds.size(); ++seed) {
    for (int i = 0; i < 120; ++i) {
      std::string text = seeds[seed];
      if (i % 3 == 0) {
        text.resize(rng() % (text.size() + 1));
      } else if (i % 3 == 1) {
        for (int k = 0; k < 8; ++k) {
          text[rng() % text.size()] = static_cast<char>("{}[]\":,0-.eNIa \n\\"[rng() % 18]);
        }
      } else {
        text.assign(rng() % 512, '\0');
        for (char& c : text) c = static_cast<char>(rng() % 256);
      }
      const IngestFormat format =
          i % 2 == 0 ? IngestFormat::kAuto : static_cast<IngestFormat>(rng() % 8);
      absl::StatusOr<IngestedFile> f = ParseMeasurementFile("fuzz", text, format);
      if (f.ok()) {
        ++parsed;
        EXPECT_TRUE(!f->runs.empty() || f->engine_log.has_value());
      } else {
        ++refused;
        EXPECT_THAT(f.status().code(), ::testing::AnyOf(absl::StatusCode::kInvalidArgument,
                                                        absl::StatusCode::kOutOfRange))
            << f.status();
      }
    }
  }
  EXPECT_GT(parsed, 0);
  EXPECT_GT(refused, 0);
}

}  // namespace
}  // namespace capplan::service
