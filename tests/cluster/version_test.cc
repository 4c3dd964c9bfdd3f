// Tests of the engine's value types: cell timestamps (cluster/timestamp.h),
// commit versions (cluster/version.h) and the canonical order of cells
// (cluster/cell_view.h).
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

#include "cluster/cell_view.h"
#include "cluster/timestamp.h"
#include "cluster/version.h"
#include "sim/time.h"

namespace btsim::cluster {
namespace {

using std::chrono::microseconds;

constexpr Timestamp kNow = TimestampFromMicros(1'700'000'000'000'000);

TEST(TimestampTest, WireMicrosRoundTrip) {
  EXPECT_EQ(Micros(kNow), 1'700'000'000'000'000);
  EXPECT_EQ(Micros(Timestamp{}), 0);
  EXPECT_EQ(Micros(kServerTimestamp), -1);
}

TEST(TimestampTest, SimulatorTimeTruncatesToWholeMicrosThenMillis) {
  const sim::Time t{sim::Duration(1'700'000'000'123'456'789)};
  EXPECT_EQ(Micros(TimestampOf(t)), 1'700'000'000'123'456);
  EXPECT_EQ(Micros(TruncateToMillis(TimestampOf(t))), 1'700'000'000'123'000);
}

TEST(TimestampTest, RangeIsHalfOpenAndAnEpochEndIsUnbounded) {
  const Timestamp start = kNow;
  const Timestamp end = kNow + microseconds(2000);
  EXPECT_FALSE(InTimestampRange(kNow - microseconds(1000), start, end));
  EXPECT_TRUE(InTimestampRange(kNow, start, end));
  EXPECT_FALSE(InTimestampRange(end, start, end));
  EXPECT_TRUE(InTimestampRange(kNow + std::chrono::hours(24 * 365), start,
                               Timestamp{}));
}

TEST(VersionTest, PacksCommitTimeAndOrigin) {
  const Version v = MakeVersion(kNow, 7);
  EXPECT_EQ(VersionTime(v), kNow);
  EXPECT_EQ(VersionOrigin(v), 7u);
  EXPECT_EQ(VersionOrigin(MakeVersion(TimestampFromMicros(1), 255)), 255u);
  // Commit time decides first, then the origin breaks ties.
  EXPECT_LT(MakeVersion(kNow, 255), MakeVersion(kNow + microseconds(1), 0));
  EXPECT_LT(MakeVersion(kNow, 1), MakeVersion(kNow, 2));
  EXPECT_LT(kNoVersion, MakeVersion(Timestamp{}, 1));
}

TEST(CanonicalLessTest, OrdersByFamilyQualifierThenNewestFirst) {
  const CellView a{"a", "z", TimestampFromMicros(1000), "", nullptr};
  const CellView b_old{"b", "a", TimestampFromMicros(1000), "", nullptr};
  const CellView b_new{"b", "a", TimestampFromMicros(2000), "", nullptr};
  const CellView b_q{"b", "\x80", TimestampFromMicros(5000), "", nullptr};
  EXPECT_TRUE(CanonicalLess(a, b_old));
  EXPECT_TRUE(CanonicalLess(b_new, b_old));
  EXPECT_FALSE(CanonicalLess(b_old, b_new));
  EXPECT_TRUE(CanonicalLess(b_old, b_q));  // unsigned qualifier bytes
  EXPECT_FALSE(CanonicalLess(b_old, b_old));
}

}  // namespace
}  // namespace btsim::cluster
