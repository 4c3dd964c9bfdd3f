// The Instance's capacity model in virtual time: Charge() queues work on the
// node serving the row's tablet, hot key ranges show up as one hot node,
// HDD reads cost more than SSD reads, replicated writes cost CPU on the
// receiving cluster, node models follow the clusters, and tablets are
// rebalanced without a timer of their own.
#include <algorithm>
#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster/node_model.h"
#include "instance/instance.h"
#include "sim/virtual_scheduler.h"

namespace btsim::instance {
namespace {

using cluster::NodeModel;
using cluster::OpKind;
using cluster::StorageType;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr sim::Time kStart{sim::Duration(1'700'000'000'000'000'000)};

class CapacityTest : public ::testing::Test {
 protected:
  // An instance of `clusters` (the first one gets table "t", split at "h"
  // and "p", which then replicates everywhere).
  std::unique_ptr<Instance> Make(std::vector<ClusterConfig> clusters,
                                 StorageType storage = StorageType::kSsd) {
    InstanceConfig config;
    config.clusters = std::move(clusters);
    config.storage = storage;
    config.replication_latency = milliseconds(10);
    auto created = Instance::Create("projects/p/instances/i", scheduler_,
                                    sim::Rng(1), config);
    EXPECT_TRUE(created.ok()) << created.status().ToString();
    if (!created.ok()) return nullptr;
    std::unique_ptr<Instance> instance = std::move(created).value();
    const cluster::FamilyModification cf{
        "cf", cluster::FamilyModification::Kind::kCreate, {}};
    auto any = instance->AnyLiveCluster();
    EXPECT_TRUE(any.ok());
    EXPECT_TRUE((*any)->CreateTable("t", {&cf, 1}, {"h", "p"}).ok());
    scheduler_.RunUntilIdle();  // the table reaches every cluster
    return instance;
  }

  std::unique_ptr<Instance> OneCluster(
      int nodes, StorageType storage = StorageType::kSsd) {
    return Make({{"c1", "us-east1-b", nodes}}, storage);
  }

  // The number of nodes of `cluster` with queued work.
  int BusyNodes(const Instance& instance, std::string_view cluster) {
    const NodeModel* model = instance.Nodes(cluster);
    int busy = 0;
    for (int n = 0; n < model->nodes(); ++n) {
      if (model->BusyUntil(n) > scheduler_.Now()) ++busy;
    }
    return busy;
  }

  // Writes `key` on `cluster` and charges it there, as a client would.
  void WriteAndCharge(Instance& instance, std::string_view cluster,
                      const std::string& key) {
    cluster::Cluster* c = instance.replicas().Find(cluster);
    ASSERT_NE(c, nullptr);
    const std::vector<cluster::Mutation> m = {
        cluster::SetCell{"cf", "q", cluster::kServerTimestamp, "v"}};
    ASSERT_TRUE(c->MutateRow("t", key, m).ok());
    instance.Charge(cluster, "t", key, OpKind::kWrite);
  }

