#ifndef CAPPLAN_SERVICE_TRANSLATE_JSON_READER_H_
#define CAPPLAN_SERVICE_TRANSLATE_JSON_READER_H_

// Typed reading of the keys of one JSON object (parsed into a
// google.protobuf.Struct), for the files users hand over: config.json and
// benchmark outputs. Errors name the document, the key path, the value as
// written (shortened) and the rule: "config.json: num_key_value_heads = 0;
// must be positive".

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "google/protobuf/struct.pb.h"

namespace capplan::service {

// A JSON value as an error message shows it: numbers as written, strings
// quoted and cut to 80 characters, lists and objects elided.
std::string ShowJsonValue(const google::protobuf::Value& v);

// Parses `text` (at most `max_bytes`) as one JSON object. INVALID_ARGUMENT
// "<document>: not a JSON object: <parser message>", or naming the size.
absl::StatusOr<google::protobuf::Struct> ParseJsonObject(absl::string_view document,
                                                         absl::string_view text, size_t max_bytes);

class JsonReader {
 public:
  // Integers land in 32-bit proto fields unless a caller says otherwise.
  static constexpr int64_t kDefaultMaxInteger = std::numeric_limits<uint32_t>::max();

  // `document` names the file in messages ("config.json"); `prefix` is the
  // key path of this object ("quantization_config.").
  JsonReader(const google::protobuf::Struct& s, std::string document, std::string prefix,
             int64_t max_integer = kDefaultMaxInteger)
      : s_(s),
        document_(std::move(document)),
        prefix_(std::move(prefix)),
        max_integer_(max_integer) {}

  std::string Path(absl::string_view key) const { return absl::StrCat(prefix_, key); }
  const std::string& document() const { return document_; }
  const std::string& prefix() const { return prefix_; }

  // nullptr when absent or null.
  const google::protobuf::Value* Find(absl::string_view key) const;
  bool Has(absl::string_view key) const { return Find(key) != nullptr; }

  absl::Status Error(absl::string_view key, const google::protobuf::Value& v,
                     absl::string_view rule) const;
  absl::Status Missing(absl::string_view key, absl::string_view why) const;

  // Integer >= min (and <= max_integer), or nullopt when absent.
  absl::StatusOr<std::optional<int64_t>> OptInt(absl::string_view key, int64_t min) const;
  absl::StatusOr<int64_t> Int(absl::string_view key, int64_t min, int64_t fallback) const;
  absl::StatusOr<int64_t> RequiredInt(absl::string_view key, int64_t min,
                                      absl::string_view why) const;
  // A finite number, or nullopt when absent.
  absl::StatusOr<std::optional<double>> OptDouble(absl::string_view key) const;
  absl::StatusOr<double> Double(absl::string_view key, double fallback) const;
  absl::StatusOr<bool> Bool(absl::string_view key, bool fallback) const;
  absl::StatusOr<std::string> String(absl::string_view key, std::string fallback) const;
  // nullptr when absent.
  absl::StatusOr<const google::protobuf::ListValue*> List(absl::string_view key) const;
  absl::StatusOr<const google::protobuf::Struct*> Object(absl::string_view key) const;

 private:
  const google::protobuf::Struct& s_;
  std::string document_;
  std::string prefix_;
  int64_t max_integer_;
};

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_TRANSLATE_JSON_READER_H_
