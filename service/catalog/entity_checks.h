#ifndef CAPPLAN_SERVICE_CATALOG_ENTITY_CHECKS_H_
#define CAPPLAN_SERVICE_CATALOG_ENTITY_CHECKS_H_

// Rules every stored entity obeys whatever its kind, checked over the whole
// message tree by reflection before the per-kind rules (catalog_validator.h).

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "google/protobuf/message.h"
#include "service/catalog/catalog_validator.h"

namespace capplan::service {

// At most this many findings are reported per entity (a file of a million
// duplicates gets a short message, not a million lines).
inline constexpr size_t kMaxStructureFindings = 10;

// Every string field (at any depth) holds valid UTF-8; no repeated field holds
// the same entry twice: repeated strings are unique, repeated messages with an
// `id` or `name` are unique by it, other repeated messages are not
// byte-for-byte copies of each other (except a model's layer stack, whose
// order is its meaning: the same layer kind comes many times). Findings name the field path:
//   aliases[1] = "A\xff"; must be valid UTF-8 (byte 2 is not)
//   sweeps[2].name = "s"; must be unique (sweeps[0] has it)
std::vector<Finding> CheckEntityStructure(const google::protobuf::Message& entity);

// The offset of the first byte that is not part of a well-formed UTF-8
// sequence (RFC 3629: no overlong forms, no surrogates, at most U+10FFFF),
// or npos when the whole text is valid.
size_t FirstInvalidUtf8(absl::string_view text);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CATALOG_ENTITY_CHECKS_H_
