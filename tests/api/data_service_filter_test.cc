// google.bigtable.v2.Bigtable ReadRows filters against a real server:
// filter validation and what each filter does to the rows read.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/api/api_test_util.h"
#include "tests/api/chunk_merger.h"
#include "tests/api/data_service_test_util.h"

namespace btsim::api_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST_F(DataServiceTest, ChainWithTwoLabelsIsInvalidArgument) {
  Set("t", "r", "cf", "q", "v");
  auto request = Request();
  auto* chain = request.mutable_filter()->mutable_chain();
  chain->add_filters()->set_apply_label_transformer("one");
  chain->add_filters()->set_pass_all_filter(true);
  chain->add_filters()->set_apply_label_transformer("two");
  ReadOutcome out = ReadRowsRaw(*data_, request);
  EXPECT_GRPC_CODE(out.status, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(out.status.error_message(), HasSubstr("apply_label"));
  EXPECT_TRUE(out.rows.empty());
}

TEST_F(DataServiceTest, SinkInsideConditionIsInvalidArgument) {
  Set("t", "r", "cf", "q", "v");
  auto request = Request();
  auto* cond = request.mutable_filter()->mutable_condition();
  cond->mutable_predicate_filter()->set_sink(true);
  cond->mutable_true_filter()->set_pass_all_filter(true);
  ReadOutcome out = ReadRowsRaw(*data_, request);
  EXPECT_GRPC_CODE(out.status, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(out.status.error_message(), HasSubstr("sink"));
  // Also inside a branch.
  cond->mutable_predicate_filter()->set_pass_all_filter(true);
  cond->mutable_false_filter()->mutable_chain()->add_filters()->set_sink(true);
  out = ReadRowsRaw(*data_, request);
  EXPECT_GRPC_CODE(out.status, grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(DataServiceTest, InvalidRegexIsInvalidArgumentNamingTheField) {
  Set("t", "r", "cf", "q", "v");
  auto request = Request();
  request.mutable_filter()->set_row_key_regex_filter("a(b");
  ReadOutcome out = ReadRowsRaw(*data_, request);
  EXPECT_GRPC_CODE(out.status, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(out.status.error_message(), HasSubstr("row_key_regex_filter"));
  // Nested: the message names the path to the bad filter.
  request.mutable_filter()->mutable_chain()->add_filters()->set_pass_all_filter(
      true);
  request.mutable_filter()
      ->mutable_chain()
      ->add_filters()
      ->set_value_regex_filter("[z");
  out = ReadRowsRaw(*data_, request);
  EXPECT_GRPC_CODE(out.status, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(out.status.error_message(), HasSubstr("filter.chain.filters[1]"));
  EXPECT_THAT(out.status.error_message(), HasSubstr("value_regex_filter"));
  // And in CheckAndMutateRow's predicate.
  v2::CheckAndMutateRowRequest cam;
  cam.set_table_name(TableName("t"));
  cam.set_row_key("r");
  cam.mutable_predicate_filter()->set_family_name_regex_filter("(");
  bool matched = false;
  grpc::Status s = CheckAndMutate(cam, &matched);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("predicate_filter"));
}

TEST_F(DataServiceTest, OtherInvalidFiltersAreInvalidArgument) {
  std::vector<v2::RowFilter> bad(5);
  bad[0].set_cells_per_column_limit_filter(0);
  bad[1].set_cells_per_row_offset_filter(-1);
  bad[2].set_row_sample_filter(1.5);
  bad[3].mutable_timestamp_range_filter()->set_start_timestamp_micros(1500);
  bad[4].set_apply_label_transformer("Bad Label!");
  for (const v2::RowFilter& f : bad) {
    auto request = Request();
    *request.mutable_filter() = f;
    ReadOutcome out = ReadRowsRaw(*data_, request);
    EXPECT_GRPC_CODE(out.status, grpc::StatusCode::INVALID_ARGUMENT);
  }
}

TEST_F(DataServiceTest, InterleaveOfTwoPassAllDuplicatesCells) {
  Set("t", "r", "cf", "a", "1", 2000);
  Set("t", "r", "cf", "a", "2", 1000);
  Set("t", "r", "cf", "b", "3", 1000);
  auto request = Request();
  auto* inter = request.mutable_filter()->mutable_interleave();
  inter->add_filters()->set_pass_all_filter(true);
  inter->add_filters()->set_pass_all_filter(true);
  auto rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_THAT(Timestamps(rows[0].Cells("cf", "a")),
              ElementsAre(2000, 2000, 1000, 1000));
  EXPECT_EQ(rows[0].Cells("cf", "b").size(), 2u);
  EXPECT_EQ(rows[0].CellCount(), 6u);
}

TEST_F(DataServiceTest, CellsPerColumnLimit) {
  for (int ts = 1; ts <= 4; ++ts) {
    Set("t", "r", "cf", "a", "a" + std::to_string(ts), ts * 1000);
    Set("t", "r", "cf", "b", "b" + std::to_string(ts), ts * 1000);
  }
  auto request = Request();
  request.mutable_filter()->set_cells_per_column_limit_filter(2);
  auto rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_THAT(Timestamps(rows[0].Cells("cf", "a")), ElementsAre(4000, 3000));
  EXPECT_THAT(Timestamps(rows[0].Cells("cf", "b")), ElementsAre(4000, 3000));
  EXPECT_EQ(rows[0].Latest("cf", "b"), "b4");
}

TEST_F(DataServiceTest, CellsPerRowLimitAndOffset) {
  for (const char* q : {"a", "b", "c", "d"}) Set("t", "r", "cf", q, q);
  auto request = Request();
  auto* chain = request.mutable_filter()->mutable_chain();
  chain->add_filters()->set_cells_per_row_offset_filter(1);
  chain->add_filters()->set_cells_per_row_limit_filter(2);
  auto rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 1u);
  ASSERT_EQ(rows[0].families.size(), 1u);
  ASSERT_EQ(rows[0].families[0].columns.size(), 2u);
  EXPECT_EQ(rows[0].families[0].columns[0].qualifier, "b");
  EXPECT_EQ(rows[0].families[0].columns[1].qualifier, "c");
}

TEST_F(DataServiceTest, StripValue) {
  Set("t", "r", "cf", "q", "a long value", 3000);
  Set("t", "r", "cf", "q", "older", 2000);
  auto request = Request();
  request.mutable_filter()->set_strip_value_transformer(true);
  auto rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].Cells("cf", "q"),
            (std::vector<MergedCell>{{3000, "", {}}, {2000, "", {}}}));
}

TEST_F(DataServiceTest, LabelsAppearInTheOutput) {
  Set("t", "r", "cf", "q", "v", 1000);
  Set("t", "r", "cf2", "q", "w", 1000);
  auto request = Request();
  auto* inter = request.mutable_filter()->mutable_interleave();
  auto* c1 = inter->add_filters()->mutable_chain();
  c1->add_filters()->set_family_name_regex_filter("cf");
  c1->add_filters()->set_apply_label_transformer("first");
  auto* c2 = inter->add_filters()->mutable_chain();
  c2->add_filters()->set_family_name_regex_filter("cf2");
  c2->add_filters()->set_apply_label_transformer("second");
  auto rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].Cells("cf", "q"),
            (std::vector<MergedCell>{{1000, "v", {"first"}}}));
  EXPECT_EQ(rows[0].Cells("cf2", "q"),
            (std::vector<MergedCell>{{1000, "w", {"second"}}}));
}

