// Bytes -> one ingest parser (CAPPLAN_FUZZ_INGEST_FORMAT, an IngestFormat
// enumerator; kAuto runs the detection first) -> what ingest does with a
// parsed file: the runs combined into sweeps, an engine log's facts turned
// into catalogue messages.
#include <cstddef>
#include <cstdint>

#include "service/translate/ingest.h"
#include "tests/fuzz/fuzz_common.h"

#ifndef CAPPLAN_FUZZ_INGEST_FORMAT
#error "CAPPLAN_FUZZ_INGEST_FORMAT must name an IngestFormat enumerator"
#endif

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using capplan::service::IngestFormat;
  absl::StatusOr<capplan::service::IngestedFile> file = capplan::service::ParseMeasurementFile(
      "fuzz.input", capplan::fuzz::Bytes(data, size), IngestFormat::CAPPLAN_FUZZ_INGEST_FORMAT);
  capplan::fuzz::Report("parse", file.status());
  if (!file.ok()) return 0;
  if (file->engine_log.has_value()) {
    (void)capplan::service::EngineLogToCatalog(*file->engine_log);
  }
  (void)capplan::service::CombineMeasurements({*file});
  return 0;
}
