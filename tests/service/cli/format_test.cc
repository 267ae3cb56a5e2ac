#include "service/cli/format.h"

#include <sstream>

#include "capplan/v1/catalog.pb.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace capplan::service {
namespace {

using ::testing::HasSubstr;

TEST(TextTable, AlignsNumbersRightAndTextLeft) {
  TextTable table({"NAME", "SIZE (GiB)"});
  table.AddRow({"a", "1.00"});
  table.AddRow({"longer", "123.45"});
  std::ostringstream out;
  table.Print(out);
  EXPECT_EQ(out.str(),
            "NAME    SIZE (GiB)\n"
            "a             1.00\n"
            "longer      123.45\n");
}

TEST(Format, GiBCountsAndAbsentValues) {
  EXPECT_EQ(FormatGiB(1024.0 * 1024 * 1024 * 1.5), "1.50");
  EXPECT_EQ(FormatGiB(0), "-");
  EXPECT_EQ(FormatCount(531372), "531,372");
  EXPECT_EQ(FormatCount(999), "999");
  EXPECT_EQ(FormatCount(-1234567), "-1,234,567");
  EXPECT_EQ(FormatScaled(3.35e12, 1e12, 2), "3.35");
  EXPECT_EQ(FormatScaled(0, 1e12, 2), "-");
}

TEST(TextTable, CountsAUtf8CharacterAsOneColumn) {
  TextTable table({"A", "B"});
  table.AddRow({"tp × pp", "x"});
  table.AddRow({"gpus", "y"});
  std::ostringstream out;
  table.Print(out);
  EXPECT_EQ(out.str(),
            "A        B\n"
            "tp × pp  x\n"
            "gpus     y\n");
}

TEST(Plural, SingularForOneAndThousandsSeparators) {
  EXPECT_EQ(Plural(1, "replica", "replicas"), "1 replica");
  EXPECT_EQ(Plural(0, "replica", "replicas"), "0 replicas");
  EXPECT_EQ(Plural(4, "GPU", "GPUs"), "4 GPUs");
  EXPECT_EQ(Plural(1, "user", "users"), "1 user");
  EXPECT_EQ(Plural(4096, "user", "users"), "4,096 users");
}

TEST(VendorAndName, TheVendorOnceEvenWhenTheNameStartsWithIt) {
  EXPECT_EQ(VendorAndName("NVIDIA", "NVIDIA GeForce RTX 5090 32GB"),
            "NVIDIA GeForce RTX 5090 32GB");
  EXPECT_EQ(VendorAndName("AMD", "Instinct MI308X"), "AMD Instinct MI308X");
  EXPECT_EQ(VendorAndName("nvidia", "NVIDIA L4"), "NVIDIA L4");
  EXPECT_EQ(VendorAndName("", "Some Card"), "Some Card");
}

TEST(ToJson, KeepsSnakeCaseFieldNames) {
  v1::Hardware h;
  h.set_id("x");
  h.set_memory_bandwidth_bytes_per_second(2e12);
  auto json = ToJson(h);
  ASSERT_TRUE(json.ok());
  EXPECT_THAT(*json, HasSubstr("\"memory_bandwidth_bytes_per_second\": 2000000000000"));
}

}  // namespace
}  // namespace capplan::service
