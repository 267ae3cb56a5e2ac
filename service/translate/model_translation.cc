#include "service/translate/model_translation.h"

#include <algorithm>
#include <cctype>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"

namespace capplan::service {
namespace {

absl::Status Invalid(absl::string_view path, absl::string_view value, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(path, " = ", value, "; ", rule));
}

absl::StatusOr<model::AttentionKind> ToAttention(v1::AttentionKind k, int index) {
  switch (k) {
    case v1::ATTENTION_KIND_FULL:
      return model::AttentionKind::kFull;
    case v1::ATTENTION_KIND_SLIDING_WINDOW:
      return model::AttentionKind::kSlidingWindow;
    case v1::ATTENTION_KIND_MLA:
      return model::AttentionKind::kMla;
    case v1::ATTENTION_KIND_LINEAR:
      return model::AttentionKind::kLinear;
    case v1::ATTENTION_KIND_MAMBA:
      return model::AttentionKind::kMamba;
    default:
      return Invalid(absl::StrCat("Model.layer_blocks.layers[", index, "].attention"),
                     v1::AttentionKind_Name(k), "must be set");
  }
}

absl::StatusOr<model::NumberType> ToNumberType(v1::NumberFormat f) {
  switch (f) {
    case v1::NUMBER_FORMAT_UNSPECIFIED:
    case v1::NUMBER_FORMAT_BF16:
      return model::NumberType::kBf16;
    case v1::NUMBER_FORMAT_FP16:
      return model::NumberType::kFp16;
    case v1::NUMBER_FORMAT_FP32:
      return model::NumberType::kFp32;
    default:
      return Invalid("Model.native_dtype", v1::NumberFormat_Name(f), "must be BF16, FP16 or FP32");
  }
}

model::Component ToComponent(v1::ModelComponent c) {
  switch (c) {
    case v1::MODEL_COMPONENT_ATTENTION:
      return model::Component::kAttention;
    case v1::MODEL_COMPONENT_DENSE_MLP:
      return model::Component::kDenseMlp;
    case v1::MODEL_COMPONENT_EXPERTS:
      return model::Component::kRoutedExperts;
    case v1::MODEL_COMPONENT_SHARED_EXPERTS:
      return model::Component::kSharedExperts;
    case v1::MODEL_COMPONENT_ROUTER:
      return model::Component::kRouter;
    case v1::MODEL_COMPONENT_EMBEDDINGS:
      return model::Component::kEmbeddings;
    case v1::MODEL_COMPONENT_LM_HEAD:
      return model::Component::kLmHead;
    case v1::MODEL_COMPONENT_NORMS:
      return model::Component::kNorms;
    case v1::MODEL_COMPONENT_DRAFT:
      return model::Component::kDraft;
    case v1::MODEL_COMPONENT_LINEAR_ATTENTION:
      return model::Component::kLinearAttention;
    case v1::MODEL_COMPONENT_VISION_ENCODER:
      return model::Component::kVisionEncoder;
    default:
      return model::Component::kNorms;
  }
}

model::WeightFormat ToWeightFormat(v1::WeightFormat f) {
  switch (f) {
    case v1::WEIGHT_FORMAT_FP32:
      return model::WeightFormat::kFp32;
    case v1::WEIGHT_FORMAT_BF16:
      return model::WeightFormat::kBf16;
    case v1::WEIGHT_FORMAT_FP16:
      return model::WeightFormat::kFp16;
    case v1::WEIGHT_FORMAT_FP8_PER_TENSOR:
      return model::WeightFormat::kFp8PerTensor;
    case v1::WEIGHT_FORMAT_FP8_BLOCK:
      return model::WeightFormat::kFp8Block;
    case v1::WEIGHT_FORMAT_FP8_PER_CHANNEL:
      return model::WeightFormat::kFp8PerChannel;
    case v1::WEIGHT_FORMAT_INT8:
      return model::WeightFormat::kInt8;
    case v1::WEIGHT_FORMAT_INT4_AWQ:
      return model::WeightFormat::kInt4Awq;
    case v1::WEIGHT_FORMAT_INT4_GPTQ:
      return model::WeightFormat::kInt4Gptq;
    case v1::WEIGHT_FORMAT_INT4_SYMMETRIC:
      return model::WeightFormat::kInt4Symmetric;
    case v1::WEIGHT_FORMAT_NVFP4:
      return model::WeightFormat::kNvfp4;
    case v1::WEIGHT_FORMAT_MXFP4:
      return model::WeightFormat::kMxfp4;
    default:
      return model::WeightFormat::kNative;
  }
}

}  // namespace

