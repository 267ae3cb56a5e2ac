#include "service/translate/hf_config.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "base/status_macros.h"
#include "google/protobuf/struct.pb.h"
#include "service/translate/json_reader.h"

namespace capplan::service {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

constexpr char kDocument[] = "config.json";
constexpr size_t kMaxConfigBytes = size_t{8} << 20;
constexpr int64_t kMaxLayers = 100000;

// Which model component a module-name pattern (modules_to_not_convert,
// ignore, exclude_modules) refers to; nullopt for patterns we do not map.
std::optional<v1::ModelComponent> ComponentOfPattern(absl::string_view raw) {
  const std::string p = absl::AsciiStrToLower(raw);
  // Norms before attention: "post_attention_layernorm" is a norm.
  if (absl::StrContains(p, "norm")) return v1::MODEL_COMPONENT_NORMS;
  if (absl::StrContains(p, "visual") || absl::StrContains(p, "vision")) {
    return v1::MODEL_COMPONENT_VISION_ENCODER;
  }
  if (absl::StrContains(p, "lm_head")) return v1::MODEL_COMPONENT_LM_HEAD;
  if (absl::StrContains(p, "embed")) return v1::MODEL_COMPONENT_EMBEDDINGS;
  if (absl::StrContains(p, "mtp") || absl::StrContains(p, "nextn")) {
    return v1::MODEL_COMPONENT_DRAFT;
  }
  if (absl::StrContains(p, "shared_expert")) return v1::MODEL_COMPONENT_SHARED_EXPERTS;
  if (absl::StrContains(p, "linear_attn")) return v1::MODEL_COMPONENT_LINEAR_ATTENTION;
  if (absl::StrContains(p, "attn") || absl::StrContains(p, "attention")) {
    return v1::MODEL_COMPONENT_ATTENTION;
  }
  if (absl::StrContains(p, "router") || absl::EndsWith(p, "mlp.gate") ||
      absl::StrContains(p, "mlp.gate$") || absl::StrContains(p, "gate.") || p == "gate") {
    return v1::MODEL_COMPONENT_ROUTER;
  }
  if (absl::StrContains(p, "experts")) return v1::MODEL_COMPONENT_EXPERTS;
  if (absl::StrContains(p, "mlp") || absl::StrContains(p, "_proj")) {
    return v1::MODEL_COMPONENT_DENSE_MLP;
  }
  return std::nullopt;
}

absl::Status AddPatterns(const JsonReader& r, absl::string_view key, std::set<int>& out) {
  absl::StatusOr<const ListValue*> list = r.List(key);
  if (!list.ok()) return list.status();
  if (*list == nullptr) return absl::OkStatus();
  for (int i = 0; i < (*list)->values_size(); ++i) {
    const Value& v = (*list)->values(i);
    if (v.kind_case() != Value::kStringValue) {
      return r.Error(absl::StrCat(key, "[", i, "]"), v, "must be a module name or pattern");
    }
    if (auto c = ComponentOfPattern(v.string_value())) out.insert(*c);
  }
  return absl::OkStatus();
}

// ------------------------------------------------------------ quantization

absl::Status ReadAwqOrGptq(const JsonReader& r, const std::string& method, v1::Quantization* out,
                           std::set<int>* unquantized) {
  int64_t bits = 0;
  CAPPLAN_ASSIGN_OR_RETURN(bits, r.Int("bits", 1, 4));
  int64_t group = 0;
  CAPPLAN_ASSIGN_OR_RETURN(group, r.Int("group_size", -1, 128));
  if (bits == 4) {
    out->set_format(method == "awq" ? v1::WEIGHT_FORMAT_INT4_AWQ : v1::WEIGHT_FORMAT_INT4_GPTQ);
  } else if (bits == 8 && method == "gptq") {
    out->set_format(v1::WEIGHT_FORMAT_INT8);
  } else {
    return r.Error("bits", *r.Find("bits"),
                   method == "awq" ? "awq supports 4 bits" : "gptq supports 4 or 8 bits");
  }
  if (group == 0) return r.Error("group_size", *r.Find("group_size"), "must be -1 or positive");
  if (group > 0) out->set_group_size(static_cast<uint32_t>(group));
  return AddPatterns(r, "modules_to_not_convert", *unquantized);
}

absl::Status ReadFp8(const JsonReader& r, v1::Quantization* out, std::set<int>* unquantized) {
  const ListValue* block = nullptr;
  CAPPLAN_ASSIGN_OR_RETURN(block, r.List("weight_block_size"));
  if (block != nullptr && block->values_size() > 0) {
    const Value& edge = block->values(0);
    if (edge.kind_case() != Value::kNumberValue || edge.number_value() < 1 ||
        edge.number_value() > 65536) {
      return r.Error("weight_block_size[0]", edge, "must be a positive block edge");
    }
    out->set_format(v1::WEIGHT_FORMAT_FP8_BLOCK);
    out->set_group_size(static_cast<uint32_t>(edge.number_value()));
  } else {
    out->set_format(v1::WEIGHT_FORMAT_FP8_PER_TENSOR);
  }
  for (const char* key : {"modules_to_not_convert", "ignored_layers"}) {
    CAPPLAN_RETURN_IF_ERROR(AddPatterns(r, key, *unquantized));
  }
  return absl::OkStatus();
}

absl::Status ReadMxfp4(const JsonReader& r, v1::Quantization* out, std::set<int>* unquantized) {
  out->set_format(v1::WEIGHT_FORMAT_MXFP4);
  out->set_group_size(32);
  // The engines apply mxfp4 to fused-MoE experts only; everything else stays
  // in the native dtype.
  for (int c : {v1::MODEL_COMPONENT_ATTENTION, v1::MODEL_COMPONENT_DENSE_MLP,
                v1::MODEL_COMPONENT_SHARED_EXPERTS, v1::MODEL_COMPONENT_LINEAR_ATTENTION,
                v1::MODEL_COMPONENT_DRAFT}) {
    unquantized->insert(c);
  }
  return AddPatterns(r, "modules_to_not_convert", *unquantized);
}

// The weights of compressed-tensors' first config group (by name).
absl::StatusOr<const Struct*> FirstGroupWeights(const JsonReader& r, std::string* weights_path) {
  const Struct* groups = nullptr;
  CAPPLAN_ASSIGN_OR_RETURN(groups, r.Object("config_groups"));
  if (groups == nullptr || groups->fields().empty()) {
    return r.Missing("config_groups", "required for compressed-tensors");
  }
  std::vector<std::string> names;
  for (const auto& [name, unused] : groups->fields()) names.push_back(name);
  std::sort(names.begin(), names.end());
  const Value& g = groups->fields().at(names.front());
  if (g.kind_case() != Value::kStructValue) {
    return r.Error(absl::StrCat("config_groups.", names.front()), g, "must be an object");
  }
  const std::string group_path = absl::StrCat(r.prefix(), "config_groups.", names.front(), ".");
  const JsonReader gr(g.struct_value(), kDocument, group_path);
  const Struct* weights = nullptr;
  CAPPLAN_ASSIGN_OR_RETURN(weights, gr.Object("weights"));
  if (weights == nullptr) return gr.Missing("weights", "required for compressed-tensors");
  *weights_path = absl::StrCat(group_path, "weights.");
  return weights;
}

absl::Status ReadCompressedTensors(const JsonReader& r, v1::Quantization* out,
                                   std::set<int>* unquantized) {
  std::string weights_path;
  const Struct* weights = nullptr;
  CAPPLAN_ASSIGN_OR_RETURN(weights, FirstGroupWeights(r, &weights_path));
  const JsonReader wr(*weights, kDocument, weights_path);
  int64_t bits = 0, group = 0;
  CAPPLAN_ASSIGN_OR_RETURN(bits, wr.RequiredInt("num_bits", 1, "required"));
  std::string type, strategy;
  CAPPLAN_ASSIGN_OR_RETURN(type, wr.String("type", "int"));
  bool symmetric = true;
  CAPPLAN_ASSIGN_OR_RETURN(symmetric, wr.Bool("symmetric", true));
  CAPPLAN_ASSIGN_OR_RETURN(group, wr.Int("group_size", 0, 0));
  CAPPLAN_ASSIGN_OR_RETURN(strategy, wr.String("strategy", ""));
  if (bits == 4 && type == "int") {
    out->set_format(symmetric ? v1::WEIGHT_FORMAT_INT4_SYMMETRIC : v1::WEIGHT_FORMAT_INT4_AWQ);
    if (group > 0) out->set_group_size(static_cast<uint32_t>(group));
  } else if (bits == 4 && type == "float") {
    out->set_format(v1::WEIGHT_FORMAT_NVFP4);
    out->set_group_size(16);
  } else if (bits == 8 && type == "float") {
    out->set_format(strategy == "block"     ? v1::WEIGHT_FORMAT_FP8_BLOCK
                    : strategy == "channel" ? v1::WEIGHT_FORMAT_FP8_PER_CHANNEL
                                            : v1::WEIGHT_FORMAT_FP8_PER_TENSOR);
    if (strategy == "block") out->set_group_size(128);
  } else if (bits == 8 && type == "int") {
    out->set_format(v1::WEIGHT_FORMAT_INT8);
  } else {
    return wr.Error("num_bits", *wr.Find("num_bits"),
                    absl::StrCat("unsupported with type \"", type, "\" (4 or 8 bits)"));
  }
  return AddPatterns(r, "ignore", *unquantized);
}

absl::Status ReadModelopt(const JsonReader& r, const std::string& method, v1::Quantization* out,
                          std::set<int>* unquantized) {
  std::string algo;
  CAPPLAN_ASSIGN_OR_RETURN(algo, r.String("quant_algo", method == "modelopt_fp4" ? "NVFP4" : ""));
  algo = absl::AsciiStrToUpper(algo);
  if (algo == "NVFP4") {
    out->set_format(v1::WEIGHT_FORMAT_NVFP4);
    out->set_group_size(16);
  } else if (algo == "FP8") {
    out->set_format(v1::WEIGHT_FORMAT_FP8_PER_TENSOR);
  } else {
    const Value* v = r.Find("quant_algo");
    if (v == nullptr) return r.Missing("quant_algo", "required for modelopt (NVFP4 or FP8)");
    return r.Error("quant_algo", *v, "must be NVFP4 or FP8");
  }
  for (const char* key : {"exclude_modules", "ignore", "modules_to_not_convert"}) {
    CAPPLAN_RETURN_IF_ERROR(AddPatterns(r, key, *unquantized));
  }
  return absl::OkStatus();
}

// A KV dtype name as the checkpoints write it: "FP8" (ModelOpt).
absl::Status KvDtypeFromName(const JsonReader& r, absl::string_view key, const Value& v,
                             v1::Quantization* out) {
  if (v.kind_case() != Value::kStringValue) return r.Error(key, v, "must be a string");
  const std::string name = absl::AsciiStrToUpper(v.string_value());
  if (name.empty()) return absl::OkStatus();
  if (name != "FP8") return r.Error(key, v, "supported KV cache dtypes: FP8");
  out->set_kv_cache_dtype(v1::KV_CACHE_DTYPE_FP8);
  return absl::OkStatus();
}

// The KV cache dtype the checkpoint states: ModelOpt's kv_cache_quant_algo, or
// kv_cache_scheme (compressed-tensors {num_bits: 8, type: "float"}; ModelOpt's
// config.json export may write the algorithm's name there). The engines
// (vLLM, SGLang, TensorRT-LLM) take it when their kv_cache_dtype is auto.
absl::Status ReadKvCacheDtype(const JsonReader& r, v1::Quantization* out) {
  if (const Value* v = r.Find("kv_cache_quant_algo")) {
    CAPPLAN_RETURN_IF_ERROR(KvDtypeFromName(r, "kv_cache_quant_algo", *v, out));
  }
  const Value* scheme = r.Find("kv_cache_scheme");
  if (scheme == nullptr) return absl::OkStatus();
  if (scheme->kind_case() == Value::kStringValue) {
    return KvDtypeFromName(r, "kv_cache_scheme", *scheme, out);
  }
  if (scheme->kind_case() != Value::kStructValue) {
    return r.Error("kv_cache_scheme", *scheme, "must be an object or null");
  }
  const JsonReader sr(scheme->struct_value(), kDocument, r.Path("kv_cache_scheme."));
  int64_t bits = 0;
  CAPPLAN_ASSIGN_OR_RETURN(bits, sr.RequiredInt("num_bits", 1, "required in kv_cache_scheme"));
  std::string type;
  CAPPLAN_ASSIGN_OR_RETURN(type, sr.String("type", "int"));
  if (bits != 8 || absl::AsciiStrToLower(type) != "float") {
    return sr.Error(
        "num_bits", *sr.Find("num_bits"),
        absl::StrCat("with type \"", type, "\": supported KV cache schemes: 8-bit float (FP8)"));
  }
  out->set_kv_cache_dtype(v1::KV_CACHE_DTYPE_FP8);
  return absl::OkStatus();
}

absl::StatusOr<v1::Quantization> ReadQuantization(const Struct& top) {
  const Struct* q = &top;
  std::string prefix = "quantization_config.";
  // ModelOpt's hf_quant_config.json, handed over as the quantization config:
  // {"producer": {...}, "quantization": {"quant_algo": ..., ...}}.
  auto nested = top.fields().find("quantization");
  if (!top.fields().count("quant_method") && nested != top.fields().end() &&
      nested->second.kind_case() == Value::kStructValue) {
    q = &nested->second.struct_value();
    prefix = "quantization_config.quantization.";
  }
  const JsonReader r(*q, kDocument, prefix);
  v1::Quantization out;
  std::string method;
  CAPPLAN_ASSIGN_OR_RETURN(method, r.String("quant_method", q == &top ? "" : "modelopt"));
  method = absl::AsciiStrToLower(method);
  out.set_method(method);
  std::set<int> unquantized;
  if (method == "awq" || method == "gptq") {
    CAPPLAN_RETURN_IF_ERROR(ReadAwqOrGptq(r, method, &out, &unquantized));
  } else if (method == "fp8") {
    CAPPLAN_RETURN_IF_ERROR(ReadFp8(r, &out, &unquantized));
  } else if (method == "mxfp4") {
    CAPPLAN_RETURN_IF_ERROR(ReadMxfp4(r, &out, &unquantized));
  } else if (method == "compressed-tensors") {
    CAPPLAN_RETURN_IF_ERROR(ReadCompressedTensors(r, &out, &unquantized));
  } else if (method == "modelopt" || method == "modelopt_fp4") {
    CAPPLAN_RETURN_IF_ERROR(ReadModelopt(r, method, &out, &unquantized));
  } else {
    const Value* v = r.Find("quant_method");
    if (v == nullptr) return r.Missing("quant_method", "required in quantization_config");
    return r.Error("quant_method", *v,
                   "supported: awq, gptq, fp8, mxfp4, compressed-tensors, modelopt");
  }
  for (int c : unquantized) out.add_unquantized(static_cast<v1::ModelComponent>(c));
  CAPPLAN_RETURN_IF_ERROR(ReadKvCacheDtype(r, &out));
  return out;
}

// ------------------------------------------------------------------ layers

struct LayerKinds {
  std::vector<v1::AttentionKind> attention;
  std::vector<v1::MlpKind> mlp;
};

// Runs of equal layers, in order: the stack as LayerSpecs.
std::vector<v1::LayerSpec> RunsOf(const LayerKinds& kinds) {
  std::vector<v1::LayerSpec> runs;
  for (size_t i = 0; i < kinds.attention.size(); ++i) {
    if (!runs.empty() && runs.back().attention() == kinds.attention[i] &&
        runs.back().mlp() == kinds.mlp[i]) {
      runs.back().set_count(runs.back().count() + 1);
      continue;
    }
    v1::LayerSpec& spec = runs.emplace_back();
    spec.set_count(1);
    spec.set_attention(kinds.attention[i]);
    spec.set_mlp(kinds.mlp[i]);
  }
  return runs;
}

bool SameSpec(const v1::LayerSpec& a, const v1::LayerSpec& b) {
  return a.count() == b.count() && a.attention() == b.attention() && a.mlp() == b.mlp();
}

// How often runs[at, at + period) repeats back to back from `at`.
size_t Repeats(const std::vector<v1::LayerSpec>& runs, size_t at, size_t period) {
  size_t n = 1;
  while (at + (n + 1) * period <= runs.size()) {
    for (size_t k = 0; k < period; ++k) {
      if (!SameSpec(runs[at + k], runs[at + n * period + k])) return n;
    }
    ++n;
  }
  return n;
}

// The layer stack as blocks: a pattern of runs repeated back to back (3
// linear-attention layers + 1 full attention, × 12) is one block with its
// repeat; what repeats nowhere is a block of repeat 1. At each run the
// pattern that covers the most runs wins (the shortest among equals); periods
// are at most kMaxBlockPeriod runs. The concatenation is the same stack, layer
// for layer.
void AppendBlocks(const LayerKinds& kinds, v1::Model& m) {
  constexpr size_t kMaxBlockPeriod = 64;
  const std::vector<v1::LayerSpec> runs = RunsOf(kinds);
  v1::LayerBlock* plain = nullptr;
  for (size_t at = 0; at < runs.size();) {
    size_t best_period = 1, best_repeat = 1;
    for (size_t period = 2; period <= kMaxBlockPeriod && at + 2 * period <= runs.size(); ++period) {
      const size_t repeat = Repeats(runs, at, period);
      if (repeat >= 2 && period * repeat > best_period * best_repeat) {
        best_period = period;
        best_repeat = repeat;
      }
    }
    if (best_repeat < 2) {
      if (plain == nullptr) {
        plain = m.add_layer_blocks();
        plain->set_repeat(1);
      }
      *plain->add_layers() = runs[at++];
      continue;
    }
    plain = nullptr;
    v1::LayerBlock* block = m.add_layer_blocks();
    block->set_repeat(static_cast<uint32_t>(best_repeat));
    for (size_t k = 0; k < best_period; ++k) *block->add_layers() = runs[at + k];
    at += best_period * best_repeat;
  }
}

// What every step of the reading shares.
struct ConfigText {
  const JsonReader& top;  // the whole file
  const JsonReader& r;    // the language model (text_config of a multimodal checkpoint)
  std::string model_type;
  int64_t layers = 0;
  int64_t intermediate = 0;
};

absl::Status ReadIdentity(const JsonReader& top, const JsonReader& r, v1::Model* m,
                          std::string* model_type) {
  CAPPLAN_ASSIGN_OR_RETURN(*model_type, r.String("model_type", ""));
  if (model_type->empty()) {
    CAPPLAN_ASSIGN_OR_RETURN(*model_type, top.String("model_type", ""));
  }
  if (model_type->empty()) return r.Missing("model_type", "required to read the architecture");
  m->set_family(*model_type);
  const ListValue* archs = nullptr;
  CAPPLAN_ASSIGN_OR_RETURN(archs, top.List("architectures"));
  if (archs != nullptr && archs->values_size() > 0 &&
      archs->values(0).kind_case() == Value::kStringValue) {
    m->set_architecture_class(archs->values(0).string_value());
  }
  std::string name_or_path;
  CAPPLAN_ASSIGN_OR_RETURN(name_or_path, top.String("_name_or_path", ""));
  m->set_hf_repo_id(name_or_path);
  m->set_display_name(name_or_path.empty() ? *model_type : name_or_path);
  return absl::OkStatus();
}

absl::Status ReadDimensions(ConfigText& c, v1::Model* m) {
  const JsonReader& r = c.r;
  int64_t hidden = 0, heads = 0, kv = 0, vocab = 0, head_dim = 0, max_pos = 0;
  CAPPLAN_ASSIGN_OR_RETURN(hidden, r.RequiredInt("hidden_size", 1, "required"));
  CAPPLAN_ASSIGN_OR_RETURN(c.layers, r.RequiredInt("num_hidden_layers", 1, "required"));
  if (c.layers > kMaxLayers) {
    return r.Error("num_hidden_layers", *r.Find("num_hidden_layers"),
                   absl::StrCat("must be at most ", kMaxLayers));
  }
  CAPPLAN_ASSIGN_OR_RETURN(heads, r.RequiredInt("num_attention_heads", 1, "required"));
  CAPPLAN_ASSIGN_OR_RETURN(kv, r.Int("num_key_value_heads", 1, heads));
  if (heads % kv != 0) {
    return r.Error("num_key_value_heads", *r.Find("num_key_value_heads"),
                   absl::StrCat("must divide num_attention_heads = ", heads));
  }
  CAPPLAN_ASSIGN_OR_RETURN(vocab, r.RequiredInt("vocab_size", 1, "required"));
  CAPPLAN_ASSIGN_OR_RETURN(c.intermediate, r.Int("intermediate_size", 0, 0));
  CAPPLAN_ASSIGN_OR_RETURN(head_dim, r.Int("head_dim", 1, 0));
  if (head_dim == 0 && hidden % heads != 0) {
    return r.Error("num_attention_heads", *r.Find("num_attention_heads"),
                   absl::StrCat("must divide hidden_size = ", hidden, " when head_dim is absent"));
  }
  bool tie = false;
  CAPPLAN_ASSIGN_OR_RETURN(tie, r.Bool("tie_word_embeddings", false));
  CAPPLAN_ASSIGN_OR_RETURN(max_pos, r.Int("max_position_embeddings", 1, 0));
  m->set_hidden_size(hidden);
  m->set_intermediate_size(c.intermediate);
  m->set_num_attention_heads(static_cast<uint32_t>(heads));
  m->set_num_kv_heads(static_cast<uint32_t>(kv));
  m->set_head_dim(static_cast<uint32_t>(head_dim));
  m->set_vocab_size(vocab);
  m->set_tie_word_embeddings(tie);
  m->set_native_context_tokens(max_pos);
  return absl::OkStatus();
}

absl::Status ReadRopeScaling(const JsonReader& r, v1::Model* m) {
  const Struct* rope = nullptr;
  CAPPLAN_ASSIGN_OR_RETURN(rope, r.Object("rope_scaling"));
  if (rope == nullptr) return absl::OkStatus();
  const JsonReader rr(*rope, kDocument, r.Path("rope_scaling."));
  double factor = 0;
  CAPPLAN_ASSIGN_OR_RETURN(factor, rr.Double("factor", 0.0));
  if (factor < 0) return rr.Error("factor", *rr.Find("factor"), "must be positive");
  m->set_rope_scaling_factor(factor);
  int64_t original = 0;
  CAPPLAN_ASSIGN_OR_RETURN(original, rr.Int("original_max_position_embeddings", 1, 0));
  m->set_rope_original_context_tokens(original);
  return absl::OkStatus();
}

// The error names the key the value came from, with the value as written.
absl::Status ReadNativeDtype(const JsonReader& top, const JsonReader& r, v1::Model* m) {
  std::string given;
  std::string key = r.Path("torch_dtype");
  CAPPLAN_ASSIGN_OR_RETURN(given, r.String("torch_dtype", ""));
  if (given.empty()) {
    key = r.Path("dtype");
    CAPPLAN_ASSIGN_OR_RETURN(given, r.String("dtype", ""));
  }
  if (given.empty()) {
    key = "torch_dtype";
    CAPPLAN_ASSIGN_OR_RETURN(given, top.String("torch_dtype", "bfloat16"));
  }
  const std::string dtype = absl::AsciiStrToLower(given);
  if (dtype == "bfloat16" || dtype == "bf16") {
    m->set_native_dtype(v1::NUMBER_FORMAT_BF16);
  } else if (dtype == "float16" || dtype == "fp16" || dtype == "half") {
    m->set_native_dtype(v1::NUMBER_FORMAT_FP16);
  } else if (dtype == "float32" || dtype == "fp32" || dtype == "float") {
    m->set_native_dtype(v1::NUMBER_FORMAT_FP32);
  } else {
    return absl::InvalidArgumentError(absl::StrCat(kDocument, ": ", key, " = \"", given,
                                                   "\"; must be bfloat16, float16 or float32"));
  }
  return absl::OkStatus();
}

// layer_types as written (Gemma, Qwen3-Next, hybrids).
absl::Status ReadLayerTypes(const ConfigText& c, const ListValue& types, LayerKinds* kinds) {
  if (types.values_size() != c.layers) {
    return absl::InvalidArgumentError(
        absl::StrCat(kDocument, ": ", c.r.Path("layer_types"), " has ", types.values_size(),
                     " entries; must have num_hidden_layers = ", c.layers));
  }
  for (int i = 0; i < types.values_size(); ++i) {
    const Value& v = types.values(i);
    const std::string t = v.kind_case() == Value::kStringValue ? v.string_value() : "";
    if (t == "full_attention" || t == "attention") {
      kinds->attention[i] = v1::ATTENTION_KIND_FULL;
    } else if (t == "sliding_attention") {
      kinds->attention[i] = v1::ATTENTION_KIND_SLIDING_WINDOW;
    } else if (t == "linear_attention") {
      kinds->attention[i] = v1::ATTENTION_KIND_LINEAR;
    } else if (t == "mamba") {
      kinds->attention[i] = v1::ATTENTION_KIND_MAMBA;
    } else {
      return c.r.Error(absl::StrCat("layer_types[", i, "]"), v,
                       "must be full_attention, sliding_attention, linear_attention or mamba");
    }
  }
  return absl::OkStatus();
}

// Qwen's sliding-window switch and Qwen3-Next's full-attention interval.
absl::Status ReadQwenLayerKinds(const ConfigText& c, LayerKinds* kinds) {
  bool use_swa = false;
  CAPPLAN_ASSIGN_OR_RETURN(use_swa, c.r.Bool("use_sliding_window", false));
  int64_t max_window_layers = 0;
  CAPPLAN_ASSIGN_OR_RETURN(max_window_layers, c.r.Int("max_window_layers", 0, c.layers));
  if (use_swa) {
    for (int64_t i = max_window_layers; i < c.layers; ++i) {
      kinds->attention[i] = v1::ATTENTION_KIND_SLIDING_WINDOW;
    }
  }
  if (c.model_type != "qwen3_next") return absl::OkStatus();
  int64_t interval = 0;
  CAPPLAN_ASSIGN_OR_RETURN(interval, c.r.Int("full_attention_interval", 1, 4));
  for (int64_t i = 0; i < c.layers; ++i) {
    kinds->attention[i] =
        (i + 1) % interval == 0 ? v1::ATTENTION_KIND_FULL : v1::ATTENTION_KIND_LINEAR;
  }
  return absl::OkStatus();
}

// The attention kind of every layer, and the sliding window they need.
absl::Status ReadAttentionKinds(const ConfigText& c, LayerKinds* kinds, v1::Model* m) {
  int64_t window = 0;
  CAPPLAN_ASSIGN_OR_RETURN(window, c.r.Int("sliding_window", 1, 0));
  const ListValue* types = nullptr;
  CAPPLAN_ASSIGN_OR_RETURN(types, c.r.List("layer_types"));
  if (types != nullptr) {
    CAPPLAN_RETURN_IF_ERROR(ReadLayerTypes(c, *types, kinds));
  } else if (absl::StartsWith(c.model_type, "qwen")) {
    CAPPLAN_RETURN_IF_ERROR(ReadQwenLayerKinds(c, kinds));
  } else if (c.model_type == "mistral" && window > 0) {
    kinds->attention.assign(c.layers, v1::ATTENTION_KIND_SLIDING_WINDOW);
  }
  const bool any_swa = std::count(kinds->attention.begin(), kinds->attention.end(),
                                  v1::ATTENTION_KIND_SLIDING_WINDOW) > 0;
  if (any_swa) {
    if (window <= 0) return c.r.Missing("sliding_window", "required by sliding-window layers");
    m->set_sliding_window_tokens(static_cast<uint32_t>(window));
  }
  return absl::OkStatus();
}

absl::Status ReadMla(const ConfigText& c, LayerKinds* kinds, v1::Model* m) {
  const JsonReader& r = c.r;
  if (!r.Has("kv_lora_rank")) return absl::OkStatus();
  v1::MlaConfig* mla = m->mutable_mla();
  int64_t x = 0;
  CAPPLAN_ASSIGN_OR_RETURN(x, r.Int("q_lora_rank", 0, 0));
  mla->set_q_lora_rank(x);
  CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("kv_lora_rank", 1, "required for MLA"));
  mla->set_kv_lora_rank(x);
  CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("qk_nope_head_dim", 1, "required for MLA"));
  mla->set_qk_nope_head_dim(x);
  CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("qk_rope_head_dim", 1, "required for MLA"));
  mla->set_qk_rope_head_dim(x);
  CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("v_head_dim", 1, "required for MLA"));
  mla->set_v_head_dim(x);
  kinds->attention.assign(c.layers, v1::ATTENTION_KIND_MLA);
  return absl::OkStatus();
}

