// Tests of the leaf filters (regexes, ranges, limits, labels, sampling) and
// of Filter itself (kind, moves).
#include "cluster/filter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
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
using filter_test_util::Render;
using filter_test_util::Row;
using filter_test_util::Sample;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// ---- Leaf filters -----------------------------------------------------------

TEST(FilterTest, PassAllPassesEverything) {
  EXPECT_EQ(Eval(Filter::PassAll(), Sample()), kAll);
}

TEST(FilterTest, BlockAllPassesNothing) {
  EXPECT_THAT(Eval(Filter::BlockAll(), Sample()), IsEmpty());
}

TEST(FilterTest, EmptyRowOutputsNothing) {
  Row empty("k", {});
  EXPECT_THAT(Eval(Filter::PassAll(), empty), IsEmpty());
}

TEST(FilterTest, StripValueEmptiesEveryValue) {
  EXPECT_THAT(Eval(Filter::StripValue(), Sample()),
              ElementsAre("A:A@3000=", "A:A@1000=", "A:B@2000=", "B:A@5000=",
                          "B:C@4000="));
}

TEST(FilterTest, ApplyLabelPointsIntoTheFilter) {
  Filter f = Filter::ApplyLabel("foo");
  ASSERT_TRUE(f.Validate().ok());
  sim::Rng rng(1);
  std::vector<CellView> out;
  f.Apply(Sample().key(), Sample().views(), rng, &out);
  ASSERT_EQ(out.size(), 5u);
  for (const CellView& c : out) {
    ASSERT_NE(c.label, nullptr);
    EXPECT_EQ(*c.label, "foo");
    EXPECT_EQ(c.label, out[0].label);
  }
}

TEST(FilterTest, OutputViewsPointIntoInput) {
  sim::Rng rng(1);
  std::vector<CellView> out;
  Filter::PassAll().Apply(Sample().key(), Sample().views(), rng, &out);
  ASSERT_EQ(out.size(), 5u);
  EXPECT_EQ(out[0].value.data(), Sample().views()[0].value.data());
}

TEST(FilterTest, ApplyAppendsAfterExistingOutput) {
  Row other("row0", {{"Z", "z", 1000, "z"}});
  sim::Rng rng(1);
  std::vector<CellView> out;
  Filter::PassAll().Apply(other.key(), other.views(), rng, &out);
  Filter f = Filter::Interleave(List(Filter::PassAll(), Filter::PassAll()));
  f.Apply(Sample().key(), Sample().views(), rng, &out);
  ASSERT_EQ(out.size(), 11u);
  EXPECT_EQ(Render(out[0]), "Z:z@1000=z");  // earlier row left untouched
  EXPECT_EQ(Render(out[1]), "A:A@3000=a3");
}

TEST(FilterTest, RowKeyRegexMatchesWholeKey) {
  EXPECT_EQ(Eval(Ok(Filter::RowKeyRegex("row\\d")), Sample()), kAll);
  EXPECT_THAT(Eval(Ok(Filter::RowKeyRegex("row")), Sample()), IsEmpty());
  EXPECT_THAT(Eval(Ok(Filter::RowKeyRegex("ow1")), Sample()), IsEmpty());
}

TEST(FilterTest, FamilyNameRegex) {
  EXPECT_THAT(Eval(Ok(Filter::FamilyNameRegex("B")), Sample()),
              ElementsAre("B:A@5000=ba5", "B:C@4000="));
  EXPECT_EQ(Eval(Ok(Filter::FamilyNameRegex("A|B")), Sample()), kAll);
}

TEST(FilterTest, FamilyNameRegexIsWholeMatch) {
  Row row("r", {{"AB", "q", 1000, "v"}, {"B", "q", 1000, "w"}});
  EXPECT_THAT(Eval(Ok(Filter::FamilyNameRegex("B")), row),
              ElementsAre("B:q@1000=w"));
}

TEST(FilterTest, ColumnQualifierRegex) {
  EXPECT_THAT(Eval(Ok(Filter::ColumnQualifierRegex("A")), Sample()),
              ElementsAre("A:A@3000=a3", "A:A@1000=a1", "B:A@5000=ba5"));
  EXPECT_THAT(Eval(Ok(Filter::ColumnQualifierRegex("[BC]")), Sample()),
              ElementsAre("A:B@2000=b2", "B:C@4000="));
}

TEST(FilterTest, ColumnQualifierRegexSameQualifierInTwoFamilies) {
  Row row("r", {{"A", "x", 1000, "1"}, {"B", "x", 1000, "2"}});
  EXPECT_THAT(Eval(Ok(Filter::ColumnQualifierRegex("x")), row),
              ElementsAre("A:x@1000=1", "B:x@1000=2"));
}

