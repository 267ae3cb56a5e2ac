#include "service/planner/kv_tier.h"

#include <algorithm>
#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "service/planner/plan.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

const Catalog& Bundled() { return testing::BundledCatalogue(); }

v1::PlanRequest Request(const std::string& text) {
  v1::PlanRequest r;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &r)) << text;
  return r;
}

const v1::KvStorageTierSpec& Tier(const std::string& id) {
  const v1::KvStorageTierSpec* t = Bundled().FindKvTier(id);
  EXPECT_NE(t, nullptr) << id;
  return t != nullptr ? *t : Bundled().kv_tiers().front();
}

// Llama-3.1-8B on one H100 (a node of 8), 8,000 tokens in, 200 out.
v1::PlanRequest Llama8b(const std::string& tier) {
  return Request(absl::StrCat(
      "deployment { model_id: \"llama-3.1-8b-instruct\" hardware_id: \"nvidia-h100-sxm-80gb\" "
      "engine { max_model_len: 131072 } } workload { input_tokens: 8000 output_tokens: 200 } "
      "kv_tier_id: \"",
      tier, "\""));
}

TEST(KvTier, AnUnknownTierIsNotFoundWithTheNearOnes) {
  EXPECT_THAT(Plan(Bundled(), Llama8b("local-nvme")),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("PlanRequest.kv_tier_id = \"local-nvme\""),
                             HasSubstr("did you mean local-nvme-gen4-pm9a3"))));
}

TEST(KvTier, ContextsNeedATierAndMustFitTheContext) {
  v1::PlanRequest no_tier = Llama8b("");
  no_tier.add_kv_restore_context_tokens(8192);
  EXPECT_THAT(Plan(Bundled(), no_tier),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanRequest.kv_restore_context_tokens is set without")));
  v1::PlanRequest too_long = Llama8b("local-nvme-gen4-pm9a3");
  too_long.add_kv_restore_context_tokens(8192);
  too_long.add_kv_restore_context_tokens(200000);
  EXPECT_THAT(Plan(Bundled(), too_long),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("PlanRequest.kv_restore_context_tokens[1] = 200000; must be in "
                                 "[1, 131072]")));
  v1::PlanRequest many = Llama8b("local-nvme-gen4-pm9a3");
  for (int i = 1; i <= kMaxKvRestoreContexts + 1; ++i) many.add_kv_restore_context_tokens(i);
  EXPECT_THAT(Plan(Bundled(), many), StatusIs(absl::StatusCode::kInvalidArgument,
                                              HasSubstr("kv_restore_context_tokens has 65")));
}

// A plan started from a baseline takes the baseline's measured input as a
// context, and the deployment's max_model_len where no default fits under it.
TEST(KvTier, ABaselinesWorkloadGivesTheDefaultContexts) {
  v1::PlanRequest r = Request(
      "deployment { baseline_id: \"sglang-0.5.10-qwen3.5-397b-a17b-fp8-b300cc-x4-random-1024-"
      "1024-closed\" engine { max_model_len: 4096 } } kv_tier_id: \"nvme-of-100gbe-rocev2\"");
  auto plan = Plan(Bundled(), r);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const auto& p = plan->kv_tier().points();
  ASSERT_EQ(p.size(), 2);
  EXPECT_GT(p[0].context_tokens(), 0u);
  EXPECT_LT(p[0].context_tokens(), 4096u);
  EXPECT_EQ(p[1].context_tokens(), 4096u);
}

// A baseline whose card its source withheld has no card to restore into:
// the tier is refused, naming the field, rather than answered from a fit
// with no compute term.
TEST(KvTier, AWithheldCardIsRefused) {
  EXPECT_THAT(Plan(Bundled(), Request("deployment { baseline_id: \"seed-000-122b-moe-int4-4gpu-"
                                      "pcie-sglang\" } kv_tier_id: \"local-nvme-gen4-pm9a3\"")),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("PlanRequest.kv_tier_id"), HasSubstr("withheld"))));
}

