// Engine start-up logs: facts by meaning across vLLM V0/V1, SGLang and
// TensorRT-LLM wordings, GiB → bytes, raw lines kept, conflicts recorded.

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/translate/ingest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

constexpr double kGiB = 1073741824.0;

uint64_t GiB(double x) { return static_cast<uint64_t>(x * kGiB + 0.5); }

std::string Fixture(const std::string& path) {
  std::ifstream in(std::string(CAPPLAN_SOURCE_DIR) + "/tests/data/ingest/engine-log/" + path,
                   std::ios::binary);
  EXPECT_TRUE(in.good()) << path;
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

EngineLogFacts Facts(const std::string& path) {
  absl::StatusOr<IngestedFile> f = ParseMeasurementFile(path, Fixture(path));
  EXPECT_TRUE(f.ok()) << f.status();
  if (!f.ok()) return EngineLogFacts();
  EXPECT_EQ(f->format, IngestFormat::kEngineLog);
  EXPECT_TRUE(f->runs.empty());
  EXPECT_TRUE(f->engine_log.has_value());
  return f->engine_log.value_or(EngineLogFacts());
}

bool HasLine(const EngineLogFacts& f, int line, const std::string& text) {
  for (const EngineLogLine& l : f.matched_lines) {
    if (l.line_number == line && l.text.find(text) != std::string::npos) return true;
  }
  return false;
}

// vLLM 0.10.0 without FlashInfer warns that it samples with the PyTorch-native
// top-k/top-p: the install's dummy sampler then sorts the whole vocabulary.
TEST(IngestEngineLog, FlashInferFallbackWarningMarksTheNativeSampler) {
  const EngineLogFacts f = Facts("vllm_3090_native_sampler_excerpt.log");
  EXPECT_EQ(f.engine, "vllm");
  EXPECT_EQ(f.native_sampler, true);
  EXPECT_TRUE(HasLine(f, 6, "Falling back to the PyTorch-native implementation"));
  EXPECT_EQ(f.kv_pool_tokens, 20960u);
  EXPECT_EQ(Facts("dennislee_vllm_v1_qwen2_7b_a100.log").native_sampler, std::nullopt);
}

TEST(IngestEngineLog, RealVllmV1StartupLogGivesEveryFactAndItsLine) {
  const EngineLogFacts f = Facts("dennislee_vllm_v1_qwen2_7b_a100.log");
  EXPECT_EQ(f.engine, "vllm");
  EXPECT_EQ(f.engine_version, "0.10.1.1");
  EXPECT_EQ(f.engine_generation, "V1");
  EXPECT_EQ(f.model, "Qwen2-7B-Instruct");
  EXPECT_EQ(f.weights_bytes, GiB(14.2488));
  EXPECT_EQ(f.kv_cache_bytes, GiB(24.83));
  EXPECT_EQ(f.kv_pool_tokens, 464848u);  // "464,848"
  EXPECT_DOUBLE_EQ(*f.max_concurrency, 28.37);
  EXPECT_EQ(f.max_concurrency_at_tokens, 16384u);  // "16,384"
  EXPECT_EQ(f.gpu_blocks, 29053u);                 // wrapped: "num_gpu_blocks is" / ": 29053"
  EXPECT_EQ(f.cuda_graph_bytes, GiB(0.50));
  EXPECT_EQ(f.tp, 1u);  // wrapped: "tensor_parallel_si" / "ze=1"
  EXPECT_EQ(f.pp, 1u);
  EXPECT_EQ(f.max_model_len, 16384u);
  EXPECT_EQ(f.max_num_batched_tokens, 2048u);
  EXPECT_DOUBLE_EQ(*f.gpu_memory_utilization, 0.5);
  EXPECT_EQ(f.kv_cache_dtype, "auto");
  EXPECT_EQ(f.enforce_eager, false);
  EXPECT_EQ(f.enable_prefix_caching, true);
  EXPECT_EQ(f.block_size, std::nullopt);  // the log does not state it
  EXPECT_EQ(f.gpu_name, std::nullopt);
  EXPECT_THAT(f.conflicts, IsEmpty());
  EXPECT_TRUE(HasLine(f, 31, "Model loading took 14.2488 GiB"));
  EXPECT_TRUE(HasLine(f, 42, "Available KV cache memory: 24.83 GiB"));
  EXPECT_TRUE(HasLine(f, 43, "GPU KV cache size: 464,848 tokens"));
  EXPECT_TRUE(HasLine(f, 44, "Maximum concurrency for 16,384 tokens per request: 28.37x"));
  EXPECT_TRUE(HasLine(f, 48, "num_gpu_blocks is: 29053"));
}

TEST(IngestEngineLog, EarlyV1PrintsGbThatIsGibAndBlocks) {
  const EngineLogFacts f = Facts("vllm-v1-2025-01.log");
  EXPECT_EQ(f.weights_bytes, GiB(67.7229));  // "67.7229 GB" is 2^30-byte units
  EXPECT_EQ(f.gpu_blocks, 1381u);
  EXPECT_DOUBLE_EQ(*f.max_concurrency, 10.79);
  EXPECT_EQ(f.max_concurrency_at_tokens, 2048u);
  EXPECT_EQ(f.kv_pool_tokens, std::nullopt);
  EXPECT_EQ(f.engine_generation, std::nullopt);
}

TEST(IngestEngineLog, RepeatedEqualLineIsNoConflict) {
  const EngineLogFacts f = Facts("vllm-v1-2025-11.log");
  EXPECT_EQ(f.kv_cache_bytes, GiB(2.30));
  EXPECT_EQ(f.kv_pool_tokens, 75840u);
  EXPECT_EQ(f.max_concurrency_at_tokens, 120000u);
  EXPECT_DOUBLE_EQ(*f.max_concurrency, 2.48);
  EXPECT_EQ(f.engine_generation, "V1");
  EXPECT_THAT(f.conflicts, IsEmpty());
  EXPECT_EQ(f.matched_lines.size(), 4u);
}

TEST(IngestEngineLog, V0ProfilingSummaryThroughAViewersBoxCharacters) {
  const EngineLogFacts f = Facts("vllm-v0-2025-03.log");
  EXPECT_EQ(f.gpu_total_bytes, GiB(79.19));
  EXPECT_EQ(f.weights_bytes, GiB(12.55));
  EXPECT_EQ(f.kv_cache_bytes, GiB(56.18));
  EXPECT_EQ(f.gpu_blocks, 7191u);  // "# cuda blocks: 7191, # CPU blocks: 512"
  EXPECT_EQ(f.engine_generation, "V0");
}

TEST(IngestEngineLog, SchemaV0OneLineSummaryAndEngineConfig) {
  const EngineLogFacts f = Facts("schema_vllm_v0_064.log");
  EXPECT_EQ(f.engine_version, "0.6.4");
  EXPECT_EQ(f.engine_generation, "V0");
  EXPECT_EQ(f.weights_bytes, GiB(14.9888));
  EXPECT_EQ(f.kv_cache_bytes, GiB(3.81));
  EXPECT_EQ(f.gpu_total_bytes, GiB(23.58));
  EXPECT_EQ(f.gpu_blocks, 1952u);
  EXPECT_EQ(f.max_concurrency_at_tokens, 20000u);
  EXPECT_EQ(f.max_model_len, 20000u);
  EXPECT_EQ(f.tp, 1u);
  EXPECT_EQ(f.enable_prefix_caching, false);
}

TEST(IngestEngineLog, V0RefusalStatesThePoolInTokens) {
  const EngineLogFacts f = Facts("vllm_v0_refusal_excerpt.log");
  EXPECT_EQ(f.kv_pool_tokens, 24320u);
  EXPECT_EQ(f.engine, "vllm");
}

TEST(IngestEngineLog, JoinedExcerptWithGpuNameAndNonDefaultArgs) {
  const EngineLogFacts f = Facts("vllm_gb10_ngc_excerpt.log");
  EXPECT_EQ(f.gpu_name, "NVIDIA GB10");
  EXPECT_EQ(f.weights_bytes, GiB(13.7193));
  EXPECT_EQ(f.kv_cache_bytes, GiB(12.94));
  EXPECT_EQ(f.kv_pool_tokens, 282624u);
  EXPECT_DOUBLE_EQ(*f.max_concurrency, 54.44);
  EXPECT_EQ(f.max_concurrency_at_tokens, 8192u);
  EXPECT_EQ(f.cuda_graph_bytes, GiB(0.86));
  EXPECT_DOUBLE_EQ(*f.gpu_memory_utilization, 0.25);
  EXPECT_EQ(f.max_model_len, 8192u);
  EXPECT_EQ(f.enable_prefix_caching, true);
}

TEST(IngestEngineLog, SglangMhaPoolIsKPlusV) {
  const EngineLogFacts f = Facts("sglang-2025-03.log");
  EXPECT_EQ(f.engine, "sglang");
  EXPECT_EQ(f.weights_bytes, GiB(8.13));
  EXPECT_EQ(f.kv_pool_tokens, 834615u);
  EXPECT_EQ(f.kv_cache_bytes, 2 * GiB(54.12));
}

// The free memory SGLang's budget takes its fraction of: the begin line's
// avail mem, else the end line's avail mem plus what loading took.
TEST(IngestEngineLog, SglangFreeMemoryAtStartFromTheLoadLines) {
  const EngineLogFacts wsl = Facts("sglang_wsl2_load_begin_excerpt.log");
  EXPECT_EQ(wsl.engine, "sglang");
  EXPECT_EQ(wsl.free_memory_at_start_bytes, GiB(22.76));
  EXPECT_EQ(wsl.weights_bytes, std::nullopt);  // this release prints no mem usage
  EXPECT_EQ(wsl.kv_pool_tokens, 105531u);
  EXPECT_THAT(wsl.conflicts, IsEmpty());
  EXPECT_EQ(EngineLogToCatalog(wsl).engine.free_memory_at_start_bytes(), GiB(22.76));
  const EngineLogFacts end_only = Facts("sglang-2025-03.log");
  EXPECT_EQ(end_only.free_memory_at_start_bytes, GiB(131.08) + GiB(8.13));
}

// Every TP rank prints its own free memory; SGLang's budget takes the
// smallest over the group (get_available_gpu_memory(distributed=True) reduces
// with MIN), so the smallest is kept, whichever rank prints last, and the
// ranks' differing figures are no conflict. The fixtures are synthetic: the
// L4 TP4 log's TP0 lines with a second rank 0.23 GiB lower.
TEST(IngestEngineLog, SglangFreeMemoryAtStartIsTheSmallestOverTheRanks) {
  const EngineLogFacts begin = Facts("synthetic_sglang_tp2_ranks.log");
  EXPECT_EQ(begin.free_memory_at_start_bytes, GiB(21.40));
  EXPECT_THAT(begin.conflicts, IsEmpty());
  const EngineLogFacts end_only = Facts("synthetic_sglang_tp2_ranks_end_only.log");
  EXPECT_EQ(end_only.free_memory_at_start_bytes, GiB(5.86) + GiB(15.54));
  EXPECT_THAT(end_only.conflicts, IsEmpty());
  // Per rank: TP0's begin line, TP1's end-line sum (its begin line missing);
  // the smallest of the two.
  const EngineLogFacts mixed = Facts("synthetic_sglang_tp2_mixed.log");
  EXPECT_EQ(mixed.free_memory_at_start_bytes, GiB(5.86) + GiB(15.54));
  EXPECT_THAT(mixed.conflicts, IsEmpty());
}

// vLLM 0.22.1 states the fraction in effect when CUDA-graph memory profiling
// is on (the user set none: the release's default, 0.92).
TEST(IngestEngineLog, VllmStatesTheFractionInEffect) {
  const EngineLogFacts f = Facts("staged_vllm-h100-qwen3_30b_a3b_2507-fp8-v0221.log");
  EXPECT_EQ(f.engine_version, "0.22.1");
  ASSERT_TRUE(f.gpu_memory_utilization.has_value());
  EXPECT_DOUBLE_EQ(*f.gpu_memory_utilization, 0.92);
  EXPECT_THAT(f.conflicts, IsEmpty());
}

// vLLM 0.22 (V2 model runner) on 2 x T4: the non-default args' 'half' and
// the engine config's torch.float16 are one dtype, not a conflict.
TEST(IngestEngineLog, Vllm022HalfAndFloat16AreOneDtype) {
  const EngineLogFacts f = Facts("staged_vllm-t4x2-qwen3_8b-tp2-v0220-eager.log");
  EXPECT_EQ(f.engine, "vllm");
  EXPECT_EQ(f.engine_version, "0.22.0");
  EXPECT_EQ(f.dtype, "float16");
  EXPECT_THAT(f.conflicts, IsEmpty());
  EXPECT_EQ(f.tp, 2u);
  EXPECT_EQ(f.enforce_eager, true);
  EXPECT_EQ(f.weights_bytes, GiB(7.64));
  EXPECT_EQ(f.kv_cache_bytes, GiB(4.11));
  EXPECT_EQ(f.kv_pool_tokens, 59856u);
  EXPECT_EQ(EngineLogToCatalog(f).weight_format, v1::WEIGHT_FORMAT_FP16);
}

// vLLM's non-default args state --language-model-only; it reaches the
// deployment's engine settings (the vision tower is not planned).
TEST(IngestEngineLog, VllmLanguageModelOnlyFromTheNonDefaultArgs) {
  const EngineLogFacts f = Facts("vllm_language_model_only_excerpt.log");
  EXPECT_EQ(f.language_model_only, true);
  EXPECT_EQ(f.max_model_len, 4096u);
  EXPECT_EQ(f.kv_pool_tokens, 292522u);
  EXPECT_THAT(f.conflicts, IsEmpty());
  EXPECT_TRUE(EngineLogToCatalog(f).engine.language_model_only());
  EXPECT_EQ(Facts("dennislee_vllm_v1_qwen2_7b_a100.log").language_model_only, std::nullopt);
  EXPECT_FALSE(EngineLogToCatalog(Facts("dennislee_vllm_v1_qwen2_7b_a100.log"))
                   .engine.language_model_only());
}

TEST(IngestEngineLog, SglangJoinedExcerptWithSchedulerLine) {
  const EngineLogFacts f = Facts("sglang_issue6291_excerpt.log");
  EXPECT_EQ(f.engine, "sglang");
  EXPECT_EQ(f.weights_bytes, GiB(15.35));
  EXPECT_EQ(f.kv_cache_bytes, 2 * GiB(27.80));
  EXPECT_EQ(f.kv_pool_tokens, 404890u);
  EXPECT_EQ(f.cuda_graph_bytes, GiB(1.39));  // the capture line's, not the weights' mem usage
  EXPECT_EQ(f.max_num_seqs, 4097u);
  EXPECT_EQ(f.max_model_len, 8096u);
  EXPECT_EQ(f.max_num_batched_tokens, 8192u);
  EXPECT_THAT(f.conflicts, IsEmpty());
}

TEST(IngestEngineLog, SchemaSglangMlaAndServerArgs) {
  const EngineLogFacts f = Facts("schema_sglang_mla.log");
  EXPECT_EQ(f.model, "deepseek-ai/DeepSeek-V2-Lite-Chat");
  EXPECT_EQ(f.tp, 2u);
  EXPECT_EQ(f.pp, 1u);
  EXPECT_DOUBLE_EQ(*f.mem_fraction_static, 0.85);
  EXPECT_EQ(f.block_size, 1u);  // page_size
  EXPECT_EQ(f.kv_cache_dtype, "auto");
  EXPECT_EQ(f.enforce_eager, false);         // disable_cuda_graph=False
  EXPECT_EQ(f.enable_prefix_caching, true);  // disable_radix_cache=False
  EXPECT_EQ(f.weights_bytes, GiB(15.50));
  EXPECT_EQ(f.kv_cache_bytes, GiB(32.19));  // MLA: one "KV size"
  EXPECT_EQ(f.kv_pool_tokens, 1200000u);
  EXPECT_EQ(f.cuda_graph_bytes, GiB(1.05));
  EXPECT_EQ(f.max_num_seqs, 256u);
  EXPECT_EQ(f.max_model_len, 32768u);
}

TEST(IngestEngineLog, TensorRtLlmAllocationInTokensAndGib) {
  const EngineLogFacts f = Facts("trtllm-2025-04.log");
  EXPECT_EQ(f.engine, "tensorrt-llm");
  EXPECT_EQ(f.block_size, 32u);
  EXPECT_EQ(f.kv_cache_bytes, GiB(78.30));
  EXPECT_EQ(f.kv_pool_tokens, 3731744u);
  EXPECT_EQ(f.gpu_blocks, 116617u);
}

TEST(IngestEngineLog, OlderTensorRtLlmBytesAndTokens) {
  const EngineLogFacts f = Facts("trtllm-2024-04.log");
  EXPECT_EQ(f.kv_cache_bytes, 69524783104u);
  EXPECT_EQ(f.kv_pool_tokens, 132608u);
  const EngineLogFacts g = Facts("trtllm-2024-09.log");
  EXPECT_EQ(g.engine, "tensorrt-llm");
  EXPECT_EQ(g.gpu_total_bytes, GiB(39.39));
  EXPECT_EQ(g.gpu_blocks, 631u);
}

TEST(IngestEngineLog, SecondAllocationWinsAndTheConflictIsRecorded) {
  const EngineLogFacts f = Facts("schema_trtllm_pytorch_two_passes.log");
  EXPECT_EQ(f.kv_pool_tokens, 786432u);
  EXPECT_EQ(f.kv_cache_bytes, GiB(48.0));
  EXPECT_THAT(f.conflicts, Contains(HasSubstr("kv_pool_tokens: line 2 says 16384, line 6 says "
                                              "786432; the last is kept")));
}

TEST(IngestEngineLog, NegativeKvMemoryIsRefusedWithItsLine) {
  const std::string log =
      "INFO 01-01 00:00:00 [gpu_worker.py:276] Model loading took 70.10 GiB\n"
      "INFO 01-01 00:00:01 [gpu_worker.py:276] Available KV cache memory: -2.34 GiB\n";
  EXPECT_THAT(ParseMeasurementFile("vllm.log", log),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("vllm.log:2: \"Available KV cache memory: -2.34\"; must not be "
                                 "negative")));
}

