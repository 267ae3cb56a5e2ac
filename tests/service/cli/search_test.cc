#include "service/cli/search.h"

#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "service/cli/svg_plot.h"
#include "tests/test_common/cli_runner.h"
#include "tests/test_common/test_catalog.h"

namespace capplan::service {
namespace {

using ::capplan::testing::RunCapplan;
using ::testing::HasSubstr;

std::vector<std::string> Search(std::vector<std::string> extra) {
  std::vector<std::string> args = {"search",
                                   "--model",
                                   "llama-3.1-70b-instruct",
                                   "--input-tokens",
                                   "1000",
                                   "--output-tokens",
                                   "200",
                                   "--target-users",
                                   "200",
                                   "--ttft-p95",
                                   "1",
                                   "--tpot",
                                   "0.05",
                                   "--gpus",
                                   "nvidia-h100-sxm-80gb"};
  args.insert(args.end(), extra.begin(), extra.end());
  return args;
}

TEST(SearchCommand, JsonHoldsTheFrontsAndTheSvgDrawsThem) {
  testing::TempDir dir;
  const std::string svg = (dir.path() / "front.svg").string();
  testing::CliResult r = RunCapplan(Search({"--engines", "vllm", "--json", "--svg", svg}));
  ASSERT_EQ(r.code, 0) << r.err;
  v1::SearchConfigsResponse response;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(r.out, &response).ok()) << r.out;
  ASSERT_FALSE(response.cost_front().empty());
  for (const v1::SearchCandidate& c : response.top()) {
    EXPECT_EQ(c.deployment().hardware_id(), "nvidia-h100-sxm-80gb");
    EXPECT_EQ(c.deployment().engine().kind(), v1::ENGINE_KIND_VLLM);
    EXPECT_THAT(c.launch_line(), ::testing::StartsWith("vllm serve "));
  }
  std::ifstream file(svg);
  std::stringstream text;
  text << file.rdbuf();
  EXPECT_THAT(text.str(), HasSubstr("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(text.str(), HasSubstr("cost per million output tokens (USD)"));
  EXPECT_THAT(text.str(), HasSubstr("nvidia-h100-sxm-80gb"));
}

TEST(SearchCommand, TablePrintsRefusalsFrontsAndLaunchLines) {
  testing::CliResult r = RunCapplan(Search({"--engines", "sglang", "--top-k", "3"}));
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("evaluated exactly"));
  EXPECT_THAT(r.out, HasSubstr("REFUSED"));
  EXPECT_THAT(r.out, HasSubstr("$/M OUT TOK"));
  EXPECT_THAT(r.out, HasSubstr("cost front"));
  EXPECT_THAT(r.out, HasSubstr("#1 python -m sglang.launch_server"));
}

struct FlagCase {
  std::string name;
  std::vector<std::string> extra;
  std::string flag;
};
void PrintTo(const FlagCase& c, std::ostream* os) { *os << c.name; }

class SearchFlagErrors : public ::testing::TestWithParam<FlagCase> {};

TEST_P(SearchFlagErrors, ExitTwoNamingTheFlag) {
  testing::CliResult r = RunCapplan(Search(GetParam().extra));
  EXPECT_EQ(r.code, 2);
  EXPECT_THAT(r.err, HasSubstr(GetParam().flag));
}

INSTANTIATE_TEST_SUITE_P(
    Flags, SearchFlagErrors,
    ::testing::Values(FlagCase{"PriceWithoutValue", {"--price", "nvidia-h100-sxm-80gb"}, "--price"},
                      FlagCase{"UnknownEngine", {"--engines", "tgi"}, "--engines"},
                      FlagCase{"UnknownObjective", {"--objective", "fast"}, "--objective"},
                      FlagCase{"NonNumericSeqs", {"--max-num-seqs", "64,zero"}, "--max-num-seqs"},
                      FlagCase{
                          "UnknownWeightFormat", {"--weight-formats", "int3"}, "--weight-formats"},
                      FlagCase{"TwoTargets", {"--target-rps", "3"}, "exclude each other"},
                      FlagCase{"TooManyGpusPerReplica",
                               {"--max-gpus-per-replica", "65"},
                               "SearchConfigsRequest.constraints.max_gpus_per_replica = 65"}),
    [](const ::testing::TestParamInfo<FlagCase>& info) { return info.param.name; });

}  // namespace
}  // namespace capplan::service
