// Tests of the storage engine through Cluster: commit versions and server
// time, mutation semantics and limits, reads, single-row transactions,
// garbage collection and compaction, and table management.
#include "cluster/cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "cluster/filter.h"
#include "cluster/limits.h"
#include "tests/cluster/engine_test_util.h"

namespace btsim::cluster {
namespace {

using test_util::Cell;
using test_util::CreateFamily;
using test_util::DelCol;
using test_util::DelFam;
using test_util::DelRow;
using test_util::DropFamily;
using test_util::Keys;
using test_util::kStartMicros;
using test_util::Row;
using test_util::Set;
using test_util::UpdateFamily;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ClusterTest = test_util::ClusterTest;

using std::chrono::hours;
using std::chrono::microseconds;
using std::chrono::minutes;
using std::chrono::nanoseconds;

constexpr int64_t kMinute = 60'000'000;
constexpr int64_t kHour = 60 * kMinute;

Cell C(std::string family, std::string qualifier, int64_t ts,
       std::string value) {
  return Cell{std::move(family), std::move(qualifier), ts, std::move(value),
              ""};
}

std::string BigEndian(int64_t v) {
  std::string out(8, '\0');
  uint64_t x = static_cast<uint64_t>(v);
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(x & 0xff);
    x >>= 8;
  }
  return out;
}

std::vector<Cell> ToCells(const std::vector<ModifiedCell>& modified) {
  std::vector<Cell> out;
  for (const ModifiedCell& m : modified) {
    out.push_back(C(m.family, m.qualifier, m.timestamp_micros, m.value));
  }
  return out;
}

// ================================================================ Commit time

TEST_F(ClusterTest, ServerTimestampIsCommitTimeRoundedDownToMillis) {
  clock_.Advance(nanoseconds(5'678'901));  // +5678.901 us
  Put("r", "cf", "q", kServerTimestamp, "v");
  EXPECT_THAT(ReadRow("r"),
              ElementsAre(C("cf", "q", kStartMicros + 5000, "v")));
  clock_.Advance(hours(1));
  Put("r", "cf", "q", kServerTimestamp, "w");
  EXPECT_THAT(ReadRow("r"),
              ElementsAre(C("cf", "q", kStartMicros + kHour + 5000, "w"),
                          C("cf", "q", kStartMicros + 5000, "v")));
}

TEST_F(ClusterTest, CommitVersionsIncreaseWhileTheClockStalls) {
  // The clock never moves: every commit still orders after the previous one.
  Put("r", "cf", "q", 1000, "first");
  ASSERT_TRUE(Mutate("r", {DelCol("cf", "q")}).ok());
  EXPECT_THAT(ReadRow("r"), IsEmpty());
  Put("r", "cf", "q", 1000, "second");
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", 1000, "second")));
  ASSERT_TRUE(Mutate("r", {DelRow()}).ok());
  Put("r", "cf", "q", 1000, "third");
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", 1000, "third")));
}

TEST_F(ClusterTest, ServerTimestampWritesInOneMillisecondOverwriteEachOther) {
  for (int i = 0; i < 5; ++i) {
    Put("r", "cf", "q", kServerTimestamp, "v" + std::to_string(i));
  }
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", kStartMicros, "v4")));
}

TEST_F(ClusterTest, SetCellThenDeleteInOneRequestDeletesTheCell) {
  ASSERT_TRUE(Mutate("r", {Set("cf", "q", 1000, "v"), DelCol("cf", "q")}).ok());
  EXPECT_THAT(ReadRow("r"), IsEmpty());
  ASSERT_TRUE(Mutate("r", {Set("cf", "q", 1000, "v"), DelFam("cf")}).ok());
  EXPECT_THAT(ReadRow("r"), IsEmpty());
  ASSERT_TRUE(Mutate("r", {Set("cf", "q", 1000, "v"), DelRow()}).ok());
  EXPECT_THAT(ReadRow("r"), IsEmpty());
}

TEST_F(ClusterTest, SetDeleteSetOfOneCellInOneRequestKeepsTheLastSet) {
  ASSERT_TRUE(
      Mutate("r", {Set("cf", "q", 1000, "a"), DelCol("cf", "q"),
                   Set("cf", "q", 1000, "b"), Set("cf", "q", 1000, "c")})
          .ok());
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", 1000, "c")));
}

TEST_F(ClusterTest, ManyColumnsAndVersionsInOneRequestComeBackSorted) {
  // Qualifiers and timestamps arrive in descending/ascending disorder, with
  // repeats: the row must still read back in canonical order, one cell per
  // timestamp, the last write of a repeated cell winning.
  std::vector<Mutation> m;
  for (int i = 9; i >= 0; --i) {
    for (int ts = 1; ts <= 3; ++ts) {
      m.push_back(Set("cf", "q" + std::to_string(i), ts * 1000,
                      "first" + std::to_string(ts)));
    }
  }
  m.push_back(Set("cf", "q5", 2000, "second2"));
  ASSERT_TRUE(Mutate("r", m).ok());
  const auto row = ReadRow("r");
  ASSERT_EQ(row.size(), 30u);
  EXPECT_EQ(row[0], C("cf", "q0", 3000, "first3"));
  EXPECT_EQ(row[2], C("cf", "q0", 1000, "first1"));
  EXPECT_EQ(row[16], C("cf", "q5", 2000, "second2"));
  EXPECT_EQ(row[29], C("cf", "q9", 1000, "first1"));
}

TEST_F(ClusterTest, LargeRequestsDoNotPushServerTimeAhead) {
  // The clock stands still. A request of 5,000 mutations is one commit, so
  // the next server timestamp is still the clock's time, not 5 ms ahead.
  std::vector<Mutation> many;
  for (int i = 0; i < 5'000; ++i) {
    many.push_back(Set("cf", "q" + std::to_string(i), 1000, "v"));
  }
  ASSERT_TRUE(Mutate("big", many).ok());
  Put("r", "cf", "q", kServerTimestamp, "now");
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", kStartMicros, "now")));
}

TEST_F(ClusterTest, DeleteThenSetCellInOneRequestKeepsTheNewCell) {
  Put("r", "cf", "old", 1000, "x");
  ASSERT_TRUE(Mutate("r", {DelRow(), Set("cf", "q", 1000, "new")}).ok());
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", 1000, "new")));
  ASSERT_TRUE(Mutate("r", {DelFam("cf"), Set("cf", "q", 2000, "newer")}).ok());
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", 2000, "newer")));
  ASSERT_TRUE(
      Mutate("r", {DelCol("cf", "q"), Set("cf", "q", 1000, "again")}).ok());
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", 1000, "again")));
}

TEST_F(ClusterTest, DeleteRangeVersusLaterWriteWithOlderTimestamp) {
  Put("r", "cf", "col", 5000, "at5000");
  ASSERT_TRUE(Mutate("r", {DelCol("cf", "col", 0, 10000)}).ok());
  Put("r", "cf", "col", 3000, "at3000");
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "col", 3000, "at3000")));
  cluster_.Compact();
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "col", 3000, "at3000")));
}

TEST_F(ClusterTest, DeleteFromColumnRangeIsStartInclusiveEndExclusive) {
  for (int64_t ts : {1000, 2000, 3000, 4000, 5000}) {
    Put("r", "cf", "q", ts, std::to_string(ts));
  }
  Put("r", "cf", "other", 3000, "untouched");
  ASSERT_TRUE(Mutate("r", {DelCol("cf", "q", 2000, 4000)}).ok());
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "other", 3000, "untouched"),
                                        C("cf", "q", 5000, "5000"),
                                        C("cf", "q", 4000, "4000"),
                                        C("cf", "q", 1000, "1000")));
  ASSERT_TRUE(Mutate("r", {DelCol("cf", "q", 5000, 0)}).ok());  // no end
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "other", 3000, "untouched"),
                                        C("cf", "q", 4000, "4000"),
                                        C("cf", "q", 1000, "1000")));
  ASSERT_TRUE(Mutate("r", {DelCol("cf", "q")}).ok());  // everything
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "other", 3000, "untouched")));
}

