// Bytes -> a Hugging Face config.json reader -> the Model it builds, checked
// like a catalogue entry and described (architecture, parameter counts), as
// PlanMemory does with a config.json a user hands over.
#include <cstddef>
#include <cstdint>

#include "service/catalog/catalog_validator.h"
#include "service/catalog/entity_checks.h"
#include "service/translate/hf_config.h"
#include "service/translate/model_info.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<capplan::v1::Model> model =
      capplan::service::ModelFromHfConfig(capplan::fuzz::Bytes(data, size));
  capplan::fuzz::Report("parse", model.status());
  if (!model.ok()) return 0;
  (void)capplan::service::CheckEntityStructure(*model);
  (void)capplan::service::ValidateEntity(*model);
  (void)capplan::service::DescribeModel(*model);
  return 0;
}
