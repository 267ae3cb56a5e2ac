#include "model/architecture.h"

#include <limits>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace capplan::model {
namespace {

absl::Status Invalid(absl::string_view field, int64_t value, absl::string_view rule) {
  return absl::InvalidArgumentError(
      absl::StrCat("ModelArchitecture.", field, " = ", value, "; ", rule));
}

// The tensors of one decoder layer as they are appended: every one tagged
// with the layer's index.
class LayerTensors {
 public:
  LayerTensors(int layer, std::vector<TensorGroup>& out) : layer_(layer), out_(out) {}
  void Add(Component c, absl::string_view name, int64_t rows, int64_t cols, int64_t copies,
           Sharding s, bool quantizable) {
    out_.push_back(TensorGroup{c, layer_, name, rows, cols, copies, s, quantizable});
  }

 private:
  const int layer_;
  std::vector<TensorGroup>& out_;
};

using C = Component;
using S = Sharding;

// Full or sliding-window attention: q (with Qwen3-Next's output gate), k, v,
// o and the optional biases, sinks and q/k norms.
void AppendFullAttention(const ModelArchitecture& a, LayerTensors& t) {
  const int64_t h = a.hidden_size;
  const int64_t hd = a.EffectiveHeadDim();
  const int64_t heads = a.num_attention_heads;
  const int64_t kv = a.num_kv_heads;
  const int64_t q_out = heads * hd * (a.gated_attention_output ? 2 : 1);
  t.Add(C::kAttention, "q_proj", q_out, h, 1, S::kColumn, true);
  t.Add(C::kAttention, "k_proj", kv * hd, h, 1, S::kKvHeads, true);
  t.Add(C::kAttention, "v_proj", kv * hd, h, 1, S::kKvHeads, true);
  t.Add(C::kAttention, "o_proj", h, heads * hd, 1, S::kRow, true);
  if (a.attention_bias) {
    t.Add(C::kAttention, "q_bias", q_out, 1, 1, S::kColumn, false);
    t.Add(C::kAttention, "kv_bias", 2 * kv * hd, 1, 1, S::kKvHeads, false);
  }
  if (a.attention_output_bias) {
    t.Add(C::kAttention, "o_bias", h, 1, 1, S::kReplicated, false);
  }
  if (a.attention_sinks) {
    t.Add(C::kAttention, "sinks", heads, 1, 1, S::kColumn, false);
  }
  if (a.qk_norm) {
    t.Add(C::kNorms, "qk_norm", 2 * hd, 1, 1, S::kReplicated, false);
  }
}

// MLA: queries through a low-rank projection when q_lora_rank > 0, the joint
// KV down-projection (replicated) and its up-projection.
void AppendMlaAttention(const ModelArchitecture& a, LayerTensors& t) {
  const int64_t h = a.hidden_size;
  const int64_t heads = a.num_attention_heads;
  const MlaSpec m = a.mla.value_or(MlaSpec{});
  const int64_t qk = m.qk_nope_head_dim + m.qk_rope_head_dim;
  if (m.q_lora_rank > 0) {
    t.Add(C::kAttention, "q_a_proj", m.q_lora_rank, h, 1, S::kReplicated, true);
    t.Add(C::kNorms, "q_a_layernorm", m.q_lora_rank, 1, 1, S::kReplicated, false);
    t.Add(C::kAttention, "q_b_proj", heads * qk, m.q_lora_rank, 1, S::kColumn, true);
  } else {
    t.Add(C::kAttention, "q_proj", heads * qk, h, 1, S::kColumn, true);
  }
  t.Add(C::kAttention, "kv_a_proj_with_mqa", m.kv_lora_rank + m.qk_rope_head_dim, h, 1,
        S::kReplicated, true);
  t.Add(C::kNorms, "kv_a_layernorm", m.kv_lora_rank, 1, 1, S::kReplicated, false);
  t.Add(C::kAttention, "kv_b_proj", heads * (m.qk_nope_head_dim + m.v_head_dim), m.kv_lora_rank, 1,
        S::kColumn, true);
  t.Add(C::kAttention, "o_proj", h, heads * m.v_head_dim, 1, S::kRow, true);
}

// Gated DeltaNet: the fused q/k/v/z and b/a input projections, the short
// convolution, the per-head decay parameters, the gated norm and out_proj.
void AppendLinearAttention(const ModelArchitecture& a, LayerTensors& t) {
  const int64_t h = a.hidden_size;
  const LinearAttentionSpec l = a.linear_attention.value_or(LinearAttentionSpec{});
  const int64_t qk = l.num_key_heads * l.key_head_dim;
  const int64_t v = l.num_value_heads * l.value_head_dim;
  t.Add(C::kLinearAttention, "in_proj_qkvz", 2 * qk + 2 * v, h, 1, S::kColumn, true);
  t.Add(C::kLinearAttention, "in_proj_ba", 2 * l.num_value_heads, h, 1, S::kColumn, true);
  t.Add(C::kLinearAttention, "conv1d", 2 * qk + v, l.conv_kernel_size, 1, S::kColumn, false);
  t.Add(C::kLinearAttention, "dt_bias_a_log", 2 * l.num_value_heads, 1, 1, S::kColumn, false);
  t.Add(C::kNorms, "gated_norm", l.value_head_dim, 1, 1, S::kReplicated, false);
  t.Add(C::kLinearAttention, "out_proj", h, v, 1, S::kRow, true);
}

// Mamba2: in_proj to x, z, B, C and dt; the convolution over x, B, C (kernel +
// bias); dt bias, A and D per head; the gated norm and out_proj.
void AppendMambaMixer(const ModelArchitecture& a, LayerTensors& t) {
  const int64_t h = a.hidden_size;
  const MambaSpec m = a.mamba.value_or(MambaSpec{});
  const int64_t inner = m.num_heads * m.head_dim;
  const int64_t bc = 2 * m.num_groups * m.state_size;
  t.Add(C::kLinearAttention, "in_proj", 2 * inner + bc + m.num_heads, h, 1, S::kColumn, true);
  t.Add(C::kLinearAttention, "conv1d", inner + bc, m.conv_kernel_size + 1, 1, S::kColumn,
        false);  // kernel + bias
  t.Add(C::kLinearAttention, "dt_bias_a_log_d", 3 * m.num_heads, 1, 1, S::kColumn, false);
  t.Add(C::kNorms, "gated_norm", inner, 1, 1, S::kColumn, false);
  t.Add(C::kLinearAttention, "out_proj", h, inner, 1, S::kRow, true);
}

// A gated dense MLP: fused gate/up and down (with optional biases).
void AppendDenseMlp(const ModelArchitecture& a, LayerTensors& t) {
  const int64_t h = a.hidden_size;
  const int64_t i = a.intermediate_size;
  t.Add(C::kDenseMlp, "gate_up_proj", 2 * i, h, 1, S::kColumn, true);
  t.Add(C::kDenseMlp, "down_proj", h, i, 1, S::kRow, true);
  if (a.mlp_bias) {
    t.Add(C::kDenseMlp, "gate_up_bias", 2 * i, 1, 1, S::kColumn, false);
    t.Add(C::kDenseMlp, "down_bias", h, 1, 1, S::kReplicated, false);
  }
}

// MoE: the router, `num_routed_experts` copies of the expert MLP, and the
// shared expert(s) as one dense MLP of their joint width, with its gate.
void AppendMoeMlp(const ModelArchitecture& a, LayerTensors& t) {
  const int64_t h = a.hidden_size;
  const MoeSpec m = a.moe.value_or(MoeSpec{});
  const int64_t e = m.num_routed_experts;
  const int64_t i = m.expert_intermediate_size;
  t.Add(C::kRouter, "router", e, h, 1, S::kReplicated, false);
  if (m.router_bias) {
    t.Add(C::kRouter, "router_bias", e, 1, 1, S::kReplicated, false);
  }
  t.Add(C::kRoutedExperts, "experts.gate_up_proj", 2 * i, h, e, S::kExpertColumn, true);
  t.Add(C::kRoutedExperts, "experts.down_proj", h, i, e, S::kExpertRow, true);
  if (m.expert_bias) {
    t.Add(C::kRoutedExperts, "experts.gate_up_bias", 2 * i, 1, e, S::kExpertColumn, false);
    t.Add(C::kRoutedExperts, "experts.down_bias", h, 1, e, S::kExpertRow, false);
  }
  const int64_t si = m.shared_expert_intermediate_size > 0 ? m.shared_expert_intermediate_size
                                                           : m.num_shared_experts * i;
  if (si > 0) {
    t.Add(C::kSharedExperts, "shared_experts.gate_up_proj", 2 * si, h, 1, S::kColumn, true);
    t.Add(C::kSharedExperts, "shared_experts.down_proj", h, si, 1, S::kRow, true);
    if (m.shared_expert_gate) {
      t.Add(C::kSharedExperts, "shared_expert_gate", 1, h, 1, S::kReplicated, false);
    }
  }
}

// Appends the tensors of one decoder layer: its attention (or mixer), its
// MLP, its two norms. `override_component` (MTP layers) replaces the
// component of every tensor when set.
void AppendLayer(const ModelArchitecture& a, const LayerSpec& spec, int layer,
                 std::optional<Component> override_component, std::vector<TensorGroup>& out) {
  const size_t first = out.size();
  LayerTensors t(layer, out);
  switch (spec.attention) {
    case AttentionKind::kFull:
    case AttentionKind::kSlidingWindow:
      AppendFullAttention(a, t);
      break;
    case AttentionKind::kMla:
      AppendMlaAttention(a, t);
      break;
    case AttentionKind::kLinear:
      AppendLinearAttention(a, t);
      break;
    case AttentionKind::kMamba:
      AppendMambaMixer(a, t);
      break;
  }
  if (spec.mlp == MlpKind::kDense) {
    AppendDenseMlp(a, t);
  } else {
    AppendMoeMlp(a, t);
  }
  t.Add(C::kNorms, "layer_norms", 2 * a.hidden_size, 1, 1, S::kReplicated, false);
  if (override_component.has_value()) {
    for (size_t k = first; k < out.size(); ++k) out[k].component = *override_component;
  }
}

}  // namespace