TEST(IngestEngineLog, TokenCountBeyondSixtyFourBitsIsRefused) {
  EXPECT_THAT(
      ParseMeasurementFile("vllm.log", "GPU KV cache size: 99,999,999,999,999,999,999 tokens\n"),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("vllm.log:1: \"GPU KV cache size: 99,999,999,999,999,999,999\"; must "
                         "be a whole number below 2^64")));
}

TEST(IngestEngineLog, LogWithoutFactsIsRefusedWhenForced) {
  EXPECT_THAT(
      ParseMeasurementFile("server.log", "INFO started\nINFO ready\n", IngestFormat::kEngineLog),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("server.log: no engine start-up facts")));
}

TEST(IngestEngineLog, CatalogPartsCarryTheFactsAndRawLines) {
  const EngineLogFacts f = Facts("dennislee_vllm_v1_qwen2_7b_a100.log");
  const EngineLogCatalogParts p = EngineLogToCatalog(f);
  ASSERT_TRUE(p.kv_pool.has_value());
  EXPECT_EQ(p.kv_pool->tokens(), 464848u);
  EXPECT_DOUBLE_EQ(p.kv_pool->max_concurrent_sequences(), 28.37);
  EXPECT_EQ(p.kv_pool->at_sequence_tokens(), 16384u);
  EXPECT_THAT(p.kv_pool->note(), HasSubstr("GPU KV cache size: 464,848 tokens"));
  ASSERT_TRUE(p.memory_account.has_value());
  EXPECT_EQ(p.memory_account->scope(), "per GPU");
  EXPECT_EQ(p.memory_account->weights_bytes(), GiB(14.2488));
  EXPECT_EQ(p.memory_account->kv_cache_bytes(), GiB(24.83));
  EXPECT_EQ(p.memory_account->cuda_graph_bytes(), GiB(0.50));
  EXPECT_FALSE(p.memory_account->has_capacity_bytes());
  ASSERT_TRUE(p.weight_footprint.has_value());
  EXPECT_EQ(p.weight_footprint->bytes(), GiB(14.2488));
  EXPECT_EQ(p.engine.kind(), v1::ENGINE_KIND_VLLM);
  EXPECT_EQ(p.engine.version(), "0.10.1.1");
  EXPECT_EQ(p.engine.max_model_len(), 16384u);
  EXPECT_EQ(p.engine.max_num_batched_tokens(), 2048u);
  EXPECT_DOUBLE_EQ(p.engine.gpu_memory_utilization(), 0.5);
  EXPECT_EQ(p.engine.kv_cache_dtype(), v1::KV_CACHE_DTYPE_AUTO);
  EXPECT_TRUE(p.engine.enable_prefix_caching());
  ASSERT_TRUE(p.parallelism.has_value());
  EXPECT_EQ(p.parallelism->tp(), 1u);
  EXPECT_THAT(p.raw_lines, Contains(HasSubstr("line 43: ")));
}

