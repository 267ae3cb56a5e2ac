#ifndef CAPPLAN_MODEL_MEMORY_MODEL_H_
#define CAPPLAN_MODEL_MEMORY_MODEL_H_

// The per-GPU memory account of an inference deployment, computed the way the
// engines size their KV pool at start-up (DESIGN §3):
//
//   weights      each tensor × its format's bits, sharded as the engine shards
//                it (TP / EP / vocabulary-parallel / replicated, layers by PP);
//   KV per token full attention 2·kv_heads_per_rank·head_dim·bytes per layer;
//                MLA (kv_lora_rank + rope_dim)·bytes per layer on every rank;
//                sliding-window layers per token like full ones, but a request
//                holds at most window (+ batch) tokens of them; linear / Mamba
//                layers a constant state per request;
//   budget       vLLM: CUDA total × gpu_memory_utilization − weights −
//                activation peak − non-torch (older vLLM: − everything the
//                profile run left allocated; from 0.21 also − the estimated
//                CUDA-graph memory; V0 keeps the smallest pool over its
//                workers); SGLang: mem_fraction_static × memory free before
//                loading − weights, split between KV and state (or SWA)
//                pools; TensorRT-LLM: kv_cache_free_gpu_memory_fraction × the
//                memory left after the profiling peak (PyTorch backend: +
//                the temporary profiling pool) or after the engine loads.
//
// Engine behaviour per version (defaults, the budget rule, the fitted
// activation / non-torch / CUDA-graph coefficients) comes in as an
// EngineBehaviour filled from a preset in data/engines; nothing here is
// specific to one engine release.

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "model/architecture.h"
#include "model/weight_format.h"

