#include "model/memory_model.h"

#include <algorithm>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <optional>
#include <tuple>

#include "Eigen/Dense"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace capplan::model {
namespace {

int64_t CeilDiv(int64_t a, int64_t b) { return b <= 0 ? a : (a + b - 1) / b; }

// What one plan reads, by reference: a MemoryPlanInput's parts, or a prepared
// model's fixed parts with one candidate's parallelism and settings.
struct PlanView {
  const ModelArchitecture& arch;
  const Quantization& quantization;
  const HardwareSpec& hardware;
  const EngineBehaviour& engine;
  const ParallelismSpec& parallelism;
  const EngineSettings& settings;
};

PlanView ViewOf(const MemoryPlanInput& in) {
  return PlanView{in.arch, in.quantization, in.hardware, in.engine, in.parallelism, in.settings};
}
int64_t RoundUp(int64_t a, int64_t m) { return m <= 1 ? a : CeilDiv(a, m) * m; }

absl::Status Invalid(absl::string_view field, absl::string_view value, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(field, " = ", value, "; ", rule));
}

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;

bool IsAttentionComponent(Component c) {
  return c == Component::kAttention || c == Component::kLinearAttention;
}

int64_t AttentionTp(const ParallelismSpec& p) {
  if (p.dp_attention && p.dp > 1) return std::max<int64_t>(1, p.tp / p.dp);
  return std::max<int64_t>(1, p.tp);
}

int64_t KvHeadsPerRank(const ModelArchitecture& a, int64_t attn_tp) {
  if (a.num_kv_heads >= attn_tp) return a.num_kv_heads / attn_tp;
  return 1;  // replicated: each rank keeps one whole KV head
}

int64_t MoeTp(const ParallelismSpec& p) {
  const int64_t ep = std::max<int64_t>(1, p.ep);
  return std::max<int64_t>(1, p.tp / ep);
}

const MoePaddingRule* FindPadding(const EngineBehaviour& e, WeightFormat f) {
  for (const MoePaddingRule& r : e.moe_padding) {
    if (r.format == f && r.architectures.empty() && r.device_names.empty()) return &r;
  }
  return nullptr;
}

// Bytes of one tensor group on one GPU.
double TensorBytesPerGpu(const ModelArchitecture& a, const Quantization& q,
                         const ParallelismSpec& p, const EngineBehaviour& e, const TensorGroup& t) {
  const int64_t tp = std::max<int64_t>(1, p.tp);
  const int64_t ctp = IsAttentionComponent(t.component) ? AttentionTp(p) : tp;
  int64_t rows = t.out_features;
  int64_t cols = t.in_features;
  double copies = static_cast<double>(t.copies);
  // The vision tower's linears carry the split they take when the engine
  // shards the tower; engines that replicate it keep it whole on each rank.
  const Sharding sharding = t.component == Component::kVisionEncoder && !e.vision_encoder_tp_sharded
                                ? Sharding::kReplicated
                                : t.sharding;
  switch (sharding) {
    case Sharding::kReplicated:
      break;
    case Sharding::kColumn:
      rows = CeilDiv(rows, ctp);
      break;
    case Sharding::kKvHeads:
      rows = rows / std::max<int64_t>(1, a.num_kv_heads) * KvHeadsPerRank(a, AttentionTp(p));
      break;
    case Sharding::kRow:
      if (cols > 1) cols = CeilDiv(cols, ctp);
      break;
    case Sharding::kVocab:
      rows = CeilDiv(RoundUp(rows, e.vocab_padding_multiple), tp);
      break;
    case Sharding::kExpertColumn:
    case Sharding::kExpertRow: {
      const int64_t ep = std::max<int64_t>(1, p.ep);
      const int64_t moe_tp = MoeTp(p);
      copies = static_cast<double>(CeilDiv(t.copies, ep));
      const MoeSpec m = a.moe.value_or(MoeSpec{});
      int64_t inter = CeilDiv(m.expert_intermediate_size, moe_tp);
      int64_t hidden = a.hidden_size;
      const MoePaddingRule* pad = IsQuantized(q, t) ? FindPadding(e, q.format) : nullptr;
      if (pad != nullptr) {
        inter = RoundUp(inter, pad->intermediate_multiple);
        hidden = RoundUp(hidden, pad->hidden_multiple);
      }
      if (t.sharding == Sharding::kExpertColumn) {
        rows = rows == a.hidden_size ? hidden : 2 * inter;
        if (cols > 1) cols = hidden;
      } else {
        rows = hidden;
        if (cols > 1) cols = inter;
      }
      break;
    }
  }
  return WeightBytes(q, a.native_dtype, t, rows, cols, copies);
}

// The expected rounding tail PyTorch's caching allocator adds to one loaded
// tensor group of `bytes` on a GPU, as the engine counts its weights
// (EngineBehaviour allocator_*): each tensor of at least the large size gets
// its own segment rounded up to the rounding unit; the tail, uniform over the
// unit, is all counted where the engine measures free memory (mean: half a
// unit) and counted only when at most half a unit where it measures torch's
// allocated bytes (mean: an eighth). A routed-expert group is one stacked
// tensor; another group's copies are separate tensors.
double AllocatorTailBytes(const EngineBehaviour& e, const TensorGroup& t, double bytes) {
  if (e.allocator_round_bytes <= 0.0) return 0.0;
  const bool stacked = t.sharding == Sharding::kExpertColumn || t.sharding == Sharding::kExpertRow;
  const double tensors = stacked ? 1.0 : static_cast<double>(std::max<int64_t>(1, t.copies));
  if (bytes / tensors < e.allocator_large_from_bytes) return 0.0;
  return tensors * e.allocator_round_bytes * (e.allocator_counts_reserved ? 0.5 : 0.125);
}

bool TensorOnStage(const TensorGroup& t, int first, int last, bool first_stage, bool last_stage,
                   int num_layers) {
  if (!t.layer.has_value()) {
    if (t.component == Component::kEmbeddings || t.component == Component::kVisionEncoder) {
      return first_stage;
    }
    return last_stage;  // final norm, LM head
  }
  if (*t.layer >= num_layers) return last_stage;  // MTP / draft layers
  return *t.layer >= first && *t.layer < last;
}

// Attention layers a stage holds, with draft layers appended when speculative
// decoding runs an MTP / EAGLE head that keeps its own KV.
std::vector<AttentionKind> StageAttentionLayers(const PlanView& in, int first, int last,
                                                bool last_stage) {
  std::vector<AttentionKind> kinds;
  for (int i = first; i < last; ++i) kinds.push_back(in.arch.layers[i].attention);
  if (last_stage) {
    const AttentionKind draft_kind = in.arch.mla ? AttentionKind::kMla : AttentionKind::kFull;
    int64_t draft_layers = 0;
    if (in.settings.speculative_method == SpeculativeMethod::kMtp) {
      draft_layers = std::max<int64_t>(1, in.arch.num_mtp_layers);
    } else if (in.settings.speculative_method == SpeculativeMethod::kEagle) {
      draft_layers = 1;
    }
    for (int64_t k = 0; k < draft_layers; ++k) kinds.push_back(draft_kind);
  }
  return kinds;
}

// The hidden-size widths the engine's model file holds beside the MLP's at
// the profiled peak: the first rule naming the architecture class, else the
// first rule for any class, else 2 (the residual and the normed input).
int64_t ActivationHiddenCopiesFor(const EngineBehaviour& e, const ModelArchitecture& a) {
  const EngineBehaviour::HiddenCopiesRule* any = nullptr;
  for (const EngineBehaviour::HiddenCopiesRule& r : e.activation_hidden_copies) {
    if (r.architecture_classes.empty()) {
      if (any == nullptr) any = &r;
      continue;
    }
    for (const std::string& c : r.architecture_classes) {
      if (c == a.architecture_class) return r.hidden_copies;
    }
  }
  return any != nullptr ? any->hidden_copies : 2;
}

// The fp16 down projection a GPTQ GEMM that dequantises the whole weight
// holds at the activation peak, per rank (0 where the rule does not apply).
double GptqDequantTempBytes(const ModelArchitecture& a, const Quantization& q,
                            const ParallelismSpec& p, const EngineBehaviour& e) {
  if (!e.gptq_gemm_dequantizes_weight || q.format != WeightFormat::kInt4Gptq) return 0.0;
  // The dense MLP's down projection; a model without dense MLP layers (its
  // intermediate_size may be unused) holds none of this shape.
  const bool dense_mlp = std::any_of(a.layers.begin(), a.layers.end(),
                                     [](const LayerSpec& l) { return l.mlp == MlpKind::kDense; });
  if (!dense_mlp) return 0.0;
  const int64_t tp = std::max<int64_t>(1, p.tp);
  return static_cast<double>(a.intermediate_size) / static_cast<double>(tp) *
         static_cast<double>(a.hidden_size) * 2.0;
}

// Largest per-token activation width (elements) of one forward pass on a
// rank: `hidden_copies` hidden-sized buffers (the residual and the normed
// input; a third where the model file keeps gate_up alive at down_proj's
// output) plus the widest of the attention projections and the MLP
// intermediate (gate+up, activation).
double ActivationWidth(const ModelArchitecture& a, const ParallelismSpec& p,
                       int64_t hidden_copies) {
  const int64_t attn_tp = AttentionTp(p);
  const int64_t tp = std::max<int64_t>(1, p.tp);
  const int64_t hd = a.EffectiveHeadDim();
  double attn = 0.0;
  double mlp = 0.0;
  for (const LayerSpec& l : a.layers) {
    double w = 0.0;
    switch (l.attention) {
      case AttentionKind::kFull:
      case AttentionKind::kSlidingWindow:
        w = 1.0 * a.num_attention_heads / attn_tp * hd * (a.gated_attention_output ? 3 : 2) +
            2.0 * KvHeadsPerRank(a, attn_tp) * hd;
        break;
      case AttentionKind::kMla:
        if (a.mla) {
          w = 1.0 * a.num_attention_heads / attn_tp *
                  (a.mla->qk_nope_head_dim + a.mla->qk_rope_head_dim + a.mla->v_head_dim) +
              a.mla->kv_lora_rank + a.mla->qk_rope_head_dim;
        }
        break;
      case AttentionKind::kLinear:
        if (a.linear_attention) {
          const auto& s = *a.linear_attention;
          w = (4.0 * s.num_key_heads * s.key_head_dim +
               3.0 * s.num_value_heads * s.value_head_dim) /
              attn_tp;
        }
        break;
      case AttentionKind::kMamba:
        if (a.mamba) w = 3.0 * a.mamba->num_heads * a.mamba->head_dim / attn_tp;
        break;
    }
    attn = std::max(attn, w);
    if (l.mlp == MlpKind::kDense) {
      mlp = std::max(mlp, 3.0 * a.intermediate_size / tp);
    } else if (a.moe) {
      const double k = static_cast<double>(a.moe->experts_per_token);
      mlp = std::max(mlp, k * (3.0 * a.moe->expert_intermediate_size / MoeTp(p) + a.hidden_size));
    }
  }
  return static_cast<double>(hidden_copies) * a.hidden_size + std::max(attn, mlp);
}

