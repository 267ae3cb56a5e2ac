// Parsed files and the user's statements to one Baseline: engine-log facts
// merged into the deployment, the log's weight format against the model
// entry's, burst rows, and a baseline the catalogue validator accepts.

#include "service/translate/ingest_baseline.h"

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/catalog/catalog_validator.h"
#include "service/translate/ingest.h"
#include "tests/test_common/ingest_fixtures.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::service {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

IngestedFile Parse(const std::string& path) { return capplan::testing::ParseIngestFixture(path); }

// What the catalogue validator says of `b`, one message per finding.
std::vector<std::string> Findings(const v1::Baseline& b) {
  std::vector<std::string> out;
  for (const Finding& f : ValidateEntity(b)) out.push_back(f.message);
  return out;
}

IngestSpec Spec() {
  IngestSpec spec;
  spec.id = "ingested-test";
  spec.deployment.set_hardware_id("nvidia-a100-sxm-80gb");
  spec.deployment.set_gpu_count(1);
  spec.deployment.set_model_id("test-model");
  spec.provenance.set_source_document(
      "https://github.com/o/r/blob/b474d1e053c35c9aef8c02aae4efbc0d8675f033/run.txt");
  return spec;
}

v1::Baseline Assemble(const IngestSpec& spec, const std::vector<IngestedFile>& files) {
  absl::StatusOr<v1::Baseline> b = AssembleBaseline(spec, files);
  EXPECT_TRUE(b.ok()) << b.status();
  return b.ok() ? *b : v1::Baseline();
}

v1::Model NativeModel(v1::NumberFormat dtype) {
  v1::Model m;
  m.set_id("test-model");
  m.set_native_dtype(dtype);
  return m;
}

TEST(AssembleBaseline, BurstRowCountsThePromptsSentNotTheCompleted) {
  // --num-prompts 1000 on the command; 924 requests succeeded.
  const v1::Baseline b = Assemble(Spec(), {Parse("vllm-console/dennislee_qwen2_n1000.txt")});
  ASSERT_EQ(b.sweeps_size(), 1);
  ASSERT_EQ(b.sweeps(0).rows_size(), 1);
  EXPECT_EQ(b.sweeps(0).rows(0).requests(), 924u);
  EXPECT_EQ(b.sweeps(0).rows(0).burst_requests(), 1000u);
  EXPECT_EQ(b.provenance().benchmark_tool(), "benchmark_serving.py");
}

TEST(AssembleBaseline, LogThatStatesOnlyGpuBlocksStillIngests) {
  const v1::Baseline b =
      Assemble(Spec(), {Parse("engine-log/staged_vllm-a100_80x2-mixtral_8x7b_awq-tp2-gmu050.log")});
  ASSERT_EQ(b.kv_pools_size(), 1);
  EXPECT_FALSE(b.kv_pools(0).has_tokens());
  EXPECT_EQ(b.deployment().parallelism().tp(), 2u);
  EXPECT_TRUE(b.deployment().engine().enforce_eager());
  EXPECT_THAT(b.other_findings(), Contains(HasSubstr("# GPU blocks: 6487")));
  // The pool's own remark survives beside the pointer to the raw lines.
  EXPECT_THAT(b.kv_pools(0).note(), HasSubstr("6487 GPU blocks; the block size is not stated"));
}

TEST(AssembleBaseline, PoolDerivationAndTemporaryPoolAreInTheNotes) {
  const v1::Baseline v0 =
      Assemble(Spec(), {Parse("engine-log/staged_vllm-3090-llama31_8b-mml20000.log")});
  ASSERT_EQ(v0.kv_pools_size(), 1);
  EXPECT_EQ(v0.kv_pools(0).tokens(), 31232u);
  EXPECT_THAT(v0.kv_pools(0).note(), HasSubstr("pool tokens = 1952 GPU blocks × block size 16"));
  const v1::Baseline trt =
      Assemble(Spec(), {Parse("engine-log/staged_trtllm-pt-h100-llama31_8b_fp8-fmf090.log")});
  EXPECT_THAT(trt.kv_pools(0).note(), HasSubstr("line 6: the temporary KV pool"));
  EXPECT_THAT(trt.memory_accounts(0).note(),
              HasSubstr("max_num_seqs: line 2 says 4096, line 7 says 2048; the last is kept"));
}

TEST(AssembleBaseline, LogDtypeOnABfloat16EntryRecordsFp16Weights) {
  IngestSpec spec = Spec();
  spec.model = NativeModel(v1::NUMBER_FORMAT_BF16);
  const v1::Baseline b =
      Assemble(spec, {Parse("engine-log/staged_vllm-a100_40-llama31_8b-fp16-v1-0240.log")});
  ASSERT_TRUE(b.deployment().has_quantization());
  EXPECT_EQ(b.deployment().quantization().format(), v1::WEIGHT_FORMAT_FP16);
  EXPECT_THAT(b.other_findings(),
              Contains(HasSubstr("states dtype float16 (no quantization stated) "
                                 "(WEIGHT_FORMAT_FP16); the model entry test-model holds "
                                 "WEIGHT_FORMAT_BF16, so the deployment records the log's "
                                 "format")));
  ASSERT_TRUE(b.deployment().engine().has_enable_prefix_caching());
  EXPECT_FALSE(b.deployment().engine().enable_prefix_caching());
  EXPECT_DOUBLE_EQ(b.deployment().engine().gpu_memory_utilization(), 0.85);
}

