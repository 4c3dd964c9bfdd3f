#include "api/convert.h"

#include <gtest/gtest.h>

#include <string>

namespace btsim::api {
namespace {

TEST(ValidUtf8Test, KeepsValidUtf8) {
  const std::string text = "plain, caf\xc3\xa9, \xe2\x82\xac, \xf0\x9f\x98\x80";
  EXPECT_EQ(ValidUtf8(text), text);
}

TEST(ValidUtf8Test, EscapesEachByteOfAnInvalidSequence) {
  // A lone lead byte, a stray continuation byte, an overlong '/', a
  // surrogate, a code point above U+10FFFF and a cut-off sequence.
  EXPECT_EQ(ValidUtf8("\xe3"
                      "f"),
            "\\xe3f");
  EXPECT_EQ(ValidUtf8("a\x80z"), "a\\x80z");
  EXPECT_EQ(ValidUtf8("\xc0\xaf"), "\\xc0\\xaf");
  EXPECT_EQ(ValidUtf8("\xed\xa0\x80"), "\\xed\\xa0\\x80");
  EXPECT_EQ(ValidUtf8("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");
  EXPECT_EQ(ValidUtf8("ok\xe2\x82"), "ok\\xe2\\x82");
}

}  // namespace
}  // namespace btsim::api