TEST_F(DataServiceTest, RangeAndRegexFiltersThroughTheWire) {
  Set("t", "r1", "cf", "a", "apple", 1000);
  Set("t", "r1", "cf", "b", "banana", 2000);
  Set("t", "r1", "cf", "c", "cherry", 3000);
  Set("t", "r1", "cf2", "b", "blueberry", 2000);
  Set("t", "r2", "cf", "a", "avocado", 1000);
  auto read = [&](const v2::RowFilter& f) {
    auto request = Request();
    *request.mutable_filter() = f;
    return ReadAll(*data_, request);
  };
  v2::RowFilter f;
  // Column range (a, c] in cf only.
  auto* cr = f.mutable_column_range_filter();
  cr->set_family_name("cf");
  cr->set_start_qualifier_open("a");
  cr->set_end_qualifier_closed("c");
  auto rows = read(f);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].key, "r1");
  EXPECT_EQ(rows[0].CellCount(), 2u);
  EXPECT_EQ(rows[0].Family("cf2"), nullptr);
  // Timestamp range [2000, 3000).
  f.Clear();
  f.mutable_timestamp_range_filter()->set_start_timestamp_micros(2000);
  f.mutable_timestamp_range_filter()->set_end_timestamp_micros(3000);
  rows = read(f);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].CellCount(), 2u);
  EXPECT_EQ(rows[0].Latest("cf2", "b"), "blueberry");
  // Value range ["b", "c").
  f.Clear();
  f.mutable_value_range_filter()->set_start_value_closed("b");
  f.mutable_value_range_filter()->set_end_value_open("c");
  rows = read(f);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].CellCount(), 2u);
  // Value regex matches the whole value.
  f.Clear();
  f.set_value_regex_filter("a.*");
  rows = read(f);
  EXPECT_THAT(Keys(rows), ElementsAre("r1", "r2"));
  f.set_value_regex_filter("a");
  EXPECT_TRUE(read(f).empty());
  // Qualifier regex and family regex.
  f.Clear();
  f.set_column_qualifier_regex_filter("b");
  rows = read(f);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].families.size(), 2u);
  f.Clear();
  f.set_family_name_regex_filter("cf2");
  rows = read(f);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].CellCount(), 1u);
  // An empty filter message passes everything.
  f.Clear();
  EXPECT_EQ(read(f).size(), 2u);
  // block_all removes every row.
  f.Clear();
  f.set_block_all_filter(true);
  EXPECT_TRUE(read(f).empty());
}

