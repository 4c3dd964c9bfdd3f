// The acceptance scenario, in virtual time: three clusters (two in
// us-east1, one in europe-west1) with a 3 s replication delay.
#include "instance/instance.h"

#include <chrono>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/virtual_scheduler.h"

namespace btsim::instance {
namespace {

using appprofile::AppProfile;
using appprofile::RequestKind;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kStart = 1'700'000'000'000'000'000;

class RecordingObserver : public InstanceObserver {
 public:
  void OnRoute(std::string_view, std::string_view cluster) override {
    routes.emplace_back(cluster);
  }
  void OnFailover(std::string_view, std::string_view from,
                  std::string_view to) override {
    failovers.push_back(std::string(from) + "->" + std::string(to));
  }
  void OnRefusal(std::string_view, const Status& s) override {
    refusals.push_back(s.code());
  }
  std::vector<std::string> routes;
  std::vector<std::string> failovers;
  std::vector<StatusCode> refusals;
};

class InstanceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InstanceConfig config;
    config.clusters = {{"c1", "us-east1-b", 1},
                       {"c2", "us-east1-c", 1},
                       {"c3", "europe-west1-d", 1}};
    config.replication_latency = std::chrono::seconds(3);
    // Every link, a front end's to a cluster included, takes 3 s.
    config.detector_options.probe_timeout = std::chrono::seconds(8);
    auto created = Instance::Create("projects/p/instances/i", scheduler_,
                                    sim::Rng(42), config);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    instance_ = std::move(created).value();
    instance_->AddObserver(&observer_);
    AppProfile to_c1;
    to_c1.id = "to-c1";
    to_c1.routing = AppProfile::Routing::kSingleCluster;
    to_c1.cluster_id = "c1";
    to_c1.allow_transactional_writes = true;
    ASSERT_TRUE(instance_->profiles().Create(to_c1, false).ok());
    AppProfile to_c3 = to_c1;
    to_c3.id = "to-c3";
    to_c3.cluster_id = "c3";
    to_c3.allow_transactional_writes = false;
    ASSERT_TRUE(instance_->profiles().Create(to_c3, false).ok());
    const cluster::FamilyModification cf{
        "cf", cluster::FamilyModification::Kind::kCreate, {}};
    auto any = instance_->AnyLiveCluster();
    ASSERT_TRUE(any.ok());
    ASSERT_TRUE((*any)->CreateTable("t", {&cf, 1}, {}).ok());
    Run(std::chrono::seconds(10));  // the table reaches every cluster
  }

  void Run(sim::Duration d) { scheduler_.RunFor(d); }

  Status Write(std::string_view profile, const std::string& key,
               const std::string& value) {
    return instance_->Execute(
        profile, RequestKind::kSingleRow, key, [&](cluster::Cluster& c) {
          const std::vector<cluster::Mutation> m = {
              cluster::SetCell{"cf", "q", cluster::kServerTimestamp, value}};
          return c.MutateRow("t", key, m);
        });
  }

  // The value of row `key` seen through `profile`, "" when absent, or the
  // error.
  std::string Read(std::string_view profile, const std::string& key) {
    std::string value;
    Status s = instance_->Execute(
        profile, RequestKind::kSingleRow, key, [&](cluster::Cluster& c) {
          cluster::RowSet rows;
          rows.AddKey(key);
          cluster::ReadOptions options;
          options.rows = &rows;
          return c.ReadRows("t", options, [&](auto, auto cells) {
            value = std::string(cells[0].value);
            return true;
          });
        });
    return s.ok() ? value : s.ToString();
  }

  Status Increment(std::string_view profile) {
    return instance_->Execute(
        profile, RequestKind::kTransaction, "counter",
        [&](cluster::Cluster& c) {
          const std::vector<cluster::ReadModifyWriteRule> rules = {
              {"cf", "n", cluster::ReadModifyWriteRule::Kind::kIncrement, "",
               1}};
          return c.ReadModifyWriteRow("t", "counter", rules).status();
        });
  }

  sim::VirtualScheduler scheduler_{sim::Time(sim::Duration(kStart))};
  std::unique_ptr<Instance> instance_;
  RecordingObserver observer_;
};

