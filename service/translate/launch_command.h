#ifndef CAPPLAN_SERVICE_TRANSLATE_LAUNCH_COMMAND_H_
#define CAPPLAN_SERVICE_TRANSLATE_LAUNCH_COMMAND_H_

// The other direction of launch_line.h: the engine command that starts a
// resolved deployment, as an operator would type it. vLLM:
//   vllm serve REPO --tensor-parallel-size T [--pipeline-parallel-size P]
//     [--enable-expert-parallel] --max-model-len L --max-num-seqs S
//     [--kv-cache-dtype fp8] [--quantization fp8|awq|gptq|...] ...
// SGLang:
//   python -m sglang.launch_server --model-path REPO --tp T [--pp-size P]
//     [--ep-size E] --context-length L --max-running-requests S ...
// Only what the deployment sets beyond the engine's defaults is written, and
// ParseLaunchLine reads the line back into the same deployment knobs.

#include <string>
#include <vector>

#include "service/translate/deployment_resolver.h"

namespace capplan::service {

struct LaunchCommand {
  std::string line;
  // What the line alone cannot carry: a pre-quantized checkpoint needed for
  // the weight format, the GPUs and nodes it runs on.
  std::vector<std::string> notes;
};

// The command for `resolved` (its merged engine configuration, parallelism
// and effective weight format). TensorRT-LLM is written as trtllm-serve.
LaunchCommand FormatLaunchCommand(const ResolvedDeployment& resolved);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_TRANSLATE_LAUNCH_COMMAND_H_
