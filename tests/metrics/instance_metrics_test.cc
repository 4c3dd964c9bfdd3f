// InstanceMetrics on a real three-cluster instance in virtual time: the
// series that engine events and Sample produce, read back through the
// registry's Collect.
#include "metrics/instance_metrics.h"

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <prometheus/metric_family.h>
#include <prometheus/registry.h>

#include "sim/virtual_scheduler.h"

namespace btsim::metrics {
namespace {

using appprofile::AppProfile;
using appprofile::RequestKind;
using prometheus::ClientMetric;
using prometheus::MetricFamily;
using Labels = std::map<std::string, std::string>;

constexpr int64_t kStart = 1'700'000'000'000'000'000;

// The series of family `name` whose labels include all of `labels`; null
// when none. Fails the test when several match.
const ClientMetric* Find(const std::vector<MetricFamily>& families,
                         const std::string& name, const Labels& labels) {
  const ClientMetric* found = nullptr;
  for (const MetricFamily& f : families) {
    if (f.name != name) continue;
    for (const ClientMetric& m : f.metric) {
      Labels have;
      for (const auto& l : m.label) have[l.name] = l.value;
      bool match = true;
      for (const auto& [k, v] : labels) {
        auto it = have.find(k);
        if (it == have.end() || it->second != v) match = false;
      }
      if (!match) continue;
      EXPECT_EQ(found, nullptr) << "several series of " << name << " match";
      found = &m;
    }
  }
  return found;
}

// How many series of family `name` carry label `key` = `value`.
int CountWith(const std::vector<MetricFamily>& families,
              const std::string& name, const std::string& key,
              const std::string& value) {
  int n = 0;
  for (const MetricFamily& f : families) {
    if (f.name != name) continue;
    for (const ClientMetric& m : f.metric) {
      for (const auto& l : m.label) n += l.name == key && l.value == value;
    }
  }
  return n;
}

class InstanceMetricsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    instance::InstanceConfig config;
    config.clusters = {{"c1", "us-east1-b", 1},
                       {"c2", "us-east1-c", 1},
                       {"c3", "europe-west1-d", 1}};
    config.replication_latency = std::chrono::seconds(3);
    auto created = instance::Instance::Create("projects/p/instances/i",
                                              scheduler_, sim::Rng(42), config);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    instance_ = std::move(created).value();
    AppProfile to_c1;
    to_c1.id = "to-c1";
    to_c1.routing = AppProfile::Routing::kSingleCluster;
    to_c1.cluster_id = "c1";
    to_c1.allow_transactional_writes = true;
    ASSERT_TRUE(instance_->profiles().Create(to_c1, false).ok());
    const cluster::FamilyModification cf{
        "cf", cluster::FamilyModification::Kind::kCreate, {}};
    auto any = instance_->AnyLiveCluster();
    ASSERT_TRUE(any.ok());
    ASSERT_TRUE((*any)->CreateTable("t", {&cf, 1}, {}).ok());
    scheduler_.RunFor(std::chrono::seconds(10));  // the table is everywhere
    // From here on, the metrics see everything.
    metrics_ = std::make_unique<InstanceMetrics>(registry_, "i");
    instance_->AddObserver(metrics_.get());
  }

  void TearDown() override {
    if (instance_ && metrics_) instance_->RemoveObserver(metrics_.get());
  }

  Status Write(std::string_view profile, const std::string& key) {
    return instance_->Execute(
        profile, RequestKind::kSingleRow, key, [&](cluster::Cluster& c) {
          const std::vector<cluster::Mutation> m = {cluster::SetCell{
              "cf", "q", cluster::kServerTimestamp, "value-" + key}};
          return c.MutateRow("t", key, m);
        });
  }

  std::vector<MetricFamily> SampleAndCollect() {
    metrics_->Sample(*instance_);
    return registry_.Collect();
  }

