// One entity from a file's text: the catalogue's own files and the cards
// users hand over (--hardware-file), parsed and validated with every error
// placed in the file.
#ifndef CAPPLAN_SERVICE_CATALOG_ENTITY_TEXT_H_
#define CAPPLAN_SERVICE_CATALOG_ENTITY_TEXT_H_

#include <string>

#include "absl/status/status.h"
#include "google/protobuf/message.h"
#include "service/catalog/catalog_validator.h"

namespace capplan::service {

// Parses `text` in text format into `message`, checks its structure
// (CheckEntityStructure: UTF-8, duplicates) and validates it under `rules`
// (ValidateEntity). INVALID_ARGUMENT "<display>:<line>:<column>: <message>" for a parse
// error; each validation finding on its own line, at its field's location
// ("card.txtpb:7:1: memory_bandwidth_bytes_per_second = -1; must be > 0").
absl::Status ParseTextEntity(const std::string& display, const std::string& text,
                             const ValidationRules& rules, google::protobuf::Message* message);

// The same for a file that may be text format or proto3 JSON: JSON when the
// name ends in .json, text format when it ends in .txtpb, .textproto, .pbtxt
// or .prototxt, otherwise JSON when the first non-blank character is '{'.
// JSON errors read "<display>:<line>:<column>: ..." too: a syntax error at its
// byte, a refused or invalid field at its key (LocateJsonKey: the key as
// written, since the JSON parser keeps no locations).
absl::Status ParseEntityFile(const std::string& display, const std::string& text,
                             const ValidationRules& rules, google::protobuf::Message* message);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CATALOG_ENTITY_TEXT_H_
