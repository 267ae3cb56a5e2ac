#include "service/translate/model_translation.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <set>
#include <string>

#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::Eq;
using ::testing::HasSubstr;

template <typename M>
M Text(const std::string& text) {
  M m;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &m)) << text;
  return m;
}

TEST(ToArchitecture, ExpandsLayerBlocks) {
  const v1::Model m = Text<v1::Model>(R"pb(
    id: "tiny"
    hidden_size: 64
    intermediate_size: 128
    num_attention_heads: 4
    num_kv_heads: 2
    vocab_size: 100
    linear_attention {
      num_key_heads: 2
      num_value_heads: 4
      key_head_dim: 16
      value_head_dim: 16
      conv_kernel_size: 4
    }
    moe { num_routed_experts: 4 experts_per_token: 2 expert_intermediate_size: 32 }
    layer_blocks {
      repeat: 3
      layers { count: 3 attention: ATTENTION_KIND_LINEAR mlp: MLP_KIND_MOE }
      layers { count: 1 attention: ATTENTION_KIND_FULL mlp: MLP_KIND_MOE }
    })pb");
  const absl::StatusOr<model::ModelArchitecture> a = ToArchitecture(m);
  ASSERT_TRUE(a.ok()) << a.status();
  ASSERT_EQ(a->layers.size(), 12u);
  EXPECT_EQ(a->layers[2].attention, model::AttentionKind::kLinear);
  EXPECT_EQ(a->layers[3].attention, model::AttentionKind::kFull);
  EXPECT_EQ(a->layers[11].attention, model::AttentionKind::kFull);
  EXPECT_TRUE(a->linear_attention.has_value());
  EXPECT_EQ(a->moe->experts_per_token, 2);
}

TEST(ToArchitecture, UnsetAttentionKindNamesTheField) {
  const v1::Model m = Text<v1::Model>(R"pb(
    hidden_size: 64
    num_attention_heads: 4
    vocab_size: 100
    layer_blocks { layers { count: 2 } })pb");
  EXPECT_THAT(ToArchitecture(m),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("Model.layer_blocks.layers[0].attention = ATTENTION_KIND_UNSPECIFIED; "
                          "must be set")));
}

TEST(ToArchitecture, InconsistentModelIsInvalid) {
  const v1::Model m = Text<v1::Model>(R"pb(
    id: "bad"
    hidden_size: 64
    intermediate_size: 128
    num_attention_heads: 4
    num_kv_heads: 3
    vocab_size: 100
    layer_blocks { layers { count: 2 attention: ATTENTION_KIND_FULL } })pb");
  EXPECT_THAT(ToArchitecture(m),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ModelArchitecture.num_kv_heads = 3; must divide "
                                 "num_attention_heads = 4")));
}

struct VersionCase {
  std::string text;
  std::vector<int> parts;
};

class ParseVersionTest : public ::testing::TestWithParam<VersionCase> {};

TEST_P(ParseVersionTest, ReadsDottedNumbers) {
  EXPECT_EQ(ParseVersion(GetParam().text), GetParam().parts);
}

INSTANTIATE_TEST_SUITE_P(Strings, ParseVersionTest,
                         ::testing::Values(VersionCase{"0.11.0", {0, 11, 0}},
                                           VersionCase{"0.13.0+faa43dbf.nv26.01", {0, 13, 0}},
                                           VersionCase{"~0.6.4 (inferred)", {0, 6, 4}},
                                           VersionCase{"v0.10.1.1", {0, 10, 1, 1}},
                                           VersionCase{"", {}}, VersionCase{"latest", {}}));

TEST(CompareVersions, NumericNotLexicographic) {
  EXPECT_EQ(CompareVersions({0, 10, 1}, {0, 9}), 1);
  EXPECT_EQ(CompareVersions({0, 11}, {0, 11, 0}), 0);
  EXPECT_EQ(CompareVersions({0, 2, 7}, {0, 6, 3}), -1);
}

// The presets as the catalogue loader reads them from data/engines.
std::vector<v1::EnginePreset> BundledPresets() {
  return ::capplan::testing::BundledCatalogue().engine_presets();
}

struct PresetCase {
  v1::EngineKind kind;
  std::string version;
  std::string preset;
  bool newer;
};

class ChoosePresetTest : public ::testing::TestWithParam<PresetCase> {};

