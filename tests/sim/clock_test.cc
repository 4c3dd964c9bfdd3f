#include "sim/clock.h"

#include <gtest/gtest.h>

#include <chrono>

namespace btsim::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr Time kStart{Duration(1'700'000'000'000'000'000)};

TEST(ManualClockTest, StartsWhereTold) {
  ManualClock clock(kStart);
  EXPECT_EQ(clock.Now(), kStart);
  EXPECT_EQ(clock.Now(), kStart);  // reading does not move it
}

TEST(ManualClockTest, AdvanceAndSetMoveForward) {
  ManualClock clock(kStart);
  clock.Advance(seconds(2));
  EXPECT_EQ(clock.Now(), kStart + seconds(2));
  clock.Advance(Duration(0));
  EXPECT_EQ(clock.Now(), kStart + seconds(2));
  clock.Set(kStart + seconds(10));
  EXPECT_EQ(clock.Now(), kStart + seconds(10));
  clock.Set(kStart + seconds(10));  // setting to now is allowed
  EXPECT_EQ(clock.Now(), kStart + seconds(10));
  clock.Advance(milliseconds(1));
  EXPECT_EQ(sim::NanosSinceEpoch(clock.Now()),
            sim::NanosSinceEpoch(kStart) + 10'001'000'000);
}

TEST(ManualClockTest, UsableThroughClockInterface) {
  ManualClock manual(kStart);
  const Clock& clock = manual;
  manual.Advance(Duration(5));
  EXPECT_EQ(clock.Now(), kStart + Duration(5));
}

TEST(ManualClockDeathTest, MovingBackwardsAborts) {
  ManualClock clock(kStart);
  EXPECT_DEATH(clock.Set(kStart - Duration(1)), "ManualClock moved backwards");
  EXPECT_DEATH(clock.Advance(Duration(-1)), "ManualClock moved backwards");
}

TEST(OffsetClockTest, FollowsItsBaseWithTheOffset) {
  ManualClock base(kStart);
  OffsetClock clock(base);
  EXPECT_EQ(clock.Now(), kStart);
  clock.set_offset(seconds(3));
  EXPECT_EQ(clock.Now(), kStart + seconds(3));
  base.Advance(seconds(1));
  EXPECT_EQ(clock.Now(), kStart + seconds(4));
  EXPECT_EQ(clock.offset(), seconds(3));
}

TEST(OffsetClockTest, SetBackItStaysPutUntilItsBaseCatchesUp) {
  ManualClock base(kStart);
  OffsetClock clock(base);
  clock.set_offset(seconds(2));
  EXPECT_EQ(clock.Now(), kStart + seconds(2));
  clock.set_offset(Duration(0));
  EXPECT_EQ(clock.Now(), kStart + seconds(2));
  base.Advance(seconds(1));
  EXPECT_EQ(clock.Now(), kStart + seconds(2));
  base.Advance(seconds(2));
  EXPECT_EQ(clock.Now(), kStart + seconds(3));
}

// Found by fuzzing (tests/fuzz/corpus/replication/
// regression-clock-set-back-unread): a clock whose offset had always been 0
// did not record its readings, so setting it back moved it back, and
// compaction, which counts on the clusters' clocks never going back,
// dropped a DropRowRange that an older write arriving later still needed.
TEST(OffsetClockTest, NeverGoesBackBelowAReadingAtOffsetZero) {
  ManualClock base(kStart);
  OffsetClock clock(base);
  base.Advance(seconds(1));
  EXPECT_EQ(clock.Now(), kStart + seconds(1));
  clock.set_offset(-seconds(2));
  EXPECT_EQ(clock.Now(), kStart + seconds(1));
  base.Advance(seconds(2));
  EXPECT_EQ(clock.Now(), kStart + seconds(1));
  base.Advance(seconds(1));
  EXPECT_EQ(clock.Now(), kStart + seconds(2));
}

}  // namespace
}  // namespace btsim::sim
