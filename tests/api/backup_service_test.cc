// The backup methods of the table admin service, through the gRPC stubs:
// CreateBackup, GetBackup, ListBackups (filters, paging), UpdateBackup,
// DeleteBackup, RestoreTable and CopyBackup, and their refusals.
#include <chrono>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "google/longrunning/operations.grpc.pb.h"
#include "tests/api/api_test_util.h"

namespace btsim::api_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kC1[] = "projects/p/instances/i/clusters/c1";
constexpr char kC2[] = "projects/p/instances/i/clusters/c2";

google::protobuf::Timestamp FromNow(std::chrono::hours h) {
  google::protobuf::Timestamp t;
  t.set_seconds(std::chrono::duration_cast<std::chrono::seconds>(
                    std::chrono::system_clock::now().time_since_epoch() + h)
                    .count());
  return t;
}

class BackupServiceTest : public ServerTest {
 protected:
  void SetUp() override {
    StartServer(ThreeClusterOptions(std::chrono::milliseconds(1)));
    CreateTable("t");
    Set("t", "r1", "cf", "q", "v1");
  }

  grpc::Status CreateBackup(const std::string& cluster, const std::string& id,
                            std::chrono::hours expire,
                            google::longrunning::Operation* op = nullptr,
                            const std::string& table = "t") {
    admin::CreateBackupRequest request;
    request.set_parent(cluster);
    request.set_backup_id(id);
    request.mutable_backup()->set_source_table(TableName(table));
    *request.mutable_backup()->mutable_expire_time() = FromNow(expire);
    grpc::ClientContext context;
    google::longrunning::Operation unused;
    return admin_->CreateBackup(&context, request, op ? op : &unused);
  }
  grpc::Status Get(const std::string& name, admin::Backup* out) {
    admin::GetBackupRequest request;
    request.set_name(name);
    grpc::ClientContext context;
    return admin_->GetBackup(&context, request, out);
  }
  grpc::Status List(const std::string& parent, const std::string& filter,
                    admin::ListBackupsResponse* out, int page_size = 0,
                    const std::string& token = "") {
    admin::ListBackupsRequest request;
    request.set_parent(parent);
    request.set_filter(filter);
    request.set_page_size(page_size);
    request.set_page_token(token);
    grpc::ClientContext context;
    return admin_->ListBackups(&context, request, out);
  }
  std::vector<std::string> Names(const std::string& parent,
                                 const std::string& filter) {
    admin::ListBackupsResponse response;
    EXPECT_GRPC_OK(List(parent, filter, &response));
    std::vector<std::string> names;
    for (const auto& b : response.backups()) names.push_back(b.name());
    return names;
  }
  grpc::Status Restore(const std::string& backup, const std::string& table,
                       google::longrunning::Operation* op = nullptr) {
    admin::RestoreTableRequest request;
    request.set_parent(kInstance);
    request.set_table_id(table);
    request.set_backup(backup);
    grpc::ClientContext context;
    google::longrunning::Operation unused;
    return admin_->RestoreTable(&context, request, op ? op : &unused);
  }
};

