#include "service/catalog/suggest.h"

#include <limits>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::BundledCatalogue;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::Not;
using ::testing::SizeIs;

const std::vector<SuggestionCandidate>& Gpus() {
  static const auto* const kGpus = new std::vector<SuggestionCandidate>{
      {"nvidia-h100-sxm-80gb", {"NVIDIA H100 SXM 80GB"}},
      {"nvidia-h100-pcie-80gb", {"NVIDIA H100 PCIe 80GB"}},
      {"nvidia-a100-sxm4-80gb", {"NVIDIA A100 SXM4 80GB"}},
      {"nvidia-l4-24gb", {"NVIDIA L4"}},
      {"amd-mi300x-192gb", {"AMD Instinct MI300X"}},
  };
  return *kGpus;
}

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutionsWithoutCase) {
  EXPECT_EQ(EditDistance("", ""), 0u);
  EXPECT_EQ(EditDistance("abc", ""), 3u);
  EXPECT_EQ(EditDistance("kitten", "sitting"), 3u);
  EXPECT_EQ(EditDistance("H100", "h100"), 0u);
  EXPECT_EQ(EditDistance("nvidia-l4-42gb", "nvidia-l4-24gb"), 2u);
}

// The band gives the exact distance whenever it is within the bound, and
// bound + 1 otherwise, on pseudo-random lower-case strings of 0-12 letters
// from a 3-letter alphabet (many near pairs).
TEST(BoundedEditDistance, ExactWithinTheBoundCappedBeyond) {
  uint32_t state = 12345;
  auto next = [&] {
    state = state * 1664525u + 1013904223u;
    return state >> 8;
  };
  auto word = [&] {
    std::string w(next() % 13, 'a');
    for (char& c : w) c = static_cast<char>('a' + next() % 3);
    return w;
  };
  int checked = 0;
  for (int k = 0; k < 3000; ++k) {
    const std::string a = word(), b = word();
    const size_t exact = EditDistance(a, b);
    for (size_t bound = 0; bound <= 13; ++bound) {
      ASSERT_EQ(BoundedEditDistance(a, b, bound), std::min(exact, bound + 1))
          << "'" << a << "' '" << b << "' bound " << bound;
      ++checked;
    }
    ASSERT_EQ(BoundedEditDistance(a, b, std::numeric_limits<size_t>::max()), exact);
  }
  EXPECT_EQ(checked, 3000 * 14);
}

// A kilobyte-long unknown id: nothing is within a third of its length of a
// catalogue id, so nothing is suggested.
TEST(SuggestIds, AVeryLongQuerySuggestsNothing) {
  const std::vector<SuggestionCandidate> candidates = {{"nvidia-h100-sxm-80gb", {"H100 SXM"}},
                                                       {"nvidia-h200-sxm-141gb", {"H200"}}};
  EXPECT_TRUE(SuggestIds(std::string(4096, 'x'), candidates).empty());
  // An id a few letters off still comes back.
  EXPECT_EQ(SuggestIds("nvidia-h100-sxm-80g", candidates),
            std::vector<std::string>{"nvidia-h100-sxm-80gb"});
}

TEST(SuggestIds, EveryWordAsASubstringOfTheIdOrANameNearestFirst) {
  EXPECT_THAT(SuggestIds("h100", Gpus()),
              ElementsAre("nvidia-h100-sxm-80gb", "nvidia-h100-pcie-80gb"));
  EXPECT_THAT(SuggestIds("H100 PCIe", Gpus()), ElementsAre("nvidia-h100-pcie-80gb"));
  EXPECT_THAT(SuggestIds("instinct", Gpus()), ElementsAre("amd-mi300x-192gb"));
  EXPECT_THAT(SuggestIds("80gb", Gpus()), SizeIs(3));
  EXPECT_THAT(SuggestIds("80gb", Gpus(), 2), SizeIs(2));
}

TEST(SuggestIds, FallsBackToEditDistanceWithinAThird) {
  EXPECT_THAT(SuggestIds("nvidia-l4-42gb", Gpus()), ElementsAre("nvidia-l4-24gb"));
  EXPECT_THAT(SuggestIds("amd-mi300-192gb", Gpus()), ElementsAre("amd-mi300x-192gb"));
  EXPECT_THAT(SuggestIds("tpu-v5e", Gpus()), IsEmpty());
  EXPECT_THAT(SuggestIds("", Gpus()), IsEmpty());
}

TEST(DidYouMean, ListsTheIdsOrNothing) {
  EXPECT_EQ(DidYouMean({}), "");
  EXPECT_EQ(DidYouMean({"a"}), "; did you mean a?");
  EXPECT_EQ(DidYouMean({"a", "b", "c"}), "; did you mean a, b or c?");
}

TEST(Suggest, TheBundledCatalogueByKind) {
  const Catalog& catalog = BundledCatalogue();
  for (const std::string& id : SuggestHardware(catalog, "h100")) {
    EXPECT_THAT(id, ::testing::StartsWith("nvidia-h100-"));
  }
  EXPECT_THAT(SuggestHardware(catalog, "h100"), Not(IsEmpty()));
  // Models match their repo ids and aliases too.
  EXPECT_THAT(SuggestModels(catalog, "Llama-3.1-8B"), ::testing::Contains("llama-3.1-8b-instruct"));
  EXPECT_THAT(SuggestBaselines(catalog, "seed-004"),
              ElementsAre("seed-004-qwen3-coder-480b-fp8-8x-mi308x"));
}

}  // namespace
}  // namespace capplan::service
