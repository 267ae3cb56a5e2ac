// Which measured configuration a prediction borrows its step-time
// efficiencies from when none measured the requested one (DESIGN §4): the
// hardware class decides first (same card, then same architecture, then
// same vendor), the model second.
#ifndef CAPPLAN_MODEL_TRANSFER_H_
#define CAPPLAN_MODEL_TRANSFER_H_

#include <string>

namespace capplan::model {

// What the transfer rank compares of a card.
struct HardwareClass {
  std::string id;
  std::string vendor;
  std::string architecture;
};

// Higher is closer; candidates are tried in decreasing rank.
// 2 × (3 same card, 2 same vendor and architecture, 1 same vendor, 0) +
// (1 for the same model). Vendor and architecture compare case-blind;
// empty never matches.
int TransferRank(const HardwareClass& target, const HardwareClass& candidate, bool same_model);

// "same card", "same architecture", "same vendor", "another vendor".
const char* TransferClassName(int rank);

}  // namespace capplan::model

#endif  // CAPPLAN_MODEL_TRANSFER_H_