TEST(FilterTest, ValueRegexPartialMatchDoesNotPass) {
  EXPECT_THAT(Eval(Ok(Filter::ValueRegex("a")), Sample()), IsEmpty());
  EXPECT_THAT(Eval(Ok(Filter::ValueRegex("a.")), Sample()),
              ElementsAre("A:A@3000=a3", "A:A@1000=a1"));
}

TEST(FilterTest, EmptyRegexMatchesOnlyEmptyInput) {
  EXPECT_THAT(Eval(Ok(Filter::ValueRegex("")), Sample()),
              ElementsAre("B:C@4000="));
  EXPECT_THAT(Eval(Ok(Filter::RowKeyRegex("")), Sample()), IsEmpty());
}

TEST(FilterTest, ValueRegexIsBinarySafe) {
  const std::string with_nul("x\0y", 3);
  const std::string with_ff("\xff\xfe", 2);
  Row row("r", {{"f", "a", 1000, with_nul},
                {"f", "b", 1000, with_ff},
                {"f", "c", 1000, "plain"}});
  EXPECT_THAT(Eval(Ok(Filter::ValueRegex("\\C*\\x00\\C*")), row),
              ElementsAre("f:a@1000=" + with_nul));
  // Literal bytes in the pattern (Latin-1) match the same raw bytes.
  EXPECT_THAT(Eval(Ok(Filter::ValueRegex(std::string("\xff\\C", 3))), row),
              ElementsAre("f:b@1000=" + with_ff));
  EXPECT_THAT(Eval(Ok(Filter::ValueRegex("\\xff\\xfe")), row),
              ElementsAre("f:b@1000=" + with_ff));
  EXPECT_EQ(Eval(Ok(Filter::ValueRegex("(?s).*")), row).size(), 3u);
}

TEST(FilterTest, DotDoesNotMatchNewlineButBackslashCDoes) {
  Row row("r", {{"f", "a", 1000, "a\nb"}});
  EXPECT_THAT(Eval(Ok(Filter::ValueRegex(".*")), row), IsEmpty());
  EXPECT_THAT(Eval(Ok(Filter::ValueRegex("\\C*")), row),
              ElementsAre("f:a@1000=a\nb"));
}

TEST(FilterTest, QualifierAndRowKeyRegexAreBinarySafe) {
  const std::string qualifier("q\0\xff", 3);
  Row row(std::string("k\0", 2), {{"f", qualifier, 1000, "v"}});
  EXPECT_THAT(Eval(Ok(Filter::ColumnQualifierRegex("q\\x00\\xff")), row),
              ElementsAre("f:" + qualifier + "@1000=v"));
  EXPECT_EQ(Eval(Ok(Filter::RowKeyRegex("k\\x00")), row).size(), 1u);
  EXPECT_THAT(Eval(Ok(Filter::RowKeyRegex("k")), row), IsEmpty());
}

TEST(FilterTest, InvalidRegexNamesTheField) {
  ExpectInvalid(Filter::RowKeyRegex("("),
                "Invalid regex in row_key_regex_filter: ");
  ExpectInvalid(Filter::FamilyNameRegex("[a"),
                "Invalid regex in family_name_regex_filter: ");
  ExpectInvalid(Filter::ColumnQualifierRegex("a**"),
                "Invalid regex in column_qualifier_regex_filter: ");
  ExpectInvalid(Filter::ValueRegex("\\"),
                "Invalid regex in value_regex_filter: ");
}

TEST(FilterTest, ColumnRangeClosedAndOpenBounds) {
  EXPECT_THAT(
      Eval(Filter::ColumnRange("A", Bound::Closed("A"), Bound::Closed("B")),
           Sample()),
      ElementsAre("A:A@3000=a3", "A:A@1000=a1", "A:B@2000=b2"));
  EXPECT_THAT(
      Eval(Filter::ColumnRange("A", Bound::Open("A"), Bound::Closed("B")),
           Sample()),
      ElementsAre("A:B@2000=b2"));
  EXPECT_THAT(
      Eval(Filter::ColumnRange("A", Bound::Closed("A"), Bound::Open("B")),
           Sample()),
      ElementsAre("A:A@3000=a3", "A:A@1000=a1"));
}

