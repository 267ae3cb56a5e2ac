#include "service/cli/catalog_print.h"

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "service/cli/cli.h"
#include "service/server/server.h"
#include "tests/test_common/cli_runner.h"
#include "tests/test_common/loopback_server.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using Result = ::capplan::testing::CliResult;
using ::capplan::testing::k000;
using ::capplan::testing::k002;
using ::capplan::testing::RunCapplan;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr char k004[] = "seed-004-qwen3-coder-480b-fp8-8x-mi308x";

std::string Get(const std::string& id) {
  Result r = RunCapplan({"baselines", "get", id});
  EXPECT_EQ(r.code, kExitOk) << r.err;
  return r.out;
}

std::string ConfigPath(const std::string& name) {
  return std::string(CAPPLAN_SOURCE_DIR) + "/tests/data/configs/" + name;
}

// Seed 004 holds no sweep, only weights, KV-tier runs, a multi-node method
// and notes: all of it shows (it printed only the header).
TEST(BaselinesGet, Seed004ShowsItsKvTierRunsAndMultiNodeMethod) {
  const std::string out = Get(k004);
  EXPECT_THAT(out, HasSubstr("  hardware:    8 GPUs × amd-mi308x-192gb\n"));
  EXPECT_THAT(out, HasSubstr("  engine:      not stated; tp 4, dp 2\n"));
  EXPECT_THAT(out, HasSubstr("whole-model-fp8 (whole model): 419.10 GiB (450.0 GB)"));
  EXPECT_THAT(out, HasSubstr("\n  KV-tier runs (5):\n"));
  EXPECT_THAT(out, HasSubstr("nvme-of-fx100-single-node (NVMe-oF: "));
  EXPECT_THAT(out, HasSubstr("): 4,082 tok/s, throughput +35–36%\n"));
  EXPECT_THAT(out, HasSubstr("local-nvme-single-drive (local NVMe: one local NVMe drive"));
  EXPECT_THAT(out, HasSubstr("restore 8.6–20× faster than recompute"));
  EXPECT_THAT(out, HasSubstr("TTFT p50 before 10.17–35.73 s, after 7.53–26.35 s, TTFT change "
                             "-32% to -26%"));
  EXPECT_THAT(out, HasSubstr("TTFT before 37.97 s (statistic not stated), after 9.3 s"));
  EXPECT_THAT(out, HasSubstr("scaling efficiency X_N ÷ (N × X_1) of at least 70%; TTFT p99 at "
                             "most 30% worse than one node"));
  EXPECT_THAT(out, HasSubstr("gate: TTFT change -25% or better, throughput +29–40%"));
  EXPECT_THAT(out, HasSubstr("\n  other findings (4):\n"));
  EXPECT_THAT(out, HasSubstr("\n  consistency notes (3):\n"));
}

// Seed 002: the memory account, the MTP variants and the 250K runs (they
// were left out), the decode rate labelled apart from the per-user rate.
TEST(BaselinesGet, Seed002ShowsMemoryAccountVariantsAndLongContextRuns) {
  const std::string out = Get(k002);
  EXPECT_THAT(out, HasSubstr("per-card-production (per GPU): weights 19.86 GiB, weights + "
                             "non-torch 24.36 GiB, activation peak 2.58 GiB, CUDA graphs 0.34 GiB, "
                             "KV cache 1.28 GiB, used 27.68 GiB, of 31.84 GiB, 86.9% used"));
  EXPECT_THAT(out, HasSubstr("production-ep-mtp: 531,372 tokens; speculative mtp, 3 draft "
                             "tokens; expert parallel"));
  EXPECT_THAT(out, HasSubstr("\n  speculative variants (11):\n"));
  EXPECT_THAT(out, HasSubstr("single-stream-mtp-1: speculative mtp, 1 draft token, 1 user, 124.61 "
                             "output tok/s, TTFT 0.135 s (statistic not stated)"));
  EXPECT_THAT(out, HasSubstr("\n  long-context runs (4):\n"));
  // 250K in, 6K out: decoding at 93 tok/s, but 6,000 tokens over 113.33 s of
  // TTFT plus 6,000 / 93 s of decoding is 33.7 tok/s for the user.
  EXPECT_THAT(out, HasSubstr("250k-in-6k-out-no-speculation: speculative none, 1 user, TTFT "
                             "113.3 s (statistic not stated), decode 93.0 tok/s per user (after "
                             "the first token, TTFT excluded)"));
  EXPECT_THAT(out, HasSubstr("per-user rate 33.7 tok/s including TTFT"));
  EXPECT_THAT(out, HasSubstr("workload: 250,000 input tokens, 6,000 output tokens"));
  EXPECT_THAT(out, HasSubstr("20 users           424.9             21.25"));
}

// Seed 000 states no pool size, only 5 sequences of 32K: never "0 tokens".
TEST(BaselinesGet, Seed000StatesItsPoolAsTheSourceDoes) {
  const std::string out = Get(k000);
  EXPECT_THAT(out, HasSubstr("kv-limit-at-full-context: size in tokens not stated; 5 sequences "
                             "of 32,768 tokens at once"));
  EXPECT_THAT(out, Not(HasSubstr(" 0 tokens")));
  EXPECT_THAT(out, HasSubstr("  gate:        8 requests at once (operator's concurrency gate)"));
  EXPECT_THAT(out, HasSubstr("stress-200-requests: 200 of 200 requests succeeded, 0.60 req/s, "
                             "149.0 output tok/s, TTFT p50 0.457 s, 331 s"));
  EXPECT_THAT(out, HasSubstr("long-generation-16k: PASS (checks long_generation, 8,023 output "
                             "tokens, 308 s"));
  EXPECT_THAT(out, HasSubstr("monthly-capacity-at-sustained-rate: 0.60 req/s, × (1,024 + 512) "
                             "tokens, 922 tok/s, 2.4 billion tokens/month, 390 million output "
                             "tokens/month, 30-day month, extrapolated by the source"));
  EXPECT_THAT(out, HasSubstr("  link:        PCIe no-P2P\n"));
}

