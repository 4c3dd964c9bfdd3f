// Store: a journaled instance recovered into a fresh process's instances
// (here: a second set of instances on another scheduler).
#include "durable/store.h"

#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "cluster/cluster.h"
#include "instance/instance.h"
#include "tests/durable/store_fixture.h"

namespace btsim::durable {
namespace {

using instance::Instance;
using instance::InstanceConfig;
using testing::Contents;
using testing::Populate;
using testing::Process;
using testing::TempDir;
using testing::TwoClusters;
using testing::Write;

TEST(StoreTest, RecoversDataSchemaProfilesPositionsAndDrainsTheBacklog) {
  const std::string dir = TempDir();
  std::string c1, c2;
  uint64_t log_c1 = 0, applied_c1_c2 = 0;
  {
    Process first(TwoClusters(), 1000);
    auto r = first.Open(dir);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->records, 0u);
    Populate(first);
    Instance& i = first.Get();
    c1 = Contents(i, "c1");
    c2 = Contents(i, "c2");
    log_c1 = i.replicas().LogPosition("c1");
    applied_c1_c2 = i.replicas().Applied("c1", "c2");
    first.store->Sync();
  }
  Process second(TwoClusters(), 2000);
  auto r = second.Open(dir);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GT(r->records, 20u);
  EXPECT_EQ(r->instances, 1u);
  EXPECT_FALSE(r->torn_tail);
  EXPECT_GE(r->high_water, sim::Time(std::chrono::seconds(1000)));
  Instance& i = second.Get();
  EXPECT_EQ(Contents(i, "c1"), c1);
  EXPECT_EQ(Contents(i, "c2"), c2);
  EXPECT_NE(c1, c2);  // c2 lacks the backlog
  EXPECT_EQ(i.replicas().LogPosition("c1"), log_c1);
  EXPECT_EQ(i.replicas().Applied("c1", "c2"), applied_c1_c2);
  EXPECT_EQ(i.replicas().Backlog("c1", "c2"), 5u);
  ASSERT_NE(i.profiles().Find("to-c2"), nullptr);
  EXPECT_EQ(i.profiles().Find("to-c2")->cluster_id, "c2");
  EXPECT_TRUE(i.DeletionProtected("t"));
  // The backlog ships after the restart (faults are not persisted).
  second.scheduler.RunFor(std::chrono::seconds(2));
  EXPECT_EQ(i.replicas().Backlog("c1", "c2"), 0u);
  EXPECT_EQ(Contents(i, "c2"), Contents(i, "c1"));
  // What happens after a recovery is journaled too.
  ASSERT_TRUE(Write(i, "c2", "after", "restart").ok());
  second.scheduler.RunFor(std::chrono::seconds(2));
  const std::string both = Contents(i, "c1");
  second.store->Sync();
  second.instances.clear();
  second.store.reset();
  Process third(TwoClusters(), 3000);
  ASSERT_TRUE(third.Open(dir).ok());
  EXPECT_EQ(Contents(third.Get(), "c1"), both);
  EXPECT_EQ(Contents(third.Get(), "c2"), both);
  EXPECT_EQ(third.Get().replicas().Backlog("c2", "c1"), 0u);
}

TEST(StoreTest, ReplaysClustersAddedResizedAndRemoved) {
  const std::string dir = TempDir();
  std::map<std::string, std::string> contents;
  std::map<std::string, uint64_t> positions;
  {
    Process first(TwoClusters(), 1000);
    ASSERT_TRUE(first.Open(dir).ok());
    Populate(first);  // c2 down, 5 entries of c1 it lacks
    Instance& i = first.Get();
    // c3 is seeded from c1 (the first live cluster) while c2 is down.
    ASSERT_TRUE(i.AddCluster({"c3", "europe-west1-d", 2}).ok());
    ASSERT_TRUE(i.SetNodes("c1", 3).ok());
    ASSERT_TRUE(Write(i, "c3", "on-c3", "x").ok());
    first.scheduler.RunFor(std::chrono::seconds(2));
    // c2 comes back, writes, and is removed before all of it replicates:
    // what c1 or c3 applied of it is relayed to the other.
    ASSERT_TRUE(i.replicas().SetDown("c2", false).ok());
    ASSERT_TRUE(Write(i, "c2", "from-c2", "y").ok());
    first.scheduler.RunFor(std::chrono::milliseconds(150));
    ASSERT_TRUE(i.RemoveCluster("c2").ok());
    ASSERT_TRUE(Write(i, "c1", "after-removal", "z").ok());
    for (const std::string c : {"c1", "c3"}) {
      contents[c] = Contents(i, c);
      positions[c] = i.replicas().LogPosition(c);
    }
    positions["c1->c3"] = i.replicas().Applied("c1", "c3");
    positions["c3->c1"] = i.replicas().Applied("c3", "c1");
    first.store->Sync();
  }
  Process second(TwoClusters(), 2000);
  auto r = second.Open(dir);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  Instance& i = second.Get();
  ASSERT_EQ(i.Clusters().size(), 2u);
  EXPECT_EQ(i.Clusters()[0].nodes, 3);
  EXPECT_EQ(i.Clusters()[1].id, "c3");
  EXPECT_EQ(i.Clusters()[1].nodes, 2);
  for (const std::string c : {"c1", "c3"}) {
    EXPECT_EQ(Contents(i, c), contents[c]) << c;
    EXPECT_EQ(i.replicas().LogPosition(c), positions[c]) << c;
  }
  EXPECT_EQ(i.replicas().Applied("c1", "c3"), positions["c1->c3"]);
  EXPECT_EQ(i.replicas().Applied("c3", "c1"), positions["c3->c1"]);
  second.scheduler.RunFor(std::chrono::seconds(2));
  EXPECT_EQ(Contents(i, "c1"), Contents(i, "c3"));
}

TEST(StoreTest, TornTailIsDroppedCorruptionStops) {
  const std::string dir = TempDir();
  std::string c1;
  {
    Process first(TwoClusters(), 1000);
    ASSERT_TRUE(first.Open(dir).ok());
    Populate(first);
    c1 = Contents(first.Get(), "c1");
    first.store->Sync();
  }
  const std::string path = dir + "/journal.log";
  {
    std::ofstream out(path, std::ios::binary | std::ios::app);
    out << std::string("\x40\x00\x00\x00\x01\x02", 6);  // half a header
  }
  {
    Process second(TwoClusters(), 2000);
    auto r = second.Open(dir);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_TRUE(r->torn_tail);
    EXPECT_EQ(Contents(second.Get(), "c1"), c1);
  }
  // The torn bytes were cut off: the next start finds none.
  const auto size = std::filesystem::file_size(path);
  {
    Process third(TwoClusters(), 3000);
    auto r = third.Open(dir);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_FALSE(r->torn_tail);
  }
  std::string data;
  {
    std::ifstream in(path, std::ios::binary);
    data.assign(std::istreambuf_iterator<char>(in), {});
  }
  ASSERT_GE(data.size(), size);
  data[size / 2] ^= 0x10;
  {
    std::ofstream out(path, std::ios::binary | std::ios::trunc);
    out << data;
  }
  Process fourth(TwoClusters(), 4000);
  auto r = fourth.Open(dir);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find(path), std::string::npos)
      << r.status().ToString();
  EXPECT_NE(r.status().message().find("offset"), std::string::npos);
}