bool HighMemoryDefaults(const EngineBehaviour& e, const HardwareSpec& hw) {
  if (e.high_memory_threshold_bytes <= 0.0 || CudaTotalBytes(hw) < e.high_memory_threshold_bytes) {
    return false;
  }
  const std::string name = absl::AsciiStrToLower(hw.name);
  for (const std::string& x : e.high_memory_excluded_names) {
    if (absl::StrContains(name, absl::AsciiStrToLower(x))) return false;
  }
  return true;
}

}  // namespace

double CudaTotalBytes(const HardwareSpec& hardware) {
  return hardware.cuda_total_bytes > 0.0 ? hardware.cuda_total_bytes : hardware.memory_bytes;
}

double MaxConcurrencyAt(const KvLayout& l, int64_t sequence_tokens) {
  const int64_t bs = std::max<int64_t>(1, l.block_size);
  const int64_t tokens = std::max<int64_t>(1, sequence_tokens);
  const int64_t full = CeilDiv(tokens, bs);
  const int64_t per_request =
      l.full_groups * full + l.window_groups * std::min(l.window_blocks, full) + l.state_groups;
  double c = per_request > 0 ? static_cast<double>(l.blocks) / per_request : 0.0;
  if (l.state_slots.has_value()) c = std::min(c, static_cast<double>(*l.state_slots));
  if (l.window_pool_tokens.has_value()) {
    const int64_t window = l.window_tokens > 0 ? std::min(l.window_tokens, tokens) : tokens;
    c = std::min(c, static_cast<double>(*l.window_pool_tokens) / static_cast<double>(window));
  }
  return c;
}

double MaxConcurrencyAtSequence(const MemoryPlan& plan, int64_t sequence_tokens) {
  double slots = MaxConcurrencyAt(plan.layout, sequence_tokens);
  if (plan.max_num_seqs > 0) slots = std::min(slots, static_cast<double>(plan.max_num_seqs));
  if (plan.state_slots > 0) slots = std::min(slots, static_cast<double>(plan.state_slots));
  return slots;
}

EngineBehaviour ResolveForHardware(const EngineBehaviour& engine, const HardwareSpec& hw) {
  EngineBehaviour out = engine;
  out.moe_padding.clear();
  const std::string name = absl::AsciiStrToLower(hw.name);
  const std::string arch = absl::AsciiStrToLower(hw.architecture);
  for (const MoePaddingRule& r : engine.moe_padding) {
    bool taken = false;
    for (const MoePaddingRule& kept : out.moe_padding) taken |= kept.format == r.format;
    if (taken) continue;
    bool arch_ok = r.architectures.empty();
    for (const std::string& a : r.architectures) arch_ok |= absl::AsciiStrToLower(a) == arch;
    bool name_ok = r.device_names.empty();
    for (const std::string& n : r.device_names) {
      name_ok |= absl::StrContains(name, absl::AsciiStrToLower(n));
    }
    if (!arch_ok || !name_ok) continue;
    MoePaddingRule kept = r;
    kept.architectures.clear();
    kept.device_names.clear();
    out.moe_padding.push_back(std::move(kept));
  }
  return out;
}

const char* BindingConstraintName(BindingConstraint c) {
  switch (c) {
    case BindingConstraint::kNone:
      return "none";
    case BindingConstraint::kWeights:
      return "weights";
    case BindingConstraint::kKvPool:
      return "kv_pool";
    case BindingConstraint::kStateSlots:
      return "state_slots";
    case BindingConstraint::kMaxNumSeqs:
      return "max_num_seqs";
    case BindingConstraint::kActivations:
      return "activations";
    case BindingConstraint::kCudaGraphs:
      return "cuda_graphs";
    case BindingConstraint::kNonTorch:
      return "non_torch";
    case BindingConstraint::kOtherProcesses:
      return "other_processes";
  }
  return "none";
}

std::pair<int, int> PipelineStageLayers(int num_layers, int pp, int stage) {
  pp = std::max(1, pp);
  const int base = num_layers / pp;
  const int extra = num_layers % pp;  // the last `extra` stages take one more
  int first = 0;
  for (int s = 0; s < stage; ++s) first += base + (s >= pp - extra ? 1 : 0);
  const int count = base + (stage >= pp - extra ? 1 : 0);
  return {first, first + count};
}

namespace {

// The checks of ValidateMemoryPlanInput that involve the parallelism, the
// settings or the card (the architecture and quantization checked already).
absl::Status ValidateDeployment(const PlanView& in) {
  const ModelArchitecture& a = in.arch;
  const ParallelismSpec& p = in.parallelism;
  if (p.tp < 1) return Invalid("parallelism.tp", absl::StrCat(p.tp), "must be at least 1");
  if (p.pp < 1) return Invalid("parallelism.pp", absl::StrCat(p.pp), "must be at least 1");
  if (p.ep < 1) return Invalid("parallelism.ep", absl::StrCat(p.ep), "must be at least 1");
  if (p.dp < 1) return Invalid("parallelism.dp", absl::StrCat(p.dp), "must be at least 1");
  const int64_t attn_tp = AttentionTp(p);
  if (p.dp_attention && p.tp % p.dp != 0) {
    return Invalid("parallelism.dp", absl::StrCat(p.dp),
                   absl::StrCat("must divide tp = ", p.tp, " with dp_attention"));
  }
  if (a.num_attention_heads % attn_tp != 0) {
    return Invalid("parallelism.tp", absl::StrCat(p.tp),
                   absl::StrCat("must divide num_attention_heads = ", a.num_attention_heads));
  }
  if (a.num_kv_heads % attn_tp != 0 && attn_tp % a.num_kv_heads != 0) {
    return Invalid("parallelism.tp", absl::StrCat(p.tp),
                   absl::StrCat("must divide or be a multiple of num_kv_heads = ", a.num_kv_heads));
  }
  if (a.linear_attention && (a.linear_attention->num_key_heads % attn_tp != 0 ||
                             a.linear_attention->num_value_heads % attn_tp != 0)) {
    return Invalid(
        "parallelism.tp", absl::StrCat(p.tp),
        absl::StrCat("must divide the linear-attention heads (", a.linear_attention->num_key_heads,
                     " key, ", a.linear_attention->num_value_heads, " value)"));
  }
  if (p.pp > static_cast<int64_t>(a.layers.size())) {
    return Invalid("parallelism.pp", absl::StrCat(p.pp),
                   absl::StrCat("must not exceed the number of layers = ", a.layers.size()));
  }
  if (p.ep > 1) {
    if (!a.moe) {
      return Invalid("parallelism.ep", absl::StrCat(p.ep), "needs a mixture-of-experts model");
    }
    if (a.moe->num_routed_experts % p.ep != 0) {
      return Invalid("parallelism.ep", absl::StrCat(p.ep),
                     absl::StrCat("must divide num_routed_experts = ", a.moe->num_routed_experts));
    }
    if (p.ep > p.tp * p.dp || (p.tp % p.ep != 0 && p.ep % p.tp != 0)) {
      return Invalid("parallelism.ep", absl::StrCat(p.ep),
                     absl::StrCat("must divide tp = ", p.tp,
                                  " or be a multiple of it, up to tp × dp = ", p.tp * p.dp));
    }
  }
  const EngineSettings& s = in.settings;
  if (s.memory_fraction < 0.0 || s.memory_fraction > 1.0 || std::isnan(s.memory_fraction)) {
    return Invalid(in.engine.engine == EngineKind::kSglang ? "engine.mem_fraction_static"
                   : in.engine.engine == EngineKind::kTrtllm
                       ? "engine.kv_cache_free_gpu_memory_fraction"
                       : "engine.gpu_memory_utilization",
                   absl::StrCat(s.memory_fraction), "must be in (0, 1]");
  }
  if (s.max_model_len < 0) {
    return Invalid("engine.max_model_len", absl::StrCat(s.max_model_len), "must not be negative");
  }
  if (s.max_model_len > 0 && a.native_context_tokens > 0 &&
      s.max_model_len > ContextLimitTokens(a)) {
    return Invalid(
        "engine.max_model_len", absl::StrCat(s.max_model_len),
        absl::StrCat("must not exceed the model's context of ", ContextLimitTokens(a),
                     " tokens (max_position_embeddings",
                     a.rope_scaling_factor > 1 ? " with its rope scaling)" : ", no rope scaling)"));
  }
  if (s.max_num_batched_tokens < 0 || s.max_num_seqs < 0 || s.block_size < 0 ||
      s.num_speculative_tokens < 0 || s.max_cudagraph_batch_size < 0) {
    return absl::InvalidArgumentError(
        "engine: batching limits and block size must not be negative");
  }
  if (in.hardware.memory_bytes <= 0.0) {
    return Invalid("hardware.usable_memory_bytes", absl::StrCat(in.hardware.memory_bytes),
                   "must be positive");
  }
  const double free_at_start = s.free_memory_at_start_bytes;
  if (free_at_start < 0.0 || std::isnan(free_at_start) ||
      free_at_start > CudaTotalBytes(in.hardware)) {
    return Invalid("engine.free_memory_at_start_bytes", absl::StrFormat("%.0f", free_at_start),
                   absl::StrFormat("must be in [1, the card's total of %.0f bytes]",
                                   CudaTotalBytes(in.hardware)));
  }
  return absl::OkStatus();
}

// Weights one GPU of stage `stage` holds, by component, summed over the
// tallied shapes (each shape's bytes times the stage's layers holding it).
std::array<double, kNumComponents> TalliedWeights(const std::vector<WeightTally>& tallies,
                                                  const ModelArchitecture& a, const Quantization& q,
                                                  const ParallelismSpec& p,
                                                  const EngineBehaviour& e, int stage) {
  std::array<double, kNumComponents> out{};
  const int n = static_cast<int>(a.layers.size());
  const int pp = static_cast<int>(std::max<int64_t>(1, p.pp));
  const auto [first, last] = PipelineStageLayers(n, pp, stage);
  const bool last_stage = stage == pp - 1;
  for (const WeightTally& t : tallies) {
    int64_t count = 0;
    if (t.unlayered > 0) {
      count = TensorOnStage(t.tensor, first, last, stage == 0, last_stage, n) ? t.unlayered : 0;
    } else {
      // MTP / draft layers (index >= n) sit on the last stage, whose range ends at n.
      const auto lo = std::lower_bound(t.layers.begin(), t.layers.end(), first);
      const auto hi =
          last_stage ? t.layers.end() : std::lower_bound(t.layers.begin(), t.layers.end(), last);
      count = hi - lo;
    }
    if (count == 0) continue;
    const double bytes = TensorBytesPerGpu(a, q, p, e, t.tensor);
    out[static_cast<int>(t.tensor.component)] +=
        static_cast<double>(count) * (bytes + AllocatorTailBytes(e, t.tensor, bytes));
  }
  return out;
}

}  // namespace

