// Tests of row sharing (cluster/row_sharing.h): RowRecord::Share and
// SameRow, RowShare, a replica Table taking its origin's row exactly when
// applying the commit itself would give the same bytes, CompactionShares,
// and comparing replicas' contents (Table/Cluster::SameContents).
#include "cluster/row_sharing.h"

#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/commit_record.h"
#include "cluster/gc_rule.h"
#include "cluster/row_codec.h"
#include "cluster/table.h"
#include "cluster/version.h"
#include "sim/clock.h"
#include "sim/rng.h"
#include "tests/cluster/engine_test_util.h"

namespace btsim::cluster {
namespace {

using test_util::Cell;
using test_util::CreateFamily;
using test_util::DelRow;
using test_util::Set;
using test_util::UpdateFamily;

constexpr int64_t kNowMicros = 1'700'000'000'000'000;

RowData OneCell(std::string_view value) {
  RowData row;
  FamilyData family{0, kNoVersion, {}};
  family.columns.push_back(
      ColumnData{"q",
                 {},
                 {CellData{TimestampFromMicros(1000),
                           MakeVersion(TimestampFromMicros(1), 1), value}}});
  row.families.push_back(std::move(family));
  return row;
}

// Delivers a row change committed elsewhere to `replica`, as replication
// does, with `share`.
void Deliver(Table& replica, std::string_view key,
             const std::vector<Mutation>& m, Version v,
             const RowShare& share = RowShare()) {
  CommitRecord record;
  record.table = replica.id();
  record.version = v;
  record.row_key = std::string(key);
  record.mutations.assign(m.begin(), m.end());
  record.share = share;
  const CommitRecord* one = &record;
  replica.ApplyReplicated({&one, 1}, [](size_t) {});
}

TEST(RowRecordShareTest, SharedRecordsReadTheSameBytesAndOutliveEachOther) {
  RowRecord shared;
  {
    RowRecord original("key", OneCell("value"));
    original.set_marked(true);
    shared = original.Share();
    EXPECT_EQ(shared.encoded().data(), original.encoded().data());
    // The mark belongs to the holder, not to the bytes.
    EXPECT_FALSE(shared.marked());
    EXPECT_TRUE(original.marked());
  }
  // The original is gone; the shared reference still holds the row.
  EXPECT_EQ(shared.key(), "key");
  EXPECT_EQ(DecodeRow(shared.encoded()).families[0].columns[0].cells[0].value,
            "value");
  EXPECT_FALSE(RowRecord().Share().valid());
}

TEST(RowRecordShareTest, SharingPastTheCountLimitCopiesInstead) {
  const RowRecord original("key", OneCell("value"));
  std::vector<RowRecord> shares;
  for (int i = 1; i < 65535; ++i) shares.push_back(original.Share());
  EXPECT_EQ(shares.back().allocation(), original.allocation());
  const RowRecord copy = original.Share();  // the 65,536th
  EXPECT_NE(copy.allocation(), original.allocation());
  EXPECT_TRUE(copy.SameRow(original));
  shares.clear();
  EXPECT_FALSE(original.shared());
  EXPECT_EQ(original.Share().allocation(), original.allocation());
}

TEST(RowRecordShareTest, SameRowComparesBytesWhenNotShared) {
  const RowRecord a("key", OneCell("value"));
  EXPECT_TRUE(a.SameRow(a.Share()));
  EXPECT_TRUE(a.SameRow(a.Clone()));
  EXPECT_FALSE(a.SameRow(RowRecord("key", OneCell("other"))));
  EXPECT_FALSE(a.SameRow(RowRecord("kez", OneCell("value"))));
  EXPECT_FALSE(a.SameRow(RowRecord()));
  EXPECT_FALSE(RowRecord().SameRow(a));
  EXPECT_TRUE(RowRecord().SameRow(RowRecord()));
}

RowData TwoCells() {
  RowData row = OneCell("new");
  row.families[0].columns[0].cells.push_back(CellData{
      TimestampFromMicros(0), MakeVersion(TimestampFromMicros(0), 1), "old"});
  return row;
}

TEST(RowShareTest, GivesItsResultOnlyForTheSameRowAndFamilyId) {
  const RowRecord before("k", OneCell("a"));
  const RowRecord after("k", OneCell("b"));
  const RowShare share(&before, after, true, 3);
  ASSERT_TRUE(share.valid());
  EXPECT_TRUE(share.dirty());
  EXPECT_EQ(share.after().allocation(), after.allocation());
  // The same allocation, or equal bytes in another.
  EXPECT_EQ(share.ResultFor(&before, 3), &share.after());
  const RowRecord copy = before.Clone();
  EXPECT_EQ(share.ResultFor(&copy, 3), &share.after());
  // Another family id, another row, no row.
  EXPECT_EQ(share.ResultFor(&before, 4), nullptr);
  const RowRecord other("k", OneCell("c"));
  EXPECT_EQ(share.ResultFor(&other, 3), nullptr);
  EXPECT_EQ(share.ResultFor(nullptr, 3), nullptr);
  // A share of a new row applies only where there is no row.
  const RowShare created(nullptr, after, false, kNoFamily);
  EXPECT_EQ(created.ResultFor(nullptr, kNoFamily), &created.after());
  EXPECT_EQ(created.ResultFor(&before, kNoFamily), nullptr);
  EXPECT_FALSE(created.dirty());
  EXPECT_EQ(RowShare().ResultFor(nullptr, kNoFamily), nullptr);
  // Copies share the rows.
  const RowShare copied = share;
  EXPECT_EQ(copied.after().allocation(), after.allocation());
  EXPECT_EQ(copied.ResultFor(&before, 3), &copied.after());
}

TEST(CompactionSharesTest, FindsAResultForTheSameAllocationAndTime) {
  CompactionShares shares;
  const RowRecord row("key", TwoCells());
  const RowRecord result("key", OneCell("new"));
  const GcRule one = GcRule::MaxVersions(1);
  EXPECT_EQ(shares.Find(row, TimestampFromMicros(5)).result, nullptr);
  shares.Add(row, 3, one, TimestampFromMicros(5), Version{0}, result);
  const CompactionShares::Recorded found =
      shares.Find(row.Share(), TimestampFromMicros(5));
  ASSERT_NE(found.result, nullptr);
  EXPECT_EQ(found.result->allocation(), result.allocation());
  // With what the caller needs to tell whether its compaction is the same.
  EXPECT_EQ(found.family_id, 3u);
  EXPECT_EQ(found.rule, &one);
  // Anything else is not the same compaction.
  EXPECT_EQ(shares.Find(row, TimestampFromMicros(6)).result, nullptr);
  EXPECT_EQ(shares.Find(row.Clone(), TimestampFromMicros(5)).result, nullptr);
}

TEST(CompactionSharesTest, HoldsManyRowsAcrossGrowth) {
  CompactionShares shares;
  const GcRule one = GcRule::MaxVersions(1);
  std::vector<RowRecord> rows;
  std::vector<RowRecord> results;
  for (int i = 0; i < 5000; ++i) {
    rows.emplace_back("key" + std::to_string(i), TwoCells());
    results.emplace_back("key" + std::to_string(i), OneCell("new"));
    // Neither hint changes anything, even when the table is empty.
    shares.Prefetch(rows.back(), false);
    shares.Prefetch(rows.back(), true);
    shares.Add(rows.back(), 0, one, TimestampFromMicros(5), Version{0},
               results.back());
  }
  for (int i = 0; i < 5000; ++i) {
    shares.Prefetch(rows[(i + 8) % 5000], false);
    shares.Prefetch(rows[(i + 4) % 5000], true);
    const RowRecord* found =
        shares.Find(rows[i], TimestampFromMicros(5)).result;
    ASSERT_NE(found, nullptr) << i;
    EXPECT_EQ(found->allocation(), results[i].allocation()) << i;
  }
  // A row with no result, shared or not.
  const RowRecord unrecorded("key", TwoCells());
  shares.Prefetch(unrecorded, true);
  EXPECT_EQ(shares.Find(unrecorded, TimestampFromMicros(5)).result, nullptr);
  const RowRecord unrecorded_copy = unrecorded.Share();
  EXPECT_EQ(shares.Find(unrecorded, TimestampFromMicros(5)).result, nullptr);
  // Recording a row again replaces its result.
  const RowRecord other("key7", OneCell("other"));
  shares.Add(rows[7], 1, one, TimestampFromMicros(5), Version{0}, other);
  EXPECT_EQ(shares.Find(rows[7], TimestampFromMicros(5)).result->allocation(),
            other.allocation());
  EXPECT_EQ(shares.Find(rows[7], TimestampFromMicros(5)).family_id, 1u);
  // A result of another time forgets every result of this one.
  shares.Add(rows[8], 0, one, TimestampFromMicros(6), Version{0}, other);
  EXPECT_EQ(shares.Find(rows[8], TimestampFromMicros(6)).result->allocation(),
            other.allocation());
  EXPECT_EQ(shares.Find(rows[8], TimestampFromMicros(5)).result, nullptr);
  EXPECT_EQ(shares.Find(rows[7], TimestampFromMicros(6)).result, nullptr);
  EXPECT_FALSE(rows[7].shared());  // its reference dropped
}

TEST(CompactionSharesTest, KeepsItsRowsAlive) {
  CompactionShares shares;
  const GcRule one = GcRule::MaxVersions(1);
  const void* address = nullptr;
  {
    const RowRecord row("key", TwoCells());
    address = row.allocation();
    shares.Add(row, 0, one, TimestampFromMicros(5), Version{0},
               RowRecord("key", OneCell("new")));
    EXPECT_TRUE(row.shared());
  }
  // The row is gone from its holder but not freed, so no new row can take
  // its address (and its recorded result) while the round lasts.
  const RowRecord other("key", OneCell("other"));
  EXPECT_NE(other.allocation(), address);
}

TEST(CompactionSharesTest, ClearForgetsEveryResultAndDropsItsReferences) {
  CompactionShares shares;
  const GcRule one = GcRule::MaxVersions(1);
  std::vector<RowRecord> rows;
  for (int i = 0; i < 5000; ++i) {
    rows.emplace_back("key" + std::to_string(i), TwoCells());
    shares.Add(rows.back(), 0, one, TimestampFromMicros(5), Version{0},
               RowRecord("key", OneCell("new")));
    ASSERT_TRUE(rows.back().shared());
  }
  shares.Clear();
  for (const RowRecord& row : rows) {
    EXPECT_FALSE(row.shared());  // only the holder's reference is left
    EXPECT_EQ(shares.Find(row, TimestampFromMicros(5)).result, nullptr);
  }
  // The next rounds, smaller (the table shrinks) and empty, work alike.
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 10; ++i) {
      shares.Add(rows[i], 0, one, TimestampFromMicros(6 + round), Version{0},
                 rows[i + 1]);
    }
    for (int i = 0; i < 10; ++i) {
      const RowRecord* found =
          shares.Find(rows[i], TimestampFromMicros(6 + round)).result;
      ASSERT_NE(found, nullptr);
      EXPECT_EQ(found->allocation(), rows[i + 1].allocation());
    }
    EXPECT_EQ(shares.Find(rows[20], TimestampFromMicros(6 + round)).result,
              nullptr);
    shares.Clear();
    shares.Clear();
    EXPECT_FALSE(rows[0].shared());
  }
}

