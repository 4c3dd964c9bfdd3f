#include "scenarios/instance_config.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "sim/virtual_scheduler.h"

namespace btsim::scenarios {
namespace {

using appprofile::AppProfile;
using sim::LatencyModel;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kThreeClusters[] = R"pb(
  clusters { id: "c1" zone: "us-east1-b" nodes: 3 }
  clusters { id: "c2" zone: "us-east1-c" }
  clusters { id: "c3" zone: "europe-west1-d" }
)pb";

// Writes `text` to a fresh temporary file and returns its path. CTest runs
// tests as parallel processes, so the name carries the process id.
std::string WriteTemp(const std::string& text) {
  static int counter = 0;
  const std::string path = ::testing::TempDir() + "instance_config_test_" +
                           std::to_string(getpid()) + "_" +
                           std::to_string(++counter) + ".textproto";
  std::ofstream(path) << text;
  return path;
}

Result<LoadedConfig> Load(const std::string& text) {
  return LoadInstanceConfig(WriteTemp(text));
}

// The conversion of one `same_zone { ... }` latency.
Result<LatencyModel> SameZone(const std::string& latency) {
  auto loaded = Load(std::string(kThreeClusters) + "links { same_zone { " +
                     latency + " } }");
  if (!loaded.ok()) return loaded.status();
  return loaded->config.links.same_zone;
}

void ExpectInvalid(const std::string& text, const std::string& field) {
  auto loaded = Load(text);
  ASSERT_FALSE(loaded.ok()) << text;
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument) << text;
  EXPECT_THAT(loaded.status().message(), StartsWith(field + ":")) << text;
}

TEST(InstanceConfigFileTest, LoadsReplicationShippingAndBandwidths) {
  auto loaded = ParseInstanceConfig(
      "clusters { id: \"c1\" zone: \"us-east1-b\" }\n"
      "clusters { id: \"c2\" zone: \"us-west1-a\" }\n"
      "links { bandwidth_bytes_per_second: 5000000\n"
      "  overrides { from_cluster: \"c1\" to_cluster: \"c2\"\n"
      "    bandwidth_bytes_per_second: 1000 one_way: true } }\n"
      "replication { batch_entries: 100 batches_in_flight: 4\n"
      "  batch_interval { nanos: 5000000 }\n"
      "  initial_retransmit_timeout { seconds: 2 }\n"
      "  min_retransmit_timeout { nanos: 50000000 }\n"
      "  max_retransmit_timeout { seconds: 3 } }\n",
      "test");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const instance::InstanceConfig& config = loaded->config;
  EXPECT_EQ(config.replication_bandwidth, 5'000'000);
  ASSERT_EQ(config.link_overrides.size(), 1u);
  EXPECT_FALSE(config.link_overrides[0].latency.has_value());
  EXPECT_EQ(config.link_overrides[0].bandwidth, 1000);
  EXPECT_TRUE(config.link_overrides[0].one_way);
  EXPECT_EQ(config.replication.batch_entries, 100u);
  EXPECT_EQ(config.replication.batches_in_flight, 4);
  EXPECT_EQ(config.replication.batch_interval, std::chrono::milliseconds(5));
  EXPECT_EQ(config.replication.initial_retransmit, std::chrono::seconds(2));
  EXPECT_EQ(config.replication.min_retransmit, std::chrono::milliseconds(50));
  EXPECT_EQ(config.replication.max_retransmit, std::chrono::seconds(3));
}

TEST(InstanceConfigFileTest, LoadsTheExample) {
  auto loaded = LoadInstanceConfig(std::string(BTSIM_SOURCE_DIR) +
                                   "/examples/three-clusters.textproto");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  const instance::InstanceConfig& config = loaded->config;
  ASSERT_EQ(config.clusters.size(), 3u);
  EXPECT_EQ(config.clusters[0].id, "c1");
  EXPECT_EQ(config.clusters[0].zone, "us-east1-b");
  EXPECT_EQ(config.clusters[1].zone, "us-east1-c");
  EXPECT_EQ(config.clusters[2].zone, "europe-west1-d");
  EXPECT_EQ(config.client_zone, "us-east1-b");
  EXPECT_EQ(loaded->storage_type, StorageType::kSsd);
  EXPECT_EQ(config.storage, cluster::StorageType::kSsd);
  ASSERT_EQ(loaded->profiles.size(), 2u);
  EXPECT_EQ(loaded->profiles, config.app_profiles);
  EXPECT_TRUE(loaded->profiles[0].transactional());
  EXPECT_EQ(loaded->profiles[0].cluster_id, "c1");
  EXPECT_THAT(loaded->profiles[1].cluster_ids, ElementsAre("c1", "c2"));
  EXPECT_TRUE(loaded->profiles[1].row_affinity);
  ASSERT_EQ(loaded->link_overrides.size(), 1u);

  // The probe of `btsim serve` accepts it.
  sim::VirtualScheduler scheduler{sim::Time()};
  auto instance =
      instance::Instance::Create("i", scheduler, sim::Rng(0), config);
  ASSERT_TRUE(instance.ok()) << instance.status().ToString();
  EXPECT_EQ((*instance)->profiles().List().size(), 3u);
}