TEST(IngestEngineLog, CatalogPartsStayAbsentForWhatTheLogDoesNotState) {
  const EngineLogFacts f = Facts("trtllm-2024-09.log");
  const EngineLogCatalogParts p = EngineLogToCatalog(f);
  // The pool is stated in blocks only: a pool without a token count.
  ASSERT_TRUE(p.kv_pool.has_value());
  EXPECT_FALSE(p.kv_pool->has_tokens());
  EXPECT_THAT(p.kv_pool->note(), HasSubstr("631 GPU blocks; the block size is not stated"));
  EXPECT_FALSE(p.weight_footprint.has_value());
  ASSERT_TRUE(p.memory_account.has_value());
  EXPECT_EQ(p.memory_account->capacity_bytes(), GiB(39.39));
  EXPECT_FALSE(p.memory_account->has_weights_bytes());
  EXPECT_EQ(p.engine.kind(), v1::ENGINE_KIND_TRTLLM);
  EXPECT_FALSE(p.parallelism.has_value());
}

const EngineLogLine* LineAt(const EngineLogFacts& f, int line) {
  for (const EngineLogLine& l : f.matched_lines) {
    if (l.line_number == line) return &l;
  }
  return nullptr;
}

// vLLM 0.7.1 names the device in upper case ("# CUDA blocks: 3947, # CPU
// blocks: 2048"); the log states no block size and its concurrency line is
// cut, so the blocks stay blocks.
TEST(IngestEngineLog, UpperCaseDeviceNameBeforeBlocks) {
  const EngineLogFacts f = Facts("staged_vllm-l40s_x2-qwen25_32b-tp2-v071.log");
  EXPECT_EQ(f.gpu_blocks, 3947u);
  EXPECT_EQ(f.engine_generation, "V0");
  EXPECT_FALSE(f.block_size.has_value());
  const EngineLogCatalogParts p = EngineLogToCatalog(f);
  ASSERT_TRUE(p.kv_pool.has_value());
  EXPECT_FALSE(p.kv_pool->has_tokens());
  EXPECT_THAT(p.kv_pool->note(), HasSubstr("3947 GPU blocks; the block size is not stated"));
  // A block size the ingest is given fills the tokens in, and says so.
  const EngineLogCatalogParts q = EngineLogToCatalog(f, 16);
  ASSERT_TRUE(q.kv_pool.has_value());
  EXPECT_EQ(q.kv_pool->tokens(), 3947u * 16u);
  EXPECT_THAT(q.kv_pool->note(), HasSubstr("it is the one the ingest was given (--block-size)"));
}

