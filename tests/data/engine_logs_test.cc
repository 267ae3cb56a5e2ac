// Runs every real engine start-up log of tests/data/engine_logs through
// config.json -> ModelFromHfConfig -> ToArchitecture -> PlanMemory with the
// engine preset of its version (data/engines), prints the accuracy table, and
// fits the presets' non-engine coefficients on the same logs (checked
// leave-one-out). The fitted values printed here are what data/engines holds;
// FitsReproduceThePresets fails when the two drift apart.

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "capplan/v1/catalog.pb.h"
#include "google/protobuf/struct.pb.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "model/memory_model.h"
#include "service/translate/hf_config.h"
#include "service/translate/model_translation.h"

namespace capplan::service {
namespace {

using google::protobuf::Struct;
using google::protobuf::Value;

constexpr double kGiB = 1024.0 * 1024.0 * 1024.0;
constexpr double kKvTolerance = 0.05;  // issue 3: ±5% on ≥ 80% of cases
constexpr double kKvPassShare = 0.80;
constexpr double kWeightsTolerance = 0.03;      // issue 3: ±3%
constexpr double kCoefficientTolerance = 0.02;  // data/engines vs a fresh fit
constexpr double kLeaveOneOutPassShare = 0.75;  // held-out logs within ±5%

std::string Root() { return CAPPLAN_SOURCE_DIR; }

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// Inputs a case's JSON does not carry in a structured field: the catalogue
// hardware id for its card, the engine version when the JSON gives only
// prose, and launch flags stated in its log excerpt or notes.
struct CaseInputs {
  std::string hardware_id;
  std::string version;  // empty: the JSON's engine_version
  int64_t max_num_seqs = 0;
  int64_t max_num_batched_tokens = 0;
};

const std::map<std::string, CaseInputs>& Inputs() {
  static const auto* inputs = new std::map<std::string, CaseInputs>{
      {"vllm-a100_80-qwen2_7b-tp1-gmu050", {"nvidia-a100-sxm-80gb", "", 0, 0}},
      {"vllm-a100_80-qwen2_7b-tp2-gmu025", {"nvidia-a100-sxm-80gb", "", 0, 0}},
      // log: 'max_num_seqs': 128 among the non-default args.
      {"vllm-l4-llama31_8b-gmu092", {"nvidia-l4-24gb", "", 128, 0}},
      {"vllm-a5000-qwen25_14b_awq-mml8192", {"nvidia-rtx-a5000-24gb", "", 0, 0}},
      // notes: max_num_batched_tokens=2048 in the log, i.e. the small-card
      // default pair (2048 tokens, 256 sequences).
      {"vllm-gb10-gpt_oss_20b-gmu025", {"nvidia-dgx-spark-gb10", "", 256, 2048}},
      // notes: log line numbers match the v0.11.1/0.11.2 era.
      {"vllm-h200x8-kimi_k2_thinking-tp8", {"nvidia-h200-sxm-141gb", "0.11.1", 0, 0}},
      {"vllm-3090-llama31_8b-mml20000", {"nvidia-rtx-3090-24gb", "0.6.4", 0, 0}},
      // notes: July 2025, version not stated; the newest SGLang preset.
      {"sglang-h100x4-qwen3_235b_a22b_fp8-tp4", {"nvidia-h100-sxm-80gb", "", 0, 0}},
      {"vllm-a100_80x2-mixtral_8x7b_awq-tp2-gmu050", {"nvidia-a100-sxm-80gb", "0.2.7", 0, 0}},
      // notes: issue dated 2024-02-06 (vLLM ~0.3.0).
      {"vllm-3090-qwen15_7b_chat_gptq_int4", {"nvidia-rtx-3090-24gb", "0.3.0", 0, 0}},
      // notes: an unspecified 80 GB card; H100 assumed (confidence low).
      {"sglang-80gb-qwen3_8b-mfs090", {"nvidia-h100-sxm-80gb", "", 0, 0}},
  };
  return *inputs;
}

std::optional<double> Number(const Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  if (it == s.fields().end() || it->second.kind_case() != Value::kNumberValue) return std::nullopt;
  return it->second.number_value();
}
std::string Str(const Struct& s, const std::string& key) {
  auto it = s.fields().find(key);
  if (it == s.fields().end() || it->second.kind_case() != Value::kStringValue) return "";
  return it->second.string_value();
}

struct Case {
  std::string id;
  std::string confidence;
  model::MemoryPlanInput input;
  double kv_tokens = 0;
  std::optional<double> kv_gib, weights_gib, activation_gib, non_torch_gib, cudagraph_gib;
  std::optional<double> avail_after_weights_gib;  // SGLang
  std::optional<double> max_concurrency;
  bool startup_failed = false;
  std::string preset_id;
};

template <typename Message>
std::vector<Message> LoadFolder(const std::string& dir) {
  std::vector<Message> out;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() == ".txtpb") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    Message m;
    EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(ReadFile(path.string()), &m)) << path;
    out.push_back(m);
  }
  return out;
}

