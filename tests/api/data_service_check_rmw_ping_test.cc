// google.bigtable.v2.Bigtable CheckAndMutateRow, ReadModifyWriteRow and
// PingAndWarm against a real server.
#include <cstdint>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/api/api_test_util.h"
#include "tests/api/chunk_merger.h"
#include "tests/api/data_service_test_util.h"

namespace btsim::api_test {
namespace {

using ::testing::HasSubstr;

// ======================================================== CheckAndMutateRow

TEST_F(DataServiceTest, CheckAndMutateMatched) {
  Set("t", "r", "cf", "flag", "on");
  v2::CheckAndMutateRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  request.mutable_predicate_filter()->set_value_regex_filter("on");
  *request.add_true_mutations() = SetCellMutation("cf", "result", "true");
  *request.add_false_mutations() = SetCellMutation("cf", "result", "false");
  bool matched = false;
  ASSERT_GRPC_OK(CheckAndMutate(request, &matched));
  EXPECT_TRUE(matched);
  EXPECT_EQ(ReadRow("t", "r")->Latest("cf", "result"), "true");
}

TEST_F(DataServiceTest, CheckAndMutateNotMatched) {
  Set("t", "r", "cf", "flag", "off");
  v2::CheckAndMutateRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  request.mutable_predicate_filter()->set_value_regex_filter("on");
  *request.add_true_mutations() = SetCellMutation("cf", "result", "true");
  *request.add_false_mutations() = SetCellMutation("cf", "result", "false");
  *request.add_false_mutations() = DeleteFromColumnMutation("cf", "flag");
  bool matched = true;
  ASSERT_GRPC_OK(CheckAndMutate(request, &matched));
  EXPECT_FALSE(matched);
  auto row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Latest("cf", "result"), "false");
  EXPECT_EQ(row->Column("cf", "flag"), nullptr);
}

TEST_F(DataServiceTest, CheckAndMutateWithoutPredicateTestsRowExistence) {
  v2::CheckAndMutateRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  *request.add_true_mutations() = SetCellMutation("cf", "seen", "again");
  *request.add_false_mutations() = SetCellMutation("cf", "seen", "first");
  bool matched = true;
  ASSERT_GRPC_OK(CheckAndMutate(request, &matched));
  EXPECT_FALSE(matched);
  EXPECT_EQ(ReadRow("t", "r")->Latest("cf", "seen"), "first");
  ASSERT_GRPC_OK(CheckAndMutate(request, &matched));
  EXPECT_TRUE(matched);
  EXPECT_EQ(ReadRow("t", "r")->Latest("cf", "seen"), "again");
  // No mutations on the chosen side is fine.
  request.clear_true_mutations();
  ASSERT_GRPC_OK(CheckAndMutate(request, &matched));
  EXPECT_TRUE(matched);
}

TEST_F(DataServiceTest, CheckAndMutateErrors) {
  Set("t", "r", "cf", "q", "v");
  v2::CheckAndMutateRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  // An invalid mutation on the side that is not taken still fails the call.
  *request.add_true_mutations() = SetCellMutation("cf", "q", "new");
  *request.add_false_mutations() = SetCellMutation("missing", "q", "v");
  bool matched = false;
  grpc::Status s = CheckAndMutate(request, &matched);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("false_mutations[0]"));
  EXPECT_EQ(ReadRow("t", "r")->Latest("cf", "q"), "v");
  request.clear_false_mutations();
  request.set_row_key("");
  EXPECT_GRPC_CODE(CheckAndMutate(request, &matched),
                   grpc::StatusCode::INVALID_ARGUMENT);
  request.set_row_key("r");
  request.set_table_name(TableName("absent"));
  EXPECT_GRPC_CODE(CheckAndMutate(request, &matched),
                   grpc::StatusCode::NOT_FOUND);
}

// ======================================================= ReadModifyWriteRow

TEST_F(DataServiceTest, ReadModifyWriteAppend) {
  Set("t", "r", "cf", "s", "abc", 1000);
  v2::ReadModifyWriteRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  auto* r1 = request.add_rules();
  r1->set_family_name("cf");
  r1->set_column_qualifier("s");
  r1->set_append_value("def");
  auto* r2 = request.add_rules();
  r2->set_family_name("cf");
  r2->set_column_qualifier("s");
  r2->set_append_value("!");
  auto* r3 = request.add_rules();
  r3->set_family_name("cf");
  r3->set_column_qualifier("new");
  r3->set_append_value("fresh");
  v2::ReadModifyWriteRowResponse response;
  ASSERT_GRPC_OK(ReadModifyWrite(request, &response));
  EXPECT_EQ(response.row().key(), "r");
  ASSERT_EQ(response.row().families_size(), 1);
  const v2::Family& f = response.row().families(0);
  EXPECT_EQ(f.name(), "cf");
  ASSERT_EQ(f.columns_size(), 2);
  EXPECT_EQ(f.columns(0).qualifier(), "new");
  EXPECT_EQ(f.columns(0).cells(0).value(), "fresh");
  EXPECT_EQ(f.columns(1).qualifier(), "s");
  ASSERT_EQ(f.columns(1).cells_size(), 1);
  EXPECT_EQ(f.columns(1).cells(0).value(), "abcdef!");
  EXPECT_EQ(ReadRow("t", "r")->Latest("cf", "s"), "abcdef!");
}

