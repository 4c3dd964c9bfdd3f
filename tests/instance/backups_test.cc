// Backups of a replicated instance, in virtual time: each backup holds what
// its cluster had applied, restores reach every cluster, expired backups
// are swept.
#include "instance/backups.h"

#include <chrono>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "instance/instance.h"
#include "sim/virtual_scheduler.h"

namespace btsim::instance {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr int64_t kStart = 1'700'000'000'000'000'000;
constexpr sim::Duration kDay = std::chrono::hours(24);

class BackupsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    InstanceConfig config;
    config.clusters = {{"c1", "us-east1-b", 1}, {"c2", "europe-west1-d", 1}};
    config.replication_latency = std::chrono::seconds(3);
    auto created = Instance::Create("projects/p/instances/i", scheduler_,
                                    sim::Rng(7), config);
    ASSERT_TRUE(created.ok()) << created.status().ToString();
    instance_ = std::move(created).value();
    const cluster::FamilyModification cf{
        "cf", cluster::FamilyModification::Kind::kCreate, {}};
    ASSERT_TRUE(Cluster("c1").CreateTable("t", {&cf, 1}, {}).ok());
    scheduler_.RunFor(std::chrono::seconds(10));
  }

  cluster::Cluster& Cluster(std::string_view id) {
    return *instance_->replicas().Find(id);
  }
  Backups& backups() { return instance_->backups(); }
  sim::Time Now() const { return scheduler_.Now(); }

  void Write(std::string_view cluster, const std::string& table,
             const std::string& key) {
    const std::vector<cluster::Mutation> m = {
        cluster::SetCell{"cf", "q", cluster::kServerTimestamp, "v-" + key}};
    ASSERT_TRUE(Cluster(cluster).MutateRow(table, key, m).ok());
  }
  // The row keys of `table` on `cluster`.
  std::vector<std::string> Keys(std::string_view cluster,
                                const std::string& table) {
    std::vector<std::string> keys;
    Status s =
        Cluster(cluster).ReadRows(table, {}, [&](std::string_view key, auto) {
          keys.emplace_back(key);
          return true;
        });
    EXPECT_TRUE(s.ok()) << s.ToString();
    return keys;
  }
  Status Create(std::string_view cluster, std::string_view id,
                sim::Time expire) {
    return backups()
        .Create(cluster, id, "t", expire, "backup_id", "expire_time")
        .status();
  }

  sim::VirtualScheduler scheduler_{sim::Time(sim::Duration(kStart))};
  std::unique_ptr<Instance> instance_;
};

TEST_F(BackupsTest, ALaggingClustersBackupLacksWritesItHasNotApplied) {
  Write("c1", "t", "a");
  scheduler_.RunFor(std::chrono::seconds(10));  // "a" reaches c2
  Write("c1", "t", "b");                        // "b" is 3 s from c2
  ASSERT_TRUE(Create("c2", "on-c2", Now() + kDay).ok());
  ASSERT_TRUE(Create("c1", "on-c1", Now() + kDay).ok());
  scheduler_.RunFor(std::chrono::seconds(10));  // now c2 has "b" too
  EXPECT_THAT(Keys("c2", "t"), ElementsAre("a", "b"));

  ASSERT_TRUE(backups().Restore("c2", "on-c2", "from-c2").ok());
  ASSERT_TRUE(backups().Restore("c1", "on-c1", "from-c1").ok());
  // A restored table is on every cluster at once.
  for (std::string_view c : {"c1", "c2"}) {
    EXPECT_THAT(Keys(c, "from-c2"), ElementsAre("a")) << c;
    EXPECT_THAT(Keys(c, "from-c1"), ElementsAre("a", "b")) << c;
  }
  auto b = backups().Get("c2", "on-c2");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ((*b)->source_table, "t");
  EXPECT_GT((*b)->size_bytes, 0);
}

TEST_F(BackupsTest, ARestoredTableReplicatesLaterWrites) {
  Write("c1", "t", "a");
  scheduler_.RunFor(std::chrono::seconds(10));
  ASSERT_TRUE(Create("c1", "b", Now() + kDay).ok());
  ASSERT_TRUE(backups().Restore("c1", "b", "r").ok());
  Write("c2", "r", "z");
  EXPECT_THAT(Keys("c1", "r"), ElementsAre("a"));
  scheduler_.RunFor(std::chrono::seconds(10));
  EXPECT_THAT(Keys("c1", "r"), ElementsAre("a", "z"));
  // The backup is unchanged by writes to the table or the restored copy.
  ASSERT_TRUE(backups().Restore("c1", "b", "r2").ok());
  EXPECT_THAT(Keys("c1", "r2"), ElementsAre("a"));
  EXPECT_EQ(backups().Restore("c1", "b", "r").code(),
            StatusCode::kAlreadyExists);
}

