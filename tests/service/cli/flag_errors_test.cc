#include "service/cli/flag_errors.h"

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace capplan::service {
namespace {

CliArgs Args(const std::vector<std::string>& args) {
  absl::StatusOr<CliArgs> parsed =
      CliArgs::Parse(args, {"json"}, {"gpus", "tp", "pp", "gpu", "model", "max-model-len"});
  EXPECT_TRUE(parsed.ok()) << parsed.status();
  return *parsed;
}

TEST(FlagForField, MapsRequestFieldsToTheirFlags) {
  EXPECT_EQ(FlagForField("deployment.gpu_count"), "gpus");
  EXPECT_EQ(FlagForField("deployment.parallelism.tp"), "tp");
  EXPECT_EQ(FlagForField("deployment.engine.max_model_len"), "max-model-len");
  EXPECT_EQ(FlagForField("slo.ttft_p95_seconds"), "ttft-p95");
  EXPECT_EQ(FlagForField("expected_load.concurrent_users"), "users");
  EXPECT_FALSE(FlagForField("deployment.engine").has_value());
}

TEST(InFlagTerms, AFieldTheUserSetByFlagIsNamedByTheFlag) {
  EXPECT_EQ(InFlagTerms("PlanRequest.deployment.gpu_count = 3; with no tp given ...: set "
                        "PlanRequest.deployment.parallelism.tp",
                        Args({"plan", "--gpus", "3"})),
            "--gpus 3; with no tp given ...: set --tp [PlanRequest.deployment.gpu_count, "
            "PlanRequest.deployment.parallelism.tp]");
  EXPECT_EQ(InFlagTerms("MemoryRequest.deployment.hardware_id = \"h100\"; not in the catalogue",
                        Args({"memory", "--gpu", "h100"})),
            "--gpu h100; not in the catalogue [MemoryRequest.deployment.hardware_id]");
}

TEST(InFlagTerms, AFieldTheUserDidNotSetStaysAField) {
  // The baseline set max_model_len, not a flag: the message keeps the field.
  const std::string message =
      "ValidateRequest.deployment.engine.max_model_len = 131072 exceeds the model's context";
  EXPECT_EQ(InFlagTerms(message, Args({"validate", "--gpu", "x"})), message);
  EXPECT_EQ(InFlagTerms("no fields here", Args({"plan"})), "no fields here");
}

TEST(InFlagTerms, RpcNamesBecomeTheCommandsThatRunThem) {
  EXPECT_EQ(
      InFlagTerms("model 'x' is not in the catalogue (ListModels lists the ids)", Args({"models"})),
      "model 'x' is not in the catalogue (capplan models list lists the ids)");
  // A request message's name is not the RPC.
  EXPECT_THAT(InFlagTerms("ListBaselinesRequest.model_id = \"x\"; no such model", Args({})),
              ::testing::StartsWith("ListBaselinesRequest.model_id"));
}

}  // namespace
}  // namespace capplan::service
