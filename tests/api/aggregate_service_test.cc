// Aggregate families through the gRPC services: value_type at CreateTable
// and GetTable, add_to_cell / merge_to_cell in MutateRow, MutateRows and
// CheckAndMutateRow, idempotency, and the refusals.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/api/api_test_util.h"
#include "tests/api/chunk_merger.h"
#include "tests/api/data_service_test_util.h"

namespace btsim::api_test {
namespace {

using ::testing::HasSubstr;

class AggregateServiceTest : public DataServiceTest {
 protected:
  void SetUp() override {
    DataServiceTest::SetUp();
    admin::CreateTableRequest request;
    request.set_parent("projects/p/instances/i");
    request.set_table_id("agg");
    auto& families = *request.mutable_table()->mutable_column_families();
    families["sum"]
        .mutable_value_type()
        ->mutable_aggregate_type()
        ->mutable_sum();
    families["min"]
        .mutable_value_type()
        ->mutable_aggregate_type()
        ->mutable_min();
    families["plain"];
    ASSERT_GRPC_OK(TryCreateTable(request));
  }

  static v2::Mutation Add(const std::string& family, int64_t input,
                          int64_t timestamp = 1000, bool merge = false) {
    v2::Mutation m;
    if (merge) {
      m.mutable_merge_to_cell()->mutable_input()->set_raw_value(
          BigEndian(input));
      m.mutable_merge_to_cell()->set_family_name(family);
      m.mutable_merge_to_cell()->mutable_column_qualifier()->set_raw_value("q");
      m.mutable_merge_to_cell()->mutable_timestamp()->set_raw_timestamp_micros(
          timestamp);
      return m;
    }
    v2::Mutation::AddToCell* add = m.mutable_add_to_cell();
    add->set_family_name(family);
    add->mutable_column_qualifier()->set_raw_value("q");
    add->mutable_timestamp()->set_raw_timestamp_micros(timestamp);
    add->mutable_input()->set_int_value(input);
    return m;
  }

  std::string Value(const std::string& family) {
    auto row = ReadRow("agg", "r");
    if (!row.has_value()) return "";
    return row->Latest(family, "q").value_or("");
  }
};

TEST_F(AggregateServiceTest, GetTableReportsTheValueType) {
  grpc::ClientContext context;
  admin::GetTableRequest request;
  request.set_name(TableName("agg"));
  admin::Table table;
  ASSERT_GRPC_OK(admin_->GetTable(&context, request, &table));
  const auto& families = table.column_families();
  EXPECT_TRUE(families.at("sum").value_type().aggregate_type().has_sum());
  EXPECT_TRUE(families.at("sum")
                  .value_type()
                  .aggregate_type()
                  .input_type()
                  .int64_type()
                  .encoding()
                  .has_big_endian_bytes());
  EXPECT_TRUE(families.at("min").value_type().aggregate_type().has_min());
  EXPECT_FALSE(families.at("plain").has_value_type());
}

TEST_F(AggregateServiceTest, AddAndMergeCombineInEveryWritePath) {
  ASSERT_GRPC_OK(Mutate("agg", "r", {Add("sum", 5), Add("min", 5)}));
  ASSERT_GRPC_OK(Mutate("agg", "r", {Add("sum", 2, 1000, /*merge=*/true)}));
  v2::MutateRowsRequest rows;
  rows.set_table_name(TableName("agg"));
  auto* entry = rows.add_entries();
  entry->set_row_key("r");
  *entry->add_mutations() = Add("sum", 10);
  *entry->add_mutations() = Add("min", -1);
  std::vector<v2::MutateRowsResponse::Entry> out;
  ASSERT_GRPC_OK(MutateRows(rows, &out));
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].status().code(), 0);
  v2::CheckAndMutateRowRequest check;
  check.set_table_name(TableName("agg"));
  check.set_row_key("r");
  *check.add_true_mutations() = Add("sum", 100);
  bool matched = false;
  ASSERT_GRPC_OK(CheckAndMutate(check, &matched));
  EXPECT_TRUE(matched);
  EXPECT_EQ(Value("sum"), BigEndian(117));
  EXPECT_EQ(Value("min"), BigEndian(-1));
}

TEST_F(AggregateServiceTest, IdempotentRetriesApplyOnce) {
  v2::MutateRowRequest request;
  request.set_table_name(TableName("agg"));
  request.set_row_key("r");
  *request.add_mutations() = Add("sum", 3);
  request.mutable_idempotency()->set_token("retry-token-1");
  for (int attempt = 0; attempt < 3; ++attempt) {
    grpc::ClientContext context;
    v2::MutateRowResponse response;
    ASSERT_GRPC_OK(data_->MutateRow(&context, request, &response));
  }
  EXPECT_EQ(Value("sum"), BigEndian(3));
  request.mutable_idempotency()->set_token("short");
  grpc::ClientContext context;
  v2::MutateRowResponse response;
  grpc::Status s = data_->MutateRow(&context, request, &response);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("idempotency.token"));
}

TEST_F(AggregateServiceTest, WrongKindsOfWritesAreRefusedNamingTheField) {
  grpc::Status s = Mutate("agg", "r", {SetCellMutation("sum", "q", "x", 1000)});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(),
              HasSubstr("mutations[0].set_cell.family_name"));
  s = Mutate("agg", "r", {Add("plain", 1)});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(),
              HasSubstr("mutations[0].add_to_cell.family_name"));
  v2::Mutation no_timestamp = Add("sum", 1);
  no_timestamp.mutable_add_to_cell()->clear_timestamp();
  s = Mutate("agg", "r", {no_timestamp});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(),
              HasSubstr("mutations[0].add_to_cell.timestamp"));
  EXPECT_FALSE(ReadRow("agg", "r").has_value());
}

TEST_F(AggregateServiceTest, HyperLogLogFamiliesAreUnimplemented) {
  admin::CreateTableRequest request;
  request.set_parent("projects/p/instances/i");
  request.set_table_id("hll");
  (*request.mutable_table()->mutable_column_families())["h"]
      .mutable_value_type()
      ->mutable_aggregate_type()
      ->mutable_hllpp_unique_count();
  grpc::Status s = TryCreateTable(request);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(s.error_message(),
              HasSubstr("value_type.aggregate_type.hllpp_unique_count"));
}

}  // namespace
}  // namespace btsim::api_test
