#include "cluster/row_set.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>
#include <vector>

#include "cluster/bound.h"
#include "sim/rng.h"

namespace btsim::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;
using std::string_view_literals::operator""sv;

Interval Range(Bound start, Bound end) {
  return Interval{std::move(start), std::move(end)};
}

TEST(RowSetBoundTest, AdmitsRespectKind) {
  const Bound closed = Bound::Closed("b");
  const Bound open = Bound::Open("b");
  const Bound none = Bound::Unbounded();
  EXPECT_TRUE(closed.AdmitsAsStart("b"));
  EXPECT_TRUE(closed.AdmitsAsStart("ba"));
  EXPECT_FALSE(closed.AdmitsAsStart("a"));
  EXPECT_FALSE(open.AdmitsAsStart("b"));
  EXPECT_TRUE(open.AdmitsAsStart("b\0"sv));
  EXPECT_TRUE(closed.AdmitsAsEnd("b"));
  EXPECT_FALSE(closed.AdmitsAsEnd("b\0"sv));
  EXPECT_FALSE(open.AdmitsAsEnd("b"));
  EXPECT_TRUE(open.AdmitsAsEnd("a\xff"));
  EXPECT_TRUE(none.AdmitsAsStart(""));
  EXPECT_TRUE(none.AdmitsAsEnd("\xff\xff"));
}

TEST(RowSetBoundTest, ComparesUnsignedBytes) {
  // 0x80 sorts after 'z' although it is negative as a signed char.
  EXPECT_TRUE(Bound::Open("z").AdmitsAsStart("\x80"));
  EXPECT_FALSE(Bound::Open("\x80").AdmitsAsEnd("\xff"));
}

TEST(RowSetIntervalTest, ContainsWithEveryBoundKind) {
  EXPECT_TRUE(Range(Bound::Closed("a"), Bound::Closed("c")).Contains("a"));
  EXPECT_TRUE(Range(Bound::Closed("a"), Bound::Closed("c")).Contains("c"));
  EXPECT_FALSE(Range(Bound::Open("a"), Bound::Closed("c")).Contains("a"));
  EXPECT_FALSE(Range(Bound::Closed("a"), Bound::Open("c")).Contains("c"));
  EXPECT_TRUE(Range(Bound::Closed("a"), Bound::Open("c")).Contains("bzzz"));
  EXPECT_TRUE(Range(Bound::Unbounded(), Bound::Open("c")).Contains(""));
  EXPECT_TRUE(Range(Bound::Open("a"), Bound::Unbounded()).Contains("zzz"));
  EXPECT_TRUE(Interval{}.Contains("anything"));
}

TEST(RowSetIntervalTest, IsEmptyDetectsDegenerateAndInvertedIntervals) {
  EXPECT_FALSE(Interval{}.IsEmpty());
  EXPECT_FALSE(Range(Bound::Closed("a"), Bound::Closed("a")).IsEmpty());
  EXPECT_TRUE(Range(Bound::Open("a"), Bound::Open("a")).IsEmpty());
  EXPECT_TRUE(Range(Bound::Closed("a"), Bound::Open("a")).IsEmpty());
  EXPECT_TRUE(Range(Bound::Open("a"), Bound::Closed("a")).IsEmpty());
  EXPECT_TRUE(Range(Bound::Closed("b"), Bound::Closed("a")).IsEmpty());
  EXPECT_FALSE(Range(Bound::Closed("a"), Bound::Open("b")).IsEmpty());
  EXPECT_FALSE(Range(Bound::Unbounded(), Bound::Closed("a")).IsEmpty());
}

TEST(RowSetTest, EmptySetIsAllRows) {
  RowSet set;
  EXPECT_TRUE(set.IsAllRows());
  EXPECT_THAT(set.Normalized(), ElementsAre(Interval{}));
}

TEST(RowSetTest, KeysBecomePointIntervalsSortedByStart) {
  RowSet set;
  set.AddKey("c");
  set.AddKey("a");
  set.AddRange(Range(Bound::Open("b"), Bound::Unbounded()));
  set.AddRange(Range(Bound::Closed("b"), Bound::Open("bb")));
  set.AddRange(Range(Bound::Unbounded(), Bound::Closed("0")));
  EXPECT_FALSE(set.IsAllRows());
  EXPECT_THAT(set.Normalized(),
              ElementsAre(Range(Bound::Unbounded(), Bound::Closed("0")),
                          Range(Bound::Closed("a"), Bound::Closed("a")),
                          Range(Bound::Closed("b"), Bound::Open("bb")),
                          Range(Bound::Open("b"), Bound::Unbounded()),
                          Range(Bound::Closed("c"), Bound::Closed("c"))));
}