TEST_P(ChoosePresetTest, VersionRangesMapToPresets) {
  const std::vector<v1::EnginePreset> presets = BundledPresets();
  const absl::StatusOr<PresetChoice> c = ChoosePreset(presets, GetParam().kind, GetParam().version);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->preset->id(), GetParam().preset);
  EXPECT_EQ(c->newer_than_newest, GetParam().newer) << c->note;
}

// Issue 12 split the presets by the engines' memory rules (data/engines/
// README.md): vLLM V1 0.9.1 and 0.17/0.21, SGLang 0.4.6/0.4.8/0.5.3 and
// TensorRT-LLM got their own ranges, so versions that used to fall back on
// the newest preset now land on the one whose rules they follow.
INSTANTIATE_TEST_SUITE_P(
    Bundled, ChoosePresetTest,
    ::testing::Values(PresetCase{v1::ENGINE_KIND_VLLM, "0.2.7", "vllm-v0-legacy", false},
                      PresetCase{v1::ENGINE_KIND_VLLM, "0.3.0", "vllm-v0-legacy", false},
                      PresetCase{v1::ENGINE_KIND_VLLM, "0.3.1", "vllm-v0-0.3.1", false},
                      PresetCase{v1::ENGINE_KIND_VLLM, "0.6.3.post1", "vllm-v0-0.3.1", false},
                      PresetCase{v1::ENGINE_KIND_VLLM, "0.6.4", "vllm-v0-profiled", false},
                      PresetCase{v1::ENGINE_KIND_VLLM, "0.7.2", "vllm-v0-0.7", false},
                      PresetCase{v1::ENGINE_KIND_VLLM, "0.8.0", "vllm-v1-0.8", false},
                      PresetCase{v1::ENGINE_KIND_VLLM, "0.10.1.1", "vllm-v1-0.9", false},
                      PresetCase{v1::ENGINE_KIND_VLLM, "0.13.0+faa43dbf.nv26.01", "vllm-v1-0.11",
                                 false},
                      PresetCase{v1::ENGINE_KIND_VLLM, "0.19.2", "vllm-v1-0.17", false},
                      PresetCase{v1::ENGINE_KIND_VLLM, "0.30.0", "vllm-v1-0.21", true},
                      PresetCase{v1::ENGINE_KIND_SGLANG, "0.3.6", "sglang-0.3", false},
                      PresetCase{v1::ENGINE_KIND_SGLANG, "0.4.6", "sglang-0.4.6", false},
                      PresetCase{v1::ENGINE_KIND_SGLANG, "0.5.2", "sglang-0.4.8", false},
                      PresetCase{v1::ENGINE_KIND_SGLANG, "0.6.0", "sglang-0.5.3", true},
                      PresetCase{v1::ENGINE_KIND_TRTLLM, "0.19.0", "trtllm-engine", false},
                      PresetCase{v1::ENGINE_KIND_TRTLLM, "0.21.0", "trtllm-0.20", false},
                      PresetCase{v1::ENGINE_KIND_TRTLLM, "1.0.0", "trtllm-1.0", false},
                      PresetCase{v1::ENGINE_KIND_TRTLLM, "1.2.0rc1", "trtllm-1.1", true}));

// vLLM 0.8-0.10 fall back from V1 to V0 below compute capability 8.0 (a T4
// at 7.5): the V0 engine's memory rule, with a note. At 8.0 and above, or
// where the card states none, V1 as the version says; from 0.11 (no V0 left)
// the version's preset whatever the card.
TEST(ChoosePreset, V1FallsBackToV0BelowComputeCapability8) {
  const std::vector<v1::EnginePreset> presets = BundledPresets();
  absl::StatusOr<PresetChoice> t4 = ChoosePreset(presets, v1::ENGINE_KIND_VLLM, "0.8.2", "7.5");
  ASSERT_TRUE(t4.ok()) << t4.status();
  EXPECT_EQ(t4->preset->id(), "vllm-v0-0.7");
  EXPECT_EQ(t4->note,
            "compute capability 7.5 is below 8.0, which vllm-v1-0.8 needs: the engine falls back "
            "to the rule of vllm-v0-0.7");
  EXPECT_EQ(ChoosePreset(presets, v1::ENGINE_KIND_VLLM, "0.10.1.1", "7.0")->preset->id(),
            "vllm-v0-0.7");
  EXPECT_EQ(ChoosePreset(presets, v1::ENGINE_KIND_VLLM, "0.8.2", "8.0")->preset->id(),
            "vllm-v1-0.8");
  EXPECT_EQ(ChoosePreset(presets, v1::ENGINE_KIND_VLLM, "0.8.2", "")->preset->id(), "vllm-v1-0.8");
  EXPECT_EQ(ChoosePreset(presets, v1::ENGINE_KIND_VLLM, "0.11.0", "7.5")->preset->id(),
            "vllm-v1-0.11");
  // A fallback the catalogue lacks is an error, not a silent V1.
  std::vector<v1::EnginePreset> broken = presets;
  for (v1::EnginePreset& p : broken) {
    if (p.id() == "vllm-v1-0.8") p.set_below_compute_capability_preset("vllm-v0-gone");
  }
  EXPECT_THAT(ChoosePreset(broken, v1::ENGINE_KIND_VLLM, "0.8.2", "7.5"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("'vllm-v0-gone'")));
}

