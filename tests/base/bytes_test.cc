// Tests of the short-string comparisons (base/bytes.h): every result must
// be std::string_view's.
#include "base/bytes.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace btsim {
namespace {

// Strings that tie as long as possible: every string of up to 3 bytes over
// {0x00, 'a', 0xff} (zero bytes look like the zero padding of a word, 0xff
// checks that bytes compare unsigned), each after shared prefixes of 0 to
// 21 bytes, so that the strings end and differ on either side of each
// 8-byte word and of the 16-byte limit.
std::vector<std::string> TieHeavyStrings() {
  const std::string alphabet(
      "\x00"
      "a\xff",
      3);
  std::vector<std::string> tails = {""};
  for (size_t begin = 0, length = 1; length <= 3; ++length) {
    const size_t end = tails.size();
    for (size_t i = begin; i < end; ++i) {
      for (char c : alphabet) tails.push_back(tails[i] + c);
    }
    begin = end;
  }
  std::vector<std::string> out;
  for (size_t prefix : {0, 1, 5, 7, 8, 9, 13, 15, 16, 17, 21}) {
    for (const std::string& tail : tails) {
      out.push_back(std::string(prefix, 'k') + tail);
    }
  }
  return out;
}

int Sign(int c) { return (c > 0) - (c < 0); }

TEST(BytesTest, SameBytesIsEquality) {
  const std::vector<std::string> strings = TieHeavyStrings();
  for (const std::string& a : strings) {
    for (const std::string& b : strings) {
      ASSERT_EQ(SameBytes(a, b), std::string_view(a) == std::string_view(b))
          << "'" << a << "' (" << a.size() << ") vs '" << b << "' (" << b.size()
          << ")";
    }
  }
}

TEST(BytesTest, CompareBytesIsTheSignOfCompare) {
  const std::vector<std::string> strings = TieHeavyStrings();
  for (const std::string& a : strings) {
    for (const std::string& b : strings) {
      const int expected = Sign(std::string_view(a).compare(b));
      ASSERT_EQ(CompareBytes(a, b), expected)
          << "'" << a << "' (" << a.size() << ") vs '" << b << "' (" << b.size()
          << ")";
      ASSERT_EQ(LessBytes(a, b), expected < 0);
    }
  }
}

TEST(BytesTest, ZeroBytesAreNotPadding) {
  const std::string with_zero("ab\0", 3);
  EXPECT_FALSE(SameBytes("ab", with_zero));
  EXPECT_EQ(CompareBytes("ab", with_zero), -1);
  const std::string long_zero("rowrowro\0", 9);
  EXPECT_EQ(CompareBytes("rowrowro", long_zero), -1);
  EXPECT_EQ(CompareBytes(long_zero, "rowrowro"), 1);
}

TEST(BytesTest, BigEndianWordPadsWithZeros) {
  EXPECT_EQ(BigEndianWord("abcdefghij", 2), 0x636465666768696au);
  EXPECT_EQ(BigEndianWord("ab", 0), 0x6162000000000000u);
  EXPECT_EQ(BigEndianWord("ab", 5), 0u);
  EXPECT_EQ(BigEndianWord("\xff", 0), 0xff00000000000000u);
}

TEST(BytesTest, BytesEqualIsSameBytes) {
  const BytesEqual equal;
  const std::string a = "cluster-1";
  EXPECT_TRUE(equal(a, std::string_view("cluster-1")));
  EXPECT_FALSE(equal(a, std::string_view("cluster-2")));
}

}  // namespace
}  // namespace btsim