class Calibration : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    presets_ =
        new std::vector<v1::EnginePreset>(LoadFolder<v1::EnginePreset>(Root() + "/data/engines"));
    hardware_ = new std::vector<v1::Hardware>(LoadFolder<v1::Hardware>(Root() + "/data/hardware"));
    cases_ = new std::vector<Case>();
    const std::string dir = Root() + "/tests/data/engine_logs/";
    google::protobuf::ListValue list;
    Struct wrapper;
    const std::string json = "{\"cases\": " + ReadFile(dir + "engine_logs.json") + "}";
    ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(json, &wrapper).ok());
    for (const Value& v : wrapper.fields().at("cases").list_value().values()) {
      const Struct& c = v.struct_value();
      Case k;
      k.id = Str(c, "id");
      k.confidence = Str(c, "confidence");
      ASSERT_TRUE(Inputs().count(k.id)) << "no inputs for case " << k.id;
      const CaseInputs& extra = Inputs().at(k.id);

      absl::StatusOr<v1::Model> model = ModelFromHfConfig(ReadFile(dir + Str(c, "config_file")));
      ASSERT_TRUE(model.ok()) << k.id << ": " << model.status();
      absl::StatusOr<model::ModelArchitecture> arch = ToArchitecture(*model);
      ASSERT_TRUE(arch.ok()) << k.id << ": " << arch.status();
      absl::StatusOr<model::Quantization> quant = ToQuantization(model->quantization());
      ASSERT_TRUE(quant.ok()) << k.id << ": " << quant.status();
      k.input.arch = *arch;
      k.input.quantization = *quant;

      const v1::Hardware* hw = nullptr;
      for (const v1::Hardware& h : *hardware_) {
        if (h.id() == extra.hardware_id) hw = &h;
      }
      ASSERT_NE(hw, nullptr) << extra.hardware_id;
      absl::StatusOr<model::HardwareSpec> spec = ToHardwareSpec(*hw);
      ASSERT_TRUE(spec.ok());
      k.input.hardware = *spec;

      const bool sglang = Str(c, "engine").rfind("sglang", 0) == 0;
      v1::EngineConfig engine;
      engine.set_kind(sglang ? v1::ENGINE_KIND_SGLANG : v1::ENGINE_KIND_VLLM);
      engine.set_version(extra.version.empty() ? Str(c, "engine_version") : extra.version);
      const Struct& fraction = c.fields().at("mem_fraction").struct_value();
      if (auto g = Number(fraction, "gpu_memory_utilization"))
        engine.set_gpu_memory_utilization(*g);
      if (auto m = Number(fraction, "mem_fraction_static")) engine.set_mem_fraction_static(*m);
      if (auto l = Number(c, "max_model_len")) engine.set_max_model_len(static_cast<uint64_t>(*l));
      auto graphs = c.fields().find("cuda_graphs");
      if (graphs != c.fields().end() && graphs->second.kind_case() == Value::kBoolValue) {
        engine.set_enforce_eager(!graphs->second.bool_value());
      }
      engine.set_max_num_seqs(static_cast<uint32_t>(extra.max_num_seqs));
      engine.set_max_num_batched_tokens(static_cast<uint64_t>(extra.max_num_batched_tokens));
      k.input.settings = ToEngineSettings(engine);

      v1::Parallelism par;
      par.set_tp(static_cast<uint32_t>(Number(c, "tp").value_or(1)));
      par.set_pp(static_cast<uint32_t>(Number(c, "pp").value_or(1)));
      k.input.parallelism = ToParallelism(par);

      absl::StatusOr<PresetChoice> choice =
          ChoosePreset(*presets_, engine.kind(), engine.version());
      ASSERT_TRUE(choice.ok()) << k.id << ": " << choice.status();
      absl::StatusOr<model::EngineBehaviour> behaviour = ToEngineBehaviour(*choice->preset);
      ASSERT_TRUE(behaviour.ok()) << behaviour.status();
      k.input.engine = *behaviour;
      k.preset_id = choice->preset->id();

      const Struct& r = c.fields().at("reported").struct_value();
      k.kv_tokens = Number(r, "kv_tokens").value_or(0);
      k.kv_gib = Number(r, "kv_gib");
      k.weights_gib = Number(r, "weights_gib");
      k.activation_gib = Number(r, "activation_gib");
      k.non_torch_gib = Number(r, "non_torch_gib");
      k.cudagraph_gib = Number(r, "cudagraph_gib");
      if (!k.cudagraph_gib) k.cudagraph_gib = Number(r, "cuda_graph_gb");  // SGLang "GB" = GiB
      k.avail_after_weights_gib = Number(r, "avail_after_weights_gb");
      k.max_concurrency = Number(r, "max_concurrency");
      auto failed = r.fields().find("startup_failed");
      k.startup_failed = failed != r.fields().end() && failed->second.bool_value();
      cases_->push_back(std::move(k));
    }
  }
  static void TearDownTestSuite() {
    delete presets_;
    delete hardware_;
    delete cases_;
  }

  static model::EngineBehaviour Behaviour(const std::string& preset_id) {
    for (const v1::EnginePreset& p : *presets_) {
      if (p.id() == preset_id) return *ToEngineBehaviour(p);
    }
    ADD_FAILURE() << "no preset " << preset_id;
    return {};
  }

  static std::vector<v1::EnginePreset>* presets_;
  static std::vector<v1::Hardware>* hardware_;
  static std::vector<Case>* cases_;
};
std::vector<v1::EnginePreset>* Calibration::presets_ = nullptr;
std::vector<v1::Hardware>* Calibration::hardware_ = nullptr;
std::vector<Case>* Calibration::cases_ = nullptr;