TEST(ChoosePreset, NoVersionAssumesTheNewest) {
  const std::vector<v1::EnginePreset> presets = BundledPresets();  // c points into it
  const absl::StatusOr<PresetChoice> c = ChoosePreset(presets, v1::ENGINE_KIND_VLLM, "");
  ASSERT_TRUE(c.ok());
  // vllm-v1-0.21 (CUDA graphs inside the KV budget) is the newest since issue 12.
  EXPECT_EQ(c->preset->id(), "vllm-v1-0.21");
  EXPECT_TRUE(c->version_assumed);
}

TEST(ChoosePreset, BadVersionAndUnknownEngine) {
  const std::vector<v1::EnginePreset> presets = BundledPresets();
  EXPECT_THAT(ChoosePreset(presets, v1::ENGINE_KIND_VLLM, "nightly"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("engine.version = \"nightly\"; must contain a dotted version number "
                          "such as 0.11.0")));
  EXPECT_THAT(ChoosePreset(presets, v1::ENGINE_KIND_UNSPECIFIED, "0.1"),
              StatusIs(absl::StatusCode::kNotFound,
                       Eq("no engine preset for engine ENGINE_KIND_UNSPECIFIED")));
}

TEST(ToEngineBehaviour, EveryBundledPresetTranslates) {
  for (const v1::EnginePreset& p : BundledPresets()) {
    const absl::StatusOr<model::EngineBehaviour> e = ToEngineBehaviour(p);
    ASSERT_TRUE(e.ok()) << p.id() << ": " << e.status();
    EXPECT_EQ(e->preset_id, p.id());
    EXPECT_GT(e->default_memory_fraction, 0.0);
    // SGLang's per-TP table is searched from the largest min_tp down.
    for (size_t i = 1; i < e->memory_fraction_by_min_tp.size(); ++i) {
      EXPECT_GT(e->memory_fraction_by_min_tp[i - 1].first, e->memory_fraction_by_min_tp[i].first);
    }
  }
}

// Which bundled presets size their pool from the device's free memory (so
// memory other processes hold comes out of it): those whose budget reads
// total - free after profiling, none that measures from an init snapshot.
TEST(ToEngineBehaviour, PoolLoweredByOtherProcessesWhereTheRuleReadsTheDeviceFreeMemory) {
  std::set<std::string> lowered;
  for (const v1::EnginePreset& p : BundledPresets()) {
    const absl::StatusOr<model::EngineBehaviour> e = ToEngineBehaviour(p);
    ASSERT_TRUE(e.ok()) << p.id() << ": " << e.status();
    EXPECT_EQ(e->pool_lowered_by_other_processes, p.pool_lowered_by_other_processes()) << p.id();
    if (e->pool_lowered_by_other_processes) lowered.insert(p.id());
  }
  EXPECT_EQ(lowered, (std::set<std::string>{"trtllm-0.20", "trtllm-1.0", "trtllm-1.1",
                                             "trtllm-engine", "vllm-v0-legacy", "vllm-v1-0.8"}));
}

