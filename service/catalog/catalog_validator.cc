#include "service/catalog/catalog_validator.h"

#include <algorithm>
#include <cmath>
#include <optional>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "capplan/v1/catalog.pb.h"
#include "google/protobuf/descriptor.h"
#include "model/step_time.h"

namespace capplan::service {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Fields that are shares of something: must lie in (0, 1].
bool IsFractionField(absl::string_view name) {
  return name == "gpu_memory_utilization" || name == "mem_fraction_static" ||
         name == "used_fraction" || name == "acceptance_rate" || name == "prefix_cache_hit_rate" ||
         name == "min_scaling_efficiency";
}

// Fields whose name carries a physical unit: must be > 0 when present.
bool IsPositiveUnitField(absl::string_view name) {
  return absl::EndsWith(name, "_bytes") || absl::EndsWith(name, "_per_second") ||
         absl::EndsWith(name, "_seconds") || absl::EndsWith(name, "_rps") ||
         absl::EndsWith(name, "_watts") || name == "tokens" || name == "mean_input_tokens" ||
         name == "mean_output_tokens";
}

std::optional<double> NumericValue(const Message& m, const FieldDescriptor* f, int index) {
  const Reflection* r = m.GetReflection();
  bool rep = f->is_repeated();
  switch (f->cpp_type()) {
    case FieldDescriptor::CPPTYPE_DOUBLE:
      return rep ? r->GetRepeatedDouble(m, f, index) : r->GetDouble(m, f);
    case FieldDescriptor::CPPTYPE_FLOAT:
      return rep ? r->GetRepeatedFloat(m, f, index) : r->GetFloat(m, f);
    case FieldDescriptor::CPPTYPE_INT32:
      return rep ? r->GetRepeatedInt32(m, f, index) : r->GetInt32(m, f);
    case FieldDescriptor::CPPTYPE_INT64:
      return static_cast<double>(rep ? r->GetRepeatedInt64(m, f, index) : r->GetInt64(m, f));
    case FieldDescriptor::CPPTYPE_UINT32:
      return rep ? r->GetRepeatedUInt32(m, f, index) : r->GetUInt32(m, f);
    case FieldDescriptor::CPPTYPE_UINT64:
      return static_cast<double>(rep ? r->GetRepeatedUInt64(m, f, index) : r->GetUInt64(m, f));
    default:
      return std::nullopt;
  }
}

class Validator {
 public:
  std::vector<Finding> Take() { return std::move(findings_); }

  void Add(const std::string& path, const std::string& message) {
    findings_.push_back({path, absl::StrCat(path, message)});
  }