absl::Status ValidateMemoryPlanInput(const MemoryPlanInput& in) {
  if (absl::Status s = ValidateArchitecture(in.arch); !s.ok()) return s;
  if (absl::Status s = ValidateQuantization(in.quantization); !s.ok()) return s;
  return ValidateDeployment(ViewOf(in));
}

std::vector<WeightTally> TallyWeightTensors(const ModelArchitecture& arch) {
  // Tensors alike in everything that sets their bytes and their stage share
  // a tally, whatever their names.
  using Key = std::tuple<Component, int64_t, int64_t, int64_t, Sharding, bool, bool>;
  std::vector<WeightTally> out;
  absl::flat_hash_map<Key, size_t> index;
  index.reserve(64);
  for (const TensorGroup& t : EnumerateTensors(arch)) {
    const Key key{t.component, t.out_features, t.in_features,      t.copies,
                  t.sharding,  t.quantizable,  t.layer.has_value()};
    auto [it, inserted] = index.try_emplace(key, out.size());
    if (inserted) out.push_back(WeightTally{t, {}, 0});
    WeightTally& tally = out[it->second];
    if (t.layer.has_value()) {
      tally.layers.push_back(*t.layer);
    } else {
      ++tally.unlayered;
    }
  }
  for (WeightTally& t : out) std::sort(t.layers.begin(), t.layers.end());
  return out;
}

std::array<double, kNumComponents> WeightsPerGpuByComponent(const ModelArchitecture& a,
                                                            const Quantization& q,
                                                            const ParallelismSpec& p,
                                                            const EngineBehaviour& e, int stage) {
  return TalliedWeights(TallyWeightTensors(a), a, q, p, e, stage);
}

double KvBytesPerTokenPerGpu(const ModelArchitecture& a, const ParallelismSpec& p,
                             double kv_element_bytes, int first, int last) {
  const int64_t kv_rank = KvHeadsPerRank(a, AttentionTp(p));
  double bytes = 0.0;
  for (int i = first; i < last; ++i) {
    bytes += LayerKvBytesPerToken(a, a.layers[i].attention, kv_rank, kv_element_bytes);
  }
  return bytes;
}

namespace {

// The first tier whose card limit exceeds `card_bytes` (0 = any card).
template <typename Tier>
const Tier* TierFor(const std::vector<Tier>& tiers, double card_bytes) {
  const Tier* open_ended = nullptr;
  const Tier* best = nullptr;
  for (const Tier& t : tiers) {
    if (t.below_card_bytes <= 0.0) {
      open_ended = &t;
    } else if (card_bytes < t.below_card_bytes &&
               (best == nullptr || t.below_card_bytes < best->below_card_bytes)) {
      best = &t;
    }
  }
  return best != nullptr ? best : open_ended;
}

double LadderFraction(const EngineBehaviour& e, const ParallelismSpec& p) {
  for (const auto& [min_tp, fraction] : e.memory_fraction_by_min_tp) {
    if (p.tp >= min_tp) return fraction;
  }
  return e.default_memory_fraction;
}

double RoundToThousandths(double x) { return std::round(x * 1000.0) / 1000.0; }

// SGLang's default mem_fraction_static: round((card − reserve) / card, 3)
// with the batching reserve (0.5.3+) or the card tier's reserve; the TP
// ladder where neither applies (server_args.py, by version: see the presets).
double DefaultMemoryFraction(const PlanView& in, const MemoryPlan& knobs) {
  const EngineBehaviour& e = in.engine;
  const ParallelismSpec& p = in.parallelism;
  const double card = in.hardware.memory_bytes;
  const double tp_pp = static_cast<double>(p.tp * p.pp);
  const bool dp_attention = p.dp_attention && p.dp > 1;
  const SpeculativeMethod spec = in.settings.speculative_method;
  const bool speculative = spec != SpeculativeMethod::kNone;
  if (e.has_batching_reserve && card > 0.0) {
    const BatchingReserve& r = e.batching_reserve;
    const double bs = static_cast<double>(knobs.cuda_graph_max_bs);
    double reserved =
        r.base_bytes +
        r.per_chunk_token_bytes *
            static_cast<double>(std::max(knobs.max_num_batched_tokens, r.min_chunk_tokens)) +
        r.per_graph_bs_bytes * bs + r.per_tp_pp_bytes * tp_pp;
    if (dp_attention) {
      reserved += r.per_graph_bs_dp_bytes * bs * static_cast<double>(p.dp) * (bs > 300 ? 1.5 : 1.0);
    }
    if (r.floor_above_card_bytes > 0.0 && card > r.floor_above_card_bytes) {
      reserved = std::max(reserved, r.floor_bytes);
    }
    if (spec == SpeculativeMethod::kDraftModel) reserved += r.speculative_standalone_bytes;
    if (spec == SpeculativeMethod::kEagle || spec == SpeculativeMethod::kMtp) {
      reserved += r.speculative_eagle_bytes;
    }
    return RoundToThousandths((card - reserved) / card);
  }
  const MemoryReserveTier* tier = TierFor(e.memory_reserve_tiers, card);
  if (tier == nullptr || tier->use_tp_ladder || card <= 0.0) return LadderFraction(e, p);
  const double reserved = tier->reserved_bytes + tier->reserved_bytes_per_tp_pp * tp_pp +
                          (dp_attention ? tier->dp_attention_extra_bytes : 0.0) +
                          (speculative ? tier->speculative_extra_bytes : 0.0);
  return RoundToThousandths((card - reserved) / card);
}

// TensorRT-LLM PyTorch backend: the temporary pool of the profiling pass holds
// the dummy context requests that fill max_num_tokens (each at most
// max_seq_len tokens, plus one), and from 1.1 a block per batch slot.
int64_t ProfilePoolTokens(const EngineBehaviour& e, const MemoryPlan& k) {
  if (e.budget_rule != BudgetRule::kTrtllmFreeFraction) return 0;
  const int64_t bs = std::max<int64_t>(1, k.block_size);
  const int64_t per_request_tokens = std::min(k.max_num_batched_tokens, k.max_model_len);
  const int64_t requests = CeilDiv(k.max_num_batched_tokens, std::max<int64_t>(1, k.max_model_len));
  int64_t blocks = requests * CeilDiv(per_request_tokens + 1, bs);
  if (e.profile_pool_block_per_batch_slot) blocks = std::max(blocks, k.max_num_seqs);
  return blocks * bs;
}

// The engine knobs of `in` resolved against the engine's defaults.
absl::StatusOr<MemoryPlan> ResolveKnobs(const PlanView& in, bool high_mem) {
  const ModelArchitecture& a = in.arch;
  const EngineBehaviour& e = in.engine;
  const EngineSettings& s = in.settings;
  const ParallelismSpec& p = in.parallelism;
  MemoryPlan base;
  base.max_model_len = s.max_model_len > 0 ? s.max_model_len : a.native_context_tokens;
  if (base.max_model_len <= 0) {
    return Invalid("engine.max_model_len", "0",
                   "must be set when the model has no native context length");
  }
  const CardDefaultTier* card = TierFor(e.card_default_tiers, in.hardware.memory_bytes);
  base.max_num_seqs = s.max_num_seqs > 0
                          ? s.max_num_seqs
                          : (high_mem && e.high_memory_max_num_seqs > 0 ? e.high_memory_max_num_seqs
                                                                        : e.default_max_num_seqs);
  const bool chunked = s.enable_chunked_prefill.value_or(
      e.chunked_prefill_default ||
      (e.chunked_prefill_auto_above_max_model_len > 0 &&
       base.max_model_len > e.chunked_prefill_auto_above_max_model_len));
  if (s.max_num_batched_tokens > 0) {
    base.max_num_batched_tokens = s.max_num_batched_tokens;
  } else if (chunked) {
    base.max_num_batched_tokens = high_mem && e.high_memory_max_num_batched_tokens > 0
                                      ? e.high_memory_max_num_batched_tokens
                                      : e.default_max_num_batched_tokens;
    if (card != nullptr && card->chunked_prefill_tokens > 0) {
      base.max_num_batched_tokens = card->chunked_prefill_tokens;
    }
    if (e.dp_attention_divides_chunked_prefill && p.dp_attention && p.dp > 1) {
      base.max_num_batched_tokens = std::max<int64_t>(1, base.max_num_batched_tokens / p.dp);
    }
  } else {
    base.max_num_batched_tokens = std::max(base.max_model_len, e.unchunked_min_batched_tokens);
  }
  base.profiled_tokens = base.max_num_batched_tokens;
  if (s.max_cudagraph_batch_size > 0) {
    base.cuda_graph_max_bs = s.max_cudagraph_batch_size;
  } else if (card != nullptr && card->cuda_graph_max_bs > 0) {
    base.cuda_graph_max_bs = p.tp >= 4 && card->cuda_graph_max_bs_tp4 > 0
                                 ? card->cuda_graph_max_bs_tp4
                                 : card->cuda_graph_max_bs;
  } else {
    base.cuda_graph_max_bs = std::min(e.cudagraph_max_capture_size, base.max_num_seqs);
  }
  base.memory_fraction =
      s.memory_fraction > 0.0 ? s.memory_fraction : DefaultMemoryFraction(in, base);
  base.block_size = s.block_size > 0 ? s.block_size : e.default_block_size;
  if (base.block_size <= 0) base.block_size = 1;
  base.profile_pool_tokens = ProfilePoolTokens(e, base);
  return base;
}

// Batch sizes captured: 1, 2, 4 and the multiples of 8 up to the limit.
int64_t CudaGraphCaptures(const EngineSettings& s, int64_t cuda_graph_max_bs) {
  if (s.enforce_eager) return 0;
  const int64_t cap = cuda_graph_max_bs;
  return std::min<int64_t>(cap, 3) + (cap >= 8 ? cap / 8 : 0);
}

// The pool is the driver rank's: the engine keeps the smallest over its
// workers and the driver holds more non-torch memory.
bool DriverRankBinds(const EngineBehaviour& e, const ParallelismSpec& p) {
  return e.kv_pool_min_over_ranks && p.tp * p.pp > 1;
}

// The distributed set-up costs one flat amount (the preset's rule: on a fast
// link, or on every link; with more than one GPU) instead of an amount per
// extra rank.
bool FlatMultiGpuTerm(const EngineBehaviour& e, const HardwareSpec& h, const ParallelismSpec& p) {
  const bool rule =
      e.non_torch_flat_on_every_link || (e.non_torch_flat_on_fast_link && h.fast_intra_node_link);
  return rule && p.tp * p.pp > 1;
}

}  // namespace