absl::StatusOr<model::ModelArchitecture> ToArchitecture(const v1::Model& m) {
  model::ModelArchitecture a;
  a.hidden_size = static_cast<int64_t>(m.hidden_size());
  a.intermediate_size = static_cast<int64_t>(m.intermediate_size());
  a.num_attention_heads = m.num_attention_heads();
  a.num_kv_heads = m.num_kv_heads() > 0 ? m.num_kv_heads() : m.num_attention_heads();
  a.head_dim = m.head_dim();
  a.vocab_size = static_cast<int64_t>(m.vocab_size());
  a.tie_word_embeddings = m.tie_word_embeddings();
  a.sliding_window_tokens = m.sliding_window_tokens();
  a.num_mtp_layers = m.num_mtp_layers();
  a.attention_bias = m.attention_bias();
  a.qk_norm = m.qk_norm();
  a.gated_attention_output = m.gated_attention_output();
  a.native_context_tokens = static_cast<int64_t>(m.native_context_tokens());
  a.rope_scaling_factor = m.rope_scaling_factor();
  a.architecture_class = m.architecture_class();
  a.rope_original_context_tokens = static_cast<int64_t>(m.rope_original_context_tokens());
  absl::StatusOr<model::NumberType> dtype = ToNumberType(m.native_dtype());
  if (!dtype.ok()) return dtype.status();
  a.native_dtype = *dtype;

  for (int b = 0; b < m.layer_blocks_size(); ++b) {
    const v1::LayerBlock& block = m.layer_blocks(b);
    const uint32_t repeat = std::max<uint32_t>(1, block.repeat());
    if (repeat > 100000) {
      return Invalid(absl::StrCat("Model.layer_blocks[", b, "].repeat"),
                     absl::StrCat(block.repeat()), "must be at most 100000");
    }
    for (uint32_t r = 0; r < repeat; ++r) {
      for (int l = 0; l < block.layers_size(); ++l) {
        const v1::LayerSpec& spec = block.layers(l);
        if (spec.count() > 100000) {
          return Invalid(absl::StrCat("Model.layer_blocks[", b, "].layers[", l, "].count"),
                         absl::StrCat(spec.count()), "must be at most 100000");
        }
        absl::StatusOr<model::AttentionKind> kind = ToAttention(spec.attention(), l);
        if (!kind.ok()) return kind.status();
        const model::MlpKind mlp =
            spec.mlp() == v1::MLP_KIND_MOE ? model::MlpKind::kMoe : model::MlpKind::kDense;
        for (uint32_t c = 0; c < spec.count(); ++c) {
          a.layers.push_back(model::LayerSpec{*kind, mlp});
          if (a.layers.size() > 100000) {
            return Invalid("Model.layer_blocks", "(too many layers)",
                           "must expand to at most 100000 layers");
          }
        }
      }
    }
  }
  if (m.has_mla() && m.mla().kv_lora_rank() > 0) {
    a.mla =
        model::MlaSpec{m.mla().q_lora_rank(), m.mla().kv_lora_rank(), m.mla().qk_nope_head_dim(),
                       m.mla().qk_rope_head_dim(), m.mla().v_head_dim()};
  }
  if (m.has_linear_attention() && m.linear_attention().num_value_heads() > 0) {
    const v1::LinearAttentionConfig& l = m.linear_attention();
    a.linear_attention =
        model::LinearAttentionSpec{l.num_key_heads(), l.num_value_heads(), l.key_head_dim(),
                                   l.value_head_dim(), l.conv_kernel_size()};
    switch (l.recurrent_state_dtype()) {
      case v1::NUMBER_FORMAT_FP32:
        a.linear_attention->recurrent_state_bytes = 4;
        break;
      case v1::NUMBER_FORMAT_BF16:
      case v1::NUMBER_FORMAT_FP16:
        a.linear_attention->recurrent_state_bytes = 2;
        break;
      default:
        break;
    }
  }
  if (m.has_mamba() && m.mamba().num_heads() > 0) {
    const v1::MambaConfig& x = m.mamba();
    a.mamba = model::MambaSpec{x.num_heads(), x.head_dim(), x.state_size(),
                               std::max<int64_t>(1, x.num_groups()), x.conv_kernel_size()};
  }
  if (m.has_vision_encoder() && m.vision_encoder().depth() > 0) {
    const v1::VisionEncoderConfig& v = m.vision_encoder();
    model::VisionEncoderSpec spec;
    spec.depth = v.depth();
    spec.hidden_size = v.hidden_size();
    spec.intermediate_size = v.intermediate_size();
    spec.patch_size = v.patch_size();
    spec.temporal_patch_size = std::max<uint32_t>(1, v.temporal_patch_size());
    spec.in_channels = v.in_channels() > 0 ? v.in_channels() : 3;
    spec.out_hidden_size = v.out_hidden_size() > 0 ? v.out_hidden_size() : a.hidden_size;
    spec.spatial_merge_size = std::max<uint32_t>(1, v.spatial_merge_size());
    spec.num_position_embeddings = v.num_position_embeddings();
    spec.deepstack_mergers = v.deepstack_mergers();
    spec.gated_mlp = v.gated_mlp();
    spec.max_item_embedding_tokens = v.max_item_embedding_tokens();
    spec.max_item_placeholder_tokens = v.max_item_placeholder_tokens();
    a.vision_encoder = spec;
  }
  if (m.has_moe() && m.moe().num_routed_experts() > 0) {
    const v1::MoeConfig& x = m.moe();
    model::MoeSpec moe;
    moe.num_routed_experts = x.num_routed_experts();
    moe.experts_per_token = x.experts_per_token();
    moe.num_shared_experts = x.num_shared_experts();
    moe.expert_intermediate_size = static_cast<int64_t>(x.expert_intermediate_size());
    moe.shared_expert_intermediate_size = static_cast<int64_t>(x.shared_expert_intermediate_size());
    moe.router_bias = x.router_bias();
    // Qwen2-MoE / Qwen3-Next put a sigmoid gate on the shared expert.
    moe.shared_expert_gate = moe.shared_expert_intermediate_size > 0 &&
                             absl::StrContains(m.architecture_class(), "Qwen");
    a.moe = moe;
  }
  // gpt-oss: biases on every projection, attention sinks, expert biases.
  if (absl::StrContains(m.architecture_class(), "GptOss")) {
    a.attention_output_bias = true;
    a.attention_sinks = true;
    if (a.moe) a.moe->expert_bias = true;
  }
  if (absl::Status s = model::ValidateArchitecture(a); !s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Model ", m.id().empty() ? "(unnamed)" : m.id(), ": ", s.message()));
  }
  return a;
}