TEST(InstanceConfigFileTest, ConvertsEveryLatencyKind) {
  EXPECT_EQ(*SameZone("constant { nanos: 2000000 }"),
            LatencyModel::Constant(milliseconds(2)));
  auto uniform = SameZone(
      "uniform { min { nanos: 1000000 } max { seconds: 1 } } "
      "floor { nanos: 500 }");
  ASSERT_TRUE(uniform.ok()) << uniform.status().ToString();
  LatencyModel expected = LatencyModel::Uniform(milliseconds(1), seconds(1));
  expected.floor = sim::Duration(500);
  EXPECT_EQ(*uniform, expected);
  EXPECT_EQ(*SameZone("normal { mean { seconds: 3 } stddev { nanos: 7 } } "
                      "floor { seconds: 1 }"),
            LatencyModel::Normal(seconds(3), sim::Duration(7), seconds(1)));
  EXPECT_EQ(*SameZone("log_normal { median { nanos: 250000 } sigma: 0.3 } "
                      "floor { nanos: 50000 }"),
            LatencyModel::LogNormal(std::chrono::microseconds(250), 0.3,
                                    std::chrono::microseconds(50)));
  EXPECT_EQ(
      *SameZone("exponential { mean { seconds: 2 } } "
                "floor { seconds: 1 nanos: 5 }"),
      LatencyModel::Exponential(seconds(2), seconds(1) + sim::Duration(5)));
}

TEST(InstanceConfigFileTest, DefaultsAndStorageType) {
  auto loaded = Load(std::string(kThreeClusters) + "storage_type: HDD");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->storage_type, StorageType::kHdd);
  EXPECT_EQ(loaded->config.storage, cluster::StorageType::kHdd);
  EXPECT_EQ(loaded->config.clusters[0].nodes, 3);
  EXPECT_EQ(loaded->config.clusters[1].nodes, 1);  // 0 means 1
  EXPECT_EQ(loaded->config.client_zone, "");
  EXPECT_FALSE(loaded->config.replication_latency.has_value());
  EXPECT_EQ(loaded->config.links.cross_region,
            sim::TransportDefaults{}.cross_region);

  loaded = Load(std::string(kThreeClusters) +
                "links { replication_latency { seconds: 3 } }");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ(loaded->config.replication_latency, sim::Duration(seconds(3)));
}

TEST(InstanceConfigFileTest, SyntaxErrorsCarryLineAndColumn) {
  const std::string path =
      WriteTemp("clusters {\n  id: \"c1\"\n  zone us\n}\n");
  auto loaded = LoadInstanceConfig(path);
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(loaded.status().message(), StartsWith(path + ":3:8: "));

  // Unknown fields are errors.
  const std::string unknown = WriteTemp("clusters { id: \"c1\" nodez: 3 }\n");
  loaded = LoadInstanceConfig(unknown);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), StartsWith(unknown + ":1:"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("nodez"));

  loaded = LoadInstanceConfig(::testing::TempDir() + "no-such-file.textproto");
  EXPECT_EQ(loaded.status().code(), StatusCode::kNotFound);
}