// Gated DeltaNet (Qwen3-Next) heads and state.
absl::Status ReadLinearAttention(const ConfigText& c, const LayerKinds& kinds, v1::Model* m) {
  if (std::count(kinds.attention.begin(), kinds.attention.end(), v1::ATTENTION_KIND_LINEAR) == 0) {
    return absl::OkStatus();
  }
  const JsonReader& r = c.r;
  constexpr char kWhy[] = "required for linear attention";
  v1::LinearAttentionConfig* l = m->mutable_linear_attention();
  int64_t x = 0;
  CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("linear_num_key_heads", 1, kWhy));
  l->set_num_key_heads(x);
  CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("linear_num_value_heads", 1, kWhy));
  l->set_num_value_heads(x);
  CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("linear_key_head_dim", 1, kWhy));
  l->set_key_head_dim(x);
  CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("linear_value_head_dim", 1, kWhy));
  l->set_value_head_dim(x);
  CAPPLAN_ASSIGN_OR_RETURN(x, r.Int("linear_conv_kernel_dim", 1, 4));
  l->set_conv_kernel_size(x);
  std::string state_dtype;
  CAPPLAN_ASSIGN_OR_RETURN(state_dtype, r.String("mamba_ssm_dtype", ""));
  if (state_dtype == "float32") {
    l->set_recurrent_state_dtype(v1::NUMBER_FORMAT_FP32);
  } else if (state_dtype == "bfloat16") {
    l->set_recurrent_state_dtype(v1::NUMBER_FORMAT_BF16);
  } else if (state_dtype == "float16") {
    l->set_recurrent_state_dtype(v1::NUMBER_FORMAT_FP16);
  } else if (!state_dtype.empty()) {
    google::protobuf::Value v;
    v.set_string_value(state_dtype);
    return r.Error("mamba_ssm_dtype", v, "must be float32, bfloat16 or float16");
  }
  return absl::OkStatus();
}

