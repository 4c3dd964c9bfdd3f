// Store snapshots: the served state written whole, a new journal after it,
// and a restart from snapshot plus journal that gives back exactly what a
// restart from the journal alone gives.
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "durable/store.h"
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

std::set<std::string> FilesIn(const std::string& dir) {
  std::set<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    names.insert(e.path().filename().string());
  }
  return names;
}

// What a restart must give back of an instance.
struct Observed {
  std::map<std::string, std::string> contents;  // by cluster
  std::map<std::string, uint64_t> positions;    // logs and applied
  std::vector<std::string> profiles;
  std::vector<std::string> protected_tables;
  std::map<std::string, uint32_t> origins;
  uint32_t next_origin = 0;

  bool operator==(const Observed&) const = default;
};

Observed Observe(Instance& i) {
  Observed o;
  const std::vector<std::string> ids = i.replicas().ClusterIds();
  for (const std::string& c : ids) {
    o.contents[c] = Contents(i, c);
    o.positions[c] = i.replicas().LogPosition(c);
    o.origins[c] = *i.replicas().OriginOf(c);
    for (const std::string& peer : ids) {
      if (peer != c) {
        o.positions[c + "->" + peer] = i.replicas().Applied(c, peer);
        o.positions[c + "=>" + peer] = i.replicas().Backlog(c, peer);
      }
    }
  }
  for (const auto& p : i.profiles().List()) {
    o.profiles.push_back(p.id + ":" + p.etag + ":" + p.cluster_id);
  }
  o.protected_tables = i.ProtectedTables();
  o.next_origin = i.replicas().next_origin();
  return o;
}

std::ostream& operator<<(std::ostream& out, const Observed& o) {
  for (const auto& [k, v] : o.contents) out << k << "=" << v << " ";
  for (const auto& [k, v] : o.positions) out << k << ":" << v << " ";
  for (const auto& [k, v] : o.origins) out << k << "#" << v << " ";
  return out << "next#" << o.next_origin;
}

TEST(SnapshotTest, RestartFromSnapshotAndJournalGivesBackTheSameState) {
  const std::string dir = TempDir();
  Observed before;
  {
    Process first(TwoClusters(), 1000);
    ASSERT_TRUE(first.Open(dir).ok());
    Populate(first);  // c2 down with a backlog of 5 entries of c1
    ASSERT_TRUE(first.store->Snapshot().ok());
    EXPECT_EQ(first.store->generation(), 1u);
    EXPECT_EQ(FilesIn(dir),
              (std::set<std::string>{"LOCK", "journal.1.log", "snapshot.1"}));
    // More after the snapshot: in the new journal.
    Instance& i = first.Get();
    ASSERT_TRUE(Write(i, "c1", "after-snapshot", "a").ok());
    ASSERT_TRUE(Write(i, "c2", "on-c2", "b").ok());
    first.scheduler.RunFor(std::chrono::seconds(1));
    before = Observe(i);
    first.store->Sync();
  }
  Process second(TwoClusters(), 2000);
  auto r = second.Open(dir);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->generation, 1u);
  EXPECT_GT(r->snapshot_records, 0u);
  EXPECT_GT(r->records, 0u);
  EXPECT_GE(r->high_water, sim::Time(std::chrono::seconds(1000)));
  Instance& i = second.Get();
  EXPECT_EQ(Observe(i), before);
  EXPECT_EQ(i.replicas().Backlog("c1", "c2"), 6u);
  EXPECT_TRUE(i.DeletionProtected("t"));
  // The backlog drains, and both clusters end alike.
  second.scheduler.RunFor(std::chrono::seconds(2));
  EXPECT_EQ(i.replicas().Backlog("c1", "c2"), 0u);
  EXPECT_EQ(Contents(i, "c1"), Contents(i, "c2"));
}