TEST_F(ClusterTest, DeleteFromFamilyAndRowHaveTheirScope) {
  Put("r", "cf", "a", 1000, "1");
  Put("r", "cf2", "a", 1000, "2");
  Put("s", "cf", "a", 1000, "3");
  ASSERT_TRUE(Mutate("r", {DelFam("cf")}).ok());
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf2", "a", 1000, "2")));
  EXPECT_THAT(ReadRow("s"), ElementsAre(C("cf", "a", 1000, "3")));
  ASSERT_TRUE(Mutate("r", {DelRow()}).ok());
  EXPECT_THAT(ReadRow("r"), IsEmpty());
  EXPECT_THAT(Keys(Read()), ElementsAre("s"));
}

TEST_F(ClusterTest, DeletingAnAbsentRowStoresOnlyATombstone) {
  ASSERT_TRUE(Mutate("ghost", {DelRow()}).ok());
  EXPECT_THAT(Read(), IsEmpty());
  EXPECT_EQ(table().Stats().rows, 1);
  cluster_.Compact();
  EXPECT_EQ(table().Stats().rows, 0);
}

TEST_F(ClusterTest, ExplicitTimestampsIncludingZeroAreKept) {
  ASSERT_TRUE(Mutate("r", {Set("cf", "q", 0, "zero"),
                           Set("cf", "q", 9'000'000'000'000'000, "far"),
                           Set("cf", "q", 1000, "one")})
                  .ok());
  EXPECT_THAT(ReadRow("r"),
              ElementsAre(C("cf", "q", 9'000'000'000'000'000, "far"),
                          C("cf", "q", 1000, "one"), C("cf", "q", 0, "zero")));
}

TEST_F(ClusterTest, OneCellWritesInAnyTimestampOrderKeepTheColumnSorted) {
  // Each request appends one cell: newest, oldest, in between, and equal
  // to a stored timestamp (the later write wins).
  for (int64_t ts : {5000, 9000, 1000, 7000, 3000, 9000, 1000}) {
    ASSERT_TRUE(
        Mutate("r", {Set("cf", "q", ts, "v" + std::to_string(ts / 1000))})
            .ok());
  }
  ASSERT_TRUE(Mutate("r", {Set("cf", "q", 7000, "again")}).ok());
  EXPECT_THAT(ReadRow("r"),
              ElementsAre(C("cf", "q", 9000, "v9"), C("cf", "q", 7000, "again"),
                          C("cf", "q", 5000, "v5"), C("cf", "q", 3000, "v3"),
                          C("cf", "q", 1000, "v1")));
}

TEST_F(ClusterTest, BinaryKeysQualifiersAndValuesRoundTrip) {
  const std::string key("\0k\xff", 3);
  const std::string qualifier("\0", 1);
  const std::string value("\0\x01\0", 3);
  Put(key, "cf", qualifier, 1000, value);
  EXPECT_THAT(ReadRow(key), ElementsAre(C("cf", qualifier, 1000, value)));
  EXPECT_THAT(Keys(Read()), ElementsAre(key));
}

// ================================================================ Validation

TEST_F(ClusterTest, InvalidTimestampsAreRejectedNamingTheField) {
  Put("r", "cf", "q", 1000, "keep");
  for (int64_t ts : {int64_t{-2}, int64_t{-1000}, int64_t{1500}, int64_t{1}}) {
    Status s =
        Mutate("r", {Set("cf", "q", 2000, "x"), Set("cf", "q", ts, "y")});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << ts;
    EXPECT_THAT(s.message(),
                HasSubstr("mutations[1].set_cell.timestamp_micros"));
  }
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", 1000, "keep")));
}

TEST_F(ClusterTest, RowKeyLimits) {
  Status empty = Mutate("", {Set("cf", "q", 1000, "v")});
  EXPECT_EQ(empty.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(empty.message(), HasSubstr("row_key"));

  const std::string max_key(kMaxRowKeyBytes, 'k');
  EXPECT_TRUE(Mutate(max_key, {Set("cf", "q", 1000, "v")}).ok());
  EXPECT_THAT(ReadRow(max_key), ElementsAre(C("cf", "q", 1000, "v")));

  Status too_long = Mutate(max_key + "k", {Set("cf", "q", 1000, "v")});
  EXPECT_EQ(too_long.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(too_long.message(), HasSubstr("4 KiB"));
  EXPECT_THAT(Keys(Read()), ElementsAre(max_key));
}

TEST_F(ClusterTest, QualifierLimit) {
  const std::string max_q(kMaxQualifierBytes, 'q');
  EXPECT_TRUE(Mutate("r", {Set("cf", max_q, 1000, "v")}).ok());
  Status s = Mutate("r", {Set("cf", max_q + "q", 1000, "v")});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("mutations[0].set_cell.column_qualifier"));
  EXPECT_THAT(s.message(), HasSubstr("16 KiB"));
  Status d = Mutate("r", {DelCol("cf", max_q + "q")});
  EXPECT_EQ(d.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(d.message(),
              HasSubstr("mutations[0].delete_from_column.column_qualifier"));
  EXPECT_EQ(ReadRow("r").size(), 1u);
}

TEST_F(ClusterTest, CellValueLimitIs100MiB) {
  std::vector<Mutation> m;
  m.push_back(Set("cf", "q", 1000, std::string(kMaxCellValueBytes + 1, 'v')));
  Status s = cluster_.MutateRow("t", "r", m);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("mutations[0].set_cell.value"));
  EXPECT_THAT(s.message(), HasSubstr("100 MiB"));
  EXPECT_THAT(Read(), IsEmpty());
}

TEST_F(ClusterTest, RowLimitIs256MiBAndAFailedRequestLeavesTheRowUnchanged) {
  Put("r", "cf", "small", 1000, "v");
  std::vector<Mutation> m;  // built without copies: ~257 MiB in total
  m.push_back(Set("cf", "a", 1000, std::string(kMaxCellValueBytes, 'a')));
  m.push_back(Set("cf", "b", 1000, std::string(kMaxCellValueBytes, 'b')));
  m.push_back(Set("cf", "c", 1000, std::string(57 << 20, 'c')));
  Status s = cluster_.MutateRow("t", "r", m);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("256 MiB"));
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "small", 1000, "v")));
  EXPECT_LT(table().Stats().bytes, 1000);
}

TEST_F(ClusterTest, MutateRowAcceptsAtMost100000Mutations) {
  std::vector<Mutation> m(kMaxMutationsPerRequest, DelRow());
  EXPECT_TRUE(cluster_.MutateRow("t", "r", m).ok());
  m.push_back(Set("cf", "q", 1000, "v"));
  Status s = cluster_.MutateRow("t", "r", m);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("100000"));
  EXPECT_THAT(Read(), IsEmpty());
}

