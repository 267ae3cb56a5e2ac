#ifndef CAPPLAN_SERVICE_CATALOG_CATALOG_VALIDATOR_H_
#define CAPPLAN_SERVICE_CATALOG_CATALOG_VALIDATOR_H_

#include <string>
#include <vector>

#include "google/protobuf/message.h"
#include "google/protobuf/text_format.h"

namespace capplan::service {

// One rule an entity breaks: the field path ("deployment.gpu_count",
// "sweeps[0].rows[3].ttft.p95_seconds") and "<path> = <value>; <rule>".
struct Finding {
  std::string field_path;
  std::string message;
};

// What ValidateEntity asks of an entity beyond its ranges and required fields.
struct ValidationRules {
  // Every numeric figure that is set must be named by some citation. On for
  // the catalogue's files; off for a card a request or a user's file gives
  // inline (Deployment.hardware, --hardware-file), whose citations are
  // optional but, when given, must still name a document.
  bool require_citations = true;
};

// Checks one catalogue entity (Hardware, Model, Baseline, EnginePreset) on its
// own: id form, required fields, ranges, units, citations. Cross-references
// between entities are checked by Catalog.
std::vector<Finding> ValidateEntity(const google::protobuf::Message& entity,
                                    const ValidationRules& rules = {});

// 1-based line and column of a field in the parsed text; the deepest located
// ancestor when the field itself was not written (1:1 at worst).
struct Location {
  int line = 1;
  int column = 1;
};
Location LocateField(const google::protobuf::Message& entity,
                     const google::protobuf::TextFormat::ParseInfoTree& tree,
                     const std::string& field_path);

// True for lowercase kebab-case ids; dots are allowed inside version-like
// parts ("qwen2.5-7b-instruct").
bool IsValidId(const std::string& id);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CATALOG_CATALOG_VALIDATOR_H_