absl::StatusOr<model::Quantization> ToQuantization(const v1::Quantization& q) {
  model::Quantization out;
  out.format = ToWeightFormat(q.format());
  out.group_size = q.group_size();
  for (int c : q.unquantized()) {
    out.unquantized.push_back(ToComponent(static_cast<v1::ModelComponent>(c)));
  }
  switch (q.kv_cache_dtype()) {
    case v1::KV_CACHE_DTYPE_FP8:
      out.kv_cache_dtype = model::NumberType::kFp8;
      break;
    case v1::KV_CACHE_DTYPE_BF16:
      out.kv_cache_dtype = model::NumberType::kBf16;
      break;
    case v1::KV_CACHE_DTYPE_FP16:
      out.kv_cache_dtype = model::NumberType::kFp16;
      break;
    default:
      break;
  }
  if (absl::Status s = model::ValidateQuantization(out); !s.ok()) return s;
  return out;
}

double PeakFlops(const v1::Hardware& hardware, v1::NumberFormat format) {
  for (const v1::PeakCompute& peak : hardware.peak_compute()) {
    if (peak.format() == format) return peak.dense_flops_per_second();
  }
  return 0;
}

GemmPeak GemmPeakFor(const v1::Hardware& hardware, model::WeightFormat weights,
                     model::NumberType native_dtype) {
  for (model::GemmFormat g : model::GemmFormatPreference(weights, native_dtype)) {
    v1::NumberFormat f = v1::NUMBER_FORMAT_BF16;
    switch (g) {
      case model::GemmFormat::kFp4:
        f = v1::NUMBER_FORMAT_FP4;
        break;
      case model::GemmFormat::kFp8:
        f = v1::NUMBER_FORMAT_FP8;
        break;
      case model::GemmFormat::kFp16:
        f = v1::NUMBER_FORMAT_FP16;
        break;
      case model::GemmFormat::kBf16:
        f = v1::NUMBER_FORMAT_BF16;
        break;
    }
    const double peak = PeakFlops(hardware, f);
    if (peak > 0) {
      const std::string name = v1::NumberFormat_Name(f);
      return {peak, name.substr(name.rfind('_') + 1)};
    }
  }
  return {};
}