double PredictedWeights(const model::MemoryPlanInput& in) {
  double w = 0.0;
  for (double x :
       model::WeightsPerGpuByComponent(in.arch, in.quantization, in.parallelism,
                                       model::ResolveForHardware(in.engine, in.hardware), 0)) {
    w += x;
  }
  return w;
}

// The KV bytes the engine reported (GiB figure, or tokens × bytes/token).
double ReportedKvBytes(const Case& c, const model::MemoryPlan& plan) {
  if (c.kv_gib) return *c.kv_gib * kGiB;
  return c.kv_tokens * plan.kv_bytes_per_token;
}

// ------------------------------------------------------------------ fitting
//
// Families of presets fitted together and the cases each is fitted on:
//  - vLLM V1 (vllm-v1-0.8, vllm-v1-0.11): sampler copies per preset, shared
//    non-torch base and per-extra-rank terms; overhead = total × gmu −
//    reported weights − reported KV. Kimi (no weights reported) is held out.
//  - vllm-v0-profiled: the RTX 3090 log reports the activation peak and
//    non-torch memory directly: activation_token_scale = activation / T.
//  - vllm-v0-legacy: non-torch (incl. CUDA context) from the two legacy logs,
//    using the V0 activation scale and our weights (none reported).
//  - sglang: memory lost before loading = total − free-before-load.
//  CUDA-graph bytes per capture-layer: proportional fit per engine on every
//  log that reports graph memory.

struct FittedPresets {
  std::map<std::string, model::EngineBehaviour> presets;
  std::string report;
  // Terms no remaining log could fit (leave-one-out): "vllm-v0-profiled",
  // "vllm-v0-legacy", "sglang-rank", "unified".
  std::set<std::string> unfitted;
};

