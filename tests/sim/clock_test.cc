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

}  // namespace
}  // namespace btsim::sim
