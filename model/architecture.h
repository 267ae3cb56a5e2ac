#ifndef CAPPLAN_MODEL_ARCHITECTURE_H_
#define CAPPLAN_MODEL_ARCHITECTURE_H_

// The architecture of a decoder-only transformer as the inference engines see
// it, and the parameter counts computed from it (never typed in).
//
// Every weight tensor of a model is listed once by EnumerateTensors(); the
// parameter counts here and the per-GPU weight account of memory_model.h are
// both sums over that one list, so they cannot disagree.

#include <array>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace capplan::model {

enum class AttentionKind {
  kFull,           // causal attention over the whole context (MHA / GQA / MQA)
  kSlidingWindow,  // attends to the last `sliding_window_tokens` tokens
  kMla,            // multi-head latent attention (DeepSeek-V2/V3, Kimi K2)
  kLinear,         // gated DeltaNet / linear attention: constant state per request
  kMamba,          // Mamba2 SSM: constant state per request
};

enum class MlpKind { kDense, kMoe };

// Numeric type of stored values (the checkpoint's torch_dtype, the KV cache).
enum class NumberType { kFp32, kBf16, kFp16, kFp8 };

// Bytes per element of a NumberType.
double BytesPerElement(NumberType type);

struct LayerSpec {
  AttentionKind attention = AttentionKind::kFull;
  MlpKind mlp = MlpKind::kDense;
};

struct MlaSpec {
  int64_t q_lora_rank = 0;  // 0 = queries are not compressed
  int64_t kv_lora_rank = 0;
  int64_t qk_nope_head_dim = 0;
  int64_t qk_rope_head_dim = 0;
  int64_t v_head_dim = 0;
};

// Gated DeltaNet (Qwen3-Next) or a similar linear attention.
struct LinearAttentionSpec {
  int64_t num_key_heads = 0;
  int64_t num_value_heads = 0;
  int64_t key_head_dim = 0;
  int64_t value_head_dim = 0;
  int64_t conv_kernel_size = 0;
  // Bytes per element of the recurrent state the checkpoint states (fp32:
  // 4); 0 = none stated. Engines that take it (EngineBehaviour.
  // state_dtype_from_checkpoint) use it instead of their default.
  double recurrent_state_bytes = 0;
};

// Mamba2: d_inner = num_heads × head_dim.
struct MambaSpec {
  int64_t num_heads = 0;
  int64_t head_dim = 0;
  int64_t state_size = 0;
  int64_t num_groups = 1;
  int64_t conv_kernel_size = 0;
};

// A Qwen-VL-style vision tower (patch embedding, blocks, patch mergers),
// loaded beside the language model and replicated on every rank.
struct VisionEncoderSpec {
  int64_t depth = 0;
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;
  int64_t patch_size = 0;
  int64_t temporal_patch_size = 1;
  int64_t in_channels = 3;
  int64_t out_hidden_size = 0;
  int64_t spatial_merge_size = 1;
  int64_t num_position_embeddings = 0;
  int64_t deepstack_mergers = 0;
  bool gated_mlp = false;
  // The largest item: encoder-output rows and prompt placeholder tokens
  // (0 = not known).
  int64_t max_item_embedding_tokens = 0;
  int64_t max_item_placeholder_tokens = 0;
};

struct MoeSpec {
  int64_t num_routed_experts = 0;
  int64_t experts_per_token = 0;
  int64_t num_shared_experts = 0;
  int64_t expert_intermediate_size = 0;
  // Width of the shared expert(s) together; 0 = num_shared_experts ×
  // expert_intermediate_size.
  int64_t shared_expert_intermediate_size = 0;
  bool router_bias = false;
  bool expert_bias = false;         // gpt-oss experts carry biases
  bool shared_expert_gate = false;  // Qwen2-MoE / Qwen3-Next sigmoid gate on the shared expert
};

struct ModelArchitecture {
  int64_t hidden_size = 0;
  int64_t intermediate_size = 0;  // dense MLP width (gated: gate, up, down)
  int64_t num_attention_heads = 0;
  int64_t num_kv_heads = 0;
  int64_t head_dim = 0;  // 0 = hidden_size / num_attention_heads
  int64_t vocab_size = 0;
  bool tie_word_embeddings = false;
  std::vector<LayerSpec> layers;  // in order, bottom to top
  int64_t sliding_window_tokens = 0;
  std::optional<MlaSpec> mla;
  std::optional<LinearAttentionSpec> linear_attention;
  std::optional<MambaSpec> mamba;
  std::optional<MoeSpec> moe;
  std::optional<VisionEncoderSpec> vision_encoder;
  // config.json architectures[0] (engines pick their model file by it).
  std::string architecture_class;
  int64_t num_mtp_layers = 0;   // multi-token-prediction (draft) layers shipped with the model
  bool attention_bias = false;  // q/k/v biases (Qwen2)
  bool attention_output_bias = false;   // o_proj bias (gpt-oss)
  bool attention_sinks = false;         // one learned sink logit per head (gpt-oss)
  bool qk_norm = false;                 // RMSNorm on q and k per head (Qwen3)
  bool gated_attention_output = false;  // Qwen3-Next: q_proj also emits an output gate
  bool mlp_bias = false;
  int64_t native_context_tokens = 0;  // max_position_embeddings
  double rope_scaling_factor = 0.0;   // 0 or 1 = none
  // original_max_position_embeddings of the rope scaling, 0 when absent.
  int64_t rope_original_context_tokens = 0;
  NumberType native_dtype = NumberType::kBf16;

