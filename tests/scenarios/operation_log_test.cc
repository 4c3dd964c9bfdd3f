#include "scenarios/operation_log.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <utility>

namespace btsim::scenarios {
namespace {

// Appends n operations whose fields are derived from their ids.
void Fill(OperationLog& log, NamePool& names, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    Operation& op = log.emplace_back();
    op.id = static_cast<uint32_t>(log.size() - 1);
    op.type = OpType::kWrite;
    op.version = 1000 + op.id;
    op.row = names.Store("row-" + std::to_string(op.id));
    op.set_written(names.MakeTag("c/" + std::to_string(op.id)));
  }
}

void ExpectOperation(const Operation& op, size_t i) {
  EXPECT_EQ(op.id, i);
  EXPECT_EQ(op.version, 1000 + i);
  EXPECT_EQ(op.row, "row-" + std::to_string(i));
  EXPECT_TRUE(op.written().compact());
  EXPECT_EQ(op.written().sequence(), i);
}

TEST(OperationLogTest, KeepsEverythingInMemoryUntilSpillingIsEnabled) {
  NamePool names;
  OperationLog log(4);
  Fill(log, names, 10);
  log.Settle(10);
  EXPECT_FALSE(log.Spilled());
  EXPECT_EQ(log.Settled(), 10u);
  for (size_t i = 0; i < 10; ++i) ExpectOperation(log[i], i);
}

TEST(OperationLogTest, SpillsWholeSettledChunksAndReadsThemBack) {
  NamePool names;
  OperationLog log(4);
  log.EnableSpilling();
  Fill(log, names, 10);
  log.Settle(3);  // no whole chunk settled yet
  EXPECT_FALSE(log.Spilled());
  log.Settle(9);  // chunks 0 and 1 (ops 0-7) leave memory
  EXPECT_TRUE(log.Spilled());
  EXPECT_DEATH(log[7], "left memory");
  log[8].version = 7;  // still in memory: changes stay possible
  log[8].version = 1008;
  size_t i = 0;
  for (const Operation& op : log) ExpectOperation(op, i++);
  EXPECT_EQ(i, 10u);
  for (size_t j = 10; j-- > 0;) ExpectOperation(log.Get(j), j);
  // Adding more continues the last chunk, then new ones.
  Fill(log, names, 7);
  log.Settle(17);  // the chunk being filled (16-) stays
  EXPECT_DEATH(log[15], "left memory");
  i = 0;
  for (const Operation& op : log) ExpectOperation(op, i++);
  EXPECT_EQ(i, 17u);
  ExpectOperation(log.back(), 16);
}

TEST(OperationLogTest, CopiesShareSpilledChunksAndOwnTheRest) {
  NamePool names;
  OperationLog log(2);
  log.EnableSpilling();
  Fill(log, names, 5);
  log.Settle(5);
  OperationLog copy = log;
  copy[4].version = 1;
  EXPECT_EQ(log[4].version, 1004u);
  Fill(copy, names, 3);  // the copy spills into the shared file
  copy.Settle(8);
  ASSERT_EQ(copy.size(), 8u);
  for (size_t i = 0; i < 5; ++i) ExpectOperation(log.Get(i), i);
  for (size_t i = 5; i < 8; ++i) ExpectOperation(copy.Get(i), i);
  OperationLog moved = std::move(log);
  ASSERT_EQ(moved.size(), 5u);
  ExpectOperation(moved.Get(2), 2);
  EXPECT_TRUE(log.empty());  // NOLINT(bugprone-use-after-move): specified
  EXPECT_FALSE(log.Spilled());
}

TEST(OperationLogTest, AnIteratorKeepsItsChunkWhileTheLogMovesOn) {
  NamePool names;
  OperationLog log(4);
  log.EnableSpilling();
  Fill(log, names, 12);
  log.Settle(12);
  auto it = log.begin();
  ++it;
  const Operation& second = *it;
  ExpectOperation(log.Get(9), 9);  // reads elsewhere in the file
  ExpectOperation(second, 1);
  EXPECT_EQ(it.index(), 1u);
}

TEST(OperationLogDeathTest, AnUnwritableSpillDirectoryIsAClearError) {
  NamePool names;
  OperationLog log(2);
  log.EnableSpilling();
  Fill(log, names, 6);
  EXPECT_DEATH(
      {
        setenv("TMPDIR", "/nonexistent/btsim", 1);
        log.Settle(6);
      },
      "cannot create the history's spill file /nonexistent/btsim");
}

}  // namespace
}  // namespace btsim::scenarios
