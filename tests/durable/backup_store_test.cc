// Backups and restored tables under `btsim serve --data-dir`: kept by the
// journal and by snapshots. Also what a snapshot does with an instance
// created while it waits, and a journal cut between an instance's name
// and its metadata.
#include <chrono>
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "durable/store.h"
#include "instance/backups.h"
#include "sim/fingerprint.h"
#include "tests/durable/store_fixture.h"

namespace btsim::durable {
namespace {

using instance::Instance;
using testing::Contents;
using testing::kName;
using testing::Populate;
using testing::Process;
using testing::TempDir;
using testing::TwoClusters;
using testing::Write;

// A table's stored rows, with their versions and tombstones.
std::string StoredRows(const cluster::Table& table) {
  sim::Fingerprint fp;
  table.ForEachStoredRow([&](std::string_view key, std::string_view encoded) {
    fp.Add(key);
    fp.Add(encoded);
  });
  return fp.Hex();
}

// Every backup: its description and its data's stored rows.
std::vector<std::string> Backups(Instance& i) {
  std::vector<std::string> out;
  for (const instance::Backup* b : i.backups().List("")) {
    out.push_back(
        b->cluster + "/" + b->id + " of " + b->source_table + " from " +
        b->source_cluster + "/" + b->source_backup + " start " +
        std::to_string(sim::NanosSinceEpoch(b->start_time)) + " expire " +
        std::to_string(sim::NanosSinceEpoch(b->expire_time)) + " size " +
        std::to_string(b->size_bytes) + " data " + StoredRows(*b->data));
  }
  return out;
}

// Backs up t on c1 and c2 (c2 still lacks c1's backlog), copies one, restores
// one as a new table on both clusters, changes an expire time, deletes
// one, and writes to the restored table.
void MakeBackups(Process& p) {
  Instance& i = p.Get();
  // Up again, but its backlog has not arrived yet.
  ASSERT_TRUE(i.replicas().SetDown("c2", false).ok());
  const sim::Time expire = p.scheduler.Now() + std::chrono::hours(7);
  ASSERT_TRUE(i.backups().Create("c1", "b1", "t", expire, "id", "e").ok());
  ASSERT_TRUE(i.backups().Create("c2", "b2", "t", expire, "id", "e").ok());
  ASSERT_TRUE(i.backups().Create("c2", "gone", "t", expire, "id", "e").ok());
  ASSERT_TRUE(
      i.backups().Copy("c1", "b1", "c2", "b1-copy", expire, "id", "e").ok());
  ASSERT_TRUE(i.backups().Restore("c1", "b1", "restored").ok());
  ASSERT_TRUE(
      i.backups()
          .UpdateExpireTime("c2", "b2", expire + std::chrono::hours(1), "e")
          .ok());
  ASSERT_TRUE(i.backups().Delete("c2", "gone").ok());
  const std::vector<cluster::Mutation> m = {
      cluster::SetCell{"cf", "q", cluster::kServerTimestamp, "new"}};
  ASSERT_TRUE(i.replicas().Find("c1")->MutateRow("restored", "fresh", m).ok());
}

TEST(BackupStoreTest, BackupsAndRestoredTablesSurviveJournalAndSnapshot) {
  for (bool snapshot : {false, true}) {
    SCOPED_TRACE(snapshot ? "from a snapshot" : "from the journal");
    const std::string dir = TempDir();
    std::vector<std::string> backups;
    std::string c1;
    std::vector<cluster::Version> versions;
    {
      Process first(TwoClusters(), 1000);
      ASSERT_TRUE(first.Open(dir).ok());
      Populate(first);  // c2 down, lacking 5 of c1's writes
      MakeBackups(first);
      Instance& i = first.Get();
      if (snapshot) {
        ASSERT_TRUE(first.store->Snapshot().ok());
        // After the snapshot, in the journal: changes to backups the
        // restart takes from the snapshot.
        const sim::Time expire = first.scheduler.Now() + std::chrono::hours(8);
        ASSERT_TRUE(i.backups()
                        .Copy("c2", "b2", "c1", "b2-copy", expire, "id", "e")
                        .ok());
        ASSERT_TRUE(i.backups().UpdateExpireTime("c1", "b1", expire, "e").ok());
        ASSERT_TRUE(i.backups().Delete("c2", "b1-copy").ok());
        ASSERT_TRUE(i.backups().Restore("c2", "b2", "restored2").ok());
      }
      backups = Backups(i);
      c1 = Contents(i, "c1");
      for (const std::string c : {"c1", "c2"}) {
        versions.push_back(i.replicas().Find(c)->last_version());
        versions.push_back(
            (*i.replicas().Find(c)->GetTable("restored"))->created_version());
      }
      first.store->Sync();
    }
    ASSERT_EQ(backups.size(), 3u);
    Process second(TwoClusters(), 2000);
    auto r = second.Open(dir);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->generation, snapshot ? 1u : 0u);
    Instance& i = second.Get();
    EXPECT_EQ(Backups(i), backups);
    EXPECT_EQ(Contents(i, "c1"), c1);
    std::vector<cluster::Version> now;
    for (const std::string c : {"c1", "c2"}) {
      now.push_back(i.replicas().Find(c)->last_version());
      now.push_back(
          (*i.replicas().Find(c)->GetTable("restored"))->created_version());
    }
    EXPECT_EQ(now, versions);
    // The restored table, with the write made to it, on both clusters once
    // the backlog drains; restoring again makes the same table.
    second.scheduler.RunFor(std::chrono::seconds(2));
    EXPECT_EQ(Contents(i, "c2"), Contents(i, "c1"));
    ASSERT_TRUE(i.backups().Restore("c1", "b1", "again").ok());
    const cluster::Table* again = *i.replicas().Find("c1")->GetTable("again");
    EXPECT_EQ(StoredRows(*again),
              StoredRows(*(*i.backups().Get("c1", "b1"))->data));
    EXPECT_GT(again->Stats().rows, 20);
  }
}

TEST(BackupStoreTest, ABackupThatExpiredStaysDeleted) {
  const std::string dir = TempDir();
  {
    Process first(TwoClusters(), 1000);
    ASSERT_TRUE(first.Open(dir).ok());
    Populate(first);
    Instance& i = first.Get();
    const sim::Time soon =
        first.scheduler.Now() + std::chrono::hours(6) + std::chrono::minutes(1);
    ASSERT_TRUE(i.backups().Create("c1", "short", "t", soon, "id", "e").ok());
    ASSERT_TRUE(
        i.backups()
            .Create("c1", "long", "t", soon + std::chrono::hours(1), "id", "e")
            .ok());
    first.scheduler.RunFor(std::chrono::hours(6) + std::chrono::minutes(3));
    ASSERT_EQ(i.backups().List("").size(), 1u);
    first.store->Sync();
  }
  // Restarted at a time before either expiry: only the journal knows.
  Process second(TwoClusters(), 2000);
  ASSERT_TRUE(second.Open(dir).ok());
  const auto left = second.Get().backups().List("");
  ASSERT_EQ(left.size(), 1u);
  EXPECT_EQ(left[0]->id, "long");
}

TEST(BackupStoreTest, AnInstanceCreatedWhileASnapshotWaitsIsInIt) {
  const std::string dir = TempDir();
  constexpr char kOther[] = "projects/p/instances/other";
  std::string other;
  {
    Process first(TwoClusters(), 1000);
    ASSERT_TRUE(first.Open(dir).ok());
    Populate(first);
    // Created, and written to, after the snapshot listed the instances.
    first.after_listing = [&] {
      ASSERT_TRUE(first
                      .With(kOther,
                            [&](Instance& i) {
                              const cluster::FamilyModification cf{
                                  "cf",
                                  cluster::FamilyModification::Kind::kCreate,
                                  cluster::GcRule::MaxVersions(1)};
                              EXPECT_TRUE(i.replicas()
                                              .Find("c1")
                                              ->CreateTable("t", {&cf, 1}, {})
                                              .ok());
                              return Write(i, "c1", "k", "v");
                            })
                      .ok());
    };
    ASSERT_TRUE(first.store->Snapshot().ok());
    EXPECT_EQ(first.store->generation(), 1u);
    ASSERT_TRUE(first
                    .With(kOther,
                          [&](Instance& i) {
                            other = Contents(i, "c1");
                            return OkStatus();
                          })
                    .ok());
    first.store->Sync();
  }
  Process second(TwoClusters(), 2000);
  auto r = second.Open(dir);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->instances, 2u);
  EXPECT_EQ(r->records, 0u);  // everything is in the snapshot
  ASSERT_TRUE(second
                  .With(kOther,
                        [&](Instance& i) {
                          EXPECT_EQ(Contents(i, "c1"), other);
                          return OkStatus();
                        })
                  .ok());
}

TEST(BackupStoreTest, AJournalCutAfterAnInstancesNameIsCompleted) {
  const std::string dir = TempDir();
  {
    Process first(TwoClusters(), 1000);
    ASSERT_TRUE(first.Open(dir).ok());
    first.Get();
    first.store->Sync();
  }
  // Keep only the name record, as a crash between the two could.
  auto scan = ScanLog(dir + "/journal.log");
  ASSERT_TRUE(scan.ok());
  ASSERT_EQ(scan->frames.size(), 2u);
  std::filesystem::resize_file(dir + "/journal.log", scan->frames[1].offset);
  {
    Process second(TwoClusters(), 2000);
    ASSERT_TRUE(second.Open(dir).ok());
    Populate(second);
    ASSERT_TRUE(second.store->Snapshot().ok());
    ASSERT_TRUE(second.Get().AddCluster({"c3", "europe-west1-d", 1}).ok());
    second.store->Sync();
  }
  // The snapshot knows what the instance was created with, and a later
  // metadata record is not taken for it.
  Process third(TwoClusters(), 3000);
  auto r = third.Open(dir);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(third.Get().Clusters().size(), 3u);
}

}  // namespace
}  // namespace btsim::durable