bool IsV1(const std::string& preset) { return preset.rfind("vllm-v1", 0) == 0; }

FittedPresets Fit(const std::vector<Case>& cases, const std::vector<v1::EnginePreset>& protos,
                  const std::string& leave_out = "") {
  FittedPresets out;
  for (const v1::EnginePreset& p : protos) out.presets[p.id()] = *ToEngineBehaviour(p);
  std::vector<std::string> v1_groups;
  for (const auto& [id, unused] : out.presets) {
    if (IsV1(id)) v1_groups.push_back(id);
  }
  auto group_of = [&](const std::string& id) {
    for (size_t i = 0; i < v1_groups.size(); ++i) {
      if (v1_groups[i] == id) return static_cast<int>(i);
    }
    return -1;
  };
  auto terms = [](const Case& c, const model::EngineBehaviour& e) {
    model::MemoryPlanInput in = c.input;
    in.engine = e;
    return *model::ComputeOverheadTerms(in);
  };

  // vllm-v0-profiled: activation scale and non-torch from the logged account.
  double v0_scale = 1.0;
  for (const Case& c : cases) {
    if (c.id == leave_out || c.preset_id != "vllm-v0-profiled" || !c.activation_gib) continue;
    model::EngineBehaviour& e = out.presets.at(c.preset_id);
    const model::OverheadTerms t = terms(c, e);
    v0_scale = *model::FitProportional({t.token_phase_bytes}, {*c.activation_gib * kGiB});
    e.activation_token_scale = v0_scale;
    e.non_torch_base_bytes = c.non_torch_gib.value_or(0.0) * kGiB;
    e.sampler_logit_copies = 0.0;
  }
  bool v0_fitted = false;
  for (const Case& c : cases) {
    v0_fitted |= c.id != leave_out && c.preset_id == "vllm-v0-profiled" && c.activation_gib;
  }
  if (!v0_fitted) out.unfitted.insert("vllm-v0-profiled");
  out.presets.at("vllm-v0-legacy").activation_token_scale = v0_scale;

  // vLLM V1 family.
  std::vector<model::OverheadObservation> v1_obs;
  for (const Case& c : cases) {
    if (c.id == leave_out || !IsV1(c.preset_id) || !c.weights_gib || !c.kv_gib) continue;
    // On a unified-memory device the free memory the profiler reads is the
    // host's too, so its non-torch increase is not the discrete cards' term.
    if (c.input.hardware.unified_memory) continue;
    model::OverheadObservation o;
    o.terms = terms(c, out.presets.at(c.preset_id));
    o.overhead_bytes = c.input.hardware.memory_bytes * c.input.settings.memory_fraction -
                       (*c.weights_gib + *c.kv_gib) * kGiB;
    o.sampler_group = group_of(c.preset_id);
    v1_obs.push_back(o);
  }
  model::OverheadFitOptions v1_opt;
  v1_opt.num_sampler_groups = static_cast<int>(v1_groups.size());
  v1_opt.activation_token_scale = v0_scale;
  absl::StatusOr<model::OverheadFit> v1_fit = model::FitOverhead(v1_obs, v1_opt);
  EXPECT_TRUE(v1_fit.ok()) << v1_fit.status();
  if (v1_fit.ok()) {
    for (size_t g = 0; g < v1_groups.size(); ++g) {
      model::EngineBehaviour& e = out.presets.at(v1_groups[g]);
      e.activation_token_scale = v0_scale;
      e.sampler_logit_copies = v1_fit->sampler_logit_copies[g];
      e.non_torch_base_bytes = v1_fit->non_torch_base_bytes;
      e.non_torch_per_extra_rank_bytes = v1_fit->non_torch_per_extra_rank_bytes;
    }
    absl::StrAppendFormat(&out.report, "vLLM V1 fit: %d logs, rank %d, rms %.3f GiB\n",
                          v1_obs.size(), v1_fit->rank, v1_fit->rms_residual_bytes / kGiB);
  }

  // Unified-memory devices: the mean of what the discrete-card fit leaves
  // unexplained on their logs.
  std::vector<double> unified_extra;
  for (const Case& c : cases) {
    if (c.id == leave_out || !IsV1(c.preset_id) || !c.input.hardware.unified_memory ||
        !c.weights_gib || !c.kv_gib) {
      continue;
    }
    const model::EngineBehaviour& e = out.presets.at(c.preset_id);
    const model::OverheadTerms t = terms(c, e);
    const double predicted = std::max(e.activation_token_scale * t.token_phase_bytes,
                                      e.sampler_logit_copies * t.sampler_phase_bytes) +
                             e.non_torch_base_bytes +
                             e.non_torch_per_extra_rank_bytes * t.extra_ranks;
    unified_extra.push_back(c.input.hardware.memory_bytes * c.input.settings.memory_fraction -
                            (*c.weights_gib + *c.kv_gib) * kGiB - predicted);
  }
  if (!unified_extra.empty()) {
    double mean = 0;
    for (double x : unified_extra) mean += x / unified_extra.size();
    for (const std::string& id : v1_groups) {
      out.presets.at(id).unified_memory_non_torch_bytes = std::max(0.0, mean);
    }
  } else {
    out.unfitted.insert("unified");
  }

  // vllm-v0-legacy: base only. The 0.2.7 Mixtral-AWQ log is not fitted: its
  // profile run left ~21 GiB above weights + KV that no activation term of
  // the forward pass explains (see the notes in the accuracy table).
  std::vector<model::OverheadObservation> legacy_obs;
  for (const Case& c : cases) {
    if (c.id == leave_out || c.preset_id != "vllm-v0-legacy") continue;
    if (c.id == "vllm-a100_80x2-mixtral_8x7b_awq-tp2-gmu050") continue;
    model::MemoryPlanInput in = c.input;
    in.engine = out.presets.at(c.preset_id);
    in.engine.non_torch_base_bytes = 0.0;
    const model::MemoryPlan plan = *model::PlanMemory(in);
    model::OverheadObservation o;
    o.terms = terms(c, in.engine);
    o.overhead_bytes = c.input.hardware.memory_bytes * plan.memory_fraction - PredictedWeights(in) -
                       ReportedKvBytes(c, plan);
    legacy_obs.push_back(o);
  }
  model::OverheadFitOptions legacy_opt;
  legacy_opt.activation_token_scale = v0_scale;
  legacy_opt.fit_per_rank = false;
  if (absl::StatusOr<model::OverheadFit> f = model::FitOverhead(legacy_obs, legacy_opt); f.ok()) {
    out.presets.at("vllm-v0-legacy").non_torch_base_bytes = f->non_torch_base_bytes;
    absl::StrAppendFormat(&out.report, "vLLM V0 legacy fit: %d logs, rms %.3f GiB\n",
                          legacy_obs.size(), f->rms_residual_bytes / kGiB);
  } else {
    out.unfitted.insert("vllm-v0-legacy");
  }

  // SGLang: total − free-before-load = b + r · extra ranks.
  std::vector<model::OverheadObservation> sg_obs;
  for (const Case& c : cases) {
    if (c.id == leave_out || c.preset_id.rfind("sglang", 0) != 0) continue;
    const double weights = c.weights_gib ? *c.weights_gib * kGiB : PredictedWeights(c.input);
    model::MemoryPlanInput in = c.input;
    in.engine = out.presets.at(c.preset_id);
    const model::MemoryPlan plan = *model::PlanMemory(in);
    const double free_before = c.avail_after_weights_gib
                                   ? (*c.avail_after_weights_gib * kGiB + weights)
                                   : (ReportedKvBytes(c, plan) + weights) / plan.memory_fraction;
    model::OverheadObservation o;
    o.terms = terms(c, in.engine);
    o.terms.token_phase_bytes = 0.0;
    o.overhead_bytes = c.input.hardware.memory_bytes - free_before;
    sg_obs.push_back(o);
  }
  model::OverheadFitOptions sg_opt;
  bool ranks_vary = false;
  for (const auto& o : sg_obs)
    ranks_vary |= o.terms.extra_ranks != sg_obs.front().terms.extra_ranks;
  sg_opt.fit_per_rank = ranks_vary;
  if (!ranks_vary) out.unfitted.insert("sglang-rank");
  if (absl::StatusOr<model::OverheadFit> f = model::FitOverhead(sg_obs, sg_opt); f.ok()) {
    for (auto& [id, e] : out.presets) {
      if (e.engine != model::EngineKind::kSglang) continue;
      e.non_torch_base_bytes = f->non_torch_base_bytes;
      e.non_torch_per_extra_rank_bytes = f->non_torch_per_extra_rank_bytes;
    }
    absl::StrAppendFormat(&out.report, "SGLang fit: %d logs, rms %.3f GiB\n", sg_obs.size(),
                          f->rms_residual_bytes / kGiB);
  }

  // CUDA graphs, per engine.
  for (model::EngineKind kind : {model::EngineKind::kVllm, model::EngineKind::kSglang}) {
    std::vector<double> x, y;
    for (const Case& c : cases) {
      if (c.id == leave_out || c.input.engine.engine != kind || !c.cudagraph_gib) continue;
      x.push_back(terms(c, out.presets.at(c.preset_id)).capture_layers);
      y.push_back(*c.cudagraph_gib * kGiB);
    }
    if (x.empty()) continue;
    const double k = *model::FitProportional(x, y);
    for (auto& [id, e] : out.presets) {
      if (e.engine == kind) e.cuda_graph_bytes_per_capture_layer = k;
    }
  }
  return out;
}

