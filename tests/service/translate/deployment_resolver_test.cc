#include "service/translate/deployment_resolver.h"

#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::k000;
using ::capplan::testing::k002;
using ::capplan::testing::StatusIs;
using ::testing::Eq;
using ::testing::HasSubstr;

constexpr char kPath[] = "T.deployment";

const Catalog& Bundled() { return testing::BundledCatalogue(); }

v1::Deployment Deployment(const std::string& text) {
  v1::Deployment d;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &d)) << text;
  return d;
}

absl::StatusOr<ResolvedDeployment> Resolve(const std::string& text) {
  return ResolveDeployment(Bundled(), Deployment(text), kPath);
}

std::string BaselineText(const char* id, const std::string& rest = "") {
  return absl::StrCat("baseline_id: \"", id, "\" ", rest);
}

// --------------------------------------------------------------- baseline

TEST(ResolveDeployment, FromABaselineTakesItsConfiguration) {
  // seed-002: 4 × RTX 5090, ep 4 and no tp stated, MTP with 3 draft tokens,
  // engine kind unstated (vLLM assumed), the model's own NVFP4 checkpoint.
  absl::StatusOr<ResolvedDeployment> r = Resolve(BaselineText(k002));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->baseline, Bundled().FindBaseline(k002));
  EXPECT_EQ(r->model_id, "qwen3.8-flash-next-nvfp4");
  ASSERT_NE(r->hardware, nullptr);
  EXPECT_EQ(r->hardware->id(), "nvidia-rtx-5090-32gb");
  EXPECT_EQ(r->gpu_count, 4u);
  // No tp: one TP group over the GPUs, tp = gpu_count / pp = 4 / 1; dp = 4 / (4 · 1).
  EXPECT_EQ(r->parallelism.tp(), 4u);
  EXPECT_EQ(r->parallelism.pp(), 1u);
  EXPECT_EQ(r->parallelism.dp(), 1u);
  EXPECT_EQ(r->parallelism.ep(), 4u);
  EXPECT_EQ(r->engine.kind(), v1::ENGINE_KIND_VLLM);
  EXPECT_EQ(r->engine.speculative().method(), v1::SPECULATIVE_METHOD_MTP);
  EXPECT_EQ(r->engine.speculative().num_speculative_tokens(), 3u);
  EXPECT_EQ(r->quantization.format(), v1::WEIGHT_FORMAT_NVFP4);
  EXPECT_EQ(r->path, kPath);
  // The memory model's input follows the merged figures.
  EXPECT_EQ(r->input.parallelism.tp, 4);
  EXPECT_EQ(r->input.parallelism.ep, 4);
  EXPECT_EQ(r->input.arch.hidden_size, 2560);
  ASSERT_NE(r->preset.preset, nullptr);
  EXPECT_TRUE(r->preset.version_assumed);
}