TEST_F(ClusterTest, MutateRowsLimitCountsMutationsOfAllEntries) {
  std::vector<RowMutations> rows = {
      {"a", std::vector<Mutation>(50'000, Set("cf", "q", 1000, "a"))},
      {"b", std::vector<Mutation>(50'001, Set("cf", "q", 1000, "b"))}};
  Result<std::vector<Status>> r = cluster_.MutateRows("t", rows);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("100000"));
  EXPECT_THAT(Read(), IsEmpty());  // not even the first entry applied

  rows[1].mutations.pop_back();
  r = cluster_.MutateRows("t", rows);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(*r, ElementsAre(OkStatus(), OkStatus()));
  EXPECT_THAT(Keys(Read()), ElementsAre("a", "b"));
}

TEST_F(ClusterTest, MissingTableIsNotFoundForEveryOperation) {
  const std::vector<Mutation> m = {Set("cf", "q", 1000, "v")};
  const std::vector<RowMutations> rows = {{"r", m}};
  const std::vector<ReadModifyWriteRule> rules = {
      {"cf", "q", ReadModifyWriteRule::Kind::kAppend, "x", 0}};
  EXPECT_EQ(cluster_.MutateRow("nope", "r", m).code(), StatusCode::kNotFound);
  EXPECT_EQ(cluster_.MutateRows("nope", rows).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(
      cluster_.CheckAndMutateRow("nope", "r", nullptr, m, m).status().code(),
      StatusCode::kNotFound);
  EXPECT_EQ(cluster_.ReadModifyWriteRow("nope", "r", rules).status().code(),
            StatusCode::kNotFound);
  EXPECT_EQ(cluster_.DropRowRange("nope", "").code(), StatusCode::kNotFound);
  Status read = cluster_.ReadRows("nope", {}, [](auto, auto) { return true; });
  EXPECT_EQ(read.code(), StatusCode::kNotFound);
  EXPECT_THAT(read.message(), HasSubstr("nope"));
}

TEST_F(ClusterTest, MissingFamilyIsNotFoundNamingTheMutation) {
  Status s =
      Mutate("r", {Set("cf", "q", 1000, "v"), Set("zz", "q", 1000, "v")});
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  EXPECT_THAT(s.message(), HasSubstr("mutations[1].set_cell.family_name"));
  EXPECT_THAT(s.message(), HasSubstr("zz"));
  EXPECT_THAT(Read(), IsEmpty());
}

TEST_F(ClusterTest, AtomicRollbackOfAMutateRowWhoseLastMutationFails) {
  Put("r", "cf", "q", 1000, "before");
  Status s = Mutate(
      "r", {Set("cf", "q", 2000, "new"), DelRow(), Set("cf2", "x", 1000, "y"),
            DelFam("cf"), Set("cf", "q", 1234, "bad timestamp")});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("mutations[4]"));
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", 1000, "before")));
}

TEST_F(ClusterTest, MutateRowsReportsPerEntryStatusesAndAppliesTheRest) {
  Put("d", "cf", "q", 1000, "d-before");
  const std::vector<RowMutations> rows = {
      {"a", {Set("cf", "q", 1000, "a")}},
      {"b", {Set("missing", "q", 1000, "b")}},
      {"", {Set("cf", "q", 1000, "empty key")}},
      {"d", {Set("cf", "q", 2000, "d-new"), Set("cf", "q", 7, "bad")}},
      {"e",
       {Set("cf", "q", 1000, "e"), DelCol("cf", "q", 0, 0),
        Set("cf", "q", 3000, "e-final")}},
      {"f", {}},
  };
  Result<std::vector<Status>> r = cluster_.MutateRows("t", rows);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  ASSERT_EQ(r->size(), 6u);
  EXPECT_TRUE((*r)[0].ok());
  EXPECT_EQ((*r)[1].code(), StatusCode::kNotFound);
  EXPECT_EQ((*r)[2].code(), StatusCode::kInvalidArgument);
  EXPECT_EQ((*r)[3].code(), StatusCode::kInvalidArgument);
  EXPECT_THAT((*r)[3].message(), HasSubstr("mutations[1]"));
  EXPECT_TRUE((*r)[4].ok());
  EXPECT_EQ((*r)[5].code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(Read(), ElementsAre(Row{"a", {C("cf", "q", 1000, "a")}},
                                  Row{"d", {C("cf", "q", 1000, "d-before")}},
                                  Row{"e", {C("cf", "q", 3000, "e-final")}}));
}

TEST_F(ClusterTest, MutateRowsRejectsAnEmptyRequest) {
  Result<std::vector<Status>> r = cluster_.MutateRows("t", {});
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("entries"));
}

TEST_F(ClusterTest, MutateRowRejectsAnEmptyMutationList) {
  EXPECT_EQ(Mutate("r", {}).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(table().Stats().rows, 0);
}

// ================================================================ Reads

class ReadTest : public ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    for (const char* k : {"a", "b", "c", "d", "e"}) {
      Put(k, "cf", "q", 1000, std::string("v") + k);
    }
  }
};

TEST_F(ReadTest, EmptyRowSetReadsEveryRowInOrder) {
  RowSet all;
  EXPECT_THAT(Keys(ReadRowSet(all)), ElementsAre("a", "b", "c", "d", "e"));
  EXPECT_THAT(Keys(ReadRowSet(all, true)),
              ElementsAre("e", "d", "c", "b", "a"));
  EXPECT_THAT(Keys(Read()), ElementsAre("a", "b", "c", "d", "e"));
  EXPECT_EQ(Read()[2], (Row{"c", {C("cf", "q", 1000, "vc")}}));
}

TEST_F(ReadTest, KeysAreReturnedOnceInOrderAndMissingKeysSkipped) {
  RowSet set;
  for (const char* k : {"d", "b", "zz", "d", "b", "0"}) set.AddKey(k);
  EXPECT_THAT(Keys(ReadRowSet(set)), ElementsAre("b", "d"));
  EXPECT_THAT(Keys(ReadRowSet(set, true)), ElementsAre("d", "b"));
}

struct BoundCase {
  Bound start;
  Bound end;
  std::vector<std::string> expected;
};

TEST_F(ReadTest, RangesWithEveryBoundKind) {
  const std::vector<BoundCase> cases = {
      {Bound::Unbounded(), Bound::Unbounded(), {"a", "b", "c", "d", "e"}},
      {Bound::Unbounded(), Bound::Closed("c"), {"a", "b", "c"}},
      {Bound::Unbounded(), Bound::Open("c"), {"a", "b"}},
      {Bound::Closed("b"), Bound::Unbounded(), {"b", "c", "d", "e"}},
      {Bound::Closed("b"), Bound::Closed("d"), {"b", "c", "d"}},
      {Bound::Closed("b"), Bound::Open("d"), {"b", "c"}},
      {Bound::Open("b"), Bound::Unbounded(), {"c", "d", "e"}},
      {Bound::Open("b"), Bound::Closed("d"), {"c", "d"}},
      {Bound::Open("b"), Bound::Open("d"), {"c"}},
      {Bound::Closed("bb"), Bound::Closed("cc"), {"c"}},
      {Bound::Open(""), Bound::Unbounded(), {"a", "b", "c", "d", "e"}},
      {Bound::Closed(""), Bound::Open("a"), {}},
      {Bound::Open("e"), Bound::Unbounded(), {}},
      {Bound::Closed("b"), Bound::Closed("b"), {"b"}},
  };
  for (const BoundCase& c : cases) {
    RowSet set;
    set.AddRange(Interval{c.start, c.end});
    SCOPED_TRACE("start=" + c.start.value + " end=" + c.end.value);
    EXPECT_EQ(Keys(ReadRowSet(set)), c.expected);
    std::vector<std::string> reversed(c.expected.rbegin(), c.expected.rend());
    EXPECT_EQ(Keys(ReadRowSet(set, true)), reversed);
  }
}

TEST_F(ReadTest, OverlappingRangesAndKeysAreDeduplicated) {
  RowSet set;
  set.AddRange(Interval{Bound::Closed("a"), Bound::Closed("c")});
  set.AddRange(Interval{Bound::Closed("b"), Bound::Closed("d")});
  set.AddRange(Interval{Bound::Open("a"), Bound::Open("c")});
  set.AddKey("c");
  set.AddKey("a");
  set.AddRange(Interval{Bound::Closed("a"), Bound::Closed("b")});
  EXPECT_THAT(Keys(ReadRowSet(set)), ElementsAre("a", "b", "c", "d"));
  EXPECT_THAT(Keys(ReadRowSet(set, true)), ElementsAre("d", "c", "b", "a"));
}

TEST_F(ReadTest, RangeNestedInsideAnotherRange) {
  RowSet set;
  set.AddRange(Interval{Bound::Unbounded(), Bound::Unbounded()});
  set.AddRange(Interval{Bound::Closed("b"), Bound::Closed("c")});
  EXPECT_THAT(Keys(ReadRowSet(set)), ElementsAre("a", "b", "c", "d", "e"));
  EXPECT_THAT(Keys(ReadRowSet(set, true)),
              ElementsAre("e", "d", "c", "b", "a"));
}

TEST_F(ReadTest, EmptyAndInvertedRangesReturnNothing) {
  RowSet set;
  set.AddRange(Interval{Bound::Open("b"), Bound::Open("b")});
  set.AddRange(Interval{Bound::Closed("d"), Bound::Closed("b")});
  set.AddRange(Interval{Bound::Closed("c"), Bound::Open("c")});
  EXPECT_THAT(ReadRowSet(set), IsEmpty());
  EXPECT_THAT(ReadRowSet(set, true), IsEmpty());
  set.AddKey("e");
  EXPECT_THAT(Keys(ReadRowSet(set)), ElementsAre("e"));
}

TEST_F(ReadTest, ResumeAfterForwardAndReversed) {
  RowSet set;
  set.AddRange(Interval{Bound::Closed("b"), Bound::Unbounded()});
  ReadOptions options;
  options.rows = &set;
  options.resume_after = "c";
  EXPECT_THAT(Keys(Read(options)), ElementsAre("d", "e"));
  options.resume_after = "bb";  // not a stored key
  EXPECT_THAT(Keys(Read(options)), ElementsAre("c", "d", "e"));
  options.reversed = true;
  options.resume_after = "d";
  EXPECT_THAT(Keys(Read(options)), ElementsAre("c", "b"));
  options.resume_after = "b";
  EXPECT_THAT(Read(options), IsEmpty());
}

TEST_F(ReadTest, FilterIsApplied) {
  Put("b", "cf", "q", 2000, "newer");
  Put("b", "cf", "r", 1000, "other");
  Filter latest = Filter::CellsPerColumnLimit(1).value();
  ReadOptions options;
  options.filter = &latest;
  std::vector<Row> rows = Read(options);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(
      rows[1],
      (Row{"b", {C("cf", "q", 2000, "newer"), C("cf", "r", 1000, "other")}}));
  EXPECT_EQ(ReadRow("b").size(), 3u);
}

TEST_F(ReadTest, RowsWhoseCellsAreAllFilteredOutAreNotVisited) {
  Filter only_b_or_d = Filter::ValueRegex("v[bd]").value();
  ReadOptions options;
  options.filter = &only_b_or_d;
  EXPECT_THAT(Keys(Read(options)), ElementsAre("b", "d"));
  options.reversed = true;
  EXPECT_THAT(Keys(Read(options)), ElementsAre("d", "b"));
  Filter none = Filter::BlockAll();
  options.filter = &none;
  EXPECT_THAT(Read(options), IsEmpty());
}

TEST_F(ReadTest, LabelsFromTheFilterReachTheVisitor) {
  Filter label = Filter::ApplyLabel("seen");
  ReadOptions options;
  options.filter = &label;
  std::vector<Row> rows = Read(options);
  ASSERT_EQ(rows.size(), 5u);
  EXPECT_EQ(rows[0].cells[0].label, "seen");
}

TEST_F(ReadTest, RowsWithOnlyDeletedCellsAreNotVisited) {
  ASSERT_TRUE(Mutate("b", {DelRow()}).ok());
  ASSERT_TRUE(Mutate("c", {DelCol("cf", "q")}).ok());
  ASSERT_TRUE(Mutate("d", {DelFam("cf")}).ok());
  EXPECT_THAT(Keys(Read()), ElementsAre("a", "e"));
}

TEST_F(ReadTest, VisitorReturningFalseStopsTheRead) {
  std::vector<std::string> seen;
  Status s = cluster_.ReadRows(
      "t", {}, [&](std::string_view key, std::span<const CellView>) {
        seen.emplace_back(key);
        return key != "c";
      });
  EXPECT_TRUE(s.ok());
  EXPECT_THAT(seen, ElementsAre("a", "b", "c"));
}

TEST_F(ClusterTest, AddContentsVisitsEveryTableAndRowItAdds) {
  ASSERT_TRUE(CreateTable("a", {CreateFamily("f")}).ok());
  Put("r2", "cf", "q", 2000, "new");
  Put("r2", "cf", "q", 1000, "old");
  Put("r1", "cf2", "x", 1000, "v");
  Put("r1", "f", "q", 1000, "w", "a");
  ASSERT_TRUE(Mutate("r3", {DelRow()}).ok());  // no live cells: not added
  std::vector<std::pair<std::string, Row>> seen;
  sim::Fingerprint visited;
  cluster_.AddContents(
      &visited, [&](std::string_view table, std::string_view key,
                    std::span<const CellView> cells) {
        seen.emplace_back(std::string(table), test_util::CopyRow(key, cells));
      });
  // Tables in id order, rows in key order, cells as an unfiltered read
  // returns them.
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0].first, "a");
  EXPECT_EQ(seen[0].second, Read({}, "a").at(0));
  EXPECT_EQ(seen[1].first, "t");
  EXPECT_EQ(seen[2].first, "t");
  const std::vector<Row> rows = Read();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(seen[1].second, rows[0]);
  EXPECT_EQ(seen[2].second, rows[1]);
  EXPECT_EQ(seen[2].second.cells,
            std::vector<Cell>(
                {C("cf", "q", 2000, "new"), C("cf", "q", 1000, "old")}));
  // The visitor changes nothing in the fingerprint.
  sim::Fingerprint plain;
  cluster_.AddContents(&plain);
  EXPECT_EQ(visited, plain);
}

TEST_F(ClusterTest, CellsAreInCanonicalOrderWhenFamiliesWereCreatedOutOfOrder) {
  const std::vector<FamilyModification> families = {
      CreateFamily("zeta"), CreateFamily("alpha"), CreateFamily("mid")};
  ASSERT_TRUE(CreateTable("t2", families).ok());
  ASSERT_TRUE(
      Mutate(
          "r",
          {Set("zeta", "a", 1000, "z"), Set("mid", "b", 1000, "m1"),
           Set("alpha", "b", 1000, "a2"), Set("mid", "a", 1000, "m0"),
           Set("alpha", "a", 2000, "a1new"), Set("alpha", "a", 1000, "a1old")},
          "t2")
          .ok());
  EXPECT_THAT(
      ReadRow("r", "t2"),
      ElementsAre(C("alpha", "a", 2000, "a1new"),
                  C("alpha", "a", 1000, "a1old"), C("alpha", "b", 1000, "a2"),
                  C("mid", "a", 1000, "m0"), C("mid", "b", 1000, "m1"),
                  C("zeta", "a", 1000, "z")));
  cluster_.Compact();
  EXPECT_EQ(ReadRow("r", "t2").size(), 6u);
  EXPECT_EQ(ReadRow("r", "t2")[0], C("alpha", "a", 2000, "a1new"));
}

// ================================================================ Tablets

class SmallTabletClusterTest : public ClusterTest {
 protected:
  SmallTabletClusterTest() : ClusterTest(TableOptions{1 << 20, 8, 4}) {}
};

std::string NumKey(int i) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "k%04d", i);
  return buf;
}

