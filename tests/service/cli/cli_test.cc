#include "service/cli/cli.h"

#include <filesystem>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/server/server.h"
#include "tests/test_common/cli_runner.h"
#include "tests/test_common/loopback_server.h"
#include "tests/test_common/test_catalog.h"
#include "tests/test_common/tls_certs.h"

namespace capplan::service {
namespace {

using Result = ::capplan::testing::CliResult;
using ::capplan::testing::RunCapplan;
using ::capplan::testing::TempDir;
using ::capplan::testing::WriteMiniCatalogue;
using ::testing::HasSubstr;
using ::testing::Not;

class CliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteMiniCatalogue(dir_);
    auto server = PlannerServer::Create(testing::LoopbackServerOptions(dir_.path().string()));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  std::vector<std::string> Offline(std::vector<std::string> args) {
    args.push_back("--data-dir=" + dir_.path().string());
    return args;
  }
  std::vector<std::string> Online(std::vector<std::string> args) {
    args.push_back("--server");
    args.push_back("127.0.0.1:" + std::to_string(server_->port()));
    return args;
  }

  TempDir dir_;
  std::unique_ptr<PlannerServer> server_;
};

TEST_F(CliTest, OfflineAndServerAnswersAreIdentical) {
  for (const std::vector<std::string>& command :
       std::vector<std::vector<std::string>>{{"hardware", "list"},
                                             {"hardware", "get", "test-gpu-24gb"},
                                             {"models", "list"},
                                             {"models", "get", "Test/Test-Model-1B"},
                                             {"baselines", "list"},
                                             {"baselines", "get", "test-baseline"},
                                             {"baselines", "list", "--json"},
                                             {"models", "get", "nope"}}) {
    Result offline = RunCapplan(Offline(command));
    Result online = RunCapplan(Online(command));
    EXPECT_EQ(offline.code, online.code) << command[0] << " " << command[1];
    EXPECT_EQ(offline.out, online.out) << command[0] << " " << command[1];
    EXPECT_EQ(offline.err, online.err) << command[0] << " " << command[1];
  }
}

TEST_F(CliTest, JsonKeepsSnakeCaseFieldNames) {
  Result r = RunCapplan(Offline({"baselines", "get", "test-baseline", "--json"}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"output_tokens_per_second\": 50"));
  EXPECT_THAT(r.out, HasSubstr("\"hardware_id\": \"test-gpu-24gb\""));
  EXPECT_THAT(r.out, Not(HasSubstr("outputTokensPerSecond")));
}

TEST_F(CliTest, TablesCarryUnits) {
  Result r = RunCapplan(Offline({"hardware", "list"}));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("MEMORY (GiB)"));
  EXPECT_THAT(r.out, HasSubstr("24.00"));
  EXPECT_THAT(r.out, HasSubstr("BANDWIDTH (TB/s)"));
}

TEST_F(CliTest, UnknownIdExitsTwoWithReason) {
  Result r = RunCapplan(Offline({"hardware", "get", "nope"}));
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND: hardware 'nope' is not in the catalogue"));
}

TEST_F(CliTest, UnknownFlagIsRejected) {
  Result r = RunCapplan(Offline({"hardware", "list", "--vendr", "x"}));
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("unknown flag --vendr"));
}

TEST_F(CliTest, UnreachableServerExitsTwo) {
  // Port 1 on loopback: nothing listens there.
  Result r = RunCapplan({"hardware", "list", "--server", "127.0.0.1:1", "--timeout-seconds", "2"});
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("server 127.0.0.1:1 unreachable"));
}

TEST_F(CliTest, BadCatalogueNamesTheFile) {
  dir_.Write("models/bad.txtpb", "# proto-message: Model\nid: \"bad\" hidden_size: x\n");
  Result r = RunCapplan(Offline({"models", "list"}));
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("models/bad.txtpb:2:24:"));
}

class CliBundledTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto server = PlannerServer::Create(testing::LoopbackServerOptions(testing::BundledDataDir()));
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  std::vector<std::string> Online(std::vector<std::string> args) {
    args.push_back("--server=127.0.0.1:" + std::to_string(server_->port()));
    return args;
  }
  std::unique_ptr<PlannerServer> server_;
};