TEST(HardwareGet, TheVendorIsNotPrintedTwice) {
  Result r = RunCapplan({"hardware", "get", "nvidia-rtx-5090-32gb"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("NVIDIA GeForce RTX 5090"));
  EXPECT_THAT(r.out, Not(HasSubstr("NVIDIA NVIDIA")));
}

// A link whose bandwidth no source states reads so, not "xGMI - GB/s".
TEST(HardwareList, ALinkWithoutABandwidthSaysSo) {
  Result list = RunCapplan({"hardware", "list"});
  ASSERT_EQ(list.code, kExitOk) << list.err;
  EXPECT_THAT(list.out, Not(HasSubstr("- GB/s")));
  EXPECT_THAT(list.out, HasSubstr("xGMI 448 GB/s"));  // the MI300X states its link
  Result mi355x = RunCapplan({"hardware", "get", "amd-mi355x-288gb"});
  ASSERT_EQ(mi355x.code, kExitOk) << mi355x.err;
  EXPECT_THAT(mi355x.out, HasSubstr("xGMI (bandwidth not stated)"));
}

v1::ModelInfo InfoOf(const std::string& json) {
  v1::ModelInfo info;
  EXPECT_TRUE(google::protobuf::util::JsonStringToMessage(json, &info).ok()) << json;
  return info;
}

// A config.json read as the planner reads it, without a catalogue entry:
// the same counts as the catalogue's entry for that model.
TEST(ModelsGet, AConfigJsonShowsWhatThePlannerReads) {
  const std::string path = ConfigPath("meta-llama__Llama-3.1-8B-Instruct.json");
  Result r = RunCapplan({"models", "get", path});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("what the planner reads from " + path));
  EXPECT_THAT(r.out, HasSubstr("LlamaForCausalLM"));
  EXPECT_THAT(r.out, HasSubstr("32 layers: 32 full attention"));
  // 32 layers × 2 (K, V) × 8 KV heads × 128 × 2 bytes.
  EXPECT_THAT(r.out, HasSubstr("131,072 bytes (whole model, no parallelism)"));
  Result file_json = RunCapplan({"models", "get", path, "--json"});
  Result entry_json = RunCapplan({"models", "get", "llama-3.1-8b-instruct", "--json"});
  ASSERT_EQ(file_json.code, kExitOk) << file_json.err;
  const v1::ModelInfo from_file = InfoOf(file_json.out);
  const v1::ModelInfo from_entry = InfoOf(entry_json.out);
  EXPECT_EQ(from_file.derived().total_parameters(), from_entry.derived().total_parameters());
  EXPECT_EQ(from_file.derived().kv_bytes_per_token_bf16(), 131072u);
  EXPECT_THAT(r.out, HasSubstr(absl::StrFormat("%.2f billion",
                                               from_entry.derived().total_parameters() / 1e9)));
}

TEST(ModelsGet, AMixtureOfExpertsConfigHasFewerActiveParameters) {
  Result r = RunCapplan({"models", "get", ConfigPath("Qwen__Qwen3-235B-A22B-FP8.json"), "--json"});
  ASSERT_EQ(r.code, kExitOk) << r.err;
  const v1::ModelInfo info = InfoOf(r.out);
  EXPECT_LT(info.derived().active_parameters_per_token(), info.derived().total_parameters() / 5);
  // 94 layers × 2 × 4 KV heads × 128 × 2 bytes.
  EXPECT_EQ(info.derived().kv_bytes_per_token_bf16(), 192512u);
  Result text = RunCapplan({"models", "get", ConfigPath("Qwen__Qwen3-235B-A22B-FP8.json")});
  EXPECT_THAT(text.out, HasSubstr("experts (routed, per token, shared)"));
  EXPECT_THAT(text.out, HasSubstr("fp8_block"));
}

TEST(ModelsGet, AMissingOrBrokenConfigNamesTheFileAndTheKey) {
  Result missing = RunCapplan({"models", "get", "/nonexistent/config.json"});
  EXPECT_EQ(missing.code, kExitInvalid);
  EXPECT_THAT(missing.err, HasSubstr("models get /nonexistent/config.json: cannot read"));
  capplan::testing::TempDir dir;
  dir.Write("bad.json", "{\"model_type\": \"llama\", \"num_hidden_layers\": 0}");
  Result bad = RunCapplan({"models", "get", (dir.path() / "bad.json").string()});
  EXPECT_EQ(bad.code, kExitInvalid);
  EXPECT_THAT(bad.err, HasSubstr("INVALID_ARGUMENT: GetModelRequest.model_config_json: "));
}

TEST(ModelsGet, AConfigJsonThroughTheServerGivesTheSameAnswer) {
  auto server = PlannerServer::Create(
      capplan::testing::LoopbackServerOptions(capplan::testing::BundledDataDir()));
  ASSERT_TRUE(server.ok()) << server.status();
  const std::string path = ConfigPath("Qwen__Qwen3-8B.json");
  Result offline = RunCapplan({"models", "get", path});
  Result online = RunCapplan(
      {"models", "get", path, "--server", absl::StrCat("127.0.0.1:", (*server)->port())});
  ASSERT_EQ(offline.code, kExitOk) << offline.err;
  EXPECT_EQ(offline.out, online.out);
}

}  // namespace
}  // namespace capplan::service
