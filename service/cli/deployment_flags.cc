#include "service/cli/deployment_flags.h"

#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "service/catalog/entity_text.h"
#include "service/catalog/file_util.h"
#include "service/translate/enum_names.h"

namespace capplan::service {

const std::vector<std::string>& DeploymentValuedFlags() {
  static const auto* const kFlags =
      new std::vector<std::string>{"model",
                                   "model-config",
                                   "baseline",
                                   "gpu",
                                   "hardware-file",
                                   "gpus",
                                   "tp",
                                   "pp",
                                   "ep",
                                   "engine",
                                   "engine-version",
                                   "gpu-memory-utilization",
                                   "mem-fraction-static",
                                   "kv-cache-free-gpu-memory-fraction",
                                   "max-model-len",
                                   "max-num-batched-tokens",
                                   "max-num-seqs",
                                   "kv-cache-dtype",
                                   "sampler-backend",
                                   "quantization",
                                   "block-size",
                                   "max-cudagraph-batch-size",
                                   "speculative-method",
                                   "num-speculative-tokens",
                                   "kv-pool-tokens",
                                   "free-memory-gib"};
  return *kFlags;
}

const std::vector<std::string>& WorkloadShapeFlags() {
  static const auto* const kFlags =
      new std::vector<std::string>{"prefix-cache-hit-rate", "input-tokens-cv", "output-tokens-cv",
                                   "num-prompts"};
  return *kFlags;
}

const std::vector<std::string>& DeploymentSwitches() {
  static const auto* const kSwitches =
      new std::vector<std::string>{"enforce-eager", "dp-attention", "enable-prefix-caching",
                                   "no-enable-prefix-caching", "language-model-only"};
  return *kSwitches;
}

absl::StatusOr<std::string> ReadFileForFlag(const std::string& flag, const std::string& path) {
  constexpr size_t kMaxFlagFileBytes = 4 * 1024 * 1024;
  absl::StatusOr<std::string> text = ReadFileLimited(path, kMaxFlagFileBytes);
  if (text.ok()) return text;
  switch (text.status().code()) {
    case absl::StatusCode::kNotFound:
      return absl::InvalidArgumentError(
          absl::StrFormat("--%s = %s; cannot open the file", flag, path));
    case absl::StatusCode::kOutOfRange:
      return absl::InvalidArgumentError(
          absl::StrFormat("--%s = %s; the file is larger than 4 MiB", flag, path));
    default:
      return absl::InvalidArgumentError(
          absl::StrFormat("--%s = %s; cannot read the file", flag, path));
  }
}

absl::Status ApplyHardwareFlags(const CliArgs& args, v1::Deployment* d) {
  if (args.Has("gpu") && args.Has("hardware-file")) {
    return absl::InvalidArgumentError(
        "--gpu and --hardware-file exclude each other: --gpu names a catalogue card, "
        "--hardware-file gives one the catalogue lacks");
  }
  if (auto v = args.Get("gpu")) d->set_hardware_id(*v);
  if (auto path = args.Get("hardware-file")) {
    CAPPLAN_ASSIGN_OR_RETURN(std::string text, ReadFileForFlag("hardware-file", *path));
    CAPPLAN_RETURN_IF_ERROR(ParseEntityFile(
        *path, text, ValidationRules{.require_citations = false}, d->mutable_hardware()));
  }
  return absl::OkStatus();
}

absl::StatusOr<v1::Deployment> DeploymentFromFlags(const CliArgs& args) {
  v1::Deployment d;
  int sources = args.Has("model") + args.Has("model-config");
  if (sources > 1) {
    return absl::InvalidArgumentError("--model and --model-config exclude each other");
  }
  if (sources == 0 && !args.Has("baseline")) {
    return absl::InvalidArgumentError(
        "give the model: --model ID (catalogue or Hugging Face id), --model-config "
        "FILE (a config.json) or --baseline ID");
  }
  if (auto v = args.Get("baseline")) d.set_baseline_id(*v);
  if (auto v = args.Get("model")) d.set_model_id(*v);
  if (auto v = args.Get("model-config")) {
    CAPPLAN_ASSIGN_OR_RETURN(std::string text, ReadFileForFlag("model-config", *v));
    d.set_model_config_json(text);
  }
  CAPPLAN_RETURN_IF_ERROR(ApplyHardwareFlags(args, &d));

  auto count = [&](const char* flag, auto setter) -> absl::Status {
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> v, args.GetInt(flag, 1));
    if (v.has_value()) {
      if (*v > 1 << 30) {
        return absl::InvalidArgumentError(absl::StrFormat("--%s = %d; too large", flag, *v));
      }
      setter(*v);
    }
    return absl::OkStatus();
  };
  v1::DeploymentParallelism* p = d.mutable_parallelism();
  v1::EngineSettings* e = d.mutable_engine();
  CAPPLAN_RETURN_IF_ERROR(count("gpus", [&](int64_t v) { d.set_gpu_count(v); }));
  CAPPLAN_RETURN_IF_ERROR(count("tp", [&](int64_t v) { p->set_tp(v); }));
  CAPPLAN_RETURN_IF_ERROR(count("pp", [&](int64_t v) { p->set_pp(v); }));
  CAPPLAN_RETURN_IF_ERROR(count("ep", [&](int64_t v) { p->set_ep(v); }));
  if (args.Has("dp-attention")) p->set_dp_attention(true);
  CAPPLAN_RETURN_IF_ERROR(count("max-model-len", [&](int64_t v) { e->set_max_model_len(v); }));
  CAPPLAN_RETURN_IF_ERROR(
      count("max-num-batched-tokens", [&](int64_t v) { e->set_max_num_batched_tokens(v); }));
  CAPPLAN_RETURN_IF_ERROR(count("max-num-seqs", [&](int64_t v) { e->set_max_num_seqs(v); }));
  CAPPLAN_RETURN_IF_ERROR(count("block-size", [&](int64_t v) { e->set_block_size(v); }));
  CAPPLAN_RETURN_IF_ERROR(
      count("max-cudagraph-batch-size", [&](int64_t v) { e->set_max_cudagraph_batch_size(v); }));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> pool, args.GetInt("kv-pool-tokens", 1));
  if (pool.has_value()) e->set_kv_pool_tokens(static_cast<uint64_t>(*pool));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> spec_tokens,
                           args.GetInt("num-speculative-tokens", 0));
  if (spec_tokens.has_value()) e->set_num_speculative_tokens(*spec_tokens);
  if (auto v = args.Get("engine")) {
    CAPPLAN_ASSIGN_OR_RETURN(v1::EngineKind kind, EngineKindFromName("--engine", *v));
    e->set_kind(kind);
  }
  if (auto v = args.Get("engine-version")) e->set_version(*v);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> gmu, args.GetDouble("gpu-memory-utilization"));
  if (gmu.has_value()) e->set_gpu_memory_utilization(*gmu);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> mfs, args.GetDouble("mem-fraction-static"));
  if (mfs.has_value()) e->set_mem_fraction_static(*mfs);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> kvf,
                           args.GetDouble("kv-cache-free-gpu-memory-fraction"));
  if (kvf.has_value()) e->set_kv_cache_free_gpu_memory_fraction(*kvf);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> free_gib, args.GetDouble("free-memory-gib"));
  if (free_gib.has_value()) {
    // 2^50 bytes (1 PiB) bounds the conversion; the planner checks the card.
    if (!(*free_gib > 0) || *free_gib > 1048576) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--free-memory-gib = %g; must be in (0, 1048576] GiB (memory free on each GPU at start)",
          *free_gib));
    }
    e->set_free_memory_at_start_bytes(static_cast<uint64_t>(*free_gib * 1073741824.0 + 0.5));
  }
  if (auto v = args.Get("kv-cache-dtype")) {
    CAPPLAN_ASSIGN_OR_RETURN(v1::KvCacheDtype dtype, KvCacheDtypeFromName("--kv-cache-dtype", *v));
    e->set_kv_cache_dtype(dtype);
  }
  if (auto v = args.Get("sampler-backend")) {
    CAPPLAN_ASSIGN_OR_RETURN(v1::SamplerBackend backend,
                             SamplerBackendFromName("--sampler-backend", *v));
    e->set_sampler_backend(backend);
  }
  if (auto v = args.Get("speculative-method")) {
    CAPPLAN_ASSIGN_OR_RETURN(v1::SpeculativeMethod method,
                             SpeculativeMethodFromName("--speculative-method", *v));
    e->set_speculative_method(method);
  }
  if (args.Has("enforce-eager")) e->set_enforce_eager(true);
  if (args.Has("language-model-only")) e->set_language_model_only(true);
  if (args.Has("enable-prefix-caching") && args.Has("no-enable-prefix-caching")) {
    return absl::InvalidArgumentError(
        "--enable-prefix-caching and --no-enable-prefix-caching exclude each other");
  }
  if (args.Has("enable-prefix-caching")) e->set_enable_prefix_caching(true);
  if (args.Has("no-enable-prefix-caching")) e->set_enable_prefix_caching(false);
  if (auto v = args.Get("quantization")) {
    CAPPLAN_ASSIGN_OR_RETURN(v1::WeightFormat format, WeightFormatFromName("--quantization", *v));
    d.set_weight_format(format);
  }
  return d;
}