TEST_F(InstanceTest, ThreeClustersAndAMultiClusterDefaultProfile) {
  std::vector<std::string> ids;
  for (const ClusterConfig& c : instance_->Clusters()) ids.push_back(c.id);
  EXPECT_THAT(ids, ElementsAre("c1", "c2", "c3"));
  auto def = instance_->profiles().Get("");
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def->routing, AppProfile::Routing::kMultiCluster);
}

TEST_F(InstanceTest, AWriteOnC1IsVisibleOnC3OnlyAfterReplication) {
  ASSERT_TRUE(Write("to-c1", "r", "hello").ok());
  EXPECT_EQ(Read("to-c1", "r"), "hello");
  EXPECT_EQ(Read("to-c3", "r"), "");  // not yet replicated
  Run(std::chrono::milliseconds(2900));
  EXPECT_EQ(Read("to-c3", "r"), "");
  const auto positions = instance_->replicas().LogPositions();
  EXPECT_FALSE(instance_->replicas().HasApplied(positions));
  Run(std::chrono::milliseconds(200));
  EXPECT_EQ(Read("to-c3", "r"), "hello");
  Run(std::chrono::seconds(5));  // acknowledgements travel back
  EXPECT_TRUE(instance_->replicas().HasApplied(positions));
}

TEST_F(InstanceTest, TransactionsAreGatedByTheProfile) {
  Status refused = Increment("");
  EXPECT_EQ(refused.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(refused.message(),
              HasSubstr("Single-row transactions are not allowed by this "
                        "app profile"));
  EXPECT_EQ(Increment("to-c3").code(), StatusCode::kFailedPrecondition);
  EXPECT_TRUE(Increment("to-c1").ok());
  EXPECT_EQ(Increment("no-such-profile").code(), StatusCode::kNotFound);
}

TEST_F(InstanceTest, DefaultProfileFailsOverWhileAPinnedProfileIsUnavailable) {
  ASSERT_TRUE(instance_->replicas().SetDown("c1", true).ok());
  // The default (multi-cluster) profile keeps sending to c1 until its front
  // end has seen five failures in a row, then serves from c2, the other
  // cluster of the client's region.
  int failed = 0;
  while (!Write("", "during", "outage").ok()) ++failed;
  EXPECT_EQ(failed, 5);
  observer_.routes.clear();
  observer_.failovers.clear();
  EXPECT_EQ(Read("", "during"), "outage");
  EXPECT_THAT(observer_.routes, ElementsAre("c2"));
  EXPECT_THAT(observer_.failovers, ElementsAre("c1->c2"));
  // A profile pinned to c1 does not fail over by itself: its requests go
  // to c1, which refuses them.
  Status pinned = Write("to-c1", "x", "y");
  EXPECT_EQ(pinned.code(), StatusCode::kUnavailable);

  // After cluster-up, c1 catches up with what was written during the
  // outage; probes readmit it and it serves again.
  ASSERT_TRUE(instance_->replicas().SetDown("c1", false).ok());
  Run(std::chrono::seconds(10));
  EXPECT_EQ(Read("to-c1", "during"), "outage");
  observer_.routes.clear();
  ASSERT_TRUE(Write("", "after", "back").ok());
  EXPECT_THAT(observer_.routes, ElementsAre("c1"));
}

TEST_F(InstanceTest, OnlyOneDropRowRangeAtATimePerTable) {
  ASSERT_TRUE(Write("to-c1", "p1", "v").ok());
  ASSERT_TRUE(instance_->DropRowRange("t", "p").ok());
  Status second = instance_->DropRowRange("t", "q");
  EXPECT_EQ(second.code(), StatusCode::kUnavailable);
  EXPECT_EQ(second.message(), "A DropRowRange operation is already ongoing");
  Run(std::chrono::seconds(10));  // the first drop reaches every cluster
  EXPECT_TRUE(instance_->DropRowRange("t", "q").ok());
  EXPECT_EQ(Read("to-c3", "p1"), "");
}

TEST_F(InstanceTest, RouteReportsTheClusterAndClusterIfUpChecksIt) {
  auto id = instance_->Route("to-c3", RequestKind::kMultiRow, "");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "c3");
  ASSERT_TRUE(instance_->replicas().SetDown("c3", true).ok());
  EXPECT_EQ(instance_->ClusterIfUp("c3").status().code(),
            StatusCode::kUnavailable);
  EXPECT_EQ(instance_->ClusterIfUp("nope").status().code(),
            StatusCode::kNotFound);
}

