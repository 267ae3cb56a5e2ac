#ifndef CAPPLAN_TESTS_FUZZ_FUZZ_COMMON_H_
#define CAPPLAN_TESTS_FUZZ_FUZZ_COMMON_H_

// Shared by the libFuzzer targets of tests/fuzz/: the bundled catalogue,
// loaded once per process, and the byte helpers.

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "service/catalog/catalog.h"

namespace capplan::fuzz {

// The catalogue in data/ of the source tree; the process ends when it does
// not load (every target needs it to reach past the first lookup).
inline const std::shared_ptr<const service::Catalog>& BundledCatalogue() {
  static const auto* const catalog = [] {
    auto loaded = service::Catalog::LoadFromDirectory(CAPPLAN_SOURCE_DIR "/data");
    if (!loaded.ok()) {
      std::cerr << "fuzz target: the bundled catalogue does not load: " << loaded.status() << "\n";
      std::abort();
    }
    return new std::shared_ptr<const service::Catalog>(*loaded);
  }();
  return *catalog;
}

// The first byte chooses among `choices` (0 when there is no byte); the rest
// is the payload.
struct Selected {
  size_t choice = 0;
  std::string payload;
};
inline Selected Select(const uint8_t* data, size_t size, size_t choices) {
  Selected s;
  if (size == 0) return s;
  s.choice = data[0] % choices;
  s.payload.assign(reinterpret_cast<const char*>(data + 1), size - 1);
  return s;
}

// CAPPLAN_FUZZ_VERBOSE=1 prints how each input ended (to check that the
// seeds reach past validation); silent otherwise.
inline void Report(const char* what, const absl::Status& status) {
  static const bool verbose = std::getenv("CAPPLAN_FUZZ_VERBOSE") != nullptr;
  if (verbose) std::cerr << what << ": " << status << "\n";
}

inline std::string Bytes(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace capplan::fuzz

#endif  // CAPPLAN_TESTS_FUZZ_FUZZ_COMMON_H_
