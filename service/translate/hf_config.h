#ifndef CAPPLAN_SERVICE_TRANSLATE_HF_CONFIG_H_
#define CAPPLAN_SERVICE_TRANSLATE_HF_CONFIG_H_

// Reads a Hugging Face config.json (as a user hands it over) into the
// catalogue's Model message, including its quantization_config, so that any
// model can be planned without a catalogue entry.

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "capplan/v1/catalog.pb.h"

namespace capplan::service {

// Supported model_type values: llama, mistral, qwen2, qwen2_moe, qwen3,
// qwen3_moe, qwen3_next, mixtral, deepseek_v2, deepseek_v3, kimi_k2, gpt_oss;
// others are read with the common (Llama-like) keys. quantization_config:
// awq, gptq, fp8 (weight_block_size), mxfp4 (modules_to_not_convert),
// compressed-tensors (config_groups, ignore), modelopt (NVFP4 / FP8).
//
// Errors are InvalidArgument naming the key, its value and the rule:
// "config.json: num_key_value_heads = 0; must be positive".
absl::StatusOr<v1::Model> ModelFromHfConfig(absl::string_view json_text);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_TRANSLATE_HF_CONFIG_H_