absl::StatusOr<model::HardwareSpec> ToHardwareSpec(const v1::Hardware& h) {
  model::HardwareSpec out;
  out.name = h.name();
  out.architecture = h.architecture();
  for (const std::string& alias : h.aliases()) absl::StrAppend(&out.name, " | ", alias);
  out.memory_bytes =
      static_cast<double>(h.usable_memory_bytes() > 0 ? h.usable_memory_bytes() : h.memory_bytes());
  out.cuda_total_bytes = static_cast<double>(h.cuda_total_memory_bytes());
  out.unified_memory = h.unified_memory();
  out.rocm = absl::AsciiStrToLower(h.vendor()) == "amd";
  out.fast_intra_node_link =
      h.intra_node().kind() == v1::LINK_KIND_NVLINK || h.intra_node().kind() == v1::LINK_KIND_XGMI;
  if (out.memory_bytes <= 0.0) {
    return Invalid(absl::StrCat("Hardware(", h.id(), ").memory_bytes"), "0", "must be positive");
  }
  return out;
}

model::ParallelismSpec ToParallelism(const v1::Parallelism& p) {
  model::ParallelismSpec out;
  out.tp = std::max<uint32_t>(1, p.tp());
  out.pp = std::max<uint32_t>(1, p.pp());
  out.ep = std::max<uint32_t>(1, p.ep());
  out.dp = std::max<uint32_t>(1, p.dp());
  out.dp_attention = p.dp_attention();
  return out;
}