TEST_F(CliBundledTest, MemoryAnswersTheSameOfflineAndThroughTheServer) {
  std::vector<std::string> command = {
      "memory",          "--model", "meta-llama/Llama-3.1-8B-Instruct", "--gpu", "nvidia-l4-24gb",
      "--max-model-len", "8192"};
  Result offline = RunCapplan(command);
  Result online = RunCapplan(Online(command));
  ASSERT_EQ(offline.code, kExitOk) << offline.err;
  EXPECT_EQ(offline.out, online.out);
  EXPECT_THAT(offline.out, HasSubstr("KV pool"));
  EXPECT_THAT(offline.out, HasSubstr("GiB"));
  EXPECT_THAT(offline.out, HasSubstr("tokens"));
  command.push_back("--json");
  Result json = RunCapplan(command);
  EXPECT_THAT(json.out, HasSubstr("\"kv_pool_tokens\""));
  EXPECT_THAT(json.out, HasSubstr("\"per_gpu\""));
}

// vLLM 0.21+ prints a hybrid model's pool as its concurrency at
// max_model_len x max_model_len: the plan shows that figure beside the pool,
// which 0.19 printed as the pool itself.
TEST_F(CliBundledTest, MemoryOfAHybridModelShowsWhatTheEnginePrints) {
  const std::vector<std::string> base = {
      "memory",   "--model", "qwen3.5-27b",     "--gpu", "nvidia-h100-sxm-80gb",
      "--engine", "vllm",    "--max-model-len", "4096"};
  std::vector<std::string> v027 = base;
  v027.insert(v027.end(), {"--engine-version", "0.27.1"});
  Result r = RunCapplan(v027);
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("the engine prints: "));
  v027.push_back("--json");
  Result json = RunCapplan(v027);
  ASSERT_EQ(json.code, kExitOk) << json.err;
  EXPECT_THAT(json.out, HasSubstr("\"engine_reported_kv_pool_tokens\""));
  // With prefix caching on, vLLM's Mamba 'align' mode holds two state blocks
  // a request: fewer requests at max_model_len.
  auto concurrency = [](const std::string& json_out) {
    const size_t at = json_out.find("\"max_concurrency_at_max_model_len\": ");
    EXPECT_NE(at, std::string::npos);
    return std::stod(json_out.substr(at + 36));
  };
  std::vector<std::string> cached = v027;
  cached.push_back("--enable-prefix-caching");
  Result on = RunCapplan(cached);
  ASSERT_EQ(on.code, kExitOk) << on.err;
  EXPECT_LT(concurrency(on.out), concurrency(json.out));
  std::vector<std::string> both = cached;
  both.push_back("--no-enable-prefix-caching");
  EXPECT_EQ(RunCapplan(both).code, kExitInvalid);
  std::vector<std::string> v019 = base;
  v019.insert(v019.end(), {"--engine-version", "0.19.0"});
  Result old = RunCapplan(v019);
  ASSERT_EQ(old.code, kExitOk) << old.err;
  EXPECT_THAT(old.out, Not(HasSubstr("the engine prints")));
}

