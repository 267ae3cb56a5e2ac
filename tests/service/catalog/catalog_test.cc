#include "service/catalog/catalog.h"

#include <fstream>
#include <sstream>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::capplan::testing::TempDir;
using ::capplan::testing::WriteMiniCatalogue;
using ::testing::AllOf;
using ::testing::HasSubstr;

TEST(Catalog, LoadsMiniCatalogueAndIndexesIds) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  EXPECT_EQ((*catalog)->hardware().size(), 1u);
  ASSERT_NE((*catalog)->FindHardware("test-gpu-24gb"), nullptr);
  EXPECT_EQ((*catalog)->FindHardware("nope"), nullptr);
  EXPECT_EQ((*catalog)->OriginOf("test-model"), "models/test-model.txtpb");
}

TEST(Catalog, FindsModelByRepoIdCaseInsensitively) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  ASSERT_TRUE(catalog.ok()) << catalog.status();
  const v1::Model* model = (*catalog)->FindModel("test/test-model-1b");
  ASSERT_NE(model, nullptr);
  EXPECT_EQ(model->id(), "test-model");
}

TEST(Catalog, ParseErrorNamesFileLineAndColumn) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  dir.Write("hardware/test-gpu-24gb.txtpb", R"(# proto-file: capplan/v1/catalog.proto
# proto-message: Hardware
id: "test-gpu-24gb"
vendr: "Test"
)");
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  EXPECT_THAT(catalog,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("hardware/test-gpu-24gb.txtpb:4:6:"), HasSubstr("vendr"))));
}

TEST(Catalog, ValidationErrorPointsAtTheField) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  dir.Write("baselines/test-baseline.txtpb", R"(# proto-file: capplan/v1/catalog.proto
# proto-message: Baseline
id: "test-baseline"
provenance { source_document: "x" }
deployment {
  hardware_id: "test-gpu-24gb"
  model_id: "test-model"
  gpu_count: 1
  engine { gpu_memory_utilization: 1.5 }
}
)");
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  EXPECT_THAT(catalog, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("baselines/test-baseline.txtpb:9:12: "
                                          "deployment.engine.gpu_memory_utilization = 1.5; must "
                                          "be in (0, 1]")));
}

TEST(Catalog, UnknownReferenceIsAnError) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  dir.Write("baselines/other.txtpb", R"(# proto-file: capplan/v1/catalog.proto
# proto-message: Baseline
id: "other"
provenance { source_document: "x" }
deployment { hardware_id: "no-such-gpu" model_id: "test-model" gpu_count: 1 }
)");
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  EXPECT_THAT(catalog, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("baselines/other.txtpb: deployment.hardware_id = "
                                          "\"no-such-gpu\"; must name a hardware entry")));
}

TEST(Catalog, IdMustMatchFileName) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  std::ifstream original(dir.path() / "models/test-model.txtpb");
  std::stringstream text;
  text << original.rdbuf();
  dir.Write("models/renamed.txtpb", text.str());
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  EXPECT_THAT(catalog, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("models/renamed.txtpb:1:1: id = \"test-model\"; must "
                                          "equal the file name")));
}

TEST(Catalog, WrongHeaderMessageIsAnError) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  dir.Write("models/x.txtpb",
            "# proto-file: capplan/v1/catalog.proto\n"
            "# proto-message: Hardware\nid: \"x\"\n");
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  EXPECT_THAT(catalog, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("models/x.txtpb:2:3: header names message 'Hardware'")));
}

TEST(Catalog, DuplicateRepoIdIsAnError) {
  TempDir dir;
  WriteMiniCatalogue(dir);
  std::string copy = R"(# proto-file: capplan/v1/catalog.proto
# proto-message: Model
id: "test-model-copy"
aliases: "TEST/test-model-1b"
hidden_size: 2048
intermediate_size: 8192
num_attention_heads: 16
num_kv_heads: 4
vocab_size: 32000
layer_blocks { repeat: 1 layers { count: 2 attention: ATTENTION_KIND_FULL mlp: MLP_KIND_DENSE } }
native_context_tokens: 8192
native_dtype: NUMBER_FORMAT_BF16
sources { fields: "hidden_size" fields: "intermediate_size" fields: "num_attention_heads"
          fields: "num_kv_heads" fields: "vocab_size" fields: "layer_blocks"
          fields: "native_context_tokens" document: "x" }
)";
  dir.Write("models/test-model-copy.txtpb", copy);
  auto catalog = Catalog::LoadFromDirectory(dir.path().string());
  EXPECT_THAT(catalog, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("aliases = \"test/test-model-1b\"; must be unique")));
}

TEST(Catalog, MissingDirectoryIsNotFound) {
  auto catalog = Catalog::LoadFromDirectory("/nonexistent/capplan/data");
  EXPECT_THAT(catalog, StatusIs(absl::StatusCode::kNotFound,
                                HasSubstr("catalogue directory '/nonexistent/capplan/data' does "
                                          "not exist")));
}

}  // namespace
}  // namespace capplan::service