double BytesPerElement(NumberType type) {
  switch (type) {
    case NumberType::kFp32:
      return 4.0;
    case NumberType::kBf16:
    case NumberType::kFp16:
      return 2.0;
    case NumberType::kFp8:
      return 1.0;
  }
  return 2.0;
}

int64_t ModelArchitecture::EffectiveHeadDim() const {
  if (head_dim > 0) return head_dim;
  if (num_attention_heads <= 0) return 0;
  return hidden_size / num_attention_heads;
}

int64_t ContextLimitTokens(const ModelArchitecture& a) {
  if (!(a.rope_scaling_factor > 1.0)) return a.native_context_tokens;
  if (a.rope_original_context_tokens > 0) {
    return std::max<int64_t>(
        a.native_context_tokens,
        std::llround(a.rope_scaling_factor * static_cast<double>(a.rope_original_context_tokens)));
  }
  return std::llround(a.rope_scaling_factor * static_cast<double>(a.native_context_tokens));
}

namespace {

// The sizes every layer relies on: hidden, vocabulary, layer count, heads.
absl::Status ValidateSizes(const ModelArchitecture& a) {
  if (a.hidden_size <= 0) return Invalid("hidden_size", a.hidden_size, "must be positive");
  if (a.vocab_size <= 0) return Invalid("vocab_size", a.vocab_size, "must be positive");
  // A bound far above any model's (vocabularies ~2.6e5, hidden sizes ~2e4),
  // so that the parameter arithmetic stays exact.
  constexpr int64_t kMaxDimension = int64_t{1} << 24;
  for (const auto& [name, value] : {std::pair<const char*, int64_t>{"hidden_size", a.hidden_size},
                                    {"vocab_size", a.vocab_size},
                                    {"intermediate_size", a.intermediate_size},
                                    {"num_attention_heads", a.num_attention_heads},
                                    {"head_dim", a.head_dim}}) {
    if (value > kMaxDimension) {
      return Invalid(name, value, absl::StrCat("must be at most ", kMaxDimension));
    }
  }
  if (a.layers.empty()) return Invalid("layers.size()", 0, "must be positive");
  if (a.num_attention_heads <= 0) {
    return Invalid("num_attention_heads", a.num_attention_heads, "must be positive");
  }
  if (a.num_kv_heads <= 0) return Invalid("num_kv_heads", a.num_kv_heads, "must be positive");
  if (a.num_attention_heads % a.num_kv_heads != 0) {
    return Invalid("num_kv_heads", a.num_kv_heads,
                   absl::StrCat("must divide num_attention_heads = ", a.num_attention_heads));
  }
  if (a.head_dim < 0) return Invalid("head_dim", a.head_dim, "must not be negative");
  if (a.EffectiveHeadDim() <= 0) {
    return Invalid("head_dim", a.head_dim,
                   "must be positive (or hidden_size / num_attention_heads)");
  }
  if (a.num_mtp_layers < 0) {
    return Invalid("num_mtp_layers", a.num_mtp_layers, "must not be negative");
  }
  return absl::OkStatus();
}

// The spec a layer's attention kind needs is present and positive; `at`
// names the layer ("layers[3]").
absl::Status ValidateLayerAttention(const ModelArchitecture& a, AttentionKind kind,
                                    absl::string_view at) {
  switch (kind) {
    case AttentionKind::kFull:
      break;
    case AttentionKind::kSlidingWindow:
      if (a.sliding_window_tokens <= 0) {
        return Invalid("sliding_window_tokens", a.sliding_window_tokens,
                       absl::StrCat("must be positive: ", at, " is sliding-window"));
      }
      break;
    case AttentionKind::kMla:
      if (!a.mla.has_value() || a.mla->kv_lora_rank <= 0 || a.mla->v_head_dim <= 0 ||
          a.mla->qk_nope_head_dim + a.mla->qk_rope_head_dim <= 0) {
        return Invalid("mla.kv_lora_rank", a.mla ? a.mla->kv_lora_rank : 0,
                       absl::StrCat("MLA sizes must be positive: ", at, " is MLA"));
      }
      break;
    case AttentionKind::kLinear: {
      const auto& la = a.linear_attention;
      if (!la.has_value() || la->num_key_heads <= 0 || la->num_value_heads <= 0 ||
          la->key_head_dim <= 0 || la->value_head_dim <= 0 || la->conv_kernel_size <= 0) {
        return Invalid(
            "linear_attention.num_value_heads", la ? la->num_value_heads : 0,
            absl::StrCat("linear-attention sizes must be positive: ", at, " is linear attention"));
      }
      break;
    }
    case AttentionKind::kMamba: {
      const auto& m = a.mamba;
      if (!m.has_value() || m->num_heads <= 0 || m->head_dim <= 0 || m->state_size <= 0 ||
          m->num_groups <= 0 || m->conv_kernel_size <= 0) {
        return Invalid("mamba.num_heads", m ? m->num_heads : 0,
                       absl::StrCat("Mamba sizes must be positive: ", at, " is Mamba"));
      }
      break;
    }
  }
  return absl::OkStatus();
}

// A dense layer needs the MLP width; a MoE layer a MoE spec whose expert
// counts and widths make sense.
absl::Status ValidateLayerMlp(const ModelArchitecture& a, MlpKind kind, absl::string_view at) {
  if (kind == MlpKind::kDense && a.intermediate_size <= 0) {
    return Invalid("intermediate_size", a.intermediate_size,
                   absl::StrCat("must be positive: ", at, " has a dense MLP"));
  }
  if (kind != MlpKind::kMoe) return absl::OkStatus();
  if (!a.moe.has_value() || a.moe->num_routed_experts <= 0) {
    return Invalid("moe.num_routed_experts", a.moe ? a.moe->num_routed_experts : 0,
                   absl::StrCat("must be positive: ", at, " is MoE"));
  }
  if (a.moe->experts_per_token <= 0 || a.moe->experts_per_token > a.moe->num_routed_experts) {
    return Invalid(
        "moe.experts_per_token", a.moe->experts_per_token,
        absl::StrCat("must be in [1, num_routed_experts = ", a.moe->num_routed_experts, "]"));
  }
  if (a.moe->expert_intermediate_size <= 0) {
    return Invalid("moe.expert_intermediate_size", a.moe->expert_intermediate_size,
                   "must be positive");
  }
  if (a.moe->num_shared_experts < 0) {
    return Invalid("moe.num_shared_experts", a.moe->num_shared_experts, "must not be negative");
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateArchitecture(const ModelArchitecture& a) {
  if (absl::Status s = ValidateSizes(a); !s.ok()) return s;
  if (a.vision_encoder.has_value()) {
    const VisionEncoderSpec& v = *a.vision_encoder;
    for (const auto& [field, value] :
         {std::pair<const char*, int64_t>{"vision_encoder.depth", v.depth},
          {"vision_encoder.hidden_size", v.hidden_size},
          {"vision_encoder.intermediate_size", v.intermediate_size},
          {"vision_encoder.patch_size", v.patch_size},
          {"vision_encoder.out_hidden_size", v.out_hidden_size}}) {
      if (value <= 0) return Invalid(field, value, "must be positive");
    }
  }
  for (size_t i = 0; i < a.layers.size(); ++i) {
    const std::string at = absl::StrCat("layers[", i, "]");
    if (absl::Status s = ValidateLayerAttention(a, a.layers[i].attention, at); !s.ok()) return s;
    if (absl::Status s = ValidateLayerMlp(a, a.layers[i].mlp, at); !s.ok()) return s;
  }
  return absl::OkStatus();
}

namespace {

// The vision tower: patch embedding (+ position table), `depth` blocks of
// LayerNorm, fused qkv, proj and MLP, and the patch mergers (LayerNorm, then
// two linears from hidden × merge² to out_hidden). Weights and biases,
// replicated on every rank and kept in the native dtype.
void AppendVisionEncoder(const VisionEncoderSpec& v, std::vector<TensorGroup>& out) {
  auto add = [&](absl::string_view name, int64_t rows, int64_t cols, int64_t copies,
                 Sharding sharding = Sharding::kReplicated) {
    out.push_back(TensorGroup{Component::kVisionEncoder, std::nullopt, name, rows, cols, copies,
                              sharding, false});
  };
  const int64_t h = v.hidden_size;
  const int64_t i = v.intermediate_size;
  const int64_t d = v.depth;
  add("vision.patch_embed", h,
      v.in_channels * v.temporal_patch_size * v.patch_size * v.patch_size + 1, 1);
  if (v.num_position_embeddings > 0) add("vision.pos_embed", v.num_position_embeddings, h, 1);
  add("vision.block_norms", 4 * h, 1, d);
  // The linears' split when the engine shards the tower (the memory model
  // keeps them whole where its engine does not): attention qkv and the MLP's
  // input by output, the projections back by input, as in the text model.
  add("vision.qkv", 3 * h, h + 1, d, Sharding::kColumn);
  add("vision.proj", h, h + 1, d, Sharding::kRow);
  const int64_t mlp_in = v.gated_mlp ? 2 : 1;
  add("vision.mlp_in", mlp_in * i, h + 1, d, Sharding::kColumn);
  add("vision.mlp_out", h, i + 1, d, Sharding::kRow);
  const int64_t merged = h * v.spatial_merge_size * v.spatial_merge_size;
  // The main merger normalises per patch (hidden), the deepstack ones the
  // merged vector.
  add("vision.merger_norm", 2 * h, 1, 1);
  add("vision.merger_fc1", merged, merged + 1, 1 + v.deepstack_mergers, Sharding::kColumn);
  add("vision.merger_fc2", v.out_hidden_size, merged + 1, 1 + v.deepstack_mergers, Sharding::kRow);
  if (v.deepstack_mergers > 0) add("vision.deepstack_norms", 2 * merged, 1, v.deepstack_mergers);
}

}  // namespace

std::vector<TensorGroup> EnumerateTensors(const ModelArchitecture& a) {
  std::vector<TensorGroup> out;
  out.reserve(16 * (a.layers.size() + a.num_mtp_layers) + 4);
  out.push_back(TensorGroup{Component::kEmbeddings, std::nullopt, "embed_tokens", a.vocab_size,
                            a.hidden_size, 1, Sharding::kVocab, false});
  for (size_t i = 0; i < a.layers.size(); ++i) {
    AppendLayer(a, a.layers[i], static_cast<int>(i), std::nullopt, out);
  }
  out.push_back(TensorGroup{Component::kNorms, std::nullopt, "final_norm", a.hidden_size, 1, 1,
                            Sharding::kReplicated, false});
  if (!a.tie_word_embeddings) {
    out.push_back(TensorGroup{Component::kLmHead, std::nullopt, "lm_head", a.vocab_size,
                              a.hidden_size, 1, Sharding::kVocab, false});
  }
  if (a.vision_encoder.has_value()) AppendVisionEncoder(*a.vision_encoder, out);
  // MTP module (DeepSeek-V3, Qwen3-Next, GLM): a projection of
  // [embedding; hidden] back to hidden, its norms, and one decoder layer of the
  // model's own kind. Embedding and LM head are shared with the main model.
  if (a.num_mtp_layers > 0 && !a.layers.empty()) {
    LayerSpec spec;
    spec.attention = a.mla.has_value() ? AttentionKind::kMla : AttentionKind::kFull;
    spec.mlp = a.moe.has_value() ? MlpKind::kMoe : MlpKind::kDense;
    for (int64_t k = 0; k < a.num_mtp_layers; ++k) {
      const int layer = static_cast<int>(a.layers.size() + k);
      out.push_back(TensorGroup{Component::kDraft, layer, "mtp.eh_proj", a.hidden_size,
                                2 * a.hidden_size, 1, Sharding::kReplicated, true});
      out.push_back(TensorGroup{Component::kDraft, layer, "mtp.norms", 3 * a.hidden_size, 1, 1,
                                Sharding::kReplicated, false});
      AppendLayer(a, spec, layer, Component::kDraft, out);
    }
  }
  return out;
}

namespace {
// a + b, saturating at INT64_MAX (both non-negative).
int64_t SaturatingAdd(int64_t a, int64_t b) {
  int64_t s = 0;
  return __builtin_add_overflow(a, b, &s) ? std::numeric_limits<int64_t>::max() : s;
}
}  // namespace

ParameterCounts ComputeParameterCounts(const ModelArchitecture& a) {
  ParameterCounts counts;
  int64_t routed = 0;
  int64_t routed_active = 0;
  const int64_t e = a.moe.has_value() ? a.moe->num_routed_experts : 0;
  const int64_t k = a.moe.has_value() ? a.moe->experts_per_token : 0;
  for (const TensorGroup& t : EnumerateTensors(a)) {
    const int64_t p = t.Parameters();
    int64_t& component = counts.by_component[static_cast<int>(t.component)];
    component = SaturatingAdd(component, p);
    if (t.component == Component::kDraft) continue;
    counts.total = SaturatingAdd(counts.total, p);
    if (t.component == Component::kRoutedExperts && e > 0) {
      routed = SaturatingAdd(routed, p);
      routed_active = SaturatingAdd(routed_active, p / e * k);
    }
  }
  counts.draft = counts.Of(Component::kDraft);
  counts.embeddings = counts.Of(Component::kEmbeddings);
  counts.active_per_token = counts.total - routed + routed_active;
  return counts;
}

double LayerKvBytesPerToken(const ModelArchitecture& a, AttentionKind kind,
                            int64_t kv_heads_per_rank, double kv_element_bytes) {
  switch (kind) {
    case AttentionKind::kFull:
    case AttentionKind::kSlidingWindow:
      return 2.0 * kv_heads_per_rank * a.EffectiveHeadDim() * kv_element_bytes;
    case AttentionKind::kMla:
      return a.mla ? (a.mla->kv_lora_rank + a.mla->qk_rope_head_dim) * kv_element_bytes : 0.0;
    case AttentionKind::kLinear:
    case AttentionKind::kMamba:
      return 0.0;
  }
  return 0.0;
}

double LayerStateBytes(const ModelArchitecture& a, AttentionKind kind, int64_t attention_tp,
                       double conv_state_bytes, double ssm_state_bytes) {
  if (kind == AttentionKind::kLinear && a.linear_attention) {
    const LinearAttentionSpec& s = *a.linear_attention;
    const double channels =
        (2.0 * s.num_key_heads * s.key_head_dim + 1.0 * s.num_value_heads * s.value_head_dim) /
        attention_tp;
    return channels * (s.conv_kernel_size - 1) * conv_state_bytes +
           1.0 * s.num_value_heads / attention_tp * s.key_head_dim * s.value_head_dim *
               ssm_state_bytes;
  }
  if (kind == AttentionKind::kMamba && a.mamba) {
    const MambaSpec& m = *a.mamba;
    const double inner = 1.0 * m.num_heads * m.head_dim / attention_tp;
    const double channels = inner + 2.0 * m.num_groups * m.state_size;
    return channels * (m.conv_kernel_size - 1) * conv_state_bytes +
           inner * m.state_size * ssm_state_bytes;
  }
  return 0.0;
}

double KvBytesPerToken(const ModelArchitecture& a, double kv_element_bytes) {
  double bytes = 0.0;
  for (const LayerSpec& l : a.layers) {
    bytes += LayerKvBytesPerToken(a, l.attention, a.num_kv_heads, kv_element_bytes);
  }
  return bytes;
}

double StateBytesPerRequest(const ModelArchitecture& a, double conv_state_bytes,
                            double ssm_state_bytes) {
  double bytes = 0.0;
  for (const LayerSpec& l : a.layers) {
    bytes += LayerStateBytes(a, l.attention, 1, conv_state_bytes, ssm_state_bytes);
  }
  return bytes;
}

}  // namespace capplan::model