// The experts as a family's keys state them.
struct MoeKeys {
  int64_t experts = 0;
  int64_t per_token = 0;
  int64_t expert_width = 0;
  int64_t shared = 0;
  int64_t shared_width = 0;
  // The key the experts-per-token value came from (errors name it).
  const char* per_token_key = "num_experts_per_tok";
  const char* width_key = "moe_intermediate_size";
  bool router_bias = false;
};

// Mixtral and gpt-oss: every layer's MLP is the experts, as wide as
// intermediate_size.
absl::Status ReadMixtralMoe(const ConfigText& c, LayerKinds* kinds, MoeKeys* k) {
  CAPPLAN_ASSIGN_OR_RETURN(k->experts, c.r.Int("num_local_experts", 1, 0));
  CAPPLAN_ASSIGN_OR_RETURN(k->per_token, c.r.Int("num_experts_per_tok", 1, 0));
  if (k->per_token == 0) {
    k->per_token_key = "experts_per_token";
    CAPPLAN_ASSIGN_OR_RETURN(k->per_token, c.r.Int(k->per_token_key, 1, 0));
  }
  k->expert_width = c.intermediate;
  k->width_key = "intermediate_size";
  if (k->experts > 0) kinds->mlp.assign(c.layers, v1::MLP_KIND_MOE);
  k->router_bias = c.model_type == "gpt_oss";
  return absl::OkStatus();
}

