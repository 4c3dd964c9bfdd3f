// Tests of writes through Cluster: commit versions and server time, mutation
// semantics, validation and limits; and MutationList, a CommitRecord's list.
#include "cluster/cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "cluster/commit_record.h"
#include "cluster/limits.h"
#include "tests/cluster/engine_test_util.h"

namespace btsim::cluster {
namespace {

using test_util::C;
using test_util::CreateFamily;
using test_util::DelCol;
using test_util::DelFam;
using test_util::DelRow;
using test_util::Keys;
using test_util::kHour;
using test_util::kStartMicros;
using test_util::Row;
using test_util::Set;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ClusterTest = test_util::ClusterTest;

using std::chrono::hours;
using std::chrono::nanoseconds;

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

// ---- MutationList (the mutations of a CommitRecord) ----

std::string ValueOf(const Mutation& m) { return std::get<SetCell>(m).value; }

TEST(MutationListTest, HoldsOneMutationInlineAndMoreInOrder) {
  MutationList list;
  EXPECT_TRUE(list.empty());
  EXPECT_EQ(std::span<const Mutation>(list).size(), 0u);
  list.push_back(
      SetCell{"cf", "a", TimestampFromMicros(1), std::string(50, 'a')});
  ASSERT_EQ(list.size(), 1u);
  EXPECT_EQ(ValueOf(list[0]), std::string(50, 'a'));
  list.push_back(DeleteFromFamily{"cf2"});
  list.push_back(SetCell{"cf", "c", TimestampFromMicros(3), "c"});
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
  const std::vector<Mutation> one = {
      SetCell{"cf", "q", TimestampFromMicros(1), "v"}};
  const std::vector<Mutation> two = {
      SetCell{"cf", "q", TimestampFromMicros(1), "x"}, DeleteFromRow{}};
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
  EXPECT_EQ(Micros(std::get<SetCell>(first.mutations[0]).timestamp),
            kStartMicros);
  ASSERT_EQ(outbox.records[1].mutations.size(), 2u);
  EXPECT_EQ(Micros(std::get<SetCell>(outbox.records[1].mutations[0]).timestamp),
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