TEST_F(InstanceTest, EachClientZoneRoutesToItsNearestCluster) {
  // Requests from several zones, interleaved: each goes to its own zone's
  // cluster.
  auto route_from = [&](std::string_view zone) {
    auto id = instance_->Route("", RequestKind::kMultiRow, "", zone);
    return id.ok() ? *id : id.status().ToString();
  };
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(route_from("europe-west1-d"), "c3");
    EXPECT_EQ(route_from("us-east1-c"), "c2");
    EXPECT_EQ(route_from("us-east1-b"), "c1");
  }
  // A cluster that is down but never seen failing is still chosen: routing
  // does not read the truth.
  ASSERT_TRUE(instance_->replicas().SetDown("c2", true).ok());
  EXPECT_EQ(route_from("us-east1-c"), "c2");
  // Once us-east1-c's front end has seen c2 fail, it goes to the next
  // nearest (same region); other zones' front ends have seen nothing.
  for (int i = 0; i < 5; ++i) {
    instance_->ObserveOutcome("us-east1-c", "c2", StatusCode::kUnavailable);
  }
  EXPECT_FALSE(instance_->Admitted("us-east1-c", "c2"));
  EXPECT_TRUE(instance_->Admitted("us-east1-b", "c2"));
  EXPECT_EQ(route_from("us-east1-c"), "c1");
  EXPECT_EQ(route_from("europe-west1-d"), "c3");
}

TEST_F(InstanceTest, ARemovedClusterIsNoLongerProbed) {
  for (int i = 0; i < 5; ++i) {
    instance_->ObserveOutcome("europe-west1-d", "c3", StatusCode::kUnavailable);
  }
  ASSERT_FALSE(instance_->Admitted("europe-west1-d", "c3"));
  ASSERT_TRUE(instance_->RemoveCluster("c3").ok());
  EXPECT_TRUE(instance_->Admitted("europe-west1-d", "c3"));
  // No probe stays scheduled: the scheduler runs dry.
  scheduler_.RunUntilIdle(1'000'000);
  EXPECT_EQ(scheduler_.pending(), 0u);
}

TEST_F(InstanceTest, ReceiveShowsEachFaultOfTheCluster) {
  sim::Rng rng(7);
  using Kind = Instance::Reception::Kind;
  EXPECT_EQ(instance_->Receive("c1", "MutateRow", rng).kind, Kind::kServed);
  EXPECT_EQ(instance_->Receive("nope", "MutateRow", rng).status.code(),
            StatusCode::kNotFound);
  ASSERT_TRUE(instance_->replicas().SetDown("c1", true).ok());
  Instance::Reception down = instance_->Receive("c1", "MutateRow", rng);
  EXPECT_EQ(down.kind, Kind::kFailed);
  EXPECT_EQ(down.status.code(), StatusCode::kUnavailable);
  instance_->faults().SetDownMode("c1", DownMode::kBlackhole);
  EXPECT_EQ(instance_->Receive("c1", "MutateRow", rng).kind, Kind::kLost);
  ASSERT_TRUE(instance_->replicas().SetDown("c1", false).ok());

  instance_->faults().SetErrors(
      "c1", InjectedErrors{1.0, StatusCode::kInternal, "ReadRows"});
  Instance::Reception failed = instance_->Receive("c1", "ReadRows", rng);
  EXPECT_EQ(failed.kind, Kind::kFailed);
  EXPECT_EQ(failed.status.code(), StatusCode::kInternal);
  EXPECT_EQ(instance_->Receive("c1", "MutateRow", rng).kind, Kind::kServed);
  instance_->faults().SetErrors("c1", std::nullopt);

  instance_->faults().SetSlowness(
      "c1", sim::LatencyModel::Constant(std::chrono::milliseconds(30)));
  Instance::Reception slow = instance_->Receive("c1", "ReadRows", rng);
  EXPECT_EQ(slow.kind, Kind::kServed);
  EXPECT_EQ(slow.added, std::chrono::milliseconds(30));
  EXPECT_NE(slow.cluster, nullptr);
}

