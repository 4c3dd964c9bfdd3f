#include "replication/log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cluster/commit_record.h"

namespace btsim::replication {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

cluster::CommitRecord Record(int i) {
  cluster::CommitRecord r;
  r.kind = cluster::CommitRecord::Kind::kMutateRow;
  r.table = "t";
  r.version = static_cast<cluster::Version>(1000 + i);
  r.row_key = "row" + std::to_string(i);
  return r;
}

// The positions of a Read, in order.
std::vector<uint64_t> Positions(const std::vector<const LogEntry*>& entries) {
  std::vector<uint64_t> out;
  for (const LogEntry* e : entries) out.push_back(e->position);
  return out;
}

// A log holding entries 1..n.
ReplicationLog LogOf(int n) {
  ReplicationLog log;
  for (int i = 1; i <= n; ++i) log.Append(Record(i));
  return log;
}

TEST(ReplicationLogTest, EmptyLog) {
  ReplicationLog log;
  EXPECT_EQ(log.last_position(), 0u);
  EXPECT_EQ(log.truncated_through(), 0u);
  EXPECT_EQ(log.size(), 0u);
  EXPECT_THAT(log.Read(0, 10), IsEmpty());
}

TEST(ReplicationLogTest, SkipTakesAPositionAndStoresNothing) {
  ReplicationLog log;
  log.Skip();
  log.Skip();
  EXPECT_EQ(log.last_position(), 2u);
  EXPECT_EQ(log.truncated_through(), 2u);
  EXPECT_EQ(log.size(), 0u);
  // Appending after skips continues the numbering.
  EXPECT_EQ(log.Append(Record(3)), 3u);
  EXPECT_EQ(log.size(), 1u);
  ASSERT_EQ(log.Read(2, 10).size(), 1u);
  EXPECT_EQ(log.Read(2, 10)[0]->position, 3u);
}

TEST(ReplicationLogTest, AppendAssignsPositionsOneToN) {
  ReplicationLog log;
  for (int i = 1; i <= 5; ++i) {
    EXPECT_EQ(log.Append(Record(i)), static_cast<uint64_t>(i));
    EXPECT_EQ(log.last_position(), static_cast<uint64_t>(i));
    EXPECT_EQ(log.size(), static_cast<size_t>(i));
  }
  EXPECT_EQ(log.truncated_through(), 0u);
  // Each entry keeps the record it was given.
  const std::vector<const LogEntry*> all = log.Read(0, 100);
  ASSERT_EQ(all.size(), 5u);
  for (int i = 1; i <= 5; ++i) {
    EXPECT_EQ(all[i - 1]->position, static_cast<uint64_t>(i));
    EXPECT_EQ(all[i - 1]->record.row_key, "row" + std::to_string(i));
    EXPECT_EQ(all[i - 1]->record.version,
              static_cast<cluster::Version>(1000 + i));
  }
}

TEST(ReplicationLogTest, ReadReturnsTheWindowAfterAPositionUpToMax) {
  const ReplicationLog log = LogOf(6);
  EXPECT_THAT(Positions(log.Read(0, 3)), ElementsAre(1, 2, 3));
  EXPECT_THAT(Positions(log.Read(2, 3)), ElementsAre(3, 4, 5));
  EXPECT_THAT(Positions(log.Read(4, 10)), ElementsAre(5, 6));
  EXPECT_THAT(Positions(log.Read(5, 1)), ElementsAre(6));
  EXPECT_THAT(Positions(log.Read(0, 6)), ElementsAre(1, 2, 3, 4, 5, 6));
  EXPECT_THAT(log.Read(6, 10), IsEmpty());
  EXPECT_THAT(log.Read(0, 0), IsEmpty());
  // Past the end: nothing (a peer never acknowledges beyond the log, but a
  // Read there must not misbehave).
  EXPECT_THAT(log.Read(9, 10), IsEmpty());
}

TEST(ReplicationLogTest, TruncateThroughDropsThePrefix) {
  ReplicationLog log = LogOf(6);
  log.TruncateThrough(3);
  EXPECT_EQ(log.truncated_through(), 3u);
  EXPECT_EQ(log.size(), 3u);
  EXPECT_EQ(log.last_position(), 6u);
  EXPECT_THAT(Positions(log.Read(3, 10)), ElementsAre(4, 5, 6));
  EXPECT_THAT(Positions(log.Read(4, 1)), ElementsAre(5));
  EXPECT_EQ(log.Read(3, 1).front()->record.row_key, "row4");
}

TEST(ReplicationLogTest, TruncateThroughAnOlderPositionIsANoOp) {
  ReplicationLog log = LogOf(6);
  log.TruncateThrough(4);
  log.TruncateThrough(2);
  log.TruncateThrough(0);
  EXPECT_EQ(log.truncated_through(), 4u);
  EXPECT_EQ(log.size(), 2u);
  EXPECT_THAT(Positions(log.Read(4, 10)), ElementsAre(5, 6));
}

TEST(ReplicationLogTest, TruncatingEverythingKeepsLastPosition) {
  ReplicationLog log = LogOf(4);
  log.TruncateThrough(4);
  EXPECT_EQ(log.size(), 0u);
  EXPECT_EQ(log.last_position(), 4u);
  EXPECT_EQ(log.truncated_through(), 4u);
  EXPECT_THAT(log.Read(4, 10), IsEmpty());
  // Positions continue after a full truncation.
  EXPECT_EQ(log.Append(Record(5)), 5u);
  EXPECT_EQ(log.last_position(), 5u);
  EXPECT_THAT(Positions(log.Read(4, 10)), ElementsAre(5));
}

TEST(ReplicationLogTest, TruncatingPastTheEndStopsAtTheEnd) {
  ReplicationLog log = LogOf(3);
  log.TruncateThrough(100);
  EXPECT_EQ(log.size(), 0u);
  EXPECT_EQ(log.last_position(), 3u);
  EXPECT_EQ(log.truncated_through(), 3u);
  EXPECT_EQ(log.Append(Record(4)), 4u);
}

TEST(ReplicationLogTest, TruncateOnAnEmptyLogKeepsPositionsFromOne) {
  ReplicationLog log;
  log.TruncateThrough(5);
  EXPECT_EQ(log.last_position(), 0u);
  EXPECT_EQ(log.truncated_through(), 0u);
  EXPECT_EQ(log.Append(Record(1)), 1u);
}

TEST(ReplicationLogTest, InterleavedAppendAndTruncate) {
  // A sliding window, as Replicas uses it: the log never holds more than
  // the unacknowledged suffix.
  ReplicationLog log;
  uint64_t acked = 0;
  for (int i = 1; i <= 1000; ++i) {
    ASSERT_EQ(log.Append(Record(i)), static_cast<uint64_t>(i));
    if (i % 3 == 0) {
      const std::vector<const LogEntry*> window = log.Read(acked, 2);
      ASSERT_EQ(window.size(), 2u);
      EXPECT_EQ(window[0]->position, acked + 1);
      acked = window.back()->position;
      log.TruncateThrough(acked);
    }
    EXPECT_EQ(log.size(), log.last_position() - log.truncated_through());
  }
  EXPECT_EQ(log.last_position(), 1000u);
  EXPECT_EQ(log.truncated_through(), acked);
  EXPECT_LT(log.size(), 1000u);
}

TEST(ReplicationLogTest, AtReturnsTheEntryAtAPosition) {
  ReplicationLog log = LogOf(5);
  log.TruncateThrough(2);
  for (uint64_t p = 3; p <= 5; ++p) {
    EXPECT_EQ(log.At(p).position, p);
    EXPECT_EQ(log.At(p).record.row_key, "row" + std::to_string(p));
  }
}

TEST(ReplicationLogTest, RecordsRoundTripWithTheirMutations) {
  ReplicationLog log;
  cluster::CommitRecord r = Record(1);
  r.mutations.push_back(cluster::SetCell{
      "cf", "q", cluster::TimestampFromMicros(7000), std::string(50, 'v')});
  r.mutations.push_back(cluster::DeleteFromFamily{"cf2"});
  log.Append(std::move(r));
  cluster::CommitRecord schema;
  schema.kind = cluster::CommitRecord::Kind::kCreateTable;
  schema.table = "u";
  schema.splits = {"m"};
  log.Append(std::move(schema));
  const cluster::CommitRecord& row = log.At(1).record;
  ASSERT_EQ(row.mutations.size(), 2u);
  const auto& set = std::get<cluster::SetCell>(row.mutations[0]);
  EXPECT_EQ(set.family, "cf");
  EXPECT_EQ(set.qualifier, "q");
  EXPECT_EQ(cluster::Micros(set.timestamp), 7000);
  EXPECT_EQ(set.value, std::string(50, 'v'));
  EXPECT_EQ(std::get<cluster::DeleteFromFamily>(row.mutations[1]).family,
            "cf2");
  EXPECT_EQ(log.At(2).record.kind, cluster::CommitRecord::Kind::kCreateTable);
  EXPECT_EQ(log.At(2).record.table, "u");
  EXPECT_THAT(log.At(2).record.splits, ElementsAre("m"));
}

TEST(ReplicationLogTest, EntriesDoNotMoveWhileTheLogGrows) {
  // Appending across many chunks keeps every kept entry where it was.
  ReplicationLog log;
  log.Append(Record(1));
  const LogEntry* first = &log.At(1);
  const std::string* first_key = &first->record.row_key;
  std::vector<const LogEntry*> seen = {first};
  const int n = static_cast<int>(4 * ReplicationLog::kChunkEntries) + 3;
  for (int i = 2; i <= n; ++i) {
    log.Append(Record(i));
    seen.push_back(&log.At(static_cast<uint64_t>(i)));
  }
  EXPECT_EQ(&log.At(1), first);
  EXPECT_EQ(&log.At(1).record.row_key, first_key);
  EXPECT_EQ(log.At(1).record.row_key, "row1");
  log.TruncateThrough(ReplicationLog::kChunkEntries + 10);
  for (int i = static_cast<int>(ReplicationLog::kChunkEntries) + 11; i <= n;
       ++i) {
    EXPECT_EQ(&log.At(static_cast<uint64_t>(i)), seen[i - 1]);
  }
}

TEST(ReplicationLogTest, ChunksAreReusedAcrossTruncationsAndSkips) {
  // A sliding window over many chunks, through full truncations and skips:
  // every read returns the record appended at that position.
  ReplicationLog log;
  uint64_t next = 1;
  for (int round = 0; round < 20; ++round) {
    const int appends = 37 * (round + 1);
    for (int i = 0; i < appends; ++i) {
      ASSERT_EQ(log.Append(Record(static_cast<int>(next))), next);
      ++next;
    }
    const uint64_t keep = round % 3 == 0 ? 0 : 5;
    log.TruncateThrough(log.last_position() - keep);
    ASSERT_EQ(log.size(), keep);
    for (uint64_t p = log.truncated_through() + 1; p <= log.last_position();
         ++p) {
      EXPECT_EQ(log.At(p).position, p);
      EXPECT_EQ(log.At(p).record.row_key, "row" + std::to_string(p));
    }
    if (keep == 0) {
      log.Skip();  // e.g. the cluster lost its peers for a commit
      ++next;
    }
  }
  EXPECT_EQ(log.last_position(), next - 1);
}

TEST(ReplicationLogDeathTest, AtOutsideTheKeptEntriesAborts) {
  ReplicationLog log = LogOf(5);
  log.TruncateThrough(3);
  EXPECT_DEATH((void)log.At(3), "truncated_through");
  EXPECT_DEATH((void)log.At(6), "last_position");
}

TEST(ReplicationLogDeathTest, ReadBeforeTheTruncatedPrefixAborts) {
  ReplicationLog log = LogOf(5);
  log.TruncateThrough(3);
  EXPECT_DEATH((void)log.Read(2, 10), "truncated_through");
}

}  // namespace
}  // namespace btsim::replication