// DeepSeek V2/V3 and Kimi K2: dense first layers, then experts every
// moe_layer_freq layers; noaux_tc routing carries a score-correction bias.
absl::Status ReadDeepSeekMoe(const ConfigText& c, LayerKinds* kinds, MoeKeys* k) {
  const JsonReader& r = c.r;
  CAPPLAN_ASSIGN_OR_RETURN(k->experts, r.Int("n_routed_experts", 1, 0));
  CAPPLAN_ASSIGN_OR_RETURN(k->per_token, r.Int("num_experts_per_tok", 1, 0));
  CAPPLAN_ASSIGN_OR_RETURN(k->expert_width, r.Int("moe_intermediate_size", 1, 0));
  CAPPLAN_ASSIGN_OR_RETURN(k->shared, r.Int("n_shared_experts", 0, 0));
  int64_t first_dense = 0, freq = 0;
  CAPPLAN_ASSIGN_OR_RETURN(first_dense, r.Int("first_k_dense_replace", 0, 0));
  CAPPLAN_ASSIGN_OR_RETURN(freq, r.Int("moe_layer_freq", 1, 1));
  if (k->experts > 0) {
    for (int64_t i = 0; i < c.layers; ++i) {
      if (i >= first_dense && i % freq == 0) kinds->mlp[i] = v1::MLP_KIND_MOE;
    }
  }
  std::string topk_method;
  CAPPLAN_ASSIGN_OR_RETURN(
      topk_method, r.String("topk_method", c.model_type == "deepseek_v2" ? "" : "noaux_tc"));
  k->router_bias = topk_method == "noaux_tc";  // e_score_correction_bias
  return absl::OkStatus();
}