TEST_F(SmallTabletClusterTest, ReversedScanIsDescendingAcrossTablets) {
  std::vector<std::string> keys;
  for (int i = 0; i < 120; ++i) {
    Put(NumKey((i * 37) % 120), "cf", "q", 1000, "v");
    keys.push_back(NumKey(i));
  }
  ASSERT_GT(table().Stats().tablets, 10);
  ReadOptions options;
  options.reversed = true;
  std::vector<std::string> reversed(keys.rbegin(), keys.rend());
  EXPECT_EQ(Keys(Read(options)), reversed);
  EXPECT_EQ(Keys(Read()), keys);
  options.resume_after = NumKey(60);
  EXPECT_EQ(Keys(Read(options)),
            std::vector<std::string>(reversed.begin() + 60, reversed.end()));
}

TEST_F(SmallTabletClusterTest, CreateTableSplitsAppearInSampleRowKeys) {
  ASSERT_TRUE(CreateTable("s", {CreateFamily("cf")}, {"k0100", "k0050"}).ok());
  for (int i = 0; i < 150; i += 10) {
    Put(NumKey(i), "cf", "q", 1000, "v", "s");
  }
  std::vector<KeySample> samples = table("s").SampleRowKeys();
  std::vector<std::string> sample_keys;
  for (const KeySample& s : samples) sample_keys.push_back(s.row_key);
  EXPECT_EQ(sample_keys[0], "k0050");
  EXPECT_EQ(sample_keys.back(), "");
  EXPECT_NE(std::find(sample_keys.begin(), sample_keys.end(), "k0100"),
            sample_keys.end());
  EXPECT_EQ(samples.back().offset_bytes, table("s").Stats().bytes);

  table("s").DropRowRange("");
  cluster_.Compact();
  samples = table("s").SampleRowKeys();
  ASSERT_EQ(samples.size(), 3u);
  EXPECT_EQ(samples[0].row_key, "k0050");
  EXPECT_EQ(samples[1].row_key, "k0100");
}