TEST_F(DataServiceTest, ConditionFilterPicksABranchPerRow) {
  Set("t", "yes", "cf", "flag", "1");
  Set("t", "yes", "cf", "data", "d1");
  Set("t", "no", "cf", "data", "d2");
  auto request = Request();
  auto* cond = request.mutable_filter()->mutable_condition();
  cond->mutable_predicate_filter()->set_column_qualifier_regex_filter("flag");
  cond->mutable_true_filter()->set_apply_label_transformer("flagged");
  cond->mutable_false_filter()->set_strip_value_transformer(true);
  auto rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].key, "no");
  EXPECT_EQ(rows[0].Cells("cf", "data"),
            (std::vector<MergedCell>{{1000, "", {}}}));
  EXPECT_EQ(rows[1].Cells("cf", "data"),
            (std::vector<MergedCell>{{1000, "d1", {"flagged"}}}));
}

TEST_F(DataServiceTest, SinkInsideInterleaveReachesTheOutput) {
  Set("t", "r", "cf", "a", "1");
  Set("t", "r", "cf", "b", "2");
  auto request = Request();
  // chain(interleave(chain(label x, sink), pass_all), block_all): only the
  // sunk cells survive the block_all.
  auto* chain = request.mutable_filter()->mutable_chain();
  auto* inter = chain->add_filters()->mutable_interleave();
  auto* sunk = inter->add_filters()->mutable_chain();
  sunk->add_filters()->set_apply_label_transformer("x");
  sunk->add_filters()->set_sink(true);
  inter->add_filters()->set_pass_all_filter(true);
  chain->add_filters()->set_block_all_filter(true);
  auto rows = ReadAll(*data_, request);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].Cells("cf", "a"),
            (std::vector<MergedCell>{{1000, "1", {"x"}}}));
  EXPECT_EQ(rows[0].CellCount(), 2u);
}

}  // namespace
}  // namespace btsim::api_test
