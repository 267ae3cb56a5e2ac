#include "service/translate/enum_names.h"

#include <algorithm>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace capplan::service {
namespace {

struct Named {
  const char* name;
  int value;
};

template <typename Enum, size_t N>
absl::StatusOr<Enum> Lookup(absl::string_view field, absl::string_view text,
                            const Named (&table)[N]) {
  const std::string lower = absl::AsciiStrToLower(text);
  std::vector<std::string> names;
  for (const Named& n : table) {
    if (lower == n.name) return static_cast<Enum>(n.value);
    names.push_back(n.name);
  }
  return absl::InvalidArgumentError(
      absl::StrFormat("%s = %s; must be one of %s", field, text, absl::StrJoin(names, ", ")));
}

constexpr Named kFormats[] = {
    {"bf16", v1::WEIGHT_FORMAT_BF16},
    {"fp16", v1::WEIGHT_FORMAT_FP16},
    {"fp32", v1::WEIGHT_FORMAT_FP32},
    {"fp8", v1::WEIGHT_FORMAT_FP8_PER_TENSOR},
    {"fp8-block", v1::WEIGHT_FORMAT_FP8_BLOCK},
    {"fp8-channel", v1::WEIGHT_FORMAT_FP8_PER_CHANNEL},
    {"int8", v1::WEIGHT_FORMAT_INT8},
    {"awq", v1::WEIGHT_FORMAT_INT4_AWQ},
    {"gptq", v1::WEIGHT_FORMAT_INT4_GPTQ},
    {"int4", v1::WEIGHT_FORMAT_INT4_SYMMETRIC},
    {"moe_wna16", v1::WEIGHT_FORMAT_INT4_SYMMETRIC},
    {"nvfp4", v1::WEIGHT_FORMAT_NVFP4},
    {"mxfp4", v1::WEIGHT_FORMAT_MXFP4},
};

constexpr Named kEngines[] = {{"vllm", v1::ENGINE_KIND_VLLM},
                              {"sglang", v1::ENGINE_KIND_SGLANG},
                              {"trtllm", v1::ENGINE_KIND_TRTLLM}};

constexpr Named kKvDtypes[] = {{"auto", v1::KV_CACHE_DTYPE_AUTO},
                               {"bf16", v1::KV_CACHE_DTYPE_BF16},
                               {"fp16", v1::KV_CACHE_DTYPE_FP16},
                               {"fp8", v1::KV_CACHE_DTYPE_FP8}};

constexpr Named kSpeculative[] = {{"none", v1::SPECULATIVE_METHOD_NONE},
                                  {"mtp", v1::SPECULATIVE_METHOD_MTP},
                                  {"eagle", v1::SPECULATIVE_METHOD_EAGLE},
                                  {"draft", v1::SPECULATIVE_METHOD_DRAFT_MODEL},
                                  {"ngram", v1::SPECULATIVE_METHOD_NGRAM}};

constexpr Named kSamplers[] = {{"default", v1::SAMPLER_BACKEND_UNSPECIFIED},
                               {"native", v1::SAMPLER_BACKEND_NATIVE}};

std::string WithoutPrefix(const std::string& name, absl::string_view prefix) {
  if (name.empty()) return "UNSPECIFIED";
  return name.substr(std::min(name.size(), prefix.size()));
}

}  // namespace

std::string ShortName(v1::MemoryBinding value) {
  return WithoutPrefix(v1::MemoryBinding_Name(value), "MEMORY_BINDING_");
}
std::string ShortName(v1::LoadBinding value) {
  return WithoutPrefix(v1::LoadBinding_Name(value), "LOAD_BINDING_");
}
std::string ShortName(v1::SlotBound value) {
  return WithoutPrefix(v1::SlotBound_Name(value), "SLOT_BOUND_");
}

absl::StatusOr<v1::WeightFormat> WeightFormatFromName(absl::string_view field,
                                                      absl::string_view text) {
  return Lookup<v1::WeightFormat>(field, text, kFormats);
}

absl::StatusOr<v1::EngineKind> EngineKindFromName(absl::string_view field, absl::string_view text) {
  return Lookup<v1::EngineKind>(field, text, kEngines);
}

absl::StatusOr<v1::KvCacheDtype> KvCacheDtypeFromName(absl::string_view field,
                                                      absl::string_view text) {
  return Lookup<v1::KvCacheDtype>(field, text, kKvDtypes);
}

absl::StatusOr<v1::SpeculativeMethod> SpeculativeMethodFromName(absl::string_view field,
                                                                absl::string_view text) {
  return Lookup<v1::SpeculativeMethod>(field, text, kSpeculative);
}

absl::StatusOr<v1::SamplerBackend> SamplerBackendFromName(absl::string_view field,
                                                          absl::string_view text) {
  return Lookup<v1::SamplerBackend>(field, text, kSamplers);
}

}  // namespace capplan::service