TEST_F(BackupsTest, ValidatesIdsExpiryAndNames) {
  EXPECT_THAT(Create("c1", "bad id", Now() + kDay).message(),
              HasSubstr("backup_id"));
  EXPECT_THAT(Create("c1", "b", Now() + std::chrono::hours(5)).message(),
              HasSubstr("expire_time"));
  EXPECT_EQ(Create("c1", "b", Now() + 91 * kDay).code(),
            StatusCode::kInvalidArgument);
  EXPECT_TRUE(Create("c1", "b", Now() + std::chrono::hours(6)).ok());
  EXPECT_EQ(Create("c1", "b", Now() + kDay).code(), StatusCode::kAlreadyExists);
  EXPECT_TRUE(Create("c2", "b", Now() + kDay).ok());  // another cluster
  EXPECT_EQ(Create("c9", "x", Now() + kDay).code(), StatusCode::kNotFound);
  EXPECT_EQ(backups()
                .Create("c1", "x", "nope", Now() + kDay, "backup_id", "e")
                .status()
                .code(),
            StatusCode::kNotFound);
  EXPECT_EQ(backups().Get("c1", "nope").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(backups().Delete("c1", "nope").code(), StatusCode::kNotFound);
  ASSERT_TRUE(instance_->replicas().SetDown("c2", true).ok());
  EXPECT_EQ(Create("c2", "down", Now() + kDay).code(),
            StatusCode::kUnavailable);
}

TEST_F(BackupsTest, UpdateCopyListAndDelete) {
  const sim::Time created = Now();
  ASSERT_TRUE(Create("c1", "b", created + kDay).ok());
  EXPECT_EQ(backups()
                .UpdateExpireTime("c1", "b", created + 91 * kDay, "e")
                .status()
                .code(),
            StatusCode::kInvalidArgument);
  ASSERT_TRUE(
      backups().UpdateExpireTime("c1", "b", created + 80 * kDay, "e").ok());
  EXPECT_EQ((*backups().Get("c1", "b"))->expire_time, created + 80 * kDay);
  auto copy = backups().Copy("c1", "b", "c2", "copy", Now() + 2 * kDay,
                             "backup_id", "expire_time");
  ASSERT_TRUE(copy.ok()) << copy.status().ToString();
  EXPECT_EQ((*copy)->source_cluster, "c1");
  EXPECT_EQ((*copy)->source_backup, "b");
  EXPECT_EQ((*copy)->start_time, created);
  std::vector<std::string> all;
  for (const Backup* b : backups().List(""))
    all.push_back(b->cluster + "/" + b->id);
  EXPECT_THAT(all, ElementsAre("c1/b", "c2/copy"));
  EXPECT_EQ(backups().List("c2").size(), 1u);
  ASSERT_TRUE(backups().Delete("c1", "b").ok());
  // The copy keeps its data.
  ASSERT_TRUE(backups().Restore("c2", "copy", "r").ok());
  ASSERT_TRUE(instance_->RemoveCluster("c2").ok());
  EXPECT_TRUE(backups().List("").empty());
}

TEST_F(BackupsTest, TheSweepDeletesExpiredBackups) {
  ASSERT_TRUE(Create("c1", "short", Now() + std::chrono::hours(6)).ok());
  ASSERT_TRUE(Create("c1", "long", Now() + kDay).ok());
  scheduler_.RunFor(std::chrono::hours(6) - std::chrono::minutes(2));
  EXPECT_EQ(backups().List("").size(), 2u);
  scheduler_.RunFor(std::chrono::minutes(3));
  ASSERT_EQ(backups().List("").size(), 1u);
  EXPECT_EQ(backups().List("")[0]->id, "long");
  scheduler_.RunFor(kDay);
  EXPECT_TRUE(backups().List("").empty());
  // With no backup left, the sweep stops: the scheduler goes idle.
  EXPECT_LT(scheduler_.RunUntilIdle(1'000'000), 1'000'000);
}

}  // namespace
}  // namespace btsim::instance
