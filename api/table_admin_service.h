// TableAdminService: google.bigtable.admin.v2.BigtableTableAdmin over the
// engine (tables, column families, deletion protection, DropRowRange,
// consistency tokens, backups). UpdateTable, CreateBackup, RestoreTable and
// CopyBackup finish before they return; their operations are recorded in
// the OperationsService. The backup methods are in api/backup_admin.cc.
// Methods not declared in our proto answer UNIMPLEMENTED (gRPC's default).
#ifndef BTSIM_API_TABLE_ADMIN_SERVICE_H_
#define BTSIM_API_TABLE_ADMIN_SERVICE_H_

#include <string>
#include <utility>

#include "api/instance_registry.h"
#include "api/operations_service.h"
#include "google/bigtable/admin/v2/bigtable_table_admin.grpc.pb.h"

namespace btsim::api {

// CreateTable and ModifyColumnFamilies, whose GC rules may nest deeper than
// protobuf parses by default, are raw methods: they parse the request
// themselves (api/raw_messages.h), so that a rule nested too deep is
// INVALID_ARGUMENT naming its field rather than the INTERNAL gRPC answers
// for bytes it cannot parse.
namespace table_admin_internal {
using Admin = google::bigtable::admin::v2::BigtableTableAdmin;
using Base = Admin::WithRawCallbackMethod_CreateTable<
    Admin::WithRawCallbackMethod_ModifyColumnFamilies<Admin::Service>>;
}  // namespace table_admin_internal

class TableAdminService final : public table_admin_internal::Base {
 public:
  // `registry` and `operations` must outlive the service.
  TableAdminService(InstanceRegistry& registry, OperationsService& operations)
      : registry_(registry), operations_(operations) {}
  grpc::ServerUnaryReactor* CreateTable(grpc::CallbackServerContext* context,
                                        const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override;
  grpc::Status ListTables(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::ListTablesRequest* request,
      google::bigtable::admin::v2::ListTablesResponse* response) override;
  grpc::Status GetTable(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::GetTableRequest* request,
      google::bigtable::admin::v2::Table* response) override;
  grpc::Status DeleteTable(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::DeleteTableRequest* request,
      google::protobuf::Empty* response) override;
  grpc::Status UpdateTable(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::UpdateTableRequest* request,
      google::longrunning::Operation* response) override;
  grpc::ServerUnaryReactor* ModifyColumnFamilies(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
      grpc::ByteBuffer* response) override;
  grpc::Status DropRowRange(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::DropRowRangeRequest* request,
      google::protobuf::Empty* response) override;
  grpc::Status GenerateConsistencyToken(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::GenerateConsistencyTokenRequest*
          request,
      google::bigtable::admin::v2::GenerateConsistencyTokenResponse* response)
      override;
  grpc::Status CheckConsistency(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::CheckConsistencyRequest* request,
      google::bigtable::admin::v2::CheckConsistencyResponse* response) override;

  // ---- Backups (api/backup_admin.cc) ----
  grpc::Status CreateBackup(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::CreateBackupRequest* request,
      google::longrunning::Operation* response) override;
  grpc::Status GetBackup(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::GetBackupRequest* request,
      google::bigtable::admin::v2::Backup* response) override;
  grpc::Status ListBackups(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::ListBackupsRequest* request,
      google::bigtable::admin::v2::ListBackupsResponse* response) override;
  grpc::Status UpdateBackup(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::UpdateBackupRequest* request,
      google::bigtable::admin::v2::Backup* response) override;
  grpc::Status DeleteBackup(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::DeleteBackupRequest* request,
      google::protobuf::Empty* response) override;
  grpc::Status RestoreTable(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::RestoreTableRequest* request,
      google::longrunning::Operation* response) override;
  grpc::Status CopyBackup(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::CopyBackupRequest* request,
      google::longrunning::Operation* response) override;

 private:
  Status DoCreateTable(
      const google::bigtable::admin::v2::CreateTableRequest* request,
      google::bigtable::admin::v2::Table* response);
  Status DoModifyColumnFamilies(
      const google::bigtable::admin::v2::ModifyColumnFamiliesRequest* request,
      google::bigtable::admin::v2::Table* response);

  InstanceRegistry& registry_;
  OperationsService& operations_;
};

}  // namespace btsim::api

#endif  // BTSIM_API_TABLE_ADMIN_SERVICE_H_