TEST(InstanceConfigFileTest, EveryValidationErrorNamesItsField) {
  const std::string c = kThreeClusters;
  ExpectInvalid("", "clusters");
  ExpectInvalid(
      c + "clusters { id: \"c4\" zone: \"a-b\" } clusters { id: \"c5\" "
          "zone: \"a-c\" }",
      "clusters");
  ExpectInvalid("clusters { zone: \"us-east1-b\" }", "clusters[0].id");
  ExpectInvalid("clusters { id: \"C1\" zone: \"us-east1-b\" }",
                "clusters[0].id");
  ExpectInvalid(
      "clusters { id: \"c1\" zone: \"us-east1-b\" } "
      "clusters { id: \"c1\" zone: \"us-east1-c\" }",
      "clusters[1].id");
  ExpectInvalid(
      "clusters { id: \"c1\" zone: \"us-east1-b\" } "
      "clusters { id: \"c2\" }",
      "clusters[1].zone");
  ExpectInvalid(
      "clusters { id: \"c1\" zone: \"us-east1-b\" } "
      "clusters { id: \"c2\" zone: \"us-east1-b\" }",
      "clusters[1].zone");
  ExpectInvalid("clusters { id: \"c1\" zone: \"us-east1-b\" nodes: -1 }",
                "clusters[0].nodes");
  ExpectInvalid(c + "storage_type: 7", "storage_type");

  // Latencies.
  ExpectInvalid(c + "links { same_zone { constant { seconds: 1 } "
                    "floor { seconds: -1 } } }",
                "links.same_zone.floor");
  ExpectInvalid(c + "links { same_region { constant { nanos: -1 } } }",
                "links.same_region.constant");
  ExpectInvalid(c + "links { cross_region { } }", "links.cross_region");
  ExpectInvalid(c + "links { cross_region { uniform { min { seconds: 2 } "
                    "max { seconds: 1 } } } }",
                "links.cross_region.uniform");
  ExpectInvalid(c + "links { same_zone { normal { mean { seconds: 1 } "
                    "stddev { seconds: -1 } } } }",
                "links.same_zone.normal.stddev");
  ExpectInvalid(c + "links { same_zone { log_normal { median { seconds: 1 } "
                    "sigma: -0.5 } } }",
                "links.same_zone.log_normal.sigma");
  ExpectInvalid(c + "links { same_zone { exponential { mean { seconds: "
                    "-1 } } } }",
                "links.same_zone.exponential.mean");
  ExpectInvalid(c + "links { same_zone { constant { seconds: 100000 } } }",
                "links.same_zone.constant");
  ExpectInvalid(c + "links { replication_latency { seconds: -3 } }",
                "links.replication_latency");

  // Link overrides.
  const std::string latency = " latency { constant { seconds: 1 } }";
  ExpectInvalid(c +
                    "links { overrides { from_cluster: \"c9\" to_cluster: "
                    "\"c1\"" +
                    latency + " } }",
                "links.overrides[0].from_cluster");
  ExpectInvalid(c +
                    "links { overrides { from_cluster: \"c1\" to_cluster: "
                    "\"c2\"" +
                    latency +
                    " } overrides { from_cluster: \"c1\" "
                    "to_cluster: \"c9\"" +
                    latency + " } }",
                "links.overrides[1].to_cluster");
  ExpectInvalid(c +
                    "links { overrides { from_cluster: \"c1\" to_cluster: "
                    "\"c1\"" +
                    latency + " } }",
                "links.overrides[0].to_cluster");
  ExpectInvalid(c + "links { overrides { from_cluster: \"c1\" to_cluster: "
                    "\"c2\" } }",
                "links.overrides[0].latency");
  ExpectInvalid(c + "links { overrides { from_cluster: \"c1\" to_cluster: "
                    "\"c2\" latency { uniform { min { seconds: 2 } } } } }",
                "links.overrides[0].latency.uniform");
  auto both = Load(c +
                   "links { replication_latency { seconds: 3 } "
                   "overrides { from_cluster: \"c1\" to_cluster: \"c2\"" +
                   latency + " } }");
  EXPECT_EQ(both.status().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(both.status().message(),
            "links.overrides[0].latency: cannot be combined with "
            "links.replication_latency");
  // A bandwidth alone can be.
  auto bandwidth_only =
      Load(c +
           "links { replication_latency { seconds: 3 } "
           "overrides { from_cluster: \"c1\" to_cluster: \"c2\" "
           "bandwidth_bytes_per_second: 1000 } }");
  EXPECT_TRUE(bandwidth_only.ok()) << bandwidth_only.status().ToString();
  ExpectInvalid(c + "links { overrides { from_cluster: \"c1\" to_cluster: "
                    "\"c2\" } }",
                "links.overrides[0].latency");
  ExpectInvalid(c + "links { overrides { from_cluster: \"c1\" to_cluster: "
                    "\"c2\" bandwidth_bytes_per_second: -1 } }",
                "links.overrides[0].bandwidth_bytes_per_second");
  ExpectInvalid(c + "links { bandwidth_bytes_per_second: -5 }",
                "links.bandwidth_bytes_per_second");
  ExpectInvalid(c + "replication { batch_entries: -1 }",
                "replication.batch_entries");
  ExpectInvalid(c + "replication { batches_in_flight: -2 }",
                "replication.batches_in_flight");
  ExpectInvalid(c + "replication { min_retransmit_timeout {} }",
                "replication.min_retransmit_timeout");
  ExpectInvalid(c + "replication { batch_interval { seconds: -1 } }",
                "replication.batch_interval");

  // App profiles.
  ExpectInvalid(c + "app_profiles { id: \"-bad\" multi_cluster { } }",
                "app_profiles[0].id");
  ExpectInvalid(c + "app_profiles { id: \"default\" multi_cluster { } }",
                "app_profiles[0].id");
  ExpectInvalid(c + "app_profiles { id: \"a\" multi_cluster { } } "
                    "app_profiles { id: \"a\" multi_cluster { } }",
                "app_profiles[1].id");
  ExpectInvalid(c + "app_profiles { id: \"a\" }", "app_profiles[0]");
  ExpectInvalid(c + "app_profiles { id: \"a\" single_cluster { } }",
                "app_profiles[0].single_cluster.cluster_id");
  ExpectInvalid(c + "app_profiles { id: \"a\" single_cluster { cluster_id: "
                    "\"c9\" } }",
                "app_profiles[0].single_cluster.cluster_id");
  ExpectInvalid(c + "app_profiles { id: \"a\" multi_cluster { cluster_ids: "
                    "\"c1\" cluster_ids: \"c9\" } }",
                "app_profiles[0].multi_cluster.cluster_ids[1]");
  ExpectInvalid(c + "app_profiles { id: \"a\" multi_cluster { cluster_ids: "
                    "\"c1\" cluster_ids: \"c1\" } }",
                "app_profiles[0].multi_cluster.cluster_ids[1]");
}

TEST(InstanceConfigFileTest, ProfilesAndOverridesTakeEffect) {
  auto loaded = Load(std::string(kThreeClusters) + R"pb(
    links {
      overrides {
        from_cluster: "c1"
        to_cluster: "c3"
        latency { constant { seconds: 3 } }
        one_way: true
      }
      overrides {
        from_cluster: "c2"
        to_cluster: "c1"
        latency {
          uniform {
            min { nanos: 1000 }
            max { nanos: 2000 }
          }
        }
      }
    }
    app_profiles {
      id: "txn"
      description: "pinned"
      single_cluster { cluster_id: "c1" allow_transactional_writes: true }
    }
    app_profiles {
      id: "east"
      multi_cluster { cluster_ids: "c1" cluster_ids: "c2" row_affinity: true }
    }
  )pb");
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  sim::VirtualScheduler scheduler{sim::Time()};
  auto instance =
      instance::Instance::Create("i", scheduler, sim::Rng(0), loaded->config);
  ASSERT_TRUE(instance.ok()) << instance.status().ToString();

  std::vector<std::string> ids;
  for (const AppProfile& p : (*instance)->profiles().List()) {
    ids.push_back(p.id);
  }
  EXPECT_THAT(ids, ElementsAre("default", "east", "txn"));
  auto txn = (*instance)->profiles().Get("txn");
  ASSERT_TRUE(txn.ok());
  EXPECT_TRUE(txn->transactional());
  EXPECT_EQ(txn->description, "pinned");
  auto east = (*instance)->profiles().Get("east");
  ASSERT_TRUE(east.ok());
  EXPECT_EQ(east->routing, AppProfile::Routing::kMultiCluster);
  EXPECT_THAT(east->cluster_ids, ElementsAre("c1", "c2"));
  EXPECT_TRUE(east->row_affinity);

  const sim::Transport& transport = (*instance)->transport();
  EXPECT_EQ(transport.LatencyOf("us-east1-b", "europe-west1-d"),
            LatencyModel::Constant(seconds(3)));
  // One way: the reverse keeps the cross-region default.
  EXPECT_EQ(transport.LatencyOf("europe-west1-d", "us-east1-b"),
            sim::TransportDefaults{}.cross_region);
  const LatencyModel uniform =
      LatencyModel::Uniform(sim::Duration(1000), sim::Duration(2000));
  EXPECT_EQ(transport.LatencyOf("us-east1-c", "us-east1-b"), uniform);
  EXPECT_EQ(transport.LatencyOf("us-east1-b", "us-east1-c"), uniform);
}

}  // namespace
}  // namespace btsim::scenarios
