// `capplan ingest` end to end on a catalogue copy of its own: the load flags
// for files that print none, their refusal when a file says otherwise, and
// the model entry written from a config.json with the user's names.

#include "service/cli/ingest.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/cli/cli.h"
#include "tests/test_common/cli_runner.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::RunCapplan;
using ::capplan::testing::TempDir;
using ::capplan::testing::WriteMiniCatalogue;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kSource[] =
    "https://github.com/dstackai/benchmarks/blob/06c957ab51572ca18db9c1f4bb254a9eb86df4d7/amd/"
    "tgi_vs_vllm/raw_data/vllm_raw.txt";

std::string Data(const std::string& path) {
  return std::string(CAPPLAN_SOURCE_DIR) + "/tests/data/ingest/" + path;
}

std::string Read(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

class IngestCliTest : public ::testing::Test {
 protected:
  void SetUp() override { WriteMiniCatalogue(dir_); }
  // `capplan ingest FILE --id ID` on the mini catalogue's model and GPU.
  std::vector<std::string> Ingest(const std::string& file, const std::string& id) {
    return {"ingest",    Data(file),          "--id",   id,  "--model",  "test-model",
            "--gpu",     "test-gpu-24gb",     "--gpus", "1", "--source", kSource,
            "--out-dir", dir_.path().string()};
  }
  static std::vector<std::string> With(std::vector<std::string> args,
                                       const std::vector<std::string>& more) {
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  TempDir dir_;
};

TEST_F(IngestCliTest, LoadFlagsPlaceABlockThatPrintsNone) {
  const std::string file = "vllm-console/dstack_mi300x_sonnet_n16.txt";
  const auto without = RunCapplan(Ingest(file, "no-load"));
  EXPECT_EQ(without.code, kExitInvalid);
  EXPECT_THAT(without.err, HasSubstr("dstack_mi300x_sonnet_n16.txt:1: the run states neither"));
  const auto with = RunCapplan(With(Ingest(file, "stated-load"), {"--request-rate", "inf"}));
  ASSERT_EQ(with.code, kExitOk) << with.err;
  const std::string written = Read(dir_.path() / "baselines" / "stated-load.txtpb");
  EXPECT_THAT(written, HasSubstr("burst_requests: 16"));
  EXPECT_THAT(written, HasSubstr("(stated by the user: --request-rate inf)"));
}

TEST_F(IngestCliTest, LoadFlagAgainstTheFilesOwnIsRefusedNamingTheFile) {
  const auto r = RunCapplan(
      With(Ingest("vllm-json/glm47_gaudi3_conc8.json", "conflict"), {"--max-concurrency", "4"}));
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("glm47_gaudi3_conc8.json: the file states max_concurrency 8; "
                               "--max-concurrency 4 differs"));
  EXPECT_FALSE(std::filesystem::exists(dir_.path() / "baselines" / "conflict.txtpb"));
}

TEST_F(IngestCliTest, LoadFlagValuesAreChecked) {
  const std::string file = "vllm-console/dstack_mi300x_sonnet_n16.txt";
  auto r = RunCapplan(With(Ingest(file, "bad"), {"--request-rate", "0"}));
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("--request-rate = 0; must be a positive number of requests per "
                               "second or inf"));
  r = RunCapplan(With(Ingest(file, "bad"), {"--num-prompts", "0"}));
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("--num-prompts = 0; must be a whole number >= 1"));
}

TEST_F(IngestCliTest, ModelConfigFlagsNameTheEntryAndItsLayersAreCompact) {
  const auto r = RunCapplan({"ingest",
                             Data("vllm-console/dstack_mi300x_sonnet_n16.txt"),
                             "--id",
                             "with-model",
                             "--model-config",
                             Data("hf-config/Qwen__Qwen3.5-35B-A3B.json"),
                             "--model-hf-id",
                             "Qwen/Qwen3.5-35B-A3B",
                             "--model-display-name",
                             "Qwen3.5 35B-A3B",
                             "--model-family",
                             "qwen3.5-moe",
                             "--model-source",
                             kSource,
                             "--gpu",
                             "test-gpu-24gb",
                             "--gpus",
                             "1",
                             "--request-rate",
                             "inf",
                             "--source",
                             kSource,
                             "--out-dir",
                             dir_.path().string()});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const std::string model = Read(dir_.path() / "models" / "qwen3.5-35b-a3b.txtpb");
  EXPECT_THAT(model, HasSubstr("hf_repo_id: \"Qwen/Qwen3.5-35B-A3B\""));
  EXPECT_THAT(model, HasSubstr("display_name: \"Qwen3.5 35B-A3B\""));
  EXPECT_THAT(model, HasSubstr("family: \"qwen3.5-moe\""));
  EXPECT_THAT(model, HasSubstr("repeat: 10"));
  EXPECT_THAT(model, HasSubstr("gated_attention_output: true"));
  EXPECT_THAT(model, Not(HasSubstr("qwen3_5_moe_text")));
  EXPECT_THAT(Read(dir_.path() / "baselines" / "with-model.txtpb"),
              HasSubstr("model_id: \"qwen3.5-35b-a3b\""));
}

}  // namespace
}  // namespace capplan::service
