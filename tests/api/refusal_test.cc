// Requests the server refuses, through the data and table admin stubs:
// unimplemented features and malformed requests, each naming the field.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "tests/api/api_test_util.h"

namespace btsim::api_test {
namespace {

using ::testing::HasSubstr;

class RefusalTest : public ServerTest {
 protected:
  // A one-cell MutateRow on the table named `table_name`.
  grpc::Status MutateNamed(const std::string& table_name) {
    v2::MutateRowRequest request;
    request.set_table_name(table_name);
    request.set_row_key("r");
    *request.add_mutations() = SetCellMutation("cf", "q", "v");
    grpc::ClientContext context;
    v2::MutateRowResponse response;
    return data_->MutateRow(&context, request, &response);
  }
};

TEST_F(RefusalTest, AuthorizedViewWithoutTableNameIsUnimplemented) {
  // Clients targeting a view leave table_name empty.
  v2::MutateRowRequest request;
  request.set_authorized_view_name(TableName("t") + "/authorizedViews/v");
  request.set_row_key("r");
  *request.add_mutations() = SetCellMutation("cf", "q", "v");
  v2::MutateRowResponse response;
  grpc::ClientContext context;
  grpc::Status s = data_->MutateRow(&context, request, &response);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(s.error_message(), HasSubstr("authorized_view_name"));
}

TEST_F(RefusalTest, MaterializedViewReadIsUnimplemented) {
  CreateTable("t");
  v2::ReadRowsRequest request;
  request.set_materialized_view_name(std::string(kInstance) +
                                     "/materializedViews/m");
  ReadOutcome out = ReadRowsRaw(*data_, request);
  EXPECT_EQ(out.status.error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

TEST_F(RefusalTest, SampleRowKeysOfARangeIsUnimplemented) {
  CreateTable("t");
  v2::SampleRowKeysRequest request;
  request.set_table_name(TableName("t"));
  request.mutable_row_range()->set_start_key_closed("a");
  grpc::ClientContext context;
  auto reader = data_->SampleRowKeys(&context, request);
  v2::SampleRowKeysResponse response;
  while (reader->Read(&response)) {
  }
  EXPECT_EQ(reader->Finish().error_code(), grpc::StatusCode::UNIMPLEMENTED);
}

TEST_F(RefusalTest, MutateRowsEntryErrorsNameTheEntry) {
  CreateTable("t");
  v2::MutateRowsRequest request;
  request.set_table_name(TableName("t"));
  auto* good = request.add_entries();
  good->set_row_key("a");
  *good->add_mutations() = SetCellMutation("cf", "q", "v");
  auto* bad = request.add_entries();
  bad->set_row_key("b");
  *bad->add_mutations() = SetCellMutation("nofamily", "q", "v");
  grpc::ClientContext context;
  auto reader = data_->MutateRows(&context, request);
  v2::MutateRowsResponse response;
  std::string message;
  while (reader->Read(&response)) {
    for (const auto& e : response.entries()) {
      if (e.index() == 1) message = e.status().message();
    }
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_THAT(message, HasSubstr("entries[1].mutations[0]"));
}

TEST_F(RefusalTest, ExponentialFilterIsInvalidArgument) {
  CreateTable("t");
  Set("t", "r", "cf", "q", "v");
  v2::ReadRowsRequest request;
  request.set_table_name(TableName("t"));
  auto* chain = request.mutable_filter()->mutable_chain();
  for (int i = 0; i < 40; ++i) {
    auto* interleave = chain->add_filters()->mutable_interleave();
    interleave->add_filters()->set_pass_all_filter(true);
    interleave->add_filters()->set_pass_all_filter(true);
  }
  ReadOutcome out = ReadRowsRaw(*data_, request);
  EXPECT_EQ(out.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(out.status.error_message(), HasSubstr("filter"));
}

TEST_F(RefusalTest, AggregateFamilyValueTypeIsUnimplemented) {
  admin::CreateTableRequest request;
  request.set_parent(kInstance);
  request.set_table_id("t");
  admin::ColumnFamily family;
  // ColumnFamily.value_type (field 3) with an int64 aggregate: unknown to us.
  family.GetReflection()->MutableUnknownFields(&family)->AddLengthDelimited(
      3, std::string("\x2a\x00", 2));
  (*request.mutable_table()->mutable_column_families())["sum"] = family;
  grpc::Status s = TryCreateTable(request);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(s.error_message(), HasSubstr("column_families['sum']"));
}

TEST_F(RefusalTest, EmptyInitialSplitIsInvalidArgument) {
  admin::CreateTableRequest request;
  request.set_parent(kInstance);
  request.set_table_id("t");
  request.add_initial_splits()->set_key("");
  grpc::Status s = TryCreateTable(request);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("initial_splits[0]"));
}

TEST_F(RefusalTest, MaxAgeWithOutOfRangeNanosIsInvalidArgument) {
  admin::CreateTableRequest request;
  request.set_parent(kInstance);
  request.set_table_id("t");
  auto& family = (*request.mutable_table()->mutable_column_families())["cf"];
  family.mutable_gc_rule()->mutable_max_age()->set_seconds(10);
  family.mutable_gc_rule()->mutable_max_age()->set_nanos(1'500'000'000);
  grpc::Status s = TryCreateTable(request);
  EXPECT_EQ(s.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("max_age"));
}

TEST_F(RefusalTest, AHugeNameGetsABoundedError) {
  // A 64 KiB table id: refused naming the field, with the name cut short
  // (echoed whole, the status would not fit in the trailers).
  v2::ReadRowsRequest request;
  request.set_table_name(TableName(std::string(64 * 1024, 't')));
  ReadOutcome out = ReadRowsRaw(*data_, request);
  EXPECT_EQ(out.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(out.status.error_message(), HasSubstr("table_name: 'ttt"));
  EXPECT_THAT(out.status.error_message(), HasSubstr("(65536 bytes)"));
  EXPECT_LT(out.status.error_message().size(), 1024u);
  // The same for a huge project id.
  request.set_table_name("projects/" + std::string(64 * 1024, 'p') +
                         "/instances/i/tables/t");
  out = ReadRowsRaw(*data_, request);
  EXPECT_EQ(out.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(out.status.error_message(),
              HasSubstr("is not a valid project id"));
  EXPECT_LT(out.status.error_message().size(), 1024u);
}

TEST_F(RefusalTest, MalformedIdsAreInvalidArgumentAndAbsentOnesNotFound) {
  CreateTable("t");
  for (const std::string& name :
       {std::string("projects/../instances/i/tables/t"),
        std::string("projects/p/instances/\0/tables/t", 36),
        std::string("projects/p/instances/-/tables/t"),
        std::string("projects/p/instances/i/tables/a b"),
        std::string("projects/p/instances/i/tables/") + std::string(51, 'x')}) {
    grpc::Status s = MutateNamed(name);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), ::testing::StartsWith("table_name: "));
  }
  // Well-formed, but no such table.
  EXPECT_GRPC_CODE(MutateNamed(TableName("nope")), grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace btsim::api_test