// Qwen MoE: experts every decoder_sparse_step layers except mlp_only_layers.
// Gemma 4 names experts per token top_k_experts and, with enable_moe_block,
// runs its dense MLP (intermediate_size) beside the experts: a shared expert.
absl::Status ReadQwenMoe(const ConfigText& c, LayerKinds* kinds, MoeKeys* k) {
  const JsonReader& r = c.r;
  CAPPLAN_ASSIGN_OR_RETURN(k->experts, r.Int("num_experts", 0, 0));
  CAPPLAN_ASSIGN_OR_RETURN(k->per_token, r.Int("num_experts_per_tok", 1, 0));
  if (k->per_token == 0 && r.Has("top_k_experts")) {
    k->per_token_key = "top_k_experts";
    CAPPLAN_ASSIGN_OR_RETURN(k->per_token, r.Int(k->per_token_key, 1, 0));
  }
  CAPPLAN_ASSIGN_OR_RETURN(k->expert_width, r.Int("moe_intermediate_size", 1, 0));
  CAPPLAN_ASSIGN_OR_RETURN(k->shared_width, r.Int("shared_expert_intermediate_size", 0, 0));
  bool dense_beside = false;
  CAPPLAN_ASSIGN_OR_RETURN(dense_beside, r.Bool("enable_moe_block", false));
  if (dense_beside && k->shared_width == 0) k->shared_width = c.intermediate;
  if (k->shared_width > 0) k->shared = 1;
  int64_t step = 1;
  CAPPLAN_ASSIGN_OR_RETURN(step, r.Int("decoder_sparse_step", 1, 1));
  std::set<int64_t> dense_only;
  const ListValue* mlp_only = nullptr;
  CAPPLAN_ASSIGN_OR_RETURN(mlp_only, r.List("mlp_only_layers"));
  for (int i = 0; mlp_only != nullptr && i < mlp_only->values_size(); ++i) {
    const Value& v = mlp_only->values(i);
    const double x = v.number_value();
    // Checked before the cast: a double beyond int64 would be undefined.
    if (v.kind_case() != Value::kNumberValue || !(x >= 0) || x >= c.layers || std::floor(x) != x) {
      return r.Error(absl::StrCat("mlp_only_layers[", i, "]"), v,
                     absl::StrCat("must be a layer index in [0, ", c.layers, ")"));
    }
    dense_only.insert(static_cast<int64_t>(x));
  }
  if (k->experts > 0) {
    for (int64_t i = 0; i < c.layers; ++i) {
      if (!dense_only.count(i) && (i + 1) % step == 0) kinds->mlp[i] = v1::MLP_KIND_MOE;
    }
  }
  return absl::OkStatus();
}