struct Row {
  std::string id;
  double kv_reported = 0, kv_predicted = 0;
  std::optional<double> w_reported;
  double w_predicted = 0;
  double concurrency = 0;
  bool fits = false;
};

Row Predict(const Case& c, const model::EngineBehaviour& e) {
  model::MemoryPlanInput in = c.input;
  in.engine = e;
  absl::StatusOr<model::MemoryPlan> plan = model::PlanMemory(in);
  EXPECT_TRUE(plan.ok()) << c.id << ": " << plan.status();
  Row r;
  r.id = c.id;
  r.kv_reported = c.kv_tokens;
  if (plan.ok()) {
    r.kv_predicted = static_cast<double>(plan->kv_pool_tokens);
    r.w_predicted = plan->per_gpu.weights_bytes / kGiB;
    r.fits = plan->fits;
    r.concurrency = plan->max_concurrency_at_max_model_len;
  }
  r.w_reported = c.weights_gib;
  return r;
}

// NaN (never "within" any tolerance) when the log reported no figure.
double RelError(double predicted, double reported) {
  return reported == 0 ? std::nan("") : (predicted - reported) / reported;
}

TEST_F(Calibration, FitsReproduceThePresets) {
  const FittedPresets fit = Fit(*cases_, *presets_);
  std::printf("%s", fit.report.c_str());
  for (const v1::EnginePreset& p : *presets_) {
    const model::EngineBehaviour& f = fit.presets.at(p.id());
    std::printf(
        "%-18s activation_token_scale: %.4f sampler_logit_copies: %.4f non_torch_base_bytes: %.0f "
        "non_torch_per_extra_rank_bytes: %.0f cuda_graph_bytes_per_capture_layer: %.0f "
        "unified_memory_non_torch_bytes: %.0f\n",
        p.id().c_str(), f.activation_token_scale, f.sampler_logit_copies, f.non_torch_base_bytes,
        f.non_torch_per_extra_rank_bytes, f.cuda_graph_bytes_per_capture_layer,
        f.unified_memory_non_torch_bytes);
    // Byte terms: relative tolerance with a 1 KiB floor (a term fitted at 0
    // must be 0 in the data too); dimensionless terms: a 1e-3 floor.
    auto near = [](double data, double fitted) {
      return std::fabs(data - fitted) <= kCoefficientTolerance * std::fabs(fitted) + 1024;
    };
    EXPECT_TRUE(std::fabs(p.activation_token_scale() - f.activation_token_scale) <=
                kCoefficientTolerance * std::fabs(f.activation_token_scale) + 1e-3)
        << p.id() << " activation_token_scale " << p.activation_token_scale() << " vs fit "
        << f.activation_token_scale;
    EXPECT_TRUE(std::fabs(p.sampler_logit_copies() - f.sampler_logit_copies) <=
                kCoefficientTolerance * f.sampler_logit_copies + 1e-3)
        << p.id() << " sampler_logit_copies " << p.sampler_logit_copies() << " vs fit "
        << f.sampler_logit_copies;
    EXPECT_TRUE(near(p.non_torch_base_bytes(), f.non_torch_base_bytes))
        << p.id() << " non_torch_base_bytes " << p.non_torch_base_bytes() << " vs fit "
        << f.non_torch_base_bytes;
    EXPECT_TRUE(near(p.non_torch_per_extra_rank_bytes(), f.non_torch_per_extra_rank_bytes))
        << p.id() << " non_torch_per_extra_rank_bytes";
    EXPECT_TRUE(near(p.cuda_graph_bytes_per_capture_layer(), f.cuda_graph_bytes_per_capture_layer))
        << p.id() << " cuda_graph_bytes_per_capture_layer";
    EXPECT_TRUE(near(p.unified_memory_non_torch_bytes(), f.unified_memory_non_torch_bytes))
        << p.id() << " unified_memory_non_torch_bytes";
  }
}

