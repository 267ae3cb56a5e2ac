// Positions in a JSON text, for error messages that point into a user's file
// (protobuf's JSON parser reports none).
#ifndef CAPPLAN_SERVICE_CATALOG_JSON_LOCATE_H_
#define CAPPLAN_SERVICE_CATALOG_JSON_LOCATE_H_

#include <cstddef>
#include <optional>

#include "absl/strings/string_view.h"
#include "service/catalog/catalog_validator.h"

namespace capplan::service {

// The byte offset of the first syntax error of `text` as one JSON value (RFC
// 8259, nesting at most 64 deep), or nullopt when it is well-formed.
std::optional<size_t> JsonSyntaxErrorOffset(absl::string_view text);

// Where the key of a field path ("peak_compute[1].dense_flops_per_second")
// is written: the key's (index + 1)-th occurrence for a path through a list,
// under its proto name or its lowerCamelCase JSON name. 1:1 when not found.
Location LocateJsonKey(absl::string_view text, absl::string_view field_path);

// 1-based line and column of a byte offset.
Location LocationOfOffset(absl::string_view text, size_t offset);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CATALOG_JSON_LOCATE_H_
