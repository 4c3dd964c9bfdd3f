// Aggregate column families: AddToCell and MergeToCell combine into cells
// (Sum, Min, Max over 64-bit big-endian integers), the refusals Bigtable
// makes, deletes covering contributions, compaction folding them, and
// idempotent writes.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cluster/aggregate.h"
#include "tests/cluster/engine_test_util.h"

namespace btsim::cluster {
namespace {

using test_util::C;
using test_util::Cell;
using test_util::CreateFamily;
using test_util::DelCol;
using test_util::kStartMicros;
using test_util::Set;

Mutation Add(std::string family, std::string qualifier, int64_t ts,
             int64_t input) {
  return AddToCell{std::move(family), std::move(qualifier),
                   TimestampFromMicros(ts), EncodeInt64(input)};
}

FamilyModification AggregateFamily(std::string name, Aggregate aggregate,
                                   GcRule rule = GcRule::None()) {
  FamilyModification m = CreateFamily(std::move(name), std::move(rule));
  m.aggregate = aggregate;
  return m;
}

class AggregateTest : public test_util::ClusterTest {
 protected:
  void SetUp() override {
    ClusterTest::SetUp();
    ASSERT_TRUE(CreateTable("agg", {AggregateFamily("sum", Aggregate::kSum),
                                    AggregateFamily("min", Aggregate::kMin),
                                    AggregateFamily("max", Aggregate::kMax),
                                    CreateFamily("plain")})
                    .ok());
  }
  Status Write(std::vector<Mutation> m) { return Mutate("r", m, "agg"); }
  std::vector<Cell> Row() { return ReadRow("r", "agg"); }
};

TEST(AggregateValuesTest, EncodeDecodeAndCombine) {
  EXPECT_EQ(EncodeInt64(1), std::string("\0\0\0\0\0\0\0\1", 8));
  EXPECT_EQ(DecodeInt64(EncodeInt64(-5)), -5);
  EXPECT_EQ(Combine(Aggregate::kSum, INT64_MAX, 1), INT64_MIN);  // wraps
  EXPECT_EQ(Combine(Aggregate::kMin, -3, 2), -3);
  EXPECT_EQ(Combine(Aggregate::kMax, -3, 2), 2);
}

TEST_F(AggregateTest, InputsToOneCellCombine) {
  const int64_t t = kStartMicros;
  for (int64_t v : {5, -2, 9}) {
    ASSERT_TRUE(Write({Add("sum", "c", t, v), Add("min", "c", t, v),
                       Add("max", "c", t, v)})
                    .ok());
  }
  EXPECT_EQ(Row(), (std::vector<Cell>{C("max", "c", t, EncodeInt64(9)),
                                      C("min", "c", t, EncodeInt64(-2)),
                                      C("sum", "c", t, EncodeInt64(12))}));
}

TEST_F(AggregateTest, TimestampsAreSeparateCells) {
  const int64_t t = kStartMicros;
  ASSERT_TRUE(Write({Add("sum", "c", t, 1), Add("sum", "c", t + 1000, 2),
                     Add("sum", "c", t, 3)})
                  .ok());
  EXPECT_EQ(Row(), (std::vector<Cell>{C("sum", "c", t + 1000, EncodeInt64(2)),
                                      C("sum", "c", t, EncodeInt64(4))}));
}

TEST_F(AggregateTest, MergeToCellCombinesLikeAddToCell) {
  const int64_t t = kStartMicros;
  ASSERT_TRUE(Write({Add("max", "c", t, 4)}).ok());
  ASSERT_TRUE(Write({AddToCell{"max", "c", TimestampFromMicros(t),
                               EncodeInt64(7), /*merge=*/true}})
                  .ok());
  EXPECT_EQ(Row(), (std::vector<Cell>{C("max", "c", t, EncodeInt64(7))}));
}

TEST_F(AggregateTest, DeleteCoversEarlierContributionsOnly) {
  const int64_t t = kStartMicros;
  ASSERT_TRUE(Write({Add("sum", "c", t, 10)}).ok());
  ASSERT_TRUE(Write({DelCol("sum", "c")}).ok());
  EXPECT_TRUE(Row().empty());
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(Write({Add("sum", "c", t, 3)}).ok());
  EXPECT_EQ(Row(), (std::vector<Cell>{C("sum", "c", t, EncodeInt64(3))}));
  // In one request the delete erases the add before it, not the one after.
  clock_.Advance(std::chrono::milliseconds(1));
  ASSERT_TRUE(Write({Add("sum", "c", t, 100), DelCol("sum", "c"),
                     Add("sum", "c", t, 7)})
                  .ok());
  EXPECT_EQ(Row(), (std::vector<Cell>{C("sum", "c", t, EncodeInt64(7))}));
}

TEST_F(AggregateTest, CompactionFoldsContributionsAndKeepsTheValue) {
  const int64_t t = kStartMicros;
  for (int i = 1; i <= 50; ++i) {
    ASSERT_TRUE(Write({Add("sum", "c", t, i)}).ok());
    clock_.Advance(std::chrono::milliseconds(1));
  }
  const int64_t before = table("agg").Stats().bytes;
  cluster_.Compact();
  EXPECT_LT(table("agg").Stats().bytes, before / 5);
  EXPECT_EQ(Row(), (std::vector<Cell>{C("sum", "c", t, EncodeInt64(1275))}));
  ASSERT_TRUE(Write({Add("sum", "c", t, 1)}).ok());
  EXPECT_EQ(Row(), (std::vector<Cell>{C("sum", "c", t, EncodeInt64(1276))}));
}

TEST_F(AggregateTest, ServerTimestampResolvesToTheCommitTime) {
  ASSERT_TRUE(
      Write({AddToCell{"sum", "c", kServerTimestamp, EncodeInt64(2)}}).ok());
  const std::vector<Cell> row = Row();
  ASSERT_EQ(row.size(), 1u);
  EXPECT_EQ(row[0].ts, kStartMicros);
}

TEST_F(AggregateTest, PredicatesSeeTheCombinedValue) {
  const int64_t t = kStartMicros;
  ASSERT_TRUE(Write({Add("sum", "c", t, 1), Add("sum", "c", t, 1)}).ok());
  Filter value_is_two = Filter::ValueRange(Bound::Closed(EncodeInt64(2)),
                                           Bound::Closed(EncodeInt64(2)));
  const std::vector<Mutation> add = {Add("sum", "c", t, 10)};
  Result<bool> matched =
      cluster_.CheckAndMutateRow("agg", "r", &value_is_two, add, {});
  ASSERT_TRUE(matched.ok()) << matched.status().ToString();
  EXPECT_TRUE(*matched);
  EXPECT_EQ(Row(), (std::vector<Cell>{C("sum", "c", t, EncodeInt64(12))}));
}

TEST_F(AggregateTest, RefusesWritesOfTheWrongKind) {
  const int64_t t = kStartMicros;
  Status s = Write({Set("sum", "c", t, "x")});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("mutations[0].set_cell.family_name"),
            std::string::npos)
      << s.ToString();
  s = Write({Add("plain", "c", t, 1)});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("mutations[0].add_to_cell.family_name"),
            std::string::npos)
      << s.ToString();
  s = Write({AddToCell{"sum", "c", TimestampFromMicros(t), "abc"}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("add_to_cell.input"), std::string::npos);
  s = Write({Add("nope", "c", t, 1)});
  EXPECT_EQ(s.code(), StatusCode::kNotFound);
  const std::vector<ReadModifyWriteRule> increment = {ReadModifyWriteRule{
      "sum", "c", ReadModifyWriteRule::Kind::kIncrement, "", 1}};
  auto rmw = cluster_.ReadModifyWriteRow("agg", "r", increment);
  EXPECT_EQ(rmw.status().code(), StatusCode::kInvalidArgument);
  EXPECT_NE(rmw.status().message().find("rules[0].family_name"),
            std::string::npos);
  EXPECT_TRUE(Row().empty());
}

TEST_F(AggregateTest, GcRulesOnAggregateFamiliesAreUnimplemented) {
  Status s = CreateTable(
      "gc", {AggregateFamily("s", Aggregate::kSum, GcRule::MaxVersions(1))});
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("create.gc_rule"), std::string::npos);
  s = cluster_.ModifyColumnFamilies(
      "agg", {{test_util::UpdateFamily("sum", GcRule::MaxVersions(1))}});
  EXPECT_EQ(s.code(), StatusCode::kUnimplemented);
  EXPECT_NE(s.message().find("update.gc_rule"), std::string::npos);
  auto families = table("agg").Families();
  ASSERT_EQ(families.size(), 4u);
  EXPECT_EQ(families[0].name, "max");
  EXPECT_EQ(families[0].aggregate, Aggregate::kMax);
  EXPECT_EQ(families[2].aggregate, Aggregate::kNone);
}

