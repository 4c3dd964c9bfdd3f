// Tests of FindGarbage: garbage collection judged version by version.
#include "cluster/internal/column_gc.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "cluster/gc_rule.h"
#include "cluster/timestamp.h"
#include "cluster/version.h"
#include "sim/rng.h"

namespace btsim::cluster::internal {
namespace {

using std::chrono::seconds;
using ::testing::ElementsAre;

constexpr int64_t kSecond = 1'000'000;
constexpr int64_t kBase = 1'700'000'000 * kSecond;

// The version committed `at` seconds after kBase (on origin 1).
Version V(int64_t at) {
  return MakeVersion(TimestampFromMicros(kBase + at * kSecond), 1);
}

// A cell with timestamp `ts` seconds after kBase, committed `at` seconds
// after kBase, hidden at `hidden` seconds (0: never).
GcCell Cell(int64_t ts, int64_t at, int64_t hidden = 0) {
  return {TimestampFromMicros(kBase + ts * kSecond), V(at),
          hidden == 0 ? kNeverHidden : V(hidden)};
}

std::vector<bool> Garbage(std::vector<GcCell> cells,
                          const std::vector<GcPeriod>& periods,
                          int64_t horizon) {
  FindGarbage(cells, periods, V(horizon));
  std::vector<bool> out;
  for (const GcCell& c : cells) out.push_back(c.garbage);
  return out;
}

TEST(ColumnGcTest, ASurplusVersionStaysGarbageWhenNewerOnesAreDeleted) {
  const GcRule two = GcRule::MaxVersions(2);
  // Newest first: the two newest are hidden at 10, after the oldest was
  // surplus (from 3 on).
  EXPECT_THAT(Garbage({Cell(30, 3, 10), Cell(20, 2, 10), Cell(10, 1)},
                      {{V(0), &two}}, 20),
              ElementsAre(true, true, true));
}

TEST(ColumnGcTest, ACellHiddenBeforeTheNewerOnesArriveDoesNotCount) {
  const GcRule two = GcRule::MaxVersions(2);
  EXPECT_THAT(
      Garbage({Cell(30, 5), Cell(20, 2, 4), Cell(10, 1)}, {{V(0), &two}}, 20),
      ElementsAre(false, true, false));
}

TEST(ColumnGcTest, ACellHiddenAboveTheHorizonStaysAndStillCounts) {
  const GcRule one = GcRule::MaxVersions(1);
  // Hidden at 30, above the horizon: kept (hidden), and the older cell is
  // surplus while it is visible.
  EXPECT_THAT(Garbage({Cell(20, 2, 30), Cell(10, 1)}, {{V(0), &one}}, 20),
              ElementsAre(false, true));
}

TEST(ColumnGcTest, VersionsAboveTheHorizonAreNeitherJudgedNorCounted) {
  const GcRule one = GcRule::MaxVersions(1);
  EXPECT_THAT(
      Garbage({Cell(30, 25), Cell(20, 3), Cell(10, 4)}, {{V(0), &one}}, 20),
      ElementsAre(false, false, true));
}

TEST(ColumnGcTest, EachVersionIsJudgedByTheRuleThenInEffect) {
  const GcRule none;
  const GcRule one = GcRule::MaxVersions(1);
  // Two versions while nothing was collected; the newer one deleted at 5,
  // before the limit of one version took effect at 8: the older is never
  // surplus.
  EXPECT_THAT(
      Garbage({Cell(20, 2, 5), Cell(10, 1)}, {{V(0), &none}, {V(8), &one}}, 20),
      ElementsAre(true, false));
  // The limit in effect from 3: surplus at 3.
  EXPECT_THAT(
      Garbage({Cell(20, 2, 5), Cell(10, 1)}, {{V(0), &none}, {V(3), &one}}, 20),
      ElementsAre(true, true));
}

TEST(ColumnGcTest, AgesAreMeasuredAtTheVersionsJudged) {
  const GcRule age = GcRule::MaxAge(seconds(10));
  // Cell at ts 0 is 10 s old at version 10 and beyond.
  EXPECT_THAT(Garbage({Cell(0, 1)}, {{V(0), &age}}, 9), ElementsAre(false));
  EXPECT_THAT(Garbage({Cell(0, 1)}, {{V(0), &age}}, 11), ElementsAre(true));
  // Both limits at once: surplus while old enough.
  const GcRule both = GcRule::Intersection(
      {GcRule::MaxVersions(1), GcRule::MaxAge(seconds(10))});
  // The newer cell is hidden at 5, before the older one is 10 s old.
  EXPECT_THAT(Garbage({Cell(3, 2, 5), Cell(0, 1)}, {{V(0), &both}}, 30),
              ElementsAre(true, false));
  // Hidden at 12, after: the older one was surplus and old from 10.
  EXPECT_THAT(Garbage({Cell(3, 2, 12), Cell(0, 1)}, {{V(0), &both}}, 30),
              ElementsAre(true, true));
}

TEST(ColumnGcTest, NoRuleBeforeTheFirstPeriod) {
  const GcRule one = GcRule::MaxVersions(1);
  EXPECT_THAT(Garbage({Cell(20, 2), Cell(10, 1)}, {{V(25), &one}}, 20),
              ElementsAre(false, false));
}

GcRule RandomRule(sim::Rng& rng, int depth = 0) {
  switch (rng.Uniform(depth == 0 ? 4 : 2)) {
    case 0:
      return GcRule::MaxVersions(1 + static_cast<int64_t>(rng.Uniform(4)));
    case 1:
      return GcRule::MaxAge(seconds(1 + rng.Uniform(40)));
    case 2:
      return GcRule::Intersection(
          {RandomRule(rng, depth + 1), RandomRule(rng, depth + 1)});
    default:
      return GcRule::Union(
          {RandomRule(rng, depth + 1), RandomRule(rng, depth + 1)});
  }
}

TEST(ColumnGcTest, TheShortcutAgreesWithTheDefinition) {
  // FindGarbage's shortcut (one rule, nothing hidden at or below the
  // horizon) against the version-by-version definition.
  sim::Rng rng(7);
  int garbage = 0;
  int kept = 0;
  for (int round = 0; round < 20000; ++round) {
    const GcRule rule = RandomRule(rng);
    std::vector<GcCell> cells;
    const int n = 1 + static_cast<int>(rng.Uniform(8));
    std::vector<int64_t> timestamps;
    while (static_cast<int>(timestamps.size()) < n) {
      const int64_t ts = static_cast<int64_t>(rng.Uniform(60));
      if (std::find(timestamps.begin(), timestamps.end(), ts) ==
          timestamps.end()) {
        timestamps.push_back(ts);
      }
    }
    std::sort(timestamps.rbegin(), timestamps.rend());
    const int64_t horizon = 20 + static_cast<int64_t>(rng.Uniform(60));
    for (int64_t ts : timestamps) {
      const int64_t at = 1 + static_cast<int64_t>(rng.Uniform(80));
      // Some hidden above the horizon (visible at every version judged).
      const int64_t hidden =
          rng.Bernoulli(0.2) ? horizon + 1 + rng.Uniform(10) : 0;
      cells.push_back(Cell(ts, at, hidden));
    }
    const std::vector<GcPeriod> periods = {{V(0), &rule}};
    std::vector<GcCell> fast = cells;
    std::vector<GcCell> slow = cells;
    FindGarbage(fast, periods, V(horizon));
    FindGarbageSlowly(slow, periods, V(horizon));
    for (size_t i = 0; i < cells.size(); ++i) {
      ASSERT_EQ(fast[i].garbage, slow[i].garbage)
          << "round " << round << ", cell " << i << ", rule "
          << rule.ToString();
      (fast[i].garbage ? garbage : kept) += 1;
    }
  }
  EXPECT_GT(garbage, 10000);  // not vacuous
  EXPECT_GT(kept, 10000);
}

}  // namespace
}  // namespace btsim::cluster::internal
