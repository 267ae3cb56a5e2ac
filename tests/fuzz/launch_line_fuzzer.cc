// Bytes -> the engine launch-line parser (shell words, vLLM / SGLang /
// TensorRT-LLM flags) -> the deployment it describes resolved against the
// bundled catalogue on a fixed GPU, as Validate --launch does.
#include <cstddef>
#include <cstdint>

#include "service/translate/deployment_resolver.h"
#include "service/translate/launch_line.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text = capplan::fuzz::Bytes(data, size);
  (void)capplan::service::SplitShellWords(text);
  absl::StatusOr<capplan::service::LaunchLine> line = capplan::service::ParseLaunchLine(text);
  capplan::fuzz::Report("parse", line.status());
  if (!line.ok()) return 0;
  capplan::v1::Deployment deployment = line->deployment;
  deployment.set_hardware_id("nvidia-h100-sxm-80gb");
  capplan::fuzz::Report(
      "resolve", capplan::service::ResolveDeployment(*capplan::fuzz::BundledCatalogue(), deployment,
                                                     "ValidateRequest.deployment")
                     .status());
  return 0;
}
