// Tests of the cache lines a prefetch hint covers (base/prefetch.h).
#include "base/prefetch.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace btsim {
namespace {

// The lines ForEachCacheLine visits for [start, start + size), as offsets
// from a line-aligned base.
std::vector<uintptr_t> Lines(size_t start, size_t size) {
  alignas(kCacheLine) static char buffer[8 * kCacheLine];
  const auto base = reinterpret_cast<uintptr_t>(buffer);
  std::vector<uintptr_t> out;
  ForEachCacheLine(buffer + start, size,
                   [&](uintptr_t line) { out.push_back(line - base); });
  return out;
}

TEST(PrefetchTest, VisitsEveryLineTheRangeOverlaps) {
  using Offsets = std::vector<uintptr_t>;
  EXPECT_EQ(Lines(0, 64), (Offsets{0}));
  EXPECT_EQ(Lines(16, 96), (Offsets{0, 64}));
  // 96 bytes from offset 48 touch three lines, the middle one included.
  EXPECT_EQ(Lines(48, 96), (Offsets{0, 64, 128}));
  EXPECT_EQ(Lines(63, 2), (Offsets{0, 64}));
  EXPECT_EQ(Lines(64, 1), (Offsets{64}));
  EXPECT_EQ(Lines(100, 0), Offsets{});
}

TEST(PrefetchTest, HintsChangeNothing) {
  std::vector<int> values = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14};
  PrefetchForRead(values.data(), values.size() * sizeof(int));
  PrefetchForWrite(values.data(), values.size() * sizeof(int));
  PrefetchForWrite(values.data() + values.size(), 0);
  EXPECT_EQ(values,
            (std::vector<int>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14}));
}

}  // namespace
}  // namespace btsim
