// TabletUnits: counts per tablet id, drained once each, with a fixed
// capacity of distinct ids.
#include "instance/tablet_units.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <map>
#include <utility>
#include <vector>

namespace btsim::instance {
namespace {

std::map<uint64_t, int64_t> Drained(TabletUnits& units) {
  std::map<uint64_t, int64_t> out;
  units.Drain([&](uint64_t id, int64_t n) {
    EXPECT_TRUE(out.emplace(id, n).second) << "drained twice: " << id;
  });
  return out;
}

TEST(TabletUnitsTest, CountsUnitsPerIdAndDrainsEachOnce) {
  TabletUnits units;
  EXPECT_TRUE(units.empty());
  // 0 is an id like any other; 7 and 7 + 256 share a home slot.
  for (uint64_t id : {7ull, 0ull, 7ull + 256, 7ull, 0ull, 7ull}) {
    ASSERT_TRUE(units.Add(id));
  }
  EXPECT_FALSE(units.empty());
  EXPECT_THAT(Drained(units), ::testing::ElementsAre(::testing::Pair(0, 2),
                                                     ::testing::Pair(7, 3),
                                                     ::testing::Pair(263, 1)));
  EXPECT_TRUE(units.empty());
  EXPECT_TRUE(Drained(units).empty());
  // Counts start again from nothing after a drain.
  ASSERT_TRUE(units.Add(7));
  ASSERT_TRUE(units.Add(7));
  EXPECT_THAT(Drained(units), ::testing::ElementsAre(::testing::Pair(7, 2)));
  // Reusable after a drain.
  ASSERT_TRUE(units.Add(263));
  EXPECT_THAT(Drained(units), ::testing::ElementsAre(::testing::Pair(263, 1)));
}

TEST(TabletUnitsTest, RefusesANewIdWhenFullButCountsKnownOnes) {
  TabletUnits units;
  for (uint64_t i = 0; i < TabletUnits::kCapacity; ++i) {
    ASSERT_TRUE(units.Add(i * 0x9e3779b97f4a7c15ull));
  }
  EXPECT_FALSE(units.Add(12345));
  EXPECT_TRUE(units.Add(0));  // held already
  const std::map<uint64_t, int64_t> drained = Drained(units);
  EXPECT_EQ(drained.size(), TabletUnits::kCapacity);
  EXPECT_EQ(drained.at(0), 2);
  EXPECT_FALSE(drained.contains(12345));
  EXPECT_TRUE(units.Add(12345));
}

}  // namespace
}  // namespace btsim::instance