// ------------------------------------------------ records without a prefix

TEST(IngestEngineLog, UnprefixedLineThatStatesAFactIsARecordOfItsOwn) {
  const EngineLogFacts f = Facts("staged_vllm-a5000x4-qwen25_32b-tp4-v0-mml32768.log");
  ASSERT_NE(LineAt(f, 3), nullptr);
  EXPECT_EQ(LineAt(f, 3)->text, "(VllmWorkerProcess) Loading model weights took 15.3916 GB");
  ASSERT_NE(LineAt(f, 4), nullptr);
  EXPECT_EQ(LineAt(f, 4)->text,
            "distributed_gpu_executor.py:57] # GPU blocks: 2987, # CPU blocks: 4096");
  EXPECT_EQ(f.gpu_blocks, 2987u);
  EXPECT_EQ(f.engine_generation, "V0");
  EXPECT_EQ(f.max_model_len, 32768u);
  // 2987 blocks × 16 / 32768 = 1.458 → "1.46x": the pool in tokens.
  const EngineLogCatalogParts p = EngineLogToCatalog(f);
  ASSERT_TRUE(p.kv_pool.has_value());
  EXPECT_EQ(p.kv_pool->tokens(), 2987u * 16u);
  EXPECT_THAT(p.kv_pool->note(),
              HasSubstr("pool tokens = 2987 GPU blocks × block size 16; the block size is not "
                        "printed"));
}