TEST_F(Calibration, KvPoolAndWeightsMatchEngineLogs) {
  int within = 0;
  int total = 0;
  std::printf("\n%-44s %-16s %10s %10s %7s | %9s %9s %6s | %6s %6s | %s\n", "case", "preset",
              "kv_report", "kv_model", "err", "w_report", "w_model", "err", "conc_r", "conc_m",
              "fits");
  for (const Case& c : *cases_) {
    const Row r = Predict(c, Behaviour(c.preset_id));
    const double kv_err = RelError(r.kv_predicted, r.kv_reported);
    ++total;
    if (std::fabs(kv_err) <= kKvTolerance) ++within;
    std::string w = "        -         -      -";
    if (r.w_reported) {
      const double w_err = RelError(r.w_predicted, *r.w_reported);
      w = absl::StrFormat("%9.3f %9.3f %+5.1f%%", *r.w_reported, r.w_predicted, 100 * w_err);
      EXPECT_LE(std::fabs(w_err), kWeightsTolerance) << c.id << " weights";
    }
    std::string conc = "     -      -";
    if (c.max_concurrency) {
      conc = absl::StrFormat("%6.2f %6.2f", *c.max_concurrency, r.concurrency);
      // The engine's concurrency follows from its pool by its block rule:
      // check the rule, relative to the pool we predicted.
      EXPECT_NEAR(r.concurrency / (r.kv_predicted / r.kv_reported), *c.max_concurrency,
                  0.01 * *c.max_concurrency + 0.01)
          << c.id << " max concurrency";
    }
    std::printf("%-44s %-16s %10.0f %10.0f %+6.1f%% | %s | %s | %s\n", c.id.c_str(),
                c.preset_id.c_str(), r.kv_reported, r.kv_predicted, 100 * kv_err, w.c_str(),
                conc.c_str(), r.fits ? "fits" : "does not fit");
  }
  std::printf("KV pool within ±%.0f%%: %d of %d\n", 100 * kKvTolerance, within, total);
  EXPECT_GE(within, std::ceil(kKvPassShare * total));
}