absl::Status ReadMoe(const ConfigText& c, LayerKinds* kinds, v1::Model* m) {
  const JsonReader& r = c.r;
  const bool deepseek =
      c.model_type == "deepseek_v2" || c.model_type == "deepseek_v3" || c.model_type == "kimi_k2";
  MoeKeys k;
  if (c.model_type == "mixtral" || c.model_type == "gpt_oss" ||
      (r.Has("num_local_experts") && !r.Has("num_experts"))) {
    CAPPLAN_RETURN_IF_ERROR(ReadMixtralMoe(c, kinds, &k));
  } else if (deepseek) {
    CAPPLAN_RETURN_IF_ERROR(ReadDeepSeekMoe(c, kinds, &k));
  } else if (r.Has("num_experts")) {
    CAPPLAN_RETURN_IF_ERROR(ReadQwenMoe(c, kinds, &k));
  }
  if (k.experts == 0) return absl::OkStatus();
  if (k.per_token <= 0) return r.Missing("num_experts_per_tok", "required for MoE");
  if (k.per_token > k.experts) {
    return r.Error(k.per_token_key, *r.Find(k.per_token_key),
                   absl::StrCat("must not exceed the number of experts = ", k.experts));
  }
  if (k.expert_width <= 0) return r.Missing(k.width_key, "required for MoE");
  v1::MoeConfig* moe = m->mutable_moe();
  moe->set_num_routed_experts(static_cast<uint32_t>(k.experts));
  moe->set_experts_per_token(static_cast<uint32_t>(k.per_token));
  moe->set_num_shared_experts(static_cast<uint32_t>(k.shared));
  moe->set_expert_intermediate_size(k.expert_width);
  moe->set_shared_expert_intermediate_size(k.shared_width);
  moe->set_router_bias(k.router_bias);
  return absl::OkStatus();
}