TEST(ResolveDeployment, RequestFieldsOverrideTheBaseline) {
  // A new GPU count without tp: tp follows the count (8 / pp 1 = 8), dp 1.
  absl::StatusOr<ResolvedDeployment> r =
      Resolve(BaselineText(k002, "gpu_count: 8 engine { max_num_seqs: 64 version: \"0.11.0\" }"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->gpu_count, 8u);
  EXPECT_EQ(r->parallelism.tp(), 8u);
  EXPECT_EQ(r->parallelism.dp(), 1u);
  EXPECT_EQ(r->parallelism.ep(), 4u);  // the baseline's
  EXPECT_EQ(r->engine.max_num_seqs(), 64u);
  EXPECT_EQ(r->engine.version(), "0.11.0");
  EXPECT_EQ(r->engine.speculative().num_speculative_tokens(), 3u);  // the baseline's
  // With tp given: 8 GPUs / (tp 2 · pp 1) = 4 data-parallel replicas.
  r = Resolve(BaselineText(k002, "gpu_count: 8 parallelism { tp: 2 }"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->parallelism.tp(), 2u);
  EXPECT_EQ(r->parallelism.dp(), 4u);
  // Another card and another weight format.
  r = Resolve(BaselineText(k002,
                           "hardware_id: \"nvidia-h100-sxm-80gb\" weight_format: "
                           "WEIGHT_FORMAT_BF16"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->hardware->id(), "nvidia-h100-sxm-80gb");
  EXPECT_EQ(r->quantization.format(), v1::WEIGHT_FORMAT_BF16);
}

TEST(ResolveDeployment, ZeroSpeculativeTokensTurnSpeculationOff) {
  absl::StatusOr<ResolvedDeployment> r =
      Resolve(BaselineText(k002, "engine { num_speculative_tokens: 0 }"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->engine.speculative().method(), v1::SPECULATIVE_METHOD_NONE);
  EXPECT_FALSE(SpeculationOn(r->engine.speculative()));
  // A method without a count drafts one token.
  r = Resolve(
      R"(model_id: "qwen3.8-flash-next-nvfp4" hardware_id: "nvidia-rtx-5090-32gb" gpu_count: 4
         engine { speculative_method: SPECULATIVE_METHOD_MTP })");
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->engine.speculative().num_speculative_tokens(), 1u);
}

TEST(ResolveDeployment, WithheldGpuIsAFailedPreconditionUnlessAllowed) {
  EXPECT_THAT(Resolve(BaselineText(k000)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(absl::StrCat("T.deployment.hardware_id is empty and baseline '",
                                              k000, "' does not name its GPU"))));
  absl::StatusOr<ResolvedDeployment> r =
      ResolveDeploymentAllowingWithheldHardware(Bundled(), Deployment(BaselineText(k000)), kPath);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->hardware, nullptr);
  EXPECT_EQ(r->input.hardware.name, "withheld");
  EXPECT_EQ(r->input.hardware.memory_bytes, 0);
  // The baseline's own figures: SGLang, TP 4 of 4 GPUs.
  EXPECT_EQ(r->engine.kind(), v1::ENGINE_KIND_SGLANG);
  EXPECT_EQ(r->parallelism.tp(), 4u);
  EXPECT_EQ(r->engine.max_model_len(), 32768u);
  // Naming a card resolves normally.
  r = Resolve(BaselineText(k000, "hardware_id: \"nvidia-l40s-48gb\""));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->hardware->id(), "nvidia-l40s-48gb");
}

TEST(ResolveDeployment, AllowingWithheldStillNeedsAGpuWithoutABaseline) {
  EXPECT_THAT(ResolveDeploymentAllowingWithheldHardware(
                  Bundled(), Deployment(R"(model_id: "qwen3-8b")"), kPath),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("T.deployment.hardware_id is empty; must name a GPU")));
}

// ------------------------------------------------------------ config.json

std::string Llama8bConfig() {
  std::ifstream in(std::string(CAPPLAN_SOURCE_DIR) +
                   "/tests/data/configs/meta-llama__Llama-3.1-8B-Instruct.json");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(ResolveDeployment, ModelFromConfigJson) {
  v1::Deployment d;
  d.set_model_config_json(Llama8bConfig());
  d.set_hardware_id("nvidia-l4-24gb");
  absl::StatusOr<ResolvedDeployment> r = ResolveDeployment(Bundled(), d, kPath);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->model_id, "");  // not a catalogue entry
  // Llama 3.1 8B: hidden 4096, 32 layers, 32 heads, 8 KV heads.
  EXPECT_EQ(r->model.hidden_size(), 4096u);
  EXPECT_EQ(r->input.arch.hidden_size, 4096);
  EXPECT_EQ(r->input.arch.num_attention_heads, 32);
  EXPECT_EQ(r->input.arch.num_kv_heads, 8);
  EXPECT_EQ(r->gpu_count, 1u);
}

TEST(ResolveDeployment, BadConfigJsonNamesItsFieldPath) {
  v1::Deployment d;
  d.set_model_config_json("{\"hidden_size\": \"big\"}");
  d.set_hardware_id("nvidia-l4-24gb");
  EXPECT_THAT(ResolveDeployment(Bundled(), d, kPath),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("T.deployment.model_config_json: config.json: model_type is "
                                 "missing")));
}

// ----------------------------------------------------------------- errors

struct BadCase {
  std::string name;
  std::string text;
  absl::StatusCode code;
  std::string message;
};

class ResolveDeploymentErrors : public ::testing::TestWithParam<BadCase> {};

TEST_P(ResolveDeploymentErrors, NameTheFieldPathValueAndRule) {
  EXPECT_THAT(Resolve(GetParam().text), StatusIs(GetParam().code, HasSubstr(GetParam().message)));
}