  // Generic range rules over every numeric field of the tree.
  void Walk(const Message& m, const std::string& prefix) {
    const Reflection* r = m.GetReflection();
    std::vector<const FieldDescriptor*> fields;
    r->ListFields(m, &fields);
    for (const FieldDescriptor* f : fields) {
      std::string base = prefix.empty() ? f->name() : absl::StrCat(prefix, ".", f->name());
      int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
      for (int i = 0; i < n; ++i) {
        std::string path = f->is_repeated() ? absl::StrCat(base, "[", i, "]") : base;
        if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
          Walk(f->is_repeated() ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f), path);
          continue;
        }
        std::optional<double> v = NumericValue(m, f, i);
        if (!v.has_value()) continue;
        if (!std::isfinite(*v)) {
          Add(path, absl::StrFormat(" = %g; must be finite", *v));
        } else if (IsFractionField(f->name()) && !(*v > 0 && *v <= 1)) {
          Add(path, absl::StrFormat(" = %g; must be in (0, 1]", *v));
        } else if (IsPositiveUnitField(f->name()) && !(*v > 0)) {
          Add(path, absl::StrFormat(" = %g; must be > 0", *v));
        }
      }
    }
  }

  void Id(const std::string& id) {
    if (id.empty()) {
      Add("id", " is empty; every entity needs a kebab-case id");
    } else if (!IsValidId(id)) {
      // Cut: an id may come from a request, and errors echo it.
      constexpr size_t kShown = 80;
      const std::string shown = id.size() > kShown ? id.substr(0, kShown) + "..." : id;
      Add("id", absl::StrFormat(" = \"%s\"; must be lowercase kebab-case "
                                "([a-z0-9] words joined by '-', dots inside "
                                "version numbers, at most 96 characters)",
                                shown));
    }
  }

  void Positive(const std::string& path, double value) {
    if (!(value > 0)) Add(path, absl::StrFormat(" = %g; must be > 0", value));
  }

  // Every numeric leaf of `m` that is set must be named by some citation
  // (when `required`); every citation must name its document.
  void Cited(const Message& m, const google::protobuf::RepeatedPtrField<v1::Citation>& sources,
             bool required) {
    absl::flat_hash_set<std::string> cited;
    for (int i = 0; i < sources.size(); ++i) {
      const v1::Citation& c = sources[i];
      if (c.document().empty()) {
        Add(absl::StrCat("sources[", i, "].document"),
            " is empty; a citation names its document (URL or seed file)");
      }
      for (const std::string& field : c.fields()) cited.insert(field);
    }
    if (required) CheckCited(m, "", cited);
  }

 private:
  void CheckCited(const Message& m, const std::string& prefix,
                  const absl::flat_hash_set<std::string>& cited) {
    const Reflection* r = m.GetReflection();
    std::vector<const FieldDescriptor*> fields;
    r->ListFields(m, &fields);
    for (const FieldDescriptor* f : fields) {
      std::string path = prefix.empty() ? f->name() : absl::StrCat(prefix, ".", f->name());
      if (f->name() == "sources") continue;
      if (f->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        if (cited.contains(path)) continue;  // a whole sub-message cited at once
        int n = f->is_repeated() ? r->FieldSize(m, f) : 1;
        for (int i = 0; i < n; ++i) {
          CheckCited(f->is_repeated() ? r->GetRepeatedMessage(m, f, i) : r->GetMessage(m, f), path,
                     cited);
        }
        continue;
      }
      bool numeric = NumericValue(m, f, 0).has_value() ||
                     (f->is_repeated() && f->cpp_type() != FieldDescriptor::CPPTYPE_STRING &&
                      f->cpp_type() != FieldDescriptor::CPPTYPE_ENUM &&
                      f->cpp_type() != FieldDescriptor::CPPTYPE_BOOL);
      if (!numeric) continue;
      // A citation may name the field, or any of its ancestors.
      bool ok = cited.contains(path);
      for (size_t dot = path.find('.'); !ok && dot != std::string::npos;
           dot = path.find('.', dot + 1)) {
        ok = cited.contains(path.substr(0, dot));
      }
      if (!ok) Add(path, " has no citation; name it in some sources[].fields");
    }
  }

  std::vector<Finding> findings_;
};

// Ranges no real accelerator falls outside: a figure beyond them is a unit
// slip (GB/s typed as bytes/s) or nonsense, in a file or a request alike.
struct HardwareRange {
  double min;
  double max;
};
constexpr HardwareRange kMemoryBytes{1073741824.0, 1125899906842624.0};  // 1 GiB .. 1 PiB
constexpr HardwareRange kMemoryBandwidth{1e10, 1e15};                    // bytes/s
constexpr HardwareRange kPeakCompute{1e11, 1e18};                        // dense FLOP/s
constexpr HardwareRange kLinkBandwidth{1e8, 1e14};                       // bytes/s
constexpr HardwareRange kPowerWatts{1, 1e5};
constexpr uint32_t kMaxPcieGeneration = 8;
constexpr uint32_t kMaxGpusPerNode = 4096;

void WithinRange(const std::string& path, double value, HardwareRange range, const char* unit,
                 Validator* v) {
  if (!(value > 0) || !std::isfinite(value)) return;  // absent, or reported by the walk
  if (value < range.min || value > range.max) {
    v->Add(path,
           absl::StrFormat(" = %g; must be in [%g, %g] %s", value, range.min, range.max, unit));
  }
}