// A log is checkable held-out when the remaining logs still fit every term
// its prediction uses.
bool Checkable(const Case& c, const FittedPresets& fit) {
  if (fit.unfitted.count(c.preset_id)) return false;
  if (c.input.hardware.unified_memory && fit.unfitted.count("unified")) return false;
  if (c.preset_id.rfind("sglang", 0) == 0 && c.input.parallelism.tp > 1 &&
      fit.unfitted.count("sglang-rank")) {
    return false;
  }
  return true;
}

TEST_F(Calibration, LeaveOneOutPredictsHeldOutLogs) {
  int within = 0;
  int checkable = 0;
  std::printf("\nleave-one-out (coefficients refitted without the case):\n");
  for (const Case& c : *cases_) {
    const FittedPresets fit = Fit(*cases_, *presets_, c.id);
    if (!Checkable(c, fit)) {
      std::printf("  %-44s n/a: no other log fits the terms it needs\n", c.id.c_str());
      continue;
    }
    const Row r = Predict(c, fit.presets.at(c.preset_id));
    const double err = RelError(r.kv_predicted, r.kv_reported);
    ++checkable;
    if (std::fabs(err) <= kKvTolerance) ++within;
    std::printf("  %-44s kv %10.0f vs %10.0f  %+6.1f%%\n", c.id.c_str(), r.kv_predicted,
                r.kv_reported, 100 * err);
  }
  std::printf("held out within ±%.0f%%: %d of %d checkable\n", 100 * kKvTolerance, within,
              checkable);
  // 7 of the 11 logs share every term they need with another log.
  EXPECT_GE(checkable, 7);
  EXPECT_GE(within, std::ceil(kLeaveOneOutPassShare * checkable));
}

