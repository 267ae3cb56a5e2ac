#include "service/translate/launch_command.h"

#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "service/translate/launch_line.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::StartsWith;

ResolvedDeployment Resolve(const std::string& text) {
  v1::Deployment d;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &d)) << text;
  absl::StatusOr<ResolvedDeployment> r =
      ResolveDeployment(testing::BundledCatalogue(), d, "Deployment");
  EXPECT_TRUE(r.ok()) << r.status();
  return *r;
}

// The line reads back, through ParseLaunchLine, into the knobs it came from.
void ExpectRoundTrip(const ResolvedDeployment& r) {
  const LaunchCommand cmd = FormatLaunchCommand(r);
  absl::StatusOr<LaunchLine> parsed = ParseLaunchLine(cmd.line);
  ASSERT_TRUE(parsed.ok()) << parsed.status() << "\n" << cmd.line;
  const v1::Deployment& d = parsed->deployment;
  EXPECT_EQ(d.model_id(), r.model.hf_repo_id());
  EXPECT_EQ(d.parallelism().tp(), r.parallelism.tp());
  EXPECT_EQ(d.parallelism().has_pp() ? d.parallelism().pp() : 1, r.parallelism.pp());
  EXPECT_EQ(d.engine().kind(), r.engine.kind());
  EXPECT_EQ(d.engine().max_model_len(), r.engine.max_model_len());
  EXPECT_EQ(d.engine().max_num_seqs(), r.engine.max_num_seqs());
  const bool fp8 = r.engine.kv_cache_dtype() == v1::KV_CACHE_DTYPE_FP8;
  EXPECT_EQ(d.engine().kv_cache_dtype() == v1::KV_CACHE_DTYPE_FP8, fp8);
  if (r.quantization.format() != r.model.quantization().format()) {
    EXPECT_EQ(d.weight_format(), r.quantization.format());
  }
  EXPECT_TRUE(parsed->unmodelled_flags.empty()) << cmd.line;
}

TEST(FormatLaunchCommand, VllmRoundTrips) {
  const ResolvedDeployment r = Resolve(
      "model_id: \"llama-3.1-70b-instruct\" hardware_id: \"nvidia-h100-sxm-80gb\" gpu_count: 4 "
      "parallelism { tp: 2 pp: 2 } weight_format: WEIGHT_FORMAT_FP8_PER_TENSOR "
      "engine { kind: ENGINE_KIND_VLLM max_model_len: 4096 max_num_seqs: 128 "
      "kv_cache_dtype: KV_CACHE_DTYPE_FP8 }");
  const LaunchCommand cmd = FormatLaunchCommand(r);
  EXPECT_THAT(cmd.line, StartsWith("vllm serve meta-llama/Llama-3.1-70B-Instruct"));
  EXPECT_THAT(cmd.line, HasSubstr("--pipeline-parallel-size 2"));
  EXPECT_THAT(cmd.line, HasSubstr("--quantization fp8"));
  ExpectRoundTrip(r);
}

TEST(FormatLaunchCommand, SglangRoundTrips) {
  const ResolvedDeployment r = Resolve(
      "model_id: \"llama-3.1-70b-instruct\" hardware_id: \"nvidia-h200-sxm-141gb\" gpu_count: 2 "
      "engine { kind: ENGINE_KIND_SGLANG max_model_len: 3072 max_num_seqs: 256 "
      "kv_cache_dtype: KV_CACHE_DTYPE_FP8 }");
  const LaunchCommand cmd = FormatLaunchCommand(r);
  EXPECT_THAT(cmd.line, StartsWith("python -m sglang.launch_server --model-path "));
  EXPECT_THAT(cmd.line, HasSubstr("--tp 2"));
  EXPECT_THAT(cmd.line, HasSubstr("--max-running-requests 256"));
  ExpectRoundTrip(r);
}

TEST(FormatLaunchCommand, OfflineFormatsNeedAQuantizedCheckpoint) {
  const ResolvedDeployment r = Resolve(
      "model_id: \"llama-3.1-70b-instruct\" hardware_id: \"nvidia-l40s-48gb\" gpu_count: 2 "
      "weight_format: WEIGHT_FORMAT_INT4_AWQ engine { max_num_seqs: 64 }");
  const LaunchCommand cmd = FormatLaunchCommand(r);
  EXPECT_THAT(cmd.line, HasSubstr("--quantization awq"));
  EXPECT_THAT(cmd.notes, Contains(HasSubstr("quantized offline")));
  ExpectRoundTrip(r);
}

}  // namespace
}  // namespace capplan::service