TEST(SnapshotTest, SnapshotAndJournalAgreeWithTheJournalAlone) {
  // The same history written twice: once snapshotted half-way, once not.
  // Both restarts must give the same state, and the same state again
  // after the same further writes and replication.
  auto history = [](Process& p, bool snapshot) {
    Populate(p);
    Instance& i = p.Get();
    ASSERT_TRUE(i.AddCluster({"c3", "europe-west1-d", 2}).ok());
    ASSERT_TRUE(i.replicas().SetDown("c2", false).ok());
    ASSERT_TRUE(Write(i, "c2", "from-c2", "y").ok());
    p.scheduler.RunFor(std::chrono::milliseconds(150));
    if (snapshot) ASSERT_TRUE(p.store->Snapshot().ok());
    // Removed while entries are in flight (relays), re-added under its old
    // id (a new number), written to.
    ASSERT_TRUE(i.RemoveCluster("c2").ok());
    ASSERT_TRUE(i.AddCluster({"c2", "us-east1-c", 1}).ok());
    ASSERT_TRUE(Write(i, "c2", "again", "z").ok());
    const std::vector<cluster::Mutation> drop = {cluster::DeleteFromRow{}};
    ASSERT_TRUE(i.replicas().Find("c1")->MutateRow("t", "row3", drop).ok());
    p.scheduler.RunFor(std::chrono::milliseconds(50));
    if (snapshot) ASSERT_TRUE(p.store->Snapshot().ok());
    ASSERT_TRUE(Write(i, "c3", "last", "w").ok());
    p.store->Sync();
  };
  const std::string plain_dir = TempDir();
  const std::string snap_dir = TempDir();
  {
    Process p(TwoClusters(), 1000);
    ASSERT_TRUE(p.Open(plain_dir).ok());
    history(p, false);
  }
  {
    Process p(TwoClusters(), 1000);
    ASSERT_TRUE(p.Open(snap_dir).ok());
    history(p, true);
    EXPECT_EQ(p.store->generation(), 2u);
  }
  Process plain(TwoClusters(), 2000);
  Process snap(TwoClusters(), 2000);
  auto a = plain.Open(plain_dir);
  auto b = snap.Open(snap_dir);
  ASSERT_TRUE(a.ok()) << a.status().ToString();
  ASSERT_TRUE(b.ok()) << b.status().ToString();
  EXPECT_EQ(b->generation, 2u);
  EXPECT_EQ(Observe(snap.Get()), Observe(plain.Get()));
  EXPECT_EQ(snap.Get().replicas().OriginOf("c2"), 3u);
  for (Process* p : {&plain, &snap}) {
    Instance& i = p->Get();
    ASSERT_TRUE(Write(i, "c1", "later", "v").ok());
    p->scheduler.RunFor(std::chrono::seconds(3));
    i.replicas().CompactAll();
  }
  EXPECT_EQ(Observe(snap.Get()), Observe(plain.Get()));
  EXPECT_EQ(Contents(snap.Get(), "c1"), Contents(snap.Get(), "c2"));
  EXPECT_EQ(Contents(snap.Get(), "c1"), Contents(snap.Get(), "c3"));
}

