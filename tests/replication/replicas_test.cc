// Replicas in virtual time: membership validation and lookups,
// exact timings over constant-latency links, what replicates, positions,
// backlog and truncation, partitions, loss and down clusters. Adding and
// removing clusters: replicas_membership_test.cc; randomized property tests:
// replicas_property_test.cc.
#include "replication/replicas.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "tests/replication/replicas_test_util.h"

// In the helpers' namespace, so that they need no using-declarations.
namespace btsim::replication::test_util {
namespace {

// ---- Cluster membership ----

TEST_F(ReplicasTest, AddClusterRejectsBadIdsAndZones) {
  for (const std::string& bad :
       std::vector<std::string>{"", "1abc", "Abc", "a_b", "a b", "a.b", "-ab",
                                std::string(31, 'a')}) {
    const Status s = replicas_->AddCluster({bad, kEastB});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << "'" << bad << "'";
  }
  EXPECT_EQ(replicas_->AddCluster({"c1", ""}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_THAT(replicas_->ClusterIds(), IsEmpty());

  Add(std::string(30, 'a'), kAsia);  // the longest valid id
  Add("c1", kEastB);
  Add("c-2", kEastC);
  // One cluster per zone.
  const Status same_zone = replicas_->AddCluster({"c3", kEastB});
  EXPECT_EQ(same_zone.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(same_zone.message(), ::testing::HasSubstr(kEastB));
  // A known id, even in a free zone.
  EXPECT_EQ(replicas_->AddCluster({"c1", kEurope}).code(),
            StatusCode::kAlreadyExists);
  Add("c4", kEurope);
  // A fifth cluster.
  EXPECT_EQ(replicas_->AddCluster({"c5", "us-west1-a"}).code(),
            StatusCode::kInvalidArgument);
  EXPECT_THAT(replicas_->ClusterIds(),
              ElementsAre(std::string(30, 'a'), "c1", "c-2", "c4"));
}

TEST_F(ReplicasTest, RemoveClusterValidation) {
  EXPECT_EQ(replicas_->RemoveCluster("c1").code(), StatusCode::kNotFound);
  Add("c1", kEastB);
  Add("c2", kEurope);
  EXPECT_EQ(replicas_->RemoveCluster("nope").code(), StatusCode::kNotFound);
  EXPECT_TRUE(replicas_->RemoveCluster("c1").ok());
  EXPECT_EQ(replicas_->RemoveCluster("c1").code(), StatusCode::kNotFound);
  EXPECT_EQ(replicas_->RemoveCluster("c2").code(),
            StatusCode::kFailedPrecondition);
  EXPECT_THAT(replicas_->ClusterIds(), ElementsAre("c2"));
  // The zone and the id are free again.
  Add("c1", kEastB);
  EXPECT_THAT(replicas_->ClusterIds(), ElementsAre("c2", "c1"));
}

TEST_F(ReplicasTest, LookupsAndDownState) {
  Add("c1", kEastB);
  Add("c2", kEurope);
  ASSERT_NE(replicas_->Spec("c2"), nullptr);
  EXPECT_EQ(replicas_->Spec("c2")->zone, kEurope);
  EXPECT_EQ(replicas_->Spec("c3"), nullptr);
  EXPECT_NE(replicas_->Find("c1"), nullptr);
  EXPECT_NE(replicas_->Find("c1"), replicas_->Find("c2"));
  EXPECT_EQ(replicas_->Find("c3"), nullptr);
  EXPECT_EQ(replicas_->SetDown("c3", true).code(), StatusCode::kNotFound);
  EXPECT_FALSE(replicas_->IsDown("c3"));
  EXPECT_FALSE(replicas_->IsDown("c1"));
  EXPECT_TRUE(replicas_->SetDown("c1", true).ok());
  EXPECT_TRUE(replicas_->IsDown("c1"));
  EXPECT_FALSE(replicas_->IsDown("c2"));
  // Find with the down state: the same cluster, and the same answer.
  bool down = false;
  EXPECT_EQ(replicas_->Find("c1", &down), replicas_->Find("c1"));
  EXPECT_TRUE(down);
  EXPECT_EQ(replicas_->Find("c2", &down), replicas_->Find("c2"));
  EXPECT_FALSE(down);
  down = true;
  EXPECT_EQ(replicas_->Find("c3", &down), nullptr);
  EXPECT_TRUE(down);  // untouched when unknown
  EXPECT_TRUE(replicas_->SetDown("c1", false).ok());
  EXPECT_FALSE(replicas_->IsDown("c1"));
  EXPECT_NE(replicas_->Find("c1", &down), nullptr);
  EXPECT_FALSE(down);
}

TEST_F(ReplicasTest, LookupsTellIdsApartByEveryByte) {
  // Ids of 1 to 10 bytes, three with the same first 8 bytes, one of them a
  // prefix of the other two.
  const std::vector<std::string> ids = {"clusters-a", "clusters-b", "c",
                                        "clusters"};
  const std::vector<std::string> zones = {kEastB, kEastC, kEurope, kAsia};
  for (size_t i = 0; i < ids.size(); ++i) Add(ids[i], zones[i]);
  for (size_t i = 0; i < ids.size(); ++i) {
    ASSERT_NE(replicas_->Spec(ids[i]), nullptr) << ids[i];
    EXPECT_EQ(replicas_->Spec(ids[i])->zone, zones[i]) << ids[i];
    for (size_t j = 0; j < i; ++j) {
      EXPECT_NE(replicas_->Find(ids[i]), replicas_->Find(ids[j])) << ids[i];
    }
  }
  for (std::string_view unknown :
       {"clusters-c", "clusters-", "cluster", "clusters-aa", "", "d"}) {
    EXPECT_EQ(replicas_->Find(unknown), nullptr) << unknown;
  }
  // An id from a buffer that holds more bytes after it.
  const std::string longer = "clusters-b and more";
  EXPECT_EQ(replicas_->Spec(std::string_view(longer).substr(0, 10))->zone,
            kEastC);
  // Lookups follow removals.
  ASSERT_TRUE(replicas_->RemoveCluster("clusters-a").ok());
  EXPECT_EQ(replicas_->Find("clusters-a"), nullptr);
  EXPECT_EQ(replicas_->Spec("clusters-b")->zone, kEastC);
  EXPECT_EQ(replicas_->Spec("clusters")->zone, kAsia);
}

// ---- Timing over constant links ----

TEST_F(ReplicasTest, WriteArrivesExactlyAfterTheLinkLatency) {
  SetLatency(seconds(3));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  ASSERT_THAT(C("c2").ListTables(), ElementsAre("t"));

  const Time t0 = scheduler_.Now();
  Write("c1", "r", "v");
  const std::map<std::string, uint64_t> token = replicas_->LogPositions();
  EXPECT_FALSE(replicas_->HasApplied(token));
  EXPECT_EQ(Backlog("c1", "c2"), 1u);

  RunUntil(t0 + milliseconds(2900));
  EXPECT_EQ(Get("c2", "r"), std::nullopt);
  EXPECT_FALSE(replicas_->HasApplied(token));
  RunUntil(t0 + seconds(3) - Duration(1));
  EXPECT_EQ(Get("c2", "r"), std::nullopt);

  // Delivered at exactly t0 + 3 s.
  RunUntil(t0 + seconds(3));
  EXPECT_EQ(Get("c2", "r"), "v");
  EXPECT_TRUE(replicas_->HasApplied(token));
  // The acknowledgement takes another 3 s to come back.
  EXPECT_EQ(Backlog("c1", "c2"), 1u);
  RunUntil(t0 + seconds(6) - Duration(1));
  EXPECT_EQ(Backlog("c1", "c2"), 1u);
  RunUntil(t0 + seconds(6));
  EXPECT_EQ(Backlog("c1", "c2"), 0u);

  RunUntilIdle();
  EXPECT_EQ(Get("c2", "r"), "v");
  ExpectConverged();
}

TEST_F(ReplicasTest, WritesTravelBothWays) {
  SetLatency(milliseconds(50));
  Add("c1", kEastB);
  Add("c2", kEastC);
  CreateTable("c2");
  RunUntilIdle();
  Write("c1", "from1", "a");
  Write("c2", "from2", "b");
  EXPECT_EQ(Get("c1", "from2"), std::nullopt);
  EXPECT_EQ(Get("c2", "from1"), std::nullopt);
  RunFor(milliseconds(50));
  EXPECT_EQ(Get("c1", "from2"), "b");
  EXPECT_EQ(Get("c2", "from1"), "a");
  RunUntilIdle();
  ExpectConverged();
}

ReplicationOptions SmallWindow(sim::Duration batch_interval) {
  ReplicationOptions o;
  o.batch_entries = 3;
  o.batches_in_flight = 2;
  o.batch_interval = batch_interval;
  o.initial_retransmit = seconds(10);
  return o;
}

class SmallWindowReplicasTest : public ReplicasTest {
 protected:
  SmallWindowReplicasTest() : ReplicasTest(SmallWindow(Duration(0))) {}
};

TEST_F(SmallWindowReplicasTest, ShipsAWindowOfBatchesOfAtMostBatchEntries) {
  SetLatency(seconds(1));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  const Time t0 = scheduler_.Now();
  for (int i = 0; i < 7; ++i) Write("c1", "r" + std::to_string(i), "v");
  EXPECT_EQ(Backlog("c1", "c2"), 7u);
  // The first two writes left at once, one per batch (the window is two
  // batches); the others wait for their acks (at t0 + 2 s), then go three
  // at a time.
  RunUntil(t0 + seconds(1) - Duration(1));
  EXPECT_THAT(Keys(ReadAll(C("c2"))), IsEmpty());
  RunUntil(t0 + seconds(1));
  EXPECT_THAT(Keys(ReadAll(C("c2"))), ElementsAre("r0", "r1"));
  RunUntil(t0 + seconds(2));
  EXPECT_EQ(Backlog("c1", "c2"), 5u);
  RunUntil(t0 + seconds(3) - Duration(1));
  EXPECT_EQ(ReadAll(C("c2")).size(), 2u);
  RunUntil(t0 + seconds(3));
  EXPECT_EQ(ReadAll(C("c2")).size(), 7u);
  RunUntil(t0 + seconds(4));
  EXPECT_EQ(Backlog("c1", "c2"), 0u);
  RunUntilIdle();
  ExpectConverged();
}

class BatchIntervalReplicasTest : public ReplicasTest {
 protected:
  BatchIntervalReplicasTest() : ReplicasTest(SmallWindow(milliseconds(100))) {}
};

TEST_F(BatchIntervalReplicasTest, APartFullBatchWaitsForTheBatchingInterval) {
  SetLatency(seconds(1));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  const Time t0 = scheduler_.Now();
  Write("c1", "r0", "v");  // an idle link: at once
  Write("c1", "r1", "v");  // waits for t0 + 100 ms
  RunUntil(t0 + milliseconds(50));
  Write("c1", "r2", "v");  // joins it
  RunUntil(t0 + milliseconds(60));
  for (int i = 3; i < 6; ++i) Write("c1", "r" + std::to_string(i), "v");
  // At t0 + 100 ms a full batch goes (r1..r3); then the window (two
  // batches) is full until the ack of t0 + 2 s.
  RunUntil(t0 + seconds(1));
  EXPECT_THAT(Keys(ReadAll(C("c2"))), ElementsAre("r0"));
  RunUntil(t0 + milliseconds(1100) - Duration(1));
  EXPECT_EQ(ReadAll(C("c2")).size(), 1u);
  RunUntil(t0 + milliseconds(1100));
  EXPECT_THAT(Keys(ReadAll(C("c2"))), ElementsAre("r0", "r1", "r2", "r3"));
  RunUntil(t0 + seconds(3) - Duration(1));
  EXPECT_EQ(ReadAll(C("c2")).size(), 4u);
  RunUntil(t0 + seconds(3));
  EXPECT_EQ(ReadAll(C("c2")).size(), 6u);
  RunUntilIdle();
  ExpectConverged();
}

TEST_F(ReplicasTest, LostBatchIsRetransmittedAfterTheMeasuredTimeout) {
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();  // one round trip of 200 ms measured
  transport_.Partition(kEastB, kEurope);
  const Time t0 = scheduler_.Now();
  Write("c1", "r", "v");  // dropped: the link is cut when it is sent
  EXPECT_EQ(transport_.StatsOf(kEastB, kEurope).partitioned, 1);
  RunUntil(t0 + milliseconds(500));
  transport_.Heal(kEastB, kEurope);
  // Sent again at t0 + srtt + 4 rttvar = 200 ms + 4 x 100 ms.
  RunUntil(t0 + milliseconds(700) - Duration(1));
  EXPECT_EQ(Get("c2", "r"), std::nullopt);
  RunUntil(t0 + milliseconds(700));
  EXPECT_EQ(Get("c2", "r"), "v");
  RunUntilIdle();
  ExpectConverged();
}

TEST_F(ReplicasTest, RepeatedTimeoutsBackOffToTheCap) {
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  transport_.Partition(kEastB, kEurope);
  const Time t0 = scheduler_.Now();
  Write("c1", "r", "v");
  // Timeouts of 600 ms, then 1.2 s (the cap: twice the measured timeout,
  // above max_retransmit's 1 s), 1.2 s, ...: sends at 0, 0.6, 1.8, 3.0, 4.2.
  RunUntil(t0 + milliseconds(4300));
  EXPECT_EQ(transport_.StatsOf(kEastB, kEurope).partitioned, 5);
  transport_.Heal(kEastB, kEurope);
  RunUntil(t0 + milliseconds(5400) + milliseconds(100));
  EXPECT_EQ(Get("c2", "r"), "v");
  RunUntilIdle();
  ExpectConverged();
}

TEST_F(ReplicasTest, ApplyHookFiresOncePerAppliedEntryNotForDuplicates) {
  struct Applied {
    std::string origin, peer;
    uint64_t position;
    cluster::CommitRecord::Kind kind;
    std::string row;
    Time committed_at, applied_at;
  };
  std::vector<Applied> applied;
  replicas_->set_apply_hook([&](const AppliedInfo& info) {
    applied.push_back(Applied{std::string(info.origin), std::string(info.peer),
                              info.position, info.record.kind,
                              info.record.row_key, info.committed_at(),
                              info.applied_at});
  });
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  ASSERT_EQ(applied.size(), 1u);  // the schema record, on c2
  EXPECT_EQ(applied[0].kind, cluster::CommitRecord::Kind::kCreateTable);
  EXPECT_EQ(applied[0].origin, "c1");
  EXPECT_EQ(applied[0].peer, "c2");
  applied.clear();

  // Acknowledgements from c2 are lost, so c1 sends the batch again and
  // again: c2 applies it once.
  transport_.Partition(kEurope, kEastB, /*one_way=*/true);
  const Time t0 = scheduler_.Now();
  Write("c1", "a", "1");
  Write("c1", "b", "2");
  RunUntil(t0 + milliseconds(3500));
  EXPECT_GE(transport_.StatsOf(kEastB, kEurope).delivered, 3);  // resent
  transport_.Heal(kEurope, kEastB);
  RunUntilIdle();
  ASSERT_EQ(applied.size(), 2u);
  for (size_t i = 0; i < applied.size(); ++i) {
    EXPECT_EQ(applied[i].origin, "c1");
    EXPECT_EQ(applied[i].peer, "c2");
    EXPECT_EQ(applied[i].kind, cluster::CommitRecord::Kind::kMutateRow);
    EXPECT_EQ(applied[i].position, applied[0].position + i);
    // Both committed at t0 (to the microsecond).
    EXPECT_LE(applied[i].committed_at, t0 + Duration(1000));
    EXPECT_GE(applied[i].committed_at, t0);
  }
  // "a" left alone at once and "b" after the batching interval (10 ms);
  // their acks never came, and the resends repeated both.
  EXPECT_EQ(applied[0].row, "a");
  EXPECT_EQ(applied[0].applied_at, t0 + milliseconds(100));
  EXPECT_EQ(applied[1].row, "b");
  EXPECT_EQ(applied[1].applied_at, t0 + milliseconds(110));
  ExpectConverged();

  // Writes the other way are reported with c2 as the origin.
  applied.clear();
  Write("c2", "c", "3");
  RunUntilIdle();
  ASSERT_EQ(applied.size(), 1u);
  EXPECT_EQ(applied[0].origin, "c2");
  EXPECT_EQ(applied[0].peer, "c1");
  EXPECT_EQ(applied[0].row, "c");
}

TEST_F(ReplicasTest, ApplyHookMarksTheLastEntryOfEachBatch) {
  struct Applied {
    std::string row;
    bool last;
    Time at;
  };
  std::vector<Applied> applied;
  replicas_->set_apply_hook([&](const AppliedInfo& info) {
    applied.push_back(
        Applied{info.record.row_key, info.last_of_batch, info.applied_at});
  });
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  ASSERT_EQ(applied.size(), 1u);  // the schema record, alone
  EXPECT_TRUE(applied[0].last);
  applied.clear();
  // "x" leaves at once; "y" and "z" wait for the batching interval and
  // leave together.
  Write("c1", "x", "1");
  Write("c1", "y", "2");
  Write("c1", "z", "3");
  RunUntilIdle();
  ASSERT_EQ(applied.size(), 3u);
  EXPECT_EQ(applied[0].row, "x");
  EXPECT_TRUE(applied[0].last);
  EXPECT_EQ(applied[1].row, "y");
  EXPECT_FALSE(applied[1].last);
  EXPECT_EQ(applied[2].row, "z");
  EXPECT_TRUE(applied[2].last);
  EXPECT_LT(applied[0].at, applied[1].at);
  EXPECT_EQ(applied[1].at, applied[2].at);
}

TEST_F(ReplicasTest, StaleBatchArrivingAfterTruncationIsSkipped) {
  // Batches name log positions and are read from the log on arrival. A
  // batch is resent (after a timeout measured on a faster link) while the
  // ack of an earlier copy is on its way; that ack truncates the entries
  // and new entries reuse their log storage before the resent copy
  // arrives, which must apply nothing.
  int applied_rows = 0;
  std::vector<uint64_t> positions;
  replicas_->set_apply_hook([&](const AppliedInfo& info) {
    if (info.record.kind != cluster::CommitRecord::Kind::kMutateRow) return;
    ++applied_rows;
    positions.push_back(info.position);
  });
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();  // a 200 ms round trip: a 600 ms timeout
  SetLatency(milliseconds(800));
  const int n = static_cast<int>(ReplicationLog::kChunkEntries) + 44;
  const int64_t sent = transport_.StatsOf(kEastB, kEurope).delivered;
  const Time t0 = scheduler_.Now();
  // The first batches (the first write alone, the others 10 ms later) are
  // lost. Resends of all n writes leave at t0 + 0.6 s and, the timeout
  // doubled, t0 + 1.8 s, and arrive at t0 + 1.4 s and 2.6 s; the first
  // one's ack is back at t0 + 2.2 s.
  transport_.Partition(kEastB, kEurope, /*one_way=*/true);
  for (int i = 0; i < n; ++i) Write("c1", "a" + std::to_string(i), "1");
  RunUntil(t0 + milliseconds(500));
  transport_.Heal(kEastB, kEurope);
  RunUntil(t0 + milliseconds(2300));  // the first resend's ack truncated
  EXPECT_EQ(applied_rows, n);
  EXPECT_EQ(Backlog("c1", "c2"), 0u);
  for (int i = 0; i < n; ++i) Write("c1", "b" + std::to_string(i), "2");
  Write("c1", "a0", "3");
  EXPECT_EQ(Backlog("c1", "c2"), static_cast<uint64_t>(n + 1));
  RunUntil(t0 + milliseconds(2600));  // the second resend arrives
  EXPECT_EQ(transport_.StatsOf(kEastB, kEurope).delivered, sent + 2);
  EXPECT_EQ(applied_rows, n);
  RunUntilIdle();
  EXPECT_EQ(applied_rows, 2 * n + 1);
  for (size_t i = 1; i < positions.size(); ++i) {
    EXPECT_EQ(positions[i], positions[i - 1] + 1);
  }
  EXPECT_EQ(Get("c2", "a0"), "3");
  EXPECT_EQ(Get("c2", "b1"), "2");
  ExpectConverged();
}

TEST_F(ReplicasTest, StaleBatchFromARemovedOriginIsDropped) {
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEurope);
  Add("c3", kAsia);
  CreateTable("c1");
  RunUntilIdle();
  SetLatency(seconds(2));
  Write("c3", "x", "1");  // in flight to c1 and c2 when c3 goes
  RunFor(milliseconds(500));
  ASSERT_TRUE(replicas_->RemoveCluster("c3").ok());
  RunUntilIdle();
  EXPECT_EQ(Get("c1", "x"), std::nullopt);
  EXPECT_EQ(Get("c2", "x"), std::nullopt);
  ExpectConverged();
}

// ---- What replicates ----

TEST_F(ReplicasTest, SchemaChangesReplicate) {
  SetLatency(milliseconds(10));
  Add("c1", kEastB);
  Add("c2", kEurope);
  Add("c3", kAsia);
  const std::vector<FamilyModification> families = {
      CreateFamily("a", GcRule::MaxVersions(2)), CreateFamily("b")};
  ASSERT_TRUE(C("c1").CreateTable("s", families, {"m", "g"}).ok());
  EXPECT_THAT(C("c2").ListTables(), IsEmpty());
  RunUntilIdle();
  for (const char* id : {"c2", "c3"}) {
    EXPECT_THAT(C(id).ListTables(), ElementsAre("s")) << id;
    EXPECT_EQ(FamiliesOf(C(id), "s"), FamiliesOf(C("c1"), "s")) << id;
    EXPECT_EQ((*C(id).GetTable("s"))->Stats().tablets, 3) << id;
  }
  ASSERT_EQ(FamiliesOf(C("c1"), "s").size(), 2u);

  // Create, update the GC rule of, and drop families on another cluster.
  const std::vector<FamilyModification> mods = {
      CreateFamily("c"),
      FamilyModification{"a", FamilyModification::Kind::kUpdate,
                         GcRule::MaxAge(std::chrono::hours(1))},
      FamilyModification{"b", FamilyModification::Kind::kDrop, {}}};
  ASSERT_TRUE(C("c2").ModifyColumnFamilies("s", mods).ok());
  RunUntilIdle();
  const auto expected = FamiliesOf(C("c2"), "s");
  ASSERT_EQ(expected.size(), 2u);
  EXPECT_EQ(expected[0].first, "a");
  EXPECT_EQ(expected[0].second,
            GcRule::MaxAge(std::chrono::hours(1)).ToString());
  EXPECT_EQ(expected[1].first, "c");
  EXPECT_EQ(FamiliesOf(C("c1"), "s"), expected);
  EXPECT_EQ(FamiliesOf(C("c3"), "s"), expected);
  ExpectConverged();

  ASSERT_TRUE(C("c3").DeleteTable("s").ok());
  RunUntilIdle();
  for (const char* id : {"c1", "c2", "c3"}) {
    EXPECT_THAT(C(id).ListTables(), IsEmpty()) << id;
  }
  ExpectConverged();
}

TEST_F(ReplicasTest, GcRuleChangeReplicatesAndCompactionAppliesItEverywhere) {
  SetLatency(milliseconds(10));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  for (int ts = 1; ts <= 3; ++ts)
    Write("c1", "r", "v" + std::to_string(ts),
          cluster::TimestampFromMicros(ts * 1000));
  RunUntilIdle();
  EXPECT_EQ(ReadAll(C("c2"))["r"].size(), 3u);
  const std::vector<FamilyModification> mods = {FamilyModification{
      "cf", FamilyModification::Kind::kUpdate, GcRule::MaxVersions(1)}};
  ASSERT_TRUE(C("c1").ModifyColumnFamilies("t", mods).ok());
  RunUntilIdle();
  replicas_->CompactAll();
  for (const char* id : {"c1", "c2"}) {
    EXPECT_THAT(ReadAll(C(id))["r"], ElementsAre(Cell{"cf", "q", 3000, "v3"}))
        << id;
  }
  ExpectConverged();
}

TEST_F(ReplicasTest, DeletesAndDropRowRangeReplicate) {
  SetLatency(milliseconds(20));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  for (const char* row : {"a1", "a2", "b1", "b2", "c1"}) Write("c1", row, "v");
  Mutate("c1", "c1",
         {SetCell{"cf2", "x", cluster::TimestampFromMicros(5000), "w"}});
  RunUntilIdle();
  ASSERT_THAT(Keys(ReadAll(C("c2"))),
              ElementsAre("a1", "a2", "b1", "b2", "c1"));
  ASSERT_TRUE(C("c2").DropRowRange("t", "a").ok());
  Mutate("c2", "b1", {DeleteFromRow{}});
  Mutate("c2", "b2", {DeleteFromColumn{"cf", "q", {}, {}}});
  Mutate("c2", "c1", {DeleteFromFamily{"cf"}});
  EXPECT_EQ(ReadAll(C("c1")).size(), 5u);
  RunUntilIdle();
  const Rows rows = ReadAll(C("c1"));
  EXPECT_THAT(Keys(rows), ElementsAre("c1"));
  EXPECT_THAT(rows.at("c1"), ElementsAre(Cell{"cf2", "x", 5000, "w"}));
  ExpectConverged();
}

TEST_F(ReplicasTest, DropRowRangeCoversAnOlderWriteThatArrivesLater) {
  SetLatency(milliseconds(20));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  transport_.Partition(kEastB, kEurope);
  Write("c1", "p1", "old");
  RunFor(milliseconds(5));
  ASSERT_TRUE(C("c2").DropRowRange("t", "p").ok());
  RunFor(seconds(5));
  transport_.Heal(kEastB, kEurope);
  RunUntilIdle();
  EXPECT_THAT(ReadAll(C("c1")), IsEmpty());
  EXPECT_THAT(ReadAll(C("c2")), IsEmpty());
  ExpectConverged();
}

TEST_F(ReplicasTest, ConcurrentWritesOfOneCellResolveTheSameEverywhere) {
  SetLatency(milliseconds(30));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  // Same virtual instant, same cell: the higher origin (c2) wins.
  RunFor(milliseconds(1));
  Write("c1", "r", "from-c1", cluster::TimestampFromMicros(1000));
  Write("c2", "r", "from-c2", cluster::TimestampFromMicros(1000));
  RunUntilIdle();
  EXPECT_EQ(Get("c1", "r"), "from-c2");
  EXPECT_EQ(Get("c2", "r"), "from-c2");
  // A later commit wins regardless of origin.
  RunFor(milliseconds(1));
  Write("c1", "r", "later", cluster::TimestampFromMicros(1000));
  RunUntilIdle();
  EXPECT_EQ(Get("c1", "r"), "later");
  EXPECT_EQ(Get("c2", "r"), "later");
  ExpectConverged();
}

// ---- Positions, tokens, backlog and truncation ----

TEST_F(ReplicasTest, LogPositionsHasAppliedAndBacklog) {
  SetLatency(seconds(1));
  Add("c1", kEastB);
  Add("c2", kEurope);
  EXPECT_THAT(replicas_->LogPositions(),
              UnorderedElementsAre(Pair("c1", 0u), Pair("c2", 0u)));
  EXPECT_TRUE(replicas_->HasApplied(replicas_->LogPositions()));
  CreateTable("c1");
  EXPECT_THAT(replicas_->LogPositions(),
              UnorderedElementsAre(Pair("c1", 1u), Pair("c2", 0u)));
  EXPECT_FALSE(replicas_->HasApplied(replicas_->LogPositions()));
  RunUntilIdle();
  EXPECT_TRUE(replicas_->HasApplied(replicas_->LogPositions()));

  for (int i = 0; i < 5; ++i) Write("c1", "a" + std::to_string(i), "v");
  for (int i = 0; i < 2; ++i) Write("c2", "b" + std::to_string(i), "v");
  const std::map<std::string, uint64_t> token = replicas_->LogPositions();
  EXPECT_THAT(token, UnorderedElementsAre(Pair("c1", 6u), Pair("c2", 2u)));
  EXPECT_EQ(Backlog("c1", "c2"), 5u);
  EXPECT_EQ(Backlog("c2", "c1"), 2u);
  EXPECT_EQ(Backlog("c1", "c1"), 0u);
  EXPECT_EQ(Backlog("nope", "c1"), 0u);
  EXPECT_EQ(Backlog("c1", "nope"), 0u);
  EXPECT_FALSE(replicas_->HasApplied(token));
  EXPECT_FALSE(replicas_->HasApplied({{"c2", 1}}));
  EXPECT_TRUE(replicas_->HasApplied({{"c1", 1}}));  // the table creation
  EXPECT_TRUE(replicas_->HasApplied({}));
  EXPECT_TRUE(replicas_->HasApplied({{"gone", 100}}));  // unknown ids: ignored

  RunUntilIdle();
  EXPECT_TRUE(replicas_->HasApplied(token));
  EXPECT_TRUE(replicas_->HasApplied({{"c2", 2}, {"c1", 6}}));
  EXPECT_FALSE(replicas_->HasApplied({{"c2", 3}}));  // not written yet
  EXPECT_EQ(Backlog("c1", "c2"), 0u);
  EXPECT_EQ(Backlog("c2", "c1"), 0u);
  EXPECT_EQ(replicas_->LogPositions(), token);
  ExpectConverged();
}

TEST_F(ReplicasTest, ManyWritesKeepTheBacklogBoundedAndDrainIt) {
  // Default (distance) latencies: a few milliseconds between us-east1 and
  // ~40 ms to Europe. A steady stream of writes must not pile up.
  Add("c1", kEastB);
  Add("c2", kEastC);
  Add("c3", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  uint64_t max_backlog = 0;
  for (int i = 0; i < 3000; ++i) {
    const char* id = i % 3 == 0 ? "c1" : i % 3 == 1 ? "c2" : "c3";
    Write(id, "r" + std::to_string(i % 200), std::to_string(i));
    RunFor(milliseconds(2));
    for (const char* from : {"c1", "c2", "c3"}) {
      for (const char* to : {"c1", "c2", "c3"}) {
        max_backlog = std::max(max_backlog, Backlog(from, to));
      }
    }
  }
  EXPECT_GT(max_backlog, 0u);
  EXPECT_LT(max_backlog, 200u);
  RunUntilIdle();
  EXPECT_THAT(replicas_->LogPositions(),
              UnorderedElementsAre(Pair("c1", 1001u), Pair("c2", 1000u),
                                   Pair("c3", 1000u)));
  ExpectConverged();
  // A cluster added now is seeded from truncated logs and catches up.
  Add("c4", kAsia);
  EXPECT_EQ(Contents(C("c4")), Contents(C("c1")));
  Write("c4", "new", "v");
  Write("c2", "new2", "v");
  RunUntilIdle();
  ExpectConverged();
}

TEST_F(ReplicasTest, SingleClusterInstanceThenASecondCluster) {
  SetLatency(milliseconds(10));
  Add("c1", kEastB);
  CreateTable("c1");
  for (int i = 0; i < 1000; ++i) Write("c1", "r" + std::to_string(i), "v");
  EXPECT_THAT(replicas_->LogPositions(), ElementsAre(Pair("c1", 1001u)));
  EXPECT_TRUE(replicas_->HasApplied(replicas_->LogPositions()));
  RunUntilIdle();  // nothing to ship: no timers
  Add("c2", kEurope);
  EXPECT_EQ(ReadAll(C("c2")).size(), 1000u);
  EXPECT_EQ(Backlog("c1", "c2"), 0u);
  Write("c1", "after", "1");
  Write("c2", "after2", "2");
  EXPECT_EQ(Backlog("c1", "c2"), 1u);
  RunUntilIdle();
  EXPECT_EQ(Get("c2", "after"), "1");
  EXPECT_EQ(Get("c1", "after2"), "2");
  ExpectConverged();
}

TEST_F(ReplicasTest, CompactAllKeepsTombstonesWhileOlderChangesArePending) {
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  transport_.Partition(kEastB, kEurope);
  // c2 writes first; c1 deletes the row later, before c2's write arrives.
  Write("c2", "r", "old");
  RunFor(milliseconds(5));
  Mutate("c1", "r", {DeleteFromRow{}});
  RunFor(seconds(3));
  replicas_->CompactAll();
  // The tombstone must survive: it still has to cover c2's older write.
  EXPECT_EQ(StoredRows("c1"), 1);
  transport_.Heal(kEastB, kEurope);
  RunUntilIdle();
  EXPECT_THAT(ReadAll(C("c1")), IsEmpty());
  EXPECT_THAT(ReadAll(C("c2")), IsEmpty());
  ExpectConverged();
  // Once nothing is pending, compaction drops the tombstones everywhere.
  RunFor(milliseconds(1));
  replicas_->CompactAll();
  EXPECT_EQ(StoredRows("c1"), 0);
  EXPECT_EQ(StoredRows("c2"), 0);
  ExpectConverged();
}

// Found by fuzzing (tests/fuzz/corpus/replication/regression-skewed-clock):
// compaction dropped a tombstone newer than another cluster's clock, and
// that cluster's next write, older than the delete, then came back on one
// cluster only.
TEST_F(ReplicasTest, CompactAllKeepsTombstonesNewerThanASkewedClock) {
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  Write("c1", "r", "x");
  RunUntilIdle();
  // c2's clock stays where it is for the next 2 s.
  ASSERT_TRUE(replicas_->SetClockOffset("c2", -seconds(2)).ok());
  transport_.Partition(kEastB, kEurope);
  RunFor(milliseconds(5));
  Mutate("c1", "r", {DeleteFromRow{}});
  RunFor(milliseconds(500));
  // The tombstone must survive: c2 still commits older versions.
  replicas_->CompactAll();
  Write("c2", "r", "older than the delete");
  transport_.Heal(kEastB, kEurope);
  RunUntilIdle();
  replicas_->CompactAll();
  EXPECT_THAT(ReadAll(C("c1")), IsEmpty());
  EXPECT_THAT(ReadAll(C("c2")), IsEmpty());
  ExpectConverged();
}

// Found by fuzzing (tests/fuzz/corpus/replication/
// regression-gc-rule-change-with-skew): a cluster whose clock runs behind
// judged GC up to the scheduler's time, past its own next commit. A cell
// older than the max age at that time was collected there; the rule was
// then relaxed (everywhere at once, as the admin layer does), at a version
// from the cluster's own clock, when the cell was not yet that old, so the
// other cluster kept it: the clusters never converged.
TEST_F(ReplicasTest, CompactAllJudgesNoFurtherThanTheClustersOwnClock) {
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  auto set_rule_everywhere = [&](GcRule rule) {
    const std::vector<FamilyModification> mods = {
        {"cf", FamilyModification::Kind::kUpdate, std::move(rule)}};
    replicas_->OrderAfterEverything("c1");
    ASSERT_TRUE(C("c1").ModifyColumnFamilies("t", mods).ok());
    replicas_->ApplyNewestEverywhere("c1");
  };
  set_rule_everywhere(GcRule::MaxAge(seconds(1)));
  // c1 commits at most 2 s behind the scheduler's time from here on.
  ASSERT_TRUE(replicas_->SetClockOffset("c1", -seconds(2)).ok());
  Write("c1", "r", "v");
  RunFor(milliseconds(1500));
  // By the scheduler's time the cell is older than 1 s, but c1 may still
  // commit changes from before then.
  replicas_->CompactAll();
  set_rule_everywhere(GcRule::MaxAge(std::chrono::hours(1)));
  ASSERT_TRUE(replicas_->SetClockOffset("c1", Duration(0)).ok());
  RunUntilIdle();
  replicas_->CompactAll();
  // The cell was never 1 s old under the first rule.
  EXPECT_EQ(Get("c1", "r"), "v");
  EXPECT_EQ(Get("c2", "r"), "v");
  ExpectConverged();
}

// ---- Partitions, loss, down clusters ----

TEST_F(ReplicasTest, PartitionBacksUpTheLogsAndHealDrainsThem) {
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  const int64_t delivered = transport_.StatsOf(kEastB, kEurope).delivered;
  transport_.Partition(kEastB, kEurope);
  for (int i = 0; i < 10; ++i) {
    Write("c1", "a" + std::to_string(i), "v");
    Write("c2", "b" + std::to_string(i), "v");
    RunFor(milliseconds(100));
  }
  RunFor(seconds(30));
  EXPECT_EQ(Backlog("c1", "c2"), 10u);
  EXPECT_EQ(Backlog("c2", "c1"), 10u);
  EXPECT_EQ(ReadAll(C("c1")).size(), 10u);
  EXPECT_EQ(ReadAll(C("c2")).size(), 10u);
  EXPECT_EQ(Get("c2", "a0"), std::nullopt);
  EXPECT_EQ(transport_.StatsOf(kEastB, kEurope).delivered, delivered);
  EXPECT_GT(transport_.StatsOf(kEastB, kEurope).partitioned, 10);
  EXPECT_FALSE(replicas_->HasApplied(replicas_->LogPositions()));

  transport_.Heal(kEastB, kEurope);
  RunUntilIdle();
  EXPECT_EQ(ReadAll(C("c1")).size(), 20u);
  ExpectConverged();
}

TEST_F(ReplicasTest, OneWayPartitionLetsOnlyTheOtherDirectionThrough) {
  SetLatency(milliseconds(100));
  Add("a", kEastB);
  Add("b", kEurope);
  CreateTable("a");
  RunUntilIdle();
  transport_.Partition(kEastB, kEurope, /*one_way=*/true);  // a -> b cut
  Write("a", "from-a", "1");
  Write("b", "from-b", "2");
  const uint64_t a_position = replicas_->LogPositions().at("a");
  const uint64_t b_position = replicas_->LogPositions().at("b");
  RunFor(seconds(10));
  EXPECT_EQ(Get("a", "from-b"), "2");           // b -> a works
  EXPECT_EQ(Get("b", "from-a"), std::nullopt);  // a -> b does not
  EXPECT_TRUE(replicas_->HasApplied({{"b", b_position}}));
  EXPECT_FALSE(replicas_->HasApplied({{"a", a_position}}));
  EXPECT_EQ(Backlog("a", "b"), 1u);
  // a applied b's write, but its acks travel a -> b and are cut too.
  EXPECT_EQ(Backlog("b", "a"), 1u);
  EXPECT_EQ(transport_.StatsOf(kEurope, kEastB).partitioned, 0);
  EXPECT_GT(transport_.StatsOf(kEastB, kEurope).partitioned, 0);
  transport_.Heal(kEastB, kEurope);
  RunUntilIdle();
  EXPECT_EQ(Get("b", "from-a"), "1");
  ExpectConverged();
}

TEST_F(ReplicasTest, LossOnlyDelaysReplication) {
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  transport_.SetLoss(kEastB, kEurope, 0.5);
  for (int i = 0; i < 50; ++i) {
    Write("c1", "a" + std::to_string(i), "v");
    Write("c2", "b" + std::to_string(i), "v");
    RunFor(milliseconds(50));
  }
  RunUntilIdle();
  EXPECT_GT(transport_.StatsOf(kEastB, kEurope).lost, 0);
  EXPECT_GT(transport_.StatsOf(kEurope, kEastB).lost, 0);
  EXPECT_EQ(ReadAll(C("c1")).size(), 100u);
  ExpectConverged();
}

TEST_F(ReplicasTest, DownClusterReceivesNothingKeepsItsDataAndCatchesUp) {
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEastC);
  Add("c3", kEurope);
  CreateTable("c1");
  Write("c1", "before", "v");
  RunUntilIdle();
  ASSERT_EQ(Get("c2", "before"), "v");

  ASSERT_TRUE(replicas_->SetDown("c2", true).ok());
  Write("c1", "while-down", "1");
  // Callers may still commit on the down cluster's engine directly.
  Write("c2", "on-down", "2");
  RunFor(seconds(10));
  EXPECT_EQ(Get("c3", "while-down"), "1");
  EXPECT_EQ(Get("c2", "while-down"), std::nullopt);
  EXPECT_EQ(Get("c2", "before"), "v");  // its data is kept
  EXPECT_EQ(Get("c1", "on-down"), std::nullopt);
  EXPECT_EQ(Get("c3", "on-down"), std::nullopt);
  EXPECT_EQ(Backlog("c1", "c2"), 1u);
  EXPECT_EQ(Backlog("c1", "c3"), 0u);
  EXPECT_EQ(Backlog("c2", "c1"), 1u);
  EXPECT_EQ(Backlog("c2", "c3"), 1u);
  EXPECT_FALSE(replicas_->HasApplied(replicas_->LogPositions()));

  ASSERT_TRUE(replicas_->SetDown("c2", false).ok());
  RunUntilIdle();
  EXPECT_EQ(Get("c2", "while-down"), "1");
  EXPECT_EQ(Get("c1", "on-down"), "2");
  EXPECT_EQ(Get("c3", "on-down"), "2");
  ExpectConverged();
}

TEST_F(ReplicasTest, ComingBackUpShipsAtOnceWithoutWaitingForATimer) {
  SetLatency(milliseconds(100));
  Add("c1", kEastB);
  Add("c2", kEurope);
  CreateTable("c1");
  RunUntilIdle();
  ASSERT_TRUE(replicas_->SetDown("c2", true).ok());
  const Time t0 = scheduler_.Now();
  Write("c1", "r", "v");
  Write("c2", "s", "w");
  // Retransmits tick at t0 + 1 s, 2 s, ...; come back between two ticks.
  RunUntil(t0 + milliseconds(10'500));
  EXPECT_EQ(Get("c2", "r"), std::nullopt);
  ASSERT_TRUE(replicas_->SetDown("c2", false).ok());
  RunUntil(t0 + milliseconds(10'600) - Duration(1));
  EXPECT_EQ(Get("c2", "r"), std::nullopt);
  EXPECT_EQ(Get("c1", "s"), std::nullopt);
  RunUntil(t0 + milliseconds(10'600));
  EXPECT_EQ(Get("c2", "r"), "v");
  EXPECT_EQ(Get("c1", "s"), "w");
  RunUntilIdle();
  ExpectConverged();
}

}  // namespace
}  // namespace btsim::replication::test_util
