// Tests of composed filters: Chain, Interleave, Condition and Sink, and the
// validation of filter trees (sinks, labels, fan-out).
#include "cluster/filter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

#include "cluster/cell_view.h"
#include "sim/rng.h"
#include "tests/cluster/filter_test_util.h"

namespace btsim::cluster {
namespace {

using filter_test_util::Eval;
using filter_test_util::ExpectInvalid;
using filter_test_util::kAll;
using filter_test_util::List;
using filter_test_util::Ok;
using filter_test_util::Ptr;
using filter_test_util::Row;
using filter_test_util::Sample;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// ---- Chain ------------------------------------------------------------------

TEST(FilterTest, ChainComposesSequentially) {
  Filter f = Filter::Chain(List(Ok(Filter::FamilyNameRegex("A")),
                                Ok(Filter::CellsPerColumnLimit(1)),
                                Filter::StripValue()));
  EXPECT_THAT(Eval(f, Sample()), ElementsAre("A:A@3000=", "A:B@2000="));
}

TEST(FilterTest, ChainOrderMatters) {
  Filter limit_then_family = Filter::Chain(
      List(Ok(Filter::CellsPerRowLimit(1)), Ok(Filter::FamilyNameRegex("B"))));
  Filter family_then_limit = Filter::Chain(
      List(Ok(Filter::FamilyNameRegex("B")), Ok(Filter::CellsPerRowLimit(1))));
  EXPECT_THAT(Eval(limit_then_family, Sample()), IsEmpty());
  EXPECT_THAT(Eval(family_then_limit, Sample()), ElementsAre("B:A@5000=ba5"));
}

TEST(FilterTest, ChainStopsEarlyWhenEmpty) {
  // A row_sample after an empty stage is never evaluated: the rng is untouched.
  Filter f =
      Filter::Chain(List(Filter::BlockAll(), Ok(Filter::RowSample(0.5))));
  sim::Rng rng(99);
  std::vector<CellView> out;
  f.Apply(Sample().key(), Sample().views(), rng, &out);
  EXPECT_THAT(out, IsEmpty());
  EXPECT_EQ(rng.Next(), sim::Rng(99).Next());
}

TEST(FilterTest, EmptyChainPassesAndEmptyInterleaveBlocks) {
  EXPECT_EQ(Eval(Filter::Chain({}), Sample()), kAll);
  EXPECT_THAT(Eval(Filter::Interleave({}), Sample()), IsEmpty());
}

// ---- Interleave -------------------------------------------------------------

TEST(FilterTest, InterleaveOfTwoPassAllDuplicatesEveryCell) {
  Filter f = Filter::Interleave(List(Filter::PassAll(), Filter::PassAll()));
  EXPECT_THAT(
      Eval(f, Sample()),
      ElementsAre("A:A@3000=a3", "A:A@3000=a3", "A:A@1000=a1", "A:A@1000=a1",
                  "A:B@2000=b2", "A:B@2000=b2", "B:A@5000=ba5", "B:A@5000=ba5",
                  "B:C@4000=", "B:C@4000="));
}

TEST(FilterTest, InterleaveMergesIntoCanonicalOrder) {
  Filter f = Filter::Interleave(
      List(Ok(Filter::FamilyNameRegex("B")), Ok(Filter::ValueRegex("a1")),
           Ok(Filter::TimestampRange(TimestampFromMicros(3000),
                                     TimestampFromMicros(0)))));
  EXPECT_THAT(Eval(f, Sample()),
              ElementsAre("A:A@3000=a3", "A:A@1000=a1", "B:A@5000=ba5",
                          "B:A@5000=ba5", "B:C@4000=", "B:C@4000="));
}

TEST(FilterTest, InterleaveKeepsChildOrderForEqualCells) {
  Filter f = Filter::Interleave(
      List(Filter::ApplyLabel("x"), Filter::ApplyLabel("y")));
  ASSERT_TRUE(f.Validate().ok());
  const auto out = Eval(f, Sample());
  ASSERT_EQ(out.size(), 10u);
  for (size_t i = 0; i < out.size(); i += 2) {
    EXPECT_THAT(out[i], ::testing::EndsWith("[x]"));
    EXPECT_THAT(out[i + 1], ::testing::EndsWith("[y]"));
  }
}

TEST(FilterTest, CellsPerColumnLimitCountsInterleavedDuplicates) {
  Filter f = Filter::Chain(
      List(Filter::Interleave(List(Filter::PassAll(), Filter::PassAll())),
           Ok(Filter::CellsPerColumnLimit(1))));
  EXPECT_THAT(Eval(f, Sample()), ElementsAre("A:A@3000=a3", "A:B@2000=b2",
                                             "B:A@5000=ba5", "B:C@4000="));
}

TEST(FilterTest, NestedChainInsideInterleaveInsideChain) {
  Filter f = Filter::Chain(
      List(Ok(Filter::FamilyNameRegex("A")),
           Filter::Interleave(
               List(Filter::Chain(List(Ok(Filter::ColumnQualifierRegex("A")),
                                       Ok(Filter::CellsPerRowLimit(1)),
                                       Filter::ApplyLabel("first"))),
                    Filter::StripValue())),
           Ok(Filter::CellsPerRowOffset(1))));
  ASSERT_TRUE(f.Validate().ok());
  EXPECT_THAT(Eval(f, Sample()),
              ElementsAre("A:A@3000=", "A:A@1000=", "A:B@2000="));
}

// ---- Condition --------------------------------------------------------------

TEST(FilterTest, ConditionTrueBranchRunsOnTheInputRow) {
  Filter f = Filter::Condition(Ok(Filter::ColumnQualifierRegex("C")),
                               Ptr(Filter::PassAll()), Ptr(Filter::BlockAll()));
  EXPECT_EQ(Eval(f, Sample()), kAll);
}

TEST(FilterTest, ConditionFalseBranch) {
  Filter f = Filter::Condition(Ok(Filter::ColumnQualifierRegex("Z")),
                               Ptr(Filter::BlockAll()),
                               Ptr(Ok(Filter::FamilyNameRegex("B"))));
  EXPECT_THAT(Eval(f, Sample()), ElementsAre("B:A@5000=ba5", "B:C@4000="));
}

TEST(FilterTest, ConditionWithMissingBranchesOutputsNothing) {
  Filter matched_no_true =
      Filter::Condition(Filter::PassAll(), nullptr, Ptr(Filter::PassAll()));
  Filter unmatched_no_false =
      Filter::Condition(Filter::BlockAll(), Ptr(Filter::PassAll()), nullptr);
  Filter only_true =
      Filter::Condition(Filter::PassAll(), Ptr(Filter::PassAll()), nullptr);
  EXPECT_THAT(Eval(matched_no_true, Sample()), IsEmpty());
  EXPECT_THAT(Eval(unmatched_no_false, Sample()), IsEmpty());
  EXPECT_EQ(Eval(only_true, Sample()), kAll);
}

TEST(FilterTest, ConditionPredicateLabelsDoNotLeak) {
  Filter f = Filter::Condition(Filter::ApplyLabel("pred"),
                               Ptr(Filter::PassAll()), nullptr);
  ASSERT_TRUE(f.Validate().ok());
  EXPECT_EQ(Eval(f, Sample()), kAll);
}

TEST(FilterTest, ConditionInsideChainSeesChainOutput) {
  Filter f = Filter::Chain(
      List(Ok(Filter::FamilyNameRegex("A")),
           Filter::Condition(Ok(Filter::ColumnQualifierRegex("B")),
                             Ptr(Ok(Filter::CellsPerRowLimit(1))),
                             Ptr(Filter::BlockAll())),
           Filter::ApplyLabel("l")));
  ASSERT_TRUE(f.Validate().ok());
  EXPECT_THAT(Eval(f, Sample()), ElementsAre("A:A@3000=a3[l]"));
}

// ---- Sink -------------------------------------------------------------------

TEST(FilterTest, SinkDocumentationExample) {
  Row row(
      "r",
      {{"A", "A", 1000, "w"}, {"A", "B", 2000, "x"}, {"B", "B", 4000, "z"}});
  Filter f = Filter::Chain(
      List(Ok(Filter::FamilyNameRegex("A")),
           Filter::Interleave(List(
               Filter::PassAll(),
               Filter::Chain(List(Filter::ApplyLabel("foo"), Filter::Sink())))),
           Ok(Filter::ColumnQualifierRegex("B"))));
  ASSERT_TRUE(f.Validate().ok());
  EXPECT_THAT(Eval(f, row),
              ElementsAre("A:A@1000=w[foo]", "A:B@2000=x[foo]", "A:B@2000=x"));
}

TEST(FilterTest, SinkAtRootOutputsItsInput) {
  EXPECT_EQ(Eval(Filter::Sink(), Sample()), kAll);
}

TEST(FilterTest, SinkOutputsNothingToItsParent) {
  Filter f = Filter::Chain(List(Ok(Filter::FamilyNameRegex("B")),
                                Filter::Sink(), Filter::ApplyLabel("never")));
  EXPECT_THAT(Eval(f, Sample()), ElementsAre("B:A@5000=ba5", "B:C@4000="));
}

TEST(FilterTest, SinkBypassesLaterBlockAll) {
  Filter f = Filter::Chain(List(
      Filter::Interleave(List(Ok(Filter::ValueRegex("a1")), Filter::Sink())),
      Filter::BlockAll()));
  EXPECT_EQ(Eval(f, Sample()), kAll);
}

TEST(FilterTest, SinkOutputMergesIntoCanonicalOrder) {
  Filter f = Filter::Interleave(List(
      Filter::Chain(List(Ok(Filter::FamilyNameRegex("B")), Filter::Sink())),
      Ok(Filter::FamilyNameRegex("A"))));
  EXPECT_EQ(Eval(f, Sample()), kAll);
}

TEST(FilterTest, SinkInUnvalidatedPredicateNeverReachesOutput) {
  Filter f = Filter::Condition(
      Filter::Chain(List(Ok(Filter::FamilyNameRegex("A")), Filter::Sink())),
      Ptr(Filter::PassAll()), Ptr(Filter::BlockAll()));
  EXPECT_FALSE(f.Validate().ok());
  EXPECT_THAT(Eval(f, Sample()), IsEmpty());  // the predicate output nothing
}

// ---- Validate ---------------------------------------------------------------

TEST(FilterTest, SinkInsideConditionIsRejected) {
  const char* kMessage = "sink cannot be used inside a condition filter";
  ExpectInvalid(
      Filter::Condition(Filter::Sink(), Ptr(Filter::PassAll()), nullptr)
          .Validate(),
      kMessage);
  ExpectInvalid(
      Filter::Condition(Filter::PassAll(), Ptr(Filter::Sink()), nullptr)
          .Validate(),
      kMessage);
  ExpectInvalid(
      Filter::Condition(Filter::PassAll(), nullptr, Ptr(Filter::Sink()))
          .Validate(),
      kMessage);
}

TEST(FilterTest, SinkDeepInsideConditionIsRejected) {
  Filter f = Filter::Chain(List(Filter::Condition(
      Filter::PassAll(),
      Ptr(Filter::Interleave(
          List(Filter::PassAll(), Filter::Chain(List(Filter::Sink()))))),
      nullptr)));
  ExpectInvalid(f.Validate(), "sink cannot be used inside a condition");
}

TEST(FilterTest, SinkOutsideConditionIsAllowed) {
  Filter f = Filter::Chain(List(
      Filter::Condition(Filter::PassAll(), Ptr(Filter::PassAll()), nullptr),
      Filter::Sink()));
  EXPECT_TRUE(f.Validate().ok());
}

TEST(FilterTest, TwoLabelsInAChainAreRejected) {
  Filter f =
      Filter::Chain(List(Filter::ApplyLabel("a"), Filter::ApplyLabel("b")));
  ExpectInvalid(f.Validate(), "apply_label_transformer");
  ExpectInvalid(f.Validate(), "at most one");
}

TEST(FilterTest, TwoLabelsInNestedChainsAreRejected) {
  Filter f = Filter::Chain(
      List(Filter::ApplyLabel("a"),
           Filter::Chain(List(Filter::PassAll(), Filter::ApplyLabel("b")))));
  ExpectInvalid(f.Validate(), "apply_label_transformer");
}

TEST(FilterTest, LabelThenLabelThroughInterleaveIsRejected) {
  Filter f = Filter::Chain(
      List(Filter::Interleave(List(Filter::ApplyLabel("a"), Filter::PassAll())),
           Filter::ApplyLabel("b")));
  ExpectInvalid(f.Validate(), "apply_label_transformer");
}

TEST(FilterTest, LabelThenConditionTrueBranchLabelIsRejected) {
  Filter f = Filter::Chain(
      List(Filter::ApplyLabel("a"),
           Filter::Condition(Filter::PassAll(), Ptr(Filter::ApplyLabel("b")),
                             nullptr)));
  ExpectInvalid(f.Validate(), "apply_label_transformer");
}

TEST(FilterTest, LabelInPredicateDoesNotCountTowardsTheChain) {
  Filter f =
      Filter::Chain(List(Filter::Condition(Filter::ApplyLabel("p"),
                                           Ptr(Filter::PassAll()), nullptr),
                         Filter::ApplyLabel("b")));
  EXPECT_TRUE(f.Validate().ok());
}

TEST(FilterTest, LabelsInTwoInterleaveBranchesAreAllowed) {
  Filter f = Filter::Interleave(
      List(Filter::ApplyLabel("a"),
           Filter::Chain(List(Filter::StripValue(), Filter::ApplyLabel("b")))));
  EXPECT_TRUE(f.Validate().ok());
  Filter g = Filter::Condition(Filter::PassAll(), Ptr(Filter::ApplyLabel("t")),
                               Ptr(Filter::ApplyLabel("f")));
  EXPECT_TRUE(Filter::Chain(List(std::move(g))).Validate().ok());
}

TEST(FilterTest, LabelStringIsValidated) {
  EXPECT_TRUE(Filter::ApplyLabel("abc-123-xyz-789").Validate().ok());  // 15
  for (const char* bad :
       {"", "Upper", "has space", "under_score", "sixteen-chars-xx"}) {
    ExpectInvalid(Filter::ApplyLabel(bad).Validate(),
                  "apply_label_transformer");
  }
  ExpectInvalid(
      Filter::Interleave(List(Filter::PassAll(), Filter::ApplyLabel("BAD")))
          .Validate(),
      "apply_label_transformer");
}

Filter DoublingChain(int depth) {
  std::vector<Filter> links;
  for (int i = 0; i < depth; ++i) {
    std::vector<Filter> pair;
    pair.push_back(Filter::PassAll());
    pair.push_back(Filter::PassAll());
    links.push_back(Filter::Interleave(std::move(pair)));
  }
  return Filter::Chain(std::move(links));
}

TEST(FilterFanoutTest, ExponentialInterleaveChainIsRejected) {
  // 2^40 copies of every cell: must be refused, not evaluated.
  Status s = DoublingChain(40).Validate();
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(s.message().find("1024"), std::string::npos) << s.message();
}

TEST(FilterFanoutTest, BombInsideAPredicateIsRejected) {
  Filter f = Filter::Condition(DoublingChain(12), nullptr, nullptr);
  EXPECT_EQ(f.Validate().code(), StatusCode::kInvalidArgument);
}

TEST(FilterFanoutTest, ModestFanoutIsAccepted) {
  // 2^10 = 1024 copies is the documented limit.
  EXPECT_TRUE(DoublingChain(10).Validate().ok());
  EXPECT_EQ(DoublingChain(11).Validate().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace btsim::cluster