TEST_F(AggregateTest, AReplayWithTheSameTokenAppliesOnce) {
  const int64_t t = kStartMicros;
  const Idempotency token{"token-0001", TimestampOf(clock_.Now())};
  const std::vector<Mutation> add = {Add("sum", "c", t, 5)};
  ASSERT_TRUE(cluster_.MutateRow("agg", "r", add, token).ok());
  clock_.Advance(std::chrono::seconds(30));
  ASSERT_TRUE(cluster_.MutateRow("agg", "r", add, token).ok());
  EXPECT_EQ(Row(), (std::vector<Cell>{C("sum", "c", t, EncodeInt64(5))}));
  // In MutateRows too, entry by entry.
  std::vector<RowMutations> rows = {{"r", add, token},
                                    {"r", add, {"token-0002", {}}}};
  auto statuses = cluster_.MutateRows("agg", rows);
  ASSERT_TRUE(statuses.ok());
  EXPECT_TRUE((*statuses)[0].ok());
  EXPECT_TRUE((*statuses)[1].ok());
  EXPECT_EQ(Row(), (std::vector<Cell>{C("sum", "c", t, EncodeInt64(10))}));
  // Two entries of one batch (one commit version) both count.
  std::vector<RowMutations> twice = {{"r", add, {}}, {"r", add, {}}};
  statuses = cluster_.MutateRows("agg", twice);
  ASSERT_TRUE(statuses.ok());
  EXPECT_EQ(Row(), (std::vector<Cell>{C("sum", "c", t, EncodeInt64(20))}));
  // Past the window the token is forgotten, and an old first attempt is
  // refused.
  clock_.Advance(std::chrono::minutes(16));
  Status s = cluster_.MutateRow("agg", "r", add, token);
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_NE(s.message().find("idempotency.start_time"), std::string::npos);
  ASSERT_TRUE(
      cluster_.MutateRow("agg", "r", add, {token.token, Timestamp{}}).ok());
  EXPECT_EQ(Row(), (std::vector<Cell>{C("sum", "c", t, EncodeInt64(25))}));
  s = cluster_.MutateRow("agg", "r", add, {"short", Timestamp{}});
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("idempotency.token"), std::string::npos);
}

}  // namespace
}  // namespace btsim::cluster