TEST(IngestEngineLog, VersionLineIsNotGluedToTheArgsBelowIt) {
  const EngineLogFacts f = Facts("staged_vllm-5090-llama31_8b-v1-090-mml8192.log");
  EXPECT_EQ(f.engine_version, "0.9.0");
  EXPECT_THAT(f.conflicts, IsEmpty());
  EXPECT_TRUE(HasLine(f, 2, "non-default args: {'max_model_len': 8192}"));
  EXPECT_TRUE(HasLine(f, 8, "num_gpu_blocks is: 5809"));
}

TEST(IngestEngineLog, ContinuationStatingNoFactIsJoinedWithASpace) {
  const EngineLogFacts f = Facts("staged_vllm-t4-llama32_3b-fp16-v0-gmu089.log");
  ASSERT_NE(LineAt(f, 14), nullptr);
  EXPECT_EQ(LineAt(f, 14)->text,
            "Graph capturing finished in 41 secs, took 0.17 GiB init engine (profile, create kv "
            "cache, warmup model) took 104.05 seconds");
  EXPECT_EQ(f.cuda_graph_bytes, GiB(0.17));
}

TEST(IngestEngineLog, GpuBlocksAfterQuotedTextStayInThePool) {
  const EngineLogFacts f = Facts("staged_vllm-a100_80x2-mixtral_8x7b_awq-tp2-gmu050.log");
  EXPECT_EQ(f.gpu_blocks, 6487u);
  EXPECT_EQ(f.engine_generation, "V0");
  // The docker line's engine flags; the prose's "--gpu-memory-utilization 0.5" is no command.
  EXPECT_EQ(f.tp, 2u);
  EXPECT_EQ(f.quantization, "awq");
  EXPECT_EQ(f.dtype, "auto");
  EXPECT_EQ(f.enforce_eager, true);
  EXPECT_EQ(f.gpu_memory_utilization, std::nullopt);
  const EngineLogCatalogParts p = EngineLogToCatalog(f);
  ASSERT_TRUE(p.kv_pool.has_value());
  EXPECT_FALSE(p.kv_pool->has_tokens());
  EXPECT_THAT(p.kv_pool->note(), HasSubstr("6487 GPU blocks; the block size is not stated"));
  EXPECT_EQ(p.weight_format, v1::WEIGHT_FORMAT_INT4_AWQ);
}

// ------------------------------------------------- vLLM V0 memory profiling