TEST(AssembleBaseline, LogQuantizationOfTheEntryItselfStaysImplicit) {
  IngestSpec spec = Spec();
  spec.model = NativeModel(v1::NUMBER_FORMAT_FP16);
  spec.model->mutable_quantization()->set_format(v1::WEIGHT_FORMAT_INT4_AWQ);
  const v1::Baseline b =
      Assemble(spec, {Parse("engine-log/staged_vllm-a5000-qwen25_14b_awq-mml8192.log")});
  EXPECT_FALSE(b.deployment().has_quantization());
  for (const std::string& f : b.other_findings()) {
    EXPECT_THAT(f, ::testing::Not(HasSubstr("states quantization")));
  }
}

TEST(AssembleBaseline, LogFp8MethodOnABlockScaledEntryStaysImplicit) {
  IngestSpec spec = Spec();
  spec.model = NativeModel(v1::NUMBER_FORMAT_BF16);
  spec.model->mutable_quantization()->set_format(v1::WEIGHT_FORMAT_FP8_BLOCK);
  IngestedFile log;
  log.file_name = "vllm.log";
  log.format = IngestFormat::kEngineLog;
  EngineLogFacts& f = log.engine_log.emplace();
  f.engine = "vllm";
  f.kv_pool_tokens = 1000;
  f.quantization = "fp8";
  const v1::Baseline b = Assemble(spec, {log});
  EXPECT_FALSE(b.deployment().has_quantization());
  // On a bfloat16 entry the same method is an online quantization.
  spec.model->clear_quantization();
  const v1::Baseline online = Assemble(spec, {log});
  EXPECT_EQ(online.deployment().quantization().format(), v1::WEIGHT_FORMAT_FP8_PER_TENSOR);
}

TEST(AssembleBaseline, LogQuantizationWithoutAModelEntryIsAFinding) {
  const v1::Baseline b =
      Assemble(Spec(), {Parse("engine-log/staged_vllm-a5000-qwen25_14b_awq-mml8192.log")});
  EXPECT_FALSE(b.deployment().has_quantization());
  EXPECT_THAT(b.other_findings(),
              Contains(HasSubstr("states quantization awq (WEIGHT_FORMAT_INT4_AWQ); the model "
                                 "entry is not known here")));
}

TEST(AssembleBaseline, TrtllmSettingsReachTheDeployment) {
  IngestSpec spec = Spec();
  spec.deployment.set_hardware_id("nvidia-h100-sxm-80gb");
  const v1::Baseline b =
      Assemble(spec, {Parse("engine-log/staged_trtllm-pt-h100-llama31_8b_fp8-fmf090.log")});
  const v1::EngineConfig& e = b.deployment().engine();
  EXPECT_EQ(e.kind(), v1::ENGINE_KIND_TRTLLM);
  EXPECT_EQ(e.version(), "0.20.0");
  EXPECT_DOUBLE_EQ(e.kv_cache_free_gpu_memory_fraction(), 0.9);
  EXPECT_EQ(e.max_model_len(), 257u);
  EXPECT_EQ(e.max_num_seqs(), 2048u);
  EXPECT_EQ(e.max_num_batched_tokens(), 8192u);
  EXPECT_EQ(e.block_size(), 32u);
  ASSERT_EQ(b.kv_pools_size(), 1);
  EXPECT_EQ(b.kv_pools(0).tokens(), 1002304u);
  ASSERT_EQ(b.memory_accounts_size(), 1);
  EXPECT_TRUE(b.memory_accounts(0).has_profiled_peak_bytes());
  EXPECT_THAT(Findings(b), IsEmpty());
}

TEST(AssembleBaseline, NativeSamplerFromTheLogReachesTheDeployment) {
  IngestSpec spec = Spec();
  spec.deployment.set_hardware_id("nvidia-rtx-3090-24gb");
  const v1::Baseline b = Assemble(spec, {Parse("engine-log/vllm_3090_native_sampler_excerpt.log")});
  EXPECT_EQ(b.deployment().engine().sampler_backend(), v1::SAMPLER_BACKEND_NATIVE);
  const v1::Baseline other =
      Assemble(Spec(), {Parse("engine-log/dennislee_vllm_v1_qwen2_7b_a100.log")});
  EXPECT_EQ(other.deployment().engine().sampler_backend(), v1::SAMPLER_BACKEND_UNSPECIFIED);
}

TEST(AssembleBaseline, ZeroLatencyStatisticStaysInTheNoteAndTheBaselineValidates) {
  IngestSpec spec = Spec();
  spec.deployment.set_hardware_id("amd-mi355x-288gb");
  spec.deployment.set_gpu_count(4);
  const v1::Baseline b =
      Assemble(spec, {Parse("aiperf/inferencemax_conc16.profile_export_aiperf.json")});
  ASSERT_EQ(b.sweeps_size(), 1);
  const v1::SweepRow& row = b.sweeps(0).rows(0);
  EXPECT_FALSE(row.itl().has_min_seconds());  // inter_chunk_latency min = 0.0 ms
  EXPECT_TRUE(row.itl().has_max_seconds());
  EXPECT_THAT(row.note(),
              HasSubstr("min ITL 0 s (as reported; a latency figure must be positive)"));
  EXPECT_THAT(Findings(b), IsEmpty());
}

}  // namespace
}  // namespace capplan::service
