#ifndef CAPPLAN_SERVICE_TRANSLATE_LAUNCH_LINE_H_
#define CAPPLAN_SERVICE_TRANSLATE_LAUNCH_LINE_H_

// Reads an engine launch line — what an operator types to start vLLM,
// SGLang or TensorRT-LLM — into the API Deployment it describes, so `capplan validate
// --launch '…'` can check the configuration the engine would actually run.
//
// Accepted commands (the first command of the line; `|`, `;`, `&&` and
// redirections end it):
//   vllm serve MODEL [flags]                       (also vllm serve --model MODEL)
//   python[3] -m vllm.entrypoints.openai.api_server --model MODEL [flags]
//   python[3] -m sglang.launch_server --model-path MODEL [flags]
//   trtllm-serve [serve] MODEL [flags]              (TensorRT-LLM)
// preceded by any number of environment assignments (CUDA_VISIBLE_DEVICES=0,1)
// and the prefixes `env`, `nohup`, `exec`.
//
// Words are split as a POSIX shell would: single quotes, double quotes,
// backslash escapes and backslash-newline continuations.
//
// Flags carry the engines' own names (vLLM: vllm/engine/arg_utils.py,
// SGLang: python/sglang/srt/server_args.py), in `--flag value` and
// `--flag=value` forms; vLLM's `--no-flag` negations of boolean flags and its
// underscore spellings (`--max_model_len`) are accepted, as vLLM's
// FlexibleArgumentParser accepts them. Flags that change nothing in a
// capacity plan (--host, --port, --served-model-name, --trust-remote-code)
// are listed in `ignored_flags`; flags capplan does not model are kept
// verbatim in `unmodelled_flags` so Validate can report them.
//
// How engine flags become Deployment fields:
//   vLLM --tensor-parallel-size/-tp, --pipeline-parallel-size/-pp → tp, pp
//   vLLM --data-parallel-size/-dp N → gpu_count = tp × pp × N
//   vLLM --enable-expert-parallel → ep = tp × dp (vLLM's EP group spans
//        TP × DP ranks); --no-enable-expert-parallel → ep = 1
//   SGLang --tp/--tp-size/--tensor-parallel-size, --pp-size → tp, pp
//   SGLang --ep/--ep-size/--expert-parallel-size → ep; --enable-ep-moe → ep = tp
//   SGLang --enable-dp-attention → dp_attention (DP inside the TP group);
//        --dp/--dp-size N without it → gpu_count = tp × pp × N (replicas)
//   --max-model-len / --context-length → max_model_len ("32k", "32K" forms
//        accepted for vLLM: k = 1000, K = 1024, as vLLM parses them)
//   --gpu-memory-utilization / --mem-fraction-static, fractions in (0, 1]
//   --max-num-batched-tokens / --chunked-prefill-size (-1 = chunking off:
//        left unset and reported as unmodelled)
//   --max-num-seqs / --max-running-requests, --block-size / --page-size
//   --enforce-eager / --disable-cuda-graph → enforce_eager
//   --max-cudagraph-capture-size, --cuda-graph-sizes and
//        --cudagraph-capture-sizes (largest), --compilation-config / -O JSON
//        (cudagraph_capture_sizes, max_cudagraph_capture_size, and
//        cudagraph_mode NONE → enforce_eager; dotted -O.key=value too),
//        SGLang --cuda-graph-max-bs, --cuda-graph-bs (largest)
//        → max_cudagraph_batch_size
//   --kv-cache-dtype: auto → AUTO, fp8* → FP8, bf16/bfloat16 → BF16,
//        fp16/float16/half → FP16
//   --quantization/-q: the engine's method name → weight_format (awq,
//        awq_marlin → INT4_AWQ; gptq, gptq_marlin, marlin → INT4_GPTQ; fp8 →
//        FP8_PER_TENSOR; fbgemm_fp8, ptpc_fp8, w8a8_fp8 → FP8_PER_CHANNEL;
//        w8a8_int8, experts_int8 → INT8; modelopt_fp4 → NVFP4; mxfp4; moe_wna16);
//        methods that defer to the checkpoint (compressed-tensors, modelopt)
//        leave weight_format unset and are listed as unmodelled.
//   vLLM --speculative-config JSON {method, model, num_speculative_tokens}
//        (and its dotted form --speculative-config.method mtp), older
//        --speculative-model / --num-speculative-tokens; SGLang
//        --speculative-algorithm EAGLE/EAGLE3 → EAGLE, NEXTN/MTP → MTP,
//        STANDALONE → DRAFT_MODEL, NGRAM/LOOKAHEAD → NGRAM, with
//        num_speculative_tokens = --speculative-num-steps, or
//        --speculative-num-draft-tokens − 1 when only that is given (SGLang
//        sets draft tokens = steps + 1 for a top-1 chain); the counts without
//        an algorithm are ignored, as SGLang ignores them, and listed as
//        unmodelled.
//   TensorRT-LLM (trtllm-serve; options with underscores or dashes):
//        --tp_size, --pp_size, --ep_size → tp, pp, ep; --max_seq_len →
//        max_model_len; --max_batch_size → max_num_seqs; --max_num_tokens →
//        max_num_batched_tokens; --kv_cache_free_gpu_memory_fraction →
//        kv_cache_free_gpu_memory_fraction; --backend and
//        --extra_llm_api_options are kept as unmodelled.
//   --dtype and prefix caching are returned in their own fields: they do not
//        override the checkpoint's weight format.
//
// Not read: vLLM's --config FILE (a YAML of flags; listed as unmodelled), the
// engine version (not on a launch line), and whether vLLM's -dp on a MoE model
// acts as attention data parallelism (vLLM runs attention per DP rank and the
// experts across TP × DP): dp_attention is set only by SGLang's flag.
//
// Errors are InvalidArgument naming the flag as written, its value and the
// rule: "--tensor-parallel-size = two; must be a whole number ≥ 1".

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "capplan/v1/planner.pb.h"

