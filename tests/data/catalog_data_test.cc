// Every file of the bundled catalogue loads and validates, and the entities
// the product promises are there.
#include <algorithm>
#include <string>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "google/protobuf/descriptor.h"
#include "gtest/gtest.h"
#include "service/catalog/catalog.h"
#include "service/catalog/catalog_validator.h"
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
        "amd-mi325x-256gb",
        // Cards real deployments asked for (issue 15).
        "nvidia-rtx-4080-16gb", "nvidia-rtx-a6000-48gb", "nvidia-rtx-6000-ada-48gb",
        "nvidia-rtx-pro-6000-blackwell-96gb", "nvidia-l40-48gb", "nvidia-l20-48gb",
        "nvidia-a10-24gb", "nvidia-a100-pcie-40gb", "nvidia-a100-pcie-80gb", "nvidia-h20-96gb",
        "nvidia-h100-nvl-94gb", "nvidia-gh200-96gb", "nvidia-b300-288gb", "nvidia-gb200-186gb",
        "amd-mi355x-288gb"}) {
    const v1::Hardware* h = catalog().FindHardware(id);
    ASSERT_NE(h, nullptr) << id;
    EXPECT_GT(h->memory_bytes(), 0u) << id;
    EXPECT_GT(h->usable_memory_bytes(), 0u) << id;
  }
}

// The field a citation names ("intra_node.bandwidth_bytes_per_second"), if
// the Hardware message has it.
bool HardwareHasField(const std::string& dotted) {
  const google::protobuf::Descriptor* d = v1::Hardware::descriptor();
  for (absl::string_view part : absl::StrSplit(dotted, '.')) {
    if (d == nullptr) return false;
    const google::protobuf::FieldDescriptor* f = d->FindFieldByName(std::string(part));
    if (f == nullptr) return false;
    d = f->message_type();
  }
  return true;
}

bool AllOf(absl::string_view text, size_t size, bool (*is)(unsigned char)) {
  return text.size() == size && std::all_of(text.begin(), text.end(), [is](char c) {
           return is(static_cast<unsigned char>(c));
         });
}
bool IsDigit(unsigned char c) { return c >= '0' && c <= '9'; }
bool IsLowerHex(unsigned char c) { return IsDigit(c) || (c >= 'a' && c <= 'f'); }

// A document a reader can open as it was: an https URL (a GitHub file pinned
// to a 40-hex commit) or one of the seed reports in data/sources/seeds/
// ("004_97a0cc968881be68.txt").
bool IsStableDocument(const std::string& doc) {
  if (absl::EndsWith(doc, ".txt") && doc.size() == 24 && doc[3] == '_') {
    return AllOf(absl::string_view(doc).substr(0, 3), 3, IsDigit) &&
           AllOf(absl::string_view(doc).substr(4, 16), 16, IsLowerHex);
  }
  if (!absl::StartsWith(doc, "https://")) return false;
  const size_t blob = doc.find("/blob/");
  if (absl::StrContains(doc, "github.com/") && blob != std::string::npos) {
    const absl::string_view rest = absl::string_view(doc).substr(blob + 6);
    return AllOf(rest.substr(0, rest.find('/')), 40, IsLowerHex);
  }
  return true;
}

TEST_F(BundledCatalogue, EveryHardwareFigureHasAStableSource) {
  for (const v1::Hardware& h : catalog().hardware()) {
    // The catalogue's rules, citations included: every set figure is named.
    for (const Finding& f : ValidateEntity(h)) ADD_FAILURE() << h.id() << ": " << f.message;
    EXPECT_FALSE(h.sources().empty()) << h.id();
    for (const v1::Citation& c : h.sources()) {
      EXPECT_TRUE(IsStableDocument(c.document())) << h.id() << ": " << c.document();
      for (const std::string& field : c.fields()) {
        EXPECT_TRUE(HardwareHasField(field)) << h.id() << " cites no such field: " << field;
      }
    }
  }
}

TEST_F(BundledCatalogue, EveryCardPlansMemoryAndTheLoadOfOneWithBandwidthAndAPeak) {
  // What the planner needs of a card: memory always; bandwidth and a 16-bit
  // (or 8-bit) peak for step times. A card lacking them says so in a citation.
  for (const v1::Hardware& h : catalog().hardware()) {
    EXPECT_GT(h.usable_memory_bytes(), 0u) << h.id();
    const bool has_16_bit =
        std::any_of(h.peak_compute().begin(), h.peak_compute().end(), [](const auto& p) {
          return p.format() == v1::NUMBER_FORMAT_BF16 || p.format() == v1::NUMBER_FORMAT_FP16;
        });
    if (h.memory_bandwidth_bytes_per_second() > 0 && has_16_bit) continue;
    // "not public", "NOT public", "not published".
    bool explained = false;
    for (const v1::Citation& c : h.sources()) {
      explained |= absl::StrContains(absl::AsciiStrToLower(c.note()), "not publi");
    }
    EXPECT_TRUE(explained) << h.id() << " lacks bandwidth or a 16-bit peak without saying why";
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