TEST_F(SmallTabletClusterTest, DeletesPlusCompactionMergeTablets) {
  for (int i = 0; i < 160; ++i) Put(NumKey(i), "cf", "q", 1000, "v");
  const int64_t tablets = table().Stats().tablets;
  std::vector<RowMutations> deletes;
  for (int i = 0; i < 160; ++i) {
    if (i % 40 != 7) deletes.push_back({NumKey(i), {DelRow()}});
  }
  ASSERT_TRUE(cluster_.MutateRows("t", deletes).ok());
  cluster_.Compact();
  EXPECT_LT(table().Stats().tablets, tablets);
  EXPECT_LE(table().Stats().tablets, 5);
  EXPECT_THAT(Keys(Read()),
              ElementsAre(NumKey(7), NumKey(47), NumKey(87), NumKey(127)));
}

// ================================================================
// CheckAndMutate

TEST_F(ClusterTest, CheckAndMutateWithoutPredicateTestsForAnyCell) {
  const std::vector<Mutation> if_true = {Set("cf", "matched", 1000, "yes")};
  const std::vector<Mutation> if_false = {Set("cf", "unmatched", 1000, "no")};
  Result<bool> r =
      cluster_.CheckAndMutateRow("t", "r", nullptr, if_true, if_false);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "unmatched", 1000, "no")));

  r = cluster_.CheckAndMutateRow("t", "r", nullptr, if_true, if_false);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r);
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "matched", 1000, "yes"),
                                        C("cf", "unmatched", 1000, "no")));
}

TEST_F(ClusterTest, CheckAndMutateSeesDeletedRowAsEmpty) {
  Put("r", "cf", "q", 1000, "v");
  ASSERT_TRUE(Mutate("r", {DelRow()}).ok());
  const std::vector<Mutation> if_false = {Set("cf", "q", 2000, "recreated")};
  Result<bool> r = cluster_.CheckAndMutateRow("t", "r", nullptr, {}, if_false);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", 2000, "recreated")));
}

TEST_F(ClusterTest, CheckAndMutateWithPredicateFilter) {
  Put("r", "cf", "state", 1000, "open");
  Filter is_closed = Filter::ValueRegex("closed").value();
  const std::vector<Mutation> if_true = {DelRow()};
  const std::vector<Mutation> if_false = {Set("cf", "state", 2000, "closed"),
                                          Set("cf2", "by", 2000, "me")};
  Result<bool> r =
      cluster_.CheckAndMutateRow("t", "r", &is_closed, if_true, if_false);
  ASSERT_TRUE(r.ok());
  EXPECT_FALSE(*r);
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "state", 2000, "closed"),
                                        C("cf", "state", 1000, "open"),
                                        C("cf2", "by", 2000, "me")));
  r = cluster_.CheckAndMutateRow("t", "r", &is_closed, if_true, if_false);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r);
  EXPECT_THAT(ReadRow("r"), IsEmpty());
}

TEST_F(ClusterTest, CheckAndMutateWithEmptyChosenListChangesNothing) {
  Put("r", "cf", "q", 1000, "v");
  const std::vector<Mutation> if_false = {DelRow()};
  Result<bool> r = cluster_.CheckAndMutateRow("t", "r", nullptr, {}, if_false);
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r);
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", 1000, "v")));
}

TEST_F(ClusterTest, CheckAndMutateWithBothListsEmptyIsInvalid) {
  Result<bool> r = cluster_.CheckAndMutateRow("t", "r", nullptr, {}, {});
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(r.status().message().find("true_mutations"), std::string::npos);
}

TEST_F(ClusterTest, CheckAndMutateWithAnInvalidMutationInEitherListFails) {
  Put("r", "cf", "q", 1000, "v");
  const std::vector<Mutation> good = {Set("cf", "q", 2000, "changed")};
  const std::vector<Mutation> bad = {Set("cf", "q", 3000, "x"),
                                     Set("cf", "q", 5, "bad ts")};
  const std::vector<Mutation> missing = {DelFam("nope")};

  // Invalid in the list that would not be applied: still an error.
  Result<bool> r = cluster_.CheckAndMutateRow("t", "r", nullptr, good, bad);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(),
              HasSubstr("false_mutations[1].set_cell.timestamp_micros"));

  r = cluster_.CheckAndMutateRow("t", "r", nullptr, bad, good);
  ASSERT_FALSE(r.ok());
  EXPECT_THAT(r.status().message(), HasSubstr("true_mutations[1]"));

  r = cluster_.CheckAndMutateRow("t", "r", nullptr, missing, good);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);

  r = cluster_.CheckAndMutateRow("t", "", nullptr, good, good);
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);

  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", 1000, "v")));
}

TEST_F(ClusterTest, CheckAndMutateAppliesItsMutationsInOrder) {
  Put("r", "cf", "q", 1000, "v");
  const std::vector<Mutation> if_true = {Set("cf", "q", 2000, "gone"),
                                         DelCol("cf", "q"),
                                         Set("cf", "q", 500 * 1000, "kept")};
  Result<bool> r = cluster_.CheckAndMutateRow("t", "r", nullptr, if_true, {});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(*r);
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", 500'000, "kept")));
}

// ================================================================
// ReadModifyWrite

using Rule = ReadModifyWriteRule;

Rule Append(std::string family, std::string qualifier, std::string value) {
  return Rule{std::move(family), std::move(qualifier), Rule::Kind::kAppend,
              std::move(value), 0};
}
Rule Increment(std::string family, std::string qualifier, int64_t amount) {
  return Rule{std::move(family), std::move(qualifier), Rule::Kind::kIncrement,
              "", amount};
}

TEST_F(ClusterTest, AppendToAMissingCellStartsFromEmpty) {
  const std::vector<Rule> rules = {Append("cf", "q", "abc")};
  auto r = cluster_.ReadModifyWriteRow("t", "r", rules);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_THAT(ToCells(*r), ElementsAre(C("cf", "q", kStartMicros, "abc")));
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", kStartMicros, "abc")));
}

TEST_F(ClusterTest, AppendUsesTheLatestLiveCell) {
  Put("r", "cf", "q", 1000, "old");
  Put("r", "cf", "q", 2000, "latest");
  Put("r", "cf", "q", 3000, "deleted");
  ASSERT_TRUE(Mutate("r", {DelCol("cf", "q", 3000, 4000)}).ok());
  clock_.Advance(minutes(1));
  const std::vector<Rule> rules = {Append("cf", "q", "+x")};
  auto r = cluster_.ReadModifyWriteRow("t", "r", rules);
  ASSERT_TRUE(r.ok());
  const int64_t now = kStartMicros + kMinute;
  EXPECT_THAT(ToCells(*r), ElementsAre(C("cf", "q", now, "latest+x")));
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", now, "latest+x"),
                                        C("cf", "q", 2000, "latest"),
                                        C("cf", "q", 1000, "old")));
}

TEST_F(ClusterTest, IncrementOfAMissingCellStartsAtZero) {
  const std::vector<Rule> rules = {Increment("cf", "n", 5)};
  auto r = cluster_.ReadModifyWriteRow("t", "r", rules);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(ToCells(*r),
              ElementsAre(C("cf", "n", kStartMicros, BigEndian(5))));
}