  double GaugeOf(const std::vector<MetricFamily>& families,
                 const std::string& name, const Labels& labels) {
    const ClientMetric* m = Find(families, name, labels);
    EXPECT_NE(m, nullptr) << name;
    return m == nullptr ? -1 : m->gauge.value;
  }

  sim::VirtualScheduler scheduler_{sim::Time(sim::Duration(kStart))};
  prometheus::Registry registry_;
  std::unique_ptr<instance::Instance> instance_;
  std::unique_ptr<InstanceMetrics> metrics_;
};

TEST_F(InstanceMetricsTest, RequestsByCodeWithLatencyAndRows) {
  instance::RequestReport ok;
  ok.cluster = "c1";
  ok.app_profile = "to-c1";
  ok.method = "MutateRow";
  ok.latency = std::chrono::milliseconds(2);
  ok.modified_rows = 1;
  metrics_->OnRequest(ok);
  metrics_->OnRequest(ok);
  instance::RequestReport unavailable = ok;
  unavailable.code = StatusCode::kUnavailable;
  unavailable.latency = sim::Duration(0);
  unavailable.modified_rows = 0;
  metrics_->OnRequest(unavailable);
  instance::RequestReport read;
  read.cluster = "c2";
  read.method = "ReadRows";  // default profile
  read.latency = std::chrono::microseconds(500);
  read.returned_rows = 7;
  metrics_->OnRequest(read);

  const auto families = registry_.Collect();
  const ClientMetric* m = Find(families, "bigtable_server_requests_total",
                               {{"bigtable_instance", "i"},
                                {"cluster", "c1"},
                                {"app_profile", "to-c1"},
                                {"method", "MutateRow"},
                                {"code", "OK"}});
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->counter.value, 2);
  m = Find(families, "bigtable_server_requests_total",
           {{"cluster", "c1"}, {"code", "UNAVAILABLE"}});
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->counter.value, 1);
  m = Find(families, "bigtable_server_latencies_seconds",
           {{"cluster", "c1"}, {"app_profile", "to-c1"}});
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->histogram.sample_count, 3u);
  EXPECT_DOUBLE_EQ(m->histogram.sample_sum, 0.004);
  // Two of the three took 2 ms: in the bucket le=0.002, with the 0 s one.
  ASSERT_EQ(m->histogram.bucket.size(), LatencyBuckets().size() + 1);
  EXPECT_EQ(m->histogram.bucket[1].upper_bound, 0.001);
  EXPECT_EQ(m->histogram.bucket[1].cumulative_count, 1u);
  EXPECT_EQ(m->histogram.bucket[2].cumulative_count, 3u);
  m = Find(families, "bigtable_server_modified_rows_total",
           {{"cluster", "c1"}, {"method", "MutateRow"}});
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->counter.value, 2);
  m = Find(families, "bigtable_server_returned_rows_total",
           {{"cluster", "c2"}, {"app_profile", "default"}});
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->counter.value, 7);
}

TEST_F(InstanceMetricsTest, RefusedTransactionsAreCountedByProfileAndMethod) {
  instance::RequestReport refused;
  refused.app_profile = "";
  refused.method = "ReadModifyWriteRow";
  refused.code = StatusCode::kFailedPrecondition;
  refused.refused = true;
  metrics_->OnRequest(refused);
  metrics_->OnRequest(refused);
  const auto families = registry_.Collect();
  const ClientMetric* m =
      Find(families, "bigtable_transactions_refused_total",
           {{"app_profile", "default"}, {"method", "ReadModifyWriteRow"}});
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->counter.value, 2);
  m = Find(families, "bigtable_server_requests_total",
           {{"cluster", ""}, {"code", "FAILED_PRECONDITION"}});
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->counter.value, 2);
}

