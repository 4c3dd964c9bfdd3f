#include "cluster/filter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "cluster/bound.h"
#include "cluster/cell_view.h"
#include "sim/rng.h"

// Counts heap allocations so a test can check the hot path allocates nothing.
// Sanitizers supply their own operator new, so counting is off under them.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define BTSIM_FILTER_TEST_COUNT_ALLOCATIONS 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) || \
    __has_feature(memory_sanitizer)
#define BTSIM_FILTER_TEST_COUNT_ALLOCATIONS 0
#endif
#endif
#ifndef BTSIM_FILTER_TEST_COUNT_ALLOCATIONS
#define BTSIM_FILTER_TEST_COUNT_ALLOCATIONS 1
#endif

namespace {
std::atomic<int64_t> g_allocations{0};
}  // namespace

#if BTSIM_FILTER_TEST_COUNT_ALLOCATIONS
void* operator new(std::size_t size) {
  g_allocations.fetch_add(1, std::memory_order_relaxed);
  if (void* p = std::malloc(size == 0 ? 1 : size)) return p;
  std::abort();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
#endif

namespace btsim::cluster {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

struct TestCell {
  std::string family;
  std::string qualifier;
  int64_t timestamp_micros;
  std::string value;
};

// A row that owns its bytes; the views stay valid while the row lives.
class Row {
 public:
  Row(std::string key, std::vector<TestCell> cells)
      : key_(std::move(key)), cells_(std::move(cells)) {
    for (const TestCell& c : cells_) {
      views_.push_back(
          CellView{c.family, c.qualifier, c.timestamp_micros, c.value});
    }
  }
  Row(const Row&) = delete;
  Row& operator=(const Row&) = delete;

  const std::string& key() const { return key_; }
  const std::vector<CellView>& views() const { return views_; }

 private:
  std::string key_;
  std::vector<TestCell> cells_;
  std::vector<CellView> views_;
};

std::string Render(const CellView& c) {
  std::string s = std::string(c.family) + ":" + std::string(c.qualifier) + "@" +
                  std::to_string(c.timestamp_micros) + "=" +
                  std::string(c.value);
  if (c.label != nullptr) s += "[" + *c.label + "]";
  return s;
}

std::vector<std::string> Render(const std::vector<CellView>& cells) {
  std::vector<std::string> out;
  for (const CellView& c : cells) out.push_back(Render(c));
  return out;
}

std::vector<std::string> Eval(const Filter& filter, const Row& row,
                              uint64_t seed = 1) {
  sim::Rng rng(seed);
  std::vector<CellView> out;
  filter.Apply(row.key(), row.views(), rng, &out);
  EXPECT_TRUE(std::is_sorted(out.begin(), out.end(), CanonicalLess));
  return Render(out);
}

// The fixed row most tests use, in canonical order.
const Row& Sample() {
  static const Row* row = new Row("row1", {
                                              {"A", "A", 3000, "a3"},
                                              {"A", "A", 1000, "a1"},
                                              {"A", "B", 2000, "b2"},
                                              {"B", "A", 5000, "ba5"},
                                              {"B", "C", 4000, ""},
                                          });
  return *row;
}

const std::vector<std::string> kAll = {
    "A:A@3000=a3", "A:A@1000=a1", "A:B@2000=b2", "B:A@5000=ba5", "B:C@4000="};

template <typename T>
T Ok(Result<T> result) {
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return std::move(result).value();
}

std::unique_ptr<Filter> Ptr(Filter f) {
  return std::make_unique<Filter>(std::move(f));
}

template <typename... F>
std::vector<Filter> List(F... filters) {
  std::vector<Filter> v;
  (v.push_back(std::move(filters)), ...);
  return v;
}

void ExpectInvalid(const Status& status, std::string_view needle) {
  EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
  EXPECT_THAT(status.message(), HasSubstr(std::string(needle)));
}

template <typename T>
void ExpectInvalid(const Result<T>& result, std::string_view needle) {
  ASSERT_FALSE(result.ok());
  ExpectInvalid(result.status(), needle);
}

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
  EXPECT_THAT(Eval(Ok(Filter::TimestampRange(2000, 4000)), Sample()),
              ElementsAre("A:A@3000=a3", "A:B@2000=b2"));
}

TEST(FilterTest, TimestampRangeEndZeroIsUnbounded) {
  EXPECT_THAT(Eval(Ok(Filter::TimestampRange(4000, 0)), Sample()),
              ElementsAre("B:A@5000=ba5", "B:C@4000="));
  EXPECT_EQ(Eval(Ok(Filter::TimestampRange(0, 0)), Sample()), kAll);
}

TEST(FilterTest, TimestampRangeInvertedOrEmptyMatchesNothing) {
  EXPECT_THAT(Eval(Ok(Filter::TimestampRange(4000, 2000)), Sample()),
              IsEmpty());
  EXPECT_THAT(Eval(Ok(Filter::TimestampRange(3000, 3000)), Sample()),
              IsEmpty());
}

TEST(FilterTest, TimestampRangeValidation) {
  ExpectInvalid(Filter::TimestampRange(-1000, 0), "timestamp_range_filter");
  ExpectInvalid(Filter::TimestampRange(0, -1000), "timestamp_range_filter");
  ExpectInvalid(Filter::TimestampRange(1500, 0), "multiple of 1000");
  ExpectInvalid(Filter::TimestampRange(1000, 2001), "multiple of 1000");
  ExpectInvalid(Filter::TimestampRange(1000, 2001), "timestamp_range_filter");
  EXPECT_TRUE(Filter::TimestampRange(1000, 2000).ok());
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
  Filter f = Filter::Interleave(List(Ok(Filter::FamilyNameRegex("B")),
                                     Ok(Filter::ValueRegex("a1")),
                                     Ok(Filter::TimestampRange(3000, 0))));
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

// ---- Allocations ------------------------------------------------------------

TEST(FilterTest, ChainOfSimpleFiltersDoesNotAllocate) {
  if (!BTSIM_FILTER_TEST_COUNT_ALLOCATIONS) {
    GTEST_SKIP() << "allocation counting is off under sanitizers";
  }
  Filter f = Filter::Chain(List(
      Ok(Filter::FamilyNameRegex("A|B")), Ok(Filter::ColumnQualifierRegex(".")),
      Ok(Filter::TimestampRange(1000, 0)), Ok(Filter::CellsPerColumnLimit(1)),
      Filter::StripValue(), Filter::ApplyLabel("x")));
  sim::Rng rng(1);
  std::vector<CellView> out;
  out.reserve(64);
  f.Apply(Sample().key(), Sample().views(), rng, &out);  // warms RE2 caches
  out.clear();
  const int64_t before = g_allocations.load();
  for (int i = 0; i < 100; ++i) {
    out.clear();
    f.Apply(Sample().key(), Sample().views(), rng, &out);
  }
  EXPECT_EQ(g_allocations.load() - before, 0);
  EXPECT_EQ(out.size(), 4u);
}

TEST(FilterTest, InterleaveAllocatesOnlyScratchBuffers) {
  if (!BTSIM_FILTER_TEST_COUNT_ALLOCATIONS) {
    GTEST_SKIP() << "allocation counting is off under sanitizers";
  }
  Filter f = Filter::Interleave(
      List(Ok(Filter::FamilyNameRegex("B")), Ok(Filter::FamilyNameRegex("A"))));
  sim::Rng rng(1);
  std::vector<CellView> out;
  out.reserve(64);
  f.Apply(Sample().key(), Sample().views(), rng, &out);
  const int64_t before = g_allocations.load();
  out.clear();
  f.Apply(Sample().key(), Sample().views(), rng, &out);
  // One scratch buffer for the merge: the pool slot, the vector, its storage.
  EXPECT_LE(g_allocations.load() - before, 3);
  EXPECT_EQ(Render(out), kAll);
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

// ---- Randomized cross-check against a naive evaluator -----------------------

// A filter description that builds both the real Filter and a naive model.
struct Spec {
  enum Kind { kLeaf, kSink, kChain, kInterleave, kCondition } kind = kLeaf;
  int leaf = 0;
  std::vector<Spec> children;  // condition: predicate, true, false (may be
                               // kLeaf with leaf == -1 for "null")
};

constexpr int kLeafCount = 9;

Filter BuildLeaf(int leaf, const std::string* label) {
  switch (leaf) {
    case 0:
      return Filter::PassAll();
    case 1:
      return Filter::BlockAll();
    case 2:
      return Filter::StripValue();
    case 3:
      return Filter::ApplyLabel(*label);
    case 4:
      return Ok(Filter::FamilyNameRegex("A"));
    case 5:
      return Ok(Filter::ColumnQualifierRegex("[ab]"));
    case 6:
      return Ok(Filter::CellsPerRowOffset(1));
    case 7:
      return Ok(Filter::CellsPerRowLimit(2));
    default:
      return Ok(Filter::CellsPerColumnLimit(1));
  }
}

using Model = std::vector<std::string>;  // rendered cells

struct ModelCell {
  CellView cell;
  std::string label;  // "" = none
};

bool ModelLess(const ModelCell& a, const ModelCell& b) {
  return CanonicalLess(a.cell, b.cell);
}

std::vector<ModelCell> EvalModel(const Spec& s, std::vector<ModelCell> in,
                                 std::vector<ModelCell>& sunk) {
  if (in.empty()) return {};
  std::vector<ModelCell> out;
  switch (s.kind) {
    case Spec::kSink:
      sunk.insert(sunk.end(), in.begin(), in.end());
      return {};
    case Spec::kChain:
      for (const Spec& c : s.children) in = EvalModel(c, std::move(in), sunk);
      return in;
    case Spec::kInterleave:
      for (const Spec& c : s.children) {
        auto part = EvalModel(c, in, sunk);
        out.insert(out.end(), part.begin(), part.end());
      }
      std::stable_sort(out.begin(), out.end(), ModelLess);
      return out;
    case Spec::kCondition: {
      std::vector<ModelCell> ignored;
      const bool matched = !EvalModel(s.children[0], in, ignored).empty();
      const Spec& branch = s.children[matched ? 1 : 2];
      if (branch.kind == Spec::kLeaf && branch.leaf == -1) return {};
      return EvalModel(branch, std::move(in), sunk);
    }
    case Spec::kLeaf:
      break;
  }
  std::map<std::pair<std::string, std::string>, int> per_column;
  for (size_t i = 0; i < in.size(); ++i) {
    ModelCell c = in[i];
    switch (s.leaf) {
      case 0:
        break;
      case 1:
        continue;
      case 2:
        c.cell.value = {};
        break;
      case 3:
        c.label = "l";
        break;
      case 4:
        if (c.cell.family != "A") continue;
        break;
      case 5:
        if (c.cell.qualifier != "a" && c.cell.qualifier != "b") continue;
        break;
      case 6:
        if (i < 1) continue;
        break;
      case 7:
        if (i >= 2) continue;
        break;
      default:
        if (per_column[{std::string(c.cell.family),
                        std::string(c.cell.qualifier)}]++ >= 1) {
          continue;
        }
    }
    out.push_back(c);
  }
  return out;
}

Filter BuildFilter(const Spec& s, const std::string* label) {
  switch (s.kind) {
    case Spec::kLeaf:
      return BuildLeaf(s.leaf, label);
    case Spec::kSink:
      return Filter::Sink();
    case Spec::kChain:
    case Spec::kInterleave: {
      std::vector<Filter> children;
      for (const Spec& c : s.children)
        children.push_back(BuildFilter(c, label));
      return s.kind == Spec::kChain ? Filter::Chain(std::move(children))
                                    : Filter::Interleave(std::move(children));
    }
    case Spec::kCondition: {
      auto branch = [&](const Spec& b) -> std::unique_ptr<Filter> {
        if (b.kind == Spec::kLeaf && b.leaf == -1) return nullptr;
        return Ptr(BuildFilter(b, label));
      };
      return Filter::Condition(BuildFilter(s.children[0], label),
                               branch(s.children[1]), branch(s.children[2]));
    }
  }
  return Filter::BlockAll();
}

Spec RandomSpec(sim::Rng& rng, int depth, bool allow_sink) {
  const uint64_t roll = rng.Uniform(depth >= 3 ? 5 : 9);
  Spec s;
  if (roll < 4) {
    s.leaf = static_cast<int>(rng.Uniform(kLeafCount));
  } else if (roll == 4) {
    if (allow_sink) {
      s.kind = Spec::kSink;
    } else {
      s.leaf = static_cast<int>(rng.Uniform(kLeafCount));
    }
  } else if (roll <= 6) {
    s.kind = roll == 5 ? Spec::kChain : Spec::kInterleave;
    const uint64_t n = rng.Uniform(4);
    for (uint64_t i = 0; i < n; ++i) {
      s.children.push_back(RandomSpec(rng, depth + 1, allow_sink));
    }
  } else {
    s.kind = Spec::kCondition;
    s.children.push_back(RandomSpec(rng, depth + 1, false));
    for (int i = 0; i < 2; ++i) {
      if (rng.Bernoulli(0.2)) {
        Spec null_branch;
        null_branch.leaf = -1;
        s.children.push_back(null_branch);
      } else {
        s.children.push_back(RandomSpec(rng, depth + 1, false));
      }
    }
  }
  return s;
}

TEST(FilterTest, RandomTreesMatchNaiveModel) {
  Row row("r", {{"A", "a", 3000, "1"},
                {"A", "a", 2000, "2"},
                {"A", "b", 1000, "3"},
                {"A", "c", 4000, "4"},
                {"B", "a", 5000, "5"},
                {"B", "b", 5000, "6"},
                {"B", "b", 1000, "7"}});
  const std::string label = "l";
  sim::Rng rng(2024);
  for (int iter = 0; iter < 3000; ++iter) {
    const Spec spec = RandomSpec(rng, 0, true);
    Filter filter = BuildFilter(spec, &label);

    std::vector<ModelCell> in;
    for (const CellView& c : row.views()) in.push_back({c, ""});
    std::vector<ModelCell> sunk;
    std::vector<ModelCell> expected = EvalModel(spec, in, sunk);
    expected.insert(expected.begin(), sunk.begin(), sunk.end());
    std::stable_sort(expected.begin(), expected.end(), ModelLess);
    Model want;
    for (const ModelCell& c : expected) {
      CellView v = c.cell;
      v.label = nullptr;
      want.push_back(Render(v) + (c.label.empty() ? "" : "[l]"));
    }
    sim::Rng unused(1);
    std::vector<CellView> out;
    filter.Apply(row.key(), row.views(), unused, &out);
    Model got;
    for (CellView& c : out) {
      EXPECT_TRUE(c.label == nullptr || *c.label == "l");
      const bool labelled = c.label != nullptr;
      c.label = nullptr;
      got.push_back(Render(c) + (labelled ? "[l]" : ""));
    }
    ASSERT_EQ(got, want) << "iteration " << iter;
  }
}

// ---- Interval::IsEmpty ------------------------------------------------------

TEST(IntervalTest, UnboundedIsNeverEmpty) {
  EXPECT_FALSE((Interval{Bound::Unbounded(), Bound::Unbounded()}).IsEmpty());
  EXPECT_FALSE((Interval{Bound::Unbounded(), Bound::Open("a")}).IsEmpty());
  EXPECT_FALSE((Interval{Bound::Open("z"), Bound::Unbounded()}).IsEmpty());
}

TEST(IntervalTest, InvertedIsEmpty) {
  EXPECT_TRUE((Interval{Bound::Closed("b"), Bound::Closed("a")}).IsEmpty());
  EXPECT_TRUE((Interval{Bound::Open("b"), Bound::Open("a")}).IsEmpty());
  EXPECT_TRUE((Interval{Bound::Closed("ab"), Bound::Closed("a")}).IsEmpty());
}

TEST(IntervalTest, EqualEndsEmptyOnlyWhenOneSideIsOpen) {
  EXPECT_FALSE((Interval{Bound::Closed("a"), Bound::Closed("a")}).IsEmpty());
  EXPECT_TRUE((Interval{Bound::Open("a"), Bound::Closed("a")}).IsEmpty());
  EXPECT_TRUE((Interval{Bound::Closed("a"), Bound::Open("a")}).IsEmpty());
  EXPECT_TRUE((Interval{Bound::Open("a"), Bound::Open("a")}).IsEmpty());
}

TEST(IntervalTest, OrderedIsNotEmpty) {
  EXPECT_FALSE((Interval{Bound::Closed("a"), Bound::Open("b")}).IsEmpty());
  // Nothing lies strictly between "a" and "a\0", but the simple rule says
  // not empty.
  EXPECT_FALSE((Interval{Bound::Open("a"), Bound::Open(std::string("a\0", 2))})
                   .IsEmpty());
}

TEST(IntervalTest, ComparesUnsignedBytes) {
  EXPECT_TRUE(
      (Interval{Bound::Closed("\xff"), Bound::Closed("\x01")}).IsEmpty());
  EXPECT_FALSE(
      (Interval{Bound::Closed("\x01"), Bound::Closed("\xff")}).IsEmpty());
}

}  // namespace
}  // namespace btsim::cluster

namespace btsim::cluster {
namespace {

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
