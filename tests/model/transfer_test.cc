#include "model/transfer.h"

#include "gtest/gtest.h"

namespace capplan::model {
namespace {

TEST(TransferRank, HardwareClassFirstThenModel) {
  const HardwareClass rtx4090{"nvidia-rtx-4090-24gb", "NVIDIA", "Ada Lovelace"};
  const HardwareClass l40s{"nvidia-l40s-48gb", "NVIDIA", "Ada Lovelace"};
  const HardwareClass rtx5090{"nvidia-rtx-5090-32gb", "NVIDIA", "Blackwell"};
  const HardwareClass mi300x{"amd-mi300x-192gb", "AMD", "CDNA3"};
  const int same_card = TransferRank(rtx4090, rtx4090, false);
  const int same_arch = TransferRank(rtx4090, l40s, false);
  const int same_vendor = TransferRank(rtx4090, rtx5090, false);
  const int other_vendor = TransferRank(rtx4090, mi300x, false);
  EXPECT_GT(same_card, same_arch);
  EXPECT_GT(same_arch, same_vendor);
  EXPECT_GT(same_vendor, other_vendor);
  // The model breaks ties within a class but does not cross classes.
  EXPECT_GT(TransferRank(rtx4090, rtx5090, true), same_vendor);
  EXPECT_LT(TransferRank(rtx4090, rtx5090, true), same_arch);
  EXPECT_LT(TransferRank(rtx4090, mi300x, true), same_vendor);
}

TEST(TransferRank, VendorAndArchitectureCompareCaseBlindAndEmptyNeverMatches) {
  EXPECT_EQ(TransferRank({"a", "nvidia", "hopper"}, {"b", "NVIDIA", "Hopper"}, false), 4);
  EXPECT_EQ(TransferRank({"a", "", ""}, {"b", "", ""}, false), 0);
  EXPECT_EQ(TransferRank({"", "x", ""}, {"", "y", ""}, false), 0);
}

TEST(TransferClassName, NamesEachClass) {
  EXPECT_STREQ(TransferClassName(7), "same card");
  EXPECT_STREQ(TransferClassName(4), "same architecture");
  EXPECT_STREQ(TransferClassName(3), "same vendor");
  EXPECT_STREQ(TransferClassName(1), "another vendor");
}

}  // namespace
}  // namespace capplan::model
