// InstanceAdminService: google.bigtable.admin.v2.BigtableInstanceAdmin over
// the InstanceRegistry — instances, their clusters and app profiles.
//
// Instances are implicit, as in the official emulator: an instance exists
// once some request names it, with the clusters of the server's
// configuration. Every long-running operation (CreateInstance,
// CreateCluster, UpdateCluster, PartialUpdateCluster, UpdateAppProfile) has
// finished when the call returns: the Operation comes back done, and is
// recorded in the OperationsService so that GetOperation answers it too.
// Methods not declared in our proto answer UNIMPLEMENTED (gRPC's default).
#ifndef BTSIM_API_INSTANCE_ADMIN_SERVICE_H_
#define BTSIM_API_INSTANCE_ADMIN_SERVICE_H_

#include <mutex>

#include "api/instance_registry.h"
#include "api/operations_service.h"
#include "google/bigtable/admin/v2/bigtable_instance_admin.grpc.pb.h"

namespace btsim::api {

class InstanceAdminService final
    : public google::bigtable::admin::v2::BigtableInstanceAdmin::Service {
 public:
  // `registry` and `operations` must outlive the service.
  InstanceAdminService(InstanceRegistry& registry,
                       OperationsService& operations)
      : registry_(registry), operations_(operations) {}

  grpc::Status CreateInstance(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::CreateInstanceRequest* request,
      google::longrunning::Operation* response) override;
  grpc::Status GetInstance(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::GetInstanceRequest* request,
      google::bigtable::admin::v2::Instance* response) override;
  grpc::Status ListInstances(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::ListInstancesRequest* request,
      google::bigtable::admin::v2::ListInstancesResponse* response) override;
  grpc::Status DeleteInstance(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::DeleteInstanceRequest* request,
      google::protobuf::Empty* response) override;

  grpc::Status CreateCluster(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::CreateClusterRequest* request,
      google::longrunning::Operation* response) override;
  grpc::Status GetCluster(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::GetClusterRequest* request,
      google::bigtable::admin::v2::Cluster* response) override;
  grpc::Status ListClusters(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::ListClustersRequest* request,
      google::bigtable::admin::v2::ListClustersResponse* response) override;
  grpc::Status UpdateCluster(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::Cluster* request,
      google::longrunning::Operation* response) override;
  grpc::Status PartialUpdateCluster(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::PartialUpdateClusterRequest* request,
      google::longrunning::Operation* response) override;
  grpc::Status DeleteCluster(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::DeleteClusterRequest* request,
      google::protobuf::Empty* response) override;

  grpc::Status CreateAppProfile(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::CreateAppProfileRequest* request,
      google::bigtable::admin::v2::AppProfile* response) override;
  grpc::Status GetAppProfile(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::GetAppProfileRequest* request,
      google::bigtable::admin::v2::AppProfile* response) override;
  grpc::Status ListAppProfiles(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::ListAppProfilesRequest* request,
      google::bigtable::admin::v2::ListAppProfilesResponse* response) override;
  grpc::Status UpdateAppProfile(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::UpdateAppProfileRequest* request,
      google::longrunning::Operation* response) override;
  grpc::Status DeleteAppProfile(
      grpc::ServerContext* context,
      const google::bigtable::admin::v2::DeleteAppProfileRequest* request,
      google::protobuf::Empty* response) override;

 private:
  InstanceRegistry& registry_;
  OperationsService& operations_;
  // Serialises CreateInstance, so that of two concurrent creations of one
  // instance exactly one succeeds.
  std::mutex create_instance_mu_;
};

}  // namespace btsim::api

#endif  // BTSIM_API_INSTANCE_ADMIN_SERVICE_H_
