// Tests of the engine's value types: commit versions (cluster/version.h)
// and the canonical order of cells (cluster/cell_view.h).
#include <gtest/gtest.h>

#include <cstdint>

#include "cluster/cell_view.h"
#include "cluster/version.h"

namespace btsim::cluster {
namespace {

constexpr int64_t kNowMicros = 1'700'000'000'000'000;

TEST(VersionTest, PacksCommitTimeAndOrigin) {
  const Version v = MakeVersion(kNowMicros, 7);
  EXPECT_EQ(VersionMicros(v), kNowMicros);
  EXPECT_EQ(VersionOrigin(v), 7u);
  EXPECT_EQ(VersionOrigin(MakeVersion(1, 255)), 255u);
  // Commit time decides first, then the origin breaks ties.
  EXPECT_LT(MakeVersion(kNowMicros, 255), MakeVersion(kNowMicros + 1, 0));
  EXPECT_LT(MakeVersion(kNowMicros, 1), MakeVersion(kNowMicros, 2));
  EXPECT_LT(kNoVersion, MakeVersion(0, 1));
}

TEST(CanonicalLessTest, OrdersByFamilyQualifierThenNewestFirst) {
  const CellView a{"a", "z", 1000, "", nullptr};
  const CellView b_old{"b", "a", 1000, "", nullptr};
  const CellView b_new{"b", "a", 2000, "", nullptr};
  const CellView b_q{"b", "\x80", 5000, "", nullptr};
  EXPECT_TRUE(CanonicalLess(a, b_old));
  EXPECT_TRUE(CanonicalLess(b_new, b_old));
  EXPECT_FALSE(CanonicalLess(b_old, b_new));
  EXPECT_TRUE(CanonicalLess(b_old, b_q));  // unsigned qualifier bytes
  EXPECT_FALSE(CanonicalLess(b_old, b_old));
}

}  // namespace
}  // namespace btsim::cluster