TEST(RowSetTest, EmptyAndInvertedRangesAreDropped) {
  RowSet set;
  set.AddRange(Range(Bound::Open("a"), Bound::Open("a")));
  set.AddRange(Range(Bound::Closed("z"), Bound::Closed("a")));
  EXPECT_FALSE(set.IsAllRows());  // not "all rows": nothing at all
  EXPECT_THAT(set.Normalized(), IsEmpty());
  set.AddKey("k");
  EXPECT_THAT(set.Normalized(),
              ElementsAre(Range(Bound::Closed("k"), Bound::Closed("k"))));
}

TEST(RowSetTest, UnboundedRangeIsKept) {
  RowSet set;
  set.AddRange(Interval{});
  EXPECT_FALSE(set.IsAllRows());
  EXPECT_THAT(set.Normalized(), ElementsAre(Interval{}));
}

TEST(PrefixSuccessorTest, IncrementsTheLastByte) {
  EXPECT_EQ(PrefixSuccessor("abc"), "abd");
  EXPECT_EQ(PrefixSuccessor(std::string("a\0", 2)), "a\x01");
  EXPECT_EQ(PrefixSuccessor("a\x7f"), "a\x80");
}

TEST(PrefixSuccessorTest, DropsTrailingFfBytes) {
  EXPECT_EQ(PrefixSuccessor("a\xff"), "b");
  EXPECT_EQ(PrefixSuccessor("a\xff\xff"), "b");
  EXPECT_EQ(PrefixSuccessor("\x01\xff"), "\x02");
}

TEST(PrefixSuccessorTest, AllFfOrEmptyHasNoUpperBound) {
  EXPECT_EQ(PrefixSuccessor(""), "");
  EXPECT_EQ(PrefixSuccessor("\xff"), "");
  EXPECT_EQ(PrefixSuccessor("\xff\xff\xff"), "");
}

// ResumeFrom is the first position in ScanOrder whose interval a read
// resuming after `after` must still look at: every interval before it is
// wholly passed, and that one is not. Checked against a linear search over
// random keys and ranges, both directions.
TEST(RowSetTest, ResumeFromIsTheFirstIntervalNotWhollyPassed) {
  sim::Rng rng(7);
  auto key = [&] {
    return std::string(1, static_cast<char>('a' + rng.Uniform(20)));
  };
  auto bound = [&](bool allow_unbounded) {
    const uint64_t k = rng.Uniform(allow_unbounded ? 3 : 2);
    if (k == 2) return Bound{};
    return k == 0 ? Bound::Closed(key()) : Bound::Open(key());
  };
  for (int round = 0; round < 200; ++round) {
    RowSet set;
    const uint64_t n = 1 + rng.Uniform(12);
    for (uint64_t i = 0; i < n; ++i) {
      if (rng.Uniform(2) == 0) {
        set.AddKey(key());
      } else {
        set.AddRange(Interval{bound(true), bound(true)});
      }
    }
    for (bool reversed : {false, true}) {
      const std::vector<Interval>& order = set.ScanOrder(reversed);
      for (char c = 'a'; c <= 'u'; ++c) {
        const std::string after(1, c);
        auto passed = [&](const Interval& i) {
          const Bound& b = reversed ? i.start : i.end;
          return !b.unbounded() &&
                 (reversed ? b.value >= after : b.value <= after);
        };
        size_t expected = 0;
        while (expected < order.size() && passed(order[expected])) ++expected;
        EXPECT_EQ(set.ResumeFrom(after, reversed), expected)
            << "round " << round << (reversed ? " reversed" : "") << " after "
            << after;
      }
    }
  }
}

TEST(RowSetTest, ScanOrderIsComputedAgainAfterTheSetChanges) {
  RowSet set;
  set.AddKey("b");
  EXPECT_EQ(set.ScanOrder(false).size(), 1u);
  set.AddKey("a");
  ASSERT_EQ(set.ScanOrder(false).size(), 2u);
  EXPECT_EQ(set.ScanOrder(false)[0].start.value, "a");
  EXPECT_EQ(set.ScanOrder(true)[0].start.value, "b");
}

}  // namespace
}  // namespace btsim::cluster