TEST_F(ClusterTest, IncrementByNegativeAmountsAndWrapAround) {
  Put("r", "cf", "n", 1000, BigEndian(10));
  const std::vector<Rule> down = {Increment("cf", "n", -25)};
  auto r = cluster_.ReadModifyWriteRow("t", "r", down);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].value, BigEndian(-15));

  Put("m", "cf", "n", 1000, BigEndian(std::numeric_limits<int64_t>::max()));
  const std::vector<Rule> up = {Increment("cf", "n", 1)};
  r = cluster_.ReadModifyWriteRow("t", "m", up);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].value, BigEndian(std::numeric_limits<int64_t>::min()));
  EXPECT_EQ((*r)[0].value, std::string("\x80\0\0\0\0\0\0\0", 8));

  const std::vector<Rule> back = {Increment("cf", "n", -1)};
  r = cluster_.ReadModifyWriteRow("t", "m", back);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].value, BigEndian(std::numeric_limits<int64_t>::max()));
}

TEST_F(ClusterTest, IncrementOnAThreeByteValueFailsTheWholeRequest) {
  Put("r", "cf", "n", 1000, "abc");
  Put("r", "cf", "s", 1000, "text");
  const std::vector<Rule> rules = {Append("cf", "s", "-more"),
                                   Increment("cf", "n", 1)};
  auto r = cluster_.ReadModifyWriteRow("t", "r", rules);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(r.status().message(), HasSubstr("rules[1]"));
  EXPECT_THAT(r.status().message(), HasSubstr("3-byte"));
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "n", 1000, "abc"),
                                        C("cf", "s", 1000, "text")));
}

TEST_F(ClusterTest, RulesOnOneColumnAccumulateInOrder) {
  const std::vector<Rule> appends = {
      Append("cf", "s", "a"), Append("cf", "s", "b"), Append("cf", "s", "c")};
  auto r = cluster_.ReadModifyWriteRow("t", "r", appends);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(ToCells(*r), ElementsAre(C("cf", "s", kStartMicros, "abc")));

  const std::vector<Rule> increments = {Increment("cf", "n", 1),
                                        Increment("cf", "n", 2),
                                        Increment("cf", "n", 3)};
  r = cluster_.ReadModifyWriteRow("t", "r", increments);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(ToCells(*r),
              ElementsAre(C("cf", "n", kStartMicros, BigEndian(6))));

  // An append that builds an 8-byte value can then be incremented...
  const std::vector<Rule> mixed = {Append("cf", "m", std::string(7, '\0')),
                                   Append("cf", "m", "\x01"),
                                   Increment("cf", "m", 1)};
  r = cluster_.ReadModifyWriteRow("t", "r", mixed);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].value, BigEndian(2));
  // ...and an increment followed by an append yields 9 bytes.
  const std::vector<Rule> grow = {Increment("cf", "m", 1),
                                  Append("cf", "m", "!")};
  r = cluster_.ReadModifyWriteRow("t", "r", grow);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].value, BigEndian(3) + "!");
}

TEST_F(ClusterTest, ReadModifyWriteReturnsOneFinalCellPerColumnInOrder) {
  Put("r", "cf", "untouched", 1000, "x");
  const std::vector<Rule> rules = {
      Append("cf2", "x", "1"), Append("cf", "b", "2"), Increment("cf", "a", 7),
      Append("cf", "b", "3"), Increment("cf", "a", -2)};
  auto r = cluster_.ReadModifyWriteRow("t", "r", rules);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(ToCells(*r), ElementsAre(C("cf", "a", kStartMicros, BigEndian(5)),
                                       C("cf", "b", kStartMicros, "23"),
                                       C("cf2", "x", kStartMicros, "1")));
  EXPECT_EQ(ReadRow("r").size(), 4u);
}

TEST_F(ClusterTest, ReadModifyWriteTimestampIsMaxOfServerTimeAndLatestCell) {
  const int64_t future = kStartMicros + 10 * kHour;
  Put("r", "cf", "f", future, "future");
  Put("r", "cf", "p", 1000, "past");
  const std::vector<Rule> rules = {Append("cf", "f", "+"),
                                   Append("cf", "p", "+")};
  auto r = cluster_.ReadModifyWriteRow("t", "r", rules);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(ToCells(*r), ElementsAre(C("cf", "f", future, "future+"),
                                       C("cf", "p", kStartMicros, "past+")));
  // The future cell was replaced in place; the past one got a new version.
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "f", future, "future+"),
                                        C("cf", "p", kStartMicros, "past+"),
                                        C("cf", "p", 1000, "past")));
}

TEST_F(ClusterTest, ReadModifyWriteValidation) {
  const std::vector<Rule> none;
  EXPECT_EQ(cluster_.ReadModifyWriteRow("t", "r", none).status().code(),
            StatusCode::kInvalidArgument);
  const std::vector<Rule> missing = {Append("cf", "q", "x"),
                                     Append("nope", "q", "x")};
  auto r = cluster_.ReadModifyWriteRow("t", "r", missing);
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
  EXPECT_THAT(r.status().message(), HasSubstr("rules[1]"));
  const std::vector<Rule> ok = {Append("cf", "q", "x")};
  EXPECT_EQ(cluster_.ReadModifyWriteRow("t", "", ok).status().code(),
            StatusCode::kInvalidArgument);
  const std::vector<Rule> long_q = {
      Append("cf", std::string(kMaxQualifierBytes + 1, 'q'), "x")};
  EXPECT_EQ(cluster_.ReadModifyWriteRow("t", "r", long_q).status().code(),
            StatusCode::kInvalidArgument);
  EXPECT_THAT(Read(), IsEmpty());
}

// ================================================================ GC rules

class GcTest : public ClusterTest {
 protected:
  void SetRule(GcRule rule) {
    ASSERT_TRUE(table()
                    .ModifyColumnFamilies(std::vector<FamilyModification>{
                        UpdateFamily("cf", std::move(rule))})
                    .ok());
  }
  // Writes the given ages (in minutes before now), newest first.
  void PutAges(std::string_view key, const std::vector<int>& minutes_ago) {
    for (int m : minutes_ago) {
      Put(key, "cf", "q", kStartMicros - m * kMinute, std::to_string(m));
    }
  }
  std::vector<std::string> Values(std::string_view key) {
    std::vector<std::string> out;
    for (const Cell& c : ReadRow(key)) out.push_back(c.value);
    return out;
  }
};

TEST_F(GcTest, MaxVersionsKeepsTheNewestAfterCompactionOnly) {
  SetRule(GcRule::MaxVersions(2));
  PutAges("r", {1, 2, 3, 4, 5});
  Put("r", "cf2", "q", 1000, "other family");
  EXPECT_EQ(Values("r").size(), 6u);  // expired cells stay readable
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("1", "2", "other family"));
}

TEST_F(GcTest, StricterRuleAppliesRetroactivelyToUntouchedTablets) {
  PutAges("r", {1, 2, 3});
  cluster_.Compact();  // no rule yet: everything stays, tablets turn clean
  EXPECT_EQ(Values("r").size(), 3u);
  SetRule(GcRule::MaxVersions(1));  // no write since the last compaction
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("1"));
}

TEST_F(GcTest, WritesAfterACleanCompactionAreCompactedAgain) {
  SetRule(GcRule::MaxVersions(1));
  PutAges("r", {5});
  cluster_.Compact();
  PutAges("r", {1});
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("1"));
}

TEST_F(GcTest, MaxVersionsCountsOnlyLiveCells) {
  SetRule(GcRule::MaxVersions(2));
  PutAges("r", {1, 2, 3, 4});
  ASSERT_TRUE(
      Mutate("r", {DelCol("cf", "q", kStartMicros - 1 * kMinute, kStartMicros)})
          .ok());  // deletes the newest
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("2", "3"));
}