INSTANTIATE_TEST_SUITE_P(
    Cases, ResolveDeploymentErrors,
    ::testing::Values(
        BadCase{"UnknownBaseline", R"(baseline_id: "nope")", absl::StatusCode::kNotFound,
                "T.deployment.baseline_id = \"nope\"; no such baseline in the catalogue"},
        BadCase{"UnknownModel", R"(model_id: "no-such-model" hardware_id: "nvidia-l4-24gb")",
                absl::StatusCode::kNotFound,
                "T.deployment.model_id = \"no-such-model\"; not in the catalogue"},
        BadCase{"UnknownGpu", R"(model_id: "qwen3-8b" hardware_id: "gpu-x")",
                absl::StatusCode::kNotFound,
                "T.deployment.hardware_id = \"gpu-x\"; not in the catalogue"},
        BadCase{"NoModel", R"(hardware_id: "nvidia-l4-24gb")", absl::StatusCode::kInvalidArgument,
                "T.deployment.model_id is empty"},
        BadCase{"NoGpu", R"(model_id: "qwen3-8b")", absl::StatusCode::kInvalidArgument,
                "T.deployment.hardware_id is empty; must name a GPU"},
        // 6 GPUs cannot hold whole groups of tp 4 · pp 1.
        BadCase{"TpPpNotDividingGpus",
                R"(model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb" gpu_count: 6
                   parallelism { tp: 4 })",
                absl::StatusCode::kInvalidArgument,
                "T.deployment.parallelism.tp = 4 (pp = 1); tp × pp must divide gpu_count = 6"},
        BadCase{"TpTimesPpNotDividingGpus",
                R"(model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb" gpu_count: 4
                   parallelism { tp: 2 pp: 3 })",
                absl::StatusCode::kInvalidArgument,
                "T.deployment.parallelism.tp = 2 (pp = 3); tp × pp must divide gpu_count = 4"},
        BadCase{"ZeroTp", R"(model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb"
                             parallelism { tp: 0 })",
                absl::StatusCode::kInvalidArgument,
                "T.deployment.parallelism.tp = 0; must be in [1, 4096]"},
        BadCase{"ZeroGpus", R"(model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb" gpu_count: 0)",
                absl::StatusCode::kInvalidArgument,
                "T.deployment.gpu_count = 0; must be in [1, 4096]"},
        BadCase{"SglangKnobOnVllm",
                R"(model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb"
                   engine { mem_fraction_static: 0.8 })",
                absl::StatusCode::kInvalidArgument,
                "T.deployment.engine.mem_fraction_static is SGLang's knob; vLLM takes "
                "gpu_memory_utilization"},
        BadCase{"VllmKnobOnSglang",
                R"(model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb"
                   engine { kind: ENGINE_KIND_SGLANG gpu_memory_utilization: 0.8 })",
                absl::StatusCode::kInvalidArgument,
                "T.deployment.engine.gpu_memory_utilization is vLLM's knob"},
        BadCase{"MtpWithoutMtpLayers",
                R"(model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb"
                   engine { speculative_method: SPECULATIVE_METHOD_MTP })",
                absl::StatusCode::kInvalidArgument,
                "T.deployment.engine.speculative_method = MTP; model 'qwen3-8b' ships no MTP "
                "layers (num_mtp_layers = 0)"},
        BadCase{"FractionAboveOne",
                R"(model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb"
                   engine { gpu_memory_utilization: 1.5 })",
                absl::StatusCode::kInvalidArgument,
                "T.deployment.engine.gpu_memory_utilization = 1.5; must be in (0, 1]"},
        BadCase{"ZeroMaxModelLen",
                R"(model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb"
                   engine { max_model_len: 0 })",
                absl::StatusCode::kInvalidArgument,
                "T.deployment.engine.max_model_len = 0; must be > 0"},
        BadCase{"ZeroBlockSize",
                R"(model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb" engine { block_size: 0 })",
                absl::StatusCode::kInvalidArgument,
                "T.deployment.engine.block_size = 0; must be in [1, 4096]"},
        BadCase{"TooManyDraftTokens",
                R"(model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb"
                   engine { num_speculative_tokens: 17 })",
                absl::StatusCode::kInvalidArgument,
                "T.deployment.engine.num_speculative_tokens = 17; must be in [0, 16]"},
        BadCase{"VersionWithoutNumber",
                R"(model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb"
                   engine { version: "nightly" })",
                absl::StatusCode::kInvalidArgument,
                "T.deployment.engine.version: engine.version = \"nightly\"; must contain a "
                "dotted version number"},
        BadCase{"Nvfp4GroupOf32",
                R"(model_id: "qwen3-8b" hardware_id: "nvidia-l4-24gb"
                   weight_format: WEIGHT_FORMAT_NVFP4 weight_group_size: 32)",
                absl::StatusCode::kInvalidArgument,
                "T.deployment.weight_format: Quantization.group_size = 32; NVFP4 groups are 16 "
                "values"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

