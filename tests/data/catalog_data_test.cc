// Every file of the bundled catalogue loads and validates, and the entities
// the product promises are there.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "service/catalog/catalog.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

class BundledCatalogue : public ::testing::Test {
 protected:
  static const Catalog& catalog() { return testing::BundledCatalogue(); }
};

TEST_F(BundledCatalogue, HasEveryPromisedGpu) {
  for (const char* id :
       {"nvidia-a100-sxm-40gb", "nvidia-a100-sxm-80gb", "nvidia-h100-sxm-80gb",
        "nvidia-h100-pcie-80gb", "nvidia-h200-sxm-141gb", "nvidia-b200-180gb", "nvidia-l40s-48gb",
        "nvidia-a10g-24gb", "nvidia-a40-48gb", "nvidia-l4-24gb", "nvidia-t4-16gb",
        "nvidia-rtx-a5000-24gb", "nvidia-rtx-3090-24gb", "nvidia-rtx-4090-24gb",
        "nvidia-rtx-5090-32gb", "nvidia-dgx-spark-gb10", "amd-mi300x-192gb", "amd-mi308x-192gb",
        "amd-mi325x-256gb"}) {
    const v1::Hardware* h = catalog().FindHardware(id);
    ASSERT_NE(h, nullptr) << id;
    EXPECT_GT(h->memory_bytes(), 0u) << id;
    EXPECT_GT(h->usable_memory_bytes(), 0u) << id;
  }
}

TEST_F(BundledCatalogue, HasEveryPromisedModelFindableByRepoId) {
  for (const char* id :
       {"llama-3.1-8b-instruct", "llama-3.1-70b-instruct", "qwen2.5-7b-instruct",
        "qwen2.5-32b-instruct", "qwen3-8b", "qwen3-32b", "qwen3-30b-a3b", "qwen3-235b-a22b",
        "qwen3-coder-480b-a35b-instruct", "qwen3-next-80b-a3b-instruct", "deepseek-v3",
        "gpt-oss-20b", "gpt-oss-120b", "mixtral-8x7b-instruct"}) {
    const v1::Model* model = catalog().FindModel(id);
    ASSERT_NE(model, nullptr) << id;
    ASSERT_FALSE(model->hf_repo_id().empty()) << id;
    const v1::Model* by_repo = catalog().FindModel(model->hf_repo_id());
    ASSERT_NE(by_repo, nullptr) << model->hf_repo_id();
    EXPECT_EQ(by_repo->id(), id);
  }
  const v1::Model* llama = catalog().FindModel("meta-llama/Llama-3.1-8B-Instruct");
  ASSERT_NE(llama, nullptr);
  EXPECT_EQ(llama->id(), "llama-3.1-8b-instruct");
}

const v1::Baseline* BaselineFrom(const Catalog& catalog, const std::string& seed) {
  for (const v1::Baseline& b : catalog.baselines()) {
    if (b.provenance().source_document().find(seed) != std::string::npos) return &b;
  }
  return nullptr;
}

TEST_F(BundledCatalogue, SeedReportsAreBaselinesNamingTheirSource) {
  for (const char* seed :
       {"000_46cf6fd3290c7f5b.txt", "002_5094f052508cf190.txt", "004_97a0cc968881be68.txt"}) {
    EXPECT_NE(BaselineFrom(catalog(), seed), nullptr) << seed;
  }
}

TEST_F(BundledCatalogue, Seed000SweepHasSevenIncreasingConcurrencies) {
  const v1::Baseline* b = BaselineFrom(catalog(), "000_46cf6fd3290c7f5b.txt");
  ASSERT_NE(b, nullptr);
  ASSERT_GE(b->sweeps_size(), 1);
  const v1::Sweep& sweep = b->sweeps(0);
  ASSERT_EQ(sweep.rows_size(), 7);
  for (int i = 1; i < sweep.rows_size(); ++i) {
    EXPECT_GT(sweep.rows(i).concurrency(), sweep.rows(i - 1).concurrency());
  }
  EXPECT_FALSE(b->quality_gates().empty());
  EXPECT_FALSE(b->sustained_runs().empty());
}

TEST_F(BundledCatalogue, Seed002KeepsBothKvPools) {
  const v1::Baseline* b = BaselineFrom(catalog(), "002_5094f052508cf190.txt");
  ASSERT_NE(b, nullptr);
  std::vector<uint64_t> tokens;
  for (const v1::KvPool& pool : b->kv_pools()) tokens.push_back(pool.tokens());
  EXPECT_THAT(tokens, ::testing::IsSupersetOf({531372u, 682759u}));
}

TEST_F(BundledCatalogue, SeedBaselinesReferenceCatalogueModels) {
  for (const v1::Baseline& b : catalog().baselines()) {
    EXPECT_NE(catalog().FindModel(b.deployment().model_id()), nullptr) << b.id();
  }
}

}  // namespace
}  // namespace capplan::service