namespace capplan::model {

struct HardwareSpec {
  std::string name;           // as the driver names it; matched by presets' rules
  std::string architecture;   // "Hopper", "Ampere", ...
  double memory_bytes = 0.0;  // total nvidia-smi reports (usable), per GPU
  // CUDA's own total (cudaMemGetInfo), which vLLM multiplies and TensorRT-LLM
  // calls device total; 0 = unknown (memory_bytes stands in).
  double cuda_total_bytes = 0.0;
  bool unified_memory = false;
  // The GPUs of a node talk over NVLink / xGMI (not PCIe).
  bool fast_intra_node_link = false;
  // The card runs ROCm (HIP runtime, hipBLASLt workspaces, RCCL), whose
  // non-torch memory differs from CUDA's.
  bool rocm = false;
};

// The total an engine's budget starts from: CUDA's, else the usable total.
double CudaTotalBytes(const HardwareSpec& hardware);

struct ParallelismSpec {
  int64_t tp = 1;
  int64_t pp = 1;
  // Expert-parallel size: routed experts are split whole over `ep` ranks and
  // each expert sliced over tp / ep ranks. 1 = experts sliced by TP only.
  int64_t ep = 1;
  int64_t dp = 1;
  bool dp_attention = false;  // attention data-parallel over dp (SGLang)
};

enum class EngineKind { kVllm, kSglang, kTrtllm };

enum class BudgetRule {
  // vLLM before memory_profiling (≤ 0.6.3.x): KV = total × gmu − the fall in
  // free memory the profile run leaves (≤ 0.3.0 from the card's total, so the
  // CUDA context counts; 0.3.1-0.6.3 from the free memory at init, so it
  // does not): weights, activation peak and everything else allocated count
  // against the budget. PlanMemory computes
  // it with the kVllmProfiled formula; the difference (the CUDA context and
  // the rest) is in the preset's fitted non-torch base bytes.
  kVllmTotalMinusPeak,
  // vLLM ≥ 0.6.4 (V0) and V1: KV = total × gmu − weights − torch activation
  // peak − non-torch increase (NCCL, cuBLAS workspaces; not the CUDA context).
  kVllmProfiled,
  // SGLang: KV (+ state) = free-before-load × mem_fraction_static − weights.
  kSglangStatic,
  // TensorRT-LLM PyTorch backend (KvCacheCreator): KV = fraction × (device
  // total − profiling peak + the temporary pool's bytes), the peak being
  // weights + activations of a max_num_tokens dummy pass + non-torch memory
  // (CUDA context, NCCL, CUDA graphs, workspaces).
  kTrtllmFreeFraction,
  // TensorRT-LLM TRT engines (C++ executor): KV = fraction × memory free after
  // the engine (weights), its execution context (activations for
  // max_num_tokens), runtime buffers and decoder (max_batch_size × vocab) load.
  kTrtllmEngineFree,
};

// SGLang's reserve of card memory below a card size (mem_fraction_static =
// round((card − reserve) / card, 3)), or the TP ladder there.
struct MemoryReserveTier {
  double below_card_bytes = 0.0;  // 0 = every larger card
  double reserved_bytes = 0.0;
  double reserved_bytes_per_tp_pp = 0.0;
  bool use_tp_ladder = false;
  double dp_attention_extra_bytes = 0.0;
  double speculative_extra_bytes = 0.0;
};

// SGLang 0.5.3+: the reserve built from the batching knobs.
struct BatchingReserve {
  double base_bytes = 0.0;
  double per_chunk_token_bytes = 0.0;
  int64_t min_chunk_tokens = 0;
  double per_graph_bs_bytes = 0.0;
  double per_tp_pp_bytes = 0.0;
  double per_graph_bs_dp_bytes = 0.0;
  double floor_bytes = 0.0;
  double floor_above_card_bytes = 0.0;
  double speculative_eagle_bytes = 0.0;
  double speculative_standalone_bytes = 0.0;
};

// Defaults an engine picks by card memory (SGLang's chunked_prefill_size and
// cuda_graph_max_bs).
struct CardDefaultTier {
  double below_card_bytes = 0.0;  // 0 = every larger card
  int64_t chunked_prefill_tokens = 0;
  int64_t cuda_graph_max_bs = 0;
  int64_t cuda_graph_max_bs_tp4 = 0;  // at tp >= 4; 0 = cuda_graph_max_bs
};

// Kernel alignment of MoE expert weights for a format (e.g. vLLM's Marlin
// MXFP4 kernel pads the expert width to 128 and hidden to 256).
// A rule with architectures or device_names applies only to matching cards
// (case-insensitive; a device name matches as a substring of the card's
// name); the first applicable rule for a format wins.
struct MoePaddingRule {
  WeightFormat format = WeightFormat::kNative;
  int64_t hidden_multiple = 1;
  int64_t intermediate_multiple = 1;
  std::vector<std::string> architectures;
  std::vector<std::string> device_names;
};

// How one engine release sizes memory. Filled from a data/engines preset.
struct EngineBehaviour {
  std::string preset_id;
  // Presets of one group share their fitted sampler_logit_copies (empty = own).
  std::string sampler_fit_group;
  // The sampler copies its profile-run code holds (0 = not counted): the
  // fit's prior.
  double sampler_logit_copies_prior = 0;
  // Deployments on the PyTorch-native top-k/top-p sampler where the release's
  // default is fused: the group whose native copies apply and its counted
  // prior; empty = native is the default (sampler_logit_copies applies).
  std::string native_sampler_fit_group;
  // Presets of one group share their fitted non_torch_base_bytes (empty = the
  // presets of one budget rule do).
  std::string non_torch_base_fit_group;
  // Presets of one group share their fitted activation_token_scale (empty =
  // the engine family's presets do).
  std::string activation_fit_group;
  double native_sampler_logit_copies_prior = 0;
  // The native prior counts every tensor alive at the peak: held exactly by
  // the fit, not moved by the logs.
  bool native_sampler_logit_copies_exact = false;
  EngineKind engine = EngineKind::kVllm;
  BudgetRule budget_rule = BudgetRule::kVllmProfiled;