double MultimodalProfileHoldBytes(const ModelArchitecture& arch, const EngineBehaviour& engine,
                                  int64_t profiled_tokens) {
  if (!engine.mm_profile_pads_encoder_cache || !arch.vision_encoder.has_value()) return 0.0;
  const VisionEncoderSpec& v = *arch.vision_encoder;
  if (v.max_item_embedding_tokens <= 0 || v.max_item_placeholder_tokens <= 0) return 0.0;
  const double element_bytes = arch.native_dtype == NumberType::kFp32 ? 4.0 : 2.0;
  const double budget =
      static_cast<double>(std::max<int64_t>(profiled_tokens, v.max_item_placeholder_tokens));
  const double items = std::max(1.0, std::floor(budget / v.max_item_placeholder_tokens));
  const double width = static_cast<double>(v.out_hidden_size) * (1 + v.deepstack_mergers);
  const double rows = static_cast<double>(v.max_item_embedding_tokens);
  const double patch_elements =
      static_cast<double>(v.in_channels) * v.temporal_patch_size * v.patch_size * v.patch_size;
  const double pixels = rows * v.spatial_merge_size * v.spatial_merge_size * patch_elements;
  return (items * budget * width + rows * width + pixels) * element_bytes;
}

bool UsesNativeSamplerGroup(const EngineBehaviour& e, const EngineSettings& settings) {
  return settings.native_sampler && !e.native_sampler_fit_group.empty();
}

absl::StatusOr<OverheadTerms> ComputeOverheadTerms(const MemoryPlanInput& in) {
  if (absl::Status s = ValidateMemoryPlanInput(in); !s.ok()) return s;
  absl::StatusOr<MemoryPlan> knobs =
      ResolveKnobs(ViewOf(in), HighMemoryDefaults(in.engine, in.hardware));
  if (!knobs.ok()) return knobs.status();
  const double act_bytes = in.arch.native_dtype == NumberType::kFp32 ? 4.0 : 2.0;
  OverheadTerms t;
  t.token_phase_bytes =
      knobs->profiled_tokens *
          ActivationWidth(in.arch, in.parallelism, ActivationHiddenCopiesFor(in.engine, in.arch)) *
          act_bytes +
      GptqDequantTempBytes(in.arch, in.quantization, in.parallelism, in.engine);
  t.sampler_phase_bytes = knobs->max_num_seqs * static_cast<double>(in.arch.vocab_size) * 4.0;
  const bool flat = FlatMultiGpuTerm(in.engine, in.hardware, in.parallelism);
  t.extra_ranks = flat ? 0.0 : static_cast<double>(in.parallelism.tp * in.parallelism.pp - 1);
  t.fast_link_multi_gpu = flat ? 1.0 : 0.0;
  const auto [first, last] = PipelineStageLayers(static_cast<int>(in.arch.layers.size()),
                                                 static_cast<int>(in.parallelism.pp), 0);
  t.capture_layers = static_cast<double>(CudaGraphCaptures(in.settings, knobs->cuda_graph_max_bs)) *
                     (last - first);
  t.unified = in.hardware.unified_memory ? 1.0 : 0.0;
  t.rocm = in.hardware.rocm ? 1.0 : 0.0;
  t.driver_rank = DriverRankBinds(in.engine, in.parallelism) ? 1.0 : 0.0;
  t.fixed_bytes = MultimodalProfileHoldBytes(in.arch, in.engine, knobs->profiled_tokens);
  return t;
}

absl::StatusOr<double> FitProportional(const std::vector<double>& x, const std::vector<double>& y) {
  if (x.size() != y.size() || x.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("FitProportional: ", x.size(), " x values, ",
                                                   y.size(),
                                                   " y values; need equal, non-zero counts"));
  }
  Eigen::MatrixXd a(x.size(), 1);
  Eigen::VectorXd b(y.size());
  for (size_t i = 0; i < x.size(); ++i) {
    if (!std::isfinite(x[i]) || !std::isfinite(y[i])) {
      return absl::InvalidArgumentError(
          absl::StrCat("FitProportional: observation ", i, " is not finite"));
    }
    a(i, 0) = x[i];
    b(i) = y[i];
  }
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(a);
  if (cod.rank() < 1) return absl::InvalidArgumentError("FitProportional: every x is zero");
  return cod.solve(b)(0);
}

namespace {

// The observation's sampler group; nullopt where the header's -1 says no
// sampler phase applies.
std::optional<int> SamplerGroupOf(const OverheadObservation& o) {
  if (o.sampler_group < 0) return std::nullopt;
  return o.sampler_group;
}

absl::Status CheckSamplerGroups(const std::vector<OverheadObservation>& obs, int groups) {
  for (size_t i = 0; i < obs.size(); ++i) {
    if (obs[i].sampler_group >= groups) {
      return absl::InvalidArgumentError(absl::StrCat("FitOverhead: observation ", i,
                                                     " has sampler_group ", obs[i].sampler_group));
    }
  }
  return absl::OkStatus();
}

// The forward pass dominates at first where it alone explains at least half
// the observed overhead, and wherever no sampler phase applies.
std::vector<bool> InitialTokenDominance(const std::vector<OverheadObservation>& obs,
                                        const OverheadFitOptions& opt) {
  std::vector<bool> token_dominates(obs.size(), false);
  for (size_t i = 0; i < obs.size(); ++i) {
    token_dominates[i] =
        !SamplerGroupOf(obs[i]).has_value() ||
        opt.activation_token_scale * obs[i].terms.token_phase_bytes >= 0.5 * obs[i].overhead_bytes;
  }
  return token_dominates;
}

// One iteration's linear system. Columns: sampler copies per group, base, per
// extra rank. Where the forward pass dominates, its fixed term moves to the
// left-hand side; elsewhere the sampler phase enters its group's column.
// Pinned columns stay zero.
struct OverheadSystem {
  Eigen::MatrixXd design;
  Eigen::VectorXd overhead_bytes;
};

OverheadSystem BuildOverheadSystem(const std::vector<OverheadObservation>& obs,
                                   const OverheadFitOptions& opt, int groups, int cols,
                                   const std::vector<bool>& token_dominates,
                                   const std::vector<bool>& pinned) {
  OverheadSystem sys{Eigen::MatrixXd::Zero(obs.size(), cols), Eigen::VectorXd(obs.size())};
  for (size_t i = 0; i < obs.size(); ++i) {
    const OverheadObservation& o = obs[i];
    sys.overhead_bytes(i) = o.overhead_bytes;
    if (token_dominates[i]) {
      sys.overhead_bytes(i) -= opt.activation_token_scale * o.terms.token_phase_bytes;
    } else if (!pinned[o.sampler_group]) {
      sys.design(i, o.sampler_group) = o.terms.sampler_phase_bytes;
    }
    if (!pinned[groups]) sys.design(i, groups) = 1.0;
    if (opt.fit_per_rank && !pinned[groups + 1]) sys.design(i, groups + 1) = o.terms.extra_ranks;
  }
  return sys;
}

// Least squares through the complete orthogonal decomposition; returns its
// numerical rank. Pinned columns come back exactly zero.
int SolveOverheadSystem(const OverheadSystem& sys, const std::vector<bool>& pinned,
                        Eigen::VectorXd& theta) {
  Eigen::CompleteOrthogonalDecomposition<Eigen::MatrixXd> cod(sys.design);
  theta = cod.solve(sys.overhead_bytes);
  for (int c = 0; c < static_cast<int>(pinned.size()); ++c) {
    if (pinned[c]) theta(c) = 0.0;
  }
  return static_cast<int>(cod.rank());
}

// Re-assigns the dominating phase of each observation with a sampler phase
// under the new coefficients; true when any assignment changed.
bool ReassignDominance(const std::vector<OverheadObservation>& obs, const OverheadFitOptions& opt,
                       const Eigen::VectorXd& theta, std::vector<bool>& token_dominates) {
  bool changed = false;
  for (size_t i = 0; i < obs.size(); ++i) {
    const OverheadObservation& o = obs[i];
    const std::optional<int> group = SamplerGroupOf(o);
    if (!group.has_value()) continue;
    const double token_bytes = opt.activation_token_scale * o.terms.token_phase_bytes;
    const double sampler_bytes = std::max(0.0, theta(*group)) * o.terms.sampler_phase_bytes;
    const bool dominates = token_bytes > sampler_bytes;
    if (dominates != token_dominates[i]) {
      token_dominates[i] = dominates;
      changed = true;
    }
  }
  return changed;
}

// Pins the negative coefficients at zero; true when a column was newly pinned.
bool PinNegativeColumns(const Eigen::VectorXd& theta, std::vector<bool>& pinned) {
  bool changed = false;
  for (int c = 0; c < static_cast<int>(pinned.size()); ++c) {
    if (theta(c) < 0.0 && !pinned[c]) {
      pinned[c] = true;
      changed = true;
    }
  }
  return changed;
}

// Root-mean-square misfit of the fitted max(token, sampler) + b + r · R.
double OverheadRmsResidualBytes(const std::vector<OverheadObservation>& obs,
                                const OverheadFitOptions& opt, const OverheadFit& fit) {
  double sq = 0.0;
  for (const OverheadObservation& o : obs) {
    const std::optional<int> group = SamplerGroupOf(o);
    const double token_bytes = opt.activation_token_scale * o.terms.token_phase_bytes;
    const double sampler_bytes =
        group.has_value() ? fit.sampler_logit_copies[*group] * o.terms.sampler_phase_bytes : 0.0;
    const double pred_bytes = std::max(token_bytes, sampler_bytes) + fit.non_torch_base_bytes +
                              fit.non_torch_per_extra_rank_bytes * o.terms.extra_ranks;
    sq += (pred_bytes - o.overhead_bytes) * (pred_bytes - o.overhead_bytes);
  }
  return std::sqrt(sq / obs.size());
}

}  // namespace