// An origin table whose commit hook keeps the last share, and a replica.
class ReplicaTest : public ::testing::Test {
 protected:
  ReplicaTest() {
    const FamilyModification mods[] = {CreateFamily("cf"),
                                       CreateFamily("other")};
    BTSIM_CHECK(origin_.ModifyColumnFamilies(mods).ok());
    BTSIM_CHECK(replica_.ModifyColumnFamilies(mods).ok());
    origin_.set_commit_hook(
        [this](std::string_view, std::span<const Mutation>, Timestamp, Version,
               RowShare share,
               std::string_view) { last_share_ = std::move(share); });
  }

  // Commits `m` on the origin and returns its version.
  Version Commit(std::vector<Mutation> m) {
    const Version v = next_;
    next_ += Version{1} << kOriginBits;
    BTSIM_CHECK(
        origin_
            .MutateRow("k", m,
                       CommitContext{v, TimestampFromMicros(kNowMicros)})
            .ok());
    return v;
  }

  // Commits `m` on the origin and delivers it to `replica` with the
  // origin's share, its result replaced by a marker row holding one cell
  // "from the share". A share is trusted when it applies, so the marker
  // shows whether the replica took it or applied `m` itself.
  void DeliverMarked(Table& replica, const std::vector<Mutation>& m) {
    const Version v = Commit(m);
    const RowShare share(
        last_share_.before().valid() ? &last_share_.before() : nullptr,
        RowRecord("k", OneCell("from the share")), last_share_.dirty(),
        last_share_.family_id());
    Deliver(replica, "k", m, v, share);
  }

