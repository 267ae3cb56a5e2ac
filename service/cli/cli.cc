#include "service/cli/cli.h"

#include <memory>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "base/status_macros.h"
#include "service/catalog/file_util.h"
#include "service/catalog/store.h"
#include "service/catalog/suggest.h"
#include "service/cli/args.h"
#include "service/cli/catalog_print.h"
#include "service/cli/context.h"
#include "service/cli/deployment_flags.h"
#include "service/cli/flag_errors.h"
#include "service/cli/format.h"
#include "service/cli/help.h"
#include "service/planner/planner.h"
#include "service/rpc/remote_planner.h"
#include "service/translate/enum_names.h"
#include "service/translate/model_translation.h"

namespace capplan::service {

absl::Status PrintJson(const google::protobuf::Message& message, std::ostream& out) {
  CAPPLAN_ASSIGN_OR_RETURN(std::string json, ToJson(message));
  out << json << "\n";
  return absl::OkStatus();
}

std::string EngineName(v1::EngineKind kind) {
  switch (kind) {
    case v1::ENGINE_KIND_VLLM:
      return "vllm";
    case v1::ENGINE_KIND_SGLANG:
      return "sglang";
    case v1::ENGINE_KIND_TRTLLM:
      return "trtllm";
    default:
      return "-";
  }
}

std::string TierName(v1::Tier tier) {
  std::string name = v1::Tier_Name(tier);
  return name.substr(name.rfind('_') + 1);
}

namespace {

absl::StatusOr<std::string> OneId(const CliContext& ctx, absl::string_view what) {
  const auto& pos = ctx.args.positional();
  if (pos.size() != 3) {
    return absl::InvalidArgumentError(absl::StrFormat("usage: capplan %s get ID", what));
  }
  return pos[2];
}

constexpr size_t kMaxConfigFileBytes = 8 << 20;

// A positional that names a config.json rather than a catalogue id.
bool LooksLikeConfigFile(const std::string& arg) {
  return absl::EndsWith(arg, ".json") || arg.find('/') == 0 || absl::StartsWith(arg, "./");
}

absl::Status Hardware(CliContext& ctx) {
  const auto& pos = ctx.args.positional();
  std::string verb = pos.size() > 1 ? pos[1] : "";
  if (verb == "list") {
    v1::ListHardwareRequest request;
    request.set_vendor(ctx.args.Get("vendor").value_or(""));
    CAPPLAN_ASSIGN_OR_RETURN(auto response, ctx.planner->ListHardware(request));
    if (ctx.json) return PrintJson(response, ctx.out);
    TextTable table({"ID", "NAME", "MEMORY (GiB)", "USABLE (GiB)", "BANDWIDTH (TB/s)",
                     "BF16 (TFLOP/s)", "FP8 (TFLOP/s)", "LINK"});
    for (const v1::Hardware& h : response.hardware()) {
      table.AddRow(
          {h.id(), h.name(), FormatGiB(h.memory_bytes()), FormatGiB(h.usable_memory_bytes()),
           FormatScaled(h.memory_bandwidth_bytes_per_second(), 1e12, 2),
           FormatScaled(PeakFlops(h, v1::NUMBER_FORMAT_BF16), 1e12, 0),
           FormatScaled(PeakFlops(h, v1::NUMBER_FORMAT_FP8), 1e12, 0), LinkName(h.intra_node())});
    }
    table.Print(ctx.out);
    return absl::OkStatus();
  }
  if (verb == "get") {
    CAPPLAN_ASSIGN_OR_RETURN(std::string id, OneId(ctx, "hardware"));
    v1::GetHardwareRequest request;
    request.set_id(id);
    CAPPLAN_ASSIGN_OR_RETURN(v1::Hardware h, ctx.planner->GetHardware(request));
    if (ctx.json) return PrintJson(h, ctx.out);
    PrintHardware(h, ctx.out);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError("usage: capplan hardware list|get ID");
}

absl::Status Models(CliContext& ctx) {
  const auto& pos = ctx.args.positional();
  std::string verb = pos.size() > 1 ? pos[1] : "";
  if (verb == "list") {
    v1::ListModelsRequest request;
    request.set_family(ctx.args.Get("family").value_or(""));
    CAPPLAN_ASSIGN_OR_RETURN(auto response, ctx.planner->ListModels(request));
    if (ctx.json) return PrintJson(response, ctx.out);
    TextTable table(
        {"ID", "HF REPO", "LAYERS", "PARAMS (B)", "ACTIVE (B)", "CONTEXT (tokens)", "WEIGHTS"});
    for (const v1::ModelInfo& info : response.models()) {
      const v1::Model& m = info.model();
      table.AddRow({m.id(), m.hf_repo_id(), absl::StrCat(info.derived().num_layers()),
                    BillionsText(info.derived().total_parameters()),
                    BillionsText(info.derived().active_parameters_per_token()),
                    FormatCount(static_cast<double>(m.native_context_tokens())), WeightsText(m)});
    }
    table.Print(ctx.out);
    return absl::OkStatus();
  }
  if (verb == "get") {
    CAPPLAN_ASSIGN_OR_RETURN(std::string id, OneId(ctx, "models"));
    v1::GetModelRequest request;
    if (LooksLikeConfigFile(id)) {
      absl::StatusOr<std::string> text = ReadFileLimited(id, kMaxConfigFileBytes);
      if (!text.ok()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "models get ", id, ": cannot read the config.json (", text.status().message(), ")"));
      }
      request.set_model_config_json(*text);
    } else {
      request.set_id(id);
    }
    CAPPLAN_ASSIGN_OR_RETURN(v1::ModelInfo info, ctx.planner->GetModel(request));
    if (ctx.json) return PrintJson(info, ctx.out);
    if (!request.model_config_json().empty()) {
      ctx.out << "what the planner reads from " << id << " (no catalogue entry needed):\n";
    }
    PrintModelInfo(info, ctx.out);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError("usage: capplan models list|get ID|CONFIG.json");
}

absl::Status Baselines(CliContext& ctx) {
  const auto& pos = ctx.args.positional();
  std::string verb = pos.size() > 1 ? pos[1] : "";
  if (verb == "list") {
    v1::ListBaselinesRequest request;
    request.set_hardware_id(ctx.args.Get("hardware").value_or(""));
    request.set_model_id(ctx.args.Get("model").value_or(""));
    if (auto engine = ctx.args.Get("engine")) {
      CAPPLAN_ASSIGN_OR_RETURN(v1::EngineKind kind, EngineKindFromName("--engine", *engine));
      request.set_engine(kind);
    }
    CAPPLAN_ASSIGN_OR_RETURN(auto response, ctx.planner->ListBaselines(request));
    if (ctx.json) return PrintJson(response, ctx.out);
    TextTable table({"ID", "MODEL", "HARDWARE", "GPUS", "ENGINE", "SOURCE"});
    for (const v1::Baseline& b : response.baselines()) {
      const v1::DeploymentConfig& d = b.deployment();
      table.AddRow({b.id(), d.model_id(),
                    d.hardware_id().empty() ? "(unspecified)" : d.hardware_id(),
                    absl::StrCat(d.gpu_count()), EngineName(d.engine().kind()),
                    b.provenance().source_document()});
    }
    table.Print(ctx.out);
    return absl::OkStatus();
  }
  if (verb == "get") {
    CAPPLAN_ASSIGN_OR_RETURN(std::string id, OneId(ctx, "baselines"));
    v1::GetBaselineRequest request;
    request.set_id(id);
    CAPPLAN_ASSIGN_OR_RETURN(v1::Baseline b, ctx.planner->GetBaseline(request));
    if (ctx.json) return PrintJson(b, ctx.out);
    PrintBaseline(b, ctx.out);
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError("usage: capplan baselines list|get ID");
}

void PrintMemoryPlan(const v1::MemoryPlan& plan, std::ostream& out) {
  const v1::ResolvedDeployment& d = plan.deployment();
  out << "deployment: " << (d.model_id().empty() ? "(config.json)" : d.model_id()) << " on "
      << Plural(d.gpu_count(), "GPU", "GPUs") << " × "
      << (d.hardware_id().empty() ? "(GPU withheld)" : d.hardware_id()) << ", tp " << d.tp()
      << ", pp " << d.pp() << ", ep " << d.ep() << ", " << EngineName(d.engine())
      << (d.engine_version().empty() ? "" : " " + d.engine_version()) << " (preset "
      << plan.provenance().engine_preset_id() << ")\n";
  out << absl::StrFormat(
      "settings:   memory fraction %.2f, max_model_len %s tokens, max_num_batched_tokens %s "
      "tokens, max_num_seqs %d requests, block %d tokens\n\n",
      d.memory_fraction(), FormatCount(static_cast<double>(d.max_model_len())),
      FormatCount(static_cast<double>(d.max_num_batched_tokens())), d.max_num_seqs(),
      d.block_size());
  const v1::PerGpuMemory& g = plan.per_gpu();
  TextTable table({"PER GPU", "GiB"});
  table.AddRow({"weights", FormatGiB(g.weights_bytes())});
  table.AddRow({"activation peak", FormatGiB(g.activation_peak_bytes())});
  table.AddRow({"non-torch (CUDA context, NCCL)", FormatGiB(g.non_torch_bytes())});
  table.AddRow({"CUDA graphs", FormatGiB(g.cuda_graph_bytes())});
  table.AddRow({"KV pool", FormatGiB(g.kv_pool_bytes())});
  if (g.state_pool_bytes() > 0) table.AddRow({"state pool", FormatGiB(g.state_pool_bytes())});
  table.AddRow({"used", FormatGiB(g.used_bytes())});
  table.AddRow({"capacity", FormatGiB(g.capacity_bytes())});
  table.Print(out);
  out << "\n";
  TextTable weights({"WEIGHTS PER GPU", "GiB"});
  const v1::WeightsByComponent& w = plan.weights_by_component();
  auto add = [&](const char* name, uint64_t bytes) {
    if (bytes > 0) weights.AddRow({name, FormatGiB(static_cast<double>(bytes))});
  };
  add("attention", w.attention_bytes());
  add("linear attention", w.linear_attention_bytes());
  add("vision encoder", w.vision_encoder_bytes());
  add("dense MLP", w.dense_mlp_bytes());
  add("routed experts", w.experts_bytes());
  add("shared experts", w.shared_experts_bytes());
  add("routers", w.router_bytes());
  add("embeddings", w.embeddings_bytes());
  add("LM head", w.lm_head_bytes());
  add("norms", w.norms_bytes());
  add("draft (MTP)", w.draft_bytes());
  weights.Print(out);
  out << "\n";
  out << "KV cache per token (per GPU): "
      << FormatCount(static_cast<double>(plan.kv_bytes_per_token())) << " bytes\n";
  out << "KV pool: " << FormatCount(static_cast<double>(plan.kv_pool_tokens())) << " tokens\n";
  if (plan.has_engine_reported_kv_pool_tokens()) {
    out << "the engine prints: "
        << FormatCount(static_cast<double>(plan.engine_reported_kv_pool_tokens()))
        << " tokens (its concurrency at max_model_len x max_model_len)\n";
  }
  if (plan.state_slots() > 0) {
    out << "state slots: "
        << Plural(static_cast<int64_t>(plan.state_slots()), "request", "requests") << "\n";
  }
  out << absl::StrFormat("max concurrency at max_model_len: %.2f requests\n",
                         plan.max_concurrency_at_max_model_len());
  if (plan.has_max_concurrency_at_mean_sequence()) {
    out << absl::StrFormat("max concurrency at the mean sequence: %.1f requests\n",
                           plan.max_concurrency_at_mean_sequence());
  }
  out << "fits: " << (plan.fits() ? "yes" : "NO") << " (binding: " << ShortName(plan.binding())
      << ")";
  if (plan.shortfall_bytes() > 0) {
    out << ", short by " << FormatGiB(static_cast<double>(plan.shortfall_bytes())) << " GiB";
  }
  out << "\n";
  const v1::PlanProvenance& p = plan.provenance();
  out << "tier: " << TierName(p.tier());
  if (p.baseline_ids_size() > 0)
    out << " (baselines: " << absl::StrJoin(p.baseline_ids(), ", ") << ")";
  out << "\n";
  for (const v1::MeasuredFigure& m : p.measured()) {
    out << absl::StrFormat("  measured %s = %s (%s: %s); model predicts %s (%+.1f%%)\n", m.name(),
                           FormatCount(m.measured()), m.baseline_id(), m.baseline_figure(),
                           FormatCount(m.predicted()), 100 * m.deviation_fraction());
  }
  for (const std::string& note : p.notes()) out << "note: " << note << "\n";
  for (const std::string& note : plan.notes()) out << "note: " << note << "\n";
}

absl::Status Memory(CliContext& ctx) {
  if (ctx.args.positional().size() != 1) {
    return absl::InvalidArgumentError(
        "usage: capplan memory --model ID (--gpu ID | --hardware-file FILE) [...]");
  }
  v1::PlanMemoryRequest request;
  CAPPLAN_ASSIGN_OR_RETURN(*request.mutable_deployment(), DeploymentFromFlags(ctx.args));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> mean, ctx.args.GetInt("mean-sequence-tokens", 1));
  if (mean.has_value()) request.set_mean_sequence_tokens(*mean);
  CAPPLAN_ASSIGN_OR_RETURN(v1::MemoryPlan plan, ctx.planner->PlanMemory(request, nullptr));
  if (ctx.json) return PrintJson(plan, ctx.out);
  PrintMemoryPlan(plan, ctx.out);
  return absl::OkStatus();
}

// Wraps a command that only succeeds or fails.
template <absl::Status (*F)(CliContext&)>
absl::StatusOr<int> Simple(CliContext& ctx) {
  absl::Status status = F(ctx);
  if (!status.ok()) return status;
  return kExitOk;
}

std::vector<std::string> WithDeploymentFlags(std::vector<std::string> flags) {
  flags.insert(flags.end(), DeploymentValuedFlags().begin(), DeploymentValuedFlags().end());
  return flags;
}

const std::vector<CliCommandSpec>& CatalogueCommands() {
  static const auto* const kCommands = new std::vector<CliCommandSpec>{
      {"hardware", &Simple<Hardware>, {"vendor"}, {}},
      {"models", &Simple<Models>, {"family"}, {}},
      {"baselines", &Simple<Baselines>, {"hardware", "model", "engine"}, {}},
      {"memory", &Simple<Memory>, WithDeploymentFlags({"mean-sequence-tokens"}),
       DeploymentSwitches()},
  };
  return *kCommands;
}

// The first word that is neither a flag nor a global flag's value.
std::string FindCommand(const std::vector<std::string>& args) {
  static const absl::flat_hash_set<std::string> kGlobalValued = {
      "--server",  "--data-dir",    "--timeout-seconds", "--token-file",
      "--out-dir", "--tls-ca-file", "--tls-cert-file",   "--tls-key-file"};
  for (size_t i = 0; i < args.size(); ++i) {
    if (kGlobalValued.contains(args[i])) {
      ++i;
      continue;
    }
    if (!absl::StartsWith(args[i], "--")) return args[i];
  }
  return "";
}

// --tls-ca-file, --tls-cert-file and --tls-key-file as PEM text; absent when
// none is given (plaintext).
absl::StatusOr<std::optional<ChannelTls>> TlsFromFlags(const CliArgs& args) {
  const std::optional<std::string> ca = args.Get("tls-ca-file");
  const std::optional<std::string> cert = args.Get("tls-cert-file");
  const std::optional<std::string> key = args.Get("tls-key-file");
  if (!ca && !cert && !key) return std::optional<ChannelTls>();
  if (cert.has_value() != key.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat(cert ? "--tls-cert-file" : "--tls-key-file",
                                                   " needs ",
                                                   cert ? "--tls-key-file" : "--tls-cert-file",
                                                   " (a client certificate and "
                                                   "its key go together)"));
  }
  ChannelTls tls;
  for (auto [flag, pem] :
       {std::pair{"tls-ca-file", &tls.ca_pem}, std::pair{"tls-cert-file", &tls.cert_pem},
        std::pair{"tls-key-file", &tls.key_pem}}) {
    const std::optional<std::string> file = args.Get(flag);
    if (!file.has_value()) continue;
    absl::StatusOr<std::string> text = ReadFileLimited(*file, 1 << 20);
    if (!text.ok() || text->find("-----BEGIN ") == std::string::npos) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", flag, " = ", *file, ": cannot read a PEM file from it"));
    }
    *pem = *std::move(text);
  }
  return std::optional<ChannelTls>(std::move(tls));
}

