#ifndef CAPPLAN_SERVICE_CLI_FORMAT_H_
#define CAPPLAN_SERVICE_CLI_FORMAT_H_

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "google/protobuf/message.h"

namespace capplan::service {

// A plain-text table: a header row with units in the column names, then rows.
// Columns whose cells all look numeric are right-aligned.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header);
  void AddRow(std::vector<std::string> cells);
  void Print(std::ostream& out) const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

// Proto3 JSON with the original snake_case field names, indented.
absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message);

// Number formatting for tables; "-" when the value is absent (<= 0 for sizes).
std::string FormatGiB(double bytes);
std::string FormatScaled(double value, double scale, int decimals);
std::string FormatCount(double value);

// "1 replica", "4 replicas", "1,024 users": the count with thousands
// separators and the noun's singular or plural form.
std::string Plural(int64_t count, const std::string& one, const std::string& many);

// "NVIDIA GeForce RTX 5090" for vendor "NVIDIA" and a name that already
// starts with it; "AMD Instinct MI308X" for vendor "AMD" and name
// "Instinct MI308X".
std::string VendorAndName(const std::string& vendor, const std::string& name);

}  // namespace capplan::service

#endif  // CAPPLAN_SERVICE_CLI_FORMAT_H_