void HardwareRanges(const v1::Hardware& h, Validator* v) {
  WithinRange("memory_bytes", static_cast<double>(h.memory_bytes()), kMemoryBytes, "bytes", v);
  WithinRange("usable_memory_bytes", static_cast<double>(h.usable_memory_bytes()), kMemoryBytes,
              "bytes", v);
  WithinRange("memory_bandwidth_bytes_per_second", h.memory_bandwidth_bytes_per_second(),
              kMemoryBandwidth, "bytes/s", v);
  for (int i = 0; i < h.peak_compute_size(); ++i) {
    WithinRange(absl::StrCat("peak_compute[", i, "].dense_flops_per_second"),
                h.peak_compute(i).dense_flops_per_second(), kPeakCompute, "FLOP/s", v);
  }
  WithinRange("intra_node.bandwidth_bytes_per_second", h.intra_node().bandwidth_bytes_per_second(),
              kLinkBandwidth, "bytes/s", v);
  WithinRange("inter_node.bandwidth_bytes_per_second", h.inter_node().bandwidth_bytes_per_second(),
              kLinkBandwidth, "bytes/s", v);
  WithinRange("power_watts", h.power_watts(), kPowerWatts, "W", v);
  if (h.intra_node().pcie_generation() > kMaxPcieGeneration) {
    v->Add("intra_node.pcie_generation",
           absl::StrFormat(" = %d; must be in [1, %d]", h.intra_node().pcie_generation(),
                           kMaxPcieGeneration));
  }
  if (h.max_gpus_per_node() > kMaxGpusPerNode) {
    v->Add("max_gpus_per_node",
           absl::StrFormat(" = %d; must be in [1, %d]", h.max_gpus_per_node(), kMaxGpusPerNode));
  }
}

void ValidateHardware(const v1::Hardware& h, const ValidationRules& rules, Validator* v) {
  v->Id(h.id());
  if (h.vendor().empty()) v->Add("vendor", " is empty; required");
  if (h.name().empty()) v->Add("name", " is empty; required");
  v->Positive("memory_bytes", static_cast<double>(h.memory_bytes()));
  v->Positive("usable_memory_bytes", static_cast<double>(h.usable_memory_bytes()));
  HardwareRanges(h, v);
  if (!h.compute_capability().empty()) {
    const std::vector<std::string> parts = absl::StrSplit(h.compute_capability(), '.');
    int major = 0, minor = 0;
    if (parts.size() != 2 || !absl::SimpleAtoi(parts[0], &major) ||
        !absl::SimpleAtoi(parts[1], &minor) || major < 1 || minor < 0) {
      v->Add("compute_capability",
             absl::StrFormat(" = \"%s\"; must be major.minor like 8.0", h.compute_capability()));
    }
  }
  if (h.usable_memory_bytes() > h.memory_bytes() * 11 / 10) {
    v->Add("usable_memory_bytes",
           absl::StrFormat(" = %d; must not exceed memory_bytes = %d by more "
                           "than 10%%",
                           h.usable_memory_bytes(), h.memory_bytes()));
  }
  for (int i = 0; i < h.peak_compute_size(); ++i) {
    if (h.peak_compute(i).format() == v1::NUMBER_FORMAT_UNSPECIFIED) {
      v->Add(absl::StrCat("peak_compute[", i, "].format"), " is unspecified; required");
    }
    if (h.peak_compute(i).dense_flops_per_second() == 0) {
      v->Add(absl::StrCat("peak_compute[", i, "].dense_flops_per_second"),
             " = 0; must be > 0 (leave out a format whose figure is unknown)");
    }
  }
  v->Cited(h, h.sources(), rules.require_citations);
}

