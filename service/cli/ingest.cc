#include "service/cli/ingest.h"

#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/types/span.h"
#include "base/status_macros.h"
#include "service/catalog/file_util.h"
#include "service/cli/deployment_flags.h"
#include "service/translate/hf_config.h"
#include "service/translate/ingest.h"
#include "service/translate/ingest_baseline.h"
#include "service/translate/launch_line.h"

namespace capplan::service {
namespace {

constexpr char kUsage[] =
    "usage: capplan ingest FILE... --id ID (--model ID | --model-config FILE | --launch LINE) "
    "[--gpu ID --gpus N ...] [--max-concurrency N] [--request-rate R|inf] [--num-prompts N] "
    "--source URL (--out-dir DIR | --server HOST:PORT --token-file F)";

// --max-concurrency, --request-rate, --num-prompts: the load of files that
// print none, as the benchmark command set it.
absl::StatusOr<StatedLoad> StatedLoadFromFlags(const CliArgs& args) {
  StatedLoad load;
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> conc, args.GetInt("max-concurrency", 1));
  if (conc.has_value()) load.max_concurrency = static_cast<uint32_t>(*conc);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> prompts, args.GetInt("num-prompts", 1));
  if (prompts.has_value()) load.num_prompts = static_cast<uint32_t>(*prompts);
  const std::optional<std::string> rate = args.Get("request-rate");
  if (rate == "inf" || rate == "Inf" || rate == "infinity") {
    load.infinite_rate = true;
  } else if (rate.has_value()) {
    CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> r, args.GetDouble("request-rate"));
    if (!(*r > 0)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--request-rate = %s; must be a positive number of requests per second or inf", *rate));
    }
    load.request_rate_rps = *r;
  }
  return load;
}

absl::StatusOr<std::vector<IngestedFile>> ParseFiles(const CliContext& ctx) {
  IngestFormat format = IngestFormat::kAuto;
  if (auto f = ctx.args.Get("format")) {
    CAPPLAN_ASSIGN_OR_RETURN(format, IngestFormatFromName(*f));
  }
  std::vector<IngestedFile> files;
  const std::vector<std::string>& pos = ctx.args.positional();
  for (size_t i = 1; i < pos.size(); ++i) {
    absl::StatusOr<std::string> text = ReadFileLimited(pos[i], kMaxIngestFileBytes);
    if (!text.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("cannot read ", pos[i], ": ", text.status().message()));
    }
    const std::string name = std::filesystem::path(pos[i]).filename().string();
    CAPPLAN_ASSIGN_OR_RETURN(IngestedFile parsed, ParseMeasurementFile(name, *text, format));
    files.push_back(std::move(parsed));
  }
  if (files.empty()) return absl::InvalidArgumentError(kUsage);
  CAPPLAN_ASSIGN_OR_RETURN(StatedLoad load, StatedLoadFromFlags(ctx.args));
  CAPPLAN_RETURN_IF_ERROR(ApplyStatedLoad(load, absl::MakeSpan(files)));
  return files;
}

// The deployment from a launch line, with the flags a line cannot state.
absl::StatusOr<v1::Deployment> DeploymentFromLaunch(const CliArgs& args, const std::string& line) {
  CAPPLAN_ASSIGN_OR_RETURN(LaunchLine launch, ParseLaunchLine(line));
  v1::Deployment d = launch.deployment;
  if (auto v = args.Get("model")) d.set_model_id(*v);
  if (auto v = args.Get("gpu")) d.set_hardware_id(*v);
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<int64_t> gpus, args.GetInt("gpus", 1));
  if (gpus.has_value()) d.set_gpu_count(static_cast<uint32_t>(*gpus));
  if (auto v = args.Get("engine-version")) d.mutable_engine()->set_version(*v);
  return d;
}

// The model entry to write with the baseline when it comes as config.json.
absl::StatusOr<v1::Model> ModelFromConfigFlag(const CliArgs& args, const std::string& json) {
  CAPPLAN_ASSIGN_OR_RETURN(v1::Model m, ModelFromHfConfig(json));
  std::string id = args.Get("model-id")
                       .value_or(ModelIdFromRepo(args.Get("model-hf-id").value_or(m.hf_repo_id())));
  if (id.empty()) {
    return absl::InvalidArgumentError(
        "--model-config: config.json names no repository (_name_or_path); give --model-id ID or "
        "--model-hf-id ORG/NAME");
  }
  m.set_id(id);
  if (auto v = args.Get("model-hf-id")) m.set_hf_repo_id(*v);
  if (auto v = args.Get("model-display-name")) m.set_display_name(*v);
  if (auto v = args.Get("model-family")) m.set_family(*v);
  const std::string source = args.Get("model-source").value_or("");
  if (source.empty()) {
    return absl::InvalidArgumentError(
        "--model-source is missing; a model entry cites where its config.json comes from (a "
        "commit-pinned URL)");
  }
  v1::Citation* c = m.add_sources();
  for (const char* f :
       {"hidden_size", "intermediate_size", "num_attention_heads", "num_kv_heads", "head_dim",
        "vocab_size", "layer_blocks", "native_context_tokens", "sliding_window_tokens", "mla",
        "linear_attention", "moe", "rope_scaling_factor", "rope_original_context_tokens",
        "num_mtp_layers", "quantization", "vision_encoder"}) {
    c->add_fields(f);
  }
  c->set_document(source);
  c->set_section("config.json");
  return m;
}