absl::Status ApplyWorkloadFlags(const CliArgs& args,
                                const std::function<v1::WorkloadSpec*()>& workload) {
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> in, args.GetDouble("input-tokens"));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> out, args.GetDouble("output-tokens"));
  if (in.has_value() != out.has_value()) {
    return absl::InvalidArgumentError("--input-tokens and --output-tokens go together");
  }
  if (in.has_value()) {
    workload()->set_input_tokens(*in);
    workload()->set_output_tokens(*out);
  }
  for (const auto& [flag, setter] :
       std::vector<std::pair<const char*, void (v1::WorkloadSpec::*)(double)>>{
           {"prefix-cache-hit-rate", &v1::WorkloadSpec::set_prefix_cache_hit_rate},
           {"input-tokens-cv", &v1::WorkloadSpec::set_input_tokens_cv},
           {"output-tokens-cv", &v1::WorkloadSpec::set_output_tokens_cv}}) {
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> v, args.GetDouble(flag));
    if (v.has_value()) (workload()->*setter)(*v);
  }
  if (args.Has("synchronized")) {
    if (!in.has_value()) {
      return absl::InvalidArgumentError(
          "--synchronized describes fixed-length requests: give --input-tokens and "
          "--output-tokens too");
    }
    workload()->set_synchronized(true);
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<uint32_t> prompts, NumPromptsFlag(args));
  if (prompts.has_value()) workload()->set_num_prompts(*prompts);
  return absl::OkStatus();
}