TEST(IngestEngineLog, V0ProfilingResultsWithoutHashBeforeGpuBlocks) {
  const EngineLogFacts f = Facts("staged_vllm-3090-llama31_8b-mml20000.log");
  EXPECT_EQ(f.gpu_blocks, 1952u);  // "GPU blocks: 1952, # CPU blocks: 2048"
  EXPECT_EQ(f.engine_generation, "V0");
  EXPECT_DOUBLE_EQ(*f.gpu_memory_utilization, 0.90);
  EXPECT_EQ(f.gpu_total_bytes, GiB(23.58));
  EXPECT_EQ(f.non_torch_bytes, GiB(0.35));
  EXPECT_EQ(f.activation_peak_bytes, std::nullopt);  // peak_torch_memory holds the weights
  EXPECT_EQ(f.profiled_peak_bytes, GiB(17.06) + GiB(0.35));
  EXPECT_EQ(f.kv_cache_bytes, GiB(3.81));
  EXPECT_EQ(f.max_model_len, 20000u);
  const EngineLogCatalogParts p = EngineLogToCatalog(f);
  ASSERT_TRUE(p.kv_pool.has_value());
  EXPECT_EQ(p.kv_pool->tokens(), 1952u * 16u);  // 1952 × 16 / 20000 = 1.5616 → "1.56x"
  ASSERT_TRUE(p.memory_account.has_value());
  EXPECT_EQ(p.memory_account->non_torch_bytes(), GiB(0.35));
  EXPECT_EQ(p.memory_account->profiled_peak_bytes(), GiB(17.06) + GiB(0.35));
  EXPECT_FALSE(p.memory_account->has_activation_peak_bytes());
  EXPECT_EQ(p.memory_account->capacity_bytes(), GiB(23.58));
  EXPECT_DOUBLE_EQ(p.engine.gpu_memory_utilization(), 0.90);
  EXPECT_EQ(p.engine.max_model_len(), 20000u);
}

TEST(IngestEngineLog, V0MultiLineProfilingGivesActivationAndNonTorchMemory) {
  const EngineLogFacts f = Facts("staged_vllm-t4-llama32_3b-fp16-v0-gmu089.log");
  EXPECT_EQ(f.engine_version, "0.8.2");
  EXPECT_EQ(f.engine_generation, "V0");
  EXPECT_DOUBLE_EQ(*f.gpu_memory_utilization, 0.89);
  EXPECT_EQ(f.gpu_total_bytes, GiB(14.74));
  EXPECT_EQ(f.weights_bytes, GiB(6.02));  // "model weights take 6.02GiB" is the last
  EXPECT_EQ(f.non_torch_bytes, GiB(0.05));
  EXPECT_EQ(f.activation_peak_bytes, GiB(0.90));
  EXPECT_EQ(f.kv_cache_bytes, GiB(6.22));
  EXPECT_EQ(f.gpu_blocks, 3637u);
  EXPECT_EQ(f.dtype, "float16");
  EXPECT_EQ(f.enable_prefix_caching, true);
  const EngineLogCatalogParts p = EngineLogToCatalog(f);
  ASSERT_TRUE(p.memory_account.has_value());
  EXPECT_EQ(p.memory_account->activation_peak_bytes(), GiB(0.90));
  EXPECT_EQ(p.memory_account->non_torch_bytes(), GiB(0.05));
  ASSERT_TRUE(p.kv_pool.has_value());
  EXPECT_EQ(p.kv_pool->tokens(), 3637u * 16u);  // 3637 × 16 / 2048 = 28.41
}

// ------------------------------------------------------ vLLM config lines

TEST(IngestEngineLog, NonDefaultArgsGiveDtypeAndPrefixCachingOff) {
  const EngineLogFacts f = Facts("staged_vllm-a100_40-llama31_8b-fp16-v1-0240.log");
  EXPECT_EQ(f.dtype, "float16");
  EXPECT_EQ(f.quantization, std::nullopt);
  EXPECT_EQ(f.enable_prefix_caching, false);
  EXPECT_DOUBLE_EQ(*f.gpu_memory_utilization, 0.85);
  EXPECT_EQ(f.tp, 1u);
  EXPECT_EQ(f.kv_cache_dtype, "auto");
  const EngineLogCatalogParts p = EngineLogToCatalog(f);
  ASSERT_TRUE(p.engine.has_enable_prefix_caching());
  EXPECT_FALSE(p.engine.enable_prefix_caching());
  EXPECT_EQ(p.weight_format, v1::WEIGHT_FORMAT_FP16);
  EXPECT_EQ(p.weight_format_source, "dtype float16 (no quantization stated)");
}

// The launch flag's 'fp8' and the engine's config print 'fp8_e4m3' are one
// KV dtype (vLLM's fp8 is e4m3), not a conflict; e5m2 would be another.
TEST(IngestEngineLog, KvCacheDtypeAliasesAreOneFact) {
  const EngineLogFacts f = Facts("synthetic_vllm_kv_fp8_aliases.log");
  EXPECT_EQ(f.kv_cache_dtype, "fp8_e4m3");
  EXPECT_THAT(f.conflicts, IsEmpty());
  EXPECT_EQ(EngineLogToCatalog(f).engine.kv_cache_dtype(), v1::KV_CACHE_DTYPE_FP8);
}

TEST(IngestEngineLog, NonDefaultArgsGiveTheQuantizationMethod) {
  const EngineLogFacts f = Facts("staged_vllm-a5000-qwen25_14b_awq-mml8192.log");
  EXPECT_EQ(f.quantization, "awq");
  EXPECT_EQ(f.dtype, "float16");  // 'dtype': 'half', the same dtype by its canonical name
  const EngineLogCatalogParts p = EngineLogToCatalog(f);
  EXPECT_EQ(p.weight_format, v1::WEIGHT_FORMAT_INT4_AWQ);
  EXPECT_EQ(p.weight_format_source, "quantization awq");
  EXPECT_FALSE(p.engine.has_enable_prefix_caching());  // not stated: the engine's default
}

TEST(IngestEngineLog, ConfigLineGivesTpQuantizationNoneAndPrefixCaching) {
  const EngineLogFacts f = Facts("staged_vllm-a5000x4-qwen25_32b-tp4-v0-mml32768.log");
  EXPECT_EQ(f.tp, 4u);
  EXPECT_EQ(f.dtype, "bfloat16");  // dtype=torch.bfloat16
  EXPECT_EQ(f.quantization, "None");
  EXPECT_EQ(f.enable_prefix_caching, false);
  EXPECT_EQ(f.kv_cache_dtype, "auto");
  EXPECT_EQ(EngineLogToCatalog(f).weight_format, v1::WEIGHT_FORMAT_BF16);
}