TEST_F(InstanceMetricsTest, AppProfileLabelsAreBounded) {
  instance::RequestReport r;
  r.cluster = "c1";
  r.method = "ReadRows";
  r.app_profile = "not a profile\n\"id\"";
  metrics_->OnRequest(r);
  std::vector<std::string> ids;
  for (int i = 0; i < 70; ++i) ids.push_back("p" + std::to_string(i));
  for (const std::string& id : ids) {
    r.app_profile = id;
    metrics_->OnRequest(r);
  }
  const auto families = registry_.Collect();
  EXPECT_NE(Find(families, "bigtable_server_requests_total",
                 {{"app_profile", "invalid"}}),
            nullptr);
  EXPECT_NE(
      Find(families, "bigtable_server_requests_total", {{"app_profile", "p0"}}),
      nullptr);
  // 64 distinct ids (p0..p63), then "other" for the remaining six.
  const ClientMetric* other = Find(families, "bigtable_server_requests_total",
                                   {{"app_profile", "other"}});
  ASSERT_NE(other, nullptr);
  EXPECT_EQ(other->counter.value, 6);
}

TEST_F(InstanceMetricsTest, ReplicationLatencyFromAppliedEntries) {
  ASSERT_TRUE(Write("to-c1", "r1").ok());
  scheduler_.RunFor(std::chrono::seconds(10));
  const auto families = registry_.Collect();
  for (const char* peer : {"c2", "c3"}) {
    const ClientMetric* m =
        Find(families, "bigtable_replication_latency_seconds",
             {{"source_cluster", "c1"}, {"destination_cluster", peer}});
    ASSERT_NE(m, nullptr) << peer;
    EXPECT_EQ(m->histogram.sample_count, 1u);
    // A constant 3 s link delay (plus the shipper's batching, if any).
    EXPECT_GE(m->histogram.sample_sum, 3.0) << peer;
    EXPECT_LT(m->histogram.sample_sum, 3.1) << peer;
    m = Find(families, "bigtable_replication_applied_entries_total",
             {{"source_cluster", "c1"}, {"destination_cluster", peer}});
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->counter.value, 1);
  }
  EXPECT_EQ(Find(families, "bigtable_replication_latency_seconds",
                 {{"source_cluster", "c2"}}),
            nullptr);
}

TEST_F(InstanceMetricsTest, FailoverAndClusterDown) {
  ASSERT_TRUE(instance_->replicas().SetDown("c1", true).ok());
  // The default profile: to c1 until its front end has seen it fail, then
  // to c2.
  int failed = 0;
  while (!Write("", "during").ok() && failed < 10) ++failed;
  ASSERT_EQ(failed, 5);
  const auto families = SampleAndCollect();
  const ClientMetric* m =
      Find(families, "bigtable_multi_cluster_failovers_total",
           {{"app_profile", "default"},
            {"from_cluster", "c1"},
            {"to_cluster", "c2"}});
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->counter.value, 1);
  EXPECT_EQ(GaugeOf(families, "bigtable_cluster_up", {{"cluster", "c1"}}), 0);
  EXPECT_EQ(GaugeOf(families, "bigtable_cluster_up", {{"cluster", "c2"}}), 1);
  // What the front end believes: c1 ejected, c2 admitted.
  const ClientMetric* ejections =
      Find(families, "btsim_front_end_ejections_total",
           {{"zone", "us-east1-b"}, {"cluster", "c1"}});
  ASSERT_NE(ejections, nullptr);
  EXPECT_EQ(ejections->counter.value, 1);
  EXPECT_EQ(GaugeOf(families, "btsim_front_end_cluster_admitted",
                    {{"zone", "us-east1-b"}, {"cluster", "c1"}}),
            0);
  EXPECT_EQ(GaugeOf(families, "btsim_front_end_cluster_admitted",
                    {{"zone", "us-east1-b"}, {"cluster", "c2"}}),
            1);
  // Its probes of c1 fail (down); counted by result.
  scheduler_.RunFor(std::chrono::milliseconds(2600));
  const ClientMetric* probes =
      Find(SampleAndCollect(), "btsim_front_end_probes_total",
           {{"zone", "us-east1-b"}, {"cluster", "c1"}, {"result", "failed"}});
  ASSERT_NE(probes, nullptr);
  EXPECT_EQ(probes->counter.value, 2);
  ASSERT_TRUE(instance_->replicas().SetDown("c1", false).ok());
  EXPECT_EQ(
      GaugeOf(SampleAndCollect(), "bigtable_cluster_up", {{"cluster", "c1"}}),
      1);
}