TEST(StoreTest, AnotherClusterConfigurationIsRefused) {
  const std::string dir = TempDir();
  {
    Process first(TwoClusters(), 1000);
    ASSERT_TRUE(first.Open(dir).ok());
    first.Get();
    first.store->Sync();
  }
  InstanceConfig other = TwoClusters();
  other.clusters[1].id = "other";
  Process second(other, 2000);
  auto r = second.Open(dir);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(r.status().message().find("c1=us-east1-b,c2=us-east1-c"),
            std::string::npos)
      << r.status().ToString();
}

TEST(StoreTest, BadDirectoriesAreNamed) {
  const std::string dir = TempDir();
  auto first = Store::Open(dir);
  ASSERT_TRUE(first.ok());
  auto second = Store::Open(dir);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(second.status().message().find("locked by another running btsim"),
            std::string::npos)
      << second.status().ToString();
  EXPECT_NE(second.status().message().find(dir), std::string::npos);
  first->reset();
  EXPECT_TRUE(Store::Open(dir).ok());  // the lock went with the store

  auto missing = Store::Open(dir + "/absent");
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.status().message().find(dir + "/absent"),
            std::string::npos);
  const std::string file = dir + "/file";
  std::ofstream(file) << "x";
  auto not_dir = Store::Open(file);
  ASSERT_FALSE(not_dir.ok());
  EXPECT_NE(not_dir.status().message().find("not a directory"),
            std::string::npos);
}

}  // namespace
}  // namespace btsim::durable