// Ejects `cluster` from the us-east1-b front end (five failures), then
// runs the probes for `d`; whether it was readmitted.
bool ReadmittedAfterProbes(Instance& instance, sim::VirtualScheduler& scheduler,
                           const std::string& cluster, sim::Duration d) {
  for (int i = 0; i < 5; ++i) {
    instance.ObserveOutcome("us-east1-b", cluster, StatusCode::kUnavailable);
  }
  EXPECT_FALSE(instance.Admitted("us-east1-b", cluster));
  scheduler.RunFor(d);
  return instance.Admitted("us-east1-b", cluster);
}

TEST_F(InstanceTest, ProbesReadmitOnlyAClusterThatAnswersInTime) {
  // Healthy: readmitted once the ejection (5 s) is over and three probes
  // a second apart have answered (each takes 6 s there and back).
  EXPECT_TRUE(ReadmittedAfterProbes(*instance_, scheduler_, "c1",
                                    std::chrono::seconds(10)));
  // Black-holed: probes time out.
  ASSERT_TRUE(instance_->replicas().SetDown("c2", true).ok());
  instance_->faults().SetDownMode("c2", DownMode::kBlackhole);
  EXPECT_FALSE(ReadmittedAfterProbes(*instance_, scheduler_, "c2",
                                     std::chrono::seconds(30)));
  ASSERT_TRUE(instance_->replicas().SetDown("c2", false).ok());
  Run(std::chrono::seconds(60));
  EXPECT_TRUE(instance_->Admitted("us-east1-b", "c2"));
  // Slower than the probe timeout (8 s): still out.
  instance_->faults().SetSlowness(
      "c3", sim::LatencyModel::Constant(std::chrono::seconds(3)));
  EXPECT_FALSE(ReadmittedAfterProbes(*instance_, scheduler_, "c3",
                                     std::chrono::seconds(30)));
  instance_->faults().SetSlowness("c3", std::nullopt);
  Run(std::chrono::seconds(60));
  EXPECT_TRUE(instance_->Admitted("us-east1-b", "c3"));
  // The zone cut off from c1: its probes are lost; another zone's front
  // end is not cut.
  instance_->faults().Cut({"us-east1-b", "", "c1", true, false});
  EXPECT_FALSE(ReadmittedAfterProbes(*instance_, scheduler_, "c1",
                                     std::chrono::seconds(30)));
  for (int i = 0; i < 5; ++i) {
    instance_->ObserveOutcome("us-east1-c", "c1", StatusCode::kUnavailable);
  }
  Run(std::chrono::seconds(30));
  EXPECT_TRUE(instance_->Admitted("us-east1-c", "c1"));
  EXPECT_FALSE(instance_->Admitted("us-east1-b", "c1"));
  // Injected errors on PingAndWarm fail probes too.
  instance_->faults().Mend("us-east1-b", "", "c1");
  instance_->faults().SetErrors(
      "c1", InjectedErrors{1.0, StatusCode::kUnavailable, "PingAndWarm"});
  Run(std::chrono::seconds(30));
  EXPECT_FALSE(instance_->Admitted("us-east1-b", "c1"));
  instance_->faults().SetErrors("c1", std::nullopt);
  Run(std::chrono::seconds(60));
  EXPECT_TRUE(instance_->Admitted("us-east1-b", "c1"));
}