// Biases, norms, gates and draft layers.
absl::Status ReadFlags(const ConfigText& c, v1::Model* m) {
  const std::string& t = c.model_type;
  bool attention_bias = false;
  CAPPLAN_ASSIGN_OR_RETURN(attention_bias, c.r.Bool("attention_bias", false));
  if (t == "qwen2" || t == "qwen2_moe" || t == "gpt_oss") attention_bias = true;
  m->set_attention_bias(attention_bias);
  m->set_qk_norm(absl::StartsWith(t, "qwen3"));
  // Qwen3-Next and Qwen3.5 (qwen3_5, qwen3_5_moe and their *_text configs)
  // gate the attention output; attn_output_gate states it where present.
  bool gated = t == "qwen3_next" || absl::StartsWith(t, "qwen3_5");
  CAPPLAN_ASSIGN_OR_RETURN(gated, c.r.Bool("attn_output_gate", gated));
  m->set_gated_attention_output(gated);
  int64_t mtp = 0;
  CAPPLAN_ASSIGN_OR_RETURN(mtp, c.r.Int("num_nextn_predict_layers", 0, t == "qwen3_next" ? 1 : 0));
  if (mtp == 0) {
    CAPPLAN_ASSIGN_OR_RETURN(mtp, c.r.Int("mtp_num_hidden_layers", 0, 0));
  }
  m->set_num_mtp_layers(static_cast<uint32_t>(mtp));
  return absl::OkStatus();
}