TEST(SnapshotTest, SnapshotsAreTakenOnTheirOwnAndBoundTheJournal) {
  const std::string dir = TempDir();
  std::string contents;
  {
    Process first(TwoClusters(), 1000);
    ASSERT_TRUE(first.Open(dir, {.snapshot_journal_bytes = 16 << 10}).ok());
    auto with = [&](const std::function<void(Instance&)>& fn) {
      ASSERT_TRUE(first
                      .With(kName,
                            [&](Instance& i) {
                              fn(i);
                              return OkStatus();
                            })
                      .ok());
    };
    with([](Instance& i) {
      const cluster::FamilyModification cf{
          "cf", cluster::FamilyModification::Kind::kCreate,
          cluster::GcRule::MaxVersions(1)};
      ASSERT_TRUE(i.replicas().Find("c1")->CreateTable("t", {&cf, 1}, {}).ok());
      i.replicas().ApplyNewestEverywhere("c1");
    });
    // 3,000 overwrites of 50 rows: ~300 KB of journal, a few KB of data.
    for (int k = 0; k < 3000; ++k) {
      with([&](Instance& i) {
        ASSERT_TRUE(Write(i, k % 2 ? "c1" : "c2",
                          "row" + std::to_string(k % 50),
                          "value" + std::to_string(k))
                        .ok());
        first.scheduler.RunFor(std::chrono::milliseconds(5));
        if (k % 100 == 99) i.replicas().CompactAll();  // as serve does
      });
      // On a busy machine this thread could keep the snapshot thread from
      // the instance for long: once the journal is past the limit, let it
      // have a turn (a snapshot is taken then, or was just taken).
      auto journal_bytes = [&] {
        std::error_code gone;  // a snapshot may have just replaced it
        const auto n =
            std::filesystem::file_size(first.store->journal_path(), gone);
        return gone ? 0 : n;
      };
      if (k % 100 == 99 && journal_bytes() > (32u << 10)) {
        const uint64_t before = first.store->snapshots();
        for (int wait = 0; wait < 200 && first.store->snapshots() == before &&
                           journal_bytes() > (32u << 10);
             ++wait) {
          std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
      }
    }
    with([&](Instance& i) {
      first.scheduler.RunFor(std::chrono::seconds(2));
      i.replicas().CompactAll();  // both past every write: alike again
      contents = Contents(i, "c1");
      EXPECT_EQ(Contents(i, "c2"), contents);
    });
    first.store->Sync();
    EXPECT_GE(first.store->snapshots(), 2u);
    first.store->StopSnapshots();
    // One snapshot and one journal. The journal is bounded by the limit or
    // the snapshot's size, whichever is larger, plus what was written
    // while the last snapshot waited for the instance; the snapshot by the
    // data (50 rows of one version on each cluster, compacted): together
    // far less than the 3,000 writes' records (over 300 KB).
    const std::set<std::string> files = FilesIn(dir);
    EXPECT_EQ(files.size(), 3u);
    const uint64_t g = first.store->generation();
    const uint64_t snapshot =
        std::filesystem::file_size(dir + "/snapshot." + std::to_string(g));
    const uint64_t journal =
        std::filesystem::file_size(first.store->journal_path());
    EXPECT_LT(snapshot, 16u << 10);
    EXPECT_LT(journal, 100u << 10) << "snapshot " << snapshot;
  }
  Process second(TwoClusters(), 2000);
  auto r = second.Open(dir);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_GE(r->generation, 2u);
  // Replay does not compact (docs/durability.md, "Limits"): cells the
  // last compaction removed come back until the next one.
  second.Get().replicas().CompactAll();
  EXPECT_EQ(Contents(second.Get(), "c1"), contents);
  EXPECT_EQ(Contents(second.Get(), "c2"), contents);
}

// Writes `data` over `path`.
void Overwrite(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

std::string Read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

TEST(SnapshotTest, WhatACrashDuringASnapshotLeavesIsIgnored) {
  const std::string dir = TempDir();
  std::string contents;
  {
    Process first(TwoClusters(), 1000);
    ASSERT_TRUE(first.Open(dir).ok());
    Populate(first);
    ASSERT_TRUE(first.store->Snapshot().ok());
    ASSERT_TRUE(Write(first.Get(), "c1", "more", "x").ok());
    contents = Contents(first.Get(), "c1");
    first.store->Sync();
  }
  // A crash while the next snapshot was written: its temporary file, and
  // the empty journal meant to follow it.
  Overwrite(dir + "/snapshot.tmp", "BTSIMS1\npartial");
  Overwrite(dir + "/journal.2.log", "BTSIMJ1\n");
  {
    Process second(TwoClusters(), 2000);
    auto r = second.Open(dir);
    ASSERT_TRUE(r.ok()) << r.status().ToString();
    EXPECT_EQ(r->generation, 1u);
    EXPECT_EQ(Contents(second.Get(), "c1"), contents);
  }
  EXPECT_EQ(FilesIn(dir),
            (std::set<std::string>{"LOCK", "journal.1.log", "snapshot.1"}));
}

TEST(SnapshotTest, AJournalWhoseSnapshotIsMissingStopsTheStart) {
  const std::string dir = TempDir();
  {
    Process first(TwoClusters(), 1000);
    ASSERT_TRUE(first.Open(dir).ok());
    Populate(first);
    ASSERT_TRUE(first.store->Snapshot().ok());
    ASSERT_TRUE(Write(first.Get(), "c1", "more", "x").ok());
    first.store->Sync();
  }
  std::filesystem::remove(dir + "/snapshot.1");
  Process second(TwoClusters(), 2000);
  auto r = second.Open(dir);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(r.status().message().find("journal.1.log holds records"),
            std::string::npos)
      << r.status().ToString();
}

TEST(SnapshotTest, ADamagedSnapshotStopsTheStartNamingFileAndOffset) {
  const std::string dir = TempDir();
  {
    Process first(TwoClusters(), 1000);
    ASSERT_TRUE(first.Open(dir).ok());
    Populate(first);
    ASSERT_TRUE(first.store->Snapshot().ok());
    first.store->Sync();
  }
  const std::string path = dir + "/snapshot.1";
  const std::string good = Read(path);
  ASSERT_GT(good.size(), 100u);
  std::string flipped = good;
  flipped[good.size() / 2] ^= 0x04;
  for (const std::string& bad : {flipped, good.substr(0, good.size() - 3),
                                 good.substr(0, good.size() / 2)}) {
    Overwrite(path, bad);
    Process second(TwoClusters(), 2000);
    auto r = second.Open(dir);
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), StatusCode::kDataLoss)
        << r.status().ToString();
    EXPECT_NE(r.status().message().find(path), std::string::npos)
        << r.status().ToString();
    EXPECT_NE(r.status().message().find("offset"), std::string::npos)
        << r.status().ToString();
  }
  Overwrite(path, good);
  Process third(TwoClusters(), 3000);
  EXPECT_TRUE(third.Open(dir).ok());
}

}  // namespace
}  // namespace btsim::durable