TEST_F(Calibration, OverlongContextDoesNotFitWhereTheEngineRefusedToStart) {
  int refused = 0;
  for (const Case& c : *cases_) {
    if (!c.startup_failed) continue;
    ++refused;
    const Row r = Predict(c, Behaviour(c.preset_id));
    EXPECT_FALSE(r.fits) << c.id;
  }
  EXPECT_GE(refused, 1) << "no log of an engine that refused to start";
}

}  // namespace
}  // namespace capplan::service

namespace capplan::service {
namespace {

// Seed report 002: per-card weights 23.61 GiB without expert parallelism and
// 19.86 GiB with it (4 × RTX 5090, NVFP4). What the model makes of it: EP
// and TP slicing hold the same routed-expert bytes per card unless the
// TP-sliced expert width needs kernel padding, so the model's EP and no-EP
// figures are equal here and both differ from the report's; the test prints
// them and pins the mechanism (EP never holds more than TP slicing).
TEST(Seed002, ExpertParallelVersusTensorSlicedExperts) {
  std::ifstream in(Root() + "/data/models/qwen3.8-flash-next-nvfp4.txtpb");
  std::stringstream ss;
  ss << in.rdbuf();
  v1::Model m;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(ss.str(), &m));
  const absl::StatusOr<model::ModelArchitecture> arch = ToArchitecture(m);
  ASSERT_TRUE(arch.ok()) << arch.status();
  const absl::StatusOr<model::Quantization> q = ToQuantization(m.quantization());
  ASSERT_TRUE(q.ok());
  model::EngineBehaviour e;
  auto per_card = [&](int64_t ep) {
    model::ParallelismSpec p;
    p.tp = 4;
    p.ep = ep;
    return model::WeightsPerGpuByComponent(*arch, *q, p, e, 0);
  };
  const auto tp = per_card(1);
  const auto ep = per_card(4);
  double tp_total = 0, ep_total = 0;
  for (int c = 0; c < model::kNumComponents; ++c) {
    tp_total += tp[c];
    ep_total += ep[c];
  }
  const int experts = static_cast<int>(model::Component::kRoutedExperts);
  std::printf(
      "seed 002 per card (model): TP-sliced experts %.2f GiB (experts %.2f), "
      "EP4 %.2f GiB (experts %.2f); report: 23.61 -> 19.86 GiB\n",
      tp_total / kGiB, tp[experts] / kGiB, ep_total / kGiB, ep[experts] / kGiB);
  // Expert width 640 / 4 = 160 per rank: what a 64-wide kernel alignment
  // would add to the TP-sliced layout (the EP layout keeps 640).
  model::EngineBehaviour padded;
  padded.moe_padding.push_back({model::WeightFormat::kNvfp4, 1, 64, {}, {}});
  model::ParallelismSpec p;
  p.tp = 4;
  const double tp_padded = model::WeightsPerGpuByComponent(*arch, *q, p, padded, 0)[experts];
  std::printf(
      "  with a 64-wide NVFP4 MoE kernel alignment, TP slicing pads 160 -> 192: "
      "+%.2f GiB per card\n",
      (tp_padded - tp[experts]) / kGiB);
  EXPECT_LE(ep_total, tp_total * (1 + 1e-9));
  // Equal up to the per-tensor NVFP4 scales that slicing multiplies.
  EXPECT_NEAR(ep[experts] / tp[experts], 1.0, 1e-3);
}

}  // namespace
}  // namespace capplan::service
