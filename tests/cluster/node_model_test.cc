// Tests of NodeModel: per-operation costs from the published per-node rates,
// FIFO queueing on each node, linear scaling in nodes, hot tablets and hot
// nodes, rebalancing, resizing, load decay and determinism. Virtual time
// counts from the Unix epoch (At).
#include "cluster/node_model.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <utility>
#include <vector>

namespace btsim::cluster {
namespace {

using sim::Duration;
using sim::Time;

// The time `d` after the Unix epoch: the model's clock in these tests.
constexpr Time At(Duration d) { return Time(d); }
using std::chrono::milliseconds;
using std::chrono::seconds;

// Arrival time of the i-th request of a stream at `rate` per second starting
// at `start`, rounded up to a whole nanosecond.
Time Arrival(Time start, int64_t i, int64_t rate) {
  return start + Duration((i * 1'000'000'000 + rate - 1) / rate);
}

// How long `count` back-to-back ops of one kind submitted at once to one
// tablet take to complete.
Duration FillTime(StorageType storage, OpKind kind, int64_t count) {
  NodeModel m(storage, 1);
  Time done;
  for (int64_t i = 0; i < count; ++i) done = m.Submit(Time(), 7, kind);
  return done - Time();
}

TEST(NodeModelTest, SsdRatesFillExactlyOneSecond) {
  EXPECT_EQ(FillTime(StorageType::kSsd, OpKind::kRead, 17'000), seconds(1));
  EXPECT_EQ(FillTime(StorageType::kSsd, OpKind::kWrite, 14'000), seconds(1));
  EXPECT_EQ(FillTime(StorageType::kSsd, OpKind::kReplicationApply, 14'000),
            seconds(1));
  // One fewer op does not fill the second.
  EXPECT_LT(FillTime(StorageType::kSsd, OpKind::kRead, 16'999), seconds(1));
  // 220 MB of scans, as one request and as 220 requests of 1 MB.
  NodeModel m(StorageType::kSsd, 1);
  EXPECT_EQ(m.Submit(Time(), 1, OpKind::kScanBytes, 220'000'000),
            At(seconds(1)));
  NodeModel m2(StorageType::kSsd, 1);
  Time done;
  for (int i = 0; i < 220; ++i) {
    done = m2.Submit(Time(), 1, OpKind::kScanBytes, 1'000'000);
  }
  EXPECT_EQ(done, At(seconds(1)));
}

TEST(NodeModelTest, HddRatesFillExactlyOneSecond) {
  EXPECT_EQ(FillTime(StorageType::kHdd, OpKind::kRead, 500), seconds(1));
  EXPECT_EQ(FillTime(StorageType::kHdd, OpKind::kWrite, 10'000), seconds(1));
  EXPECT_EQ(FillTime(StorageType::kHdd, OpKind::kReplicationApply, 10'000),
            seconds(1));
  NodeModel m(StorageType::kHdd, 1);
  EXPECT_EQ(m.Submit(Time(), 1, OpKind::kScanBytes, 180'000'000),
            At(seconds(1)));
}

TEST(NodeModelTest, ServiceTimesRoundUpToWholeNanoseconds) {
  EXPECT_EQ(NodeModel::ServiceTime(StorageType::kSsd, OpKind::kRead),
            Duration(58'824));  // 1e9 / 17,000 = 58,823.53
  EXPECT_EQ(NodeModel::ServiceTime(StorageType::kSsd, OpKind::kWrite),
            Duration(71'429));  // 1e9 / 14,000 = 71,428.57
  EXPECT_EQ(NodeModel::ServiceTime(StorageType::kHdd, OpKind::kRead),
            milliseconds(2));
  EXPECT_EQ(NodeModel::ServiceTime(StorageType::kHdd, OpKind::kWrite),
            Duration(100'000));
  EXPECT_EQ(NodeModel::ServiceTime(StorageType::kSsd, OpKind::kRead, 17'000),
            seconds(1));
  EXPECT_EQ(
      NodeModel::ServiceTime(StorageType::kSsd, OpKind::kReplicationApply),
      NodeModel::ServiceTime(StorageType::kSsd, OpKind::kWrite));
  EXPECT_EQ(NodeModel::ServiceTime(StorageType::kSsd, OpKind::kRead, 0),
            Duration(0));
}

TEST(NodeModelTest, MixedKindsAddUpOnOneNode) {
  // Half a second of reads plus half a second of writes fill one second.
  NodeModel m(StorageType::kSsd, 1);
  m.Submit(Time(), 1, OpKind::kRead, 8'500);
  EXPECT_EQ(m.Submit(Time(), 1, OpKind::kWrite, 7'000), At(seconds(1)));
  EXPECT_EQ(m.BusyUntil(0), At(seconds(1)));
}

TEST(NodeModelTest, ThroughputScalesLinearlyWithNodes) {
  for (int n : {1, 2, 4, 8}) {
    NodeModel m(StorageType::kSsd, n);
    const Time start = At(seconds(1'700'000'000));  // an epoch-like start
    // Each tablet gets a full node's read rate for 2 s, interleaved.
    const int64_t per_tablet = 2 * 17'000;
    Duration worst_latency{0};
    Time last_done;
    for (int64_t i = 0; i < per_tablet; ++i) {
      const Time at = Arrival(start, i, 17'000);
      for (int t = 0; t < n; ++t) {
        const Time done = m.Submit(at, 100 + t, OpKind::kRead);
        worst_latency = std::max(worst_latency, done - at);
        last_done = std::max(last_done, done);
      }
    }
    // Tablets spread one per node, no queueing growth: every request takes
    // one service time, and n * 34,000 reads finish in 2 s (give or take the
    // nanosecond lost to rounding arrivals up to whole nanoseconds).
    std::vector<bool> used(static_cast<size_t>(n), false);
    for (int t = 0; t < n; ++t) {
      const int node = m.NodeOf(100 + t);
      ASSERT_GE(node, 0);
      ASSERT_LT(node, n);
      EXPECT_FALSE(used[static_cast<size_t>(node)]) << "n=" << n;
      used[static_cast<size_t>(node)] = true;
    }
    EXPECT_LE(worst_latency, Duration(58'824 + 1)) << "n=" << n;
    EXPECT_LE(last_done, start + seconds(2) + Duration(1)) << "n=" << n;
    const Time now = start + seconds(2);
    EXPECT_NEAR(m.CpuLoad(now), 1.0, 0.01) << "n=" << n;
    EXPECT_NEAR(m.HottestNodeLoad(now), 1.0, 0.01) << "n=" << n;
  }
}

TEST(NodeModelTest, OverloadGrowsLatencyLinearlyUnderloadDoesNot) {
  // 2x capacity on one node: the backlog grows by 1 s per second offered.
  NodeModel hot(StorageType::kSsd, 1);
  std::vector<Duration> latency;  // by arrival index
  const int64_t rate = 34'000;
  for (int64_t i = 0; i < 2 * rate; ++i) {
    const Time at = Arrival(Time(), i, rate);
    latency.push_back(hot.Submit(at, 1, OpKind::kRead) - at);
  }
  const Duration at_half = latency[rate / 2];
  const Duration at_one = latency[rate];
  const Duration at_one_half = latency[3 * rate / 2];
  EXPECT_NEAR(std::chrono::duration<double>(at_half).count(), 0.5, 0.001);
  EXPECT_NEAR(std::chrono::duration<double>(at_one).count(), 1.0, 0.001);
  EXPECT_NEAR(std::chrono::duration<double>(at_one_half).count(), 1.5, 0.001);
  // Linear: equal increments over equal intervals.
  EXPECT_NEAR(std::chrono::duration<double>(at_one_half - at_one).count(),
              std::chrono::duration<double>(at_one - at_half).count(), 0.0001);
  EXPECT_NEAR(hot.HottestNodeLoad(At(seconds(2))), 2.0, 0.01);
  EXPECT_GT(hot.BusyUntil(0), At(seconds(2)));

  // 0.5x capacity: every request sees one service time.
  NodeModel calm(StorageType::kSsd, 1);
  Duration worst{0};
  for (int64_t i = 0; i < 2 * 8'500; ++i) {
    const Time at = Arrival(Time(), i, 8'500);
    worst = std::max(worst, calm.Submit(at, 1, OpKind::kRead) - at);
  }
  EXPECT_LE(worst, Duration(58'824));
  EXPECT_NEAR(calm.CpuLoad(At(seconds(2))), 0.5, 0.01);
}

TEST(NodeModelTest, SingleHotTabletSaturatesOneNode) {
  NodeModel m(StorageType::kSsd, 4);
  for (int64_t i = 0; i < 2 * 17'000; ++i) {
    const Time at = Arrival(Time(), i, 17'000);
    m.Submit(at, 1, OpKind::kRead);
    if (i % 1'700 == 0) {  // three cold tablets: 10 reads/s each
      for (uint64_t t = 2; t <= 4; ++t) m.Submit(at, t, OpKind::kRead);
    }
  }
  const Time now = At(seconds(2));
  EXPECT_NEAR(m.HottestNodeLoad(now), 1.0, 0.01);
  EXPECT_NEAR(m.CpuLoad(now), 0.25, 0.01);
  // One tablet cannot be split by this model, and moving it would only move
  // the hot spot.
  const int node = m.NodeOf(1);
  EXPECT_EQ(m.Rebalance(now), 0);
  EXPECT_EQ(m.NodeOf(1), node);
  EXPECT_NEAR(m.HottestNodeLoad(now), 1.0, 0.01);
}

// Four tablets at 4,000 reads/s each, all on node 0 of a 1-node model that
// then grows to 4 nodes.
NodeModel FourHotTabletsOnOneNode(Time* now) {
  NodeModel m(StorageType::kSsd, 1);
  for (int64_t i = 0; i < 4'000; ++i) {
    const Time at = Arrival(Time(), i, 4'000);
    for (uint64_t t = 10; t < 14; ++t) m.Submit(at, t, OpKind::kRead);
  }
  m.SetNodes(4);
  *now = At(seconds(1));
  return m;
}

TEST(NodeModelTest, RebalanceSpreadsHotTabletsAfterGrowing) {
  Time now;
  NodeModel m = FourHotTabletsOnOneNode(&now);
  EXPECT_EQ(m.nodes(), 4);
  for (uint64_t t = 10; t < 14; ++t) EXPECT_EQ(m.NodeOf(t), 0);
  const double before = m.HottestNodeLoad(now);
  EXPECT_NEAR(before, 16'000.0 / 17'000, 0.01);
  EXPECT_NEAR(m.CpuLoad(now), before / 4, 0.01);

  EXPECT_EQ(m.Rebalance(now), 3);
  std::vector<int> nodes;
  for (uint64_t t = 10; t < 14; ++t) nodes.push_back(m.NodeOf(t));
  // The tie between equally hot tablets goes to the lowest id; each move
  // goes to the least-loaded node (ties: lowest index).
  EXPECT_EQ(nodes, (std::vector<int>{1, 2, 3, 0}));
  EXPECT_NEAR(m.HottestNodeLoad(now), before / 4, 0.01);
  EXPECT_NEAR(m.CpuLoad(now), before / 4, 0.01);
  // Balanced: nothing more to do.
  EXPECT_EQ(m.Rebalance(now), 0);
}

TEST(NodeModelTest, RebalanceMovesAtMostAFewTabletsPerCall) {
  NodeModel m(StorageType::kSsd, 1);
  for (uint64_t t = 0; t < 40; ++t) m.Submit(Time(), t, OpKind::kRead, 100);
  m.SetNodes(10);
  EXPECT_EQ(m.Rebalance(At(milliseconds(500))),
            NodeModel::kMaxMovesPerRebalance);
  int moved_total = NodeModel::kMaxMovesPerRebalance;
  for (int i = 0; i < 20; ++i)
    moved_total += m.Rebalance(At(milliseconds(500)));
  // 40 equal tablets over 10 nodes: 4 each.
  EXPECT_EQ(moved_total, 36);
  std::vector<double> loads = m.NodeLoads(At(milliseconds(500)));
  for (double l : loads) EXPECT_DOUBLE_EQ(l, loads[0]);
}

TEST(NodeModelTest, NewTabletsGoToTheLeastLoadedNode) {
  NodeModel m(StorageType::kSsd, 3);
  // All idle and empty: lowest index.
  EXPECT_EQ(m.AddTablet(Time(), 50), 0);
  // Node 0 serves one tablet (still no load): node 1 has fewer tablets.
  EXPECT_EQ(m.AddTablet(Time(), 40), 1);
  m.Submit(Time(), 40, OpKind::kRead, 1'000);  // node 1 busy
  m.Submit(Time(), 30, OpKind::kRead, 10);
  EXPECT_EQ(m.NodeOf(30), 2);
  // Node 0 has no load: next tablet goes there.
  EXPECT_EQ(m.AddTablet(Time(), 20), 0);
  EXPECT_EQ(m.NodeOf(999), -1);
  m.RemoveTablet(20);
  EXPECT_EQ(m.NodeOf(20), -1);
  // Adding a known tablet does not move it.
  EXPECT_EQ(m.AddTablet(Time(), 40), 1);
}

TEST(NodeModelTest, TabletsSharingACacheEntryRemovedOrCopiedKeepTheirOwnLoad) {
  NodeModel m(StorageType::kSsd, 2);
  // 1 and 257 share an entry of the model's lookup cache.
  m.Submit(Time(), 1, OpKind::kRead, 1'000);
  m.Submit(Time(), 257, OpKind::kRead, 3'000);
  m.Submit(Time(), 1, OpKind::kRead, 1'000);
  auto load_of = [](const NodeModel& model, uint64_t id) {
    for (const auto& [tablet, load] : model.TabletLoads(Time())) {
      if (tablet == id) return load;
    }
    return -1.0;
  };
  const double one = load_of(m, 1), other = load_of(m, 257);
  EXPECT_GT(one, 0);
  EXPECT_DOUBLE_EQ(other, 1.5 * one);
  // A copy charges its own tablets, not the original's.
  NodeModel copy = m;
  copy.Submit(Time(), 1, OpKind::kRead, 2'000);
  EXPECT_DOUBLE_EQ(load_of(m, 1), one);
  EXPECT_DOUBLE_EQ(load_of(copy, 1), 2 * one);
  // A removed tablet that comes back starts with no load.
  m.RemoveTablet(1);
  EXPECT_EQ(load_of(m, 1), -1.0);
  m.Submit(Time(), 1, OpKind::kRead, 500);
  EXPECT_DOUBLE_EQ(load_of(m, 1), one / 4);
  EXPECT_DOUBLE_EQ(load_of(m, 257), other);
}

TEST(NodeModelTest, ShrinkingReassignsRemovedNodesTabletsDeterministically) {
  auto run = [] {
    NodeModel m(StorageType::kSsd, 4);
    // Tablet t gets (t + 1) * 1,000 reads: nodes 0..3 get 1..4 thousand.
    for (uint64_t t = 0; t < 4; ++t) {
      m.Submit(Time(), t, OpKind::kRead, static_cast<int64_t>(t + 1) * 1'000);
    }
    m.SetNodes(2);
    std::vector<int> nodes;
    for (uint64_t t = 0; t < 4; ++t) nodes.push_back(m.NodeOf(t));
    return std::make_pair(nodes, m.NodeLoads(At(milliseconds(100))));
  };
  const auto [nodes, loads] = run();
  // Tablet 2 (3k) goes to node 0 (1k < 2k) -> node 0 at 4k; tablet 3 (4k)
  // goes to node 1 (2k < 4k).
  EXPECT_EQ(nodes, (std::vector<int>{0, 1, 0, 1}));
  ASSERT_EQ(loads.size(), 2u);
  EXPECT_EQ(run(), std::make_pair(nodes, loads));

  // Shrinking to one node and growing back keeps every tablet on node 0.
  NodeModel m(StorageType::kHdd, 3);
  for (uint64_t t = 0; t < 6; ++t) m.Submit(Time(), t, OpKind::kWrite);
  m.SetNodes(1);
  for (uint64_t t = 0; t < 6; ++t) EXPECT_EQ(m.NodeOf(t), 0);
  m.SetNodes(3);
  for (uint64_t t = 0; t < 6; ++t) EXPECT_EQ(m.NodeOf(t), 0);
  // A new tablet uses a new node.
  EXPECT_EQ(m.AddTablet(Time(), 100), 1);
}

TEST(NodeModelTest, LoadsDecayAfterTheWindow) {
  NodeModel m(StorageType::kSsd, 2);
  for (int64_t i = 0; i < 17'000; ++i) {
    m.Submit(Arrival(Time(), i, 17'000), 1, OpKind::kRead);
  }
  EXPECT_NEAR(m.HottestNodeLoad(At(seconds(1))), 1.0, 0.001);
  EXPECT_NEAR(m.CpuLoad(At(seconds(1))), 0.5, 0.001);
  // Half the window has passed with no requests.
  EXPECT_NEAR(m.HottestNodeLoad(At(milliseconds(1'500))), 0.5, 0.001);
  // A whole window (and the partial bucket) later: nothing left.
  EXPECT_EQ(m.HottestNodeLoad(At(milliseconds(2'100))), 0.0);
  EXPECT_EQ(m.CpuLoad(At(milliseconds(2'100))), 0.0);
  const auto tablets = m.TabletLoads(At(seconds(5)));
  ASSERT_EQ(tablets.size(), 1u);
  EXPECT_EQ(tablets[0], std::make_pair(uint64_t{1}, 0.0));
  // Idle nodes serve new requests at once.
  EXPECT_EQ(m.Submit(At(seconds(5)), 1, OpKind::kRead, 17),
            At(seconds(5) + milliseconds(1)));
}

TEST(NodeModelTest, TabletLoadsAreSortedAndSumToNodeLoads) {
  NodeModel m(StorageType::kSsd, 3);
  const std::vector<uint64_t> ids = {900, 5, 77, 31, 1'000'000, 2};
  for (size_t i = 0; i < ids.size(); ++i) {
    m.Submit(At(milliseconds(10)), ids[i], OpKind::kWrite,
             static_cast<int64_t>(i + 1) * 500);
  }
  const Time now = At(milliseconds(800));
  const auto tablets = m.TabletLoads(now);
  ASSERT_EQ(tablets.size(), ids.size());
  for (size_t i = 1; i < tablets.size(); ++i) {
    EXPECT_LT(tablets[i - 1].first, tablets[i].first);
  }
  std::vector<double> sums(3, 0.0);
  for (const auto& [id, load] : tablets) {
    sums[static_cast<size_t>(m.NodeOf(id))] += load;
  }
  const std::vector<double> nodes = m.NodeLoads(now);
  for (size_t n = 0; n < 3; ++n) EXPECT_NEAR(sums[n], nodes[n], 1e-12);
}

TEST(NodeModelTest, UnitsSubmittedTogetherEqualUnitsSubmittedOneByOne) {
  // What a replication batch relies on (instance/instance.h): placed
  // tablets' submits at one time add up, in any grouping and order.
  NodeModel one_by_one(StorageType::kSsd, 2);
  NodeModel together(StorageType::kSsd, 2);
  for (NodeModel* m : {&one_by_one, &together}) {
    m->Submit(Time(), 1, OpKind::kWrite);
    m->Submit(Time(), 2, OpKind::kWrite);
    m->Submit(Time(), 3, OpKind::kWrite);  // shares node 0 with tablet 1
  }
  const Time now = At(Duration(100'000));  // node 0 still busy, node 1 idle
  ASSERT_GT(one_by_one.BusyUntil(0), now);
  ASSERT_LE(one_by_one.BusyUntil(1), now);
  const std::vector<uint64_t> rows = {1, 3, 2, 1, 1, 3, 2, 1};
  for (uint64_t tablet : rows) {
    one_by_one.Submit(now, tablet, OpKind::kReplicationApply);
  }
  together.Submit(now, 2, OpKind::kReplicationApply, 2);
  together.Submit(now, 3, OpKind::kReplicationApply, 2);
  together.Submit(now, 1, OpKind::kReplicationApply, 4);
  for (int n = 0; n < 2; ++n) {
    EXPECT_EQ(one_by_one.BusyUntil(n), together.BusyUntil(n)) << n;
  }
  EXPECT_GT(one_by_one.BusyUntil(0), one_by_one.BusyUntil(1));
  EXPECT_EQ(one_by_one.NodeLoads(now), together.NodeLoads(now));
  EXPECT_EQ(one_by_one.TabletLoads(now), together.TabletLoads(now));
}

TEST(NodeModelTest, NodeOfKnowsPlacedTabletsOnly) {
  NodeModel m(StorageType::kSsd, 2);
  EXPECT_EQ(m.NodeOf(5), -1);
  m.Submit(Time(), 5, OpKind::kRead);
  EXPECT_NE(m.NodeOf(5), -1);
  m.AddTablet(Time(), 5 + 256);  // same lookup-cache entry as 5
  EXPECT_NE(m.NodeOf(5 + 256), -1);
  EXPECT_NE(m.NodeOf(5), -1);  // found in the map, past the cache
  EXPECT_EQ(m.NodeOf(5 + 512), -1);
  m.RemoveTablet(5);
  EXPECT_EQ(m.NodeOf(5), -1);
}

TEST(NodeModelTest, SameSequenceSameResults) {
  auto run = [] {
    NodeModel m(StorageType::kSsd, 3);
    uint64_t x = 42;  // a fixed LCG: the test's own, stable everywhere
    std::vector<int64_t> out;
    Time now;
    for (int i = 0; i < 20'000; ++i) {
      x = x * 6364136223846793005ULL + 1442695040888963407ULL;
      now += Duration(static_cast<int64_t>((x >> 33) % 100'000));
      const uint64_t tablet = (x >> 20) % 9;
      const auto kind = static_cast<OpKind>((x >> 10) % 4);
      const int64_t units = kind == OpKind::kScanBytes ? 4'096 : 1;
      out.push_back(sim::NanosSinceEpoch(m.Submit(now, tablet, kind, units)));
      if (i % 1'000 == 999) out.push_back(m.Rebalance(now));
      if (i == 10'000) m.SetNodes(5);
      if (i == 15'000) m.SetNodes(2);
    }
    for (const auto& [id, load] : m.TabletLoads(now)) {
      out.push_back(static_cast<int64_t>(id));
      out.push_back(static_cast<int64_t>(load * 1e9));
      out.push_back(m.NodeOf(id));
    }
    return out;
  };
  EXPECT_EQ(run(), run());
}

}  // namespace
}  // namespace btsim::cluster
