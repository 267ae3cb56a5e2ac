#include "service/translate/launch_command.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace capplan::service {
namespace {

// The engines' --quantization method for a weight format applied to a
// checkpoint of another format; empty = no such method.
const char* QuantizationMethod(v1::WeightFormat format) {
  switch (format) {
    case v1::WEIGHT_FORMAT_FP8_PER_TENSOR:
      return "fp8";
    case v1::WEIGHT_FORMAT_FP8_PER_CHANNEL:
      return "fbgemm_fp8";
    case v1::WEIGHT_FORMAT_INT8:
      return "w8a8_int8";
    case v1::WEIGHT_FORMAT_INT4_AWQ:
      return "awq";
    case v1::WEIGHT_FORMAT_INT4_GPTQ:
      return "gptq";
    case v1::WEIGHT_FORMAT_NVFP4:
      return "modelopt_fp4";
    case v1::WEIGHT_FORMAT_MXFP4:
      return "mxfp4";
    default:
      return "";
  }
}

// Formats whose weights must be quantized offline (a checkpoint in that format).
bool NeedsQuantizedCheckpoint(v1::WeightFormat format) {
  return format == v1::WEIGHT_FORMAT_INT4_AWQ || format == v1::WEIGHT_FORMAT_INT4_GPTQ ||
         format == v1::WEIGHT_FORMAT_NVFP4 || format == v1::WEIGHT_FORMAT_MXFP4 ||
         format == v1::WEIGHT_FORMAT_INT4_SYMMETRIC;
}

std::string ModelArgument(const ResolvedDeployment& r) {
  if (!r.model.hf_repo_id().empty()) return r.model.hf_repo_id();
  if (!r.model_id.empty()) return r.model_id;
  return "MODEL_PATH";
}

void AddQuantization(const ResolvedDeployment& r, LaunchCommand* out) {
  const v1::WeightFormat format = r.quantization.format();
  if (format == r.model.quantization().format()) return;
  if (format == v1::WEIGHT_FORMAT_BF16 || format == v1::WEIGHT_FORMAT_FP16) {
    absl::StrAppend(&out->line, " --dtype ",
                    format == v1::WEIGHT_FORMAT_BF16 ? "bfloat16" : "float16");
    return;
  }
  const std::string method = QuantizationMethod(format);
  if (method.empty()) {
    out->notes.push_back(absl::StrFormat("weight format %s: no engine flag converts a checkpoint "
                                         "to it; serve a checkpoint in that format",
                                         v1::WeightFormat_Name(format)));
    return;
  }
  absl::StrAppend(&out->line, " --quantization ", method);
  if (NeedsQuantizedCheckpoint(format)) {
    out->notes.push_back(absl::StrFormat(
        "--quantization %s needs a checkpoint quantized offline in that format (a %s version of "
        "%s), not the original weights",
        method, v1::WeightFormat_Name(format), ModelArgument(r)));
  }
}

void AddSpeculation(const v1::EngineConfig& e, bool vllm, std::string* line) {
  if (e.speculative().method() != v1::SPECULATIVE_METHOD_MTP) return;
  const uint32_t k = std::max<uint32_t>(1, e.speculative().num_speculative_tokens());
  if (vllm) {
    absl::StrAppendFormat(line, " --speculative-config '{\"method\":\"mtp\",\"num_speculative_"
                                "tokens\":%d}'", k);
  } else {
    absl::StrAppendFormat(line, " --speculative-algorithm NEXTN --speculative-num-steps %d", k);
  }
}

}  // namespace

