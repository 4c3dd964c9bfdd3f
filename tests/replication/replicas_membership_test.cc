// Replicas in virtual time: adding clusters (seeded with a copy),
// removing them, re-adding an id, and destroying a Replicas with work still
// pending.
#include "replication/replicas.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/replication/replicas_test_util.h"

// In the helpers' namespace, so that they need no using-declarations.
namespace btsim::replication::test_util {
namespace {

// ---- Adding and removing clusters ----

TEST_F(ReplicasTest, AddedClusterIsSeededWithACopyThenKeptInSync) {
  SetLatency(seconds(1));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  for (int i = 0; i < 20; ++i) Write("c1", "a" + std::to_string(i), "v");
  for (int i = 0; i < 20; ++i) Write("c2", "b" + std::to_string(i), "v");
  RunUntilIdle();
  // A write still on its way from c2 to c1 when c3 joins.
  Write("c2", "late", "v");
  const std::map<std::string, uint64_t> token = replicas_->LogPositions();

  Add("c3", kAsia);  // seeded from c1, the first live cluster
  // Without any time passing, c3 holds everything c1 holds.
  EXPECT_EQ(Contents(C("c3")), Contents(C("c1")));
  EXPECT_EQ(ReadAll(C("c3")).size(), 40u);
  EXPECT_EQ(Get("c3", "late"), std::nullopt);
  EXPECT_THAT(
      replicas_->LogPositions(),
      UnorderedElementsAre(Pair("c1", 21u), Pair("c2", 21u), Pair("c3", 0u)));
  EXPECT_EQ(Backlog("c1", "c3"), 0u);
  EXPECT_EQ(Backlog("c2", "c3"), 1u);
  EXPECT_FALSE(replicas_->HasApplied(token));

  RunUntilIdle();
  EXPECT_TRUE(replicas_->HasApplied(token));
  EXPECT_EQ(Get("c3", "late"), "v");
  // Later writes reach c3, and c3's writes reach the others.
  Write("c1", "after1", "1");
  Write("c3", "after3", "3");
  RunUntilIdle();
  EXPECT_EQ(Get("c3", "after1"), "1");
  EXPECT_EQ(Get("c1", "after3"), "3");
  EXPECT_EQ(Get("c2", "after3"), "3");
  ExpectConverged();
}

TEST_F(ReplicasTest, AddedClusterIsSeededFromTheFirstLiveCluster) {
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  ASSERT_TRUE(replicas_->SetDown("c1", true).ok());
  Write("c2", "x", "from-c2");
  Write("c1", "y", "from-down-c1");
  RunFor(seconds(5));
  ASSERT_EQ(Get("c1", "x"), std::nullopt);

  Add("c3", kAsia);
  // Seeded from c2, not from the down c1.
  EXPECT_EQ(Get("c3", "x"), "from-c2");
  EXPECT_EQ(Get("c3", "y"), std::nullopt);
  EXPECT_EQ(Contents(C("c3")), Contents(C("c2")));
  RunFor(seconds(5));
  EXPECT_EQ(Get("c3", "y"), std::nullopt);  // c1 is still down

  ASSERT_TRUE(replicas_->SetDown("c1", false).ok());
  RunUntilIdle();
  EXPECT_EQ(Get("c3", "y"), "from-down-c1");
  EXPECT_EQ(Get("c1", "x"), "from-c2");
  ExpectConverged();
}

TEST_F(ReplicasTest, RemovedClusterGetsNothingMoreAndTheOthersCarryOn) {
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEastC);
  Add("c3", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  Write("c2", "r", "v");
  RunUntilIdle();

  ASSERT_TRUE(replicas_->RemoveCluster("c2").ok());
  EXPECT_EQ(replicas_->Find("c2"), nullptr);
  EXPECT_THAT(replicas_->ClusterIds(), ElementsAre("c1", "c3"));
  EXPECT_THAT(replicas_->LogPositions(),
              UnorderedElementsAre(Pair("c1", 1u), Pair("c3", 0u)));
  EXPECT_EQ(Backlog("c1", "c2"), 0u);
  EXPECT_TRUE(replicas_->HasApplied({{"c2", 1000}}));
  const int64_t to_c2 = transport_.StatsOf(kEastB, kEastC).sent +
                        transport_.StatsOf(kEurope, kEastC).sent;

  Write("c1", "a", "1");
  Write("c3", "b", "3");
  EXPECT_FALSE(replicas_->HasApplied(replicas_->LogPositions()));
  RunUntilIdle();
  EXPECT_EQ(transport_.StatsOf(kEastB, kEastC).sent +
                transport_.StatsOf(kEurope, kEastC).sent,
            to_c2);
  EXPECT_EQ(Get("c1", "b"), "3");
  EXPECT_EQ(Get("c3", "a"), "1");
  EXPECT_EQ(Get("c3", "r"), "v");  // c2's earlier write stays
  ExpectConverged();
}

TEST_F(ReplicasTest, SurvivorsRelayWhatTheRemovedClusterSentToSomeOfThem) {
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEastC);
  Add("c3", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  // c2's writes reach c1 but not c3; its last write reaches nobody.
  transport_.Partition(kEastC, kEurope);
  for (int i = 0; i < 20; ++i) Write("c2", "r" + std::to_string(i), "v");
  Mutate("c2", "r0", {DeleteFromRow{}});
  RunFor(seconds(1));
  transport_.Partition(kEastC, kEastB);
  Write("c2", "only-c2", "lost");
  RunFor(seconds(1));
  EXPECT_EQ(Backlog("c2", "c1"), 1u);
  EXPECT_EQ(Backlog("c2", "c3"), 22u);
  ASSERT_TRUE(replicas_->RemoveCluster("c2").ok());
  RunUntilIdle();
  for (const char* id : {"c1", "c3"}) {
    EXPECT_EQ(Get(id, "r0"), std::nullopt) << id;
    for (int i = 1; i < 20; ++i) {
      EXPECT_EQ(Get(id, "r" + std::to_string(i)), "v") << id << " r" << i;
    }
    EXPECT_EQ(Get(id, "only-c2"), std::nullopt) << id;
  }
  ExpectConverged();
}

TEST_F(ReplicasTest, AnAddedClusterCommitsAfterEverythingItsCopyHolds) {
  SetLatency(milliseconds(10));
  Add("c1", kEastB);
  CreateTable("c1");
  // c1's clock runs ahead: commits within one microsecond bump it.
  for (int i = 0; i < 50; ++i) Write("c1", "r", "v" + std::to_string(i));
  Add("c2", kEurope);
  EXPECT_GT(C("c1").last_version(),
            cluster::MakeVersion(cluster::TimestampOf(scheduler_.Now()),
                                 (1u << cluster::kOriginBits) - 1));
  Write("c2", "r", "newest");
  EXPECT_GT(C("c2").last_version(), C("c1").last_version());
  RunUntilIdle();
  EXPECT_EQ(Get("c1", "r"), "newest");
  ExpectConverged();
}

TEST_F(ReplicasTest, AChangeOrderedAfterEverythingWinsOverEarlierCommits) {
  SetLatency(milliseconds(10));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  for (int i = 0; i < 50; ++i) Write("c1", "r", "v" + std::to_string(i));
  replicas_->OrderAfterEverything("c2");
  Mutate("c2", "r", {DeleteFromRow{}});
  EXPECT_GT(C("c2").last_version(), C("c1").last_version());
  RunUntilIdle();
  EXPECT_EQ(Get("c1", "r"), std::nullopt);
  ExpectConverged();
}

TEST_F(ReplicasTest, RemovingAnUnreachableClusterLetsReplicationGoIdle) {
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEastC);
  Add("c3", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  transport_.Partition(kEastB, kEastC);
  transport_.Partition(kEurope, kEastC);
  Write("c1", "a", "1");
  RunFor(seconds(5));
  EXPECT_EQ(Backlog("c1", "c2"), 1u);
  EXPECT_EQ(Backlog("c1", "c3"), 0u);
  ASSERT_TRUE(replicas_->RemoveCluster("c2").ok());
  // No retransmit timer toward c2 is left behind.
  RunUntilIdle();
  ExpectConverged();
}

TEST_F(ReplicasTest, RemoveAndReAddAClusterUnderTheSameId) {
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  Write("c2", "r", "1");
  RunUntilIdle();
  ASSERT_TRUE(replicas_->RemoveCluster("c2").ok());
  Write("c1", "s", "2");
  RunUntilIdle();
  Add("c2", kAsia);
  EXPECT_EQ(Get("c2", "s"), "2");
  EXPECT_EQ(Get("c2", "r"), "1");
  EXPECT_EQ(replicas_->LogPositions().at("c2"), 0u);
  Write("c2", "t", "3");
  RunUntilIdle();
  EXPECT_EQ(Get("c1", "t"), "3");
  ExpectConverged();
}

TEST_F(ReplicasTest, DownOriginIgnoresAcknowledgements) {
  SetLatency(seconds(1));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  const Time t0 = scheduler_.Now();
  Write("c1", "r", "v");
  const std::map<std::string, uint64_t> token = replicas_->LogPositions();
  RunUntil(t0 + milliseconds(1500));  // applied on c2; its ack is on the way
  ASSERT_TRUE(replicas_->SetDown("c1", true).ok());
  RunUntil(t0 + seconds(5));
  EXPECT_EQ(Get("c2", "r"), "v");
  EXPECT_TRUE(replicas_->HasApplied(token));
  EXPECT_EQ(Backlog("c1", "c2"), 1u);  // the ack reached a down cluster
  ASSERT_TRUE(replicas_->SetDown("c1", false).ok());
  RunUntilIdle();
  EXPECT_EQ(Backlog("c1", "c2"), 0u);
  ExpectConverged();
}

TEST_F(ReplicasTest, SeededClusterKeepsTheRangeTombstonesOfItsSource) {
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  transport_.Partition(kEastB, kEurope);
  Write("c2", "p1", "old");
  RunFor(milliseconds(5));
  ASSERT_TRUE(C("c1").DropRowRange("t", "p").ok());
  RunFor(seconds(2));
  // Seeded from c1, which dropped "p" after c2's write was committed: the
  // write, shipped to c3 right away, is older than the drop.
  Add("c3", kAsia);
  RunFor(seconds(2));
  EXPECT_THAT(ReadAll(C("c3")), IsEmpty());
  transport_.Heal(kEastB, kEurope);
  RunUntilIdle();
  for (const char* id : {"c1", "c2", "c3"}) {
    EXPECT_THAT(ReadAll(C(id)), IsEmpty()) << id;
  }
  ExpectConverged();
}

// ---- Lifetime ----

TEST_F(ReplicasTest, DestroyedWithTasksStillPendingIsHarmless) {
  SetLatency(seconds(1));
  Add("c1", kEastB);
  Add("c2", kEurope);
  Add("c3", kAsia);
  CreateTable("c1");
  RunUntilIdle();
  const Time t0 = scheduler_.Now();
  Write("c1", "a", "1");
  RunUntil(t0 + milliseconds(500));
  Write("c1", "b", "2");  // waits for the first batch's ack
  Write("c2", "c", "3");
  ASSERT_TRUE(replicas_->SetDown("c3", true).ok());
  RunUntil(t0 + milliseconds(1500));  // batches delivered, acks in flight
  ASSERT_GT(scheduler_.pending(), 0u);
  replicas_.reset();
  // Batches, acks and retransmit timers still in the scheduler find the
  // Replicas gone.
  scheduler_.RunUntilIdle(100'000);
  EXPECT_EQ(scheduler_.pending(), 0u);
}

TEST_F(ReplicasTest, DestroyedRightAfterAWrite) {
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  Write("c1", "a", "1");
  replicas_.reset();
  scheduler_.RunUntilIdle(100'000);
  EXPECT_EQ(scheduler_.pending(), 0u);
}

}  // namespace
}  // namespace btsim::replication::test_util
