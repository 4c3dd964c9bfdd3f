// Replication under realistic write rates, in virtual time: four regions
// each taking 5,000 writes/s over 100 ms links keep up (p99 replication
// delay under twice the link delay plus the batching interval, and a
// bounded backlog); replicated applies wait for the receiving cluster's
// nodes, so an overloaded cluster lags; and a link bandwidth governs lag.
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "instance/instance.h"
#include "sim/virtual_scheduler.h"

namespace btsim::instance {
namespace {

using cluster::OpKind;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr sim::Time kStart{sim::Duration(1'700'000'000'000'000'000)};

// Replication delays (applied_at - committed_at) per peer, from `since` on.
class DelayObserver : public InstanceObserver {
 public:
  void OnReplicated(const replication::AppliedInfo& info) override {
    if (info.committed_at() < since) return;
    delays[std::string(info.peer)].push_back(info.applied_at -
                                             info.committed_at());
  }
  sim::Duration Percentile(const std::string& peer, double p) {
    std::vector<sim::Duration>& v = delays[peer];
    if (v.empty()) return sim::Duration::max();
    std::sort(v.begin(), v.end());
    return v[static_cast<size_t>(p * static_cast<double>(v.size() - 1))];
  }
  size_t Count() const {
    size_t n = 0;
    for (const auto& [peer, v] : delays) n += v.size();
    return n;
  }
  sim::Time since = sim::Time::min();
  std::map<std::string, std::vector<sim::Duration>> delays;
};

class ReplicationLoadTest : public ::testing::Test {
 protected:
  void Make(std::vector<ClusterConfig> clusters, sim::Duration link,
            int64_t bandwidth = 0) {
    InstanceConfig config;
    config.clusters = std::move(clusters);
    config.replication_latency = link;
    config.replication_bandwidth = bandwidth;
    config.queue_on_nodes = true;
    auto created = Instance::Create("projects/p/instances/i", scheduler_,
                                    sim::Rng(3), config);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    instance_ = std::move(created).value();
    instance_->AddObserver(&observer_);
    const cluster::FamilyModification cf{
        "cf", cluster::FamilyModification::Kind::kCreate, {}};
    std::vector<std::string> splits;
    for (char c = 'b'; c <= 'p'; ++c) splits.emplace_back(1, c);
    ASSERT_TRUE(instance_->replicas()
                    .Find(config_ids(0))
                    ->CreateTable("t", {&cf, 1}, splits)
                    .ok());
    instance_->replicas().ApplyNewestEverywhere(config_ids(0));
  }
  std::string config_ids(size_t i) { return instance_->Clusters()[i].id; }

  // Writes `per_second` rows of `value_bytes` on `cluster` for `length`,
  // each charged to its node as a client's write is.
  void WriteSteadily(const std::string& cluster, int per_second,
                     sim::Duration length, size_t value_bytes = 100) {
    const sim::Duration gap = sim::Duration(seconds(1)) / per_second;
    const int64_t count = length / gap;
    auto next = std::make_shared<int64_t>(0);
    auto write = std::make_shared<std::function<void()>>();
    *write = [this, cluster, gap, count, next, write, value_bytes] {
      const int64_t i = (*next)++;
      // Keys spread over the 16 tablets.
      const std::string key = std::string(1, static_cast<char>('a' + i % 16)) +
                              cluster + std::to_string(i);
      const std::vector<cluster::Mutation> m = {cluster::SetCell{
          "cf", "q", cluster::kServerTimestamp, std::string(value_bytes, 'v')}};
      ASSERT_TRUE(
          instance_->replicas().Find(cluster)->MutateRow("t", key, m).ok());
      instance_->Charge(cluster, "t", key, OpKind::kWrite);
      if (*next < count) scheduler_.RunAfter(gap, *write);
    };
    scheduler_.RunAfter(sim::Duration(0), *write);
  }

  uint64_t MaxBacklog() {
    uint64_t most = 0;
    for (const ClusterConfig& from : instance_->Clusters()) {
      for (const ClusterConfig& to : instance_->Clusters()) {
        most = std::max(most, instance_->replicas().Backlog(from.id, to.id));
      }
    }
    return most;
  }

