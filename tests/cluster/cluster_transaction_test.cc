// Tests of single-row transactions through Cluster: CheckAndMutateRow and
// ReadModifyWriteRow (append, increment, timestamps, validation).
#include "cluster/cluster.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "cluster/filter.h"
#include "cluster/limits.h"
#include "tests/cluster/engine_test_util.h"

namespace btsim::cluster {
namespace {

using test_util::C;
using test_util::Cell;
using test_util::DelCol;
using test_util::DelFam;
using test_util::DelRow;
using test_util::kHour;
using test_util::kMinute;
using test_util::kStartMicros;
using test_util::Set;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ClusterTest = test_util::ClusterTest;

using std::chrono::minutes;

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
    out.push_back(C(m.family, m.qualifier, Micros(m.timestamp), m.value));
  }
  return out;
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

}  // namespace
}  // namespace btsim::cluster
