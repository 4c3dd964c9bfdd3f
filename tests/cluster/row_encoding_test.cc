// The row encoding's varint reader: every length of varint decodes to the
// value PutVarint wrote and stops at its last byte, whatever follows it,
// and a broken encoding aborts.
#include "cluster/internal/row_encoding.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace btsim::cluster::internal::encoding {
namespace {

std::string Encode(uint64_t v) {
  SizeSink size;
  PutVarint(size, v);
  std::string out(size.n, '\0');
  PtrSink sink{out.data()};
  PutVarint(sink, v);
  return out;
}

std::vector<uint64_t> Values() {
  std::vector<uint64_t> values = {0, 1, 0x7f, UINT64_MAX, UINT64_MAX - 1};
  for (int bits = 7; bits < 64; bits += 7) {
    const uint64_t edge = uint64_t{1} << bits;
    values.push_back(edge - 1);  // the longest of this length
    values.push_back(edge);      // the shortest of the next
    values.push_back(edge | 0x55);
  }
  values.push_back(0x0123456789abcdefull);
  values.push_back(uint64_t{1} << 63);
  return values;
}

TEST(RowEncodingReaderTest, EveryLengthDecodesAndStopsAtItsLastByte) {
  for (uint64_t v : Values()) {
    const std::string varint = Encode(v);
    for (size_t after = 0; after <= 12; ++after) {
      // Bytes after the varint with their top bit set, as a continuation
      // would have: a reader that ran past the stop byte would see them.
      const std::string in = varint + std::string(after, '\xff');
      Reader reader(in);
      EXPECT_EQ(reader.Varint(), v) << v << " followed by " << after;
      EXPECT_EQ(reader.pos() - in.data(), static_cast<ptrdiff_t>(varint.size()))
          << v << " followed by " << after;
    }
  }
}

TEST(RowEncodingReaderTest, ReadsVarintsOneAfterAnother) {
  std::string in;
  const std::vector<uint64_t> values = Values();
  for (uint64_t v : values) in += Encode(v);
  Reader reader(in);
  for (uint64_t v : values) EXPECT_EQ(reader.Varint(), v);
  EXPECT_TRUE(reader.done());
}

TEST(RowEncodingReaderTest, LongerThanNeededEncodingsDecodeToTheirValue) {
  for (size_t after : {0, 8}) {
    // 5 as three bytes, and as ten bytes whose last carries bits past the
    // 64th (dropped).
    const std::string three = std::string("\x85\x80\x00", 3);
    const std::string ten = "\x85" + std::string(8, '\x80') + "\x7e";
    for (const std::string& varint : {three, ten}) {
      const std::string in = varint + std::string(after, '\x01');
      Reader reader(in);
      EXPECT_EQ(reader.Varint(), 5u);
      EXPECT_EQ(reader.pos() - in.data(),
                static_cast<ptrdiff_t>(varint.size()));
    }
  }
}

TEST(RowEncodingReaderDeathTest, ATruncatedOrOverlongVarintAborts) {
  const std::string truncated = "\x80\x80";
  EXPECT_DEATH(Reader(truncated).Varint(), "truncated row encoding");
  const std::string overlong = std::string(11, '\x80') + "\x01";
  EXPECT_DEATH(Reader(overlong).Varint(), "bad varint in row encoding");
}

}  // namespace
}  // namespace btsim::cluster::internal::encoding