// ---------------------------------------------------------------- SGLang

TEST(IngestEngineLog, SglangCommandOnTheSameLineGivesTpAndMemFraction) {
  const EngineLogFacts f = Facts("staged_sglang-h100x4-qwen3_235b_a22b_fp8-tp4.log");
  EXPECT_EQ(f.engine, "sglang");
  EXPECT_EQ(f.kv_pool_tokens, 367404u);
  EXPECT_EQ(f.tp, 4u);
  EXPECT_DOUBLE_EQ(*f.mem_fraction_static, 0.93);
  EXPECT_EQ(f.model, std::nullopt);  // a path on a command is not a model id
  const EngineLogCatalogParts p = EngineLogToCatalog(f);
  ASSERT_TRUE(p.parallelism.has_value());
  EXPECT_EQ(p.parallelism->tp(), 4u);
  EXPECT_DOUBLE_EQ(p.engine.mem_fraction_static(), 0.93);
}

TEST(IngestEngineLog, SglangBareFlagLineGivesTheSettings) {
  const EngineLogFacts f = Facts("staged_sglang-80gb-qwen3_8b-mfs090.log");
  EXPECT_EQ(f.tp, 1u);
  EXPECT_DOUBLE_EQ(*f.mem_fraction_static, 0.9);
  EXPECT_EQ(f.max_model_len, 8096u);
  EXPECT_THAT(f.conflicts, IsEmpty());
}

// ---------------------------------------------------------- TensorRT-LLM

TEST(IngestEngineLog, TrtllmPytorchTemporaryPoolThenEstimateThenAllocation) {
  const EngineLogFacts f = Facts("staged_trtllm-pt-h100-llama31_8b_fp8-fmf090.log");
  EXPECT_EQ(f.engine, "tensorrt-llm");
  EXPECT_EQ(f.engine_version, "0.20.0");
  EXPECT_EQ(f.weights_bytes, GiB(8.46));  // "Rank 0 uses 8.46 GB for model weights."
  EXPECT_DOUBLE_EQ(*f.kv_cache_free_gpu_memory_fraction, 0.9);  // 0.8999999761581421
  EXPECT_EQ(f.max_model_len, 257u);
  EXPECT_EQ(f.max_num_batched_tokens, 8192u);
  EXPECT_EQ(f.max_num_seqs, 2048u);  // max_num_requests after the heuristics' 4096
  EXPECT_THAT(f.conflicts, Contains(HasSubstr("max_num_seqs: line 2 says 4096, line 7 says 2048")));
  EXPECT_EQ(f.profiled_peak_bytes, GiB(11.77));
  EXPECT_EQ(f.activation_peak_bytes, GiB(1.05));
  EXPECT_EQ(f.non_torch_bytes, GiB(2.17));
  EXPECT_EQ(f.gpu_total_bytes, GiB(79.18));
  EXPECT_EQ(f.block_size, 32u);
  // The final allocation, not the temporary 9216-token profiling pool.
  EXPECT_EQ(f.kv_pool_tokens, 1002304u);
  EXPECT_EQ(f.kv_cache_bytes, GiB(61.18));
  for (const std::string& c : f.conflicts) EXPECT_THAT(c, Not(HasSubstr("kv_pool_tokens")));
  EXPECT_THAT(f.notes, Contains(HasSubstr("line 6: the temporary KV pool")));
  EXPECT_THAT(f.notes, Contains(HasSubstr("line 13: the estimate; line 14: the allocation")));
  const EngineLogCatalogParts p = EngineLogToCatalog(f);
  EXPECT_EQ(p.engine.kind(), v1::ENGINE_KIND_TRTLLM);
  EXPECT_DOUBLE_EQ(p.engine.kv_cache_free_gpu_memory_fraction(), 0.9);
  EXPECT_EQ(p.engine.max_model_len(), 257u);
  EXPECT_EQ(p.engine.max_num_seqs(), 2048u);
  EXPECT_EQ(p.engine.max_num_batched_tokens(), 8192u);
  ASSERT_TRUE(p.memory_account.has_value());
  EXPECT_EQ(p.memory_account->weights_bytes(), GiB(8.46));
  EXPECT_EQ(p.memory_account->activation_peak_bytes(), GiB(1.05));
  EXPECT_EQ(p.memory_account->non_torch_bytes(), GiB(2.17));
  EXPECT_EQ(p.memory_account->profiled_peak_bytes(), GiB(11.77));
  EXPECT_EQ(p.memory_account->capacity_bytes(), GiB(79.18));
  ASSERT_TRUE(p.weight_footprint.has_value());
  EXPECT_EQ(p.weight_footprint->bytes(), GiB(8.46));
  EXPECT_THAT(p.kv_pool->note(), HasSubstr("temporary KV pool"));
}

TEST(IngestEngineLog, TrtllmEngineThatStoppedBeforeAllocatingKeepsTheEstimate) {
  const EngineLogFacts f = Facts("staged_trtllm-pt-h100x2-llama31_8b_fp8-tp2-fmf080.log");
  EXPECT_EQ(f.weights_bytes, GiB(4.23));
  EXPECT_EQ(f.kv_pool_tokens, 1880626u);  // the estimate, not the 5184-token profiling pool
  EXPECT_EQ(f.kv_cache_bytes, std::nullopt);
  EXPECT_DOUBLE_EQ(*f.kv_cache_free_gpu_memory_fraction, 0.8);
  EXPECT_EQ(f.profiled_peak_bytes, GiB(7.60));
  EXPECT_THAT(f.notes, Contains(HasSubstr("the engine stopped before allocating its KV pool (no "
                                          "allocation after line 5)")));
}