model::EngineSettings ToEngineSettings(const v1::EngineConfig& e) {
  model::EngineSettings s;
  switch (e.kind()) {
    case v1::ENGINE_KIND_SGLANG:
      s.memory_fraction = e.mem_fraction_static();
      break;
    case v1::ENGINE_KIND_TRTLLM:
      s.memory_fraction = e.kv_cache_free_gpu_memory_fraction();
      break;
    default:
      s.memory_fraction = e.gpu_memory_utilization();
      break;
  }
  if (s.memory_fraction == 0.0 && e.kind() != v1::ENGINE_KIND_TRTLLM) {
    s.memory_fraction = std::max(e.gpu_memory_utilization(), e.mem_fraction_static());
  }
  s.max_model_len = static_cast<int64_t>(e.max_model_len());
  s.max_num_batched_tokens = static_cast<int64_t>(e.max_num_batched_tokens());
  s.max_num_seqs = e.max_num_seqs();
  s.block_size = e.block_size();
  s.enforce_eager = e.enforce_eager();
  s.max_cudagraph_batch_size = e.max_cudagraph_batch_size();
  if (e.has_enable_prefix_caching()) s.enable_prefix_caching = e.enable_prefix_caching();
  switch (e.kv_cache_dtype()) {
    case v1::KV_CACHE_DTYPE_BF16:
      s.kv_cache_dtype = model::NumberType::kBf16;
      break;
    case v1::KV_CACHE_DTYPE_FP16:
      s.kv_cache_dtype = model::NumberType::kFp16;
      break;
    case v1::KV_CACHE_DTYPE_FP8:
      s.kv_cache_dtype = model::NumberType::kFp8;
      break;
    default:
      break;
  }
  s.native_sampler = e.sampler_backend() == v1::SAMPLER_BACKEND_NATIVE;
  s.language_model_only = e.language_model_only();
  if (e.has_free_memory_at_start_bytes()) {
    s.free_memory_at_start_bytes = static_cast<double>(e.free_memory_at_start_bytes());
  }
  switch (e.speculative().method()) {
    case v1::SPECULATIVE_METHOD_MTP:
      s.speculative_method = model::SpeculativeMethod::kMtp;
      break;
    case v1::SPECULATIVE_METHOD_EAGLE:
      s.speculative_method = model::SpeculativeMethod::kEagle;
      break;
    case v1::SPECULATIVE_METHOD_DRAFT_MODEL:
      s.speculative_method = model::SpeculativeMethod::kDraftModel;
      break;
    case v1::SPECULATIVE_METHOD_NGRAM:
      s.speculative_method = model::SpeculativeMethod::kNgram;
      break;
    default:
      break;
  }
  s.num_speculative_tokens = e.speculative().num_speculative_tokens();
  return s;
}