  sim::VirtualScheduler scheduler_{kStart};
  std::unique_ptr<Instance> instance_;
  DelayObserver observer_;
};

TEST_F(ReplicationLoadTest, FourRegionsAtFiveThousandWritesPerSecondKeepUp) {
  Make({{"c1", "us-east1-b", 4},
        {"c2", "us-west1-a", 4},
        {"c3", "europe-west1-b", 4},
        {"c4", "asia-east1-a", 4}},
       milliseconds(100));
  const sim::Duration length = seconds(20);
  for (const char* c : {"c1", "c2", "c3", "c4"}) {
    WriteSteadily(c, 5000, length);
  }
  observer_.since = kStart + seconds(2);  // after the first round trips
  std::vector<uint64_t> backlog;
  for (int s = 1; s <= 20; ++s) {
    scheduler_.RunUntil(kStart + seconds(s));
    backlog.push_back(MaxBacklog());
  }
  scheduler_.RunUntil(kStart + length + seconds(5));
  EXPECT_EQ(MaxBacklog(), 0u);
  ASSERT_GT(observer_.Count(), 3u * 4 * 5000 * 17);
  // Twice the link delay plus the batching interval (10 ms).
  const sim::Duration bound = 2 * milliseconds(100) + milliseconds(10);
  for (const char* c : {"c1", "c2", "c3", "c4"}) {
    const sim::Duration p99 = observer_.Percentile(c, 0.99);
    EXPECT_LT(p99, bound) << c << " p99 " << p99.count() << " ns";
    EXPECT_GE(observer_.Percentile(c, 0.0), milliseconds(100)) << c;
  }
  // Bounded: no more than a few round trips of writes per link, and no
  // growth from the first half to the second.
  const uint64_t first_half =
      *std::max_element(backlog.begin() + 2, backlog.begin() + 10);
  const uint64_t second_half =
      *std::max_element(backlog.begin() + 10, backlog.end());
  EXPECT_LT(second_half, 5000u / 2) << "entries behind on one link";
  EXPECT_LE(second_half, first_half + first_half / 2);
}

TEST_F(ReplicationLoadTest, AnOverloadedClusterLagsAndCatchesUp) {
  Make({{"c1", "us-east1-b", 1},
        {"c2", "us-east1-c", 1},
        {"c3", "us-east1-d", 1}},
       milliseconds(1));
  WriteSteadily("c1", 100, seconds(4));
  observer_.since = kStart + seconds(1);
  // c2's node gets 2 s of work of its own at t = 1 s.
  scheduler_.RunUntil(kStart + seconds(1));
  for (int i = 0; i < 28'000; ++i) {
    instance_->Charge("c2", "t", "a", OpKind::kWrite);
  }
  scheduler_.RunUntil(kStart + seconds(10));
  // Entries c1 committed at 1 s wait for c2's queue (about 2 s), later
  // ones less, and those after 3 s not at all.
  EXPECT_GT(observer_.Percentile("c2", 0.99), milliseconds(1900));
  EXPECT_LT(observer_.Percentile("c2", 0.05), milliseconds(20));
  EXPECT_LT(observer_.Percentile("c3", 0.99), milliseconds(20));
  EXPECT_EQ(MaxBacklog(), 0u);
  EXPECT_EQ(observer_.delays["c2"].size(), observer_.delays["c3"].size());
}

TEST_F(ReplicationLoadTest, FullNodesRefuseReplicationWhichComesAgainLater) {
  // c1 (4 nodes) takes more writes than c2's single node can apply.
  Make({{"c1", "us-east1-b", 4}, {"c2", "us-east1-c", 1}}, milliseconds(1));
  WriteSteadily("c1", 20'000, seconds(5));
  sim::Duration longest_queue{0};
  uint64_t most_behind = 0;
  for (int step = 1; step <= 50; ++step) {
    scheduler_.RunUntil(kStart + milliseconds(100 * step));
    const cluster::NodeModel* nodes = instance_->Nodes("c2");
    longest_queue =
        std::max(longest_queue, nodes->BusyUntil(0) - scheduler_.Now());
    most_behind = std::max(most_behind, MaxBacklog());
  }
  // c2's queue stays near its limit (1 s) instead of growing with the
  // backlog, which waits in c1's log; a request still finds room there.
  EXPECT_LT(longest_queue, milliseconds(1'100));
  EXPECT_GT(most_behind, 10'000u);
  const auto admission = instance_->Admit("c2", "t", "a", OpKind::kRead, 1,
                                          scheduler_.Now() + seconds(10));
  EXPECT_EQ(admission.outcome, cluster::NodeModel::Admission::Outcome::kServed);
  // Once the writes stop, c2 catches up.
  scheduler_.RunUntil(kStart + seconds(60));
  EXPECT_EQ(MaxBacklog(), 0u);
}

TEST_F(ReplicationLoadTest, ALinkBandwidthGovernsLag) {
  auto p99_with = [this](int64_t bandwidth) {
    instance_.reset();
    observer_ = DelayObserver{};
    scheduler_.RunUntilIdle();
    Make({{"c1", "us-east1-b", 1}, {"c2", "us-east1-c", 1}}, milliseconds(5),
         bandwidth);
    observer_.since = scheduler_.Now();
    // 200 writes/s of 1 KB: about 210 KB/s on the wire.
    WriteSteadily("c1", 200, seconds(5), 1000);
    scheduler_.RunFor(seconds(30));
    EXPECT_EQ(MaxBacklog(), 0u);
    return observer_.Percentile("c2", 0.99);
  };
  const sim::Duration unlimited = p99_with(0);
  const sim::Duration ample = p99_with(10'000'000);
  const sim::Duration scarce = p99_with(100'000);  // half what is written
  EXPECT_LT(unlimited, milliseconds(20));
  EXPECT_LT(ample, milliseconds(25));
  // Half the bandwidth needed: by the end, ~5 s of writes wait ~5 s more.
  EXPECT_GT(scarce, seconds(3));
}

}  // namespace
}  // namespace btsim::instance
