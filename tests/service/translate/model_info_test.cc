#include "service/translate/model_info.h"

#include "gtest/gtest.h"
#include "service/catalog/catalog.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::TempDir;

TEST(DescribeModel, DerivesCountsFromTheArchitecture) {
  TempDir dir;
  testing::WriteMiniCatalogue(dir);
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  auto info = DescribeModel(*(*catalog)->FindModel("test-model"));
  ASSERT_TRUE(info.ok()) << info.status();
  // Hand-computed for the fixture: 16 layers, hidden 2048, 16 heads of 128,
  // 4 KV heads, gated MLP 8192, vocabulary 32,000, untied embeddings.
  const int64_t attention = 2048 * 2048 * 2 + 2 * 2048 * 4 * 128;  // q, o, k, v
  const int64_t mlp = 3 * 2048 * 8192;
  const int64_t norms = 2 * 2048;
  const int64_t per_layer = attention + mlp + norms;
  const int64_t total = 16 * per_layer + 2 * 32000 * 2048 + 2048;
  EXPECT_EQ(info->derived().total_parameters(), static_cast<uint64_t>(total));
  EXPECT_EQ(info->derived().active_parameters_per_token(), static_cast<uint64_t>(total));
  EXPECT_EQ(info->derived().num_layers(), 16u);
  EXPECT_EQ(info->derived().kv_bytes_per_token_bf16(), 2u * 4 * 128 * 2 * 16);
  EXPECT_EQ(info->derived().state_bytes_per_request(), 0u);
}

// A vocabulary no model has (the catalogue-text fuzzer's find: 1.9e17
// entries overflowed the parameter product) is refused with its field, not
// counted.
TEST(DescribeModel, SizesNoModelHasAreRefused) {
  TempDir dir;
  testing::WriteMiniCatalogue(dir);
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  v1::Model model = *(*catalog)->FindModel("test-model");
  model.set_vocab_size(188888888888851936u);
  absl::StatusOr<v1::ModelInfo> info = DescribeModel(model);
  ASSERT_FALSE(info.ok());
  EXPECT_EQ(info.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(info.status().message().find("vocab_size"), std::string::npos) << info.status();
  EXPECT_NE(info.status().message().find("must be at most 16777216"), std::string::npos)
      << info.status();
}

}  // namespace
}  // namespace capplan::service
