#include "model/transfer.h"

#include "absl/strings/ascii.h"

namespace capplan::model {
namespace {

bool Same(const std::string& a, const std::string& b) {
  return !a.empty() && absl::AsciiStrToLower(a) == absl::AsciiStrToLower(b);
}

}  // namespace

int TransferRank(const HardwareClass& target, const HardwareClass& candidate, bool same_model) {
  int hardware_class = 0;
  if (!target.id.empty() && target.id == candidate.id) {
    hardware_class = 3;
  } else if (Same(target.vendor, candidate.vendor) &&
             Same(target.architecture, candidate.architecture)) {
    hardware_class = 2;
  } else if (Same(target.vendor, candidate.vendor)) {
    hardware_class = 1;
  }
  return 2 * hardware_class + (same_model ? 1 : 0);
}

const char* TransferClassName(int rank) {
  switch (rank / 2) {
    case 3:
      return "same card";
    case 2:
      return "same architecture";
    case 1:
      return "same vendor";
    default:
      return "another vendor";
  }
}

}  // namespace capplan::model