LaunchCommand FormatLaunchCommand(const ResolvedDeployment& r) {
  LaunchCommand out;
  const v1::EngineConfig& e = r.engine;
  const v1::Parallelism& p = r.parallelism;
  const bool vllm = e.kind() != v1::ENGINE_KIND_SGLANG && e.kind() != v1::ENGINE_KIND_TRTLLM;
  const uint32_t tp = std::max<uint32_t>(1, p.tp()), pp = std::max<uint32_t>(1, p.pp());
  const uint32_t ep = std::max<uint32_t>(1, p.ep()), dp = std::max<uint32_t>(1, p.dp());
  if (e.kind() == v1::ENGINE_KIND_TRTLLM) {
    out.line = absl::StrFormat("trtllm-serve %s --tp_size %d --pp_size %d", ModelArgument(r), tp,
                               pp);
    if (ep > 1) absl::StrAppendFormat(&out.line, " --ep_size %d", ep);
    if (e.max_model_len() > 0) absl::StrAppendFormat(&out.line, " --max_seq_len %d", e.max_model_len());
    if (e.max_num_seqs() > 0) absl::StrAppendFormat(&out.line, " --max_batch_size %d", e.max_num_seqs());
    return out;
  }
  if (vllm) {
    out.line = absl::StrFormat("vllm serve %s --tensor-parallel-size %d", ModelArgument(r), tp);
    if (pp > 1) absl::StrAppendFormat(&out.line, " --pipeline-parallel-size %d", pp);
    if (dp > 1) absl::StrAppendFormat(&out.line, " --data-parallel-size %d", dp);
    if (ep > 1) absl::StrAppend(&out.line, " --enable-expert-parallel");
    if (e.max_model_len() > 0) absl::StrAppendFormat(&out.line, " --max-model-len %d", e.max_model_len());
    if (e.max_num_seqs() > 0) absl::StrAppendFormat(&out.line, " --max-num-seqs %d", e.max_num_seqs());
    if (e.max_num_batched_tokens() > 0) {
      absl::StrAppendFormat(&out.line, " --max-num-batched-tokens %d", e.max_num_batched_tokens());
    }
    if (e.gpu_memory_utilization() > 0) {
      absl::StrAppendFormat(&out.line, " --gpu-memory-utilization %g", e.gpu_memory_utilization());
    }
  } else {
    out.line = absl::StrFormat("python -m sglang.launch_server --model-path %s --tp %d",
                               ModelArgument(r), tp);
    if (pp > 1) absl::StrAppendFormat(&out.line, " --pp-size %d", pp);
    if (dp > 1) absl::StrAppendFormat(&out.line, " --dp-size %d", dp);
    if (ep > 1) absl::StrAppendFormat(&out.line, " --ep-size %d", ep);
    if (p.dp_attention()) absl::StrAppend(&out.line, " --enable-dp-attention");
    if (e.max_model_len() > 0) absl::StrAppendFormat(&out.line, " --context-length %d", e.max_model_len());
    if (e.max_num_seqs() > 0) {
      absl::StrAppendFormat(&out.line, " --max-running-requests %d", e.max_num_seqs());
    }
    if (e.max_num_batched_tokens() > 0) {
      absl::StrAppendFormat(&out.line, " --chunked-prefill-size %d", e.max_num_batched_tokens());
    }
    if (e.mem_fraction_static() > 0) {
      absl::StrAppendFormat(&out.line, " --mem-fraction-static %g", e.mem_fraction_static());
    }
  }
  if (e.kv_cache_dtype() == v1::KV_CACHE_DTYPE_FP8) {
    absl::StrAppend(&out.line, vllm ? " --kv-cache-dtype fp8" : " --kv-cache-dtype fp8_e4m3");
  } else if (e.kv_cache_dtype() == v1::KV_CACHE_DTYPE_BF16) {
    absl::StrAppend(&out.line, " --kv-cache-dtype bf16");
  }
  if (e.enforce_eager()) absl::StrAppend(&out.line, vllm ? " --enforce-eager" : " --disable-cuda-graph");
  AddQuantization(r, &out);
  AddSpeculation(e, vllm, &out.line);
  if (r.gpu_count > 0) {
    out.notes.push_back(absl::StrFormat("runs on %d × %s", r.gpu_count,
                                        r.hardware != nullptr ? r.hardware->id() : "GPU"));
  }
  return out;
}

}  // namespace capplan::service