// The planner the command talks to: a server (--server, with the write
// token of --token-file), or the catalogue of --out-dir (writable: ingest
// writes into it) or --data-dir (read-only).
absl::StatusOr<std::unique_ptr<PlannerApi>> MakePlanner(const CliArgs& args,
                                                        std::optional<int64_t> timeout_seconds) {
  if (auto server = args.Get("server")) {
    if (args.Has("data-dir") || args.Has("out-dir")) {
      return absl::InvalidArgumentError("--server excludes --data-dir and --out-dir");
    }
    std::optional<std::string> token;
    if (auto file = args.Get("token-file")) {
      absl::StatusOr<std::string> text = ReadFileLimited(*file, 4096);
      if (!text.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("--token-file = ", *file, ": cannot read it"));
      }
      token = std::string(absl::StripAsciiWhitespace(text->substr(0, text->find('\n'))));
    }
    absl::StatusOr<std::optional<ChannelTls>> tls = TlsFromFlags(args);
    if (!tls.ok()) return tls.status();
    return std::unique_ptr<PlannerApi>(
        std::make_unique<RemotePlanner>(*server, absl::Seconds(timeout_seconds.value_or(10)), token,
                                        tls->has_value() ? ChannelCredentialsFor(*tls) : nullptr));
  }
  for (const char* flag : {"tls-ca-file", "tls-cert-file", "tls-key-file"}) {
    if (args.Has(flag)) {
      return absl::InvalidArgumentError(absl::StrCat("--", flag, " needs --server"));
    }
  }
  if (args.Has("data-dir") && args.Has("out-dir")) {
    return absl::InvalidArgumentError("--data-dir and --out-dir exclude each other");
  }
  const std::string dir =
      args.Get("out-dir").value_or(args.Get("data-dir").value_or(CAPPLAN_DEFAULT_DATA_DIR));
  std::shared_ptr<CatalogStore> store;
  if (args.Has("out-dir")) {
    absl::StatusOr<std::unique_ptr<DirectoryStore>> opened = DirectoryStore::Open(dir);
    if (!opened.ok()) return opened.status();
    store = *std::move(opened);
  }
  absl::StatusOr<std::shared_ptr<const Catalog>> catalog = Catalog::LoadFromDirectory(dir);
  if (!catalog.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("catalogue ", dir, " is invalid:\n", catalog.status().message()));
  }
  return std::unique_ptr<PlannerApi>(std::make_unique<Planner>(*catalog, std::move(store)));
}