absl::StatusOr<OverheadFit> FitOverhead(const std::vector<OverheadObservation>& obs,
                                        const OverheadFitOptions& opt) {
  if (obs.empty()) return absl::InvalidArgumentError("FitOverhead: no observations");
  const int g = std::max(0, opt.num_sampler_groups);
  if (absl::Status s = CheckSamplerGroups(obs, g); !s.ok()) return s;
  const int cols = g + 1 + (opt.fit_per_rank ? 1 : 0);
  std::vector<bool> pinned(cols, false);
  std::vector<bool> token_dominates = InitialTokenDominance(obs, opt);
  Eigen::VectorXd theta = Eigen::VectorXd::Zero(cols);
  int rank = 0;
  constexpr int kIterations = 20;
  for (int iter = 0; iter < kIterations; ++iter) {
    const OverheadSystem sys = BuildOverheadSystem(obs, opt, g, cols, token_dominates, pinned);
    if (!sys.design.allFinite() || !sys.overhead_bytes.allFinite()) {
      return absl::InvalidArgumentError("FitOverhead: non-finite observation");
    }
    rank = SolveOverheadSystem(sys, pinned, theta);
    // Only once the assignment of phases is stable are negative coefficients pinned.
    const bool changed =
        ReassignDominance(obs, opt, theta, token_dominates) || PinNegativeColumns(theta, pinned);
    if (!changed) break;
  }
  for (int c = 0; c < cols; ++c) theta(c) = std::max(0.0, theta(c));
  OverheadFit fit;
  fit.rank = rank;
  for (int k = 0; k < g; ++k) fit.sampler_logit_copies.push_back(theta(k));
  fit.non_torch_base_bytes = theta(g);
  fit.non_torch_per_extra_rank_bytes = opt.fit_per_rank ? theta(g + 1) : 0.0;
  fit.rms_residual_bytes = OverheadRmsResidualBytes(obs, opt, fit);
  return fit;
}