TEST_F(InstanceTest, ASkewedClusterClockWinsLastWriterWins) {
  // c1's clock 10 s ahead: its server-assigned timestamps are newer than
  // those of a write made on c2 a second later.
  ASSERT_TRUE(instance_->replicas()
                  .SetClockOffset("c1", std::chrono::seconds(10))
                  .ok());
  EXPECT_EQ(instance_->replicas()
                .SetClockOffset("c1", std::chrono::minutes(61))
                .code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(Write("to-c1", "k", "from-c1").ok());
  Run(std::chrono::seconds(1));
  ASSERT_TRUE(Write("to-c3", "k", "from-c3").ok());
  Run(std::chrono::seconds(10));  // both replicate everywhere
  EXPECT_EQ(Read("to-c1", "k"), "from-c1");
  EXPECT_EQ(Read("to-c3", "k"), "from-c1");
  // Back to 0: the clock stands still until real time catches up, never
  // going back.
  auto* c1 = *instance_->ClusterIfUp("c1");
  const sim::Time before = c1->clock().Now();
  ASSERT_TRUE(instance_->replicas().SetClockOffset("c1", {}).ok());
  EXPECT_EQ(c1->clock().Now(), before);
  Run(std::chrono::seconds(11));
  EXPECT_GT(c1->clock().Now(), before);
}

TEST_F(InstanceTest, AStalledClusterShipsNothingUntilResumed) {
  ASSERT_TRUE(instance_->replicas().SetStalled("c1", true).ok());
  EXPECT_TRUE(instance_->replicas().IsStalled("c1"));
  ASSERT_TRUE(Write("to-c1", "s", "v").ok());
  Run(std::chrono::seconds(10));
  EXPECT_EQ(Read("to-c3", "s"), "");
  EXPECT_EQ(Read("to-c1", "s"), "v");
  ASSERT_TRUE(instance_->replicas().SetStalled("c1", false).ok());
  Run(std::chrono::seconds(4));
  EXPECT_EQ(Read("to-c3", "s"), "v");
  EXPECT_EQ(instance_->replicas().SetStalled("nope", true).code(),
            StatusCode::kNotFound);
}

TEST(ClusterFaultsTest, CutsApplyToTheirZoneOrClientAndDirection) {
  ClusterFaults faults;
  faults.Cut({"us-east1-b", "", "c1", true, false});
  faults.Cut({"us-east1-c", "app", "c2", false, true});
  EXPECT_TRUE(faults.RequestLost("us-east1-b", "", "c1"));
  EXPECT_TRUE(faults.RequestLost("us-east1-b", "anyone", "c1"));
  EXPECT_FALSE(faults.ReplyLost("us-east1-b", "anyone", "c1"));
  EXPECT_FALSE(faults.RequestLost("us-east1-b", "", "c2"));
  EXPECT_TRUE(faults.ReplyLost("us-east1-c", "app", "c2"));
  EXPECT_FALSE(faults.RequestLost("us-east1-c", "app", "c2"));
  EXPECT_FALSE(faults.ReplyLost("us-east1-c", "other", "c2"));
  EXPECT_FALSE(faults.ReplyLost("us-east1-c", "", "c2"));  // the front end
  // A cut replaces the one with the same zone, client and cluster.
  faults.Cut({"us-east1-b", "", "c1", false, true});
  EXPECT_FALSE(faults.RequestLost("us-east1-b", "", "c1"));
  EXPECT_TRUE(faults.ReplyLost("us-east1-b", "", "c1"));
  EXPECT_EQ(faults.cuts().size(), 2u);
  faults.Mend("us-east1-b", "", "c1");
  EXPECT_FALSE(faults.ReplyLost("us-east1-b", "", "c1"));
  faults.SetDownMode("c2", DownMode::kBlackhole);
  faults.Forget("c2");
  EXPECT_TRUE(faults.cuts().empty());
  EXPECT_EQ(faults.down_mode("c2"), DownMode::kRefuse);
}

TEST(ClusterFaultsTest, ErrorsAreDrawnOnlyForTheirMethodAndFraction) {
  ClusterFaults faults;
  faults.SetErrors("c1", InjectedErrors{0.25, StatusCode::kInternal, ""});
  sim::Rng rng(3);
  int failed = 0;
  for (int i = 0; i < 10000; ++i) {
    if (!faults.Arrive("c1", "MutateRow", rng).status.ok()) ++failed;
  }
  EXPECT_NEAR(failed, 2500, 200);
  EXPECT_TRUE(faults.Arrive("c2", "MutateRow", rng).status.ok());
  // No fault, no draw: the stream is untouched.
  sim::Rng a(5), b(5);
  faults.Arrive("c2", "MutateRow", a);
  EXPECT_EQ(a.Next(), b.Next());
}

TEST(InstanceOracleTest, TheOracleRoutesAroundADownClusterAtOnce) {
  sim::VirtualScheduler scheduler(sim::Time(std::chrono::seconds(1)));
  InstanceConfig config;
  config.clusters = {{"c1", "us-east1-b", 1}, {"c2", "us-east1-c", 1}};
  config.detector = InstanceConfig::Detector::kOracle;
  auto instance = Instance::Create("i", scheduler, sim::Rng(1), config);
  ASSERT_TRUE(instance.ok());
  ASSERT_TRUE((*instance)->replicas().SetDown("c1", true).ok());
  auto id = (*instance)->Route("", RequestKind::kMultiRow, "");
  ASSERT_TRUE(id.ok());
  EXPECT_EQ(*id, "c2");
  ASSERT_TRUE((*instance)->replicas().SetDown("c1", false).ok());
  EXPECT_EQ(*(*instance)->Route("", RequestKind::kMultiRow, ""), "c1");
}

TEST_F(InstanceTest, SchemaChangesCanBeMadeVisibleEverywhereAtOnce) {
  auto id = instance_->AnyLiveClusterId();
  ASSERT_TRUE(id.ok());
  const cluster::FamilyModification cf{
      "cf", cluster::FamilyModification::Kind::kCreate, {}};
  ASSERT_TRUE(
      instance_->replicas().Find(*id)->CreateTable("fresh", {&cf, 1}, {}).ok());
  EXPECT_FALSE(instance_->replicas().Find("c3")->GetTable("fresh").ok());
  instance_->replicas().ApplyNewestEverywhere(*id);
  EXPECT_TRUE(instance_->replicas().Find("c3")->GetTable("fresh").ok());
  // The log still ships it; applying it again changes nothing.
  Run(std::chrono::seconds(10));
  EXPECT_TRUE(instance_->replicas().Find("c3")->GetTable("fresh").ok());
}

TEST_F(InstanceTest, EveryClusterDownIsUnavailable) {
  for (const char* id : {"c1", "c2", "c3"}) {
    ASSERT_TRUE(instance_->replicas().SetDown(id, true).ok());
  }
  EXPECT_EQ(Write("", "r", "v").code(), StatusCode::kUnavailable);
  EXPECT_EQ(instance_->AnyLiveCluster().status().code(),
            StatusCode::kUnavailable);
}

TEST_F(InstanceTest, AddedClusterIsSeededAndRoutable) {
  ASSERT_TRUE(Write("to-c1", "old", "v1").ok());
  Run(std::chrono::seconds(10));
  ASSERT_TRUE(instance_->AddCluster({"c4", "asia-east1-a", 2}).ok());
  AppProfile to_c4;
  to_c4.id = "to-c4";
  to_c4.routing = AppProfile::Routing::kSingleCluster;
  to_c4.cluster_id = "c4";
  ASSERT_TRUE(instance_->profiles().Create(to_c4, false).ok());
  EXPECT_EQ(Read("to-c4", "old"), "v1");  // seeded copy, no delay
  ASSERT_TRUE(instance_->RemoveCluster("c4").ok());
  EXPECT_EQ(Read("to-c4", "old").substr(0, 9), "NOT_FOUND");
}

TEST(InstanceConfigTest, BadConfigurationsAreInvalidArgument) {
  sim::VirtualScheduler scheduler{sim::Time(sim::Duration(kStart))};
  auto create = [&](InstanceConfig config) {
    return Instance::Create("i", scheduler, sim::Rng(1), config).status();
  };
  EXPECT_EQ(create({}).code(), StatusCode::kInvalidArgument);
  InstanceConfig same_zone;
  same_zone.clusters = {{"a", "us-east1-b", 1}, {"b", "us-east1-b", 1}};
  Status s = create(same_zone);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("clusters[1]"));
  InstanceConfig no_nodes;
  no_nodes.clusters = {{"a", "us-east1-b", 0}};
  EXPECT_EQ(create(no_nodes).code(), StatusCode::kInvalidArgument);
  InstanceConfig five;
  for (int i = 0; i < 5; ++i) {
    five.clusters.push_back(
        {"c" + std::to_string(i), "zone-" + std::to_string(i) + "-a", 1});
  }
  EXPECT_EQ(create(five).code(), StatusCode::kInvalidArgument);
}