// vLLM 0.10 without FlashInfer: the dummy sampler's native sort holds more
// copies of the logits, so the pool is smaller, and the plan says why (at a
// gpu_memory_utilization no catalogue log measured, so the pool is the
// model's, not a measured one); an
// unknown backend is refused by name, offline and through the server alike.
TEST_F(CliBundledTest, MemoryWithTheNativeSamplerHasTheSmallerPoolAndSaysWhy) {
  const std::vector<std::string> base = {"memory",
                                         "--model",
                                         "qwen3-30b-a3b",
                                         "--gpu",
                                         "nvidia-rtx-3090-24gb",
                                         "--engine",
                                         "vllm",
                                         "--engine-version",
                                         "0.10.0",
                                         "--quantization",
                                         "awq",
                                         "--max-model-len",
                                         "2048",
                                         "--gpu-memory-utilization",
                                         "0.85",
                                         "--json"};
  Result fused = RunCapplan(base);
  ASSERT_EQ(fused.code, kExitOk) << fused.err;
  std::vector<std::string> native = base;
  native.insert(native.end(), {"--sampler-backend", "native"});
  Result offline = RunCapplan(native);
  ASSERT_EQ(offline.code, kExitOk) << offline.err;
  EXPECT_EQ(RunCapplan(Online(native)).out, offline.out);
  auto pool = [](const std::string& json_out) {
    // uint64 prints as a JSON string: "kv_pool_tokens": "20960".
    const size_t at = json_out.find("\"kv_pool_tokens\": \"");
    EXPECT_NE(at, std::string::npos);
    return at == std::string::npos ? 0.0 : std::stod(json_out.substr(at + 19));
  };
  EXPECT_LT(pool(offline.out), pool(fused.out));
  EXPECT_THAT(offline.out, HasSubstr("PyTorch-native top-k/top-p"));
  std::vector<std::string> bad = base;
  bad.insert(bad.end(), {"--sampler-backend", "flashinfer"});
  Result refused = RunCapplan(bad);
  EXPECT_EQ(refused.code, kExitInvalid);
  EXPECT_THAT(refused.err,
              HasSubstr("--sampler-backend = flashinfer; must be one of default, native"));
}

// A vision-language checkpoint served text-only loads no vision tower: less
// weight per GPU and a larger pool, offline and through the server alike;
// a desktop's memory shrinks SGLang's pool (its fraction of what is free).
TEST_F(CliBundledTest, MemoryTextOnlyAndFreeMemoryAtStartChangeWhatTheyShould) {
  const std::vector<std::string> base = {
      "memory",   "--model", "qwen3.5-27b",     "--gpu", "nvidia-h100-sxm-80gb",
      "--engine", "vllm",    "--max-model-len", "4096",  "--json"};
  auto number = [](const std::string& json_out, const std::string& key) {
    const std::string quoted = "\"" + key + "\": ";
    const size_t at = json_out.find(quoted);
    EXPECT_NE(at, std::string::npos) << key;
    if (at == std::string::npos) return 0.0;
    size_t from = at + quoted.size();
    if (json_out[from] == '"') ++from;
    return std::stod(json_out.substr(from));
  };
  Result full = RunCapplan(base);
  ASSERT_EQ(full.code, kExitOk) << full.err;
  std::vector<std::string> text = base;
  text.push_back("--language-model-only");
  Result offline = RunCapplan(text);
  ASSERT_EQ(offline.code, kExitOk) << offline.err;
  EXPECT_EQ(RunCapplan(Online(text)).out, offline.out);
  EXPECT_LT(number(offline.out, "weights_bytes"), number(full.out, "weights_bytes"));
  EXPECT_GT(number(offline.out, "kv_pool_tokens"), number(full.out, "kv_pool_tokens"));

  const std::vector<std::string> sglang = {
      "memory",   "--model", "qwen3-8b", "--gpu", "nvidia-rtx-3090-24gb",
      "--engine", "sglang",  "--json"};
  Result whole = RunCapplan(sglang);
  ASSERT_EQ(whole.code, kExitOk) << whole.err;
  std::vector<std::string> desktop = sglang;
  desktop.insert(desktop.end(), {"--free-memory-gib", "22"});
  Result less = RunCapplan(desktop);
  ASSERT_EQ(less.code, kExitOk) << less.err;
  EXPECT_LT(number(less.out, "kv_pool_tokens"), number(whole.out, "kv_pool_tokens"));
  EXPECT_THAT(less.out, HasSubstr("22.00 GiB stated free at start"));
  desktop.back() = "30";  // above the card's 23.58 GiB
  Result refused = RunCapplan(desktop);
  EXPECT_EQ(refused.code, kExitInvalid);
  EXPECT_THAT(refused.err, HasSubstr("free_memory_at_start_bytes"));
}

TEST_F(CliBundledTest, MemoryBadFlagValueExitsTwoNamingTheFlagAndTheField) {
  Result r = RunCapplan({"memory", "--model", "llama-3.1-8b-instruct", "--gpu", "nvidia-l4-24gb",
                         "--tp", "3", "--gpus", "3"});
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT: --tp 3; must divide num_attention_heads = 32 "
                               "[PlanMemoryRequest.deployment.parallelism.tp]"));
  Result online = RunCapplan(Online({"memory", "--model", "llama-3.1-8b-instruct", "--gpu",
                                     "nvidia-l4-24gb", "--tp", "3", "--gpus", "3"}));
  EXPECT_EQ(online.err, r.err);
}