absl::StatusOr<IngestSpec> SpecFromFlags(const CliContext& ctx, std::optional<v1::Model>* model) {
  IngestSpec spec;
  spec.id = ctx.args.Get("id").value_or("");
  if (spec.id.empty()) return absl::InvalidArgumentError("--id is missing; " + std::string(kUsage));
  spec.title = ctx.args.Get("title").value_or("");
  if (auto line = ctx.args.Get("launch")) {
    CAPPLAN_ASSIGN_OR_RETURN(spec.deployment, DeploymentFromLaunch(ctx.args, *line));
  } else {
    CAPPLAN_ASSIGN_OR_RETURN(spec.deployment, DeploymentFromFlags(ctx.args));
  }
  if (spec.deployment.has_model_config_json()) {
    CAPPLAN_ASSIGN_OR_RETURN(*model,
                             ModelFromConfigFlag(ctx.args, spec.deployment.model_config_json()));
    spec.deployment.set_model_id((*model)->id());
  }
  v1::Provenance& p = spec.provenance;
  p.set_source_document(ctx.args.Get("source").value_or(""));
  p.set_section(ctx.args.Get("section").value_or(""));
  p.set_measured_by(ctx.args.Get("measured-by").value_or(""));
  p.set_date(ctx.args.Get("date").value_or(""));
  p.set_notes(ctx.args.Get("notes").value_or(""));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> in, ctx.args.GetDouble("input-tokens"));
  CAPPLAN_ASSIGN_OR_RETURN(std::optional<double> out, ctx.args.GetDouble("output-tokens"));
  spec.input_tokens = in;
  spec.output_tokens = out;
  return spec;
}

// The catalogue id of the model the deployment names (a repo id or alias
// becomes the entry's own id).
absl::Status ResolveModelId(CliContext& ctx, IngestSpec* spec) {
  if (spec->deployment.model_id().empty()) return absl::OkStatus();
  v1::GetModelRequest request;
  request.set_id(spec->deployment.model_id());
  absl::StatusOr<v1::ModelInfo> info = ctx.planner->GetModel(request);
  if (!info.ok()) {
    return absl::Status(
        info.status().code(),
        absl::StrCat("--model = ", spec->deployment.model_id(), ": ", info.status().message(),
                     " (or give its config.json with --model-config)"));
  }
  spec->deployment.set_model_id(info->model().id());
  spec->model = info->model();
  return absl::OkStatus();
}

absl::StatusOr<int> RunIngest(CliContext& ctx) {
  if (!ctx.args.Has("out-dir") && !ctx.args.Has("server")) {
    return absl::InvalidArgumentError(
        "say where the baseline goes: --out-dir DIR (a copy of data/ for a pull request) or "
        "--server HOST:PORT --token-file FILE");
  }
  CAPPLAN_ASSIGN_OR_RETURN(std::vector<IngestedFile> files, ParseFiles(ctx));
  std::optional<v1::Model> model;
  CAPPLAN_ASSIGN_OR_RETURN(IngestSpec spec, SpecFromFlags(ctx, &model));
  if (model.has_value()) {
    spec.model = *model;
  } else {
    CAPPLAN_RETURN_IF_ERROR(ResolveModelId(ctx, &spec));
  }
  v1::PutBaselineRequest request;
  CAPPLAN_ASSIGN_OR_RETURN(*request.mutable_baseline(), AssembleBaseline(spec, files));
  if (model.has_value()) *request.mutable_model() = *model;
  request.set_replace(ctx.args.Has("replace"));
  CAPPLAN_ASSIGN_OR_RETURN(v1::PutBaselineResponse response, ctx.planner->PutBaseline(request));
  if (ctx.json) {
    CAPPLAN_RETURN_IF_ERROR(PrintJson(response, ctx.out));
    return 0;
  }
  const v1::Baseline& b = request.baseline();
  int rows = 0;
  for (const v1::Sweep& s : b.sweeps()) rows += s.rows_size();
  ctx.out << absl::StrFormat("%s baseline %s (%s): %d %s in %d %s, %d KV %s\n",
                             response.replaced() ? "replaced" : "wrote", response.id(),
                             response.file(), rows, rows == 1 ? "row" : "rows", b.sweeps_size(),
                             b.sweeps_size() == 1 ? "sweep" : "sweeps", b.kv_pools_size(),
                             b.kv_pools_size() == 1 ? "pool" : "pools");
  for (const v1::LintFinding& f : response.findings()) {
    ctx.out << "lint " << f.code() << " " << f.field() << ": " << f.message() << "\n";
  }
  return 0;
}

std::vector<std::string> IngestValuedFlags() {
  std::vector<std::string> flags = DeploymentValuedFlags();
  for (const char* f :
       {"id", "title", "format", "launch", "source", "section", "measured-by", "date", "notes",
        "input-tokens", "output-tokens", "out-dir", "token-file"}) {
    flags.push_back(f);
  }
  // The model entry from --model-config, and the load of files that print none.
  for (const char* f : {"model-id", "model-source", "model-hf-id", "model-display-name",
                        "model-family", "max-concurrency", "request-rate", "num-prompts"}) {
    flags.push_back(f);
  }
  return flags;
}

}  // namespace

CliCommandSpec IngestCommandSpec() {
  std::vector<std::string> switches = DeploymentSwitches();
  switches.push_back("replace");
  return {"ingest", &RunIngest, IngestValuedFlags(), switches};
}

}  // namespace capplan::service