absl::Status ReadLayers(const ConfigText& c, v1::Model* m) {
  LayerKinds kinds;
  kinds.attention.assign(c.layers, v1::ATTENTION_KIND_FULL);
  kinds.mlp.assign(c.layers, v1::MLP_KIND_DENSE);
  CAPPLAN_RETURN_IF_ERROR(ReadAttentionKinds(c, &kinds, m));
  CAPPLAN_RETURN_IF_ERROR(ReadMla(c, &kinds, m));
  CAPPLAN_RETURN_IF_ERROR(ReadLinearAttention(c, kinds, m));
  CAPPLAN_RETURN_IF_ERROR(ReadMoe(c, &kinds, m));
  const bool any_dense = std::count(kinds.mlp.begin(), kinds.mlp.end(), v1::MLP_KIND_DENSE) > 0;
  if (any_dense && c.intermediate <= 0) {
    return c.r.Missing("intermediate_size", "required by dense MLP layers");
  }
  AppendBlocks(kinds, *m);
  return absl::OkStatus();
}

// A Qwen-VL-style vision_config (depth, hidden_size, out_hidden_size): the
// vision tower the engines load beside the language model. Other vision
// configs are not read (the planner then counts the language model only).
absl::Status ReadVisionEncoder(const JsonReader& top, v1::Model* m) {
  const Struct* vision = nullptr;
  CAPPLAN_ASSIGN_OR_RETURN(vision, top.Object("vision_config"));
  if (vision == nullptr) return absl::OkStatus();
  const JsonReader r(*vision, kDocument, "vision_config.");
  if (!r.Has("depth") || !r.Has("hidden_size") || !r.Has("out_hidden_size")) {
    return absl::OkStatus();
  }
  v1::VisionEncoderConfig* v = m->mutable_vision_encoder();
  int64_t x = 0;
  CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("depth", 1, "required"));
  v->set_depth(static_cast<uint32_t>(x));
  CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("hidden_size", 1, "required"));
  v->set_hidden_size(static_cast<uint32_t>(x));
  CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("intermediate_size", 1, "required with depth"));
  v->set_intermediate_size(static_cast<uint32_t>(x));
  CAPPLAN_ASSIGN_OR_RETURN(x, r.Int("num_heads", 1, 1));
  v->set_num_heads(static_cast<uint32_t>(x));
  CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("patch_size", 1, "required with depth"));
  v->set_patch_size(static_cast<uint32_t>(x));
  CAPPLAN_ASSIGN_OR_RETURN(x, r.Int("temporal_patch_size", 1, 1));
  v->set_temporal_patch_size(static_cast<uint32_t>(x));
  CAPPLAN_ASSIGN_OR_RETURN(x, r.Int(r.Has("in_chans") ? "in_chans" : "in_channels", 1, 3));
  v->set_in_channels(static_cast<uint32_t>(x));
  CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("out_hidden_size", 1, "required"));
  v->set_out_hidden_size(static_cast<uint32_t>(x));
  CAPPLAN_ASSIGN_OR_RETURN(x, r.Int("spatial_merge_size", 1, 1));
  v->set_spatial_merge_size(static_cast<uint32_t>(x));
  CAPPLAN_ASSIGN_OR_RETURN(x, r.Int("num_position_embeddings", 0, 0));
  v->set_num_position_embeddings(static_cast<uint32_t>(x));
  const ListValue* deepstack = nullptr;
  CAPPLAN_ASSIGN_OR_RETURN(deepstack, r.List("deepstack_visual_indexes"));
  if (deepstack != nullptr) v->set_deepstack_mergers(deepstack->values_size());
  std::string type;
  CAPPLAN_ASSIGN_OR_RETURN(type, r.String("model_type", ""));
  // Qwen2.5-VL blocks are SwiGLU (gate, up, down); Qwen3-VL's are fc1, fc2.
  v->set_gated_mlp(absl::StrContains(type, "qwen2_5"));
  return absl::OkStatus();
}

// The checkpoint's quantization_config, at the top or beside the text model.
absl::Status ReadQuantizationOf(const ConfigText& c, bool nested, v1::Model* m) {
  const Struct* quant = nullptr;
  CAPPLAN_ASSIGN_OR_RETURN(quant, c.top.Object("quantization_config"));
  if (quant == nullptr && nested) {
    CAPPLAN_ASSIGN_OR_RETURN(quant, c.r.Object("quantization_config"));
  }
  if (quant == nullptr) return absl::OkStatus();
  CAPPLAN_ASSIGN_OR_RETURN(*m->mutable_quantization(), ReadQuantization(*quant));
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<v1::Model> ModelFromHfConfig(absl::string_view json_text) {
  CAPPLAN_ASSIGN_OR_RETURN(Struct root, ParseJsonObject(kDocument, json_text, kMaxConfigBytes));
  const JsonReader top(root, kDocument, "");
  // Multimodal checkpoints nest the language model under text_config.
  const Struct* text = &root;
  const Struct* nested = nullptr;
  CAPPLAN_ASSIGN_OR_RETURN(nested, top.Object("text_config"));
  if (nested != nullptr && !top.Has("hidden_size")) text = nested;
  const JsonReader r(*text, kDocument, text == &root ? "" : "text_config.");
  v1::Model m;
  ConfigText c{top, r, "", 0, 0};
  CAPPLAN_RETURN_IF_ERROR(ReadIdentity(top, r, &m, &c.model_type));
  CAPPLAN_RETURN_IF_ERROR(ReadDimensions(c, &m));
  CAPPLAN_RETURN_IF_ERROR(ReadRopeScaling(r, &m));
  CAPPLAN_RETURN_IF_ERROR(ReadNativeDtype(top, r, &m));
  CAPPLAN_RETURN_IF_ERROR(ReadLayers(c, &m));
  CAPPLAN_RETURN_IF_ERROR(ReadFlags(c, &m));
  CAPPLAN_RETURN_IF_ERROR(ReadVisionEncoder(top, &m));
  CAPPLAN_RETURN_IF_ERROR(ReadQuantizationOf(c, text != &root, &m));
  return m;
}

}  // namespace capplan::service