TEST_F(InstanceMetricsTest, BacklogAndMaxDelayDuringAPartition) {
  const std::vector<MetricFamily> before = SampleAndCollect();
  EXPECT_EQ(GaugeOf(before, "bigtable_replication_max_delay_seconds",
                    {{"bigtable_instance", "i"}, {"table", "t"}}),
            0);
  for (const char* peer : {"us-east1-c", "europe-west1-d"}) {
    instance_->transport().Partition("us-east1-b", peer);
  }
  ASSERT_TRUE(Write("to-c1", "a").ok());
  ASSERT_TRUE(Write("to-c1", "b").ok());
  ASSERT_TRUE(Write("to-c1", "c").ok());
  scheduler_.RunFor(std::chrono::seconds(5));
  const std::vector<MetricFamily> during = SampleAndCollect();
  for (const char* peer : {"c2", "c3"}) {
    EXPECT_EQ(
        GaugeOf(during, "bigtable_replication_backlog_entries",
                {{"source_cluster", "c1"}, {"destination_cluster", peer}}),
        3)
        << peer;
  }
  EXPECT_EQ(GaugeOf(during, "bigtable_replication_backlog_entries",
                    {{"source_cluster", "c2"}, {"destination_cluster", "c1"}}),
            0);
  // The oldest unapplied write is 5 s old (give or take the commit clock's
  // microsecond bumps).
  const double delay = GaugeOf(during, "bigtable_replication_max_delay_seconds",
                               {{"table", "t"}});
  EXPECT_GT(delay, 4.999);
  EXPECT_LE(delay, 5.0);

  for (const char* peer : {"us-east1-c", "europe-west1-d"}) {
    instance_->transport().Heal("us-east1-b", peer);
  }
  // The shippers resend after their retransmit timeouts, which follow the
  // measured 6 s round trips (tens of seconds).
  scheduler_.RunFor(std::chrono::seconds(60));
  const std::vector<MetricFamily> after = SampleAndCollect();
  EXPECT_EQ(GaugeOf(after, "bigtable_replication_backlog_entries",
                    {{"source_cluster", "c1"}, {"destination_cluster", "c3"}}),
            0);
  EXPECT_EQ(GaugeOf(after, "bigtable_replication_max_delay_seconds",
                    {{"table", "t"}}),
            0);
}

TEST_F(InstanceMetricsTest, NodesStorageTabletsAndCpu) {
  std::vector<MetricFamily> families = SampleAndCollect();
  EXPECT_EQ(GaugeOf(families, "bigtable_cluster_nodes", {{"cluster", "c1"}}),
            1);
  const double empty =
      GaugeOf(families, "bigtable_cluster_storage_bytes", {{"cluster", "c1"}});
  EXPECT_EQ(GaugeOf(families, "bigtable_cluster_cpu_load", {{"cluster", "c1"}}),
            0);

  ASSERT_TRUE(instance_->SetNodes("c1", 3).ok());
  for (int i = 0; i < 20; ++i) {
    ASSERT_TRUE(Write("to-c1", "row" + std::to_string(i)).ok());
  }
  instance_->Charge("c1", "t", "row1", cluster::OpKind::kWrite, 1000);
  families = SampleAndCollect();
  EXPECT_EQ(GaugeOf(families, "bigtable_cluster_nodes", {{"cluster", "c1"}}),
            3);
  EXPECT_GT(
      GaugeOf(families, "bigtable_cluster_storage_bytes", {{"cluster", "c1"}}),
      empty);
  EXPECT_EQ(GaugeOf(families, "bigtable_tablets",
                    {{"cluster", "c1"}, {"table", "t"}}),
            1);
  const double cpu =
      GaugeOf(families, "bigtable_cluster_cpu_load", {{"cluster", "c1"}});
  const double hottest = GaugeOf(
      families, "bigtable_cluster_cpu_load_hottest_node", {{"cluster", "c1"}});
  EXPECT_GT(cpu, 0);
  EXPECT_GE(hottest, cpu);
  EXPECT_EQ(GaugeOf(families, "bigtable_cluster_cpu_load", {{"cluster", "c2"}}),
            0);
}

