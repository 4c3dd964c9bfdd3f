// Tests of garbage collection and compaction through Cluster: GC rules,
// when they apply, and what compaction drops.
#include "cluster/cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tests/cluster/engine_test_util.h"

namespace btsim::cluster {
namespace {

using test_util::C;
using test_util::Cell;
using test_util::CreateFamily;
using test_util::DelCol;
using test_util::DelFam;
using test_util::DelRow;
using test_util::DropFamily;
using test_util::Keys;
using test_util::kHour;
using test_util::kMinute;
using test_util::kStartMicros;
using test_util::Row;
using test_util::UpdateFamily;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ClusterTest = test_util::ClusterTest;

using std::chrono::minutes;

// ================================================================ GC rules

class GcTest : public ClusterTest {
 protected:
  void SetRule(GcRule rule) {
    ASSERT_TRUE(table()
                    .ModifyColumnFamilies(std::vector<FamilyModification>{
                        UpdateFamily("cf", std::move(rule))})
                    .ok());
  }
  // Writes the given ages (in minutes before now), newest first.
  void PutAges(std::string_view key, const std::vector<int>& minutes_ago) {
    for (int m : minutes_ago) {
      Put(key, "cf", "q", kStartMicros - m * kMinute, std::to_string(m));
    }
  }
  std::vector<std::string> Values(std::string_view key) {
    std::vector<std::string> out;
    for (const Cell& c : ReadRow(key)) out.push_back(c.value);
    return out;
  }
};

TEST_F(GcTest, MaxVersionsKeepsTheNewestAfterCompactionOnly) {
  SetRule(GcRule::MaxVersions(2));
  PutAges("r", {1, 2, 3, 4, 5});
  Put("r", "cf2", "q", 1000, "other family");
  EXPECT_EQ(Values("r").size(), 6u);  // expired cells stay readable
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("1", "2", "other family"));
}

TEST_F(GcTest, StricterRuleAppliesRetroactivelyToUntouchedTablets) {
  PutAges("r", {1, 2, 3});
  cluster_.Compact();  // no rule yet: everything stays, tablets turn clean
  EXPECT_EQ(Values("r").size(), 3u);
  SetRule(GcRule::MaxVersions(1));  // no write since the last compaction
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("1"));
}

TEST_F(GcTest, WritesAfterACleanCompactionAreCompactedAgain) {
  SetRule(GcRule::MaxVersions(1));
  PutAges("r", {5});
  cluster_.Compact();
  PutAges("r", {1});
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("1"));
}

TEST_F(GcTest, MaxVersionsCountsOnlyVisibleCells) {
  SetRule(GcRule::MaxVersions(2));
  PutAges("r", {3, 4});
  ASSERT_TRUE(Mutate("r", {DelCol("cf", "q", kStartMicros - 3 * kMinute,
                                  kStartMicros - 2 * kMinute)})
                  .ok());  // deletes "3" before "1" is written
  PutAges("r", {1});
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("1", "4"));
}

TEST_F(GcTest, MaxVersionsRemovesASurplusVersionForGood) {
  // GC acts as if it ran after every commit: "3" and "4" were surplus
  // once "1" and "2" were written, and stay removed when "1" is deleted.
  SetRule(GcRule::MaxVersions(2));
  PutAges("r", {1, 2, 3, 4});
  ASSERT_TRUE(
      Mutate("r", {DelCol("cf", "q", kStartMicros - 1 * kMinute, kStartMicros)})
          .ok());  // deletes the newest
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("2"));
}

TEST_F(GcTest, MaxAgeIsRelativeToTheClock) {
  SetRule(GcRule::MaxAge(std::chrono::hours(1)));
  PutAges("r", {30, 90, 120});
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("30"));
  clock_.Advance(minutes(29));
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("30"));
  clock_.Advance(minutes(2));
  EXPECT_THAT(Values("r"), ElementsAre("30"));  // expired but not compacted
  cluster_.Compact();
  EXPECT_THAT(Values("r"), IsEmpty());
  EXPECT_EQ(table().Stats().rows, 0);
}

TEST_F(GcTest, UnionDeletesWhatEitherRuleDeletes) {
  SetRule(GcRule::Union(
      {GcRule::MaxVersions(2), GcRule::MaxAge(std::chrono::hours(1))}));
  PutAges("young", {1, 2, 3});
  PutAges("old", {10, 70, 80});
  cluster_.Compact();
  EXPECT_THAT(Values("young"), ElementsAre("1", "2"));
  EXPECT_THAT(Values("old"), ElementsAre("10"));
}

