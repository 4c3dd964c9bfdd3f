// The InstanceAdminTest fixture shared by the instance_admin_*_test.cc files:
// a three-cluster server with instance admin and operations stubs.
#ifndef BTSIM_TESTS_API_INSTANCE_ADMIN_TEST_UTIL_H_
#define BTSIM_TESTS_API_INSTANCE_ADMIN_TEST_UTIL_H_

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "google/bigtable/admin/v2/bigtable_instance_admin.grpc.pb.h"
#include "google/longrunning/operations.grpc.pb.h"
#include "tests/api/api_test_util.h"
#include "tests/api/chunk_merger.h"

namespace btsim::api_test {

namespace lro = ::google::longrunning;

// A server whose instances have three clusters (c1 and c2 in one region, c3
// in another) and a fixed 2 s replication delay, so that anything read from
// another cluster right away came from seeding, not from replication.
class InstanceAdminTest : public ServerTest {
 protected:
  void SetUp() override {
    StartServer(ThreeClusterOptions(std::chrono::seconds(2)));
    instances_ = admin::BigtableInstanceAdmin::NewStub(channel_);
    operations_ = lro::Operations::NewStub(channel_);
  }

  void TearDown() override {
    instances_.reset();
    operations_.reset();
    ServerTest::TearDown();
  }

  static std::string ClusterName(const std::string& id) {
    return std::string(kInstance) + "/clusters/" + id;
  }
  static std::string ProfileName(const std::string& id) {
    return std::string(kInstance) + "/appProfiles/" + id;
  }

  grpc::Status ListClusters(const std::string& parent,
                            admin::ListClustersResponse* out) {
    admin::ListClustersRequest request;
    request.set_parent(parent);
    grpc::ClientContext context;
    return instances_->ListClusters(&context, request, out);
  }

  // The short ids of the listed clusters.
  std::vector<std::string> ClusterIds() {
    admin::ListClustersResponse response;
    EXPECT_GRPC_OK(ListClusters(kInstance, &response));
    std::vector<std::string> ids;
    for (const admin::Cluster& c : response.clusters()) {
      ids.push_back(c.name().substr(c.name().rfind('/') + 1));
    }
    return ids;
  }

  grpc::Status GetCluster(const std::string& name, admin::Cluster* out) {
    admin::GetClusterRequest request;
    request.set_name(name);
    grpc::ClientContext context;
    return instances_->GetCluster(&context, request, out);
  }

  grpc::Status CreateCluster(const std::string& id, const std::string& zone,
                             int nodes, lro::Operation* out = nullptr) {
    admin::CreateClusterRequest request;
    request.set_parent(kInstance);
    request.set_cluster_id(id);
    request.mutable_cluster()->set_location("projects/p/locations/" + zone);
    request.mutable_cluster()->set_serve_nodes(nodes);
    request.mutable_cluster()->set_default_storage_type(admin::SSD);
    return CreateCluster(request, out);
  }
  grpc::Status CreateCluster(const admin::CreateClusterRequest& request,
                             lro::Operation* out = nullptr) {
    grpc::ClientContext context;
    lro::Operation op;
    grpc::Status s = instances_->CreateCluster(&context, request, &op);
    if (out != nullptr) *out = op;
    return s;
  }

  grpc::Status DeleteCluster(const std::string& id) {
    admin::DeleteClusterRequest request;
    request.set_name(ClusterName(id));
    grpc::ClientContext context;
    google::protobuf::Empty empty;
    return instances_->DeleteCluster(&context, request, &empty);
  }

  grpc::Status PartialUpdateCluster(
      const admin::PartialUpdateClusterRequest& request,
      lro::Operation* out = nullptr) {
    grpc::ClientContext context;
    lro::Operation op;
    grpc::Status s = instances_->PartialUpdateCluster(&context, request, &op);
    if (out != nullptr) *out = op;
    return s;
  }

  static admin::AppProfile SingleCluster(const std::string& cluster,
                                         bool transactional,
                                         const std::string& description = "") {
    admin::AppProfile p;
    p.set_description(description);
    p.mutable_single_cluster_routing()->set_cluster_id(cluster);
    p.mutable_single_cluster_routing()->set_allow_transactional_writes(
        transactional);
    return p;
  }