  // --- defaults
  // gpu_memory_utilization / mem_fraction_static / kv_cache_free_gpu_memory_fraction
  double default_memory_fraction = 0.9;
  // SGLang picks mem_fraction_static by TP: the first pair whose min_tp <= tp
  // (pairs sorted by min_tp descending) wins over default_memory_fraction.
  std::vector<std::pair<int64_t, double>> memory_fraction_by_min_tp;
  int64_t default_block_size = 16;
  int64_t default_max_num_batched_tokens = 2048;
  int64_t default_max_num_seqs = 256;
  // vLLM V1 raises both defaults on large cards (≥ threshold bytes), except on
  // cards whose name contains one of the excluded substrings.
  double high_memory_threshold_bytes = 0.0;  // 0 = no such rule
  int64_t high_memory_max_num_batched_tokens = 0;
  int64_t high_memory_max_num_seqs = 0;
  std::vector<std::string> high_memory_excluded_names;
  bool chunked_prefill_default = true;
  // V0: chunked prefill switches itself on above this max_model_len (0 = never).
  int64_t chunked_prefill_auto_above_max_model_len = 0;
  // V0 without chunked prefill profiles max(max_model_len, this) tokens.
  int64_t unchunked_min_batched_tokens = 2048;
  int64_t cudagraph_max_capture_size = 512;
  int64_t vocab_padding_multiple = 64;
  // V1's hybrid allocator: sliding-window layers keep window (+ batch) tokens.
  bool hybrid_kv_cache_groups = false;
  // Its printed token count: the concurrency for max_model_len-token
  // requests x max_model_len (else blocks / groups x block).
  bool hybrid_tokens_from_concurrency = false;
  // Blocks per request of a recurrent-state group with prefix caching on.
  int64_t state_blocks_with_prefix_caching = 1;
  // The recurrent state in the dtype the checkpoint states (its
  // linear-attention recurrent_state_bytes), not ssm_state_bytes.
  bool state_dtype_from_checkpoint = false;
  double conv_state_bytes = 2.0;
  double ssm_state_bytes = 4.0;
  double mamba_full_memory_ratio = 0.9;  // SGLang split of state vs KV memory
  std::vector<MoePaddingRule> moe_padding;
  // Every worker sizes its pool; the engine keeps the smallest (the driver
  // rank's, which holds driver_rank_extra_non_torch_bytes more).
  bool kv_pool_min_over_ranks = false;
  bool kv_tokens_round_up_to_block = false;  // TensorRT-LLM max_tokens
  // TensorRT-LLM 1.1+: the profiling pool holds a block per batch slot.
  bool profile_pool_block_per_batch_slot = false;
  // SGLang default mem_fraction_static (ResolveKnobs): reserve tiers, or the
  // batching reserve when has_batching_reserve; the TP ladder otherwise.
  std::vector<MemoryReserveTier> memory_reserve_tiers;
  bool has_batching_reserve = false;
  BatchingReserve batching_reserve;
  std::vector<CardDefaultTier> card_default_tiers;
  int64_t mamba_default_slots = 0;     // SGLang 0.5.2 fixed state slots; 0 = ratio
  double swa_full_tokens_ratio = 0.0;  // SGLang SWA pool split; 0 = none
  bool dp_attention_divides_chunked_prefill = false;
  // vLLM multimodal encoder profiling tokens (0 = not modelled).
  int64_t multimodal_profile_tokens = 0;
  // V1's multimodal profile holds the dummy encoder outputs, padded to the
  // encoder budget, through the dummy forward and sampler
  // (MultimodalProfileHoldBytes).
  bool mm_profile_pads_encoder_cache = false;
  // The GPTQ GEMM reconstructs each weight in fp16 before a cuBLAS GEMM on
  // batches of more than 50 rows (exllama gptq_gemm): at the activation peak
  // (the down projection's output) the dequantised down projection is alive.
  bool gptq_gemm_dequantizes_weight = false;
  // The pool comes out of the device's free memory after profiling, so
  // memory held by other processes (a stated free memory at start below the
  // card's total less the engine's own non-torch memory) lowers it.
  bool pool_lowered_by_other_processes = false;
  // The vision tower's linears are TP-sharded (column / row as in the text
  // model); false = replicated on every rank.
  bool vision_encoder_tp_sharded = false;
  // Hidden-size widths beside the MLP's at the profiled peak, by the model's
  // architecture class (ActivationHiddenCopiesFor).
  struct HiddenCopiesRule {
    std::vector<std::string> architecture_classes;  // empty = any
    int64_t hidden_copies = 2;
  };
  std::vector<HiddenCopiesRule> activation_hidden_copies;
  // The caching allocator's rounding of the loaded weights (0 = none).
  double allocator_round_bytes = 0.0;
  double allocator_large_from_bytes = 0.0;
  bool allocator_counts_reserved = false;
  // SGLang max_running_requests default: tokens / context × this, at least
  // min_running_requests, at most default_max_num_seqs (0 = the default).
  int64_t running_requests_per_context = 0;
  int64_t min_running_requests = 0;

