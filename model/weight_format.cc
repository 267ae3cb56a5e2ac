#include "model/weight_format.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace capplan::model {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return (a + b - 1) / b; }

}  // namespace

int64_t DefaultGroupSize(WeightFormat format) {
  switch (format) {
    case WeightFormat::kInt4Awq:
    case WeightFormat::kInt4Gptq:
    case WeightFormat::kInt4Symmetric:
    case WeightFormat::kFp8Block:
      return 128;
    case WeightFormat::kNvfp4:
      return 16;
    case WeightFormat::kMxfp4:
      return 32;
    default:
      return 0;
  }
}

double BitsPerParameter(WeightFormat format, int64_t group_size, int64_t out_features,
                        int64_t in_features, NumberType native_dtype) {
  const int64_t g = group_size > 0 ? group_size : DefaultGroupSize(format);
  const double n = static_cast<double>(std::max<int64_t>(1, out_features)) *
                   static_cast<double>(std::max<int64_t>(1, in_features));
  const int64_t out = std::max<int64_t>(1, out_features);
  const int64_t in = std::max<int64_t>(1, in_features);
  // Scale and zero-point entries per output row for group-wise formats.
  const double groups_per_row = g > 0 ? static_cast<double>(CeilDiv(in, g)) : 0.0;
  switch (format) {
    case WeightFormat::kNative:
      return 8.0 * BytesPerElement(native_dtype);
    case WeightFormat::kFp32:
      return 32.0;
    case WeightFormat::kBf16:
    case WeightFormat::kFp16:
      return 16.0;
    case WeightFormat::kFp8PerTensor:
      return 8.0 + 2.0 * 32.0 / n;
    case WeightFormat::kFp8Block:
      return 8.0 + 32.0 * CeilDiv(out, g) * CeilDiv(in, g) / n;
    case WeightFormat::kFp8PerChannel:
    case WeightFormat::kInt8:
      return 8.0 + 32.0 * out / n;
    case WeightFormat::kInt4Awq:
      return 4.0 + 20.0 * out * groups_per_row / n;
    case WeightFormat::kInt4Gptq:
      return 4.0 + (20.0 * out * groups_per_row + 32.0 * in) / n;
    case WeightFormat::kInt4Symmetric:
      return 4.0 + 16.0 * out * groups_per_row / n;
    case WeightFormat::kNvfp4:
      return 4.0 + (8.0 * out * groups_per_row + 2.0 * 32.0) / n;
    case WeightFormat::kMxfp4:
      return 4.0 + 8.0 * out * groups_per_row / n;
  }
  return 16.0;
}

absl::Status ValidateQuantization(const Quantization& q) {
  if (q.group_size < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("Quantization.group_size = ", q.group_size, "; must not be negative"));
  }
  if (q.format == WeightFormat::kNvfp4 && q.group_size != 0 && q.group_size != 16) {
    return absl::InvalidArgumentError(
        absl::StrCat("Quantization.group_size = ", q.group_size, "; NVFP4 groups are 16 values"));
  }
  if (q.format == WeightFormat::kMxfp4 && q.group_size != 0 && q.group_size != 32) {
    return absl::InvalidArgumentError(
        absl::StrCat("Quantization.group_size = ", q.group_size, "; MXFP4 groups are 32 values"));
  }
  return absl::OkStatus();
}

bool IsQuantized(const Quantization& q, const TensorGroup& tensor) {
  if (q.format == WeightFormat::kNative || !tensor.quantizable) return false;
  if (q.experts_only && tensor.component != Component::kRoutedExperts) return false;
  return std::find(q.unquantized.begin(), q.unquantized.end(), tensor.component) ==
         q.unquantized.end();
}

double WeightBytes(const Quantization& q, NumberType native_dtype, const TensorGroup& tensor,
                   int64_t out_features, int64_t in_features, double copies) {
  const double elements =
      static_cast<double>(out_features) * static_cast<double>(in_features) * copies;
  if (elements <= 0.0) return 0.0;
  if (!IsQuantized(q, tensor)) {
    return elements * BytesPerElement(native_dtype);
  }
  return elements *
         BitsPerParameter(q.format, q.group_size, out_features, in_features, native_dtype) / 8.0;
}

}  // namespace capplan::model
