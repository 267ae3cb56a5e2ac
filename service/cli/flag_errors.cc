#include "service/cli/flag_errors.h"

#include <algorithm>
#include <regex>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace capplan::service {
namespace {

struct FieldFlag {
  const char* field;  // after the request message's name
  const char* flag;
};

constexpr FieldFlag kFieldFlags[] = {
    {"deployment.gpu_count", "gpus"},
    {"deployment.hardware_id", "gpu"},
    {"deployment.model_id", "model"},
    {"deployment.baseline_id", "baseline"},
    {"deployment.model_config_json", "model-config"},
    {"deployment.weight_format", "quantization"},
    {"deployment.parallelism.tp", "tp"},
    {"deployment.parallelism.pp", "pp"},
    {"deployment.parallelism.ep", "ep"},
    {"deployment.engine.kind", "engine"},
    {"deployment.engine.version", "engine-version"},
    {"deployment.engine.max_model_len", "max-model-len"},
    {"deployment.engine.max_num_seqs", "max-num-seqs"},
    {"deployment.engine.max_num_batched_tokens", "max-num-batched-tokens"},
    {"deployment.engine.gpu_memory_utilization", "gpu-memory-utilization"},
    {"deployment.engine.mem_fraction_static", "mem-fraction-static"},
    {"deployment.engine.kv_cache_free_gpu_memory_fraction", "kv-cache-free-gpu-memory-fraction"},
    {"deployment.engine.block_size", "block-size"},
    {"deployment.engine.max_cudagraph_batch_size", "max-cudagraph-batch-size"},
    {"deployment.engine.kv_cache_dtype", "kv-cache-dtype"},
    {"deployment.engine.sampler_backend", "sampler-backend"},
    {"deployment.engine.free_memory_at_start_bytes", "free-memory-gib"},
    {"deployment.engine.language_model_only", "language-model-only"},
    {"deployment.engine.speculative_method", "speculative-method"},
    {"deployment.engine.num_speculative_tokens", "num-speculative-tokens"},
    {"workload.input_tokens", "input-tokens"},
    {"workload.output_tokens", "output-tokens"},
    {"slo.ttft_p95_seconds", "ttft-p95"},
    {"slo.tpot_seconds", "tpot"},
    {"slo.e2e_p95_seconds", "e2e-p95"},
    {"target_requests_per_second", "target-rps"},
    {"target_concurrent_users", "target-users"},
    {"target_tokens_per_month", "target-tokens-per-month"},
    {"duty_factor", "duty-factor"},
    {"price_per_gpu_hour", "price-per-gpu-hour"},
    {"think_time_seconds", "think-time"},
    {"closed_loop.think_time_seconds", "think-time"},
    {"operator_concurrency_gate", "concurrency-gate"},
    {"expected_load.concurrent_users", "users"},
    {"expected_load.requests_per_second", "rps"},
    {"mean_sequence_tokens", "mean-sequence-tokens"},
    {"model_id", "model"},
    {"hardware_id", "hardware"},
};

// The RPCs a message may point to, and the commands that run them.
constexpr std::pair<const char*, const char*> kCommandsOfRpcs[] = {
    {"ListHardware", "capplan hardware list"},
    {"ListModels", "capplan models list"},
    {"ListBaselines", "capplan baselines list"},
    {"PlanMemory shows", "capplan memory shows"},
};

}  // namespace

std::optional<std::string> FlagForField(absl::string_view field_path) {
  for (const FieldFlag& f : kFieldFlags) {
    if (field_path == f.field) return std::string(f.flag);
  }
  return std::nullopt;
}

namespace {

std::string FieldsAsFlags(absl::string_view message, const CliArgs& args) {
  // A request field, optionally with " = value" (up to ; , or a space).
  static const std::regex kField(
      R"(\b[A-Z][A-Za-z]*Request\.([a-z_][a-z0-9_.]*[a-z0-9_])( = ([^;, ]+))?)");
  const std::string text(message);
  std::string out;
  std::vector<std::string> paths;
  auto last = text.cbegin();
  for (std::sregex_iterator it(text.begin(), text.end(), kField), end; it != end; ++it) {
    const std::smatch& m = *it;
    const std::optional<std::string> flag = FlagForField(m[1].str());
    const bool with_value = m[2].matched;
    std::string replacement;
    if (flag.has_value() && with_value && args.Has(*flag)) {
      std::string value = m[3].str();
      if (value.size() >= 2 && value.front() == '"' && value.back() == '"') {
        value = value.substr(1, value.size() - 2);
      }
      replacement = absl::StrCat("--", *flag, " ", value);
    } else if (flag.has_value() && !with_value) {
      replacement = absl::StrCat("--", *flag);
    } else {
      continue;
    }
    out.append(last, m[0].first);
    out += replacement;
    last = m[0].second;
    const std::string path = m[0].str().substr(0, m[0].str().find(" = "));
    if (std::find(paths.begin(), paths.end(), path) == paths.end()) paths.push_back(path);
  }
  if (paths.empty()) return text;
  out.append(last, text.cend());
  return absl::StrCat(out, " [", absl::StrJoin(paths, ", "), "]");
}

}  // namespace

std::string InFlagTerms(absl::string_view message, const CliArgs& args) {
  std::string rewritten(message);
  for (const auto& [rpc, command] : kCommandsOfRpcs) {
    // Whole words only: ListBaselinesRequest is a message, not the RPC.
    rewritten = std::regex_replace(rewritten, std::regex(absl::StrCat("\\b", rpc, "\\b")), command);
  }
  return FieldsAsFlags(rewritten, args);
}

}  // namespace capplan::service
