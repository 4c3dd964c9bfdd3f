// Table.deletion_protection and UpdateTable, through the table admin and
// Operations stubs.
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "google/longrunning/operations.grpc.pb.h"
#include "tests/api/api_test_util.h"

namespace btsim::api_test {
namespace {

using ::testing::HasSubstr;

class DeletionProtectionTest : public ServerTest {
 protected:
  grpc::Status Update(const std::string& table, bool protect,
                      const std::vector<std::string>& paths,
                      google::longrunning::Operation* out = nullptr) {
    admin::UpdateTableRequest request;
    request.mutable_table()->set_name(table);
    request.mutable_table()->set_deletion_protection(protect);
    for (const std::string& path : paths) {
      request.mutable_update_mask()->add_paths(path);
    }
    grpc::ClientContext context;
    google::longrunning::Operation op;
    grpc::Status s = admin_->UpdateTable(&context, request, &op);
    if (out != nullptr) *out = op;
    return s;
  }
  bool Protected(const std::string& id) {
    admin::GetTableRequest request;
    request.set_name(TableName(id));
    grpc::ClientContext context;
    admin::Table table;
    EXPECT_GRPC_OK(admin_->GetTable(&context, request, &table));
    return table.deletion_protection();
  }
  grpc::Status Delete(const std::string& id) {
    admin::DeleteTableRequest request;
    request.set_name(TableName(id));
    grpc::ClientContext context;
    google::protobuf::Empty empty;
    return admin_->DeleteTable(&context, request, &empty);
  }
  grpc::Status ModifyFamily(const std::string& id, const std::string& family,
                            bool drop) {
    admin::ModifyColumnFamiliesRequest request;
    request.set_name(TableName(id));
    auto* m = request.add_modifications();
    m->set_id(family);
    if (drop) {
      m->set_drop(true);
    } else {
      m->mutable_create();
    }
    grpc::ClientContext context;
    admin::Table table;
    return admin_->ModifyColumnFamilies(&context, request, &table);
  }
};

TEST_F(DeletionProtectionTest, AProtectedTableRefusesDeletionUntilUnprotected) {
  admin::CreateTableRequest create;
  create.set_parent(kInstance);
  create.set_table_id("t");
  (*create.mutable_table()->mutable_column_families())["cf"];
  create.mutable_table()->set_deletion_protection(true);
  admin::Table created;
  ASSERT_GRPC_OK(TryCreateTable(create, &created));
  EXPECT_TRUE(created.deletion_protection());
  EXPECT_TRUE(Protected("t"));

  grpc::Status s = Delete("t");
  EXPECT_GRPC_CODE(s, grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("protected from deletion"));
  s = ModifyFamily("t", "cf", /*drop=*/true);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("modifications[0].drop"));
  // Adding a family and writing data are still allowed.
  EXPECT_GRPC_OK(ModifyFamily("t", "more", /*drop=*/false));
  Set("t", "r", "cf", "q", "v");

  google::longrunning::Operation op;
  ASSERT_GRPC_OK(Update(TableName("t"), false, {"deletion_protection"}, &op));
  EXPECT_TRUE(op.done());
  admin::Table response;
  ASSERT_TRUE(op.response().UnpackTo(&response));
  EXPECT_EQ(response.name(), TableName("t"));
  EXPECT_FALSE(response.deletion_protection());
  admin::UpdateTableMetadata metadata;
  ASSERT_TRUE(op.metadata().UnpackTo(&metadata));
  EXPECT_EQ(metadata.name(), TableName("t"));
  EXPECT_GT(metadata.end_time().seconds(), 0);
  // The operation can be fetched again.
  auto operations = google::longrunning::Operations::NewStub(channel_);
  google::longrunning::GetOperationRequest get;
  get.set_name(op.name());
  google::longrunning::Operation again;
  grpc::ClientContext context;
  EXPECT_GRPC_OK(operations->GetOperation(&context, get, &again));
  EXPECT_TRUE(again.done());

  EXPECT_FALSE(Protected("t"));
  EXPECT_GRPC_OK(ModifyFamily("t", "more", /*drop=*/true));
  EXPECT_GRPC_OK(Delete("t"));
  // A new table of the same id starts unprotected.
  CreateTable("t");
  EXPECT_FALSE(Protected("t"));
  EXPECT_GRPC_OK(Delete("t"));
}

TEST_F(DeletionProtectionTest, UpdateTableProtectsAndIsInstanceWide) {
  TearDown();
  StartServer(ThreeClusterOptions(std::chrono::milliseconds(10)));
  CreateTable("t");
  EXPECT_FALSE(Protected("t"));
  ASSERT_GRPC_OK(Update(TableName("t"), true, {"deletion_protection"}));
  EXPECT_TRUE(Protected("t"));
  EXPECT_GRPC_CODE(Delete("t"), grpc::StatusCode::FAILED_PRECONDITION);
  // With c1 down, admin calls are served by another cluster: the table is
  // protected there too.
  {
    auto locked = server_->registry().Lock(kInstance);
    ASSERT_TRUE(locked.ok());
    ASSERT_TRUE(locked->instance->SetDown("c1", true).ok());
    ASSERT_EQ(*locked->instance->AnyLiveClusterId(), "c2");
  }
  EXPECT_TRUE(Protected("t"));
  EXPECT_GRPC_CODE(Delete("t"), grpc::StatusCode::FAILED_PRECONDITION);
}

TEST_F(DeletionProtectionTest, UpdateTableRefusals) {
  CreateTable("t");
  grpc::Status s = Update(TableName("t"), true, {});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("update_mask"));
  s = Update(TableName("t"), true, {"granularity"});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("'granularity'"));
  for (const char* path : {"change_stream_config", "column_families",
                           "automated_backup_policy", "row_key_schema"}) {
    s = Update(TableName("t"), true, {"deletion_protection", path});
    EXPECT_GRPC_CODE(s, grpc::StatusCode::UNIMPLEMENTED);
    EXPECT_THAT(s.error_message(), HasSubstr(path));
  }
  EXPECT_GRPC_CODE(Update(TableName("absent"), true, {"deletion_protection"}),
                   grpc::StatusCode::NOT_FOUND);
  s = Update("projects/p/instances/i/tablez/t", true, {"deletion_protection"});
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("table.name"));
  // Nothing changed.
  EXPECT_FALSE(Protected("t"));
}

}  // namespace
}  // namespace btsim::api_test
