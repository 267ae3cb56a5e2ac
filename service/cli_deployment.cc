#include "service/cli_deployment.h"


#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "service/file_util.h"
#include "service/status_util.h"

namespace capplan::service {
namespace {

struct Named {
  const char* name;
  int value;
};

template <typename Enum, size_t N>
absl::StatusOr<Enum> Lookup(const std::string& flag, const std::string& text,
                            const Named (&table)[N]) {
  std::string lower = absl::AsciiStrToLower(text);
  std::vector<std::string> names;
  for (const Named& n : table) {
    if (lower == n.name) return static_cast<Enum>(n.value);
    names.push_back(n.name);
  }
  return absl::InvalidArgumentError(absl::StrFormat(
      "--%s = %s; must be one of %s", flag, text, absl::StrJoin(names, ", ")));
}

constexpr Named kFormats[] = {
    {"bf16", v1::WEIGHT_FORMAT_BF16},
    {"fp16", v1::WEIGHT_FORMAT_FP16},
    {"fp32", v1::WEIGHT_FORMAT_FP32},
    {"fp8", v1::WEIGHT_FORMAT_FP8_PER_TENSOR},
    {"fp8-block", v1::WEIGHT_FORMAT_FP8_BLOCK},
    {"fp8-channel", v1::WEIGHT_FORMAT_FP8_PER_CHANNEL},
    {"int8", v1::WEIGHT_FORMAT_INT8},
    {"awq", v1::WEIGHT_FORMAT_INT4_AWQ},
    {"gptq", v1::WEIGHT_FORMAT_INT4_GPTQ},
    {"int4", v1::WEIGHT_FORMAT_INT4_SYMMETRIC},
    {"moe_wna16", v1::WEIGHT_FORMAT_INT4_SYMMETRIC},
    {"nvfp4", v1::WEIGHT_FORMAT_NVFP4},
    {"mxfp4", v1::WEIGHT_FORMAT_MXFP4},
};

constexpr Named kEngines[] = {{"vllm", v1::ENGINE_KIND_VLLM},
                              {"sglang", v1::ENGINE_KIND_SGLANG}};

constexpr Named kKvDtypes[] = {{"auto", v1::KV_CACHE_DTYPE_AUTO},
                               {"bf16", v1::KV_CACHE_DTYPE_BF16},
                               {"fp16", v1::KV_CACHE_DTYPE_FP16},
                               {"fp8", v1::KV_CACHE_DTYPE_FP8}};

constexpr Named kSpeculative[] = {{"none", v1::SPECULATIVE_METHOD_NONE},
                                  {"mtp", v1::SPECULATIVE_METHOD_MTP},
                                  {"eagle", v1::SPECULATIVE_METHOD_EAGLE},
                                  {"draft", v1::SPECULATIVE_METHOD_DRAFT_MODEL},
                                  {"ngram", v1::SPECULATIVE_METHOD_NGRAM}};

}  // namespace

const std::vector<std::string>& DeploymentValuedFlags() {
  static const auto* const kFlags = new std::vector<std::string>{
      "model", "model-config", "baseline", "gpu", "gpus", "tp", "pp", "ep",
      "engine", "engine-version", "gpu-memory-utilization", "mem-fraction-static",
      "max-model-len", "max-num-batched-tokens", "max-num-seqs", "kv-cache-dtype",
      "quantization", "block-size", "max-cudagraph-batch-size", "speculative-method",
      "num-speculative-tokens"};
  return *kFlags;
}

const std::vector<std::string>& DeploymentSwitches() {
  static const auto* const kSwitches =
      new std::vector<std::string>{"enforce-eager", "dp-attention"};
  return *kSwitches;
}

absl::StatusOr<v1::WeightFormat> ParseWeightFormat(const std::string& text) {
  return Lookup<v1::WeightFormat>("quantization", text, kFormats);
}

absl::StatusOr<std::string> ReadFileForFlag(const std::string& flag,
                                            const std::string& path) {
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
  if (auto v = args.Get("gpu")) d.set_hardware_id(*v);

  auto count = [&](const char* flag, auto setter) -> absl::Status {
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> v, args.GetInt(flag, 1));
    if (v.has_value()) {
      if (*v > 1 << 30) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--%s = %d; too large", flag, *v));
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
  CAPPLAN_RETURN_IF_ERROR(count("max-cudagraph-batch-size",
                                [&](int64_t v) { e->set_max_cudagraph_batch_size(v); }));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> spec_tokens,
                           args.GetInt("num-speculative-tokens", 0));
  if (spec_tokens.has_value()) e->set_num_speculative_tokens(*spec_tokens);
  if (auto v = args.Get("engine")) {
    CAPPLAN_ASSIGN_OR_RETURN(v1::EngineKind kind, Lookup<v1::EngineKind>("engine", *v, kEngines));
    e->set_kind(kind);
  }
  if (auto v = args.Get("engine-version")) e->set_version(*v);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> gmu, args.GetDouble("gpu-memory-utilization"));
  if (gmu.has_value()) e->set_gpu_memory_utilization(*gmu);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> mfs, args.GetDouble("mem-fraction-static"));
  if (mfs.has_value()) e->set_mem_fraction_static(*mfs);
  if (auto v = args.Get("kv-cache-dtype")) {
    CAPPLAN_ASSIGN_OR_RETURN(v1::KvCacheDtype dtype,
                             Lookup<v1::KvCacheDtype>("kv-cache-dtype", *v, kKvDtypes));
    e->set_kv_cache_dtype(dtype);
  }
  if (auto v = args.Get("speculative-method")) {
    CAPPLAN_ASSIGN_OR_RETURN(v1::SpeculativeMethod method,
                             Lookup<v1::SpeculativeMethod>("speculative-method", *v, kSpeculative));
    e->set_speculative_method(method);
  }
  if (args.Has("enforce-eager")) e->set_enforce_eager(true);
  if (auto v = args.Get("quantization")) {
    CAPPLAN_ASSIGN_OR_RETURN(v1::WeightFormat format, ParseWeightFormat(*v));
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
  return absl::OkStatus();
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

}  // namespace capplan::service
