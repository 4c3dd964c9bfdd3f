// Tests of Interval::IsEmpty.
#include "cluster/bound.h"

#include <gtest/gtest.h>

#include <string>

namespace btsim::cluster {
namespace {

TEST(IntervalTest, UnboundedIsNeverEmpty) {
  EXPECT_FALSE((Interval{Bound::Unbounded(), Bound::Unbounded()}).IsEmpty());
  EXPECT_FALSE((Interval{Bound::Unbounded(), Bound::Open("a")}).IsEmpty());
  EXPECT_FALSE((Interval{Bound::Open("z"), Bound::Unbounded()}).IsEmpty());
}

TEST(IntervalTest, InvertedIsEmpty) {
  EXPECT_TRUE((Interval{Bound::Closed("b"), Bound::Closed("a")}).IsEmpty());
  EXPECT_TRUE((Interval{Bound::Open("b"), Bound::Open("a")}).IsEmpty());
  EXPECT_TRUE((Interval{Bound::Closed("ab"), Bound::Closed("a")}).IsEmpty());
}

TEST(IntervalTest, EqualEndsEmptyOnlyWhenOneSideIsOpen) {
  EXPECT_FALSE((Interval{Bound::Closed("a"), Bound::Closed("a")}).IsEmpty());
  EXPECT_TRUE((Interval{Bound::Open("a"), Bound::Closed("a")}).IsEmpty());
  EXPECT_TRUE((Interval{Bound::Closed("a"), Bound::Open("a")}).IsEmpty());
  EXPECT_TRUE((Interval{Bound::Open("a"), Bound::Open("a")}).IsEmpty());
}

TEST(IntervalTest, OrderedIsNotEmpty) {
  EXPECT_FALSE((Interval{Bound::Closed("a"), Bound::Open("b")}).IsEmpty());
  // Nothing lies strictly between "a" and "a\0", but the simple rule says
  // not empty.
  EXPECT_FALSE((Interval{Bound::Open("a"), Bound::Open(std::string("a\0", 2))})
                   .IsEmpty());
}

TEST(IntervalTest, ComparesUnsignedBytes) {
  EXPECT_TRUE(
      (Interval{Bound::Closed("\xff"), Bound::Closed("\x01")}).IsEmpty());
  EXPECT_FALSE(
      (Interval{Bound::Closed("\x01"), Bound::Closed("\xff")}).IsEmpty());
}

}  // namespace
}  // namespace btsim::cluster
