#include "service/translate/hf_config.h"

#include "base/status_macros.h"

#include <algorithm>
#include <cmath>
#include <optional>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/util/json_util.h"

namespace capplan::service {
namespace {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

// Dimensions land in 32-bit proto fields (heads, head_dim, experts, ...).
constexpr int64_t kMaxDimension = std::numeric_limits<uint32_t>::max();
constexpr int64_t kMaxLayers = 100000;

std::string Show(const Value& v) {
  switch (v.kind_case()) {
    case Value::kNumberValue: {
      const double x = v.number_value();
      if (std::isfinite(x) && std::floor(x) == x && std::fabs(x) < 1e15) {
        return absl::StrCat(static_cast<int64_t>(x));
      }
      return absl::StrCat(x);
    }
    case Value::kStringValue:
      return absl::StrCat("\"", v.string_value().substr(0, 80), "\"");
    case Value::kBoolValue:
      return v.bool_value() ? "true" : "false";
    case Value::kListValue:
      return "[...]";
    case Value::kStructValue:
      return "{...}";
    default:
      return "null";
  }
}

// Reads typed keys of one JSON object; error messages carry the key path.
class Reader {
 public:
  Reader(const Struct& s, std::string prefix) : s_(s), prefix_(std::move(prefix)) {}

  std::string Path(absl::string_view key) const { return absl::StrCat(prefix_, key); }

  // nullptr when absent or null.
  const Value* Find(absl::string_view key) const {
    auto it = s_.fields().find(std::string(key));
    if (it == s_.fields().end() || it->second.kind_case() == Value::kNullValue) return nullptr;
    return &it->second;
  }
  bool Has(absl::string_view key) const { return Find(key) != nullptr; }

  absl::Status Error(absl::string_view key, const Value& v, absl::string_view rule) const {
    return absl::InvalidArgumentError(
        absl::StrCat("config.json: ", Path(key), " = ", Show(v), "; ", rule));
  }
  absl::Status Missing(absl::string_view key, absl::string_view why) const {
    return absl::InvalidArgumentError(
        absl::StrCat("config.json: ", Path(key), " is missing; ", why));
  }

  // Integer >= min, or nullopt when absent.
  absl::StatusOr<std::optional<int64_t>> OptInt(absl::string_view key, int64_t min) const {
    const Value* v = Find(key);
    if (v == nullptr) return std::optional<int64_t>();
    if (v->kind_case() != Value::kNumberValue || !std::isfinite(v->number_value()) ||
        std::floor(v->number_value()) != v->number_value()) {
      return Error(key, *v, "must be an integer");
    }
    const double x = v->number_value();
    if (x < static_cast<double>(min)) {
      return Error(key, *v, min == 1 ? "must be positive"
                                     : absl::StrCat("must be at least ", min));
    }
    if (x > static_cast<double>(kMaxDimension)) {
      return Error(key, *v, absl::StrCat("must be at most ", kMaxDimension));
    }
    return std::optional<int64_t>(static_cast<int64_t>(x));
  }
  absl::StatusOr<int64_t> Int(absl::string_view key, int64_t min, int64_t fallback) const {
    absl::StatusOr<std::optional<int64_t>> v = OptInt(key, min);
    if (!v.ok()) return v.status();
    return v->value_or(fallback);
  }
  absl::StatusOr<int64_t> RequiredInt(absl::string_view key, int64_t min,
                                      absl::string_view why) const {
    absl::StatusOr<std::optional<int64_t>> v = OptInt(key, min);
    if (!v.ok()) return v.status();
    if (!v->has_value()) return Missing(key, why);
    return **v;
  }
  absl::StatusOr<double> Double(absl::string_view key, double fallback) const {
    const Value* v = Find(key);
    if (v == nullptr) return fallback;
    if (v->kind_case() != Value::kNumberValue || !std::isfinite(v->number_value())) {
      return Error(key, *v, "must be a number");
    }
    return v->number_value();
  }
  absl::StatusOr<bool> Bool(absl::string_view key, bool fallback) const {
    const Value* v = Find(key);
    if (v == nullptr) return fallback;
    if (v->kind_case() != Value::kBoolValue) return Error(key, *v, "must be true or false");
    return v->bool_value();
  }
  absl::StatusOr<std::string> String(absl::string_view key, std::string fallback) const {
    const Value* v = Find(key);
    if (v == nullptr) return fallback;
    if (v->kind_case() != Value::kStringValue) return Error(key, *v, "must be a string");
    return v->string_value();
  }
  absl::StatusOr<const ListValue*> List(absl::string_view key) const {
    const Value* v = Find(key);
    if (v == nullptr) return static_cast<const ListValue*>(nullptr);
    if (v->kind_case() != Value::kListValue) return Error(key, *v, "must be a list");
    return &v->list_value();
  }
  absl::StatusOr<const Struct*> Object(absl::string_view key) const {
    const Value* v = Find(key);
    if (v == nullptr) return static_cast<const Struct*>(nullptr);
    if (v->kind_case() != Value::kStructValue) return Error(key, *v, "must be an object");
    return &v->struct_value();
  }