  std::vector<Cell> ReadK(const Table& table) {
    std::vector<Cell> out;
    sim::Rng rng(1);
    table.Read(ReadOptions{}, rng,
               [&](std::string_view key, std::span<const CellView> cells) {
                 if (key == "k") out = test_util::CopyRow(key, cells).cells;
                 return true;
               });
    return out;
  }

  Table origin_{"t", {}, {}};
  Table replica_{"t", {}, {}};
  RowShare last_share_;
  Version next_ = MakeVersion(TimestampFromMicros(kNowMicros), 1);
};

TEST_F(ReplicaTest, OnlySingleMutationCommitsCarryAShare) {
  Commit({Set("cf", "q", 1000, "a")});
  ASSERT_TRUE(last_share_.valid());
  EXPECT_FALSE(last_share_.before().valid());  // the row was new
  EXPECT_EQ(last_share_.after().key(), "k");
  Commit({Set("cf", "q", 2000, "b")});
  ASSERT_TRUE(last_share_.valid());
  EXPECT_TRUE(last_share_.before().valid());
  Commit({Set("cf", "q", 3000, "c"), Set("cf", "r", 3000, "d")});
  EXPECT_FALSE(last_share_.valid());
}

TEST_F(ReplicaTest, AReplicaHoldingTheOriginsRowTakesTheOriginsResult) {
  DeliverMarked(replica_, {Set("cf", "q", 1000, "a")});
  ASSERT_EQ(ReadK(replica_).size(), 1u);
  EXPECT_EQ(ReadK(replica_)[0].value, "from the share");
}