TEST_F(GcTest, IntersectionDeletesOnlyWhatBothRulesDelete) {
  SetRule(GcRule::Intersection(
      {GcRule::MaxVersions(1), GcRule::MaxAge(std::chrono::hours(1))}));
  PutAges("r", {10, 20, 120, 180});
  PutAges("lonely", {300});
  cluster_.Compact();
  // 20 is beyond the first version but young; 120 and 180 are both.
  EXPECT_THAT(Values("r"), ElementsAre("10", "20"));
  // The only version is old but it is the first: kept.
  EXPECT_THAT(Values("lonely"), ElementsAre("300"));
}

TEST_F(GcTest, NestedRules) {
  // Keep at most 3 versions, and of those drop all but the newest once they
  // are older than an hour.
  SetRule(GcRule::Union(
      {GcRule::MaxVersions(3),
       GcRule::Intersection(
           {GcRule::MaxVersions(1), GcRule::MaxAge(std::chrono::hours(1))})}));
  PutAges("r", {100, 110, 120, 130});
  PutAges("s", {5, 10, 15, 90, 95});
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("100"));
  EXPECT_THAT(Values("s"), ElementsAre("5", "10", "15"));
}

TEST_F(GcTest, EmptyUnionAndIntersectionKeepEverything) {
  SetRule(GcRule::Union({}));
  PutAges("r", {1, 1000, 100000});
  cluster_.Compact();
  EXPECT_EQ(Values("r").size(), 3u);
  SetRule(GcRule::Intersection({}));
  cluster_.Compact();
  EXPECT_EQ(Values("r").size(), 3u);
}

TEST_F(GcTest, StricterRuleAppliesRetroactively) {
  PutAges("r", {1, 2, 3});
  cluster_.Compact();
  EXPECT_EQ(Values("r").size(), 3u);
  SetRule(GcRule::MaxVersions(1));
  EXPECT_EQ(Values("r").size(), 3u);
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("1"));
}

// ================================================================ Compaction

TEST_F(ClusterTest, CompactionDropsTombstonesAndCoveredCells) {
  for (int i = 0; i < 20; ++i) {
    Put("r", "cf", "q", 1000 * (i + 1), std::string(100, 'x'));
  }
  Put("s", "cf", "q", 1000, "keep");
  const int64_t full = table().Stats().bytes;
  ASSERT_TRUE(Mutate("r", {DelCol("cf", "q", 0, 19'000)}).ok());
  const std::vector<Row> before = Read();
  cluster_.Compact();
  EXPECT_EQ(Read(), before);
  EXPECT_LT(table().Stats().bytes, full / 5);
  EXPECT_THAT(ReadRow("r"),
              ElementsAre(C("cf", "q", 20'000, std::string(100, 'x')),
                          C("cf", "q", 19'000, std::string(100, 'x'))));
}

TEST_F(ClusterTest, CompactionRemovesEmptyRows) {
  for (const char* k : {"a", "b", "c", "d"}) Put(k, "cf", "q", 1000, "v");
  ASSERT_TRUE(Mutate("a", {DelRow()}).ok());
  ASSERT_TRUE(Mutate("b", {DelFam("cf")}).ok());
  ASSERT_TRUE(Mutate("c", {DelCol("cf", "q")}).ok());
  EXPECT_EQ(table().Stats().rows, 4);
  cluster_.Compact();
  EXPECT_EQ(table().Stats().rows, 1);
  EXPECT_THAT(Keys(Read()), ElementsAre("d"));
  // A deleted row can be written again after compaction.
  Put("a", "cf", "q", 1000, "back");
  EXPECT_THAT(ReadRow("a"), ElementsAre(C("cf", "q", 1000, "back")));
}

TEST_F(ClusterTest, DroppedAndRecreatedFamilyDoesNotResurrectData) {
  Put("r", "cf", "q", 1000, "old");
  Put("r", "cf2", "q", 1000, "other");
  const std::vector<FamilyModification> drop = {DropFamily("cf")};
  const std::vector<FamilyModification> create = {CreateFamily("cf")};
  ASSERT_TRUE(table().ModifyColumnFamilies(drop).ok());
  ASSERT_TRUE(table().ModifyColumnFamilies(create).ok());
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf2", "q", 1000, "other")));
  Put("r", "cf", "q2", 1000, "new");
  cluster_.Compact();
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q2", 1000, "new"),
                                        C("cf2", "q", 1000, "other")));
}

TEST_F(ClusterTest, DropRowRangeThroughTheCluster) {
  for (const char* k : {"user#1", "user#2", "user$", "users", "x"}) {
    Put(k, "cf", "q", 1000, "v");
  }
  ASSERT_TRUE(cluster_.DropRowRange("t", "user#").ok());
  EXPECT_THAT(Keys(Read()), ElementsAre("user$", "users", "x"));
  ASSERT_TRUE(cluster_.DropRowRange("t", "").ok());
  EXPECT_THAT(Read(), IsEmpty());
}

}  // namespace
}  // namespace btsim::cluster