TEST(ToEngineBehaviour, MissingBudgetRuleNamesThePreset) {
  EXPECT_THAT(ToEngineBehaviour(Text<v1::EnginePreset>(R"pb(id: "x"
                                                            engine: ENGINE_KIND_VLLM
                                                            default_memory_fraction: 0.9)pb")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("EnginePreset(x).budget_rule = ENGINE_BUDGET_RULE_UNSPECIFIED; must be "
                          "set")));
}

TEST(ToEngineSettings, TakesEachEnginesOwnFraction) {
  const model::EngineSettings s = ToEngineSettings(Text<v1::EngineConfig>(
      R"pb(kind: ENGINE_KIND_SGLANG
           mem_fraction_static: 0.93
           max_model_len: 40960
           kv_cache_dtype: KV_CACHE_DTYPE_FP8
           speculative { method: SPECULATIVE_METHOD_MTP num_speculative_tokens: 3 })pb"));
  EXPECT_DOUBLE_EQ(s.memory_fraction, 0.93);
  EXPECT_EQ(s.max_model_len, 40960);
  EXPECT_EQ(s.kv_cache_dtype, model::NumberType::kFp8);
  EXPECT_EQ(s.speculative_method, model::SpeculativeMethod::kMtp);
  EXPECT_EQ(s.num_speculative_tokens, 3);
}

TEST(ToHardwareSpec, PrefersUsableMemory) {
  const absl::StatusOr<model::HardwareSpec> h =
      ToHardwareSpec(Text<v1::Hardware>(R"pb(id: "c"
                                             name: "Card"
                                             memory_bytes: 100
                                             usable_memory_bytes: 90
                                             unified_memory: true)pb"));
  ASSERT_TRUE(h.ok());
  EXPECT_DOUBLE_EQ(h->memory_bytes, 90.0);
  EXPECT_TRUE(h->unified_memory);
  // Neither usable_memory_bytes nor memory_bytes: no memory to plan in.
  EXPECT_THAT(ToHardwareSpec(Text<v1::Hardware>(R"pb(id: "z")pb")),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       Eq("Hardware(z).memory_bytes = 0; must be positive")));
}

// NVLink and xGMI are the fast intra-node links (SGLang's flat multi-GPU
// set-up); PCIe and Grace's chip-to-chip link are not.
TEST(ToHardwareSpec, FastIntraNodeLinkFromTheLinkKind) {
  for (const auto& [kind, fast] :
       std::vector<std::pair<std::string, bool>>{{"LINK_KIND_NVLINK", true},
                                                 {"LINK_KIND_XGMI", true},
                                                 {"LINK_KIND_PCIE", false},
                                                 {"LINK_KIND_NVLINK_C2C", false}}) {
    const absl::StatusOr<model::HardwareSpec> h = ToHardwareSpec(Text<v1::Hardware>(
        absl::StrCat("id: \"c\" memory_bytes: 100 intra_node { kind: ", kind, " }")));
    ASSERT_TRUE(h.ok()) << h.status();
    EXPECT_EQ(h->fast_intra_node_link, fast) << kind;
  }
}

TEST(ToEngineBehaviour, FlatMultiGpuTermIsRead) {
  int sglang = 0, vllm = 0;
  for (const v1::EnginePreset& p : BundledPresets()) {
    const absl::StatusOr<model::EngineBehaviour> e = ToEngineBehaviour(p);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_EQ(e->non_torch_flat_on_fast_link, p.non_torch_flat_on_fast_link()) << p.id();
    EXPECT_EQ(e->non_torch_flat_on_every_link, p.non_torch_flat_on_every_link()) << p.id();
    EXPECT_EQ(e->fast_link_multi_gpu_non_torch_bytes, p.fast_link_multi_gpu_non_torch_bytes());
    if (p.engine() == v1::ENGINE_KIND_VLLM) {
      ++vllm;
      EXPECT_TRUE(e->non_torch_flat_on_every_link) << p.id();
      EXPECT_EQ(e->non_torch_per_extra_rank_bytes, 0) << p.id();
    }
    if (p.engine() == v1::ENGINE_KIND_SGLANG) {
      ++sglang;
      EXPECT_TRUE(e->non_torch_flat_on_fast_link) << p.id();
      EXPECT_GT(e->fast_link_multi_gpu_non_torch_bytes, 0) << p.id();
    }
  }
  EXPECT_GE(sglang, 3);
  EXPECT_GE(vllm, 9);
}

}  // namespace
}  // namespace capplan::service
