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
  EXPECT_FALSE(p.kv_pool.has_value());
  EXPECT_FALSE(p.weight_footprint.has_value());
  ASSERT_TRUE(p.memory_account.has_value());
  EXPECT_EQ(p.memory_account->capacity_bytes(), GiB(39.39));
  EXPECT_FALSE(p.memory_account->has_weights_bytes());
  EXPECT_EQ(p.engine.kind(), v1::ENGINE_KIND_TRTLLM);
  EXPECT_FALSE(p.parallelism.has_value());
}

}  // namespace
}  // namespace capplan::service