  // head_dim, or hidden_size / num_attention_heads when head_dim is 0.
  int64_t EffectiveHeadDim() const;
};

// The longest context the model supports, as vLLM derives it
// (config.py _get_and_verify_max_len): max_position_embeddings; with rope
// scaling by a factor f, the scaled original length f × original when the
// config states the original (YaRN; Llama 3's llama3 type states a native
// length already above it, so the larger of the two wins), else f × native.
int64_t ContextLimitTokens(const ModelArchitecture& arch);

// Checks sizes and layer kinds for consistency. Errors name the field, its
// value and the rule: "ModelArchitecture.num_kv_heads = 0; must be positive".
absl::Status ValidateArchitecture(const ModelArchitecture& arch);

// What a group of tensors belongs to (mirrors capplan.v1.ModelComponent).
enum class Component {
  kAttention,
  kDenseMlp,
  kRoutedExperts,
  kSharedExperts,
  kRouter,
  kEmbeddings,
  kLmHead,
  kNorms,
  kDraft,
  kLinearAttention,
  kVisionEncoder,
};
inline constexpr int kNumComponents = 11;

// How the engines (vLLM, SGLang) shard a tensor across tensor-parallel ranks.
enum class Sharding {
  kReplicated,    // every rank holds all of it (norms, routers, MLA down-projections)
  kColumn,        // output dimension split by TP (q, gate/up, MLA up-projections)
  kKvHeads,       // split by KV head; replicated when TP > num_kv_heads
  kRow,           // input dimension split by TP (o_proj, down_proj)
  kVocab,         // vocabulary-parallel (embeddings, LM head)
  kExpertColumn,  // routed experts: whole experts by EP, else output split by TP
  kExpertRow,     // routed experts: whole experts by EP, else input split by TP
};

// One weight tensor, or `copies` identical ones (one per routed expert).
// Shapes follow the PyTorch Linear convention: [out_features, in_features];
// a vector (bias, norm) has in_features = 1.
struct TensorGroup {
  Component component = Component::kAttention;
  // Index into ModelArchitecture::layers; num_layers + i for MTP layer i;
  // nullopt for tensors outside the layer stack (embeddings, final norm, LM
  // head).
  std::optional<int> layer;
  absl::string_view name;
  int64_t out_features = 0;
  int64_t in_features = 1;
  int64_t copies = 1;
  Sharding sharding = Sharding::kReplicated;
  // A 2-D projection weight that a quantization format may quantize. Biases,
  // norms, convolutions and SSM parameters are never quantized.
  bool quantizable = false;

  // out × in × copies, saturating at INT64_MAX (sizes from a file that no
  // model has; ValidateArchitecture refuses them with a message first).
  int64_t Parameters() const {
    int64_t p = 0;
    if (__builtin_mul_overflow(out_features, in_features, &p) ||
        __builtin_mul_overflow(p, copies, &p)) {
      return std::numeric_limits<int64_t>::max();
    }
    return p;
  }
};

// Every weight tensor of the model (MTP layers included, tagged kDraft).
std::vector<TensorGroup> EnumerateTensors(const ModelArchitecture& arch);

struct ParameterCounts {
  // The main model, without MTP/draft layers (what model cards report).
  int64_t total = 0;
  // Parameters touched per token: everything except routed experts, plus
  // experts_per_token of them. Includes embeddings and LM head.
  int64_t active_per_token = 0;
  int64_t embeddings = 0;                              // input embedding only
  int64_t draft = 0;                                   // MTP layers
  std::array<int64_t, kNumComponents> by_component{};  // kDraft entry == draft

  int64_t Of(Component c) const { return by_component[static_cast<int>(c)]; }
};

ParameterCounts ComputeParameterCounts(const ModelArchitecture& arch);

// KV cache bytes per token of one layer of kind `kind` on a rank holding
// `kv_heads_per_rank` KV heads: full and sliding-window layers
// 2·kv_heads·head_dim·bytes, MLA (kv_lora_rank + qk_rope_head_dim)·bytes on
// every rank, linear/Mamba layers 0.
double LayerKvBytesPerToken(const ModelArchitecture& arch, AttentionKind kind,
                            int64_t kv_heads_per_rank, double kv_element_bytes);

// Recurrent state of one linear-attention / Mamba layer on one of
// `attention_tp` ranks (the heads are split, Mamba's B/C groups are not); 0
// for attention layers.
double LayerStateBytes(const ModelArchitecture& arch, AttentionKind kind, int64_t attention_tp,
                       double conv_state_bytes, double ssm_state_bytes);

// KV cache bytes per token for the whole model (all layers, no parallelism):
// full and sliding-window layers 2·kv_heads·head_dim·bytes, MLA
// (kv_lora_rank + qk_rope_head_dim)·bytes; linear/Mamba layers hold no
// per-token KV. Sliding-window layers are counted per token as full ones.
double KvBytesPerToken(const ModelArchitecture& arch, double kv_element_bytes);

// Constant recurrent state one request holds across all linear-attention /
// Mamba layers, bytes: convolution state (conv_kernel_size − 1 columns of the
// conv channels, in `conv_state_bytes` per element) plus the SSM / delta-rule
// state (in `ssm_state_bytes` per element).
double StateBytesPerRequest(const ModelArchitecture& arch, double conv_state_bytes,
                            double ssm_state_bytes);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_ARCHITECTURE_H_
