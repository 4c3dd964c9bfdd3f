// BigtableService: google.bigtable.v2.Bigtable over the engine. Translates
// requests, takes the instance lock around each engine call, and streams
// ReadRows in bounded batches so a slow reader never holds the lock.
// Methods not declared in our proto answer UNIMPLEMENTED (gRPC's default).
#ifndef BTSIM_API_BIGTABLE_SERVICE_H_
#define BTSIM_API_BIGTABLE_SERVICE_H_

#include "api/instance_registry.h"
#include "google/bigtable/v2/bigtable.grpc.pb.h"

namespace btsim::api {

class BigtableService final : public google::bigtable::v2::Bigtable::Service {
 public:
  // `registry` must outlive the service.
  explicit BigtableService(InstanceRegistry& registry) : registry_(registry) {}

  grpc::Status ReadRows(
      grpc::ServerContext* context,
      const google::bigtable::v2::ReadRowsRequest* request,
      grpc::ServerWriter<google::bigtable::v2::ReadRowsResponse>* writer)
      override;
  grpc::Status SampleRowKeys(
      grpc::ServerContext* context,
      const google::bigtable::v2::SampleRowKeysRequest* request,
      grpc::ServerWriter<google::bigtable::v2::SampleRowKeysResponse>* writer)
      override;
  grpc::Status MutateRow(
      grpc::ServerContext* context,
      const google::bigtable::v2::MutateRowRequest* request,
      google::bigtable::v2::MutateRowResponse* response) override;
  grpc::Status MutateRows(
      grpc::ServerContext* context,
      const google::bigtable::v2::MutateRowsRequest* request,
      grpc::ServerWriter<google::bigtable::v2::MutateRowsResponse>* writer)
      override;
  grpc::Status CheckAndMutateRow(
      grpc::ServerContext* context,
      const google::bigtable::v2::CheckAndMutateRowRequest* request,
      google::bigtable::v2::CheckAndMutateRowResponse* response) override;
  grpc::Status PingAndWarm(
      grpc::ServerContext* context,
      const google::bigtable::v2::PingAndWarmRequest* request,
      google::bigtable::v2::PingAndWarmResponse* response) override;
  grpc::Status ReadModifyWriteRow(
      grpc::ServerContext* context,
      const google::bigtable::v2::ReadModifyWriteRowRequest* request,
      google::bigtable::v2::ReadModifyWriteRowResponse* response) override;

 private:
  InstanceRegistry& registry_;
};

}  // namespace btsim::api

#endif  // BTSIM_API_BIGTABLE_SERVICE_H_
