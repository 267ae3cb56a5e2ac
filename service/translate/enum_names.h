#ifndef CAPPLAN_SERVICE_TRANSLATE_ENUM_NAMES_H_
#define CAPPLAN_SERVICE_TRANSLATE_ENUM_NAMES_H_

// The names users type for the catalogue's enums (CLI flags, launch lines,
// ingest files): "awq" → WEIGHT_FORMAT_INT4_AWQ, "sglang" → ENGINE_KIND_SGLANG.
// One table per enum; errors read "<field> = <text>; must be one of <names>".

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "capplan/v1/catalog.pb.h"
#include "capplan/v1/planner.pb.h"

namespace capplan::service {

absl::StatusOr<v1::WeightFormat> WeightFormatFromName(absl::string_view field,
                                                      absl::string_view text);
absl::StatusOr<v1::EngineKind> EngineKindFromName(absl::string_view field, absl::string_view text);
absl::StatusOr<v1::KvCacheDtype> KvCacheDtypeFromName(absl::string_view field,
                                                      absl::string_view text);
absl::StatusOr<v1::SpeculativeMethod> SpeculativeMethodFromName(absl::string_view field,
                                                                absl::string_view text);
absl::StatusOr<v1::SamplerBackend> SamplerBackendFromName(absl::string_view field,
                                                          absl::string_view text);

// The value's name without its enum prefix, as people read it:
// MEMORY_BINDING_WEIGHTS → "WEIGHTS", LOAD_BINDING_SLOT_WAIT → "SLOT_WAIT".
std::string ShortName(v1::MemoryBinding value);
std::string ShortName(v1::LoadBinding value);
std::string ShortName(v1::SlotBound value);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_TRANSLATE_ENUM_NAMES_H_