// "; did you mean sweep?" for a mistyped command.
std::string CommandSuggestion(const std::string& name) {
  std::vector<SuggestionCandidate> names;
  for (const CliCommandSpec& c : AllCliCommands()) names.push_back({c.name, {}});
  names.push_back({"concepts", {}});
  return DidYouMean(SuggestIds(name, names, 3));
}

// `capplan help [CMD|concepts]`, `capplan [CMD] --help`, or no command.
int PrintHelp(const std::vector<std::string>& positional, const CliCommandSpec* spec, bool asked,
              std::ostream& out, std::ostream& err) {
  const std::string topic =
      spec != nullptr ? spec->name : (positional.size() > 1 ? positional[1] : "");
  if (topic == "concepts") {
    out << ConceptsText();
    return kExitOk;
  }
  for (const CliCommandSpec& c : AllCliCommands()) {
    if (c.name == topic) {
      out << CommandHelp(c);
      return kExitOk;
    }
  }
  if (!topic.empty()) {
    err << "capplan: no help on '" << topic << "'" << CommandSuggestion(topic)
        << " (see capplan --help)\n";
    return kExitInvalid;
  }
  (asked ? out : err) << TopLevelHelp(AllCliCommands());
  return asked ? kExitOk : kExitInvalid;
}

}  // namespace