  // --- fitted coefficients (data/engines, produced by scripts/fit_engine_memory)
  // Activation bytes per batched token = scale × activation width × bytes.
  double activation_token_scale = 1.0;
  // Sampler warm-up: copies of the fp32 [max_num_seqs, vocab] logits alive at
  // the peak.
  double sampler_logit_copies = 0.0;
  double native_sampler_logit_copies = 0.0;  // native_sampler_fit_group's
  double non_torch_base_bytes = 0.0;
  double non_torch_per_extra_rank_bytes = 0.0;
  // Multi-GPU on a fast link: one flat amount instead of the per-rank term
  // (EnginePreset.non_torch_flat_on_fast_link).
  bool non_torch_flat_on_fast_link = false;
  // The flat amount on every link (EnginePreset.non_torch_flat_on_every_link).
  bool non_torch_flat_on_every_link = false;
  double fast_link_multi_gpu_non_torch_bytes = 0.0;
  double cuda_graph_bytes_per_capture_layer = 0.0;
  bool cuda_graph_in_kv_budget = false;
  // Added to non-torch on unified-memory devices (host growth counts there).
  double unified_memory_non_torch_bytes = 0.0;
  // Extra non-torch bytes on ROCm cards (fitted per engine family).
  double rocm_non_torch_bytes = 0.0;
  double driver_rank_extra_non_torch_bytes = 0.0;  // kv_pool_min_over_ranks
  // TensorRT-LLM engines: fp32 [max_batch_size, vocab] decoder/runtime copies.
  double decoder_logit_copies = 0.0;
};

enum class SpeculativeMethod { kNone, kMtp, kEagle, kDraftModel, kNgram };

// The deployment's engine knobs; 0 / nullopt = the engine's default.
struct EngineSettings {
  double memory_fraction = 0.0;
  int64_t max_model_len = 0;
  int64_t max_num_batched_tokens = 0;
  int64_t max_num_seqs = 0;
  int64_t block_size = 0;
  bool enforce_eager = false;
  int64_t max_cudagraph_batch_size = 0;
  // nullopt = auto: the checkpoint's stated KV dtype (Quantization), else
  // the model's activation dtype.
  std::optional<NumberType> kv_cache_dtype;
  std::optional<bool> enable_chunked_prefill;
  // nullopt = the engine's default (taken as off for hybrid recurrent models,
  // as vLLM 0.19 ran them).
  std::optional<bool> enable_prefix_caching;
  SpeculativeMethod speculative_method = SpeculativeMethod::kNone;
  int64_t num_speculative_tokens = 0;
  // The install runs the PyTorch-native top-k/top-p sampler (vLLM 0.9-0.10
  // without FlashInfer); false = the release's default.
  bool native_sampler = false;
  // Memory free on each GPU when the engine starts, after its CUDA context
  // (stated by the user or the log); 0 = unknown: the CUDA total less the
  // engine's non-torch memory. SGLang's budget takes its fraction of it.
  double free_memory_at_start_bytes = 0.0;
  // A vision-language checkpoint served without its vision tower.
  bool language_model_only = false;
};

// Whether `settings` put the dummy sampler run on the preset's native group
// (native_sampler_logit_copies) rather than its default copies.
bool UsesNativeSamplerGroup(const EngineBehaviour& e, const EngineSettings& settings);

struct MemoryPlanInput {
  ModelArchitecture arch;
  Quantization quantization;
  HardwareSpec hardware;
  ParallelismSpec parallelism;
  EngineBehaviour engine;
  EngineSettings settings;
};

struct GpuAccount {
  double weights_bytes = 0.0;
  double activation_peak_bytes = 0.0;
  double non_torch_bytes = 0.0;
  double cuda_graph_bytes = 0.0;
  double kv_pool_bytes = 0.0;
  double state_pool_bytes = 0.0;
  double used_bytes = 0.0;
  double capacity_bytes = 0.0;
};

// A plan fits only when every term fits: the budget's terms leave room for
// the pools, the pools hold one request, and the whole account (with what
// lives outside the budget: CUDA graphs, and SGLang's activations) stays
// within the card. When it does not, the binding term is the largest of the
// terms that overflow.
enum class BindingConstraint {
  kNone,
  kWeights,      // the account exceeds the budget; the weights are its largest term
  kKvPool,       // the pool cannot hold one request of max_model_len
  kStateSlots,   // no room for a single request's recurrent state
  kMaxNumSeqs,   // fits; concurrency limited by the engine's sequence limit
  kActivations,  // ... the activation peak is the largest term
  kCudaGraphs,   // ... the CUDA graphs are
  kNonTorch,     // ... the non-torch memory is
  kOtherProcesses,  // the account exceeds what other processes leave of the card
};
const char* BindingConstraintName(BindingConstraint c);

// How the pool is laid out, enough to count requests of any length.
struct KvLayout {
  int64_t blocks = 0;
  int64_t block_size = 1;
  int64_t full_groups = 1;    // groups needing cdiv(len, block) blocks per request
  int64_t window_groups = 0;  // sliding-window groups: min(window_blocks, cdiv(len, block))
  int64_t window_blocks = 0;
  // Blocks per request of the recurrent-state groups: one per group, two
  // with vLLM's Mamba 'align' mode (prefix caching on).
  int64_t state_groups = 0;
  std::optional<int64_t> state_slots;  // separate state pool (SGLang)
  // A separate sliding-window pool (SGLang): its tokens and the window.
  std::optional<int64_t> window_pool_tokens;
  int64_t window_tokens = 0;
  // Groups sharing the block pool (vLLM's hybrid allocator; kv_pool_tokens
  // = blocks ÷ groups × block_size); 1 for a plain paged pool.
  int64_t groups = 1;
};

struct MemoryPlan {
  GpuAccount per_gpu;
  KvLayout layout;  // the binding (smallest-pool) GPU
  std::array<double, kNumComponents> weights_by_component_bytes{};
  double kv_bytes_per_token = 0.0;  // per GPU, all its attention layers
  // The part of kv_bytes_per_token in sliding-window layers, which keep at
  // most the model's window of a request's tokens.
  double window_kv_bytes_per_token = 0.0;
  double state_bytes_per_request = 0.0;  // per GPU
  // Tokens the pool holds (what request slots are counted from): as the
  // engine reports it, except where it prints a derived figure.
  int64_t kv_pool_tokens = 0;
  // What the engine prints ("GPU KV cache size", "max_total_num_tokens",
  // ...): kv_pool_tokens, except vLLM 0.21+ on hybrid models, which print
  // the concurrency at max_model_len x max_model_len. What a start-up log
  // is compared with.
  int64_t reported_kv_pool_tokens = 0;
  int64_t kv_blocks = 0;
  int64_t state_slots = 0;  // hybrid models: requests whose state fits
  double max_concurrency_at_max_model_len = 0.0;
  bool fits = false;
  BindingConstraint binding_constraint = BindingConstraint::kNone;
  double shortfall_bytes = 0.0;
  // The knobs as resolved from settings and the engine defaults.
  double memory_fraction = 0.0;
  int64_t max_model_len = 0;
  int64_t max_num_batched_tokens = 0;
  int64_t profiled_tokens = 0;
  int64_t max_num_seqs = 0;
  int64_t block_size = 0;
  int pipeline_stage = 0;  // which PP stage the account describes
  // TensorRT-LLM PyTorch backend: the temporary pool of the profiling pass.
  int64_t profile_pool_tokens = 0;
  int64_t cuda_graph_max_bs = 0;  // resolved capture limit
  std::vector<std::string> notes;
};

// Requests of `sequence_tokens` each that the pool holds at once (vLLM's
// "Maximum concurrency for N tokens per request"; for the workload's mean
// length as well as max_model_len).
double MaxConcurrencyAt(const KvLayout& layout, int64_t sequence_tokens);

// Concurrent sequences of `sequence_tokens` each that the deployment holds:
// the KV pool's (MaxConcurrencyAt), capped by max_num_seqs and, for hybrid
// models, by the state slots.
double MaxConcurrencyAtSequence(const MemoryPlan& plan, int64_t sequence_tokens);

// Checks the parallelism against the architecture: "parallelism.tp = 3; must
// divide num_attention_heads = 64", EP dividing the experts, fractions in
// (0, 1], max_model_len within the native context (or rope scaling).
absl::Status ValidateMemoryPlanInput(const MemoryPlanInput& input);

// The behaviour on one card: keeps the first padding rule per format that
// applies to `hardware`, unconditional from then on. PlanMemory calls it.
EngineBehaviour ResolveForHardware(const EngineBehaviour& engine, const HardwareSpec& hardware);

// Weights one GPU of pipeline stage `stage` holds, by component, bytes.
// Padding rules with card filters are ignored: resolve them first.
std::array<double, kNumComponents> WeightsPerGpuByComponent(const ModelArchitecture& arch,
                                                            const Quantization& quantization,
                                                            const ParallelismSpec& parallelism,
                                                            const EngineBehaviour& engine,
                                                            int stage);

// Layers [first, last) of pipeline stage `stage` (engines split evenly; the
// remainder goes to the last stages).
std::pair<int, int> PipelineStageLayers(int num_layers, int pp, int stage);

// KV cache bytes per token on one GPU for layers [first, last).
double KvBytesPerTokenPerGpu(const ModelArchitecture& arch, const ParallelismSpec& parallelism,
                             double kv_element_bytes, int first, int last);

absl::StatusOr<MemoryPlan> PlanMemory(const MemoryPlanInput& input);

// The weight tensors of an architecture tallied by shape: each distinct
// tensor (component, shape, copies, sharding) once, with the layers holding it,
// so a stage's weights are a sum over a few dozen shapes rather than over
// every tensor of every layer.
struct WeightTally {
  TensorGroup tensor;  // `layer` is the first holder's
  // Sorted, one entry per holder in the layer stack (MTP layers: >= num_layers).
  std::vector<int> layers;
  int64_t unlayered = 0;  // copies outside the layer stack (embeddings, LM head, ...)
};
std::vector<WeightTally> TallyWeightTensors(const ModelArchitecture& arch);

// A model prepared for many memory plans (a search's candidates): the
// architecture and quantization checked, the engine resolved for the card and
// the weight tensors tallied once (with and without the MTP layers), so that
// a plan costs its arithmetic only. Plan(p, s) equals PlanMemory of the base
// input with that parallelism and those settings.
class PreparedMemoryModel {
 public:
  // INVALID_ARGUMENT as ValidateMemoryPlanInput for the architecture and
  // quantization; the base's parallelism and settings are not used.
  static absl::StatusOr<PreparedMemoryModel> Create(MemoryPlanInput base);