TEST_F(BackupServiceTest, CreateGetRestoreAndDelete) {
  google::longrunning::Operation op;
  ASSERT_GRPC_OK(CreateBackup(kC1, "b1", std::chrono::hours(24), &op));
  EXPECT_TRUE(op.done());
  admin::Backup made;
  ASSERT_TRUE(op.response().UnpackTo(&made));
  admin::CreateBackupMetadata metadata;
  ASSERT_TRUE(op.metadata().UnpackTo(&metadata));
  const std::string name = std::string(kC1) + "/backups/b1";
  EXPECT_EQ(made.name(), name);
  EXPECT_EQ(metadata.name(), name);
  EXPECT_EQ(metadata.source_table(), TableName("t"));

  admin::Backup got;
  ASSERT_GRPC_OK(Get(name, &got));
  EXPECT_EQ(got.state(), admin::Backup::READY);
  EXPECT_EQ(got.source_table(), TableName("t"));
  EXPECT_GT(got.size_bytes(), 0);
  EXPECT_TRUE(got.has_start_time());

  // The op is answered by the Operations service too.
  auto ops = google::longrunning::Operations::NewStub(channel_);
  google::longrunning::GetOperationRequest get_op;
  get_op.set_name(op.name());
  google::longrunning::Operation again;
  grpc::ClientContext op_context;
  ASSERT_GRPC_OK(ops->GetOperation(&op_context, get_op, &again));

  Set("t", "r2", "cf", "q", "v2");  // after the backup
  google::longrunning::Operation restore_op;
  ASSERT_GRPC_OK(Restore(name, "restored", &restore_op));
  admin::RestoreTableMetadata restore_metadata;
  ASSERT_TRUE(restore_op.metadata().UnpackTo(&restore_metadata));
  EXPECT_EQ(restore_metadata.name(), TableName("restored"));
  EXPECT_EQ(restore_metadata.backup_info().backup(), name);
  const auto rows = ReadTable("restored");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].key, "r1");
  EXPECT_GRPC_CODE(Restore(name, "restored"), grpc::StatusCode::ALREADY_EXISTS);

  admin::DeleteBackupRequest del;
  del.set_name(name);
  grpc::ClientContext del_context;
  google::protobuf::Empty empty;
  ASSERT_GRPC_OK(admin_->DeleteBackup(&del_context, del, &empty));
  EXPECT_GRPC_CODE(Get(name, &got), grpc::StatusCode::NOT_FOUND);
  EXPECT_GRPC_CODE(Restore(name, "again"), grpc::StatusCode::NOT_FOUND);
}

TEST_F(BackupServiceTest, ListFiltersAndPages) {
  ASSERT_GRPC_OK(CreateBackup(kC1, "a", std::chrono::hours(24)));
  ASSERT_GRPC_OK(CreateBackup(kC1, "b", std::chrono::hours(48)));
  ASSERT_GRPC_OK(CreateBackup(kC2, "c", std::chrono::hours(24)));
  const std::string all = "projects/p/instances/i/clusters/-";
  EXPECT_EQ(Names(all, "").size(), 3u);
  EXPECT_THAT(Names(kC1, ""), ElementsAre(std::string(kC1) + "/backups/a",
                                          std::string(kC1) + "/backups/b"));
  EXPECT_THAT(Names(all, "name:backups/c"),
              ElementsAre(std::string(kC2) + "/backups/c"));
  EXPECT_EQ(Names(all, "state = READY AND source_table:tables/t").size(), 3u);
  EXPECT_EQ(Names(kC1, "size_bytes > 0").size(), 2u);
  admin::ListBackupsResponse future;
  EXPECT_GRPC_OK(List(all, "expire_time > \"2100-01-01T00:00:00Z\"", &future));
  EXPECT_EQ(future.backups_size(), 0);

  admin::ListBackupsResponse page;
  ASSERT_GRPC_OK(List(all, "", &page, 2));
  EXPECT_EQ(page.backups_size(), 2);
  ASSERT_FALSE(page.next_page_token().empty());
  admin::ListBackupsResponse rest;
  ASSERT_GRPC_OK(List(all, "", &rest, 2, page.next_page_token()));
  ASSERT_EQ(rest.backups_size(), 1);
  EXPECT_EQ(rest.backups(0).name(), std::string(kC2) + "/backups/c");

  admin::ListBackupsResponse bad;
  grpc::Status s = List(all, "name = a OR name = b", &bad);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("filter"));
  EXPECT_GRPC_CODE(List(all, "colour = red", &bad),
                   grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_GRPC_CODE(List(std::string(kInstance) + "/clusters/c9", "", &bad),
                   grpc::StatusCode::NOT_FOUND);
}

