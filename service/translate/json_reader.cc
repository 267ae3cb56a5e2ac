#include "service/translate/json_reader.h"

#include <cmath>

#include "google/protobuf/util/json_util.h"

namespace capplan::service {

using google::protobuf::ListValue;
using google::protobuf::Struct;
using google::protobuf::Value;

std::string ShowJsonValue(const Value& v) {
  switch (v.kind_case()) {
    case Value::kNumberValue: {
      const double x = v.number_value();
      if (std::isfinite(x) && std::floor(x) == x && std::fabs(x) < 1e15) {
        return absl::StrCat(static_cast<int64_t>(x));
      }
      return absl::StrCat(x);
    }
    case Value::kStringValue:
      return absl::StrCat("\"", v.string_value().substr(0, 80), "\"");
    case Value::kBoolValue:
      return v.bool_value() ? "true" : "false";
    case Value::kListValue:
      return "[...]";
    case Value::kStructValue:
      return "{...}";
    default:
      return "null";
  }
}

absl::StatusOr<Struct> ParseJsonObject(absl::string_view document, absl::string_view text,
                                       size_t max_bytes) {
  if (text.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat(document, ": size = ", text.size(), " bytes; must be at most ", max_bytes));
  }
  Struct root;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;
  const auto parsed =
      google::protobuf::util::JsonStringToMessage(std::string(text), &root, options);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(document, ": not a JSON object: ", std::string(parsed.message())));
  }
  return root;
}

const Value* JsonReader::Find(absl::string_view key) const {
  auto it = s_.fields().find(std::string(key));
  if (it == s_.fields().end() || it->second.kind_case() == Value::kNullValue) return nullptr;
  return &it->second;
}

absl::Status JsonReader::Error(absl::string_view key, const Value& v,
                               absl::string_view rule) const {
  return absl::InvalidArgumentError(
      absl::StrCat(document_, ": ", Path(key), " = ", ShowJsonValue(v), "; ", rule));
}

absl::Status JsonReader::Missing(absl::string_view key, absl::string_view why) const {
  return absl::InvalidArgumentError(absl::StrCat(document_, ": ", Path(key), " is missing; ", why));
}

absl::StatusOr<std::optional<int64_t>> JsonReader::OptInt(absl::string_view key,
                                                          int64_t min) const {
  const Value* v = Find(key);
  if (v == nullptr) return std::optional<int64_t>();
  if (v->kind_case() != Value::kNumberValue || !std::isfinite(v->number_value()) ||
      std::floor(v->number_value()) != v->number_value()) {
    return Error(key, *v, "must be an integer");
  }
  const double x = v->number_value();
  if (x < static_cast<double>(min)) {
    return Error(key, *v, min == 1 ? "must be positive" : absl::StrCat("must be at least ", min));
  }
  if (x > static_cast<double>(max_integer_)) {
    return Error(key, *v, absl::StrCat("must be at most ", max_integer_));
  }
  return std::optional<int64_t>(static_cast<int64_t>(x));
}

absl::StatusOr<int64_t> JsonReader::Int(absl::string_view key, int64_t min,
                                        int64_t fallback) const {
  absl::StatusOr<std::optional<int64_t>> v = OptInt(key, min);
  if (!v.ok()) return v.status();
  return v->value_or(fallback);
}

absl::StatusOr<int64_t> JsonReader::RequiredInt(absl::string_view key, int64_t min,
                                                absl::string_view why) const {
  absl::StatusOr<std::optional<int64_t>> v = OptInt(key, min);
  if (!v.ok()) return v.status();
  if (!v->has_value()) return Missing(key, why);
  return **v;
}

absl::StatusOr<std::optional<double>> JsonReader::OptDouble(absl::string_view key) const {
  const Value* v = Find(key);
  if (v == nullptr) return std::optional<double>();
  if (v->kind_case() != Value::kNumberValue || !std::isfinite(v->number_value())) {
    return Error(key, *v, "must be a number");
  }
  return std::optional<double>(v->number_value());
}

absl::StatusOr<double> JsonReader::Double(absl::string_view key, double fallback) const {
  absl::StatusOr<std::optional<double>> v = OptDouble(key);
  if (!v.ok()) return v.status();
  return v->value_or(fallback);
}

absl::StatusOr<bool> JsonReader::Bool(absl::string_view key, bool fallback) const {
  const Value* v = Find(key);
  if (v == nullptr) return fallback;
  if (v->kind_case() != Value::kBoolValue) return Error(key, *v, "must be true or false");
  return v->bool_value();
}

absl::StatusOr<std::string> JsonReader::String(absl::string_view key, std::string fallback) const {
  const Value* v = Find(key);
  if (v == nullptr) return fallback;
  if (v->kind_case() != Value::kStringValue) return Error(key, *v, "must be a string");
  return v->string_value();
}

absl::StatusOr<const ListValue*> JsonReader::List(absl::string_view key) const {
  const Value* v = Find(key);
  if (v == nullptr) return static_cast<const ListValue*>(nullptr);
  if (v->kind_case() != Value::kListValue) return Error(key, *v, "must be a list");
  return &v->list_value();
}

absl::StatusOr<const Struct*> JsonReader::Object(absl::string_view key) const {
  const Value* v = Find(key);
  if (v == nullptr) return static_cast<const Struct*>(nullptr);
  if (v->kind_case() != Value::kStructValue) return Error(key, *v, "must be an object");
  return &v->struct_value();
}

}  // namespace capplan::service