TEST_F(InstanceMetricsTest, SeriesOfARemovedClusterOrTableAreRemoved) {
  std::vector<MetricFamily> families = SampleAndCollect();
  EXPECT_EQ(CountWith(families, "bigtable_cluster_up", "cluster", "c3"), 1);
  EXPECT_EQ(CountWith(families, "bigtable_replication_backlog_entries",
                      "destination_cluster", "c3"),
            2);
  ASSERT_TRUE(instance_->RemoveCluster("c3").ok());
  families = SampleAndCollect();
  for (const char* name :
       {"bigtable_cluster_up", "bigtable_cluster_cpu_load",
        "bigtable_cluster_cpu_load_hottest_node", "bigtable_cluster_nodes",
        "bigtable_cluster_storage_bytes", "bigtable_tablets"}) {
    EXPECT_EQ(CountWith(families, name, "cluster", "c3"), 0) << name;
    EXPECT_EQ(CountWith(families, name, "cluster", "c1"), 1) << name;
  }
  EXPECT_EQ(CountWith(families, "bigtable_replication_backlog_entries",
                      "destination_cluster", "c3"),
            0);
  EXPECT_EQ(CountWith(families, "bigtable_replication_backlog_entries",
                      "source_cluster", "c3"),
            0);
  EXPECT_EQ(CountWith(families, "bigtable_replication_backlog_entries",
                      "source_cluster", "c1"),
            1);

  auto c1 = instance_->ClusterIfUp("c1");
  ASSERT_TRUE(c1.ok());
  ASSERT_TRUE((*c1)->DeleteTable("t").ok());
  scheduler_.RunFor(std::chrono::seconds(10));
  families = SampleAndCollect();
  EXPECT_EQ(CountWith(families, "bigtable_tablets", "table", "t"), 0);
  EXPECT_EQ(CountWith(families, "bigtable_replication_max_delay_seconds",
                      "table", "t"),
            0);
}

TEST_F(InstanceMetricsTest, DestroyingTheMetricsRemovesItsSeries) {
  metrics_->OnFailover("", "c1", "c2");
  ASSERT_FALSE(SampleAndCollect().empty());
  instance_->RemoveObserver(metrics_.get());
  metrics_.reset();
  EXPECT_TRUE(registry_.Collect().empty());
}

TEST_F(InstanceMetricsTest, TwoInstancesShareARegistry) {
  InstanceMetrics other(registry_, "j");
  metrics_->OnFailover("", "c1", "c2");
  other.OnFailover("", "c1", "c2");
  other.OnFailover("", "c1", "c2");
  const auto families = registry_.Collect();
  const ClientMetric* i =
      Find(families, "bigtable_multi_cluster_failovers_total",
           {{"bigtable_instance", "i"}});
  const ClientMetric* j =
      Find(families, "bigtable_multi_cluster_failovers_total",
           {{"bigtable_instance", "j"}});
  ASSERT_NE(i, nullptr);
  ASSERT_NE(j, nullptr);
  EXPECT_EQ(i->counter.value, 1);
  EXPECT_EQ(j->counter.value, 2);
}

}  // namespace
}  // namespace btsim::metrics