// The user gave --gpus 3 and no --tp: the error is about --gpus, and says
// what to add; it does not complain about a tp the user never set.
TEST_F(CliBundledTest, GpusWithoutTpNamesGpusAndAsksForTp) {
  std::vector<std::string> command = {
      "memory", "--model", "llama-3.1-8b-instruct", "--gpu", "nvidia-l4-24gb", "--gpus", "3"};
  Result r = RunCapplan(command);
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("INVALID_ARGUMENT: --gpus 3; with no tp given"));
  EXPECT_THAT(r.err, HasSubstr("must divide num_attention_heads = 32: set --tp (and --pp)"));
  EXPECT_THAT(r.err, Not(HasSubstr("tp = 3")));
  EXPECT_THAT(r.err, HasSubstr("[PlanMemoryRequest.deployment.gpu_count"));
  EXPECT_EQ(RunCapplan(Online(command)).err, r.err);
  // --gpus 3 with --tp 1: three replicas of one GPU each fit.
  command.push_back("--tp");
  command.push_back("1");
  EXPECT_EQ(RunCapplan(command).code, kExitOk);
  // --gpus 5 --pp 2: not a multiple of pp, said of --gpus.
  Result pp = RunCapplan({"memory", "--model", "llama-3.1-8b-instruct", "--gpu", "nvidia-l4-24gb",
                          "--gpus", "5", "--pp", "2"});
  EXPECT_THAT(pp.err, HasSubstr("--gpus 5; must be a multiple of pp = 2 (no tp given"));
}

// Unknown ids: "did you mean" from the server's NOT_FOUND message, offline
// and through the server alike; a flag's id is named by its flag.
TEST_F(CliBundledTest, UnknownIdsSuggestTheNearestIds) {
  Result gpu = RunCapplan({"memory", "--model", "qwen3-8b", "--gpu", "h100"});
  EXPECT_EQ(gpu.code, kExitInvalid);
  EXPECT_THAT(gpu.err, HasSubstr("NOT_FOUND: --gpu h100; not in the catalogue; did you mean "));
  EXPECT_THAT(gpu.err, HasSubstr("nvidia-h100-sxm-80gb"));
  EXPECT_THAT(gpu.err, HasSubstr("(capplan hardware list lists them)"));
  EXPECT_EQ(RunCapplan(Online({"memory", "--model", "qwen3-8b", "--gpu", "h100"})).err, gpu.err);
  Result model = RunCapplan({"hardware", "get", "h100"});
  EXPECT_THAT(model.err, HasSubstr("NOT_FOUND: hardware 'h100' is not in the catalogue; did you "
                                   "mean nvidia-h100-"));
  Result baseline = RunCapplan({"memory", "--baseline", "seed-000"});
  EXPECT_THAT(baseline.err,
              HasSubstr("--baseline seed-000; no such baseline in the catalogue; did you mean "
                        "seed-000-122b-moe-int4-4gpu-pcie-sglang?"));
  Result sweep = RunCapplan({"sweep", "--baseline", "seed-002", "--concurrency", "1"});
  EXPECT_THAT(sweep.err, HasSubstr("baseline 'seed-002' is not in the catalogue; did you mean "
                                   "seed-002-qwen3-next-nvfp4-4x-rtx5090?"));
  Result m = RunCapplan({"models", "get", "qwen3-8"});
  EXPECT_THAT(m.err, HasSubstr("did you mean qwen3-8b"));
}

TEST_F(CliBundledTest, MemoryFlagsOfOtherCommandsAreRejected) {
  Result r = RunCapplan({"hardware", "list", "--tp", "2"});
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("unknown flag --tp"));
}

// The server's own NOT_FOUND status carries the suggestion (for any
// client, not only the CLI).
TEST_F(CliTest, ServerNotFoundMessageSuggestsIds) {
  Result r = RunCapplan(Online({"hardware", "get", "test-gpu"}));
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("NOT_FOUND: hardware 'test-gpu' is not in the catalogue; did you "
                               "mean test-gpu-24gb?"));
}