// A restore moves each GPU's KV of the context (the memory plan's bytes per
// token) over the narrowest path, plus the tier's latency.
TEST(KvTier, RestoreIsTheContextsBytesOverTheNarrowestPath) {
  auto plan = Plan(Bundled(), Llama8b("local-nvme-gen4-pm9a3"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  ASSERT_TRUE(plan->has_kv_tier());
  const v1::KvTierReport& r = plan->kv_tier();
  const v1::KvStorageTierSpec& tier = Tier("local-nvme-gen4-pm9a3");
  // The default contexts: the input and 8k, 32k, 128k within max_model_len.
  ASSERT_EQ(r.points_size(), 4);
  EXPECT_EQ(r.points(0).context_tokens(), 8000u);
  EXPECT_EQ(r.points(3).context_tokens(), 131072u);
  const double per_token = static_cast<double>(plan->memory().kv_bytes_per_token());
  ASSERT_GT(per_token, 0);
  for (const v1::KvRestorePoint& p : r.points()) {
    EXPECT_NEAR(p.kv_bytes(), p.context_tokens() * per_token, 1e-9 * p.kv_bytes());
    EXPECT_NEAR(p.restore_seconds(),
                p.kv_bytes() / tier.read_bandwidth_bytes_per_second() + tier.latency_seconds(),
                1e-12 * p.restore_seconds());
    EXPECT_GT(p.recompute_seconds(), 0);
    EXPECT_DOUBLE_EQ(p.speedup(), p.recompute_seconds() / p.restore_seconds());
  }
  EXPECT_EQ(r.effective_bandwidth_bytes_per_second(), tier.read_bandwidth_bytes_per_second());
}

// gpt-oss keeps half its layers' KV for a 128-token window only: restoring
// a context moves the full layers' KV for every token and the window
// layers' for the window, so each added token costs the full layers' bytes
// alone, less than the memory plan's bytes per token.
TEST(KvTier, SlidingWindowLayersRestoreAtMostTheWindow) {
  auto plan = Plan(Bundled(), Request("deployment { model_id: \"gpt-oss-20b\" hardware_id: "
                                      "\"nvidia-h100-sxm-80gb\" engine { max_model_len: 65536 } } "
                                      "workload { input_tokens: 4096 output_tokens: 200 } "
                                      "kv_tier_id: \"host-dram-pcie5-x16\" "
                                      "kv_restore_context_tokens: [4096, 8192, 32768]"));
  ASSERT_TRUE(plan.ok()) << plan.status();
  const auto& p = plan->kv_tier().points();
  ASSERT_EQ(p.size(), 3);
  const double per_token_short = (p[1].kv_bytes() - p[0].kv_bytes()) / 4096;
  const double per_token_long = (p[2].kv_bytes() - p[1].kv_bytes()) / 24576;
  EXPECT_NEAR(per_token_long, per_token_short, 1e-9 * per_token_long);
  const double all_layers = static_cast<double>(plan->memory().kv_bytes_per_token());
  EXPECT_LT(per_token_long, 0.75 * all_layers);
  EXPECT_LT(p[2].kv_bytes(), 32768 * all_layers);
}

// Host DRAM reaches each GPU over its own PCIe link: a TP4 replica reads
// four times as fast as one GPU. A NIC port is the node's: four GPUs share it.
TEST(KvTier, PerGpuPathsAddUpAndANodePathIsShared) {
  auto request = [](const std::string& tier) {
    return Request(absl::StrCat(
        "deployment { model_id: \"llama-3.1-70b-instruct\" hardware_id: \"nvidia-h100-sxm-80gb\" "
        "gpu_count: 4 engine { max_model_len: 32768 } } "
        "workload { input_tokens: 8000 output_tokens: 200 } kv_tier_id: \"",
        tier, "\""));
  };
  auto dram = Plan(Bundled(), request("host-dram-pcie5-x16"));
  ASSERT_TRUE(dram.ok()) << dram.status();
  EXPECT_DOUBLE_EQ(dram->kv_tier().effective_bandwidth_bytes_per_second(),
                   4 * Tier("host-dram-pcie5-x16").path_bandwidth_bytes_per_second());
  auto nic = Plan(Bundled(), request("nvme-of-100gbe-rocev2"));
  ASSERT_TRUE(nic.ok()) << nic.status();
  EXPECT_DOUBLE_EQ(nic->kv_tier().effective_bandwidth_bytes_per_second(),
                   Tier("nvme-of-100gbe-rocev2").path_bandwidth_bytes_per_second());
  // Two TP4 replicas fill an 8-GPU node and share its port.
  EXPECT_EQ(nic->kv_tier().replicas_sharing_tier(), 2u);
  EXPECT_EQ(dram->kv_tier().replicas_sharing_tier(), 2u);
}

// Restoring is linear in the context; recomputing long contexts is
// superlinear (the attention over the context grows with its square), so
// from a few thousand tokens on the speedup grows. (Below that a prefill's
// fixed cost, the weights read once per step, makes short recomputes
// relatively slow: the speedup is U-shaped in the context.)
TEST(KvTier, TheSpeedupGrowsWithLongContexts) {
  v1::PlanRequest r = Llama8b("host-dram-pcie5-x16");
  for (uint64_t l : {8192, 32768, 131072}) r.add_kv_restore_context_tokens(l);
  auto plan = Plan(Bundled(), r);
  ASSERT_TRUE(plan.ok()) << plan.status();
  const auto& points = plan->kv_tier().points();
  ASSERT_EQ(points.size(), 3);
  for (int i = 1; i < points.size(); ++i) {
    EXPECT_GT(points[i].speedup(), points[i - 1].speedup()) << points[i].context_tokens();
    // Restore time is proportional to the context (no latency in this tier).
    EXPECT_NEAR(points[i].restore_seconds() / points[i - 1].restore_seconds(),
                static_cast<double>(points[i].context_tokens()) / points[i - 1].context_tokens(),
                1e-9);
  }
}

// A cold-restore workload runs at the lower of what the GPUs sustain
// without the prefill and what the tier delivers; a slow shared drive binds,
// fast host DRAM leaves the GPUs binding.
TEST(KvTier, ColdRestoreRunsAtTheLowerOfTheGpusAndTheTier) {
  for (const char* id : {"local-nvme-gen4-pm9a3", "host-dram-pcie5-x16"}) {
    SCOPED_TRACE(id);
    auto plan = Plan(Bundled(), Llama8b(id));
    ASSERT_TRUE(plan.ok()) << plan.status();
    const v1::KvTierReport& r = plan->kv_tier();
    EXPECT_GT(r.restore_gpu_output_tokens_per_second(), r.recompute_output_tokens_per_second());
    EXPECT_DOUBLE_EQ(r.restore_output_tokens_per_second(),
                     std::min(r.restore_gpu_output_tokens_per_second(),
                              r.restore_tier_output_tokens_per_second()));
    EXPECT_EQ(r.tier_bound(),
              r.restore_tier_output_tokens_per_second() < r.restore_gpu_output_tokens_per_second());
    EXPECT_NEAR(r.throughput_gain_fraction(),
                r.restore_output_tokens_per_second() / r.recompute_output_tokens_per_second() - 1,
                1e-12);
  }
  auto drive = Plan(Bundled(), Llama8b("local-nvme-gen4-pm9a3"));
  auto dram = Plan(Bundled(), Llama8b("host-dram-pcie5-x16"));
  ASSERT_TRUE(drive.ok() && dram.ok());
  // One drive for 8 single-GPU replicas: output ÷ (input × bytes/token × 8 ÷
  // the drive's bandwidth).
  const v1::KvStorageTierSpec& t = Tier("local-nvme-gen4-pm9a3");
  EXPECT_EQ(drive->kv_tier().replicas_sharing_tier(), 8u);
  EXPECT_NEAR(drive->kv_tier().restore_tier_output_tokens_per_second(),
              200 / (8000 * static_cast<double>(drive->memory().kv_bytes_per_token()) * 8 /
                     t.read_bandwidth_bytes_per_second()),
              1e-9 * drive->kv_tier().restore_tier_output_tokens_per_second());
  EXPECT_TRUE(drive->kv_tier().tier_bound());
  EXPECT_FALSE(dram->kv_tier().tier_bound());
  EXPECT_GT(dram->kv_tier().throughput_gain_fraction(), 0);
}

// Seed 004: restoring the 480B model's KV from the NVMe-oF array is 8.6-20x
// faster than recomputing it. The report states neither the contexts nor
// the KV dtype nor the R2 runs' parallelism; the model's speedups for TP4 on
// the MI308X over 8k-160k contexts, bf16 and fp8 KV, must reach into that
// band (a consistency check, not a reproduction). The MI308X entry has no
// public Infinity Fabric figure, which TP needs: the test borrows the
// MI300X's (the same CDNA 3 fabric; an assumption of this test only).
TEST(KvTier, Seed004RestoreSpeedupReachesTheReportsBand) {
  const v1::Baseline* seed = nullptr;
  for (const v1::Baseline& b : Bundled().baselines()) {
    if (b.provenance().source_document().rfind("004_", 0) == 0) seed = &b;
  }
  ASSERT_NE(seed, nullptr);
  double band_min = 0, band_max = 0;
  for (const v1::KvTierRun& run : seed->kv_tier_runs()) {
    if (run.has_restore_speedup_min()) {
      band_min = run.restore_speedup_min();
      band_max = run.restore_speedup_max();
    }
  }
  ASSERT_GT(band_min, 0);
  const v1::Hardware* mi308x = Bundled().FindHardware(seed->deployment().hardware_id());
  const v1::Hardware* mi300x = Bundled().FindHardware("amd-mi300x-192gb");
  ASSERT_TRUE(mi308x != nullptr && mi300x != nullptr);
  v1::Hardware card = *mi308x;
  card.set_id("mi308x-with-mi300x-fabric");
  card.clear_sources();
  *card.mutable_intra_node() = mi300x->intra_node();
  double lowest = 1e9, highest = 0;
  for (const char* kv : {"KV_CACHE_DTYPE_AUTO", "KV_CACHE_DTYPE_FP8"}) {
    v1::PlanRequest r = Request(absl::StrCat(
        "deployment { model_id: \"", seed->deployment().model_id(),
        "\" gpu_count: 4 weight_format: WEIGHT_FORMAT_FP8_BLOCK weight_group_size: 128 "
        "engine { max_model_len: 163840 kv_cache_dtype: ",
        kv,
        " } } workload { input_tokens: 32768 output_tokens: 1024 } "
        "kv_tier_id: \"nvme-of-100gbe-rocev2\" "
        "kv_restore_context_tokens: [8192, 32768, 131072, 163840]"));
    *r.mutable_deployment()->mutable_hardware() = card;
    auto plan = Plan(Bundled(), r);
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (const v1::KvRestorePoint& p : plan->kv_tier().points()) {
      EXPECT_GT(p.speedup(), 1) << kv << " " << p.context_tokens();
      lowest = std::min(lowest, p.speedup());
      highest = std::max(highest, p.speedup());
    }
  }
  EXPECT_GE(highest, band_min) << "lowest " << lowest;
  EXPECT_LE(lowest, band_max) << "highest " << highest;
}

}  // namespace
}  // namespace capplan::service