  grpc::Status CreateProfile(const std::string& id,
                             const admin::AppProfile& profile,
                             bool ignore_warnings = false,
                             admin::AppProfile* out = nullptr) {
    admin::CreateAppProfileRequest request;
    request.set_parent(kInstance);
    request.set_app_profile_id(id);
    *request.mutable_app_profile() = profile;
    request.set_ignore_warnings(ignore_warnings);
    grpc::ClientContext context;
    admin::AppProfile created;
    grpc::Status s = instances_->CreateAppProfile(&context, request, &created);
    if (out != nullptr) *out = created;
    return s;
  }

  grpc::Status GetProfile(const std::string& id, admin::AppProfile* out) {
    admin::GetAppProfileRequest request;
    request.set_name(ProfileName(id));
    grpc::ClientContext context;
    return instances_->GetAppProfile(&context, request, out);
  }

  grpc::Status ListProfiles(const admin::ListAppProfilesRequest& request,
                            admin::ListAppProfilesResponse* out) {
    grpc::ClientContext context;
    return instances_->ListAppProfiles(&context, request, out);
  }

  grpc::Status UpdateProfile(const admin::UpdateAppProfileRequest& request,
                             lro::Operation* out = nullptr) {
    grpc::ClientContext context;
    lro::Operation op;
    grpc::Status s = instances_->UpdateAppProfile(&context, request, &op);
    if (out != nullptr) *out = op;
    return s;
  }

  grpc::Status DeleteProfile(const std::string& id, bool ignore_warnings) {
    admin::DeleteAppProfileRequest request;
    request.set_name(ProfileName(id));
    request.set_ignore_warnings(ignore_warnings);
    grpc::ClientContext context;
    google::protobuf::Empty empty;
    return instances_->DeleteAppProfile(&context, request, &empty);
  }

  grpc::Status GetOperation(const std::string& name, lro::Operation* out) {
    lro::GetOperationRequest request;
    request.set_name(name);
    grpc::ClientContext context;
    return operations_->GetOperation(&context, request, out);
  }

  // Reads a whole table through `profile`.
  std::vector<MergedRow> ReadThrough(const std::string& table,
                                     const std::string& profile) {
    v2::ReadRowsRequest request;
    request.set_table_name(TableName(table));
    request.set_app_profile_id(profile);
    return ReadAll(*data_, request);
  }

  grpc::Status MutateThrough(const std::string& table, const std::string& key,
                             const std::string& profile,
                             const std::string& value) {
    v2::MutateRowRequest request;
    request.set_table_name(TableName(table));
    request.set_row_key(key);
    request.set_app_profile_id(profile);
    *request.add_mutations() = SetCellMutation("cf", "q", value);
    grpc::ClientContext context;
    v2::MutateRowResponse response;
    return data_->MutateRow(&context, request, &response);
  }

  grpc::Status CheckAndMutate(const std::string& profile) {
    v2::CheckAndMutateRowRequest request;
    request.set_table_name(TableName("t"));
    request.set_row_key("r");
    request.set_app_profile_id(profile);
    *request.add_false_mutations() = SetCellMutation("cf", "q", "v");
    grpc::ClientContext context;
    v2::CheckAndMutateRowResponse response;
    return data_->CheckAndMutateRow(&context, request, &response);
  }

  grpc::Status ReadModifyWrite(const std::string& profile) {
    v2::ReadModifyWriteRowRequest request;
    request.set_table_name(TableName("t"));
    request.set_row_key("counter");
    request.set_app_profile_id(profile);
    auto* rule = request.add_rules();
    rule->set_family_name("cf");
    rule->set_column_qualifier("n");
    rule->set_increment_amount(1);
    grpc::ClientContext context;
    v2::ReadModifyWriteRowResponse response;
    return data_->ReadModifyWriteRow(&context, request, &response);
  }

  std::unique_ptr<admin::BigtableInstanceAdmin::Stub> instances_;
  std::unique_ptr<lro::Operations::Stub> operations_;
};

}  // namespace btsim::api_test

#endif  // BTSIM_TESTS_API_INSTANCE_ADMIN_TEST_UTIL_H_