// ------------------------------------------------------ --hardware-file

// A card that is not in the catalogue, as a user would write it.
std::string CardText(const std::string& usable_memory_bytes) {
  return absl::StrCat(R"(# Acme X1: not in the catalogue
id: "acme-x1"
vendor: "Acme"
name: "Acme X1"
architecture: "Hopper"
memory_bytes: 103079215104
usable_memory_bytes: )",
                      usable_memory_bytes, R"(
memory_bandwidth_bytes_per_second: 2.5e12
peak_compute { format: NUMBER_FORMAT_BF16 dense_flops_per_second: 5e14 }
peak_compute { format: NUMBER_FORMAT_FP8 dense_flops_per_second: 1e15 }
intra_node { kind: LINK_KIND_PCIE bandwidth_bytes_per_second: 6.4e10 pcie_generation: 5
             peer_to_peer: true }
)");
}

std::vector<std::string> MemoryOn(const std::string& card_file) {
  return {"memory",  "--model",         "qwen3-8b", "--hardware-file",
          card_file, "--max-model-len", "32000",    "--json"};
}

TEST_F(CliBundledTest, MemoryPlansForACardFromAFileOfflineAndThroughTheServer) {
  TempDir dir;
  dir.Write("small.txtpb", CardText("68000000000"));
  dir.Write("large.txtpb", CardText("100000000000"));
  const std::string small = (dir.path() / "small.txtpb").string();
  Result offline = RunCapplan(MemoryOn(small));
  ASSERT_EQ(offline.code, kExitOk) << offline.err;
  EXPECT_THAT(offline.out, HasSubstr("\"hardware_id\": \"acme-x1\""));
  EXPECT_THAT(offline.out, HasSubstr("\"capacity_bytes\": \"68000000000\""));
  Result online = RunCapplan(Online(MemoryOn(small)));
  ASSERT_EQ(online.code, kExitOk) << online.err;
  EXPECT_EQ(offline.out, online.out);
  // The card's own memory decides the pool: more memory, a larger pool.
  Result large = RunCapplan(MemoryOn((dir.path() / "large.txtpb").string()));
  ASSERT_EQ(large.code, kExitOk) << large.err;
  EXPECT_THAT(large.out, HasSubstr("\"capacity_bytes\": \"100000000000\""));
  EXPECT_NE(large.out, offline.out);
  // The table says whose card it is.
  Result table = RunCapplan({"memory", "--model", "qwen3-8b", "--hardware-file", small});
  EXPECT_THAT(table.out, HasSubstr("on 1 GPU × acme-x1"));
  EXPECT_THAT(table.out, HasSubstr("hardware 'acme-x1' is the request's own card"));
}

TEST_F(CliBundledTest, HardwareFileMayBeJson) {
  TempDir dir;
  dir.Write("card.json", R"({"id": "acme-x1", "vendor": "Acme", "name": "Acme X1",
    "memoryBytes": "103079215104", "usable_memory_bytes": 68000000000,
    "memory_bandwidth_bytes_per_second": 2.5e12,
    "peak_compute": [{"format": "NUMBER_FORMAT_BF16", "dense_flops_per_second": 5e14}]})");
  Result r = RunCapplan(MemoryOn((dir.path() / "card.json").string()));
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_THAT(r.out, HasSubstr("\"capacity_bytes\": \"68000000000\""));
}

TEST_F(CliBundledTest, BadHardwareFileNamesFileLineAndColumn) {
  TempDir dir;
  std::string text = CardText("68000000000");
  text.replace(text.find("2.5e12"), 6, "2500");  // GB/s where bytes/s belong
  dir.Write("card.txtpb", text);
  const std::string file = (dir.path() / "card.txtpb").string();
  Result r = RunCapplan(MemoryOn(file));
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr(file + ":8:1: memory_bandwidth_bytes_per_second = 2500; must be "
                                      "in [1e+10, 1e+15] bytes/s"));
  EXPECT_EQ(RunCapplan(Online(MemoryOn(file))).err, r.err);
  dir.Write("syntax.txtpb", "id: \"acme-x1\"\nvendor: Acme\n");
  r = RunCapplan(MemoryOn((dir.path() / "syntax.txtpb").string()));
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("syntax.txtpb:2:9: "));
  r = RunCapplan(MemoryOn((dir.path() / "missing.txtpb").string()));
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("--hardware-file = " + (dir.path() / "missing.txtpb").string() +
                               "; cannot open the file"));
}

