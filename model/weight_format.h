#ifndef CAPPLAN_MODEL_WEIGHT_FORMAT_H_
#define CAPPLAN_MODEL_WEIGHT_FORMAT_H_

// Storage formats of weights: bits per parameter including the scales and
// zero points each format stores beside the values, and which tensors a
// format leaves in the checkpoint's native dtype.

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "model/architecture.h"

namespace capplan::model {

// Mirrors capplan.v1.WeightFormat.
enum class WeightFormat {
  kNative,  // the checkpoint's torch_dtype (bf16 / fp16 / fp32)
  kFp32,
  kBf16,
  kFp16,
  kFp8PerTensor,   // e4m3 values, one fp32 scale per tensor (+ fp32 input scale)
  kFp8Block,       // e4m3 values, one fp32 scale per group_size × group_size block
  kFp8PerChannel,  // e4m3 values, one fp32 scale per output channel
  kInt8,           // int8 values, one fp32 scale per output channel
  kInt4Awq,        // 4-bit values; per group of input: fp16 scale + 4-bit zero
  kInt4Gptq,       // as AWQ, plus an int32 group index per input row (g_idx)
  kInt4Symmetric,  // 4-bit values; per group: one 16-bit scale, no zero point
  kNvfp4,          // e2m1 values; fp8 e4m3 scale per 16; fp32 global + input scale
  kMxfp4,          // e2m1 values; e8m0 (8-bit) scale per 32
};

// Default group size of a format (0 when it has no groups): AWQ/GPTQ/int4 128,
// NVFP4 16, MXFP4 32, FP8 block 128.
int64_t DefaultGroupSize(WeightFormat format);

// Bits per parameter of one [out_features, in_features] weight stored in
// `format` with `group_size` (0 = the format's default); groups run along the
// input dimension, a partial last group still stores its scale. Native
// formats return 8 × native element bytes.
//   int4 AWQ/GPTQ: 4 + (16 + 4) / g (+ 32 / out for GPTQ's g_idx)
//   int4 symmetric: 4 + 16 / g     NVFP4: 4 + 8 / 16 (+ two fp32 per tensor)
//   MXFP4: 4 + 8 / 32              FP8 block b: 8 + 32 / b²
double BitsPerParameter(WeightFormat format, int64_t group_size, int64_t out_features,
                        int64_t in_features, NumberType native_dtype);

struct Quantization {
  WeightFormat format = WeightFormat::kNative;
  int64_t group_size = 0;  // 0 = DefaultGroupSize(format)
  // Components the checkpoint keeps in the native dtype, beyond those no
  // format quantizes (embeddings, LM head, norms, routers, biases, convs).
  std::vector<Component> unquantized;
  // True when the format applies to MoE expert weights only (vLLM's and
  // SGLang's mxfp4 method quantizes FusedMoE layers and nothing else).
  bool experts_only = false;
  // The KV cache dtype the checkpoint's quantization config states
  // (kv_cache_quant_algo / kv_cache_scheme); engines use it when their own
  // kv_cache_dtype is auto. nullopt = not stated.
  std::optional<NumberType> kv_cache_dtype;
};

// Checks group size and format: "Quantization.group_size = -1; must be ...".
absl::Status ValidateQuantization(const Quantization& q);

// Whether the quantization applies to this tensor.
bool IsQuantized(const Quantization& q, const TensorGroup& tensor);

// Bytes of `copies` weights of shape [out_features, in_features] belonging to
// `tensor` (the shapes may be per-rank shards of tensor's full shape).
double WeightBytes(const Quantization& q, NumberType native_dtype, const TensorGroup& tensor,
                   int64_t out_features, int64_t in_features, double copies);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_WEIGHT_FORMAT_H_