void ValidateModel(const v1::Model& m, const ValidationRules& rules, Validator* v) {
  v->Id(m.id());
  v->Positive("hidden_size", static_cast<double>(m.hidden_size()));
  v->Positive("num_attention_heads", m.num_attention_heads());
  v->Positive("vocab_size", static_cast<double>(m.vocab_size()));
  v->Positive("native_context_tokens", static_cast<double>(m.native_context_tokens()));
  if (m.num_kv_heads() == 0) {
    v->Add("num_kv_heads", " = 0; must be > 0");
  } else if (m.num_attention_heads() % m.num_kv_heads() != 0) {
    v->Add("num_kv_heads", absl::StrFormat(" = %d; must divide num_attention_heads = %d",
                                           m.num_kv_heads(), m.num_attention_heads()));
  }
  if (m.layer_blocks_size() == 0) {
    v->Add("layer_blocks", " is empty; a model needs at least one layer");
  }
  bool any_moe = false, any_sliding = false, any_mla = false, any_linear = false, any_mamba = false,
       any_dense = false;
  for (int b = 0; b < m.layer_blocks_size(); ++b) {
    const v1::LayerBlock& block = m.layer_blocks(b);
    std::string bp = absl::StrCat("layer_blocks[", b, "]");
    if (block.repeat() == 0) v->Add(bp + ".repeat", " = 0; must be > 0");
    if (block.layers_size() == 0) v->Add(bp + ".layers", " is empty; required");
    for (int l = 0; l < block.layers_size(); ++l) {
      const v1::LayerSpec& spec = block.layers(l);
      std::string lp = absl::StrCat(bp, ".layers[", l, "]");
      if (spec.count() == 0) v->Add(lp + ".count", " = 0; must be > 0");
      if (spec.attention() == v1::ATTENTION_KIND_UNSPECIFIED) {
        v->Add(lp + ".attention", " is unspecified; required");
      }
      if (spec.mlp() == v1::MLP_KIND_UNSPECIFIED) {
        v->Add(lp + ".mlp", " is unspecified; required");
      }
      any_moe |= spec.mlp() == v1::MLP_KIND_MOE;
      any_dense |= spec.mlp() == v1::MLP_KIND_DENSE;
      any_sliding |= spec.attention() == v1::ATTENTION_KIND_SLIDING_WINDOW;
      any_mla |= spec.attention() == v1::ATTENTION_KIND_MLA;
      any_linear |= spec.attention() == v1::ATTENTION_KIND_LINEAR;
      any_mamba |= spec.attention() == v1::ATTENTION_KIND_MAMBA;
    }
  }
  if (any_moe) {
    const v1::MoeConfig& moe = m.moe();
    v->Positive("moe.num_routed_experts", moe.num_routed_experts());
    v->Positive("moe.expert_intermediate_size",
                static_cast<double>(moe.expert_intermediate_size()));
    if (moe.experts_per_token() == 0 || moe.experts_per_token() > moe.num_routed_experts()) {
      v->Add("moe.experts_per_token",
             absl::StrFormat(" = %d; must be in [1, num_routed_experts = %d]",
                             moe.experts_per_token(), moe.num_routed_experts()));
    }
  }
  if (any_dense) v->Positive("intermediate_size", static_cast<double>(m.intermediate_size()));
  if (any_sliding) v->Positive("sliding_window_tokens", m.sliding_window_tokens());
  if (any_mla) v->Positive("mla.kv_lora_rank", m.mla().kv_lora_rank());
  if (any_linear) {
    v->Positive("linear_attention.num_value_heads", m.linear_attention().num_value_heads());
    v->Positive("linear_attention.value_head_dim", m.linear_attention().value_head_dim());
  }
  if (const v1::NumberFormat f = m.linear_attention().recurrent_state_dtype();
      f != v1::NUMBER_FORMAT_UNSPECIFIED && f != v1::NUMBER_FORMAT_FP32 &&
      f != v1::NUMBER_FORMAT_BF16 && f != v1::NUMBER_FORMAT_FP16) {
    v->Add("linear_attention.recurrent_state_dtype",
           absl::StrCat(" = ", v1::NumberFormat_Name(f),
                        "; must be NUMBER_FORMAT_FP32, NUMBER_FORMAT_BF16 or NUMBER_FORMAT_FP16"));
  }
  if (any_mamba) v->Positive("mamba.state_size", m.mamba().state_size());
  if (m.has_quantization() && m.quantization().format() == v1::WEIGHT_FORMAT_UNSPECIFIED) {
    v->Add("quantization.format", " is unspecified; required when quantization is set");
  }
  if (m.native_dtype() == v1::NUMBER_FORMAT_UNSPECIFIED) {
    v->Add("native_dtype", " is unspecified; required (the checkpoint's torch_dtype)");
  }
  v->Cited(m, m.sources(), rules.require_citations);
}