TEST_F(CliBundledTest, HardwareFileExcludesGpu) {
  TempDir dir;
  dir.Write("card.txtpb", CardText("68000000000"));
  std::vector<std::string> args = MemoryOn((dir.path() / "card.txtpb").string());
  args.push_back("--gpu=nvidia-l4-24gb");
  Result r = RunCapplan(args);
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr("--gpu and --hardware-file exclude each other"));
}

TEST_F(CliBundledTest, EveryCommandTakingGpuTakesAHardwareFile) {
  TempDir dir;
  dir.Write("card.txtpb", CardText("68000000000"));
  const std::string card = (dir.path() / "card.txtpb").string();
  const std::vector<std::string> load = {"--input-tokens", "1000", "--output-tokens", "200"};
  std::vector<std::vector<std::string>> commands = {
      {"sweep", "--model", "qwen3-8b", "--hardware-file", card, "--concurrency", "1,4"},
      {"plan", "--model", "qwen3-8b", "--hardware-file", card, "--ttft-p95", "2"},
      {"validate", "--model", "qwen3-8b", "--hardware-file", card, "--max-model-len", "8192"},
      {"validate", "--launch", "vllm serve Qwen/Qwen3-8B --max-model-len 8192", "--hardware-file",
       card}};
  for (std::vector<std::string> command : commands) {
    command.insert(command.end(), load.begin(), load.end());
    command.push_back("--json");
    Result offline = RunCapplan(command);
    EXPECT_EQ(offline.code, kExitOk) << command[0] << ": " << offline.err;
    EXPECT_THAT(offline.out, HasSubstr("acme-x1")) << command[0];
    Result online = RunCapplan(Online(command));
    EXPECT_EQ(online.out, offline.out) << command[0];
  }
}

TEST_F(CliBundledTest, IngestWritesTheCardOfAHardwareFileWithItsBaseline) {
  TempDir out;
  std::filesystem::copy(testing::BundledDataDir(), out.path(),
                        std::filesystem::copy_options::recursive);
  const std::string run = std::string(CAPPLAN_SOURCE_DIR) +
                          "/tests/data/ingest/vllm-json/dstack_h100_16qps.trimmed.json";
  auto ingest = [&](const std::string& card, const std::string& id) {
    return RunCapplan({"ingest", run, "--id", id, "--model", "qwen3-8b", "--gpus", "1",
                       "--hardware-file", card, "--source", "https://example.com/run", "--out-dir",
                       out.path().string()});
  };
  // A catalogue entry cites every figure: an uncited card is refused where it is written.
  out.Write("cards/uncited.txtpb", CardText("68000000000"));
  const std::string uncited = (out.path() / "cards/uncited.txtpb").string();
  Result r = ingest(uncited, "run-on-acme");
  EXPECT_EQ(r.code, kExitInvalid);
  EXPECT_THAT(r.err, HasSubstr(uncited + ":6:1: memory_bytes has no citation"));
  EXPECT_FALSE(std::filesystem::exists(out.path() / "hardware/acme-x1.txtpb"));

  out.Write("cards/cited.txtpb",
            CardText("68000000000") +
                "sources { fields: \"memory_bytes\" fields: \"usable_memory_bytes\"\n"
                "  fields: \"memory_bandwidth_bytes_per_second\" fields: \"peak_compute\"\n"
                "  fields: \"intra_node\" document: \"https://example.com/acme-x1.pdf\" }\n");
  r = ingest((out.path() / "cards/cited.txtpb").string(), "run-on-acme");
  ASSERT_EQ(r.code, kExitOk) << r.err;
  EXPECT_TRUE(std::filesystem::exists(out.path() / "hardware/acme-x1.txtpb"));
  // The directory is a valid catalogue whose baseline names the new card.
  Result get =
      RunCapplan({"baselines", "get", "run-on-acme", "--json", "--data-dir", out.path().string()});
  ASSERT_EQ(get.code, kExitOk) << get.err;
  EXPECT_THAT(get.out, HasSubstr("\"hardware_id\": \"acme-x1\""));
}

