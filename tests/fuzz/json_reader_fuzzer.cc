// Bytes -> the JSON object reader every JSON input goes through (config.json,
// benchmark outputs) and the value printer its error messages use.
#include <cstddef>
#include <cstdint>

#include "service/translate/json_reader.h"
#include "tests/fuzz/fuzz_common.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<google::protobuf::Struct> object = capplan::service::ParseJsonObject(
      "fuzz.json", capplan::fuzz::Bytes(data, size), size_t{1} << 20);
  if (!object.ok()) return 0;
  for (const auto& [key, value] : object->fields()) {
    (void)capplan::service::ShowJsonValue(value);
  }
  return 0;
}
