// Bytes -> the catalogue's text-proto loader (header check, TextFormat with
// positions, structure checks, per-kind validation) -> what a load builds
// from an entity (a model's architecture and parameter counts, a card's
// spec, an engine preset's behaviour). The first byte picks the entity kind;
// its high bit set hands the bytes over as they are, otherwise the
// "# proto-message:" header is put in front so the parser is reached.
#include <cstddef>
#include <cstdint>
#include <string>

#include "service/catalog/catalog.h"
#include "service/translate/model_info.h"
#include "service/translate/model_translation.h"
#include "tests/fuzz/fuzz_common.h"

namespace capplan::fuzz {
namespace {

template <typename T>
bool Parse(const Selected& s, bool raw, T* entity) {
  const std::string text =
      raw ? s.payload : "# proto-message: " + entity->GetDescriptor()->name() + "\n" + s.payload;
  absl::Status parsed = service::ParseCatalogText(text, "fuzz.txtpb", entity);
  Report(entity->GetDescriptor()->name().c_str(), parsed);
  return parsed.ok();
}

void Run(const uint8_t* data, size_t size) {
  Selected s = Select(data, size, 6);
  const bool raw = size > 0 && (data[0] & 0x80) != 0;
  if (size > 0) s.choice = (data[0] & 0x7f) % 6;
  switch (s.choice) {
    case 0: {
      v1::Hardware hardware;
      if (Parse(s, raw, &hardware)) (void)service::ToHardwareSpec(hardware);
      return;
    }
    case 1: {
      v1::Model model;
      if (Parse(s, raw, &model)) (void)service::DescribeModel(model);
      return;
    }
    case 2: {
      v1::Baseline baseline;
      (void)Parse(s, raw, &baseline);
      return;
    }
    case 3: {
      v1::EnginePreset preset;
      if (Parse(s, raw, &preset)) (void)service::ToEngineBehaviour(preset);
      return;
    }
    case 4: {
      v1::EfficiencyPrior prior;
      (void)Parse(s, raw, &prior);
      return;
    }
    default: {
      v1::KvStorageTierSpec tier;
      (void)Parse(s, raw, &tier);
      return;
    }
  }
}

}  // namespace
}  // namespace capplan::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  capplan::fuzz::Run(data, size);
  return 0;
}