TEST_F(ReplicaTest, AReplicaWhoseRowDiffersAppliesTheMutationsItself) {
  // The replica already holds a cell the origin has not seen.
  const std::vector<Mutation> own = {Set("cf", "z", 5000, "replica's own")};
  Deliver(replica_, "k", own, MakeVersion(TimestampFromMicros(kNowMicros), 2));
  DeliverMarked(replica_, {Set("cf", "q", 1000, "a")});
  const std::vector<Cell> cells = ReadK(replica_);
  ASSERT_EQ(cells.size(), 2u);
  EXPECT_EQ(cells[0].value, "a");
  EXPECT_EQ(cells[1].value, "replica's own");
}

TEST_F(ReplicaTest, DifferentFamilyIdsPreventTakingTheShare) {
  // The replica's "cf" has another id than the origin's.
  Table replica("t", {}, {});
  const FamilyModification mods[] = {CreateFamily("other"), CreateFamily("cf")};
  ASSERT_TRUE(replica.ModifyColumnFamilies(mods).ok());
  DeliverMarked(replica, {Set("cf", "q", 1000, "a")});
  const std::vector<Cell> cells = ReadK(replica);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].family, "cf");
  EXPECT_EQ(cells[0].value, "a");
}

TEST_F(ReplicaTest, CompactionTakesASharedResultOnlyUnderAnEqualGcRule) {
  // Two replicas hold the origin's row (two cells, one allocation); one
  // keeps a cell per column as the origin does, the other two (its rule
  // update has not reached the others yet).
  Table same("t", {}, {});
  const FamilyModification create[] = {CreateFamily("cf")};
  ASSERT_TRUE(same.ModifyColumnFamilies(create).ok());
  const FamilyModification one[] = {
      {"cf", FamilyModification::Kind::kUpdate, GcRule::MaxVersions(1)}};
  const FamilyModification two[] = {
      {"cf", FamilyModification::Kind::kUpdate, GcRule::MaxVersions(2)}};
  ASSERT_TRUE(origin_.ModifyColumnFamilies(one).ok());
  ASSERT_TRUE(same.ModifyColumnFamilies(one).ok());
  ASSERT_TRUE(replica_.ModifyColumnFamilies(two).ok());
  for (const char* value : {"a", "b"}) {
    const std::vector<Mutation> m = {Set("cf", "q", value[0] * 1000, value)};
    const Version v = Commit(m);
    Deliver(same, "k", m, v, last_share_);
    Deliver(replica_, "k", m, v, last_share_);
  }
  ASSERT_EQ(ReadK(replica_).size(), 2u);
  // A result recorded for their row (a marker, so that taking it shows)
  // under a rule equal to the origin's, for "cf" (id 0 in every table).
  CompactionShares shares;
  const Timestamp now = TimestampFromMicros(kNowMicros + 1000);
  const GcRule origin_rule = GcRule::MaxVersions(1);
  shares.Add(last_share_.after(), 0, origin_rule, now, Version{0},
             RowRecord("k", OneCell("from the share")));
  const Version horizon = MakeVersion(now, 0);
  replica_.Compact(now, horizon, &shares);
  same.Compact(now, horizon, &shares);
  EXPECT_EQ(ReadK(replica_).size(), 2u);  // its own rule: compacted itself
  ASSERT_EQ(ReadK(same).size(), 1u);
  EXPECT_EQ(ReadK(same)[0].value, "from the share");
  // At another time the result is not the same compaction.
  shares.Add(last_share_.after(), 0, origin_rule, now, Version{0},
             RowRecord("k", OneCell("from the share")));
  const Timestamp later = now + std::chrono::milliseconds(1);
  origin_.Compact(later, MakeVersion(later, 0), &shares);
  ASSERT_EQ(ReadK(origin_).size(), 1u);
  EXPECT_EQ(ReadK(origin_)[0].value, "b");
}