void ValidateBaseline(const v1::Baseline& b, Validator* v) {
  v->Id(b.id());
  if (b.provenance().source_document().empty()) {
    v->Add("provenance.source_document", " is empty; every baseline names its source");
  }
  const v1::DeploymentConfig& d = b.deployment();
  if (d.hardware_id().empty() && d.hardware_description().empty()) {
    v->Add("deployment.hardware_id",
           " is empty; set it, or hardware_description when the source withholds the card");
  }
  if (d.model_id().empty()) v->Add("deployment.model_id", " is empty; required");
  v->Positive("deployment.gpu_count", d.gpu_count());
  // 64-bit product: two 32-bit sizes must not wrap to a zero divisor.
  const uint64_t tp = d.parallelism().tp() == 0 ? 1 : d.parallelism().tp();
  const uint64_t pp = d.parallelism().pp() == 0 ? 1 : d.parallelism().pp();
  if (d.gpu_count() > 0 && d.gpu_count() % (tp * pp) != 0) {
    v->Add("deployment.parallelism.tp",
           absl::StrFormat(" = %d (pp = %d); tp × pp must divide gpu_count = %d", tp, pp,
                           d.gpu_count()));
  }
  for (int s = 0; s < b.sweeps_size(); ++s) {
    for (int r = 0; r < b.sweeps(s).rows_size(); ++r) {
      const v1::SweepRow& row = b.sweeps(s).rows(r);
      const int loads =
          row.has_concurrency() + row.has_arrival_rate_rps() + row.has_burst_requests();
      if (loads == 0) {
        v->Add(absl::StrCat("sweeps[", s, "].rows[", r, "]"),
               " has none of concurrency, arrival_rate_rps and burst_requests; one is required");
      } else if (row.has_burst_requests() && loads > 1) {
        v->Add(absl::StrCat("sweeps[", s, "].rows[", r, "].burst_requests"),
               " is set with a concurrency or a rate; a burst has neither");
      } else if (row.has_burst_requests() && row.burst_requests() == 0) {
        v->Add(absl::StrCat("sweeps[", s, "].rows[", r, "].burst_requests"), " = 0; must be > 0");
      } else if (row.has_concurrency() && row.concurrency() == 0) {
        v->Add(absl::StrCat("sweeps[", s, "].rows[", r, "].concurrency"), " = 0; must be > 0");
      }
    }
  }
}

void ValidateEfficiencyPrior(const v1::EfficiencyPrior& p, Validator* v) {
  if (p.level() == v1::PRIOR_LEVEL_UNSPECIFIED) v->Add("level", " is unset; must be a PriorLevel");
  if (!(p.alpha_seconds() >= 0)) {
    v->Add("alpha_seconds", absl::StrFormat(" = %g; must be >= 0", p.alpha_seconds()));
  }
  for (const auto& [name, beta] :
       {std::make_pair("beta_weights", p.beta_weights()), std::make_pair("beta_kv", p.beta_kv()),
        std::make_pair("beta_flops", p.beta_flops()), std::make_pair("beta_comm", p.beta_comm())}) {
    if (!(beta >= 1) || !std::isfinite(beta)) {
      v->Add(name, absl::StrFormat(" = %g; must be >= 1 (an efficiency in (0, 1])", beta));
    }
  }
  if (p.observations() == 0) v->Add("observations", " = 0; a prior is fitted on rows");
}