// --------------------------------------------------------- BaselineMatches

TEST(BaselineMatches, ABaselineMatchesItsOwnConfiguration) {
  absl::StatusOr<ResolvedDeployment> r = Resolve(BaselineText(k002));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(BaselineMatches(*Bundled().FindBaseline(k002), *r));
  // Another baseline's model and card do not.
  EXPECT_FALSE(BaselineMatches(*Bundled().FindBaseline(testing::k000), *r));
}

TEST(BaselineMatches, GpuCountTpCardAndFormatMustAgree) {
  const v1::Baseline& b = *Bundled().FindBaseline(k002);
  for (const char* change :
       {"gpu_count: 8", "gpu_count: 4 parallelism { tp: 2 }",
        "hardware_id: \"nvidia-h100-sxm-80gb\"", "weight_format: WEIGHT_FORMAT_BF16"}) {
    absl::StatusOr<ResolvedDeployment> r = Resolve(BaselineText(k002, change));
    ASSERT_TRUE(r.ok()) << change << ": " << r.status();
    EXPECT_FALSE(BaselineMatches(b, *r)) << change;
  }
  // Expert parallelism and speculation are matched figure by figure, not here.
  for (const char* same : {"parallelism { ep: 1 }", "engine { num_speculative_tokens: 0 }"}) {
    absl::StatusOr<ResolvedDeployment> r = Resolve(BaselineText(k002, same));
    ASSERT_TRUE(r.ok()) << same << ": " << r.status();
    EXPECT_TRUE(BaselineMatches(b, *r)) << same;
  }
}

TEST(BaselineMatches, StatedMemoryKnobsMustBeTheRequests) {
  v1::Baseline b = *Bundled().FindBaseline(k002);
  b.mutable_deployment()->mutable_engine()->set_gpu_memory_utilization(0.9);
  absl::StatusOr<ResolvedDeployment> r = Resolve(BaselineText(k002));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(BaselineMatches(b, *r));  // the request leaves it at the default
  r = Resolve(BaselineText(k002, "engine { gpu_memory_utilization: 0.9 }"));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(BaselineMatches(b, *r));
  b.mutable_deployment()->mutable_engine()->set_max_model_len(8192);
  EXPECT_FALSE(BaselineMatches(b, *r));
  // A stated engine kind must be the request's.
  v1::Baseline sglang = *Bundled().FindBaseline(k002);
  sglang.mutable_deployment()->mutable_engine()->set_kind(v1::ENGINE_KIND_SGLANG);
  r = Resolve(BaselineText(k002));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(BaselineMatches(sglang, *r));
}

TEST(BaselineMatches, ConfigJsonModelsAndWithheldCardsNeverMatch) {
  absl::StatusOr<ResolvedDeployment> withheld =
      ResolveDeploymentAllowingWithheldHardware(Bundled(), Deployment(BaselineText(k000)), kPath);
  ASSERT_TRUE(withheld.ok()) << withheld.status();
  EXPECT_FALSE(BaselineMatches(*Bundled().FindBaseline(k000), *withheld));
  v1::Deployment d;
  d.set_model_config_json(Llama8bConfig());
  d.set_hardware_id("nvidia-l4-24gb");
  absl::StatusOr<ResolvedDeployment> json = ResolveDeployment(Bundled(), d, kPath);
  ASSERT_TRUE(json.ok()) << json.status();
  for (const v1::Baseline& b : Bundled().baselines()) EXPECT_FALSE(BaselineMatches(b, *json));
}

TEST(SpeculationOn, OnlyARealMethodIsOn) {
  v1::SpeculativeDecoding s;
  EXPECT_FALSE(SpeculationOn(s));
  s.set_method(v1::SPECULATIVE_METHOD_NONE);
  EXPECT_FALSE(SpeculationOn(s));
  s.set_method(v1::SPECULATIVE_METHOD_EAGLE);
  EXPECT_TRUE(SpeculationOn(s));
}

}  // namespace
}  // namespace capplan::service
