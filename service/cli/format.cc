#include "service/cli/format.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "base/digits.h"
#include "google/protobuf/util/json_util.h"

namespace capplan::service {
namespace {

bool LooksNumeric(const std::string& cell) {
  if (cell.empty() || cell == "-") return true;
  for (char c : cell) {
    if (!(std::isdigit(static_cast<unsigned char>(c)) || c == '.' || c == ',' || c == '-' ||
          c == '+' || c == 'e' || c == '%' || c == 'x')) {
      return false;
    }
  }
  return true;
}

// Display width: UTF-8 code points (continuation bytes take no column).
size_t Width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

}  // namespace

TextTable::TextTable(std::vector<std::string> header) : header_(std::move(header)) {}

void TextTable::AddRow(std::vector<std::string> cells) {
  cells.resize(header_.size());
  rows_.push_back(std::move(cells));
}

void TextTable::Print(std::ostream& out) const {
  std::vector<size_t> width(header_.size());
  std::vector<bool> numeric(header_.size(), true);
  for (size_t c = 0; c < header_.size(); ++c) {
    width[c] = Width(header_[c]);
    for (const auto& row : rows_) {
      width[c] = std::max(width[c], Width(row[c]));
      numeric[c] = numeric[c] && LooksNumeric(row[c]);
    }
  }
  auto print_row = [&](const std::vector<std::string>& cells) {
    std::string line;
    for (size_t c = 0; c < cells.size(); ++c) {
      std::string pad(width[c] - Width(cells[c]), ' ');
      line += numeric[c] ? pad + cells[c] : cells[c] + pad;
      if (c + 1 < cells.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out << line << "\n";
  };
  print_row(header_);
  for (const auto& row : rows_) print_row(row);
}

absl::StatusOr<std::string> ToJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.preserve_proto_field_names = true;
  std::string json;
  auto status = google::protobuf::util::MessageToJsonString(message, &json, options);
  if (!status.ok()) {
    return absl::InternalError(absl::StrFormat("cannot print JSON: %s", status.ToString()));
  }
  return json;
}

std::string FormatGiB(double bytes) {
  if (!(bytes > 0)) return "-";
  return absl::StrFormat("%.2f", bytes / (1024.0 * 1024.0 * 1024.0));
}

std::string FormatScaled(double value, double scale, int decimals) {
  if (!(value > 0)) return "-";
  return absl::StrFormat("%.*f", decimals, value / scale);
}

std::string FormatCount(double value) {
  if (!std::isfinite(value)) return "-";
  return GroupThousands(absl::StrFormat("%.0f", value));
}

std::string Plural(int64_t count, const std::string& one, const std::string& many) {
  return absl::StrCat(FormatCount(static_cast<double>(count)), " ", count == 1 ? one : many);
}

std::string VendorAndName(const std::string& vendor, const std::string& name) {
  if (vendor.empty() || absl::StartsWithIgnoreCase(name, vendor)) return name;
  return absl::StrCat(vendor, " ", name);
}

}  // namespace capplan::service