  absl::StatusOr<MemoryPlan> Plan(const ParallelismSpec& parallelism,
                                  const EngineSettings& settings) const;

  // The base input, its engine resolved for the card.
  const MemoryPlanInput& base() const { return base_; }
  // ComputeParameterCounts(base().arch).
  const ParameterCounts& parameter_counts() const { return counts_; }

 private:
  MemoryPlanInput base_;
  ParameterCounts counts_;
  bool high_memory_ = false;
  std::vector<WeightTally> tallies_;      // no MTP layers loaded
  std::vector<WeightTally> mtp_tallies_;  // the MTP layers speculative decoding loads
};

// The pool budget (KV and state bytes the engine sized its pools from) at
// which `input`'s plan reports `kv_pool_tokens` as the engine prints it
// (MemoryPlan.reported_kv_pool_tokens): the inverse of the pool
// sizing on the binding stage, for reading an engine log's pool back into
// bytes. InvalidArgument for a non-positive count.
absl::StatusOr<double> PoolBytesForTokens(const MemoryPlanInput& input, int64_t kv_pool_tokens);

// ---------------------------------------------------------------- calibration
//
// The non-KV overhead a vLLM-style engine subtracts is
//   max(activation_token_scale · T, sampler_logit_copies · S) + b + r · R
// (+ u on unified memory, + d on the driver rank of a multi-rank V0 / TRT
// engine), SGLang's memory lost before loading is b + r · R, TensorRT-LLM's
// profiling peak above the weights a · T + b + r · R, and its engines'
// overhead a · T + c · S + b + r · R + d; where the preset's flat rule holds
// (SGLang on a fast link, vLLM on every link), r · R is one flat amount f
// instead. The terms per unit coefficient of one deployment:
struct OverheadTerms {
  double token_phase_bytes = 0.0;    // T: activation at activation_token_scale = 1
  double sampler_phase_bytes = 0.0;  // S: fp32 logits at sampler_logit_copies = 1
  double extra_ranks = 0.0;          // R: tp · pp − 1 (0 where the flat term replaces it)
  double fast_link_multi_gpu = 0.0;  // 1: multi-GPU under the preset's flat rule (f)
  double capture_layers = 0.0;       // CUDA-graph captures × layers on the GPU
  double unified = 0.0;              // 1 on a unified-memory device
  double rocm = 0.0;                 // 1 on a ROCm card
  double driver_rank = 0.0;          // 1 when the pool is the driver rank's
  // Known bytes with no coefficient (the multimodal profile's held encoder
  // outputs): taken off the observed overhead before the fit.
  double fixed_bytes = 0.0;
};
absl::StatusOr<OverheadTerms> ComputeOverheadTerms(const MemoryPlanInput& input);

// What vLLM V1's multimodal profile holds beside the activation peak when the
// preset pads the dummy encoder outputs (mm_profile_pads_encoder_cache):
// K × B × D + N × D activation elements plus the dummy pixels, with B =
// max(profiled tokens, the item's placeholder tokens), K = B ÷ placeholder
// tokens (at least 1), N the item's embedding rows, D = out_hidden_size ×
// (1 + deepstack mergers), pixels N × merge² patches × channels × temporal ×
// patch². 0 without a vision tower or without the item sizes.
double MultimodalProfileHoldBytes(const ModelArchitecture& arch, const EngineBehaviour& engine,
                                  int64_t profiled_tokens);

// One engine log: its terms and the overhead the engine subtracted (vLLM:
// total × gmu − weights − KV; SGLang: total − free-before-load, which is
// (weights + KV) / mem_fraction_static subtracted from total).
struct OverheadObservation {
  OverheadTerms terms;
  double overhead_bytes = 0.0;
  int sampler_group = -1;  // which sampler_logit_copies applies; -1 = none
};

struct OverheadFitOptions {
  int num_sampler_groups = 0;
  double activation_token_scale = 1.0;  // held fixed (fitted separately)
  bool fit_per_rank = true;
};

struct OverheadFit {
  std::vector<double> sampler_logit_copies;  // per group
  double non_torch_base_bytes = 0.0;
  double non_torch_per_extra_rank_bytes = 0.0;
  double rms_residual_bytes = 0.0;
  int rank = 0;  // numerical rank of the final design matrix
};

// Non-negative least squares (rank-revealing, complete orthogonal
// decomposition) with the max() resolved by iterating which phase dominates
// each observation. Columns that come out negative are pinned at zero.
absl::StatusOr<OverheadFit> FitOverhead(const std::vector<OverheadObservation>& observations,
                                        const OverheadFitOptions& options);

// y ≈ k · x through the origin, least squares (CUDA-graph bytes per capture
// layer, activation scale); InvalidArgument when every x is zero.
absl::StatusOr<double> FitProportional(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_MEMORY_MODEL_H_