TEST_F(GcTest, MaxAgeIsRelativeToTheClock) {
  SetRule(GcRule::MaxAge(kHour));
  PutAges("r", {30, 90, 120});
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("30"));
  clock_.Advance(minutes(29));
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("30"));
  clock_.Advance(minutes(2));
  EXPECT_THAT(Values("r"), ElementsAre("30"));  // expired but not compacted
  cluster_.Compact();
  EXPECT_THAT(Values("r"), IsEmpty());
  EXPECT_EQ(table().Stats().rows, 0);
}

TEST_F(GcTest, UnionDeletesWhatEitherRuleDeletes) {
  SetRule(GcRule::Union({GcRule::MaxVersions(2), GcRule::MaxAge(kHour)}));
  PutAges("young", {1, 2, 3});
  PutAges("old", {10, 70, 80});
  cluster_.Compact();
  EXPECT_THAT(Values("young"), ElementsAre("1", "2"));
  EXPECT_THAT(Values("old"), ElementsAre("10"));
}

TEST_F(GcTest, IntersectionDeletesOnlyWhatBothRulesDelete) {
  SetRule(
      GcRule::Intersection({GcRule::MaxVersions(1), GcRule::MaxAge(kHour)}));
  PutAges("r", {10, 20, 120, 180});
  PutAges("lonely", {300});
  cluster_.Compact();
  // 20 is beyond the first version but young; 120 and 180 are both.
  EXPECT_THAT(Values("r"), ElementsAre("10", "20"));
  // The only version is old but it is the first: kept.
  EXPECT_THAT(Values("lonely"), ElementsAre("300"));
}

TEST_F(GcTest, NestedRules) {
  // Keep at most 3 versions, and of those drop all but the newest once they
  // are older than an hour.
  SetRule(GcRule::Union(
      {GcRule::MaxVersions(3),
       GcRule::Intersection({GcRule::MaxVersions(1), GcRule::MaxAge(kHour)})}));
  PutAges("r", {100, 110, 120, 130});
  PutAges("s", {5, 10, 15, 90, 95});
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("100"));
  EXPECT_THAT(Values("s"), ElementsAre("5", "10", "15"));
}

TEST_F(GcTest, EmptyUnionAndIntersectionKeepEverything) {
  SetRule(GcRule::Union({}));
  PutAges("r", {1, 1000, 100000});
  cluster_.Compact();
  EXPECT_EQ(Values("r").size(), 3u);
  SetRule(GcRule::Intersection({}));
  cluster_.Compact();
  EXPECT_EQ(Values("r").size(), 3u);
}

TEST_F(GcTest, StricterRuleAppliesRetroactively) {
  PutAges("r", {1, 2, 3});
  cluster_.Compact();
  EXPECT_EQ(Values("r").size(), 3u);
  SetRule(GcRule::MaxVersions(1));
  EXPECT_EQ(Values("r").size(), 3u);
  cluster_.Compact();
  EXPECT_THAT(Values("r"), ElementsAre("1"));
}

// ================================================================ Compaction