TEST(FilterTest, ColumnRangeFamilyMustMatchExactly) {
  EXPECT_THAT(
      Eval(Filter::ColumnRange("B", Bound::Unbounded(), Bound::Unbounded()),
           Sample()),
      ElementsAre("B:A@5000=ba5", "B:C@4000="));
  EXPECT_THAT(
      Eval(Filter::ColumnRange("", Bound::Unbounded(), Bound::Unbounded()),
           Sample()),
      IsEmpty());
  EXPECT_THAT(
      Eval(Filter::ColumnRange("B", Bound::Open("A"), Bound::Unbounded()),
           Sample()),
      ElementsAre("B:C@4000="));
}

TEST(FilterTest, TimestampRangeIsHalfOpen) {
  EXPECT_THAT(Eval(Ok(Filter::TimestampRange(TimestampFromMicros(2000),
                                             TimestampFromMicros(4000))),
                   Sample()),
              ElementsAre("A:A@3000=a3", "A:B@2000=b2"));
}

TEST(FilterTest, TimestampRangeEndZeroIsUnbounded) {
  EXPECT_THAT(Eval(Ok(Filter::TimestampRange(TimestampFromMicros(4000),
                                             TimestampFromMicros(0))),
                   Sample()),
              ElementsAre("B:A@5000=ba5", "B:C@4000="));
  EXPECT_EQ(Eval(Ok(Filter::TimestampRange(TimestampFromMicros(0),
                                           TimestampFromMicros(0))),
                 Sample()),
            kAll);
}

TEST(FilterTest, TimestampRangeInvertedOrEmptyMatchesNothing) {
  EXPECT_THAT(Eval(Ok(Filter::TimestampRange(TimestampFromMicros(4000),
                                             TimestampFromMicros(2000))),
                   Sample()),
              IsEmpty());
  EXPECT_THAT(Eval(Ok(Filter::TimestampRange(TimestampFromMicros(3000),
                                             TimestampFromMicros(3000))),
                   Sample()),
              IsEmpty());
}

TEST(FilterTest, TimestampRangeValidation) {
  ExpectInvalid(Filter::TimestampRange(TimestampFromMicros(-1000),
                                       TimestampFromMicros(0)),
                "timestamp_range_filter");
  ExpectInvalid(Filter::TimestampRange(TimestampFromMicros(0),
                                       TimestampFromMicros(-1000)),
                "timestamp_range_filter");
  ExpectInvalid(
      Filter::TimestampRange(TimestampFromMicros(1500), TimestampFromMicros(0)),
      "multiple of 1000");
  ExpectInvalid(Filter::TimestampRange(TimestampFromMicros(1000),
                                       TimestampFromMicros(2001)),
                "multiple of 1000");
  ExpectInvalid(Filter::TimestampRange(TimestampFromMicros(1000),
                                       TimestampFromMicros(2001)),
                "timestamp_range_filter");
  EXPECT_TRUE(Filter::TimestampRange(TimestampFromMicros(1000),
                                     TimestampFromMicros(2000))
                  .ok());
}

TEST(FilterTest, ValueRange) {
  EXPECT_THAT(Eval(Filter::ValueRange(Bound::Closed("a1"), Bound::Open("b2")),
                   Sample()),
              ElementsAre("A:A@3000=a3", "A:A@1000=a1"));
  EXPECT_THAT(
      Eval(Filter::ValueRange(Bound::Unbounded(), Bound::Closed("")), Sample()),
      ElementsAre("B:C@4000="));
  EXPECT_THAT(
      Eval(Filter::ValueRange(Bound::Open("b2"), Bound::Unbounded()), Sample()),
      ElementsAre("B:A@5000=ba5"));
}

TEST(FilterTest, ValueRangeComparesUnsignedBytes) {
  Row row("r", {{"f", "a", 1000, "\x7f"}, {"f", "b", 1000, "\x80"}});
  EXPECT_THAT(
      Eval(Filter::ValueRange(Bound::Closed("\x80"), Bound::Unbounded()), row),
      ElementsAre("f:b@1000=\x80"));
}

TEST(FilterTest, CellsPerRowOffset) {
  EXPECT_THAT(Eval(Ok(Filter::CellsPerRowOffset(3)), Sample()),
              ElementsAre("B:A@5000=ba5", "B:C@4000="));
  EXPECT_EQ(Eval(Ok(Filter::CellsPerRowOffset(0)), Sample()), kAll);
}

TEST(FilterTest, CellsPerRowOffsetLargerThanRow) {
  EXPECT_THAT(Eval(Ok(Filter::CellsPerRowOffset(5)), Sample()), IsEmpty());
  EXPECT_THAT(Eval(Ok(Filter::CellsPerRowOffset(1000)), Sample()), IsEmpty());
  EXPECT_THAT(
      Eval(Ok(Filter::CellsPerRowOffset(std::numeric_limits<int64_t>::max())),
           Sample()),
      IsEmpty());
}