TEST_F(DataServiceTest, ReadModifyWriteIncrementReturnsOnlyModifiedCells) {
  Set("t", "r", "cf", "other", "untouched");
  Set("t", "r", "cf2", "x", "untouched");
  v2::ReadModifyWriteRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  auto* rule = request.add_rules();
  rule->set_family_name("cf");
  rule->set_column_qualifier("n");
  rule->set_increment_amount(5);
  v2::ReadModifyWriteRowResponse response;
  ASSERT_GRPC_OK(ReadModifyWrite(request, &response));
  ASSERT_EQ(response.row().families_size(), 1);
  ASSERT_EQ(response.row().families(0).columns_size(), 1);
  EXPECT_EQ(response.row().families(0).columns(0).qualifier(), "n");
  EXPECT_EQ(response.row().families(0).columns(0).cells(0).value(),
            BigEndian(5));
  const int64_t ts =
      response.row().families(0).columns(0).cells(0).timestamp_micros();
  EXPECT_EQ(ts % 1000, 0);
  EXPECT_GT(ts, 0);
  // Increment again, by a negative amount, twice in one request.
  rule->set_increment_amount(-2);
  *request.add_rules() = *rule;
  response.Clear();
  ASSERT_GRPC_OK(ReadModifyWrite(request, &response));
  EXPECT_EQ(response.row().families(0).columns(0).cells(0).value(),
            BigEndian(1));
  auto row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Latest("cf", "n"), BigEndian(1));
  EXPECT_EQ(row->Latest("cf", "other"), "untouched");
}

TEST_F(DataServiceTest, IncrementOfNonEightByteValueIsInvalidArgument) {
  Set("t", "r", "cf", "n", "abc");
  v2::ReadModifyWriteRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  auto* ok = request.add_rules();
  ok->set_family_name("cf");
  ok->set_column_qualifier("other");
  ok->set_append_value("x");
  auto* rule = request.add_rules();
  rule->set_family_name("cf");
  rule->set_column_qualifier("n");
  rule->set_increment_amount(1);
  v2::ReadModifyWriteRowResponse response;
  grpc::Status s = ReadModifyWrite(request, &response);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("rules[1]"));
  // The whole request failed: the append did not happen either.
  auto row = ReadRow("t", "r");
  ASSERT_TRUE(row.has_value());
  EXPECT_EQ(row->Latest("cf", "n"), "abc");
  EXPECT_EQ(row->Column("cf", "other"), nullptr);
}

TEST_F(DataServiceTest, ReadModifyWriteErrors) {
  v2::ReadModifyWriteRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  v2::ReadModifyWriteRowResponse response;
  EXPECT_GRPC_CODE(ReadModifyWrite(request, &response),
                   grpc::StatusCode::INVALID_ARGUMENT);  // no rules
  auto* rule = request.add_rules();
  rule->set_family_name("cf");
  rule->set_column_qualifier("q");
  EXPECT_GRPC_CODE(ReadModifyWrite(request, &response),
                   grpc::StatusCode::INVALID_ARGUMENT);  // no rule kind
  rule->set_family_name("missing");
  rule->set_append_value("x");
  EXPECT_GRPC_CODE(ReadModifyWrite(request, &response),
                   grpc::StatusCode::NOT_FOUND);
  rule->set_family_name("cf");
  request.set_table_name(TableName("absent"));
  EXPECT_GRPC_CODE(ReadModifyWrite(request, &response),
                   grpc::StatusCode::NOT_FOUND);
  EXPECT_TRUE(ReadTable("t").empty());
}

TEST_F(DataServiceTest, ReadModifyWriteKeepsANewerExistingTimestamp) {
  // A cell from the future: the new cell takes max(existing, now) and so
  // replaces it rather than hiding behind it.
  const int64_t future = int64_t{4102444800} * 1000000;  // year 2100
  Set("t", "r", "cf", "s", "abc", future);
  v2::ReadModifyWriteRowRequest request;
  request.set_table_name(TableName("t"));
  request.set_row_key("r");
  auto* rule = request.add_rules();
  rule->set_family_name("cf");
  rule->set_column_qualifier("s");
  rule->set_append_value("d");
  v2::ReadModifyWriteRowResponse response;
  ASSERT_GRPC_OK(ReadModifyWrite(request, &response));
  const v2::Cell& cell = response.row().families(0).columns(0).cells(0);
  EXPECT_EQ(cell.timestamp_micros(), future);
  EXPECT_EQ(cell.value(), "abcd");
  EXPECT_EQ(ReadRow("t", "r")->Cells("cf", "s"),
            (std::vector<MergedCell>{{future, "abcd", {}}}));
}

// ============================================================== PingAndWarm

TEST_F(DataServiceTest, PingAndWarm) {
  EXPECT_GRPC_OK(Ping(kInstance));
  EXPECT_GRPC_OK(Ping("projects/other/instances/new-one"));
  for (const char* bad : {"", "projects/p", "projects/p/instances/",
                          "projects/p/instances/i/tables/t", "instances/i"}) {
    grpc::Status s = Ping(bad);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("name")) << bad;
  }
}

}  // namespace
}  // namespace btsim::api_test
