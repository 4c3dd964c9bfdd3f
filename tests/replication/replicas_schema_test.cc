// Schema changes resolve by last-writer-wins on their commit versions, as
// cells do: an older change replayed from a log after a partition never
// undoes a newer one, whether the admin layer also applied the changes
// everywhere at once or not, and writes of an earlier table or family of
// the same name never leak into a later one.
#include <string>
#include <vector>

#include "tests/replication/replicas_test_util.h"

namespace btsim::replication {
namespace {

using namespace test_util;  // NOLINT

std::string GcRuleOf(cluster::Cluster& c, const std::string& family) {
  auto table = c.GetTable("t");
  if (!table.ok()) return "(no table)";
  for (const ColumnFamily& f : (*table)->Families()) {
    if (f.name == family) return f.gc_rule.ToString();
  }
  return "(no family)";
}

std::vector<FamilyModification> SetGc(const std::string& family, GcRule rule) {
  return {FamilyModification{family, FamilyModification::Kind::kUpdate,
                             std::move(rule)}};
}

class ReplicasSchemaTest : public ReplicasTest,
                           public ::testing::WithParamInterface<bool> {
 protected:
  // Changes `family`'s GC rule on `id`; with GetParam(), also applies it on
  // every cluster at once, as the instance's admin layer does.
  void ChangeGc(const std::string& id, const std::string& family, GcRule rule) {
    ASSERT_TRUE(C(id).ModifyColumnFamilies("t", SetGc(family, rule)).ok());
    if (GetParam()) replicas_->ApplyNewestEverywhere(id);
  }
};

TEST_P(ReplicasSchemaTest, AGcRuleChangedDuringAPartitionIsNotUndone) {
  SetLatency(milliseconds(20));
  Add("c1", kEastB);
  Add("c2", kEurope);
  Add("c3", kAsia);
  CreateTable("c1");
  RunUntilIdle();
  // c2 is cut off; its change stays in its log. Ten seconds later c1
  // changes the same rule again.
  transport_.Partition(kEurope, kEastB);
  transport_.Partition(kEurope, kAsia);
  ChangeGc("c2", "cf", GcRule::MaxVersions(3));
  RunFor(seconds(10));
  ChangeGc("c1", "cf", GcRule::MaxVersions(1));
  RunFor(seconds(10));
  transport_.Heal(kEurope, kEastB);
  transport_.Heal(kEurope, kAsia);
  RunUntilIdle();
  for (const char* id : {"c1", "c2", "c3"}) {
    EXPECT_EQ(GcRuleOf(C(id), "cf"), GcRule::MaxVersions(1).ToString()) << id;
  }
  ExpectConverged();
}

TEST_P(ReplicasSchemaTest, ADropAndARecreationWinOverAnOlderCreation) {
  SetLatency(milliseconds(20));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  transport_.Partition(kEastB, kEurope);
  // c1 writes to cf2 (cut off), then cf2 is dropped and created again on
  // c2 with another rule; c1's write belongs to the earlier cf2.
  Mutate("c1", "r", {SetCell{"cf2", "x", cluster::kServerTimestamp, "old"}});
  RunFor(seconds(1));
  const std::vector<FamilyModification> drop = {
      FamilyModification{"cf2", FamilyModification::Kind::kDrop, {}}};
  ASSERT_TRUE(C("c2").ModifyColumnFamilies("t", drop).ok());
  if (GetParam()) replicas_->ApplyNewestEverywhere("c2");
  RunFor(seconds(1));
  const std::vector<FamilyModification> create = {FamilyModification{
      "cf2", FamilyModification::Kind::kCreate, GcRule::MaxVersions(2)}};
  ASSERT_TRUE(C("c2").ModifyColumnFamilies("t", create).ok());
  if (GetParam()) replicas_->ApplyNewestEverywhere("c2");
  transport_.Heal(kEastB, kEurope);
  RunUntilIdle();
  for (const char* id : {"c1", "c2"}) {
    EXPECT_EQ(GcRuleOf(C(id), "cf2"), GcRule::MaxVersions(2).ToString()) << id;
    EXPECT_EQ(ReadAll(C(id)).count("r"), 0u) << id;
  }
  ExpectConverged();
}

TEST_P(ReplicasSchemaTest, ADeletedTableStaysDeletedAndARecreatedOneIsNew) {
  SetLatency(milliseconds(20));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  transport_.Partition(kEastB, kEurope);
  Write("c1", "a", "old");  // to the table c2 deletes and creates again
  RunFor(seconds(1));
  ASSERT_TRUE(C("c2").DeleteTable("t").ok());
  if (GetParam()) replicas_->ApplyNewestEverywhere("c2");
  RunFor(seconds(1));
  CreateTable("c2");
  if (GetParam()) replicas_->ApplyNewestEverywhere("c2");
  Write("c2", "b", "new");
  transport_.Heal(kEastB, kEurope);
  RunUntilIdle();
  for (const char* id : {"c1", "c2"}) {
    EXPECT_EQ(Get(id, "a"), std::nullopt) << id;
    EXPECT_EQ(Get(id, "b"), "new") << id;
  }
  ExpectConverged();

  // A deletion made during a partition wins over the older creation that
  // the other side still replays.
  transport_.Partition(kEastB, kEurope);
  ASSERT_TRUE(C("c1").DeleteTable("t").ok());
  if (GetParam()) replicas_->ApplyNewestEverywhere("c1");
  transport_.Heal(kEastB, kEurope);
  RunUntilIdle();
  for (const char* id : {"c1", "c2"}) {
    EXPECT_THAT(C(id).ListTables(), IsEmpty()) << id;
  }
  ExpectConverged();
}

INSTANTIATE_TEST_SUITE_P(LogOnlyOrAlsoAtOnce, ReplicasSchemaTest,
                         ::testing::Bool());

}  // namespace
}  // namespace btsim::replication
