// TableAdminService: google.bigtable.admin.v2.BigtableTableAdmin over the
// engine (tables, column families, DropRowRange, consistency tokens).
// Methods not declared in our proto answer UNIMPLEMENTED (gRPC's default).
#ifndef BTSIM_API_TABLE_ADMIN_SERVICE_H_
#define BTSIM_API_TABLE_ADMIN_SERVICE_H_

#include "api/instance_registry.h"
#include "google/bigtable/admin/v2/bigtable_table_admin.grpc.pb.h"

namespace btsim::api {

class TableAdminService final
    : public google::bigtable::admin::v2::BigtableTableAdmin::Service {
 public:
  // `registry` must outlive the service.
  explicit TableAdminService(InstanceRegistry& registry)
      : registry_(registry) {}

  grpc::Status CreateTable(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::CreateTableRequest* request,
      google::bigtable::admin::v2::Table* response) override;
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
  grpc::Status ModifyColumnFamilies(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::ModifyColumnFamiliesRequest* request,
      google::bigtable::admin::v2::Table* response) override;
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

 private:
  InstanceRegistry& registry_;
};

}  // namespace btsim::api

#endif  // BTSIM_API_TABLE_ADMIN_SERVICE_H_