// capplan --server over TLS and mutual TLS, against an in-process server
// with certificates made by openssl for the test.
class CliTlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_TRUE(certs_.Make()) << certs_.error();
    WriteMiniCatalogue(dir_);
  }
  void Start(bool mutual) {
    ServerOptions options = testing::LoopbackServerOptions(dir_.path().string());
    options.tls_cert_file = certs_.Pem("server");
    options.tls_key_file = certs_.Key("server");
    if (mutual) options.tls_client_ca_file = certs_.Pem("ca");
    auto server = PlannerServer::Create(options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }
  std::vector<std::string> Online(std::vector<std::string> args) {
    args.insert(args.end(), {"--timeout-seconds", "5", "--server",
                             "127.0.0.1:" + std::to_string(server_->port())});
    return args;
  }

  testing::TestCertificates certs_;
  TempDir dir_;
  std::unique_ptr<PlannerServer> server_;
};

TEST_F(CliTlsTest, TlsServerAnswersWithTheCaAndRefusesPlaintext) {
  Start(false);
  Result tls = RunCapplan(Online({"hardware", "list", "--tls-ca-file", certs_.Pem("ca")}));
  EXPECT_EQ(tls.code, 0) << tls.err;
  EXPECT_THAT(tls.out, HasSubstr("test-gpu-24gb"));
  Result plain = RunCapplan(Online({"hardware", "list"}));
  EXPECT_EQ(plain.code, 2);
  EXPECT_THAT(plain.err, HasSubstr("unreachable"));
  Result wrong_ca =
      RunCapplan(Online({"hardware", "list", "--tls-ca-file", certs_.Pem("other-ca")}));
  EXPECT_EQ(wrong_ca.code, 2);
  EXPECT_THAT(wrong_ca.err, HasSubstr("unreachable"));
}

TEST_F(CliTlsTest, MutualTlsNeedsTheClientCertificate) {
  Start(true);
  Result with_cert =
      RunCapplan(Online({"hardware", "list", "--tls-ca-file", certs_.Pem("ca"), "--tls-cert-file",
                         certs_.Pem("client"), "--tls-key-file", certs_.Key("client")}));
  EXPECT_EQ(with_cert.code, 0) << with_cert.err;
  EXPECT_THAT(with_cert.out, HasSubstr("test-gpu-24gb"));
  Result without = RunCapplan(Online({"hardware", "list", "--tls-ca-file", certs_.Pem("ca")}));
  EXPECT_EQ(without.code, 2);
  EXPECT_THAT(without.err, HasSubstr("unreachable"));
}

TEST_F(CliTlsTest, FlagErrorsNameTheFlag) {
  Start(false);
  Result no_key = RunCapplan(Online({"hardware", "list", "--tls-cert-file", certs_.Pem("client")}));
  EXPECT_EQ(no_key.code, 2);
  EXPECT_THAT(no_key.err, HasSubstr("--tls-cert-file needs --tls-key-file"));
  Result offline = RunCapplan({"hardware", "list", "--tls-ca-file", certs_.Pem("ca")});
  EXPECT_EQ(offline.code, 2);
  EXPECT_THAT(offline.err, HasSubstr("--tls-ca-file needs --server"));
  const std::string not_pem = (dir_.path() / "hardware/test-gpu-24gb.txtpb").string();
  Result bad = RunCapplan(Online({"hardware", "list", "--tls-ca-file", not_pem}));
  EXPECT_EQ(bad.code, 2);
  EXPECT_THAT(bad.err, HasSubstr("--tls-ca-file = " + not_pem + ": cannot read a PEM file"));
}

TEST(Cli, HelpPrintsUsageAndExitsZero) {
  std::ostringstream out, err;
  EXPECT_EQ(RunCli({"--help"}, out, err), kExitOk);
  EXPECT_THAT(out.str(), HasSubstr("usage: capplan"));
}

}  // namespace
}  // namespace capplan::service