absl::StatusOr<model::EngineBehaviour> ToEngineBehaviour(const v1::EnginePreset& p) {
  model::EngineBehaviour e;
  e.preset_id = p.id();
  switch (p.engine()) {
    case v1::ENGINE_KIND_VLLM:
      e.engine = model::EngineKind::kVllm;
      break;
    case v1::ENGINE_KIND_SGLANG:
      e.engine = model::EngineKind::kSglang;
      break;
    case v1::ENGINE_KIND_TRTLLM:
      e.engine = model::EngineKind::kTrtllm;
      break;
    default:
      return Invalid(absl::StrCat("EnginePreset(", p.id(), ").engine"),
                     v1::EngineKind_Name(p.engine()), "must be VLLM, SGLANG or TRTLLM");
  }
  switch (p.budget_rule()) {
    case v1::ENGINE_BUDGET_RULE_VLLM_TOTAL_MINUS_PEAK:
      e.budget_rule = model::BudgetRule::kVllmTotalMinusPeak;
      break;
    case v1::ENGINE_BUDGET_RULE_VLLM_PROFILED:
      e.budget_rule = model::BudgetRule::kVllmProfiled;
      break;
    case v1::ENGINE_BUDGET_RULE_SGLANG_STATIC:
      e.budget_rule = model::BudgetRule::kSglangStatic;
      break;
    case v1::ENGINE_BUDGET_RULE_TRTLLM_FREE_FRACTION:
      e.budget_rule = model::BudgetRule::kTrtllmFreeFraction;
      break;
    case v1::ENGINE_BUDGET_RULE_TRTLLM_ENGINE_FREE:
      e.budget_rule = model::BudgetRule::kTrtllmEngineFree;
      break;
    default:
      return Invalid(absl::StrCat("EnginePreset(", p.id(), ").budget_rule"),
                     v1::EngineBudgetRule_Name(p.budget_rule()), "must be set");
  }
  if (!(p.default_memory_fraction() > 0.0 && p.default_memory_fraction() <= 1.0)) {
    return Invalid(absl::StrCat("EnginePreset(", p.id(), ").default_memory_fraction"),
                   absl::StrCat(p.default_memory_fraction()), "must be in (0, 1]");
  }
  e.default_memory_fraction = p.default_memory_fraction();
  for (const v1::MemoryFractionByTp& f : p.memory_fraction_by_tp()) {
    e.memory_fraction_by_min_tp.emplace_back(f.min_tp(), f.fraction());
  }
  std::sort(e.memory_fraction_by_min_tp.begin(), e.memory_fraction_by_min_tp.end(),
            [](const auto& x, const auto& y) { return x.first > y.first; });
  if (p.default_block_size() > 0) e.default_block_size = p.default_block_size();
  if (p.default_max_num_batched_tokens() > 0) {
    e.default_max_num_batched_tokens = static_cast<int64_t>(p.default_max_num_batched_tokens());
  }
  if (p.default_max_num_seqs() > 0) e.default_max_num_seqs = p.default_max_num_seqs();
  e.high_memory_threshold_bytes = static_cast<double>(p.high_memory_threshold_bytes());
  e.high_memory_max_num_batched_tokens =
      static_cast<int64_t>(p.high_memory_max_num_batched_tokens());
  e.high_memory_max_num_seqs = p.high_memory_max_num_seqs();
  e.high_memory_excluded_names.assign(p.high_memory_excluded_names().begin(),
                                      p.high_memory_excluded_names().end());
  e.chunked_prefill_default = p.chunked_prefill_default();
  e.chunked_prefill_auto_above_max_model_len =
      static_cast<int64_t>(p.chunked_prefill_auto_above_max_model_len());
  if (p.unchunked_min_batched_tokens() > 0) {
    e.unchunked_min_batched_tokens = static_cast<int64_t>(p.unchunked_min_batched_tokens());
  }
  if (p.cudagraph_max_capture_size() > 0) {
    e.cudagraph_max_capture_size = p.cudagraph_max_capture_size();
  }
  if (p.vocab_padding_multiple() > 0) e.vocab_padding_multiple = p.vocab_padding_multiple();
  e.hybrid_kv_cache_groups = p.hybrid_kv_cache_groups();
  e.hybrid_tokens_from_concurrency = p.hybrid_tokens_from_concurrency();
  e.state_dtype_from_checkpoint = p.state_dtype_from_checkpoint();
  if (p.state_blocks_with_prefix_caching() > 0) {
    e.state_blocks_with_prefix_caching = p.state_blocks_with_prefix_caching();
  }
  if (p.conv_state_bytes_per_element() > 0) e.conv_state_bytes = p.conv_state_bytes_per_element();
  if (p.ssm_state_bytes_per_element() > 0) e.ssm_state_bytes = p.ssm_state_bytes_per_element();
  if (p.mamba_full_memory_ratio() > 0) e.mamba_full_memory_ratio = p.mamba_full_memory_ratio();
  for (const v1::MoeKernelPadding& pad : p.moe_padding()) {
    model::MoePaddingRule rule;
    rule.format = ToWeightFormat(pad.format());
    rule.hidden_multiple = std::max<int64_t>(1, pad.hidden_multiple());
    rule.intermediate_multiple = std::max<int64_t>(1, pad.intermediate_multiple());
    rule.architectures.assign(pad.architectures().begin(), pad.architectures().end());
    rule.device_names.assign(pad.device_names().begin(), pad.device_names().end());
    e.moe_padding.push_back(std::move(rule));
  }
  e.cuda_graph_in_kv_budget = p.cuda_graph_in_kv_budget();
  e.kv_pool_min_over_ranks = p.kv_pool_min_over_ranks();
  e.kv_tokens_round_up_to_block = p.kv_tokens_round_up_to_block();
  e.profile_pool_block_per_batch_slot = p.profile_pool_block_per_batch_slot();
  for (const v1::MemoryReserveTier& t : p.memory_reserve_tiers()) {
    e.memory_reserve_tiers.push_back({static_cast<double>(t.below_card_bytes()), t.reserved_bytes(),
                                      t.reserved_bytes_per_tp_pp(), t.use_tp_ladder(),
                                      t.dp_attention_extra_bytes(), t.speculative_extra_bytes()});
  }
  if (p.has_batching_reserve()) {
    const v1::BatchingReserve& r = p.batching_reserve();
    e.has_batching_reserve = true;
    e.batching_reserve = {r.base_bytes(),
                          r.per_chunk_token_bytes(),
                          static_cast<int64_t>(r.min_chunk_tokens()),
                          r.per_graph_bs_bytes(),
                          r.per_tp_pp_bytes(),
                          r.per_graph_bs_dp_bytes(),
                          r.floor_bytes(),
                          static_cast<double>(r.floor_above_card_bytes()),
                          r.speculative_eagle_bytes(),
                          r.speculative_standalone_bytes()};
  }
  for (const v1::CardDefaultTier& t : p.card_default_tiers()) {
    e.card_default_tiers.push_back({static_cast<double>(t.below_card_bytes()),
                                    static_cast<int64_t>(t.chunked_prefill_tokens()),
                                    t.cuda_graph_max_bs(), t.cuda_graph_max_bs_tp4()});
  }
  e.mamba_default_slots = p.mamba_default_slots();
  e.swa_full_tokens_ratio = p.swa_full_tokens_ratio();
  e.dp_attention_divides_chunked_prefill = p.dp_attention_divides_chunked_prefill();
  e.multimodal_profile_tokens = static_cast<int64_t>(p.multimodal_profile_tokens());
  e.running_requests_per_context = p.running_requests_per_context();
  e.min_running_requests = p.min_running_requests();
  e.sampler_fit_group = p.sampler_fit_group();
  e.sampler_logit_copies_prior = p.sampler_logit_copies_prior();
  e.native_sampler_fit_group = p.native_sampler_fit_group();
  e.native_sampler_logit_copies_prior = p.native_sampler_logit_copies_prior();
  e.native_sampler_logit_copies_exact = p.native_sampler_logit_copies_exact();
  e.native_sampler_logit_copies = p.native_sampler_logit_copies();
  e.mm_profile_pads_encoder_cache = p.mm_profile_pads_encoder_cache();
  e.gptq_gemm_dequantizes_weight = p.gptq_gemm_dequantizes_weight();
  e.pool_lowered_by_other_processes = p.pool_lowered_by_other_processes();
  e.vision_encoder_tp_sharded = p.vision_encoder_tp_sharded();
  for (const v1::ActivationHiddenCopies& r : p.activation_hidden_copies()) {
    e.activation_hidden_copies.push_back(model::EngineBehaviour::HiddenCopiesRule{
        {r.architecture_classes().begin(), r.architecture_classes().end()},
        static_cast<int64_t>(r.hidden_copies())});
  }
  e.allocator_round_bytes = static_cast<double>(p.weights_allocator().segment_round_bytes());
  e.allocator_large_from_bytes = static_cast<double>(p.weights_allocator().large_from_bytes());
  e.allocator_counts_reserved = p.weights_allocator().counts_reserved();
  e.non_torch_base_fit_group = p.non_torch_base_fit_group();
  e.activation_fit_group = p.activation_fit_group();
  e.driver_rank_extra_non_torch_bytes = p.driver_rank_extra_non_torch_bytes();
  e.decoder_logit_copies = p.decoder_logit_copies();
  e.activation_token_scale = p.activation_token_scale();
  e.sampler_logit_copies = p.sampler_logit_copies();
  e.non_torch_base_bytes = p.non_torch_base_bytes();
  e.non_torch_per_extra_rank_bytes = p.non_torch_per_extra_rank_bytes();
  e.non_torch_flat_on_fast_link = p.non_torch_flat_on_fast_link();
  e.non_torch_flat_on_every_link = p.non_torch_flat_on_every_link();
  e.fast_link_multi_gpu_non_torch_bytes = p.fast_link_multi_gpu_non_torch_bytes();
  e.cuda_graph_bytes_per_capture_layer = p.cuda_graph_bytes_per_capture_layer();
  e.unified_memory_non_torch_bytes = p.unified_memory_non_torch_bytes();
  e.rocm_non_torch_bytes = p.rocm_non_torch_bytes();
  return e;
}

