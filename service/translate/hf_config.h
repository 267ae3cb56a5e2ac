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
// qwen3_moe, qwen3_next, qwen3_5, qwen3_5_moe (and their *_text language
// models: gated attention output, attn_output_gate where stated), mixtral,
// deepseek_v2, deepseek_v3, kimi_k2, gpt_oss, gemma (layer_types; Gemma 4's
// top_k_experts, and enable_moe_block's dense MLP beside the experts as one
// shared expert); others are read with the common (Llama-like) keys.
// quantization_config: awq, gptq, fp8 (weight_block_size), mxfp4
// (modules_to_not_convert), compressed-tensors (config_groups, ignore),
// modelopt (NVFP4 / FP8).
//
// layer_blocks are compact: a pattern of layers repeated back to back is one
// LayerBlock with its repeat (Qwen3.5-397B: 3 linear-attention + 1 full
// attention layers × 15), the rest blocks of repeat 1; the stack is the same
// layer for layer.
//
// Errors are InvalidArgument naming the key, its value and the rule:
// "config.json: num_key_value_heads = 0; must be positive".
absl::StatusOr<v1::Model> ModelFromHfConfig(absl::string_view json_text);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_TRANSLATE_HF_CONFIG_H_