TEST_F(ReplicaTest, ARowDeletedOnTheReplicaDoesNotMatchTheOriginsRow) {
  const std::vector<Mutation> first = {Set("cf", "q", 1000, "a")};
  const Version v1 = Commit(first);
  Deliver(replica_, "k", first, v1, last_share_);
  EXPECT_EQ(ReadK(replica_).size(), 1u);
  // The replica drops the row and compacts it away; then the origin, which
  // has not seen the drop, writes the row again.
  const std::vector<Mutation> drop = {DelRow()};
  Deliver(replica_, "k", drop,
          MakeVersion(TimestampFromMicros(kNowMicros + 1), 2));
  replica_.Compact(TimestampFromMicros(kNowMicros + 2),
                   MakeVersion(TimestampFromMicros(kNowMicros + 2), 0));
  EXPECT_TRUE(ReadK(replica_).empty());
  next_ = MakeVersion(TimestampFromMicros(kNowMicros + 10), 1);
  DeliverMarked(replica_, {Set("cf", "q", 2000, "b")});
  const std::vector<Cell> cells = ReadK(replica_);
  ASSERT_EQ(cells.size(), 1u);
  EXPECT_EQ(cells[0].value, "b");
}

TEST_F(ReplicaTest, ReplicasHoldingTheSameRowsHaveTheSameContents) {
  EXPECT_TRUE(origin_.SameContents(replica_));  // both empty
  // Several chunks of rows; in three tablets on another replica.
  Table split("t", {}, {"row1100", "row1200"});
  const FamilyModification mods[] = {CreateFamily("cf"), CreateFamily("other")};
  ASSERT_TRUE(split.ModifyColumnFamilies(mods).ok());
  for (int i = 0; i < 300; ++i) {
    const std::vector<Mutation> m = {Set("cf", "q", 1000, "v")};
    const std::string key = "row" + std::to_string(1000 + i);
    const Version v = next_;
    next_ += Version{1} << kOriginBits;
    ASSERT_TRUE(
        origin_
            .MutateRow(key, m,
                       CommitContext{v, TimestampFromMicros(kNowMicros)})
            .ok());
    Deliver(replica_, key, m, v, last_share_);
    Deliver(split, key, m, v, last_share_);
  }
  EXPECT_TRUE(origin_.SameContents(replica_));
  EXPECT_TRUE(replica_.SameContents(origin_));
  EXPECT_EQ(split.Stats().tablets, 3);
  EXPECT_TRUE(split.SameContents(origin_));
  EXPECT_TRUE(origin_.SameContents(split));
  // One row of the middle tablet differs.
  const std::vector<Mutation> other = {Set("cf", "q", 2000, "w")};
  Deliver(split, "row1150", other, next_);
  EXPECT_FALSE(split.SameContents(origin_));
  // A row the other lacks, last in key order, then first.
  Commit({Set("cf", "q", 1000, "v")});  // "k", after every "row..."
  EXPECT_FALSE(origin_.SameContents(replica_));
  EXPECT_FALSE(replica_.SameContents(origin_));
  const std::vector<Mutation> m = {Set("cf", "q", 1000, "v")};
  Deliver(replica_, "k", m, next_ - (Version{1} << kOriginBits));
  EXPECT_TRUE(origin_.SameContents(replica_));  // equal bytes, not shared
  Deliver(replica_, "a", m, next_);
  EXPECT_FALSE(origin_.SameContents(replica_));
  EXPECT_FALSE(replica_.SameContents(origin_));
}