namespace {

// What every pipeline stage shares: the engine resolved for the card, the
// architecture as loaded, and the overheads that are the same on every GPU.
struct SharedAccount {
  const EngineBehaviour* engine = nullptr;  // resolved for the card
  // The weight tensors with the MTP layers speculative decoding loads (none
  // otherwise).
  const std::vector<WeightTally>* tallies = nullptr;
  int64_t sliding_window_tokens = 0;
  bool sglang_budget = false;      // BudgetRule::kSglangStatic
  bool trtllm_budget = false;      // BudgetRule::kTrtllmFreeFraction or kTrtllmEngineFree
  bool max_num_seqs_set = false;   // the deployment states max_num_seqs
  int64_t dp_attention_ranks = 1;  // dp under DP attention
  double kv_element_bytes = 0.0;
  int64_t attention_tp = 1;
  int64_t kv_heads_per_rank = 1;
  double activation_peak_bytes = 0.0;
  double non_torch_bytes = 0.0;
  int64_t cuda_graph_captures = 0;
  double free_memory_at_start_bytes = 0.0;  // stated; 0 = unknown
  // Memory the stated free memory says someone else holds: the card's total
  // less the free memory (for SGLang also less its own non-torch memory,
  // taken before it measures); 0 when none is stated.
  double other_processes_bytes = 0.0;
};

// Speculative decoding loads the MTP layers (one assumed when the model has
// none). An EAGLE head is the same module as one MTP layer: a 2h -> h
// projection of [embedding; feature] and one decoder layer of the target's
// shape, sharing the target's embedding and LM head (vLLM's llama_eagle.py,
// EAGLE-1); it is loaded as the MTP layers are (a model that has several
// MTP layers is counted with all of them). A separate draft model is not
// modelled. The notes say so.
ModelArchitecture LoadedArchitecture(const ModelArchitecture& arch, bool mtp) {
  ModelArchitecture loaded = arch;
  loaded.num_mtp_layers = mtp ? std::max<int64_t>(1, arch.num_mtp_layers) : 0;
  return loaded;
}

// The notes on what LoadedArchitecture assumes.
void AddDraftNotes(const PlanView& in, std::vector<std::string>& notes) {
  const SpeculativeMethod method = in.settings.speculative_method;
  if (method == SpeculativeMethod::kMtp && in.arch.num_mtp_layers == 0) {
    notes.push_back("speculative MTP on a model without MTP layers: one draft layer assumed");
  }
  if (method == SpeculativeMethod::kEagle) {
    notes.push_back(
        "EAGLE head weights: one decoder layer of the target's shape and its 2h->h projection "
        "(EAGLE-1 layout)");
  }
  if (method == SpeculativeMethod::kDraftModel) {
    notes.push_back("draft model weights are not modelled; only the draft layer's KV is");
  }
}

// What a plan takes from its preparation: the engine resolved for the card,
// its large-card defaults, and the weight tensors as loaded for the settings.
struct PreparedParts {
  const EngineBehaviour* engine = nullptr;
  bool high_memory = false;
  const std::vector<WeightTally>* tallies = nullptr;
};

// The notes on a stated free memory at start: how each engine's rule uses
// it, and the memory it says other processes hold.
void AddFreeMemoryNotes(const PlanView& in, const SharedAccount& s, MemoryPlan& knobs) {
  const EngineBehaviour& e = *s.engine;
  const double gib = s.free_memory_at_start_bytes / kGiB;
  if (s.sglang_budget) {
    knobs.notes.push_back(absl::StrFormat(
        "SGLang budget: mem_fraction_static of the %.2f GiB stated free at start (not the "
        "card's total less the engine's context)",
        gib));
  } else if (e.engine == EngineKind::kVllm) {
    const double requested = knobs.memory_fraction * CudaTotalBytes(in.hardware);
    if (requested > s.free_memory_at_start_bytes) {
      knobs.notes.push_back(absl::StrFormat(
          "vLLM asks for gpu_memory_utilization x total = %.2f GiB but %.2f GiB is free at "
          "start: V1 refuses to start (\"Free memory on device ... is less than desired GPU "
          "memory utilization\"); older releases size the pool anyway",
          requested / kGiB, gib));
    } else {
      knobs.notes.push_back(absl::StrFormat(
          "%.2f GiB free at start covers vLLM's gpu_memory_utilization x total (%.2f GiB)", gib,
          requested / kGiB));
    }
  }
  if (s.other_processes_bytes <= 0.0) return;
  const std::string held =
      s.sglang_budget
          ? absl::StrFormat("the card's total less the %.2f GiB stated free and SGLang's own "
                            "%.2f GiB taken before it measures",
                            gib, s.non_torch_bytes / kGiB)
          : absl::StrFormat("the card's total less the %.2f GiB stated free", gib);
  std::string effect;
  if (s.sglang_budget) {
    effect = "SGLang's fraction of the free memory already leaves it out";
  } else if (e.pool_lowered_by_other_processes) {
    effect = s.trtllm_budget
                 ? "this engine takes its fraction of the device's free memory, so the pool "
                   "loses that fraction of it"
                 : "this engine sizes its pool from the device's free memory, so the pool loses "
                   "all of it";
  } else {
    effect = "this engine measures its own growth, so its pool does not depend on it";
  }
  knobs.notes.push_back(absl::StrFormat(
      "%.2f GiB held outside this engine (%s): %s; the whole account must fit in the rest",
      s.other_processes_bytes / kGiB, held, effect));
}

// Resolves what the stages share from the input and its resolved knobs;
// the notes on draft layers go to `knobs`. The activation peak is the larger
// of the profiled forward pass and the sampler's fp32 logits.
SharedAccount PrepareSharedAccount(const PlanView& in, const PreparedParts& parts,
                                   MemoryPlan& knobs) {
  const ModelArchitecture& a = in.arch;
  const ParallelismSpec& p = in.parallelism;
  SharedAccount s;
  s.engine = parts.engine;
  const EngineBehaviour& e = *s.engine;
  s.tallies = parts.tallies;
  s.sliding_window_tokens = a.sliding_window_tokens;
  AddDraftNotes(in, knobs.notes);
  s.sglang_budget = e.budget_rule == BudgetRule::kSglangStatic;
  s.trtllm_budget = e.budget_rule == BudgetRule::kTrtllmFreeFraction ||
                    e.budget_rule == BudgetRule::kTrtllmEngineFree;
  s.max_num_seqs_set = in.settings.max_num_seqs > 0;
  s.free_memory_at_start_bytes = in.settings.free_memory_at_start_bytes;
  s.dp_attention_ranks = p.dp_attention ? std::max<int64_t>(1, p.dp) : 1;
  const NumberType activation_dtype =
      a.native_dtype == NumberType::kFp32 ? NumberType::kBf16 : a.native_dtype;
  s.kv_element_bytes = BytesPerElement(in.settings.kv_cache_dtype.value_or(
      in.quantization.kv_cache_dtype.value_or(activation_dtype)));
  if (!in.settings.kv_cache_dtype.has_value() && in.quantization.kv_cache_dtype.has_value() &&
      *in.quantization.kv_cache_dtype != activation_dtype) {
    knobs.notes.push_back(absl::StrFormat(
        "KV cache in %d-byte elements as the checkpoint's quantization config states "
        "(kv_cache_dtype auto)",
        static_cast<int>(BytesPerElement(*in.quantization.kv_cache_dtype))));
  }
  s.attention_tp = AttentionTp(p);
  s.kv_heads_per_rank = KvHeadsPerRank(a, s.attention_tp);
  const double activation_element_bytes = a.native_dtype == NumberType::kFp32 ? 4.0 : 2.0;
  const double gptq_temp_bytes = GptqDequantTempBytes(a, in.quantization, p, e);
  const double token_phase_bytes =
      e.activation_token_scale *
      (knobs.profiled_tokens * ActivationWidth(a, p, ActivationHiddenCopiesFor(e, a)) *
           activation_element_bytes +
       gptq_temp_bytes);
  if (gptq_temp_bytes > 0) {
    knobs.notes.push_back(absl::StrFormat(
        "GPTQ GEMM dequantises each weight in fp16 on large batches: %.2f GiB (the down "
        "projection) held at the activation peak",
        gptq_temp_bytes / (1024.0 * 1024.0 * 1024.0)));
  }
  const double logit_bytes = knobs.max_num_seqs * static_cast<double>(a.vocab_size) * 4.0;
  const bool native = UsesNativeSamplerGroup(e, in.settings);
  const double sampler_phase_bytes =
      (native ? e.native_sampler_logit_copies : e.sampler_logit_copies) * logit_bytes;
  if (native) {
    knobs.notes.push_back(absl::StrFormat(
        "dummy sampler on the PyTorch-native top-k/top-p (no FlashInfer): %.2f fp32 copies of "
        "the [%d, %d] logits",
        e.native_sampler_logit_copies, knobs.max_num_seqs, a.vocab_size));
    // PyTorch sorts fewer than 128 rows by another path (one radix sort of
    // the whole input with int2 keys) whose scratch was not counted.
    if (e.native_sampler_logit_copies_exact && knobs.max_num_seqs < 128) {
      knobs.notes.push_back(absl::StrFormat(
          "the native sampler's count is read for 128 or more rows; with %d PyTorch sorts by "
          "another path (segmented_sort_pairs_by_full_sort) whose scratch is not counted: "
          "its peak may be a few copies higher",
          knobs.max_num_seqs));
    }
  }
  s.activation_peak_bytes = std::max(token_phase_bytes, sampler_phase_bytes);
  if (const double hold = MultimodalProfileHoldBytes(a, e, knobs.profiled_tokens); hold > 0) {
    s.activation_peak_bytes += hold;
    knobs.notes.push_back(absl::StrFormat(
        "multimodal profile: %.2f GiB of dummy encoder outputs (padded to the encoder budget) "
        "held through the dummy forward and sampler",
        hold / (1024.0 * 1024.0 * 1024.0)));
  }
  const double extra_ranks = static_cast<double>(std::max<int64_t>(0, p.tp * p.pp - 1));
  const bool flat = FlatMultiGpuTerm(e, in.hardware, p);
  s.non_torch_bytes = e.non_torch_base_bytes +
                      (flat ? e.fast_link_multi_gpu_non_torch_bytes
                            : e.non_torch_per_extra_rank_bytes * extra_ranks) +
                      (in.hardware.unified_memory ? e.unified_memory_non_torch_bytes : 0.0) +
                      (in.hardware.rocm ? e.rocm_non_torch_bytes : 0.0) +
                      (DriverRankBinds(e, p) ? e.driver_rank_extra_non_torch_bytes : 0.0) +
                      e.decoder_logit_copies * logit_bytes;
  s.cuda_graph_captures = CudaGraphCaptures(in.settings, knobs.cuda_graph_max_bs);
  if (s.free_memory_at_start_bytes > 0) {
    // SGLang's figure is its own, taken after its CUDA context and NCCL set-up
    // (its non-torch memory); another engine's is what the card shows free
    // before the engine starts.
    const double engine_at_start_bytes = s.sglang_budget ? s.non_torch_bytes : 0.0;
    s.other_processes_bytes = std::max(
        0.0, CudaTotalBytes(in.hardware) - engine_at_start_bytes - s.free_memory_at_start_bytes);
    AddFreeMemoryNotes(in, s, knobs);
  } else if (in.hardware.unified_memory) {
    // One memory for CPU and GPU: what the OS, its page cache and other
    // processes hold is not the card's to give, and nothing here knows it.
    const bool from_free = s.sglang_budget || e.pool_lowered_by_other_processes;
    knobs.notes.push_back(absl::StrCat(
        "unified memory: the operating system, its page cache and other processes share the "
        "card's memory; planned as if they held none. ",
        from_free ? "This engine sizes its pool from the memory free when it starts, so the "
                    "pool loses what they hold"
                  : "This engine takes its share of the total, which must still be free when "
                    "it starts",
        ": state what is free with --free-memory-gib (free_memory_at_start_bytes)"));
  }
  if (DriverRankBinds(e, p)) {
    knobs.notes.push_back(
        "the engine keeps the smallest pool over its workers: the driver rank's, which holds "
        "more non-torch memory");
  }
  return s;
}

// The layers one stage keeps in its pools, by how a pool holds them.
struct StageLayers {
  int64_t full_layers = 0;    // full attention and MLA: KV per token
  int64_t window_layers = 0;  // sliding window: KV per token, up to the window
  int64_t state_layers = 0;   // linear attention / Mamba: a state per request
  double full_bytes_per_token = 0.0;
  double window_bytes_per_token = 0.0;
  double state_bytes_per_request = 0.0;
};

StageLayers CountStageLayers(const PlanView& in, const SharedAccount& s, int first, int last,
                             bool last_stage) {
  StageLayers out;
  for (AttentionKind k : StageAttentionLayers(in, first, last, last_stage)) {
    const double kv_bytes_per_token =
        LayerKvBytesPerToken(in.arch, k, s.kv_heads_per_rank, s.kv_element_bytes);
    if (k == AttentionKind::kSlidingWindow) {
      ++out.window_layers;
      out.window_bytes_per_token += kv_bytes_per_token;
    } else if (k == AttentionKind::kFull || k == AttentionKind::kMla) {
      ++out.full_layers;
      out.full_bytes_per_token += kv_bytes_per_token;
    } else {
      ++out.state_layers;
      const bool checkpoint_dtype = s.engine->state_dtype_from_checkpoint &&
                                    k == AttentionKind::kLinear && in.arch.linear_attention &&
                                    in.arch.linear_attention->recurrent_state_bytes > 0;
      out.state_bytes_per_request +=
          LayerStateBytes(in.arch, k, s.attention_tp, s.engine->conv_state_bytes,
                          checkpoint_dtype ? in.arch.linear_attention->recurrent_state_bytes
                                           : s.engine->ssm_state_bytes);
    }
  }
  return out;
}

// Bytes the engine leaves for its KV (and state) pools: vLLM subtracts the
// account from total × fraction; SGLang takes its fraction of the memory free
// before loading, less the weights; TensorRT-LLM its fraction of what the
// profiling peak (or the loaded engine) leaves, the PyTorch backend adding
// back the temporary pool it frees first.
double PoolBudgetBytes(const SharedAccount& s, const MemoryPlan& plan) {
  const GpuAccount& acc = plan.per_gpu;
  if (s.sglang_budget) {
    const double free_before_load_bytes = s.free_memory_at_start_bytes > 0
                                              ? s.free_memory_at_start_bytes
                                              : acc.capacity_bytes - acc.non_torch_bytes;
    const double budget_bytes = plan.memory_fraction * free_before_load_bytes;
    return budget_bytes - acc.weights_bytes;
  }
  // Memory other processes hold, where the rule reads the device's free memory.
  const double others_bytes =
      s.engine->pool_lowered_by_other_processes ? s.other_processes_bytes : 0.0;
  if (s.trtllm_budget) {
    const double temporary_pool_bytes =
        static_cast<double>(plan.profile_pool_tokens) * plan.kv_bytes_per_token;
    const double peak_bytes = acc.weights_bytes + acc.activation_peak_bytes + acc.non_torch_bytes;
    return plan.memory_fraction * (acc.capacity_bytes - peak_bytes - others_bytes +
                                   temporary_pool_bytes);
  }
  const double budget_bytes = acc.capacity_bytes * plan.memory_fraction;
  return budget_bytes - acc.weights_bytes - acc.activation_peak_bytes - acc.non_torch_bytes -
         (s.engine->cuda_graph_in_kv_budget ? acc.cuda_graph_bytes : 0.0) - others_bytes;
}

// SGLang: the state pool takes mamba_full_memory_ratio : 1 of the budget, the
// token pool the rest (whole blocks). Returns the bytes one max_model_len
// request needs.
double SizeSglangPools(const SharedAccount& s, const StageLayers& l, double available_bytes,
                       MemoryPlan& plan) {
  GpuAccount& acc = plan.per_gpu;
  const int64_t bs = plan.block_size;
  const EngineBehaviour& e = *s.engine;
  double kv_budget_bytes = available_bytes;
  if (l.state_layers > 0 && l.state_bytes_per_request > 0.0) {
    if (e.mamba_default_slots > 0) {
      // v0.5.2: max_running_requests (or the default) slots, per DP rank.
      int64_t slots = s.max_num_seqs_set ? plan.max_num_seqs : e.mamba_default_slots;
      if (s.dp_attention_ranks > 1) slots = std::max<int64_t>(1, slots / s.dp_attention_ranks);
      plan.state_slots = std::min<int64_t>(
          slots, static_cast<int64_t>(std::floor(available_bytes / l.state_bytes_per_request)));
    } else {
      const double ratio = e.mamba_full_memory_ratio;
      const double state_budget_bytes = available_bytes * ratio / (1.0 + ratio);
      plan.state_slots =
          static_cast<int64_t>(std::floor(state_budget_bytes / l.state_bytes_per_request));
    }
    acc.state_pool_bytes = plan.state_slots * l.state_bytes_per_request;
    kv_budget_bytes = available_bytes - acc.state_pool_bytes;
  }
  const double cell_bytes = plan.kv_bytes_per_token;
  int64_t tokens =
      cell_bytes > 0.0 ? static_cast<int64_t>(std::floor(kv_budget_bytes / cell_bytes)) : 0;
  std::optional<int64_t> window_pool_tokens;
  const int64_t attention_layers = l.full_layers + l.window_layers;
  if (l.window_layers > 0 && l.full_layers > 0 && e.swa_full_tokens_ratio > 0.0) {
    // set_num_token_hybrid: the all-full token count as a layer-token budget,
    // split so that SWA layers hold ratio × the full layers' tokens.
    const double layer_tokens = static_cast<double>(tokens) * attention_layers;
    const double full_tokens =
        layer_tokens / (e.swa_full_tokens_ratio * l.window_layers + l.full_layers);
    tokens = static_cast<int64_t>(std::floor(full_tokens));
    window_pool_tokens = static_cast<int64_t>(std::floor(full_tokens * e.swa_full_tokens_ratio));
    plan.notes.push_back(absl::StrFormat(
        "SGLang sliding-window pool: %d tokens for the %d full layers, %d for the %d SWA layers",
        tokens, l.full_layers, *window_pool_tokens, l.window_layers));
  } else if (l.window_layers > 0) {
    plan.notes.push_back("SGLang: sliding-window layers counted as full attention");
  }
  tokens = tokens / bs * bs;
  plan.kv_pool_tokens = tokens;
  plan.kv_blocks = tokens / bs;
  acc.kv_pool_bytes = window_pool_tokens.has_value() && attention_layers > 0
                          ? (static_cast<double>(tokens) * l.full_layers +
                             static_cast<double>(*window_pool_tokens) * l.window_layers) *
                                cell_bytes / attention_layers
                          : tokens * cell_bytes;
  plan.layout = KvLayout{plan.kv_blocks, bs, 1, 0, 0, 0, std::nullopt, std::nullopt, 0};
  if (l.state_layers > 0) plan.layout.state_slots = plan.state_slots;
  if (window_pool_tokens.has_value()) {
    plan.layout.window_pool_tokens = window_pool_tokens;
    plan.layout.window_tokens = s.sliding_window_tokens;
  }
  if (!s.max_num_seqs_set && e.running_requests_per_context > 0 && plan.max_model_len > 0) {
    // max_running_requests = min(max(tokens / context × 512, 2048), 4096).
    const int64_t by_pool = tokens / plan.max_model_len * e.running_requests_per_context;
    plan.max_num_seqs = std::min(e.default_max_num_seqs, std::max(by_pool, e.min_running_requests));
  }
  return cell_bytes * plan.max_model_len + l.state_bytes_per_request;
}

// TensorRT-LLM: one paged pool of every attention layer at full length
// (sliding windows are not discounted in the PyTorch backend through 1.1):
// max tokens = available / bytes per token, in whole blocks (rounded up by the
// allocator). A pool below max_seq_len lowers max_seq_len to it.
double SizeTrtllmPool(const SharedAccount& s, const StageLayers& l, double available_bytes,
                      MemoryPlan& plan) {
  GpuAccount& acc = plan.per_gpu;
  const int64_t bs = plan.block_size;
  const double per_token_bytes = plan.kv_bytes_per_token;
  const int64_t estimated =
      per_token_bytes > 0.0 ? static_cast<int64_t>(std::floor(available_bytes / per_token_bytes))
                            : 0;
  const int64_t blocks =
      s.engine->kv_tokens_round_up_to_block ? CeilDiv(estimated, bs) : estimated / bs;
  plan.kv_blocks = blocks;
  plan.kv_pool_tokens = blocks * bs;
  acc.kv_pool_bytes = plan.kv_pool_tokens * per_token_bytes;
  plan.layout = KvLayout{blocks, bs, 1, 0, 0, 0, std::nullopt, std::nullopt, 0};
  if (l.state_layers > 0) {
    plan.notes.push_back("TensorRT-LLM: recurrent-state layers are not modelled");
  }
  if (plan.kv_pool_tokens > 0 && plan.kv_pool_tokens < plan.max_model_len) {
    plan.notes.push_back(
        absl::StrFormat("TensorRT-LLM lowers max_seq_len from %d to the pool's %d tokens",
                        plan.max_model_len, plan.kv_pool_tokens));
  }
  return per_token_bytes * RoundUp(plan.max_model_len, bs);
}

// vLLM V1 hybrid allocator: layers of each kind form groups of equal size
// sharing one block pool; a block holds `group` layers' pages. Returns the
// bytes one max_model_len request needs.
double SizeHybridPool(const ModelArchitecture& a, const StageLayers& l, const EngineBehaviour& e,
                      const EngineSettings& settings, double available_bytes, MemoryPlan& plan) {
  GpuAccount& acc = plan.per_gpu;
  const int64_t bs = plan.block_size;
  std::vector<int64_t> counts;
  for (int64_t c : {l.full_layers, l.window_layers, l.state_layers}) {
    if (c > 0) counts.push_back(c);
  }
  const int64_t group = *std::min_element(counts.begin(), counts.end());
  const int64_t g_full = CeilDiv(l.full_layers, group);
  const int64_t g_swa = CeilDiv(l.window_layers, group);
  const int64_t g_state = CeilDiv(l.state_layers, group);
  const int64_t attention_layers = l.full_layers + l.window_layers;
  const double attn_layer_bytes =
      attention_layers > 0 ? (l.full_bytes_per_token + l.window_bytes_per_token) / attention_layers
                           : 0.0;
  const double state_layer_bytes =
      l.state_layers > 0 ? l.state_bytes_per_request / l.state_layers : 0.0;
  int64_t block = bs;
  if (state_layer_bytes > 0.0 && attn_layer_bytes > 0.0) {
    // Attention pages grow to hold a state page (one page size per pool).
    while (block * attn_layer_bytes < state_layer_bytes) block += bs;
    plan.block_size = block;
  }
  const double page_bytes = std::max(block * attn_layer_bytes, state_layer_bytes) * group;
  const int64_t blocks = static_cast<int64_t>(std::floor(available_bytes / page_bytes));
  const int64_t groups = g_full + g_swa + g_state;
  plan.kv_blocks = blocks;
  acc.kv_pool_bytes = blocks * page_bytes;
  const int64_t full_blocks = CeilDiv(plan.max_model_len, block);
  // A sliding-window layer keeps window (+ one step's batch) tokens.
  const int64_t window_blocks =
      CeilDiv(a.sliding_window_tokens - 1 + plan.max_num_batched_tokens, block) + 1;
  const int64_t swa_blocks = std::min(window_blocks, full_blocks);
  // A recurrent-state group holds one block per request, or more with prefix
  // caching (vLLM's Mamba 'align' mode keeps two).
  const int64_t state_blocks = g_state > 0 && settings.enable_prefix_caching.value_or(false)
                                   ? std::max<int64_t>(1, e.state_blocks_with_prefix_caching)
                                   : 1;
  if (g_state > 0 && e.state_blocks_with_prefix_caching > 1 &&
      !settings.enable_prefix_caching.has_value()) {
    plan.notes.push_back(absl::StrFormat(
        "prefix caching not stated: taken as off for this hybrid model (one state block per "
        "request, as vLLM 0.19 ran one without the flag); with it on the engine holds %d",
        e.state_blocks_with_prefix_caching));
  }
  const int64_t per_request = g_full * full_blocks + g_swa * swa_blocks + g_state * state_blocks;
  // Tokens of attention the pool holds, and what the engine prints (the
  // figure a log states): from 0.21 the concurrency at max_model_len times
  // max_model_len, which grows with the state blocks' share, not a capacity.
  plan.kv_pool_tokens = blocks / groups * block;
  plan.reported_kv_pool_tokens =
      e.hybrid_tokens_from_concurrency && per_request > 0
          ? static_cast<int64_t>(std::floor(static_cast<double>(blocks) / per_request *
                                            static_cast<double>(plan.max_model_len)))
          : plan.kv_pool_tokens;
  plan.layout =
      KvLayout{blocks,       block,        g_full, g_swa, window_blocks, g_state * state_blocks,
               std::nullopt, std::nullopt, 0};
  plan.layout.groups = std::max<int64_t>(1, groups);
  if (g_state > 0) plan.state_slots = blocks / std::max<int64_t>(1, g_state * state_blocks);
  if (l.state_layers > 0) acc.state_pool_bytes = 0.0;  // shared with the KV pool
  return per_request * page_bytes;
}

// vLLM without the hybrid allocator: one paged pool of every attention layer;
// recurrent state is not modelled. Returns the bytes one max_model_len
// request needs.
double SizePagedPool(const StageLayers& l, double available_bytes, MemoryPlan& plan) {
  GpuAccount& acc = plan.per_gpu;
  const int64_t bs = plan.block_size;
  const double per_block_bytes = plan.kv_bytes_per_token * bs;
  if (l.state_layers > 0) {
    plan.notes.push_back(
        "this engine preset has no hybrid allocator: recurrent state not modelled");
  }
  const int64_t blocks = per_block_bytes > 0.0
                             ? static_cast<int64_t>(std::floor(available_bytes / per_block_bytes))
                             : 0;
  plan.kv_blocks = blocks;
  plan.kv_pool_tokens = blocks * bs;
  acc.kv_pool_bytes = blocks * per_block_bytes;
  plan.layout = KvLayout{blocks, bs, 1, 0, 0, 0, std::nullopt, std::nullopt, 0};
  return per_block_bytes * CeilDiv(plan.max_model_len, bs);
}

double SizePools(const PlanView& in, const SharedAccount& s, const StageLayers& l,
                 double available_bytes, MemoryPlan& plan) {
  if (s.sglang_budget || s.trtllm_budget) {
    const double per_request = s.sglang_budget ? SizeSglangPools(s, l, available_bytes, plan)
                                               : SizeTrtllmPool(s, l, available_bytes, plan);
    plan.reported_kv_pool_tokens = plan.kv_pool_tokens;
    return per_request;
  }
  if (s.engine->hybrid_kv_cache_groups && (l.window_layers > 0 || l.state_layers > 0) &&
      (l.full_layers + l.window_layers) > 0) {
    return SizeHybridPool(in.arch, l, *s.engine, in.settings, available_bytes, plan);
  }
  const double per_request = SizePagedPool(l, available_bytes, plan);
  plan.reported_kv_pool_tokens = plan.kv_pool_tokens;
  return per_request;
}

// The largest of the terms `in`: those the budget pays, or those that live
// outside it.
struct AccountTerm {
  BindingConstraint binding;
  double bytes;
};

BindingConstraint LargestTerm(std::initializer_list<AccountTerm> terms) {
  AccountTerm best{BindingConstraint::kWeights, -1.0};
  for (const AccountTerm& t : terms) {
    if (t.bytes > best.bytes) best = t;
  }
  return best.binding;
}

// What the budget pays for before the pools (PoolBudgetBytes) and what lives
// beside it: vLLM's CUDA graphs unless its preset deducts them; SGLang's
// activations and graphs (its fraction covers weights and pools only).
BindingConstraint BudgetBinding(const SharedAccount& s, const GpuAccount& acc) {
  if (s.sglang_budget) return BindingConstraint::kWeights;
  return LargestTerm({{BindingConstraint::kWeights, acc.weights_bytes},
                      {BindingConstraint::kActivations, acc.activation_peak_bytes},
                      {BindingConstraint::kNonTorch, acc.non_torch_bytes},
                      {BindingConstraint::kCudaGraphs,
                       s.engine->cuda_graph_in_kv_budget ? acc.cuda_graph_bytes : 0.0}});
}

BindingConstraint OutsideBudgetBinding(const SharedAccount& s, const GpuAccount& acc) {
  if (s.sglang_budget) {
    return LargestTerm({{BindingConstraint::kActivations, acc.activation_peak_bytes},
                        {BindingConstraint::kCudaGraphs, acc.cuda_graph_bytes}});
  }
  return BindingConstraint::kCudaGraphs;
}

// The stage's verdict: the budget's terms leave no room for the pools, a pool
// that cannot hold one max_model_len request (or its state), the whole
// account beyond the card's memory less what other processes hold (what
// lives outside the budget overflows), or a fit bound by the pool or by
// max_num_seqs.
void JudgeStage(const SharedAccount& s, double available_bytes, double needed_for_one_bytes,
                const StageLayers& l, MemoryPlan& plan) {
  GpuAccount& acc = plan.per_gpu;
  acc.used_bytes = acc.weights_bytes + acc.activation_peak_bytes + acc.non_torch_bytes +
                   acc.cuda_graph_bytes + acc.kv_pool_bytes + acc.state_pool_bytes;
  if (available_bytes <= 0.0) {
    plan.fits = false;
    plan.binding_constraint = BudgetBinding(s, acc);
    plan.shortfall_bytes = -available_bytes;
  } else if (acc.used_bytes > acc.capacity_bytes - s.other_processes_bytes) {
    plan.fits = false;
    // Beyond the card itself, a term of the account binds; within the card
    // but beyond what the others leave, they do.
    plan.binding_constraint = acc.used_bytes > acc.capacity_bytes
                                  ? OutsideBudgetBinding(s, acc)
                                  : BindingConstraint::kOtherProcesses;
    plan.shortfall_bytes = acc.used_bytes - (acc.capacity_bytes - s.other_processes_bytes);
  } else if (plan.max_concurrency_at_max_model_len < 1.0) {
    plan.fits = false;
    plan.binding_constraint = (l.state_layers > 0 && plan.state_slots < 1)
                                  ? BindingConstraint::kStateSlots
                                  : BindingConstraint::kKvPool;
    plan.shortfall_bytes =
        std::max(0.0, needed_for_one_bytes - (acc.kv_pool_bytes + acc.state_pool_bytes));
  } else {
    plan.fits = true;
    plan.binding_constraint =
        plan.max_concurrency_at_max_model_len < static_cast<double>(plan.max_num_seqs)
            ? BindingConstraint::kKvPool
            : BindingConstraint::kMaxNumSeqs;
  }
}

struct StagePlan {
  MemoryPlan plan;
  double available_bytes = 0.0;    // the pools' budget; <= 0: the weights do not fit
  double capacity_requests = 0.0;  // for choosing the binding stage
};

// The account of one GPU of pipeline stage `stage` before its pools are
// sized: its layers' weights and the shared overheads.
struct StageAccount {
  MemoryPlan plan;
  StageLayers layers;
};

StageAccount PrepareStage(const PlanView& in, const SharedAccount& s, const MemoryPlan& knobs,
                          int stage) {
  const int num_layers = static_cast<int>(in.arch.layers.size());
  const int pp = static_cast<int>(in.parallelism.pp);
  const auto [first, last] = PipelineStageLayers(num_layers, pp, stage);
  StageAccount out;
  MemoryPlan& plan = out.plan;
  plan = knobs;
  plan.pipeline_stage = stage;
  plan.weights_by_component_bytes =
      TalliedWeights(*s.tallies, in.arch, in.quantization, in.parallelism, *s.engine, stage);
  double weights_bytes = 0.0;
  for (double w : plan.weights_by_component_bytes) weights_bytes += w;
  out.layers = CountStageLayers(in, s, first, last, stage == pp - 1);
  plan.kv_bytes_per_token = out.layers.full_bytes_per_token + out.layers.window_bytes_per_token;
  plan.window_kv_bytes_per_token = out.layers.window_bytes_per_token;
  plan.state_bytes_per_request = out.layers.state_bytes_per_request;
  GpuAccount& acc = plan.per_gpu;
  acc.weights_bytes = weights_bytes;
  acc.activation_peak_bytes = s.activation_peak_bytes;
  acc.non_torch_bytes = s.non_torch_bytes;
  acc.cuda_graph_bytes = s.engine->cuda_graph_bytes_per_capture_layer * s.cuda_graph_captures *
                         static_cast<double>(last - first);
  acc.capacity_bytes = CudaTotalBytes(in.hardware);
  return out;
}

// The account of one GPU of pipeline stage `stage`: its layers' weights, the
// shared overheads, the pools sized in what the budget leaves, the verdict.
StagePlan PlanStage(const PlanView& in, const SharedAccount& s, const MemoryPlan& knobs,
                    int stage) {
  StageAccount account = PrepareStage(in, s, knobs, stage);
  StagePlan sp;
  sp.plan = std::move(account.plan);
  MemoryPlan& plan = sp.plan;
  const StageLayers& layers = account.layers;
  sp.available_bytes = PoolBudgetBytes(s, plan);
  double needed_for_one_bytes = 0.0;  // bytes one max_model_len request needs
  if (sp.available_bytes > 0.0) {
    needed_for_one_bytes = SizePools(in, s, layers, sp.available_bytes, plan);
    plan.max_concurrency_at_max_model_len = MaxConcurrencyAt(plan.layout, plan.max_model_len);
  }
  JudgeStage(s, sp.available_bytes, needed_for_one_bytes, layers, plan);
  sp.capacity_requests = plan.max_concurrency_at_max_model_len;
  return sp;
}

// Engines take the smallest pool over the pipeline's workers: a stage binds
// before `best` when its weights do not fit where best's did, or, with the
// same verdict, when it holds fewer requests.
bool BindsBefore(const StagePlan& stage, const std::optional<StagePlan>& best) {
  if (!best) return true;
  if (stage.available_bytes <= 0.0 && best->plan.fits) return true;
  return stage.plan.fits == best->plan.fits && stage.capacity_requests < best->capacity_requests;
}

// Expert parallelism against TP-sliced experts: the same routed-expert bytes
// per GPU except where slicing meets kernel padding or per-tensor scales. The
// note gives the other layout's bytes.
void AddExpertLayoutNote(const PlanView& in, const SharedAccount& s, MemoryPlan& result) {
  const ModelArchitecture& a = in.arch;
  const ParallelismSpec& p = in.parallelism;
  if (!a.moe || p.tp <= 1) return;
  ParallelismSpec other = p;
  other.ep = p.ep > 1 ? 1 : p.tp;
  if (a.moe->num_routed_experts % other.ep != 0) return;
  const int experts = static_cast<int>(Component::kRoutedExperts);
  const double here_bytes = result.weights_by_component_bytes[experts];
  const double there_bytes = TalliedWeights(*s.tallies, in.arch, in.quantization, other, *s.engine,
                                            result.pipeline_stage)[experts];
  result.notes.push_back(absl::StrFormat(
      "routed experts take %.2f GiB per GPU %s; %s they would take %.2f GiB (%+.2f GiB): "
      "whole experts per rank and TP-sliced experts differ only by kernel padding and scales",
      here_bytes / kGiB, p.ep > 1 ? "with expert parallelism" : "sliced by tensor parallelism",
      p.ep > 1 ? "sliced by tensor parallelism" : "with expert parallelism over the TP ranks",
      there_bytes / kGiB, (there_bytes - here_bytes) / kGiB));
}

// One plan from its prepared parts: the knobs, the shared account, each
// pipeline stage's account, the binding stage.
absl::StatusOr<MemoryPlan> PlanFromParts(const PlanView& in, const PreparedParts& parts) {
  absl::StatusOr<MemoryPlan> resolved = ResolveKnobs(in, parts.high_memory);
  if (!resolved.ok()) return resolved.status();
  MemoryPlan knobs = *std::move(resolved);
  const SharedAccount shared = PrepareSharedAccount(in, parts, knobs);
  std::optional<StagePlan> best;
  for (int stage = 0; stage < static_cast<int>(in.parallelism.pp); ++stage) {
    StagePlan sp = PlanStage(in, shared, knobs, stage);
    if (BindsBefore(sp, best)) best = std::move(sp);
  }
  MemoryPlan result = std::move(best->plan);
  AddExpertLayoutNote(in, shared, result);
  if (in.parallelism.pp > 1) {
    result.notes.push_back(absl::StrCat("pipeline stage ", result.pipeline_stage,
                                        " binds (engines take the smallest pool over workers)"));
  }
  return result;
}

// MTP layers, or an EAGLE head loaded as one (LoadedArchitecture).
bool LoadsMtpLayers(const EngineSettings& s) {
  return s.speculative_method == SpeculativeMethod::kMtp ||
         s.speculative_method == SpeculativeMethod::kEagle;
}

}  // namespace

