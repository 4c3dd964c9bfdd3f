#include "replication/log.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
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
  // A sliding window, as the fabric uses it: the log never holds more than
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

TEST(ReplicationLogDeathTest, ReadBeforeTheTruncatedPrefixAborts) {
  ReplicationLog log = LogOf(5);
  log.TruncateThrough(3);
  EXPECT_DEATH((void)log.Read(2, 10), "truncated_through");
}

}  // namespace
}  // namespace btsim::replication