TEST_F(ClusterTest, CompactionDropsTombstonesAndCoveredCells) {
  for (int i = 0; i < 20; ++i) {
    Put("r", "cf", "q", 1000 * (i + 1), std::string(100, 'x'));
  }
  Put("s", "cf", "q", 1000, "keep");
  const int64_t full = table().Stats().bytes;
  ASSERT_TRUE(Mutate("r", {DelCol("cf", "q", 0, 19'000)}).ok());
  const std::vector<Row> before = Read();
  cluster_.Compact();
  EXPECT_EQ(Read(), before);
  EXPECT_LT(table().Stats().bytes, full / 5);
  EXPECT_THAT(ReadRow("r"),
              ElementsAre(C("cf", "q", 20'000, std::string(100, 'x')),
                          C("cf", "q", 19'000, std::string(100, 'x'))));
}

TEST_F(ClusterTest, CompactionRemovesEmptyRows) {
  for (const char* k : {"a", "b", "c", "d"}) Put(k, "cf", "q", 1000, "v");
  ASSERT_TRUE(Mutate("a", {DelRow()}).ok());
  ASSERT_TRUE(Mutate("b", {DelFam("cf")}).ok());
  ASSERT_TRUE(Mutate("c", {DelCol("cf", "q")}).ok());
  EXPECT_EQ(table().Stats().rows, 4);
  cluster_.Compact();
  EXPECT_EQ(table().Stats().rows, 1);
  EXPECT_THAT(Keys(Read()), ElementsAre("d"));
  // A deleted row can be written again after compaction.
  Put("a", "cf", "q", 1000, "back");
  EXPECT_THAT(ReadRow("a"), ElementsAre(C("cf", "q", 1000, "back")));
}

TEST_F(ClusterTest, DroppedAndRecreatedFamilyDoesNotResurrectData) {
  Put("r", "cf", "q", 1000, "old");
  Put("r", "cf2", "q", 1000, "other");
  const std::vector<FamilyModification> drop = {DropFamily("cf")};
  const std::vector<FamilyModification> create = {CreateFamily("cf")};
  ASSERT_TRUE(table().ModifyColumnFamilies(drop).ok());
  ASSERT_TRUE(table().ModifyColumnFamilies(create).ok());
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf2", "q", 1000, "other")));
  Put("r", "cf", "q2", 1000, "new");
  cluster_.Compact();
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q2", 1000, "new"),
                                        C("cf2", "q", 1000, "other")));
}

TEST_F(ClusterTest, DropRowRangeThroughTheCluster) {
  for (const char* k : {"user#1", "user#2", "user$", "users", "x"}) {
    Put(k, "cf", "q", 1000, "v");
  }
  ASSERT_TRUE(cluster_.DropRowRange("t", "user#").ok());
  EXPECT_THAT(Keys(Read()), ElementsAre("user$", "users", "x"));
  ASSERT_TRUE(cluster_.DropRowRange("t", "").ok());
  EXPECT_THAT(Read(), IsEmpty());
}

// ================================================================ Tables

TEST_F(ClusterTest, CreateTableValidatesTheId) {
  for (const std::string& id :
       {std::string(""), std::string("-a"), std::string(".a"),
        std::string("a b"), std::string("a/b"), std::string("é"),
        std::string(51, 'a')}) {
    Status s = CreateTable(id, {});
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << id;
    EXPECT_THAT(s.message(), HasSubstr("table_id"));
  }
  for (const std::string& id : {std::string("_a"), std::string("a-b.c_D9"),
                                std::string("0"), std::string(50, 'a')}) {
    EXPECT_TRUE(CreateTable(id, {}).ok()) << id;
  }
}

TEST_F(ClusterTest, CreateTableValidatesFamilies) {
  Status s = CreateTable("x", {CreateFamily("ok"), CreateFamily("b@d")}, {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("b@d"));
  s = CreateTable("x", {CreateFamily("dup"), CreateFamily("dup")});
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  s = CreateTable("x", {CreateFamily("f", GcRule::MaxVersions(0))}, {});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("max_num_versions"));
  EXPECT_THAT(cluster_.ListTables(), ElementsAre("t"));
}

TEST_F(ClusterTest, CreateTableRejectsOversizedSplitKeys) {
  Status s = CreateTable("x", {}, {"a", std::string(kMaxRowKeyBytes + 1, 'k')});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("initial_splits[1]"));
  EXPECT_FALSE(cluster_.GetTable("x").ok());
}

TEST_F(ClusterTest, CreateTableTwiceIsAlreadyExists) {
  Put("r", "cf", "q", 1000, "v");
  Status s = CreateTable("t", {});
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_THAT(ReadRow("r"), ElementsAre(C("cf", "q", 1000, "v")));
}

TEST_F(ClusterTest, ListTablesIsSorted) {
  for (const char* id : {"zeta", "Alpha", "beta", "_x", "9"}) {
    ASSERT_TRUE(CreateTable(id, {}).ok());
  }
  EXPECT_THAT(cluster_.ListTables(),
              ElementsAre("9", "Alpha", "_x", "beta", "t", "zeta"));
}

TEST_F(ClusterTest, DeleteTable) {
  Put("r", "cf", "q", 1000, "v");
  EXPECT_EQ(cluster_.DeleteTable("missing").code(), StatusCode::kNotFound);
  ASSERT_TRUE(cluster_.DeleteTable("t").ok());
  EXPECT_EQ(cluster_.GetTable("t").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(cluster_.DeleteTable("t").code(), StatusCode::kNotFound);
  EXPECT_THAT(cluster_.ListTables(), IsEmpty());
  ASSERT_TRUE(CreateTable("t", {CreateFamily("cf")}).ok());
  EXPECT_THAT(Read(), IsEmpty());
}

TEST_F(ClusterTest, AnInstanceHoldsAtMost1000Tables) {
  for (int i = 1; i < kMaxTablesPerInstance; ++i) {
    ASSERT_TRUE(CreateTable("t" + std::to_string(i), {}).ok()) << i;
  }
  Status s = CreateTable("one_too_many", {});
  EXPECT_EQ(s.code(), StatusCode::kResourceExhausted);
  EXPECT_THAT(s.message(), HasSubstr("1000"));
  ASSERT_TRUE(cluster_.DeleteTable("t1").ok());
  EXPECT_TRUE(CreateTable("one_too_many", {}).ok());
}

TEST_F(ClusterTest, TransactionsIgnoreDataOfADroppedFamily) {
  Put("r", "cf", "q", 1000, "old");
  const std::vector<FamilyModification> recreate = {DropFamily("cf"),
                                                    CreateFamily("cf")};
  ASSERT_TRUE(table().ModifyColumnFamilies(recreate).ok());
  const std::vector<Mutation> if_false = {Set("cf2", "seen", 1000, "empty")};
  Result<bool> matched =
      cluster_.CheckAndMutateRow("t", "r", nullptr, {}, if_false);
  ASSERT_TRUE(matched.ok());
  EXPECT_FALSE(*matched);
  const std::vector<ReadModifyWriteRule> rules = {
      {"cf", "q", ReadModifyWriteRule::Kind::kAppend, "+new", 0}};
  auto r = cluster_.ReadModifyWriteRow("t", "r", rules);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].value, "+new");
  EXPECT_EQ((*r)[0].timestamp_micros, kStartMicros);
}

TEST_F(ClusterTest, TablesAreIndependent) {
  ASSERT_TRUE(CreateTable("u", {CreateFamily("cf")}).ok());
  Put("r", "cf", "q", 1000, "in t");
  Put("r", "cf", "q", 1000, "in u", "u");
  ASSERT_TRUE(cluster_.DropRowRange("t", "").ok());
  EXPECT_THAT(Read(), IsEmpty());
  EXPECT_THAT(ReadRow("r", "u"), ElementsAre(C("cf", "q", 1000, "in u")));
  const Cluster& const_cluster = cluster_;
  ASSERT_TRUE(const_cluster.GetTable("u").ok());
  EXPECT_EQ((*const_cluster.GetTable("u"))->id(), "u");
}

// ---- MutationList (the mutations of a CommitRecord) ----

std::string ValueOf(const Mutation& m) { return std::get<SetCell>(m).value; }

TEST(MutationListTest, HoldsOneMutationInlineAndMoreInOrder) {
  MutationList list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(std::span<const Mutation>(list).size(), 0u);
  list.push_back(SetCell{"cf", "a", 1, std::string(50, 'a')});
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(ValueOf(list[0]), std::string(50, 'a'));
  list.push_back(DeleteFromFamily{"cf2"});
  list.push_back(SetCell{"cf", "c", 3, "c"});
  ASSERT_EQ(list.size(), 3u);
  const std::span<const Mutation> view = list;
  ASSERT_EQ(view.size(), 3u);
  EXPECT_EQ(ValueOf(view[0]), std::string(50, 'a'));
  EXPECT_EQ(std::get<DeleteFromFamily>(view[1]).family, "cf2");
  EXPECT_EQ(ValueOf(view[2]), "c");
  int n = 0;
  for (const Mutation& m : list) n += static_cast<int>(m.index()) + 1;
  EXPECT_EQ(n, 1 + 3 + 1);
}

TEST(MutationListTest, AssignCopyAndMove) {
  const std::vector<Mutation> one = {SetCell{"cf", "q", 1, "v"}};
  const std::vector<Mutation> two = {SetCell{"cf", "q", 1, "x"},
                                     DeleteFromRow{}};
  MutationList list;
  list.assign(two.begin(), two.end());
  ASSERT_EQ(list.size(), 2u);
  list.assign(one.begin(), one.end());
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(ValueOf(list[0]), "v");
  list.assign(one.end(), one.end());
  EXPECT_TRUE(list.empty());

  list.assign(one.begin(), one.end());
  MutationList copy = list;
  ASSERT_EQ(copy.size(), 1u);
  EXPECT_EQ(ValueOf(copy[0]), "v");
  MutationList moved = std::move(list);
  ASSERT_EQ(moved.size(), 1u);
  EXPECT_EQ(ValueOf(moved[0]), "v");
  EXPECT_TRUE(list.empty());  // NOLINT(bugprone-use-after-move)
  MutationList many;
  many.assign(two.begin(), two.end());
  moved = std::move(many);
  ASSERT_EQ(moved.size(), 2u);
  EXPECT_EQ(ValueOf(moved[0]), "x");
  EXPECT_TRUE(many.empty());  // NOLINT(bugprone-use-after-move)
  copy = moved;
  ASSERT_EQ(copy.size(), 2u);
  EXPECT_TRUE(std::holds_alternative<DeleteFromRow>(copy[1]));
}

TEST(MutationListTest, RowCommitRecordsCarryResolvedMutations) {
  // What a cluster reports for a one-SetCell and a two-mutation commit.
  struct Outbox : CommitObserver {
    void OnCommit(const CommitRecord& record) override {
      records.push_back(record);
    }
    std::vector<CommitRecord> records;
  } outbox;
  sim::ManualClock clock(test_util::kStartTime);
  const std::vector<FamilyModification> families = {CreateFamily("cf")};
  Cluster c(clock, sim::Rng(1), ClusterOptions{});
  ASSERT_TRUE(c.CreateTable("t", families, {}).ok());
  c.set_commit_observer(&outbox);
  const std::vector<Mutation> one = {Set("cf", "q", -1, "v")};
  ASSERT_TRUE(c.MutateRow("t", "r1", one).ok());
  const std::vector<Mutation> two = {Set("cf", "q", 5000, "w"), DelFam("cf")};
  ASSERT_TRUE(c.MutateRow("t", "r2", two).ok());
  ASSERT_EQ(outbox.records.size(), 2u);
  const CommitRecord& first = outbox.records[0];
  EXPECT_EQ(first.row_key, "r1");
  ASSERT_EQ(first.mutations.size(), 1u);
  EXPECT_EQ(std::get<SetCell>(first.mutations[0]).timestamp_micros,
            kStartMicros);
  ASSERT_EQ(outbox.records[1].mutations.size(), 2u);
  EXPECT_EQ(std::get<SetCell>(outbox.records[1].mutations[0]).timestamp_micros,
            5000);

  // Applied elsewhere, they give the same row contents.
  Cluster peer(clock, sim::Rng(2), ClusterOptions{.origin = 1, .table = {}});
  ASSERT_TRUE(peer.CreateTable("t", families, {}).ok());
  // As one batch, with a record of a table the peer lacks in between: that
  // changes nothing.
  CommitRecord elsewhere = outbox.records[0];
  elsewhere.table = "absent";
  const std::vector<const CommitRecord*> batch = {
      &outbox.records[0], &elsewhere, &outbox.records[1]};
  std::vector<size_t> applied;
  peer.ApplyReplicatedBatch(batch, [&](size_t i) { applied.push_back(i); });
  EXPECT_EQ(applied, (std::vector<size_t>{0, 1, 2}));
  sim::Fingerprint a, b;
  c.AddContents(&a);
  peer.AddContents(&b);
  EXPECT_EQ(a.Hex(), b.Hex());
}

}  // namespace
}  // namespace btsim::cluster