TEST(InstanceConfigTest, OneClusterDefaultProfileAllowsTransactions) {
  sim::VirtualScheduler scheduler{sim::Time(sim::Duration(kStart))};
  InstanceConfig config;
  config.clusters = {{"solo", "us-central1-a", 3}};
  auto instance = Instance::Create("i", scheduler, sim::Rng(1), config);
  ASSERT_TRUE(instance.ok());
  auto def = (*instance)->profiles().Get("default");
  ASSERT_TRUE(def.ok());
  EXPECT_TRUE(def->transactional());
  EXPECT_EQ(def->cluster_id, "solo");
}

TEST(InstanceConfigTest, CreatesProfilesAndAppliesLinkOverrides) {
  sim::VirtualScheduler scheduler{sim::Time(sim::Duration(kStart))};
  InstanceConfig config;
  config.clusters = {{"c1", "us-east1-b", 1},
                     {"c2", "us-east1-c", 1},
                     {"c3", "europe-west1-d", 1}};
  AppProfile txn;
  txn.id = "txn";
  txn.routing = AppProfile::Routing::kSingleCluster;
  txn.cluster_id = "c1";
  txn.allow_transactional_writes = true;
  AppProfile group;
  group.id = "group";
  group.cluster_ids = {"c1", "c2"};
  group.row_affinity = true;
  config.app_profiles = {txn, group};
  const auto slow = sim::LatencyModel::Constant(std::chrono::seconds(3));
  const auto fast = sim::LatencyModel::Constant(std::chrono::milliseconds(1));
  config.link_overrides = {{"c1", "c3", slow, /*one_way=*/true},
                           {"c1", "c2", fast, /*one_way=*/false}};
  auto instance = Instance::Create("i", scheduler, sim::Rng(1), config);
  ASSERT_TRUE(instance.ok()) << instance.status().ToString();
  std::vector<std::string> ids;
  for (const AppProfile& p : (*instance)->profiles().List()) {
    ids.push_back(p.id);
  }
  EXPECT_THAT(ids, ElementsAre("default", "group", "txn"));
  EXPECT_TRUE((*instance)->profiles().Get("txn")->transactional());
  sim::Transport& transport = (*instance)->transport();
  EXPECT_EQ(transport.LatencyOf("us-east1-b", "europe-west1-d"), slow);
  EXPECT_NE(transport.LatencyOf("europe-west1-d", "us-east1-b"), slow);
  EXPECT_EQ(transport.LatencyOf("us-east1-b", "us-east1-c"), fast);
  EXPECT_EQ(transport.LatencyOf("us-east1-c", "us-east1-b"), fast);
}