namespace capplan::service {

struct LaunchLine {
  // model_id = the model argument as given; engine.kind and the knobs the
  // line sets. hardware_id is never set (a launch line does not name it);
  // gpu_count only when data parallelism makes it differ from tp × pp.
  v1::Deployment deployment;
  // The model argument exactly as given: a Hugging Face repo id or a path.
  std::string model_argument;
  // Flags with no effect on capacity, verbatim ("--port 8000").
  std::vector<std::string> ignored_flags;
  // Flags capplan does not model, verbatim with their value
  // ("--swap-space 16", "--max-total-tokens 200000"), and stray words.
  std::vector<std::string> unmodelled_flags;
  // Leading environment assignments, verbatim ("CUDA_VISIBLE_DEVICES=0,1").
  std::vector<std::string> environment;
  // --dtype as given (auto, half, bfloat16, ...); unset when absent.
  std::optional<std::string> dtype;
  // vLLM --[no-]enable-prefix-caching; SGLang --disable-radix-cache → false.
  std::optional<bool> prefix_caching;
  // Data-parallel size when given (-dp / --dp-size).
  std::optional<uint32_t> data_parallel_size;
};

// The weight format an engine quantization method names, by the table
// --quantization is read with (awq → INT4_AWQ, fp8 → FP8_PER_TENSOR, …; any
// case); nullopt for the methods that defer to the checkpoint
// (compressed-tensors, modelopt) and for names capplan does not model.
std::optional<v1::WeightFormat> WeightFormatOfQuantizationMethod(absl::string_view method);

// Parses one launch line. InvalidArgument on anything it cannot read.
absl::StatusOr<LaunchLine> ParseLaunchLine(absl::string_view command_line);

// The words of the line's first command, split as a POSIX shell would
// (quotes, backslash escapes, continuations); an unquoted `|`, `||`, `&&`,
// `;` or `&` ends the command and redirections (`>log`, `2>&1`, `> log`) are
// dropped. InvalidArgument on an unterminated quote.
absl::StatusOr<std::vector<std::string>> SplitShellWords(absl::string_view command_line);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_TRANSLATE_LAUNCH_LINE_H_