absl::StatusOr<std::optional<uint32_t>> NumPromptsFlag(const CliArgs& args) {
  // The server checks the bound (workload.num_prompts); here the field's width.
  CAPPLAN_ASSIGN_OR_RETURN(
      std::optional<int64_t> prompts,
      args.GetInt("num-prompts", 1, std::numeric_limits<uint32_t>::max()));
  if (!prompts.has_value()) return std::optional<uint32_t>();
  if (!args.Has("synchronized")) {
    return absl::InvalidArgumentError(
        "--num-prompts is a synchronized benchmark's prompt count: add --synchronized");
  }
  return std::optional<uint32_t>(static_cast<uint32_t>(*prompts));
}

absl::Status ApplySloFlags(const CliArgs& args, const std::function<v1::Slo*()>& slo) {
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> ttft, args.GetDouble("ttft-p95"));
  if (ttft.has_value()) slo()->set_ttft_p95_seconds(*ttft);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> tpot, args.GetDouble("tpot"));
  if (tpot.has_value()) slo()->set_tpot_seconds(*tpot);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> e2e, args.GetDouble("e2e-p95"));
  if (e2e.has_value()) slo()->set_e2e_p95_seconds(*e2e);
  return absl::OkStatus();
}

absl::StatusOr<double> MinUserTokensPerSecond(const CliArgs& args) {
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> rate,
                           args.GetDouble("min-user-tokens-per-second"));
  if (rate.has_value() && !(*rate > 0)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--min-user-tokens-per-second = %g; must be > 0 (tok/s per user)", *rate));
  }
  return rate.value_or(kDefaultMinUserTokensPerSecond);
}

std::optional<std::string> SlowUserWarning(std::optional<double> tpot_seconds, double min_rate) {
  if (!tpot_seconds.has_value() || !(*tpot_seconds > 0)) return std::nullopt;
  const double rate = 1 / *tpot_seconds;
  if (rate >= min_rate) return std::nullopt;
  return absl::StrFormat(
      "warning: at the safe point each user's answer streams at %.1f tok/s (1/TPOT, TPOT %.3f s), "
      "below a readable %g tok/s (--min-user-tokens-per-second); add --tpot %.3g to the SLO to "
      "bound it",
      rate, *tpot_seconds, min_rate, 1 / min_rate);
}

absl::StatusOr<std::vector<uint64_t>> KvRestoreContexts(const CliArgs& args) {
  std::vector<uint64_t> out;
  const std::optional<std::string> text = args.Get("kv-restore-context");
  if (!text.has_value()) return out;
  for (absl::string_view part : absl::StrSplit(*text, ',', absl::SkipWhitespace())) {
    uint64_t l = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &l) || l == 0) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--kv-restore-context = %s; '%s' is not a positive whole number of tokens (give e.g. "
          "8192,32768)",
          *text, part));
    }
    out.push_back(l);
  }
  if (out.empty()) {
    return absl::InvalidArgumentError("--kv-restore-context is empty; give e.g. 8192,32768");
  }
  return out;
}

}  // namespace capplan::service