TEST(InstanceConfigTest, BadProfilesAndOverridesAreInvalidArgument) {
  sim::VirtualScheduler scheduler{sim::Time(sim::Duration(kStart))};
  auto create = [&](InstanceConfig config) {
    return Instance::Create("i", scheduler, sim::Rng(1), config).status();
  };
  InstanceConfig base;
  base.clusters = {{"c1", "us-east1-b", 1}, {"c2", "us-east1-c", 1}};

  InstanceConfig bad_profile = base;
  AppProfile ok;
  ok.id = "ok";
  AppProfile unknown;
  unknown.id = "p";
  unknown.routing = AppProfile::Routing::kSingleCluster;
  unknown.cluster_id = "nope";
  bad_profile.app_profiles = {ok, unknown};
  Status s = create(bad_profile);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("app_profiles[1]"));

  InstanceConfig duplicate = base;
  AppProfile def;
  def.id = "default";
  duplicate.app_profiles = {def};
  s = create(duplicate);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("app_profiles[0]"));

  const auto model = sim::LatencyModel::Constant(std::chrono::seconds(1));
  InstanceConfig bad_link = base;
  bad_link.link_overrides = {{"c1", "nope", model, false}};
  s = create(bad_link);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("link_overrides[0].to_cluster"));

  InstanceConfig both = base;
  both.link_overrides = {{"c1", "c2", model, false}};
  both.replication_latency = std::chrono::seconds(3);
  s = create(both);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("replication_latency"));
}

}  // namespace
}  // namespace btsim::instance