void ValidateEnginePreset(const v1::EnginePreset& e, Validator* v) {
  v->Id(e.id());
  if (e.engine() == v1::ENGINE_KIND_UNSPECIFIED) {
    v->Add("engine", " is unspecified; required");
  }
  for (const auto& [name, value] :
       {std::pair<std::string, std::string>{"min_version", e.min_version()},
        {"max_version", e.max_version()},
        {"min_compute_capability", e.min_compute_capability()}}) {
    if (value.empty()) continue;
    for (absl::string_view part : absl::StrSplit(value, '.')) {
      int n;
      if (!absl::SimpleAtoi(part, &n) || n < 0) {
        v->Add(name, absl::StrFormat(" = \"%s\"; must be dotted numbers like 0.11.0", value));
        break;
      }
    }
  }
  if (e.state_blocks_with_prefix_caching() > 8) {
    v->Add("state_blocks_with_prefix_caching",
           absl::StrFormat(" = %d; must be in [0, 8] (blocks per request of a state group)",
                           e.state_blocks_with_prefix_caching()));
  }
  if (!e.hybrid_kv_cache_groups()) {
    if (e.hybrid_tokens_from_concurrency()) {
      v->Add("hybrid_tokens_from_concurrency",
             " is set; it describes the hybrid allocator: set hybrid_kv_cache_groups too");
    }
    if (e.state_blocks_with_prefix_caching() > 0) {
      v->Add("state_blocks_with_prefix_caching",
             " is set; it describes the hybrid allocator: set hybrid_kv_cache_groups too");
    }
  }
  if (e.min_compute_capability().empty() != e.below_compute_capability_preset().empty()) {
    v->Add(e.min_compute_capability().empty() ? "below_compute_capability_preset"
                                              : "min_compute_capability",
           " is set alone; give min_compute_capability and below_compute_capability_preset "
           "together");
  }
  if (!(e.sampler_logit_copies_prior() >= 0 && e.sampler_logit_copies_prior() <= 64)) {
    v->Add("sampler_logit_copies_prior",
           absl::StrFormat(" = %g; must be in [0, 64] (copies of the fp32 logits)",
                           e.sampler_logit_copies_prior()));
  }
  if (!(e.native_sampler_logit_copies_prior() >= 0 &&
        e.native_sampler_logit_copies_prior() <= 64)) {
    v->Add("native_sampler_logit_copies_prior",
           absl::StrFormat(" = %g; must be in [0, 64] (copies of the fp32 logits)",
                           e.native_sampler_logit_copies_prior()));
  }
  if (e.native_sampler_logit_copies_prior() > 0 && e.native_sampler_fit_group().empty()) {
    v->Add("native_sampler_logit_copies_prior",
           " is set without native_sampler_fit_group (the group whose copies it is the prior of)");
  }
  if (e.native_sampler_logit_copies_exact() && !(e.native_sampler_logit_copies_prior() >= 1 &&
                                                 e.native_sampler_logit_copies_prior() <= 10)) {
    v->Add("native_sampler_logit_copies_exact",
           absl::StrFormat(" is set with native_sampler_logit_copies_prior = %g; an exact count "
                           "must be in [1, 10] (the fit's bounds on sampler copies)",
                           e.native_sampler_logit_copies_prior()));
  }
  for (const v1::ActivationHiddenCopies& r : e.activation_hidden_copies()) {
    if (r.hidden_copies() < 1 || r.hidden_copies() > 8) {
      v->Add("activation_hidden_copies.hidden_copies",
             absl::StrFormat(" = %d; must be in [1, 8] (hidden-size widths at the peak)",
                             r.hidden_copies()));
    }
  }
  if (e.has_weights_allocator()) {
    const v1::AllocatorRounding& a = e.weights_allocator();
    if (a.segment_round_bytes() == 0 || a.segment_round_bytes() > (1ull << 30)) {
      v->Add("weights_allocator.segment_round_bytes",
             absl::StrFormat(" = %d; must be in [1, 2^30] bytes", a.segment_round_bytes()));
    }
    if (a.large_from_bytes() > (1ull << 40)) {
      v->Add("weights_allocator.large_from_bytes",
             absl::StrFormat(" = %d; must be at most 2^40 bytes", a.large_from_bytes()));
    }
  }
  if (!(e.kv_remaining_share() >= 0 && e.kv_remaining_share() <= 1)) {
    v->Add("kv_remaining_share",
           absl::StrFormat(" = %g; must be in [0, 1]", e.kv_remaining_share()));
  }
  if (e.batches_launched_ahead() > static_cast<uint32_t>(model::kMaxBatchesLaunchedAhead)) {
    v->Add("batches_launched_ahead",
           absl::StrFormat(" = %d; must be in [0, %d]", e.batches_launched_ahead(),
                           model::kMaxBatchesLaunchedAhead));
  }
  if (e.kv_remaining_share() > 0 &&
      e.kv_admission() != v1::KV_ADMISSION_RULE_RESERVE_REMAINING_SHARE) {
    v->Add("kv_remaining_share",
           " is set; only KV_ADMISSION_RULE_RESERVE_REMAINING_SHARE takes a share");
  }
}

// Bandwidths no storage path comes near (10 TB/s) are a unit slip.
constexpr double kMaxTierBandwidthBytesPerSecond = 1e13;

