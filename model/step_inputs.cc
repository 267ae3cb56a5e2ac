#include "model/step_inputs.h"

#include <algorithm>

namespace capplan::model {

double AttentionFlopsPerContextToken(const ModelArchitecture& arch, int tp) {
  const double heads = static_cast<double>(arch.num_attention_heads) / std::max(1, tp);
  const double d = static_cast<double>(arch.EffectiveHeadDim());
  const double per_layer_full = 2.0 * heads * (d + d);
  double per_layer_mla = 0;
  if (arch.mla.has_value()) {
    const MlaSpec& m = *arch.mla;
    per_layer_mla =
        2.0 * heads * static_cast<double>(m.qk_nope_head_dim + m.qk_rope_head_dim + m.v_head_dim);
  }
  double total = 0;
  for (const LayerSpec& layer : arch.layers) {
    switch (layer.attention) {
      case AttentionKind::kFull:
      case AttentionKind::kSlidingWindow:
        total += per_layer_full;
        break;
      case AttentionKind::kMla:
        total += per_layer_mla;
        break;
      default:
        break;
    }
  }
  return total;
}

double AllReduceBytesPerToken(const ModelArchitecture& arch, int tp) {
  if (tp <= 1) return 0;
  return static_cast<double>(arch.layers.size()) * 2.0 * static_cast<double>(arch.hidden_size) *
         BytesPerElement(arch.native_dtype) * 2.0 * (tp - 1) / tp;
}

StepTimeInputs StepInputsFromMemoryPlan(const ModelArchitecture& arch, const MemoryPlan& plan,
                                        int tp, int pp) {
  return StepInputsFromMemoryPlan(arch, plan, tp, pp, ComputeParameterCounts(arch));
}

StepTimeInputs StepInputsFromMemoryPlan(const ModelArchitecture& arch, const MemoryPlan& plan,
                                        int tp, int pp, const ParameterCounts& counts) {
  tp = std::max(1, tp);
  pp = std::max(1, pp);
  double dense = 0;
  for (int c = 0; c < kNumComponents; ++c) {
    if (c == static_cast<int>(Component::kRoutedExperts) ||
        c == static_cast<int>(Component::kDraft) ||
        c == static_cast<int>(Component::kVisionEncoder)) {
      continue;
    }
    dense += plan.weights_by_component_bytes[c];
  }
  StepTimeInputs in;
  in.dense_weight_bytes_per_gpu = dense * pp;
  in.routed_expert_weight_bytes_per_gpu =
      plan.weights_by_component_bytes[static_cast<int>(Component::kRoutedExperts)] * pp;
  if (arch.moe.has_value() && arch.moe->num_routed_experts > 0) {
    in.routed_experts = static_cast<int>(arch.moe->num_routed_experts);
    in.experts_per_token = static_cast<int>(arch.moe->experts_per_token);
  }
  in.kv_bytes_per_token_per_gpu = plan.kv_bytes_per_token * pp;
  in.state_bytes_per_sequence_per_gpu = plan.state_bytes_per_request * pp;
  in.active_parameters_per_token_per_gpu = static_cast<double>(counts.active_per_token) / tp;
  in.attention_flops_per_token_per_context_token_per_gpu = AttentionFlopsPerContextToken(arch, tp);
  in.allreduce_bytes_per_token_per_gpu = AllReduceBytesPerToken(arch, tp);
  return in;
}

std::vector<GemmFormat> GemmFormatPreference(WeightFormat weights, NumberType native_dtype) {
  std::vector<GemmFormat> order;
  switch (weights) {
    case WeightFormat::kFp8PerTensor:
    case WeightFormat::kFp8Block:
    case WeightFormat::kFp8PerChannel:
      order.push_back(GemmFormat::kFp8);
      break;
    case WeightFormat::kNvfp4:
    case WeightFormat::kMxfp4:
      order.push_back(GemmFormat::kFp4);
      break;
    default:
      break;
  }
  if (native_dtype == NumberType::kFp16) order.push_back(GemmFormat::kFp16);
  order.push_back(GemmFormat::kBf16);
  order.push_back(GemmFormat::kFp16);
  return order;
}

double AllReduceLinkBandwidth(double link_bytes_per_second, bool pcie_without_peer_to_peer) {
  return pcie_without_peer_to_peer ? link_bytes_per_second / 2 : link_bytes_per_second;
}

SpeculativeDecoding DraftPassFromMemoryPlan(const ModelArchitecture& arch, const MemoryPlan& plan,
                                            int tp) {
  const ParameterCounts counts = ComputeParameterCounts(arch);
  const double active_share =
      counts.total > 0 ? static_cast<double>(counts.active_per_token) / counts.total : 1.0;
  SpeculativeDecoding s;
  s.draft_tokens = 1;
  s.draft_weight_bytes_per_gpu =
      plan.weights_by_component_bytes[static_cast<int>(Component::kDraft)] * active_share +
      plan.weights_by_component_bytes[static_cast<int>(Component::kLmHead)];
  s.draft_active_parameters_per_token_per_gpu =
      (static_cast<double>(counts.draft) * active_share +
       static_cast<double>(counts.Of(Component::kLmHead))) /
      std::max(1, tp);
  return s;
}

}  // namespace capplan::model