const std::vector<CliCommandSpec>& AllCliCommands() {
  static const auto* const kAll = [] {
    auto* all = new std::vector<CliCommandSpec>(CatalogueCommands());
    for (const CliCommandSpec& extra : ExtraCliCommands()) all->push_back(extra);
    return all;
  }();
  return *kAll;
}

int RunCli(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  const std::string name = FindCommand(args);
  const CliCommandSpec* spec = nullptr;
  for (const CliCommandSpec& c : AllCliCommands()) {
    if (c.name == name) spec = &c;
  }
  absl::flat_hash_set<std::string> switches(GlobalSwitches().begin(), GlobalSwitches().end());
  absl::flat_hash_set<std::string> valued(GlobalValuedFlags().begin(), GlobalValuedFlags().end());
  if (spec != nullptr) {
    valued.insert(spec->valued.begin(), spec->valued.end());
    switches.insert(spec->switches.begin(), spec->switches.end());
  }
  absl::StatusOr<CliArgs> parsed = CliArgs::Parse(args, switches, valued);
  if (!parsed.ok()) {
    err << "capplan: " << parsed.status().message() << "\n";
    return kExitInvalid;
  }
  if (parsed->Has("help") || name.empty() || name == "help") {
    return PrintHelp(parsed->positional(), spec, parsed->Has("help") || name == "help", out, err);
  }
  if (spec == nullptr) {
    err << "capplan: unknown command '" << name << "'" << CommandSuggestion(name)
        << " (see capplan --help)\n";
    return kExitInvalid;
  }
  CliContext ctx{*std::move(parsed), nullptr, out, err, false};
  ctx.json = ctx.args.Has("json");
  absl::StatusOr<std::optional<int64_t>> timeout = ctx.args.GetInt("timeout-seconds", 1);
  if (!timeout.ok()) {
    err << "capplan: " << timeout.status().message() << "\n";
    return kExitInvalid;
  }
  absl::StatusOr<std::unique_ptr<PlannerApi>> planner = MakePlanner(ctx.args, *timeout);
  if (!planner.ok()) {
    err << "capplan: " << planner.status().message() << "\n";
    return kExitInvalid;
  }
  ctx.planner = *std::move(planner);

  absl::StatusOr<int> code = spec->run(ctx);
  if (!code.ok()) {
    err << "capplan: " << absl::StatusCodeToString(code.status().code()) << ": "
        << InFlagTerms(code.status().message(), ctx.args) << "\n";
    return kExitInvalid;
  }
  return *code;
}

}  // namespace capplan::service