std::vector<int> ParseVersion(absl::string_view version) {
  std::vector<int> parts;
  size_t i = 0;
  while (i < version.size() && !std::isdigit(static_cast<unsigned char>(version[i]))) ++i;
  while (i < version.size() && std::isdigit(static_cast<unsigned char>(version[i]))) {
    int value = 0;
    int digits = 0;
    while (i < version.size() && std::isdigit(static_cast<unsigned char>(version[i]))) {
      if (digits < 6) value = value * 10 + (version[i] - '0');
      ++digits;
      ++i;
    }
    parts.push_back(value);
    if (i + 1 < version.size() && version[i] == '.' &&
        std::isdigit(static_cast<unsigned char>(version[i + 1]))) {
      ++i;
    } else {
      break;
    }
  }
  return parts;
}

int CompareVersions(const std::vector<int>& a, const std::vector<int>& b) {
  const size_t n = std::max(a.size(), b.size());
  for (size_t i = 0; i < n; ++i) {
    const int x = i < a.size() ? a[i] : 0;
    const int y = i < b.size() ? b[i] : 0;
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

absl::StatusOr<PresetChoice> ChoosePreset(const std::vector<v1::EnginePreset>& presets,
                                          v1::EngineKind kind, absl::string_view version,
                                          absl::string_view compute_capability) {
  const v1::EnginePreset* newest = nullptr;
  std::vector<const v1::EnginePreset*> candidates;
  for (const v1::EnginePreset& p : presets) {
    if (p.engine() != kind) continue;
    candidates.push_back(&p);
    if (newest == nullptr ||
        CompareVersions(ParseVersion(p.min_version()), ParseVersion(newest->min_version())) > 0) {
      newest = &p;
    }
  }
  if (newest == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no engine preset for engine ", v1::EngineKind_Name(kind)));
  }
  PresetChoice choice;
  const std::vector<int> v = ParseVersion(version);
  if (absl::StripAsciiWhitespace(version).empty()) {
    choice.preset = newest;
    choice.version_assumed = true;
    choice.note = absl::StrCat("no engine version given: newest preset ", newest->id(), " assumed");
    return choice;
  }
  if (v.empty()) {
    return Invalid("engine.version", absl::StrCat("\"", version, "\""),
                   "must contain a dotted version number such as 0.11.0");
  }
  for (const v1::EnginePreset* p : candidates) {
    const bool above_min =
        p->min_version().empty() || CompareVersions(v, ParseVersion(p->min_version())) >= 0;
    const bool below_max =
        p->max_version().empty() || CompareVersions(v, ParseVersion(p->max_version())) < 0;
    if (above_min && below_max) {
      choice.preset = p;
      break;
    }
  }
  if (choice.preset == nullptr) {
    return Invalid("engine.version", absl::StrCat("\"", version, "\""),
                   absl::StrCat("no ", v1::EngineKind_Name(kind), " preset covers this version"));
  }
  const std::vector<int> cc = ParseVersion(compute_capability);
  if (!cc.empty() && !choice.preset->min_compute_capability().empty() &&
      CompareVersions(cc, ParseVersion(choice.preset->min_compute_capability())) < 0) {
    const std::string& id = choice.preset->below_compute_capability_preset();
    const auto fallback = std::find_if(presets.begin(), presets.end(),
                                       [&](const v1::EnginePreset& p) { return p.id() == id; });
    if (fallback == presets.end() || fallback->engine() != kind) {
      return absl::NotFoundError(absl::StrCat("engine preset '", choice.preset->id(),
                                              "' names below_compute_capability_preset '", id,
                                              "', which the catalogue lacks for this engine"));
    }
    choice.note =
        absl::StrCat("compute capability ", compute_capability, " is below ",
                     choice.preset->min_compute_capability(), ", which ", choice.preset->id(),
                     " needs: the engine falls back to the rule of ", fallback->id());
    choice.preset = &*fallback;
    return choice;
  }
  if (choice.preset == newest && !newest->checked_through_version().empty() &&
      CompareVersions(v, ParseVersion(newest->checked_through_version())) > 0) {
    choice.newer_than_newest = true;
    choice.note = absl::StrCat(
        "engine version ", version, " is newer than ", newest->checked_through_version(),
        ", the newest the presets were checked against: using ", newest->id());
  }
  return choice;
}

}  // namespace capplan::service