TEST(FilterTest, CellsPerRowLimit) {
  EXPECT_THAT(Eval(Ok(Filter::CellsPerRowLimit(2)), Sample()),
              ElementsAre("A:A@3000=a3", "A:A@1000=a1"));
  EXPECT_EQ(Eval(Ok(Filter::CellsPerRowLimit(int64_t{1} << 40)), Sample()),
            kAll);
}

TEST(FilterTest, CellsPerColumnLimitAcrossColumnsAndFamilies) {
  Row row("r", {{"A", "x", 3000, "1"},
                {"A", "x", 2000, "2"},
                {"A", "x", 1000, "3"},
                {"A", "y", 2000, "4"},
                {"B", "x", 5000, "5"},
                {"B", "x", 4000, "6"}});
  EXPECT_THAT(Eval(Ok(Filter::CellsPerColumnLimit(1)), row),
              ElementsAre("A:x@3000=1", "A:y@2000=4", "B:x@5000=5"));
  EXPECT_THAT(Eval(Ok(Filter::CellsPerColumnLimit(2)), row),
              ElementsAre("A:x@3000=1", "A:x@2000=2", "A:y@2000=4",
                          "B:x@5000=5", "B:x@4000=6"));
}

TEST(FilterTest, CountValidationNamesTheField) {
  ExpectInvalid(Filter::CellsPerRowOffset(-1), "cells_per_row_offset_filter");
  ExpectInvalid(Filter::CellsPerRowLimit(0), "cells_per_row_limit_filter");
  ExpectInvalid(Filter::CellsPerRowLimit(-5), "cells_per_row_limit_filter");
  ExpectInvalid(Filter::CellsPerColumnLimit(0),
                "cells_per_column_limit_filter");
  EXPECT_TRUE(Filter::CellsPerColumnLimit(int64_t{3} << 32).ok());
}

TEST(FilterTest, RowSampleValidation) {
  for (double p : {0.0, 1.0, -0.5, 1.5, std::nan(""),
                   std::numeric_limits<double>::infinity()}) {
    ExpectInvalid(Filter::RowSample(p), "row_sample_filter");
  }
  EXPECT_TRUE(Filter::RowSample(0.5).ok());
  EXPECT_TRUE(Filter::RowSample(1e-9).ok());
}

std::vector<bool> SampleRows(uint64_t seed, int rows) {
  Filter f = Ok(Filter::RowSample(0.5));
  sim::Rng rng(seed);
  std::vector<bool> kept;
  for (int i = 0; i < rows; ++i) {
    std::vector<CellView> out;
    f.Apply(Sample().key(), Sample().views(), rng, &out);
    EXPECT_TRUE(out.empty() || out.size() == Sample().views().size());
    kept.push_back(!out.empty());
  }
  return kept;
}

TEST(FilterTest, RowSampleKeepsWholeRowsWithProbabilityP) {
  const std::vector<bool> kept = SampleRows(42, 2000);
  const auto count = std::count(kept.begin(), kept.end(), true);
  EXPECT_GE(count, 900);
  EXPECT_LE(count, 1100);
}

TEST(FilterTest, RowSampleIsDeterministicForASeed) {
  EXPECT_EQ(SampleRows(7, 500), SampleRows(7, 500));
  EXPECT_NE(SampleRows(7, 500), SampleRows(8, 500));
}

TEST(FilterTest, KindReportsTheFactory) {
  EXPECT_EQ(Filter::PassAll().kind(), Filter::Kind::kPassAll);
  EXPECT_EQ(Filter::Sink().kind(), Filter::Kind::kSink);
  EXPECT_EQ(Ok(Filter::ValueRegex("x")).kind(), Filter::Kind::kValueRegex);
  EXPECT_EQ(Filter::Chain({}).kind(), Filter::Kind::kChain);
  EXPECT_EQ(Filter::Condition(Filter::PassAll(), nullptr, nullptr).kind(),
            Filter::Kind::kCondition);
}

TEST(FilterTest, MovedFilterKeepsWorking) {
  Filter a = Filter::ApplyLabel("x");
  Filter b = std::move(a);
  Filter c = Filter::BlockAll();
  c = std::move(b);
  EXPECT_EQ(Eval(c, Sample()).front(), "A:A@3000=a3[x]");
}

}  // namespace
}  // namespace btsim::cluster