  sim::VirtualScheduler scheduler_{kStart};
};

TEST_F(CapacityTest, ChargeRowsIsChargePerKeyInOrder) {
  const std::vector<std::string_view> keys = {"a", "i", "q", "b", "z", "a"};
  auto one_by_one = OneCluster(3);
  auto batched = OneCluster(3);
  for (std::string_view key : keys) {
    one_by_one->Charge("c1", "t", key, OpKind::kWrite);
  }
  batched->ChargeRows("c1", "t", keys, OpKind::kWrite);
  const NodeModel* a = one_by_one->Nodes("c1");
  const NodeModel* b = batched->Nodes("c1");
  for (int n = 0; n < a->nodes(); ++n) {
    EXPECT_EQ(a->BusyUntil(n), b->BusyUntil(n)) << n;
  }
  EXPECT_GT(BusyNodes(*batched, "c1"), 1);
  // Unknown cluster or table, or no keys: nothing charged, no crash.
  batched->ChargeRows("nope", "t", keys, OpKind::kWrite);
  batched->ChargeRows("c1", "nope", keys, OpKind::kWrite);
  batched->ChargeRows("c1", "t", {}, OpKind::kWrite);
  for (int n = 0; n < a->nodes(); ++n) {
    EXPECT_EQ(a->BusyUntil(n), b->BusyUntil(n)) << n;
  }
}

TEST_F(CapacityTest, ChargingFollowsTablesDeletedAndCreatedAgain) {
  auto instance = OneCluster(1);
  cluster::Cluster* c = instance->replicas().Find("c1");
  ASSERT_NE(c, nullptr);
  instance->Charge("c1", "t", "a", OpKind::kWrite);
  const sim::Time busy = instance->Nodes("c1")->BusyUntil(0);
  EXPECT_GT(busy, scheduler_.Now());
  // A deleted table is charged nothing (the cached table is not used).
  ASSERT_TRUE(c->DeleteTable("t").ok());
  instance->Charge("c1", "t", "a", OpKind::kWrite);
  EXPECT_EQ(instance->Nodes("c1")->BusyUntil(0), busy);
  // Created again, it is charged again.
  const cluster::FamilyModification cf{
      "cf", cluster::FamilyModification::Kind::kCreate, {}};
  ASSERT_TRUE(c->CreateTable("t", {&cf, 1}, {}).ok());
  instance->Charge("c1", "t", "a", OpKind::kWrite);
  EXPECT_GT(instance->Nodes("c1")->BusyUntil(0), busy);
}

TEST_F(CapacityTest, ChargeQueuesOnTheNodeServingTheRowsTablet) {
  const sim::Duration write =
      NodeModel::ServiceTime(StorageType::kSsd, OpKind::kWrite);
  // A burst of 300 writes on one key queues on one node.
  auto hot = OneCluster(3);
  const sim::Time t0 = scheduler_.Now();
  sim::Time previous = t0;
  sim::Time one_key = t0;
  for (int i = 0; i < 300; ++i) {
    one_key = hot->Charge("c1", "t", "a", OpKind::kWrite);
    EXPECT_GT(one_key, previous) << i;  // behind the earlier ones
    previous = one_key;
  }
  EXPECT_GE(one_key - t0, 299 * write);
  EXPECT_LE(one_key - t0, 300 * write);
  EXPECT_EQ(BusyNodes(*hot, "c1"), 1);
  // Other keys of the same tablet ("" to "h") queue behind them too.
  EXPECT_GT(hot->Charge("c1", "t", "g", OpKind::kWrite), one_key);

  // The same burst spread over the three tablets runs on three nodes.
  auto spread = OneCluster(3);
  const sim::Time t1 = scheduler_.Now();
  sim::Time spread_done = t1;
  const char* keys[] = {"a", "i", "q"};
  for (int i = 0; i < 300; ++i) {
    spread_done = std::max(
        spread_done, spread->Charge("c1", "t", keys[i % 3], OpKind::kWrite));
  }
  EXPECT_EQ(BusyNodes(*spread, "c1"), 3);
  EXPECT_LE(spread_done - t1, 100 * write);
  EXPECT_GT(one_key - t0, 2.9 * (spread_done - t1));
}

TEST_F(CapacityTest, ChargeOnAnUnknownClusterOrTableChargesNothing) {
  auto instance = OneCluster(1);
  const sim::Time now = scheduler_.Now();
  EXPECT_EQ(instance->Charge("nope", "t", "a", OpKind::kWrite, 1000), now);
  EXPECT_EQ(instance->Charge("c1", "nope", "a", OpKind::kWrite, 1000), now);
  EXPECT_EQ(instance->CpuLoad("c1"), 0);
  EXPECT_LE(instance->Nodes("c1")->BusyUntil(0), now);
  EXPECT_EQ(instance->Nodes("nope"), nullptr);
  EXPECT_EQ(instance->CpuLoad("nope"), 0);
  EXPECT_EQ(instance->HottestNodeLoad("nope"), 0);
  // A known table: charged.
  EXPECT_GT(instance->Charge("c1", "t", "a", OpKind::kWrite), now);
  EXPECT_GT(instance->CpuLoad("c1"), 0);
}

TEST_F(CapacityTest, AHotKeyRangeSaturatesOneNodeWhileTheOthersIdle) {
  auto instance = OneCluster(3);
  // One node's full read capacity (17,000 reads/s) on keys of one tablet,
  // for two seconds.
  sim::Duration worst_latency{0};
  for (int ms = 0; ms < 2000; ++ms) {
    const sim::Time now = scheduler_.Now();
    const sim::Time done = instance->Charge(
        "c1", "t", "key" + std::to_string(ms % 7), OpKind::kRead, 17);
    worst_latency = std::max(worst_latency, done - now);
    scheduler_.RunFor(milliseconds(1));
  }
  EXPECT_NEAR(instance->HottestNodeLoad("c1"), 1.0, 0.01);
  EXPECT_NEAR(instance->CpuLoad("c1"), 1.0 / 3, 0.01);
  // Exactly at capacity: the queue does not grow.
  EXPECT_LE(worst_latency, milliseconds(1));
  // Rebalancing cannot help a single hot tablet: still one busy node.
  const std::vector<double> loads =
      instance->Nodes("c1")->NodeLoads(scheduler_.Now());
  EXPECT_EQ(std::count_if(loads.begin(), loads.end(),
                          [](double load) { return load > 0.9; }),
            1);
  EXPECT_EQ(std::count(loads.begin(), loads.end(), 0.0), 2);
  // Loads decay once the hot spot cools down.
  scheduler_.RunFor(seconds(2));
  EXPECT_EQ(instance->HottestNodeLoad("c1"), 0);
  EXPECT_EQ(scheduler_.pending(), 0u);  // no timer of its own
}

TEST_F(CapacityTest, HddReadsCost34TimesSsdReads) {
  auto ssd = OneCluster(1, StorageType::kSsd);
  auto hdd = OneCluster(1, StorageType::kHdd);
  EXPECT_EQ(ssd->Nodes("c1")->storage(), StorageType::kSsd);
  EXPECT_EQ(hdd->Nodes("c1")->storage(), StorageType::kHdd);
  const sim::Time now = scheduler_.Now();
  // One node's worth of SSD reads for one second...
  EXPECT_EQ(ssd->Charge("c1", "t", "a", OpKind::kRead, 17'000) - now,
            seconds(1));
  // ...takes an HDD node 34 s.
  EXPECT_EQ(hdd->Charge("c1", "t", "a", OpKind::kRead, 17'000) - now,
            seconds(34));
  // Writes differ less: 14,000 vs 10,000 per second (queued behind the
  // reads on the only node).
  EXPECT_EQ(ssd->Charge("c1", "t", "q", OpKind::kWrite, 14'000) - now,
            seconds(1) + seconds(1));
  EXPECT_EQ(hdd->Charge("c1", "t", "q", OpKind::kWrite, 14'000) - now,
            seconds(34) + milliseconds(1400));
}

TEST_F(CapacityTest, ReplicatedWritesCostCpuOnTheReceivingCluster) {
  auto instance = Make({{"c1", "us-east1-b", 1}, {"c2", "us-east1-c", 1}});
  EXPECT_EQ(instance->CpuLoad("c2"), 0);  // schema records cost nothing
  for (int i = 0; i < 100; ++i) {
    WriteAndCharge(*instance, "c1", "row" + std::to_string(i));
  }
  EXPECT_GT(instance->CpuLoad("c1"), 0);
  scheduler_.RunFor(milliseconds(5));
  EXPECT_EQ(instance->CpuLoad("c2"), 0);  // still in flight
  scheduler_.RunFor(milliseconds(10));
  EXPECT_GT(instance->CpuLoad("c2"), 0);  // the first batch arrived
  EXPECT_LT(instance->CpuLoad("c2"), instance->CpuLoad("c1"));
  // Once replication is idle (well within the 1 s load window), every write
  // was applied on c2 and cost it as much as it cost c1.
  scheduler_.RunUntilIdle();
  EXPECT_LT(scheduler_.Now() - kStart, milliseconds(500));
  EXPECT_NEAR(instance->CpuLoad("c2"), instance->CpuLoad("c1"), 1e-12);
  // A DropRowRange has no rows of its own: it costs nothing.
  ASSERT_TRUE(instance->DropRowRange("t", "row").ok());
  scheduler_.RunUntilIdle();
  EXPECT_NEAR(instance->CpuLoad("c2"), instance->CpuLoad("c1"), 1e-12);
}

TEST_F(CapacityTest, ReplicatedBatchesChargeAsOneSubmitPerRowWould) {
  // Two nodes per cluster; "t" has the tablets [, h), [h, p) and [p, ).
  auto instance = Make({{"c1", "us-east1-b", 2}, {"c2", "us-east1-c", 2}});
  struct Row {
    std::string key;
    sim::Time at;
    bool last_of_batch;
  };
  struct Recorder : InstanceObserver {
    std::vector<Row> rows;
    void OnReplicated(const replication::AppliedInfo& info) override {
      if (info.record.kind != cluster::CommitRecord::Kind::kMutateRow) return;
      rows.push_back(
          {info.record.row_key, info.applied_at, info.last_of_batch});
    }
  } recorder;
  instance->AddObserver(&recorder);
  // "a1" leaves at once; the others wait for its ack and leave together.
  // In that batch [p, ) first shows up after two more rows of [, h).
  for (const char* key : {"a1", "i1", "a2", "a3", "q1"}) {
    WriteAndCharge(*instance, "c1", key);
  }
  scheduler_.RunUntilIdle();
  instance->RemoveObserver(&recorder);
  ASSERT_EQ(recorder.rows.size(), 5u);
  const std::vector<bool> expected_last = {true, false, false, false, true};
  for (size_t i = 0; i < recorder.rows.size(); ++i) {
    EXPECT_EQ(recorder.rows[i].last_of_batch, expected_last[i]) << i;
  }
  // The same rows, charged one by one on a model of c2's shape (the
  // tablets' ids differ, which changes nothing here).
  NodeModel one_by_one(StorageType::kSsd, 2);
  for (const Row& row : recorder.rows) {
    const uint64_t tablet = row.key < "h" ? 1 : row.key < "p" ? 2 : 3;
    one_by_one.Submit(row.at, tablet, OpKind::kReplicationApply);
  }
  const NodeModel* c2 = instance->Nodes("c2");
  const sim::Time last = recorder.rows.back().at;
  for (int n = 0; n < 2; ++n) {
    EXPECT_EQ(c2->BusyUntil(n), one_by_one.BusyUntil(n)) << n;
    // Two rows each: [p, ) went to node 1, as node 0 had taken three rows
    // of [, h) by then (a1 long done).
    EXPECT_EQ(c2->BusyUntil(n),
              last + NodeModel::ServiceTime(StorageType::kSsd,
                                            OpKind::kReplicationApply, 2))
        << n;
  }
  EXPECT_EQ(c2->NodeLoads(last), one_by_one.NodeLoads(last));
}

TEST_F(CapacityTest, ReplicatedWritesChargeEachPeerAndAClusterReadded) {
  auto instance = Make({{"c1", "us-east1-b", 1},
                        {"c2", "us-east1-c", 1},
                        {"c3", "us-east1-d", 1}});
  auto write_and_settle = [&](const std::string& prefix) {
    for (int i = 0; i < 100; ++i) {
      WriteAndCharge(*instance, "c1", prefix + std::to_string(i));
    }
    scheduler_.RunUntilIdle();
  };
  // Each peer pays for the rows it applies, as c1 did for writing them.
  write_and_settle("before");
  EXPECT_GT(instance->CpuLoad("c1"), 0);
  EXPECT_NEAR(instance->CpuLoad("c2"), instance->CpuLoad("c1"), 1e-12);
  EXPECT_NEAR(instance->CpuLoad("c3"), instance->CpuLoad("c1"), 1e-12);
  ASSERT_TRUE(instance->RemoveCluster("c2").ok());
  // Past the load window: the earlier writes no longer count.
  scheduler_.RunFor(seconds(2));
  // The new c2 (seeded from a peer, which costs nothing) is a new member
  // of the instance: its replicated rows are charged to its own, fresh model.
  ASSERT_TRUE(instance->AddCluster({"c2", "us-east1-c", 1}).ok());
  scheduler_.RunUntilIdle();
  EXPECT_EQ(instance->CpuLoad("c2"), 0);
  write_and_settle("after");
  EXPECT_GT(instance->CpuLoad("c1"), 0);
  EXPECT_NEAR(instance->CpuLoad("c2"), instance->CpuLoad("c1"), 1e-12);
  EXPECT_NEAR(instance->CpuLoad("c3"), instance->CpuLoad("c1"), 1e-12);
}

TEST_F(CapacityTest, NodeModelsFollowTheClusters) {
  auto instance = Make({{"c1", "us-east1-b", 2}}, StorageType::kHdd);
  ASSERT_NE(instance->Nodes("c1"), nullptr);
  EXPECT_EQ(instance->Nodes("c1")->nodes(), 2);

  ASSERT_TRUE(instance->SetNodes("c1", 5).ok());
  EXPECT_EQ(instance->Nodes("c1")->nodes(), 5);
  EXPECT_EQ(instance->Clusters()[0].nodes, 5);
  EXPECT_FALSE(instance->SetNodes("c1", 0).ok());
  EXPECT_EQ(instance->Nodes("c1")->nodes(), 5);
  EXPECT_FALSE(instance->SetNodes("nope", 2).ok());

  ASSERT_TRUE(instance->AddCluster({"c2", "europe-west1-d", 3}).ok());
  ASSERT_NE(instance->Nodes("c2"), nullptr);
  EXPECT_EQ(instance->Nodes("c2")->nodes(), 3);
  EXPECT_EQ(instance->Nodes("c2")->storage(), StorageType::kHdd);
  // A refused AddCluster leaves no model behind.
  EXPECT_FALSE(instance->AddCluster({"c3", "europe-west1-d", 1}).ok());
  EXPECT_EQ(instance->Nodes("c3"), nullptr);
  scheduler_.RunUntilIdle();  // c2 is seeded with "t"
  EXPECT_GT(instance->Charge("c2", "t", "a", OpKind::kRead), scheduler_.Now());

  ASSERT_TRUE(instance->RemoveCluster("c2").ok());
  EXPECT_EQ(instance->Nodes("c2"), nullptr);
  EXPECT_EQ(instance->CpuLoad("c2"), 0);
  EXPECT_EQ(instance->Charge("c2", "t", "a", OpKind::kRead), scheduler_.Now());
  // Re-added under the same id: a fresh, idle model.
  ASSERT_TRUE(instance->AddCluster({"c2", "europe-west1-d", 1}).ok());
  EXPECT_EQ(instance->Nodes("c2")->nodes(), 1);
  EXPECT_EQ(instance->CpuLoad("c2"), 0);
}

TEST_F(CapacityTest, GrowingAClusterSpreadsHotTabletsWithoutATimer) {
  auto instance = OneCluster(1);
  // Two busy tablets on the only node: 7 of 17,000 reads/s per ms each.
  auto offer = [&](sim::Duration duration) {
    const sim::Time end = scheduler_.Now() + duration;
    while (scheduler_.Now() < end) {
      instance->Charge("c1", "t", "a", OpKind::kRead, 7);
      instance->Charge("c1", "t", "q", OpKind::kRead, 7);
      scheduler_.RunFor(milliseconds(1));
    }
  };
  offer(seconds(2));
  EXPECT_NEAR(instance->HottestNodeLoad("c1"), 14.0 / 17, 0.01);
  ASSERT_TRUE(instance->SetNodes("c1", 2).ok());
  // Growing moves nothing by itself...
  EXPECT_NEAR(instance->HottestNodeLoad("c1"), 14.0 / 17, 0.01);
  // ...but the next charges rebalance: one tablet moves to the new node.
  offer(seconds(2));
  EXPECT_NEAR(instance->HottestNodeLoad("c1"), 7.0 / 17, 0.01);
  EXPECT_NEAR(instance->CpuLoad("c1"), 7.0 / 17, 0.01);
  EXPECT_EQ(scheduler_.pending(), 0u);
}

}  // namespace
}  // namespace btsim::instance