absl::StatusOr<MemoryPlan> PlanMemory(const MemoryPlanInput& in) {
  if (absl::Status s = ValidateMemoryPlanInput(in); !s.ok()) return s;
  const EngineBehaviour engine = ResolveForHardware(in.engine, in.hardware);
  const std::vector<WeightTally> tallies =
      TallyWeightTensors(LoadedArchitecture(in.arch, LoadsMtpLayers(in.settings)));
  return PlanFromParts(
      ViewOf(in), PreparedParts{&engine, HighMemoryDefaults(in.engine, in.hardware), &tallies});
}

absl::StatusOr<PreparedMemoryModel> PreparedMemoryModel::Create(MemoryPlanInput base) {
  if (absl::Status s = ValidateArchitecture(base.arch); !s.ok()) return s;
  if (absl::Status s = ValidateQuantization(base.quantization); !s.ok()) return s;
  PreparedMemoryModel m;
  m.high_memory_ = HighMemoryDefaults(base.engine, base.hardware);
  base.engine = ResolveForHardware(base.engine, base.hardware);
  m.tallies_ = TallyWeightTensors(LoadedArchitecture(base.arch, false));
  m.mtp_tallies_ = TallyWeightTensors(LoadedArchitecture(base.arch, true));
  m.counts_ = ComputeParameterCounts(base.arch);
  m.base_ = std::move(base);
  return m;
}