TEST_F(BackupServiceTest, UpdateExpireTimeAndCopy) {
  ASSERT_GRPC_OK(CreateBackup(kC1, "b", std::chrono::hours(24)));
  const std::string name = std::string(kC1) + "/backups/b";
  admin::UpdateBackupRequest update;
  update.mutable_backup()->set_name(name);
  *update.mutable_backup()->mutable_expire_time() =
      FromNow(std::chrono::hours(72));
  update.mutable_update_mask()->add_paths("expire_time");
  admin::Backup updated;
  {
    grpc::ClientContext context;
    ASSERT_GRPC_OK(admin_->UpdateBackup(&context, update, &updated));
  }
  EXPECT_EQ(updated.expire_time().seconds(),
            update.backup().expire_time().seconds());
  *update.mutable_backup()->mutable_expire_time() =
      FromNow(std::chrono::hours(24 * 100));
  {
    grpc::ClientContext context;
    grpc::Status s = admin_->UpdateBackup(&context, update, &updated);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("backup.expire_time"));
  }
  update.mutable_update_mask()->set_paths(0, "size_bytes");
  {
    grpc::ClientContext context;
    EXPECT_GRPC_CODE(admin_->UpdateBackup(&context, update, &updated),
                     grpc::StatusCode::INVALID_ARGUMENT);
  }

  admin::CopyBackupRequest copy;
  copy.set_parent(kC2);
  copy.set_backup_id("copy");
  copy.set_source_backup(name);
  *copy.mutable_expire_time() = FromNow(std::chrono::hours(24));
  google::longrunning::Operation op;
  {
    grpc::ClientContext context;
    ASSERT_GRPC_OK(admin_->CopyBackup(&context, copy, &op));
  }
  admin::CopyBackupMetadata metadata;
  ASSERT_TRUE(op.metadata().UnpackTo(&metadata));
  EXPECT_EQ(metadata.name(), std::string(kC2) + "/backups/copy");
  EXPECT_EQ(metadata.source_backup_info().backup(), name);
  admin::Backup got;
  ASSERT_GRPC_OK(Get(std::string(kC2) + "/backups/copy", &got));
  EXPECT_EQ(got.source_backup(), name);
  {
    grpc::ClientContext context;
    EXPECT_GRPC_CODE(admin_->CopyBackup(&context, copy, &op),
                     grpc::StatusCode::ALREADY_EXISTS);
  }
}

TEST_F(BackupServiceTest, Refusals) {
  grpc::Status s = CreateBackup(kC1, "no good", std::chrono::hours(24));
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("backup_id"));
  s = CreateBackup(kC1, "b", std::chrono::hours(1));
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("backup.expire_time"));
  EXPECT_GRPC_CODE(CreateBackup(kC1, "b", std::chrono::hours(24 * 91)),
                   grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_GRPC_CODE(CreateBackup(std::string(kInstance) + "/clusters/c9", "b",
                                std::chrono::hours(24)),
                   grpc::StatusCode::NOT_FOUND);
  EXPECT_GRPC_CODE(
      CreateBackup(kC1, "b", std::chrono::hours(24), nullptr, "missing"),
      grpc::StatusCode::NOT_FOUND);
  ASSERT_GRPC_OK(CreateBackup(kC1, "b", std::chrono::hours(24)));
  EXPECT_GRPC_CODE(CreateBackup(kC1, "b", std::chrono::hours(24)),
                   grpc::StatusCode::ALREADY_EXISTS);
  admin::Backup got;
  s = Get(std::string(kC1) + "/tables/b", &got);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("name"));
  // A name echoed in an error is bounded.
  s = Get(std::string(kC1) + "/backups/" + std::string(5000, 'x'), &got);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_LT(s.error_message().size(), 1000u);
  EXPECT_GRPC_CODE(Restore(std::string(kC1) + "/backups/b", "bad id!"),
                   grpc::StatusCode::INVALID_ARGUMENT);
}

}  // namespace
}  // namespace btsim::api_test