void ValidateKvStorageTier(const v1::KvStorageTierSpec& t, const ValidationRules& rules,
                           Validator* v) {
  v->Id(t.id());
  if (t.tier() != v1::STORAGE_TIER_HOST_DRAM && t.tier() != v1::STORAGE_TIER_LOCAL_NVME &&
      t.tier() != v1::STORAGE_TIER_NVME_OF) {
    v->Add("tier", absl::StrFormat(" = %s; must be STORAGE_TIER_HOST_DRAM, "
                                   "STORAGE_TIER_LOCAL_NVME or STORAGE_TIER_NVME_OF",
                                   v1::StorageTier_Name(t.tier())));
  }
  if (!(t.read_bandwidth_bytes_per_second() > 0 &&
        t.read_bandwidth_bytes_per_second() <= kMaxTierBandwidthBytesPerSecond)) {
    v->Add("read_bandwidth_bytes_per_second",
           absl::StrFormat(" = %g; must be in (0, %g] bytes/s", t.read_bandwidth_bytes_per_second(),
                           kMaxTierBandwidthBytesPerSecond));
  }
  if (!(t.path_bandwidth_bytes_per_second() >= 0 &&
        t.path_bandwidth_bytes_per_second() <= kMaxTierBandwidthBytesPerSecond)) {
    v->Add("path_bandwidth_bytes_per_second",
           absl::StrFormat(" = %g; must be 0 (not narrower than the tier) or in (0, %g] bytes/s",
                           t.path_bandwidth_bytes_per_second(), kMaxTierBandwidthBytesPerSecond));
  }
  if (t.path_per_gpu() && !(t.path_bandwidth_bytes_per_second() > 0)) {
    v->Add("path_per_gpu", " is set; it needs the per-GPU path_bandwidth_bytes_per_second");
  }
  if (!(t.latency_seconds() >= 0 && t.latency_seconds() <= 1)) {
    v->Add("latency_seconds", absl::StrFormat(" = %g; must be in [0, 1] s", t.latency_seconds()));
  }
  v->Cited(t, t.sources(), rules.require_citations);
}

}  // namespace

bool IsValidId(const std::string& id) {
  if (id.empty() || id.size() > 96) return false;
  char prev = '-';
  for (char c : id) {
    bool word = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    bool sep = c == '-' || c == '.';
    if (!word && !sep) return false;
    if (sep && (prev == '-' || prev == '.')) return false;
    prev = c;
  }
  return prev != '-' && prev != '.';
}

std::vector<Finding> ValidateEntity(const Message& entity, const ValidationRules& rules) {
  Validator v;
  v.Walk(entity, "");
  if (auto* h = dynamic_cast<const v1::Hardware*>(&entity)) ValidateHardware(*h, rules, &v);
  if (auto* m = dynamic_cast<const v1::Model*>(&entity)) ValidateModel(*m, rules, &v);
  if (auto* b = dynamic_cast<const v1::Baseline*>(&entity)) ValidateBaseline(*b, &v);
  if (auto* e = dynamic_cast<const v1::EnginePreset*>(&entity)) ValidateEnginePreset(*e, &v);
  if (auto* p = dynamic_cast<const v1::EfficiencyPrior*>(&entity)) {
    ValidateEfficiencyPrior(*p, &v);
  }
  if (auto* t = dynamic_cast<const v1::KvStorageTierSpec*>(&entity)) {
    ValidateKvStorageTier(*t, rules, &v);
  }
  return v.Take();
}

Location LocateField(const Message& entity, const google::protobuf::TextFormat::ParseInfoTree& tree,
                     const std::string& field_path) {
  Location best;
  const Descriptor* descriptor = entity.GetDescriptor();
  const google::protobuf::TextFormat::ParseInfoTree* node = &tree;
  for (absl::string_view part : absl::StrSplit(field_path, '.')) {
    if (node == nullptr || descriptor == nullptr) break;
    int index = -1;
    size_t bracket = part.find('[');
    absl::string_view name = part.substr(0, bracket);
    if (bracket != absl::string_view::npos) {
      if (!absl::SimpleAtoi(part.substr(bracket + 1, part.size() - bracket - 2), &index)) {
        index = -1;
      }
    }
    const FieldDescriptor* f = descriptor->FindFieldByName(std::string(name));
    if (f == nullptr) break;
    int at_index = f->is_repeated() ? std::max(index, 0) : -1;
    google::protobuf::TextFormat::ParseLocation at = node->GetLocation(f, at_index);
    if (at.line >= 0) best = {at.line + 1, at.column + 1};
    if (f->cpp_type() != FieldDescriptor::CPPTYPE_MESSAGE) break;
    node = node->GetTreeForNested(f, f->is_repeated() ? std::max(index, 0) : -1);
    descriptor = f->message_type();
  }
  return best;
}

}  // namespace capplan::service