TEST(IngestEngineLog, TrtllmMemoryEstimateAndTheConfigDump) {
  const EngineLogFacts f = Facts("staged_trtllm-pt-48gbclass-tinyllama-fmf090.log");
  EXPECT_EQ(f.engine_version, "1.1.0");  // "TensorRT LLM version: 1.1.0"
  EXPECT_EQ(f.weights_bytes, GiB(2.05));
  EXPECT_EQ(f.kv_pool_tokens, 1871136u);
  EXPECT_EQ(f.kv_cache_bytes, GiB(39.26));
  EXPECT_DOUBLE_EQ(*f.kv_cache_free_gpu_memory_fraction, 0.9);
  EXPECT_EQ(f.max_model_len, 2048u);  // inferred 2048; the runtime's max_seq_len=2049 is one more
  EXPECT_EQ(f.max_num_seqs, 2048u);
  EXPECT_EQ(f.max_num_batched_tokens, 8192u);
  EXPECT_EQ(f.gpu_total_bytes, GiB(47.37));
  EXPECT_EQ(f.profiled_peak_bytes, GiB(5.13));
  EXPECT_THAT(f.conflicts, IsEmpty());
}

// TensorRT-LLM infers max_seq_len from the model (2,048 for TinyLlama) and
// its runtime then prints one token more: the length is the inferred one, and
// the two lines do not conflict.
TEST(IngestEngineLog, TrtllmInferredMaxSeqLenIsTheModelLength) {
  const EngineLogFacts f = Facts("staged_trtllm-pt-rtx6000ada-tinyllama-fmf090.log");
  EXPECT_EQ(f.engine_version, "1.1.0");
  EXPECT_EQ(f.max_model_len, 2048u);
  EXPECT_EQ(f.max_num_seqs, 2048u);
  EXPECT_EQ(f.kv_pool_tokens, 1871136u);
  EXPECT_THAT(f.conflicts, ::testing::Not(Contains(HasSubstr("max_model_len"))));
}

TEST(IngestEngineLog, TrtllmLoweredMaxSeqLenIsTheLastStated) {
  const EngineLogFacts f = Facts("staged_trtllm-pt-gb10-gpt_oss_120b-fmf090.log");
  EXPECT_EQ(f.weights_bytes, GiB(63.32));
  EXPECT_EQ(f.kv_pool_tokens, 86720u);
  EXPECT_EQ(f.max_model_len, 86720u);
  EXPECT_EQ(f.max_num_seqs, 64u);
  EXPECT_EQ(f.gpu_total_bytes, GiB(119.70));
  EXPECT_THAT(f.conflicts, Contains(HasSubstr("max_model_len: line 8 says 8224, line 17 says "
                                              "86720")));
}

TEST(IngestEngineLog, TrtEngineSummaryGivesTpFractionAndBuildLimits) {
  const EngineLogFacts f = Facts("staged_trtllm-engine-h100x8-llama31_70b_fp8-tp8-v0.16.log");
  EXPECT_EQ(f.engine_version, "0.16.0");
  EXPECT_EQ(f.tp, 8u);
  EXPECT_DOUBLE_EQ(*f.kv_cache_free_gpu_memory_fraction, 0.9);  // "KV Memory Percentage: 90.00%"
  EXPECT_EQ(f.max_model_len, 25000u);
  EXPECT_EQ(f.max_num_batched_tokens, 8192u);
  EXPECT_EQ(f.max_num_seqs, 2048u);
  EXPECT_EQ(f.kv_cache_dtype, "fp8_e4m3");  // "KV Cache Dtype: FP8", by its canonical name
  EXPECT_EQ(f.quantization, "FP8");
  EXPECT_EQ(f.block_size, 64u);
  EXPECT_EQ(f.kv_pool_tokens, 2730752u);
  EXPECT_THAT(f.conflicts, IsEmpty());
  const EngineLogCatalogParts p = EngineLogToCatalog(f);
  EXPECT_EQ(p.engine.kv_cache_dtype(), v1::KV_CACHE_DTYPE_FP8);
  EXPECT_EQ(p.weight_format, v1::WEIGHT_FORMAT_FP8_PER_TENSOR);
  ASSERT_TRUE(p.parallelism.has_value());
  EXPECT_EQ(p.parallelism->tp(), 8u);
}

TEST(IngestEngineLog, NegativeCudaGraphFigureIsANoteNotARefusal) {
  const EngineLogFacts f = Facts("staged_vllm-h200-llama3_8b-mml1024.log");
  EXPECT_EQ(f.cuda_graph_bytes, std::nullopt);
  EXPECT_EQ(f.kv_pool_tokens, 868080u);
  EXPECT_THAT(f.notes, Contains(HasSubstr("line 8: the CUDA graph capture \"took -0.41 GiB\" as "
                                          "printed")));
  EXPECT_TRUE(HasLine(f, 8, "Graph capturing finished in 4 secs, took -0.41 GiB"));
}

TEST(IngestEngineLog, FractionOutsideZeroToOneIsRefusedWithItsLine) {
  EXPECT_THAT(ParseMeasurementFile("sglang.log",
                                   "KV Cache is allocated. #tokens: 100, K size: 1 GB, V size: 1 "
                                   "GB (cmd: python3 -m sglang.launch_server --mem-fraction-static "
                                   "1.5)\n"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("sglang.log:1: --mem-fraction-static 1.5; must be a fraction in "
                                 "(0, 1]")));
}

}  // namespace
}  // namespace capplan::service