absl::StatusOr<MemoryPlan> PreparedMemoryModel::Plan(const ParallelismSpec& parallelism,
                                                     const EngineSettings& settings) const {
  const PlanView view{base_.arch,   base_.quantization, base_.hardware,
                      base_.engine, parallelism,        settings};
  if (absl::Status s = ValidateDeployment(view); !s.ok()) return s;
  return PlanFromParts(view, PreparedParts{&base_.engine, high_memory_,
                                           LoadsMtpLayers(settings) ? &mtp_tallies_ : &tallies_});
}

absl::StatusOr<double> PoolBytesForTokens(const MemoryPlanInput& in, int64_t kv_pool_tokens) {
  if (kv_pool_tokens <= 0) {
    return Invalid("kv_pool_tokens", absl::StrCat(kv_pool_tokens), "must be positive");
  }
  absl::StatusOr<MemoryPlan> planned = PlanMemory(in);
  if (!planned.ok()) return planned.status();
  const PlanView view = ViewOf(in);
  const EngineBehaviour engine = ResolveForHardware(in.engine, in.hardware);
  const std::vector<WeightTally> tallies =
      TallyWeightTensors(LoadedArchitecture(in.arch, LoadsMtpLayers(in.settings)));
  const PreparedParts parts{&engine, HighMemoryDefaults(in.engine, in.hardware), &tallies};
  absl::StatusOr<MemoryPlan> resolved = ResolveKnobs(view, parts.high_memory);
  if (!resolved.ok()) return resolved.status();
  MemoryPlan knobs = *std::move(resolved);
  const SharedAccount shared = PrepareSharedAccount(view, parts, knobs);
  const StageAccount account = PrepareStage(view, shared, knobs, planned->pipeline_stage);
  auto tokens_at = [&](double available_bytes) {
    MemoryPlan plan = account.plan;
    SizePools(view, shared, account.layers, available_bytes, plan);
    return plan.reported_kv_pool_tokens;
  };
  // The pools grow with the bytes they get: bisect for the smallest budget
  // that reports the tokens.
  double lo = 0.0;
  double hi = 1024.0 * 1024.0 * 1024.0;
  constexpr double kMaxBudgetBytes = 1e16;
  while (tokens_at(hi) < kv_pool_tokens) {
    hi *= 2.0;
    if (hi > kMaxBudgetBytes) {
      return absl::FailedPreconditionError(absl::StrCat(
          "no pool budget below 10 PB reports ", kv_pool_tokens, " tokens for this deployment"));
    }
  }
  constexpr int kBisections = 64;
  for (int i = 0; i < kBisections; ++i) {
    const double mid = 0.5 * (lo + hi);
    if (tokens_at(mid) >= kv_pool_tokens) {
      hi = mid;
    } else {
      lo = mid;
    }
  }
  return hi;
}

}  // namespace capplan::model
