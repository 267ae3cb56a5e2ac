#include "base/digits.h"

#include "gtest/gtest.h"

namespace capplan {
namespace {

TEST(GroupThousands, CommaBeforeEveryGroupOfThreeFromTheRight) {
  EXPECT_EQ(GroupThousands("0"), "0");
  EXPECT_EQ(GroupThousands("999"), "999");
  EXPECT_EQ(GroupThousands("1000"), "1,000");
  EXPECT_EQ(GroupThousands("442416"), "442,416");
  EXPECT_EQ(GroupThousands("1234567"), "1,234,567");
}

TEST(GroupThousands, TheSignIsNotADigit) {
  EXPECT_EQ(GroupThousands("-123"), "-123");
  EXPECT_EQ(GroupThousands("-1234"), "-1,234");
  EXPECT_EQ(GroupThousands(""), "");
}

}  // namespace
}  // namespace capplan