TEST_F(ReplicaTest, ContentsDifferInOneCellOrInTheSchema) {
  const std::vector<Mutation> m = {Set("cf", "q", 1000, "a")};
  const Version v = Commit(m);
  Deliver(replica_, "k", m, v);
  ASSERT_TRUE(origin_.SameContents(replica_));
  // Another value in the same place.
  Table other_value("t", {}, {});
  const FamilyModification mods[] = {CreateFamily("cf"), CreateFamily("other")};
  ASSERT_TRUE(other_value.ModifyColumnFamilies(mods).ok());
  const std::vector<Mutation> b = {Set("cf", "q", 1000, "b")};
  Deliver(other_value, "k", b, v);
  EXPECT_FALSE(origin_.SameContents(other_value));
  // Tablet boundaries do not matter; the table id does.
  Table split("t", {}, {"c", "m"});
  ASSERT_TRUE(split.ModifyColumnFamilies(mods).ok());
  Deliver(split, "k", m, v);
  EXPECT_TRUE(origin_.SameContents(split));
  Table renamed("u", {}, {});
  ASSERT_TRUE(renamed.ModifyColumnFamilies(mods).ok());
  Deliver(renamed, "k", m, v);
  EXPECT_FALSE(origin_.SameContents(renamed));
  // A GC rule, a family more, or the same families under other ids.
  const FamilyModification rule[] = {
      UpdateFamily("other", GcRule::MaxVersions(1))};
  ASSERT_TRUE(replica_.ModifyColumnFamilies(rule).ok());
  EXPECT_FALSE(origin_.SameContents(replica_));
  Table more("t", {}, {});
  const FamilyModification three[] = {CreateFamily("cf"), CreateFamily("other"),
                                      CreateFamily("third")};
  ASSERT_TRUE(more.ModifyColumnFamilies(three).ok());
  Deliver(more, "k", m, v);
  EXPECT_FALSE(origin_.SameContents(more));
  Table swapped("t", {}, {});
  const FamilyModification reversed[] = {CreateFamily("other"),
                                         CreateFamily("cf")};
  ASSERT_TRUE(swapped.ModifyColumnFamilies(reversed).ok());
  Deliver(swapped, "k", m, v);
  EXPECT_EQ(ReadK(swapped), ReadK(origin_));
  EXPECT_FALSE(origin_.SameContents(swapped));
  // The same bytes under ids that name other families read differently.
  Table swapped_other("t", {}, {});
  ASSERT_TRUE(swapped_other.ModifyColumnFamilies(reversed).ok());
  const std::vector<Mutation> in_other = {Set("other", "q", 1000, "a")};
  Deliver(swapped_other, "k", in_other, v);
  ASSERT_NE(ReadK(swapped_other), ReadK(origin_));
  EXPECT_FALSE(origin_.SameContents(swapped_other));
}

TEST(ClusterSameContentsTest, ComparesEveryTable) {
  sim::ManualClock clock(test_util::kStartTime);
  Cluster a(clock, sim::Rng(1), ClusterOptions{});
  Cluster b(clock, sim::Rng(2), ClusterOptions{});
  EXPECT_TRUE(a.SameContents(b));
  const std::vector<FamilyModification> cf = {CreateFamily("cf")};
  ASSERT_TRUE(a.CreateTable("t", cf, {}).ok());
  EXPECT_FALSE(a.SameContents(b));
  EXPECT_FALSE(b.SameContents(a));
  ASSERT_TRUE(b.CreateTable("t", cf, {}).ok());
  EXPECT_TRUE(a.SameContents(b));
  ASSERT_TRUE(a.CreateTable("u", cf, {}).ok());
  ASSERT_TRUE(b.CreateTable("v", cf, {}).ok());
  EXPECT_FALSE(a.SameContents(b));
  ASSERT_TRUE(a.CreateTable("v", cf, {}).ok());
  ASSERT_TRUE(b.CreateTable("u", cf, {}).ok());
  EXPECT_TRUE(a.SameContents(b));
  // Copies share nothing but compare equal; a write to either tells them
  // apart.
  Cluster copy(clock, sim::Rng(3), ClusterOptions{});
  const std::vector<Mutation> x = {Set("cf", "q", 1000, "x")};
  ASSERT_TRUE(a.MutateRow("v", "k", x).ok());
  copy.CopyDataFrom(a);
  EXPECT_TRUE(copy.SameContents(a));
  EXPECT_FALSE(a.SameContents(b));
  ASSERT_TRUE(copy.MutateRow("u", "k", x).ok());
  EXPECT_FALSE(copy.SameContents(a));
}

}  // namespace
}  // namespace btsim::cluster