 private:
  const Struct& s_;
  std::string prefix_;
};

// Which model component a module-name pattern (modules_to_not_convert,
// ignore, exclude_modules) refers to; nullopt for patterns we do not map.
std::optional<v1::ModelComponent> ComponentOfPattern(absl::string_view raw) {
  const std::string p = absl::AsciiStrToLower(raw);
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
      absl::StrContains(p, "mlp.gate$") || absl::StrContains(p, "gate.") ||
      p == "gate") {
    return v1::MODEL_COMPONENT_ROUTER;
  }
  if (absl::StrContains(p, "experts")) return v1::MODEL_COMPONENT_EXPERTS;
  if (absl::StrContains(p, "mlp") || absl::StrContains(p, "_proj")) {
    return v1::MODEL_COMPONENT_DENSE_MLP;
  }
  return std::nullopt;
}

absl::Status AddPatterns(const Reader& r, absl::string_view key, std::set<int>& out) {
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

absl::StatusOr<v1::Quantization> ReadQuantization(const Struct& q) {
  const Reader r(q, "quantization_config.");
  v1::Quantization out;
  std::string method;
  CAPPLAN_ASSIGN_OR_RETURN(method, r.String("quant_method", ""));
  method = absl::AsciiStrToLower(method);
  out.set_method(method);
  std::set<int> unquantized;
  if (method == "awq" || method == "gptq") {
    int64_t bits = 0;
    CAPPLAN_ASSIGN_OR_RETURN(bits, r.Int("bits", 1, 4));
    int64_t group = 0;
    CAPPLAN_ASSIGN_OR_RETURN(group, r.Int("group_size", -1, 128));
    if (bits == 4) {
      out.set_format(method == "awq" ? v1::WEIGHT_FORMAT_INT4_AWQ : v1::WEIGHT_FORMAT_INT4_GPTQ);
    } else if (bits == 8 && method == "gptq") {
      out.set_format(v1::WEIGHT_FORMAT_INT8);
    } else {
      return r.Error("bits", *r.Find("bits"),
                     method == "awq" ? "awq supports 4 bits" : "gptq supports 4 or 8 bits");
    }
    if (group == 0) return r.Error("group_size", *r.Find("group_size"), "must be -1 or positive");
    if (group > 0) out.set_group_size(static_cast<uint32_t>(group));
    if (absl::Status s = AddPatterns(r, "modules_to_not_convert", unquantized); !s.ok()) return s;
  } else if (method == "fp8") {
    absl::StatusOr<const ListValue*> block = r.List("weight_block_size");
    if (!block.ok()) return block.status();
    if (*block != nullptr && (*block)->values_size() > 0) {
      const Value& edge = (*block)->values(0);
      if (edge.kind_case() != Value::kNumberValue || edge.number_value() < 1 ||
          edge.number_value() > 65536) {
        return r.Error("weight_block_size[0]", edge, "must be a positive block edge");
      }
      out.set_format(v1::WEIGHT_FORMAT_FP8_BLOCK);
      out.set_group_size(static_cast<uint32_t>(edge.number_value()));
    } else {
      out.set_format(v1::WEIGHT_FORMAT_FP8_PER_TENSOR);
    }
    for (const char* key : {"modules_to_not_convert", "ignored_layers"}) {
      if (absl::Status s = AddPatterns(r, key, unquantized); !s.ok()) return s;
    }
  } else if (method == "mxfp4") {
    out.set_format(v1::WEIGHT_FORMAT_MXFP4);
    out.set_group_size(32);
    // The engines apply mxfp4 to fused-MoE experts only; everything else
    // stays in the native dtype.
    for (int c : {v1::MODEL_COMPONENT_ATTENTION, v1::MODEL_COMPONENT_DENSE_MLP,
                  v1::MODEL_COMPONENT_SHARED_EXPERTS, v1::MODEL_COMPONENT_LINEAR_ATTENTION,
                  v1::MODEL_COMPONENT_DRAFT}) {
      unquantized.insert(c);
    }
    if (absl::Status s = AddPatterns(r, "modules_to_not_convert", unquantized); !s.ok()) return s;
  } else if (method == "compressed-tensors") {
    const Struct* groups = nullptr;
    CAPPLAN_ASSIGN_OR_RETURN(groups, r.Object("config_groups"));
    if (groups == nullptr || groups->fields().empty()) {
      return r.Missing("config_groups", "required for compressed-tensors");
    }
    // The first group (by name) describes the weights.
    std::vector<std::string> names;
    for (const auto& [name, unused] : groups->fields()) names.push_back(name);
    std::sort(names.begin(), names.end());
    const Value& g = groups->fields().at(names.front());
    if (g.kind_case() != Value::kStructValue) {
      return r.Error(absl::StrCat("config_groups.", names.front()), g, "must be an object");
    }
    const Reader gr(g.struct_value(),
                    absl::StrCat("quantization_config.config_groups.", names.front(), "."));
    const Struct* weights = nullptr;
    CAPPLAN_ASSIGN_OR_RETURN(weights, gr.Object("weights"));
    if (weights == nullptr) return gr.Missing("weights", "required for compressed-tensors");
    const Reader wr(*weights, absl::StrCat("quantization_config.config_groups.",
                                           names.front(), ".weights."));
    int64_t bits = 0;
    CAPPLAN_ASSIGN_OR_RETURN(bits, wr.RequiredInt("num_bits", 1, "required"));
    std::string type;
    CAPPLAN_ASSIGN_OR_RETURN(type, wr.String("type", "int"));
    bool symmetric = true;
    CAPPLAN_ASSIGN_OR_RETURN(symmetric, wr.Bool("symmetric", true));
    int64_t group = 0;
    CAPPLAN_ASSIGN_OR_RETURN(group, wr.Int("group_size", 0, 0));
    std::string strategy;
    CAPPLAN_ASSIGN_OR_RETURN(strategy, wr.String("strategy", ""));
    if (bits == 4 && type == "int") {
      out.set_format(symmetric ? v1::WEIGHT_FORMAT_INT4_SYMMETRIC : v1::WEIGHT_FORMAT_INT4_AWQ);
      if (group > 0) out.set_group_size(static_cast<uint32_t>(group));
    } else if (bits == 4 && type == "float") {
      out.set_format(v1::WEIGHT_FORMAT_NVFP4);
      out.set_group_size(16);
    } else if (bits == 8 && type == "float") {
      out.set_format(strategy == "block"     ? v1::WEIGHT_FORMAT_FP8_BLOCK
                     : strategy == "channel" ? v1::WEIGHT_FORMAT_FP8_PER_CHANNEL
                                             : v1::WEIGHT_FORMAT_FP8_PER_TENSOR);
      if (strategy == "block") out.set_group_size(128);
    } else if (bits == 8 && type == "int") {
      out.set_format(v1::WEIGHT_FORMAT_INT8);
    } else {
      return wr.Error("num_bits", *wr.Find("num_bits"),
                      absl::StrCat("unsupported with type \"", type, "\" (4 or 8 bits)"));
    }
    if (absl::Status s = AddPatterns(r, "ignore", unquantized); !s.ok()) return s;
  } else if (method == "modelopt" || method == "modelopt_fp4") {
    std::string algo;
    CAPPLAN_ASSIGN_OR_RETURN(algo, r.String("quant_algo", method == "modelopt_fp4" ? "NVFP4" : ""));
    algo = absl::AsciiStrToUpper(algo);
    if (algo == "NVFP4") {
      out.set_format(v1::WEIGHT_FORMAT_NVFP4);
      out.set_group_size(16);
    } else if (algo == "FP8") {
      out.set_format(v1::WEIGHT_FORMAT_FP8_PER_TENSOR);
    } else {
      const Value* v = r.Find("quant_algo");
      if (v == nullptr) return r.Missing("quant_algo", "required for modelopt (NVFP4 or FP8)");
      return r.Error("quant_algo", *v, "must be NVFP4 or FP8");
    }
    for (const char* key : {"exclude_modules", "ignore", "modules_to_not_convert"}) {
      if (absl::Status s = AddPatterns(r, key, unquantized); !s.ok()) return s;
    }
  } else {
    const Value* v = r.Find("quant_method");
    if (v == nullptr) return r.Missing("quant_method", "required in quantization_config");
    return r.Error("quant_method", *v,
                   "supported: awq, gptq, fp8, mxfp4, compressed-tensors, modelopt");
  }
  for (int c : unquantized) out.add_unquantized(static_cast<v1::ModelComponent>(c));
  return out;
}

struct LayerKinds {
  std::vector<v1::AttentionKind> attention;
  std::vector<v1::MlpKind> mlp;
};

void AppendBlocks(const LayerKinds& kinds, v1::Model& m) {
  v1::LayerBlock* block = m.add_layer_blocks();
  block->set_repeat(1);
  for (size_t i = 0; i < kinds.attention.size(); ++i) {
    if (block->layers_size() > 0) {
      v1::LayerSpec* last = block->mutable_layers(block->layers_size() - 1);
      if (last->attention() == kinds.attention[i] && last->mlp() == kinds.mlp[i]) {
        last->set_count(last->count() + 1);
        continue;
      }
    }
    v1::LayerSpec* spec = block->add_layers();
    spec->set_count(1);
    spec->set_attention(kinds.attention[i]);
    spec->set_mlp(kinds.mlp[i]);
  }
}

}  // namespace

absl::StatusOr<v1::Model> ModelFromHfConfig(absl::string_view json_text) {
  if (json_text.size() > (size_t{8} << 20)) {
    return absl::InvalidArgumentError(
        absl::StrCat("config.json: size = ", json_text.size(), " bytes; must be at most 8 MiB"));
  }
  Struct root;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  const auto parsed = google::protobuf::util::JsonStringToMessage(
      std::string(json_text), &root, options);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("config.json: not a JSON object: ", std::string(parsed.message())));
  }
  const Reader top(root, "");
  // Multimodal checkpoints nest the language model under text_config.
  const Struct* text = &root;
  std::string prefix;
  {
    const Struct* nested = nullptr;
    CAPPLAN_ASSIGN_OR_RETURN(nested, top.Object("text_config"));
    if (nested != nullptr && !top.Has("hidden_size")) {
      text = nested;
      prefix = "text_config.";
    }
  }
  const Reader r(*text, prefix);

  v1::Model m;
  std::string model_type;
  CAPPLAN_ASSIGN_OR_RETURN(model_type, r.String("model_type", ""));
  if (model_type.empty()) {
    CAPPLAN_ASSIGN_OR_RETURN(model_type, top.String("model_type", ""));
  }
  if (model_type.empty()) return r.Missing("model_type", "required to read the architecture");
  m.set_family(model_type);
  {
    const ListValue* archs = nullptr;
    CAPPLAN_ASSIGN_OR_RETURN(archs, top.List("architectures"));
    if (archs != nullptr && archs->values_size() > 0 &&
        archs->values(0).kind_case() == Value::kStringValue) {
      m.set_architecture_class(archs->values(0).string_value());
    }
  }
  std::string name_or_path;
  CAPPLAN_ASSIGN_OR_RETURN(name_or_path, top.String("_name_or_path", ""));
  m.set_hf_repo_id(name_or_path);
  m.set_display_name(name_or_path.empty() ? model_type : name_or_path);

  const bool deepseek = model_type == "deepseek_v2" || model_type == "deepseek_v3" ||
                        model_type == "kimi_k2";
  const bool qwen_family = absl::StartsWith(model_type, "qwen");
  const bool qwen3 = absl::StartsWith(model_type, "qwen3");

  int64_t hidden = 0, layers = 0, heads = 0, kv = 0, vocab = 0, intermediate = 0;
  CAPPLAN_ASSIGN_OR_RETURN(hidden, r.RequiredInt("hidden_size", 1, "required"));
  CAPPLAN_ASSIGN_OR_RETURN(layers, r.RequiredInt("num_hidden_layers", 1, "required"));
  if (layers > kMaxLayers) {
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
  CAPPLAN_ASSIGN_OR_RETURN(intermediate, r.Int("intermediate_size", 0, 0));
  m.set_hidden_size(hidden);
  m.set_intermediate_size(intermediate);
  m.set_num_attention_heads(static_cast<uint32_t>(heads));
  m.set_num_kv_heads(static_cast<uint32_t>(kv));
  int64_t head_dim = 0;
  CAPPLAN_ASSIGN_OR_RETURN(head_dim, r.Int("head_dim", 1, 0));
  if (head_dim == 0 && hidden % heads != 0) {
    return r.Error("num_attention_heads", *r.Find("num_attention_heads"),
                   absl::StrCat("must divide hidden_size = ", hidden, " when head_dim is absent"));
  }
  m.set_head_dim(static_cast<uint32_t>(head_dim));
  m.set_vocab_size(vocab);
  bool tie = false;
  CAPPLAN_ASSIGN_OR_RETURN(tie, r.Bool("tie_word_embeddings", false));
  m.set_tie_word_embeddings(tie);
  int64_t max_pos = 0;
  CAPPLAN_ASSIGN_OR_RETURN(max_pos, r.Int("max_position_embeddings", 1, 0));
  m.set_native_context_tokens(max_pos);
  {
    const Struct* rope = nullptr;
    CAPPLAN_ASSIGN_OR_RETURN(rope, r.Object("rope_scaling"));
    if (rope != nullptr) {
      const Reader rr(*rope, absl::StrCat(prefix, "rope_scaling."));
      double factor = 0;
      CAPPLAN_ASSIGN_OR_RETURN(factor, rr.Double("factor", 0.0));
      if (factor < 0) return rr.Error("factor", *rr.Find("factor"), "must be positive");
      m.set_rope_scaling_factor(factor);
      int64_t original = 0;
      CAPPLAN_ASSIGN_OR_RETURN(original, rr.Int("original_max_position_embeddings", 1, 0));
      m.set_rope_original_context_tokens(original);
    }
  }
  {
    // The error names the key the value came from, with the value as written.
    std::string given;
    std::string key = absl::StrCat(prefix, "torch_dtype");
    CAPPLAN_ASSIGN_OR_RETURN(given, r.String("torch_dtype", ""));
    if (given.empty()) {
      key = absl::StrCat(prefix, "dtype");
      CAPPLAN_ASSIGN_OR_RETURN(given, r.String("dtype", ""));
    }
    if (given.empty()) {
      key = "torch_dtype";
      CAPPLAN_ASSIGN_OR_RETURN(given, top.String("torch_dtype", "bfloat16"));
    }
    const std::string dtype = absl::AsciiStrToLower(given);
    if (dtype == "bfloat16" || dtype == "bf16") {
      m.set_native_dtype(v1::NUMBER_FORMAT_BF16);
    } else if (dtype == "float16" || dtype == "fp16" || dtype == "half") {
      m.set_native_dtype(v1::NUMBER_FORMAT_FP16);
    } else if (dtype == "float32" || dtype == "fp32" || dtype == "float") {
      m.set_native_dtype(v1::NUMBER_FORMAT_FP32);
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "config.json: ", key, " = \"", given, "\"; must be bfloat16, float16 or float32"));
    }
  }

  // ---- attention kind per layer
  LayerKinds kinds;
  kinds.attention.assign(layers, v1::ATTENTION_KIND_FULL);
  kinds.mlp.assign(layers, v1::MLP_KIND_DENSE);
  int64_t window = 0;
  CAPPLAN_ASSIGN_OR_RETURN(window, r.Int("sliding_window", 1, 0));
  {
    const ListValue* types = nullptr;
    CAPPLAN_ASSIGN_OR_RETURN(types, r.List("layer_types"));
    if (types != nullptr) {
      if (types->values_size() != layers) {
        return absl::InvalidArgumentError(absl::StrCat(
            "config.json: ", prefix, "layer_types has ", types->values_size(),
            " entries; must have num_hidden_layers = ", layers));
      }
      for (int i = 0; i < types->values_size(); ++i) {
        const Value& v = types->values(i);
        const std::string t = v.kind_case() == Value::kStringValue ? v.string_value() : "";
        if (t == "full_attention" || t == "attention") {
          kinds.attention[i] = v1::ATTENTION_KIND_FULL;
        } else if (t == "sliding_attention") {
          kinds.attention[i] = v1::ATTENTION_KIND_SLIDING_WINDOW;
        } else if (t == "linear_attention") {
          kinds.attention[i] = v1::ATTENTION_KIND_LINEAR;
        } else if (t == "mamba") {
          kinds.attention[i] = v1::ATTENTION_KIND_MAMBA;
        } else {
          return r.Error(absl::StrCat("layer_types[", i, "]"), v,
                         "must be full_attention, sliding_attention, linear_attention or mamba");
        }
      }
    } else if (qwen_family) {
      bool use_swa = false;
      CAPPLAN_ASSIGN_OR_RETURN(use_swa, r.Bool("use_sliding_window", false));
      int64_t max_window_layers = 0;
      CAPPLAN_ASSIGN_OR_RETURN(max_window_layers, r.Int("max_window_layers", 0, layers));
      if (use_swa) {
        for (int64_t i = max_window_layers; i < layers; ++i) {
          kinds.attention[i] = v1::ATTENTION_KIND_SLIDING_WINDOW;
        }
      }
      if (model_type == "qwen3_next") {
        int64_t interval = 0;
        CAPPLAN_ASSIGN_OR_RETURN(interval, r.Int("full_attention_interval", 1, 4));
        for (int64_t i = 0; i < layers; ++i) {
          kinds.attention[i] = (i + 1) % interval == 0 ? v1::ATTENTION_KIND_FULL
                                                       : v1::ATTENTION_KIND_LINEAR;
        }
      }
    } else if (model_type == "mistral" && window > 0) {
      kinds.attention.assign(layers, v1::ATTENTION_KIND_SLIDING_WINDOW);
    }
  }
  const bool any_swa = std::count(kinds.attention.begin(), kinds.attention.end(),
                                  v1::ATTENTION_KIND_SLIDING_WINDOW) > 0;
  if (any_swa) {
    if (window <= 0) return r.Missing("sliding_window", "required by sliding-window layers");
    m.set_sliding_window_tokens(static_cast<uint32_t>(window));
  }

  // ---- MLA
  if (r.Has("kv_lora_rank")) {
    v1::MlaConfig* mla = m.mutable_mla();
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
    kinds.attention.assign(layers, v1::ATTENTION_KIND_MLA);
  }

  // ---- linear attention (gated DeltaNet)
  if (std::count(kinds.attention.begin(), kinds.attention.end(), v1::ATTENTION_KIND_LINEAR) > 0) {
    v1::LinearAttentionConfig* l = m.mutable_linear_attention();
    int64_t x = 0;
    CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("linear_num_key_heads", 1, "required for linear attention"));
    l->set_num_key_heads(x);
    CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("linear_num_value_heads", 1, "required for linear attention"));
    l->set_num_value_heads(x);
    CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("linear_key_head_dim", 1, "required for linear attention"));
    l->set_key_head_dim(x);
    CAPPLAN_ASSIGN_OR_RETURN(x, r.RequiredInt("linear_value_head_dim", 1, "required for linear attention"));
    l->set_value_head_dim(x);
    CAPPLAN_ASSIGN_OR_RETURN(x, r.Int("linear_conv_kernel_dim", 1, 4));
    l->set_conv_kernel_size(x);
  }

  // ---- MoE
  int64_t experts = 0, per_token = 0, expert_width = 0, shared = 0, shared_width = 0;
  // The key the experts-per-token value came from (errors name it).
  const char* per_token_key = "num_experts_per_tok";
  bool router_bias = false;
  if (model_type == "mixtral" || model_type == "gpt_oss" ||
      (r.Has("num_local_experts") && !r.Has("num_experts"))) {
    CAPPLAN_ASSIGN_OR_RETURN(experts, r.Int("num_local_experts", 1, 0));
    CAPPLAN_ASSIGN_OR_RETURN(per_token, r.Int("num_experts_per_tok", 1, 0));
    if (per_token == 0) {
      per_token_key = "experts_per_token";
      CAPPLAN_ASSIGN_OR_RETURN(per_token, r.Int(per_token_key, 1, 0));
    }
    expert_width = intermediate;
    if (experts > 0) kinds.mlp.assign(layers, v1::MLP_KIND_MOE);
    router_bias = model_type == "gpt_oss";
  } else if (deepseek) {
    CAPPLAN_ASSIGN_OR_RETURN(experts, r.Int("n_routed_experts", 1, 0));
    CAPPLAN_ASSIGN_OR_RETURN(per_token, r.Int("num_experts_per_tok", 1, 0));
    CAPPLAN_ASSIGN_OR_RETURN(expert_width, r.Int("moe_intermediate_size", 1, 0));
    CAPPLAN_ASSIGN_OR_RETURN(shared, r.Int("n_shared_experts", 0, 0));
    int64_t first_dense = 0, freq = 0;
    CAPPLAN_ASSIGN_OR_RETURN(first_dense, r.Int("first_k_dense_replace", 0, 0));
    CAPPLAN_ASSIGN_OR_RETURN(freq, r.Int("moe_layer_freq", 1, 1));
    if (experts > 0) {
      for (int64_t i = 0; i < layers; ++i) {
        if (i >= first_dense && i % freq == 0) kinds.mlp[i] = v1::MLP_KIND_MOE;
      }
    }
    std::string topk_method;
    CAPPLAN_ASSIGN_OR_RETURN(topk_method, r.String("topk_method", model_type == "deepseek_v2" ? "" : "noaux_tc"));
    router_bias = topk_method == "noaux_tc";  // e_score_correction_bias
  } else if (r.Has("num_experts")) {
    CAPPLAN_ASSIGN_OR_RETURN(experts, r.Int("num_experts", 0, 0));
    CAPPLAN_ASSIGN_OR_RETURN(per_token, r.Int("num_experts_per_tok", 1, 0));
    CAPPLAN_ASSIGN_OR_RETURN(expert_width, r.Int("moe_intermediate_size", 1, 0));
    CAPPLAN_ASSIGN_OR_RETURN(shared_width, r.Int("shared_expert_intermediate_size", 0, 0));
    if (shared_width > 0) shared = 1;
    int64_t step = 1;
    CAPPLAN_ASSIGN_OR_RETURN(step, r.Int("decoder_sparse_step", 1, 1));
    std::set<int64_t> dense_only;
    const ListValue* mlp_only = nullptr;
    CAPPLAN_ASSIGN_OR_RETURN(mlp_only, r.List("mlp_only_layers"));
    if (mlp_only != nullptr) {
      for (int i = 0; i < mlp_only->values_size(); ++i) {
        const Value& v = mlp_only->values(i);
        const double x = v.number_value();
        // Checked before the cast: a double beyond int64 would be undefined.
        if (v.kind_case() != Value::kNumberValue || !(x >= 0) || x >= layers ||
            std::floor(x) != x) {
          return r.Error(absl::StrCat("mlp_only_layers[", i, "]"), v,
                         absl::StrCat("must be a layer index in [0, ", layers, ")"));
        }
        dense_only.insert(static_cast<int64_t>(x));
      }
    }
    if (experts > 0) {
      for (int64_t i = 0; i < layers; ++i) {
        if (!dense_only.count(i) && (i + 1) % step == 0) kinds.mlp[i] = v1::MLP_KIND_MOE;
      }
    }
  }
  if (experts > 0) {
    if (per_token <= 0) return r.Missing("num_experts_per_tok", "required for MoE");
    if (per_token > experts) {
      return r.Error(per_token_key, *r.Find(per_token_key),
                     absl::StrCat("must not exceed the number of experts = ", experts));
    }
    if (expert_width <= 0) {
      return r.Missing(model_type == "mixtral" || model_type == "gpt_oss" ? "intermediate_size"
                                                                          : "moe_intermediate_size",
                       "required for MoE");
    }
    v1::MoeConfig* moe = m.mutable_moe();
    moe->set_num_routed_experts(static_cast<uint32_t>(experts));
    moe->set_experts_per_token(static_cast<uint32_t>(per_token));
    moe->set_num_shared_experts(static_cast<uint32_t>(shared));
    moe->set_expert_intermediate_size(expert_width);
    moe->set_shared_expert_intermediate_size(shared_width);
    moe->set_router_bias(router_bias);
  }
  const bool any_dense = std::count(kinds.mlp.begin(), kinds.mlp.end(), v1::MLP_KIND_DENSE) > 0;
  if (any_dense && intermediate <= 0) {
    return r.Missing("intermediate_size", "required by dense MLP layers");
  }

  // ---- flags
  bool attention_bias = false;
  CAPPLAN_ASSIGN_OR_RETURN(attention_bias, r.Bool("attention_bias", false));
  if (model_type == "qwen2" || model_type == "qwen2_moe" || model_type == "gpt_oss") {
    attention_bias = true;
  }
  m.set_attention_bias(attention_bias);
  m.set_qk_norm(qwen3);
  m.set_gated_attention_output(model_type == "qwen3_next");
  int64_t mtp = 0;
  CAPPLAN_ASSIGN_OR_RETURN(mtp, r.Int("num_nextn_predict_layers", 0, model_type == "qwen3_next" ? 1 : 0));
  if (mtp == 0) {
    CAPPLAN_ASSIGN_OR_RETURN(mtp, r.Int("mtp_num_hidden_layers", 0, 0));
  }
  m.set_num_mtp_layers(static_cast<uint32_t>(mtp));

  AppendBlocks(kinds, m);

  // ---- quantization
  const Struct* quant = nullptr;
  CAPPLAN_ASSIGN_OR_RETURN(quant, top.Object("quantization_config"));
  if (quant == nullptr && text != &root) {
    CAPPLAN_ASSIGN_OR_RETURN(quant, r.Object("quantization_config"));
  }
  if (quant != nullptr) {
    absl::StatusOr<v1::Quantization> q = ReadQuantization(*quant);
    if (!q.ok()) return q.status();
    *m.mutable_quantization() = *std::move(q);
  }
  return m;
}

}  // namespace capplan::service
