#include "cluster/gc_rule.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>

namespace btsim::cluster {
namespace {

using ::testing::HasSubstr;

using std::chrono::microseconds;

constexpr microseconds kMs = std::chrono::milliseconds(1);
constexpr microseconds kHour = std::chrono::hours(1);
constexpr microseconds kDay = 24 * kHour;
constexpr Timestamp kEpoch{};
constexpr Timestamp kNow = TimestampFromMicros(1'700'000'000'000'000);

TEST(GcRuleTest, NoneKeepsEverything) {
  const GcRule rule = GcRule::None();
  EXPECT_EQ(rule.kind, GcRule::Kind::kNone);
  EXPECT_FALSE(rule.Deletes(0, kNow, kNow));
  EXPECT_FALSE(rule.Deletes(1'000'000, kEpoch, kNow));
}

TEST(GcRuleTest, MaxVersionsKeepsTheNewestN) {
  const GcRule rule = GcRule::MaxVersions(2);
  EXPECT_FALSE(rule.Deletes(0, kEpoch, kNow));
  EXPECT_FALSE(rule.Deletes(1, kEpoch, kNow));
  EXPECT_TRUE(rule.Deletes(2, kNow, kNow));
  EXPECT_TRUE(rule.Deletes(100, kNow, kNow));
}

TEST(GcRuleTest, MaxAgeDeletesOnlyCellsOlderThanTheAge) {
  const GcRule rule = GcRule::MaxAge(kHour);
  EXPECT_FALSE(rule.Deletes(5, kNow, kNow));
  EXPECT_FALSE(rule.Deletes(5, kNow - kHour, kNow));  // exactly the age: kept
  EXPECT_TRUE(rule.Deletes(0, kNow - kHour - kMs, kNow));
  EXPECT_TRUE(rule.Deletes(0, kEpoch, kNow));
  EXPECT_FALSE(rule.Deletes(0, kNow + kDay, kNow));  // future cells stay
}

TEST(GcRuleTest, UnionDeletesWhenAnyRuleDoes) {
  const GcRule rule =
      GcRule::Union({GcRule::MaxVersions(1), GcRule::MaxAge(kHour)});
  EXPECT_FALSE(rule.Deletes(0, kNow, kNow));
  EXPECT_TRUE(rule.Deletes(1, kNow, kNow));              // version only
  EXPECT_TRUE(rule.Deletes(0, kNow - 2 * kHour, kNow));  // age only
  EXPECT_TRUE(rule.Deletes(3, kNow - 2 * kHour, kNow));  // both
}

TEST(GcRuleTest, IntersectionDeletesOnlyWhenEveryRuleDoes) {
  const GcRule rule =
      GcRule::Intersection({GcRule::MaxVersions(1), GcRule::MaxAge(kHour)});
  EXPECT_FALSE(rule.Deletes(0, kNow, kNow));
  EXPECT_FALSE(rule.Deletes(1, kNow, kNow));              // version only
  EXPECT_FALSE(rule.Deletes(0, kNow - 2 * kHour, kNow));  // age only
  EXPECT_TRUE(rule.Deletes(1, kNow - 2 * kHour, kNow));   // both
}

TEST(GcRuleTest, EmptyUnionAndIntersectionKeepEverything) {
  for (const GcRule& rule : {GcRule::Union({}), GcRule::Intersection({})}) {
    EXPECT_FALSE(rule.Deletes(0, kEpoch, kNow));
    EXPECT_FALSE(rule.Deletes(1'000, kEpoch, kNow));
    EXPECT_TRUE(rule.Validate("gc_rule").ok());
  }
}

TEST(GcRuleTest, NestedRules) {
  // Keep 3 versions, but drop anything beyond the first that is over a day
  // old: union(max_versions 3, intersection(max_versions 1, max_age 1d)).
  const GcRule rule = GcRule::Union(
      {GcRule::MaxVersions(3),
       GcRule::Intersection({GcRule::MaxVersions(1), GcRule::MaxAge(kDay)})});
  EXPECT_FALSE(rule.Deletes(0, kEpoch, kNow));          // newest always kept
  EXPECT_FALSE(rule.Deletes(1, kNow, kNow));            // recent second
  EXPECT_TRUE(rule.Deletes(1, kNow - 2 * kDay, kNow));  // old second
  EXPECT_TRUE(rule.Deletes(3, kNow, kNow));             // fourth
}

TEST(GcRuleTest, ValidateAcceptsPositiveLimits) {
  EXPECT_TRUE(GcRule::None().Validate("f").ok());
  EXPECT_TRUE(GcRule::MaxVersions(1).Validate("f").ok());
  EXPECT_TRUE(GcRule::MaxAge(kMs).Validate("f").ok());
  EXPECT_TRUE(GcRule::Union({GcRule::MaxVersions(5), GcRule::MaxAge(kDay)})
                  .Validate("f")
                  .ok());
}

TEST(GcRuleTest, ValidateRejectsMaxVersionsBelowOneNamingTheField) {
  for (int64_t n : {0, -1}) {
    Status s =
        GcRule::MaxVersions(n).Validate("modifications[2].create.gc_rule");
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
    EXPECT_THAT(s.message(),
                HasSubstr("modifications[2].create.gc_rule.max_num_versions"));
  }
}

TEST(GcRuleTest, ValidateRejectsMaxAgeBelowOneMillisecondNamingTheField) {
  for (microseconds age : {microseconds(0), -kMs, microseconds(999)}) {
    Status s = GcRule::MaxAge(age).Validate("gc_rule");
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << age.count();
    EXPECT_THAT(s.message(), HasSubstr("gc_rule.max_age"));
  }
}

TEST(GcRuleTest, ValidateNamesTheNestedRule) {
  const GcRule rule = GcRule::Intersection(
      {GcRule::MaxAge(kDay),
       GcRule::Union({GcRule::MaxVersions(2), GcRule::MaxVersions(0)})});
  Status s = rule.Validate("gc_rule");
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(),
              HasSubstr("gc_rule.intersection.rules[1].union.rules[1]."
                        "max_num_versions"));
}

TEST(GcRuleTest, ToStringFormatsEveryKind) {
  EXPECT_EQ(GcRule::None().ToString(), "<never>");
  EXPECT_EQ(GcRule::MaxVersions(2).ToString(), "versions() > 2");
  EXPECT_EQ(GcRule::MaxAge(kDay).ToString(), "age() > 1d");
  EXPECT_EQ(GcRule::MaxAge(2 * kHour).ToString(), "age() > 2h");
  EXPECT_EQ(GcRule::MaxAge(std::chrono::minutes(90)).ToString(), "age() > 90m");
  EXPECT_EQ(GcRule::MaxAge(std::chrono::seconds(30)).ToString(), "age() > 30s");
  EXPECT_EQ(GcRule::MaxAge(1500 * kMs).ToString(), "age() > 1500ms");
  EXPECT_EQ(GcRule::MaxAge(microseconds(1500)).ToString(), "age() > 1500us");
  EXPECT_EQ(
      GcRule::Union({GcRule::MaxVersions(2), GcRule::MaxAge(kDay)}).ToString(),
      "(versions() > 2 || age() > 1d)");
  EXPECT_EQ(GcRule::Intersection({GcRule::MaxVersions(1),
                                  GcRule::Union({GcRule::MaxAge(kHour),
                                                 GcRule::MaxVersions(3)})})
                .ToString(),
            "(versions() > 1 && (age() > 1h || versions() > 3))");
}

TEST(GcRuleTest, EqualityIsStructural) {
  EXPECT_EQ(GcRule::MaxVersions(2), GcRule::MaxVersions(2));
  EXPECT_NE(GcRule::MaxVersions(2), GcRule::MaxVersions(3));
  EXPECT_NE(GcRule::MaxVersions(2), GcRule::MaxAge(microseconds(2)));
  EXPECT_EQ(GcRule::Union({GcRule::MaxAge(kMs)}),
            GcRule::Union({GcRule::MaxAge(kMs)}));
  EXPECT_NE(GcRule::Union({GcRule::MaxAge(kMs)}),
            GcRule::Intersection({GcRule::MaxAge(kMs)}));
}

}  // namespace
}  // namespace btsim::cluster
