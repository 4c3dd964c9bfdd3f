// google.bigtable.admin.v2.BigtableInstanceAdmin and
// google.longrunning.Operations through the generated stubs against a real
// server serving a replicated instance, plus the app-profile gating of the
// data API end to end.
#include <chrono>
#include <mutex>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/instance_registry.h"
#include "api/operations_service.h"
#include "google/bigtable/admin/v2/bigtable_instance_admin.grpc.pb.h"
#include "google/longrunning/operations.grpc.pb.h"
#include "tests/api/api_test_util.h"

namespace btsim::api_test {
namespace {

namespace lro = ::google::longrunning;

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kTransactionsRefused[] =
    "Single-row transactions are not allowed by this app profile";

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

// ---------------------------------------------------------------- instances

TEST_F(InstanceAdminTest, GetInstanceDescribesAnyNamedInstance) {
  admin::GetInstanceRequest request;
  request.set_name(kInstance);
  grpc::ClientContext context;
  admin::Instance instance;
  ASSERT_GRPC_OK(instances_->GetInstance(&context, request, &instance));
  EXPECT_EQ(instance.name(), kInstance);
  EXPECT_EQ(instance.display_name(), "i");
  EXPECT_EQ(instance.state(), admin::Instance::READY);
  EXPECT_EQ(instance.type(), admin::Instance::PRODUCTION);

  for (const char* bad :
       {"projects/p", "projects/p/instances/", "projects/p/instances/-", "i"}) {
    request.set_name(bad);
    grpc::ClientContext c;
    EXPECT_GRPC_CODE(instances_->GetInstance(&c, request, &instance),
                     grpc::StatusCode::INVALID_ARGUMENT);
  }
}

TEST_F(InstanceAdminTest, ListInstancesListsTheProjectsInstancesByName) {
  for (const char* name :
       {"projects/p/instances/zeta", "projects/p/instances/alpha",
        "projects/q/instances/other"}) {
    admin::GetInstanceRequest request;
    request.set_name(name);
    grpc::ClientContext context;
    admin::Instance instance;
    ASSERT_GRPC_OK(instances_->GetInstance(&context, request, &instance));
  }
  admin::ListInstancesRequest request;
  request.set_parent("projects/p");
  admin::ListInstancesResponse response;
  {
    grpc::ClientContext context;
    ASSERT_GRPC_OK(instances_->ListInstances(&context, request, &response));
  }
  std::vector<std::string> names;
  for (const admin::Instance& i : response.instances()) {
    names.push_back(i.name());
    EXPECT_EQ(i.state(), admin::Instance::READY);
  }
  EXPECT_THAT(names, ElementsAre("projects/p/instances/alpha",
                                 "projects/p/instances/zeta"));

  request.set_parent("projects/p/instances/i");
  grpc::ClientContext context;
  grpc::Status s = instances_->ListInstances(&context, request, &response);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("parent"));
}

TEST_F(InstanceAdminTest, CreateInstanceIsDoneAtOnceAndRefusesExisting) {
  admin::CreateInstanceRequest request;
  request.set_parent("projects/p");
  request.set_instance_id("fresh");
  request.mutable_instance()->set_display_name("Fresh");
  (*request.mutable_clusters())["x1"].set_location(
      "projects/p/locations/us-west1-a");
  (*request.mutable_clusters())["x1"].set_serve_nodes(1);
  lro::Operation op;
  {
    grpc::ClientContext context;
    ASSERT_GRPC_OK(instances_->CreateInstance(&context, request, &op));
  }
  EXPECT_TRUE(op.done());
  EXPECT_THAT(op.name(), StartsWith("operations/projects/p/instances/fresh"));
  admin::Instance instance;
  ASSERT_TRUE(op.response().UnpackTo(&instance));
  EXPECT_EQ(instance.name(), "projects/p/instances/fresh");
  EXPECT_EQ(instance.state(), admin::Instance::READY);
  admin::CreateInstanceMetadata metadata;
  EXPECT_TRUE(op.metadata().UnpackTo(&metadata));

  // Its clusters are the server's, not the requested ones.
  admin::ListClustersResponse clusters;
  ASSERT_GRPC_OK(ListClusters("projects/p/instances/fresh", &clusters));
  EXPECT_EQ(clusters.clusters_size(), 3);

  {
    grpc::ClientContext context;
    EXPECT_GRPC_CODE(instances_->CreateInstance(&context, request, &op),
                     grpc::StatusCode::ALREADY_EXISTS);
  }
  request.set_instance_id("noclusters");
  request.clear_clusters();
  {
    grpc::ClientContext context;
    grpc::Status s = instances_->CreateInstance(&context, request, &op);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("clusters"));
  }
  (*request.mutable_clusters())["x1"].set_serve_nodes(1);
  request.set_instance_id("bad/id");
  {
    grpc::ClientContext context;
    grpc::Status s = instances_->CreateInstance(&context, request, &op);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("instance_id"));
  }
}

TEST_F(InstanceAdminTest, DeleteInstanceIsUnimplemented) {
  admin::DeleteInstanceRequest request;
  request.set_name(kInstance);
  grpc::ClientContext context;
  google::protobuf::Empty empty;
  EXPECT_GRPC_CODE(instances_->DeleteInstance(&context, request, &empty),
                   grpc::StatusCode::UNIMPLEMENTED);
}

// ----------------------------------------------------------------- clusters

TEST_F(InstanceAdminTest, ListClustersShowsTheThreeClusters) {
  admin::ListClustersResponse response;
  ASSERT_GRPC_OK(ListClusters(kInstance, &response));
  ASSERT_EQ(response.clusters_size(), 3);
  const std::vector<std::pair<std::string, std::string>> want = {
      {"c1", "us-east1-b"}, {"c2", "us-east1-c"}, {"c3", "europe-west1-d"}};
  for (int i = 0; i < 3; ++i) {
    const admin::Cluster& c = response.clusters(i);
    EXPECT_EQ(c.name(), ClusterName(want[i].first));
    EXPECT_EQ(c.location(), "projects/p/locations/" + want[i].second);
    EXPECT_EQ(c.serve_nodes(), 1);
    EXPECT_EQ(c.state(), admin::Cluster::READY);
    EXPECT_EQ(c.default_storage_type(), admin::SSD);
  }
  EXPECT_TRUE(response.failed_locations().empty());

  // "-" lists the clusters of every instance of the project.
  admin::GetInstanceRequest get;
  get.set_name("projects/p/instances/j");
  grpc::ClientContext context;
  admin::Instance instance;
  ASSERT_GRPC_OK(instances_->GetInstance(&context, get, &instance));
  ASSERT_GRPC_OK(ListClusters("projects/p/instances/-", &response));
  ASSERT_EQ(response.clusters_size(), 6);
  EXPECT_EQ(response.clusters(0).name(), ClusterName("c1"));
  EXPECT_EQ(response.clusters(3).name(), "projects/p/instances/j/clusters/c1");

  grpc::Status s = ListClusters("projects/p", &response);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("parent"));
}

TEST_F(InstanceAdminTest, ADownClusterIsDisabled) {
  {
    auto served = server_->registry().GetOrCreate(kInstance);
    ASSERT_TRUE(served.ok());
    std::lock_guard<std::mutex> lock((*served)->mu);
    ASSERT_TRUE((*served)->instance->fabric().SetDown("c2", true).ok());
  }
  admin::Cluster cluster;
  ASSERT_GRPC_OK(GetCluster(ClusterName("c2"), &cluster));
  EXPECT_EQ(cluster.state(), admin::Cluster::DISABLED);
  ASSERT_GRPC_OK(GetCluster(ClusterName("c1"), &cluster));
  EXPECT_EQ(cluster.state(), admin::Cluster::READY);
}

TEST_F(InstanceAdminTest, GetCluster) {
  admin::Cluster cluster;
  ASSERT_GRPC_OK(GetCluster(ClusterName("c3"), &cluster));
  EXPECT_EQ(cluster.location(), "projects/p/locations/europe-west1-d");
  EXPECT_GRPC_CODE(GetCluster(ClusterName("c9"), &cluster),
                   grpc::StatusCode::NOT_FOUND);
  grpc::Status s = GetCluster(std::string(kInstance) + "/tables/c1", &cluster);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("name"));
}

TEST_F(InstanceAdminTest, CreateClusterSeedsItAndIsDoneAtOnce) {
  CreateTable("t");
  ASSERT_GRPC_OK(CreateProfile("to-c1", SingleCluster("c1", false)));
  ASSERT_GRPC_OK(MutateThrough("t", "r1", "to-c1", "v1"));

  lro::Operation op;
  ASSERT_GRPC_OK(CreateCluster("c4", "asia-east1-a", 2, &op));
  EXPECT_TRUE(op.done());
  EXPECT_THAT(op.name(),
              StartsWith("operations/projects/p/instances/i/clusters/c4/"));
  admin::Cluster created;
  ASSERT_TRUE(op.response().UnpackTo(&created));
  EXPECT_EQ(created.name(), ClusterName("c4"));
  EXPECT_EQ(created.location(), "projects/p/locations/asia-east1-a");
  EXPECT_EQ(created.serve_nodes(), 2);
  EXPECT_EQ(created.state(), admin::Cluster::READY);
  admin::CreateClusterMetadata metadata;
  ASSERT_TRUE(op.metadata().UnpackTo(&metadata));
  EXPECT_EQ(metadata.original_request().cluster_id(), "c4");
  EXPECT_TRUE(metadata.tables().contains(TableName("t")));
  EXPECT_THAT(ClusterIds(), ElementsAre("c1", "c2", "c3", "c4"));

  // Seeded: the write is readable in c4 at once, long before the 2 s
  // replication delay could have brought it.
  ASSERT_GRPC_OK(CreateProfile("to-c4", SingleCluster("c4", false)));
  std::vector<MergedRow> rows = ReadThrough("t", "to-c4");
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].key, "r1");
  EXPECT_EQ(rows[0].Cells("cf", "q").at(0).value, "v1");

  // GetOperation answers the same, finished operation.
  lro::Operation polled;
  ASSERT_GRPC_OK(GetOperation(op.name(), &polled));
  EXPECT_TRUE(polled.done());
  EXPECT_EQ(polled.name(), op.name());
}

TEST_F(InstanceAdminTest, CreateClusterRefusals) {
  // A fifth cluster.
  ASSERT_GRPC_OK(CreateCluster("c4", "asia-east1-a", 1));
  grpc::Status s = CreateCluster("c5", "asia-east1-b", 1);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("4 clusters"));
  ASSERT_GRPC_OK(DeleteCluster("c4"));

  EXPECT_GRPC_CODE(CreateCluster("c2", "asia-east1-b", 1),
                   grpc::StatusCode::ALREADY_EXISTS);
  s = CreateCluster("c5", "us-east1-b", 1);  // c1's zone
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("zone"));
  s = CreateCluster("C5", "asia-east1-b", 1);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("cluster_id"));
  s = CreateCluster("c5", "asia-east1-b", 0);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("serve_nodes"));

  admin::CreateClusterRequest request;
  request.set_parent(kInstance);
  request.set_cluster_id("c5");
  request.mutable_cluster()->set_serve_nodes(1);
  request.mutable_cluster()->set_location("asia-east1-b");
  s = CreateCluster(request);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("cluster.location"));

  request.mutable_cluster()->set_location("projects/p/locations/asia-east1-b");
  request.mutable_cluster()->set_default_storage_type(admin::HDD);
  s = CreateCluster(request);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("default_storage_type"));

  request.mutable_cluster()->set_default_storage_type(admin::SSD);
  request.mutable_cluster()
      ->mutable_cluster_config()
      ->mutable_cluster_autoscaling_config()
      ->mutable_autoscaling_limits()
      ->set_max_serve_nodes(3);
  EXPECT_GRPC_CODE(CreateCluster(request), grpc::StatusCode::UNIMPLEMENTED);

  request.set_parent("projects/p/instances/-");
  EXPECT_GRPC_CODE(CreateCluster(request), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(ClusterIds(), ElementsAre("c1", "c2", "c3"));
}

TEST_F(InstanceAdminTest, DeleteCluster) {
  ASSERT_GRPC_OK(DeleteCluster("c3"));
  EXPECT_THAT(ClusterIds(), ElementsAre("c1", "c2"));
  EXPECT_GRPC_CODE(DeleteCluster("c3"), grpc::StatusCode::NOT_FOUND);
  ASSERT_GRPC_OK(DeleteCluster("c1"));
  grpc::Status s = DeleteCluster("c2");
  EXPECT_GRPC_CODE(s, grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("last cluster"));
  EXPECT_THAT(ClusterIds(), ElementsAre("c2"));
}

TEST_F(InstanceAdminTest, UpdateClusterChangesTheNodeCount) {
  admin::Cluster request;
  request.set_name(ClusterName("c2"));
  request.set_serve_nodes(5);
  lro::Operation op;
  {
    grpc::ClientContext context;
    ASSERT_GRPC_OK(instances_->UpdateCluster(&context, request, &op));
  }
  EXPECT_TRUE(op.done());
  admin::Cluster updated;
  ASSERT_TRUE(op.response().UnpackTo(&updated));
  EXPECT_EQ(updated.serve_nodes(), 5);
  admin::UpdateClusterMetadata metadata;
  EXPECT_TRUE(op.metadata().UnpackTo(&metadata));
  admin::Cluster got;
  ASSERT_GRPC_OK(GetCluster(ClusterName("c2"), &got));
  EXPECT_EQ(got.serve_nodes(), 5);

  request.set_serve_nodes(0);
  {
    grpc::ClientContext context;
    grpc::Status s = instances_->UpdateCluster(&context, request, &op);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("serve_nodes"));
  }
  request.set_serve_nodes(2);
  request.set_location("projects/p/locations/asia-east1-a");
  {
    grpc::ClientContext context;
    grpc::Status s = instances_->UpdateCluster(&context, request, &op);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("location"));
  }
  request.clear_location();
  request.set_name(ClusterName("c9"));
  {
    grpc::ClientContext context;
    EXPECT_GRPC_CODE(instances_->UpdateCluster(&context, request, &op),
                     grpc::StatusCode::NOT_FOUND);
  }
  ASSERT_GRPC_OK(GetCluster(ClusterName("c2"), &got));
  EXPECT_EQ(got.serve_nodes(), 5);
}

TEST_F(InstanceAdminTest, PartialUpdateClusterChangesTheNodeCount) {
  admin::PartialUpdateClusterRequest request;
  request.mutable_cluster()->set_name(ClusterName("c3"));
  request.mutable_cluster()->set_serve_nodes(3);
  // As cbt updatecluster sends it: also clearing autoscaling.
  request.mutable_update_mask()->add_paths("serve_nodes");
  request.mutable_update_mask()->add_paths(
      "cluster_config.cluster_autoscaling_config");
  lro::Operation op;
  ASSERT_GRPC_OK(PartialUpdateCluster(request, &op));
  EXPECT_TRUE(op.done());
  admin::Cluster updated;
  ASSERT_TRUE(op.response().UnpackTo(&updated));
  EXPECT_EQ(updated.name(), ClusterName("c3"));
  EXPECT_EQ(updated.serve_nodes(), 3);
  admin::PartialUpdateClusterMetadata metadata;
  EXPECT_TRUE(op.metadata().UnpackTo(&metadata));
  admin::Cluster got;
  ASSERT_GRPC_OK(GetCluster(ClusterName("c3"), &got));
  EXPECT_EQ(got.serve_nodes(), 3);

  // Enabling autoscaling is not supported.
  admin::PartialUpdateClusterRequest autoscale = request;
  autoscale.mutable_update_mask()->clear_paths();
  autoscale.mutable_update_mask()->add_paths(
      "cluster_config.cluster_autoscaling_config");
  autoscale.mutable_cluster()
      ->mutable_cluster_config()
      ->mutable_cluster_autoscaling_config()
      ->mutable_autoscaling_targets()
      ->set_cpu_utilization_percent(50);
  EXPECT_GRPC_CODE(PartialUpdateCluster(autoscale),
                   grpc::StatusCode::UNIMPLEMENTED);

  admin::PartialUpdateClusterRequest bad = request;
  bad.mutable_update_mask()->add_paths("location");
  grpc::Status s = PartialUpdateCluster(bad);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("update_mask"));
  bad.mutable_update_mask()->clear_paths();
  s = PartialUpdateCluster(bad);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("update_mask"));

  bad = request;
  bad.mutable_cluster()->set_serve_nodes(0);
  s = PartialUpdateCluster(bad);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("serve_nodes"));
  bad = request;
  bad.mutable_cluster()->set_name(ClusterName("c9"));
  EXPECT_GRPC_CODE(PartialUpdateCluster(bad), grpc::StatusCode::NOT_FOUND);
  ASSERT_GRPC_OK(GetCluster(ClusterName("c3"), &got));
  EXPECT_EQ(got.serve_nodes(), 3);
}

// ------------------------------------------------------------- app profiles

TEST_F(InstanceAdminTest, CreateAppProfileWarnsAboutTransactionsOnTwoClusters) {
  admin::AppProfile created;
  ASSERT_GRPC_OK(CreateProfile("to-c1", SingleCluster("c1", true, "pinned"),
                               false, &created));
  EXPECT_EQ(created.name(), ProfileName("to-c1"));
  EXPECT_EQ(created.description(), "pinned");
  EXPECT_FALSE(created.etag().empty());
  ASSERT_TRUE(created.has_single_cluster_routing());
  EXPECT_EQ(created.single_cluster_routing().cluster_id(), "c1");
  EXPECT_TRUE(created.single_cluster_routing().allow_transactional_writes());
  EXPECT_EQ(created.standard_isolation().priority(),
            admin::AppProfile::PRIORITY_HIGH);

  grpc::Status s = CreateProfile("to-c3", SingleCluster("c3", true));
  EXPECT_GRPC_CODE(s, grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(),
              HasSubstr("App profiles 'to-c3' and 'to-c1' both allow "
                        "single-row transactions but route to different "
                        "clusters"));
  admin::AppProfile got;
  EXPECT_GRPC_CODE(GetProfile("to-c3", &got), grpc::StatusCode::NOT_FOUND);
  ASSERT_GRPC_OK(CreateProfile("to-c3", SingleCluster("c3", true), true));
  ASSERT_GRPC_OK(GetProfile("to-c3", &got));
  EXPECT_EQ(got.single_cluster_routing().cluster_id(), "c3");

  EXPECT_GRPC_CODE(CreateProfile("to-c1", SingleCluster("c1", false)),
                   grpc::StatusCode::ALREADY_EXISTS);
}

TEST_F(InstanceAdminTest, CreateAppProfileRefusals) {
  admin::AppProfile none;
  grpc::Status s = CreateProfile("p1", none);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("routing_policy"));

  s = CreateProfile("bad id", SingleCluster("c1", false));
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("app_profile_id"));

  s = CreateProfile("p1", SingleCluster("c9", false));
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("cluster_id"));

  admin::AppProfile boost = SingleCluster("c1", false);
  boost.mutable_data_boost_isolation_read_only();
  s = CreateProfile("p1", boost);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::UNIMPLEMENTED);
  EXPECT_THAT(s.error_message(), HasSubstr("data_boost_isolation_read_only"));

  admin::CreateAppProfileRequest request;
  request.set_parent("projects/p");
  request.set_app_profile_id("p1");
  *request.mutable_app_profile() = SingleCluster("c1", false);
  grpc::ClientContext context;
  admin::AppProfile out;
  s = instances_->CreateAppProfile(&context, request, &out);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("parent"));
}

TEST_F(InstanceAdminTest, AppProfileFieldsRoundTrip) {
  admin::AppProfile multi;
  multi.set_description("group");
  multi.mutable_multi_cluster_routing_use_any()->add_cluster_ids("c1");
  multi.mutable_multi_cluster_routing_use_any()->add_cluster_ids("c2");
  multi.mutable_multi_cluster_routing_use_any()->mutable_row_affinity();
  multi.mutable_standard_isolation()->set_priority(
      admin::AppProfile::PRIORITY_LOW);
  admin::AppProfile created;
  ASSERT_GRPC_OK(CreateProfile("group", multi, false, &created));
  ASSERT_TRUE(created.has_multi_cluster_routing_use_any());
  EXPECT_THAT(created.multi_cluster_routing_use_any().cluster_ids(),
              ElementsAre("c1", "c2"));
  EXPECT_TRUE(created.multi_cluster_routing_use_any().has_row_affinity());
  EXPECT_EQ(created.standard_isolation().priority(),
            admin::AppProfile::PRIORITY_LOW);

  admin::AppProfile legacy = SingleCluster("c2", false);
  legacy.set_priority(admin::AppProfile::PRIORITY_MEDIUM);
  ASSERT_GRPC_OK(CreateProfile("legacy", legacy, false, &created));
  EXPECT_EQ(created.standard_isolation().priority(),
            admin::AppProfile::PRIORITY_MEDIUM);

  admin::AppProfile got;
  ASSERT_GRPC_OK(GetProfile("legacy", &got));
  EXPECT_EQ(got.SerializeAsString(), created.SerializeAsString());
}

TEST_F(InstanceAdminTest, GetAndListAppProfiles) {
  ASSERT_GRPC_OK(CreateProfile("to-c1", SingleCluster("c1", true)));
  admin::AppProfile any;
  any.mutable_multi_cluster_routing_use_any();
  ASSERT_GRPC_OK(CreateProfile("b-any", any));

  admin::AppProfile def;
  ASSERT_GRPC_OK(GetProfile("default", &def));
  EXPECT_TRUE(def.has_multi_cluster_routing_use_any());
  admin::AppProfile got;
  EXPECT_GRPC_CODE(GetProfile("nope", &got), grpc::StatusCode::NOT_FOUND);
  {
    admin::GetAppProfileRequest request;
    request.set_name(std::string(kInstance) + "/appProfile/x");
    grpc::ClientContext context;
    grpc::Status s = instances_->GetAppProfile(&context, request, &got);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("name"));
  }

  admin::ListAppProfilesRequest request;
  request.set_parent(kInstance);
  admin::ListAppProfilesResponse response;
  ASSERT_GRPC_OK(ListProfiles(request, &response));
  std::vector<std::string> names;
  for (const auto& p : response.app_profiles()) names.push_back(p.name());
  EXPECT_THAT(names, ElementsAre(ProfileName("b-any"), ProfileName("default"),
                                 ProfileName("to-c1")));
  EXPECT_TRUE(response.next_page_token().empty());

  // Pages of two.
  request.set_page_size(2);
  ASSERT_GRPC_OK(ListProfiles(request, &response));
  ASSERT_EQ(response.app_profiles_size(), 2);
  EXPECT_EQ(response.app_profiles(1).name(), ProfileName("default"));
  ASSERT_FALSE(response.next_page_token().empty());
  request.set_page_token(response.next_page_token());
  admin::ListAppProfilesResponse second;
  ASSERT_GRPC_OK(ListProfiles(request, &second));
  ASSERT_EQ(second.app_profiles_size(), 1);
  EXPECT_EQ(second.app_profiles(0).name(), ProfileName("to-c1"));
  EXPECT_TRUE(second.next_page_token().empty());

  request.set_page_token("garbage");
  EXPECT_GRPC_CODE(ListProfiles(request, &response),
                   grpc::StatusCode::INVALID_ARGUMENT);
  request.clear_page_token();
  request.set_page_size(-1);
  EXPECT_GRPC_CODE(ListProfiles(request, &response),
                   grpc::StatusCode::INVALID_ARGUMENT);
}

TEST_F(InstanceAdminTest, UpdateAppProfile) {
  admin::AppProfile created;
  ASSERT_GRPC_OK(CreateProfile("to-c1", SingleCluster("c1", true, "one"), false,
                               &created));

  // A description change raises no warning.
  admin::UpdateAppProfileRequest request;
  request.mutable_app_profile()->set_name(ProfileName("to-c1"));
  request.mutable_app_profile()->set_description("two");
  request.mutable_update_mask()->add_paths("description");
  lro::Operation op;
  ASSERT_GRPC_OK(UpdateProfile(request, &op));
  EXPECT_TRUE(op.done());
  EXPECT_THAT(op.name(), StartsWith("operations/" + ProfileName("to-c1")));
  admin::AppProfile updated;
  ASSERT_TRUE(op.response().UnpackTo(&updated));
  EXPECT_EQ(updated.description(), "two");
  EXPECT_NE(updated.etag(), created.etag());
  ASSERT_TRUE(updated.has_single_cluster_routing());
  admin::UpdateAppProfileMetadata metadata;
  EXPECT_TRUE(op.metadata().UnpackTo(&metadata));

  // GetOperation answers the finished operation.
  lro::Operation polled;
  ASSERT_GRPC_OK(GetOperation(op.name(), &polled));
  EXPECT_TRUE(polled.done());
  admin::AppProfile from_poll;
  ASSERT_TRUE(polled.response().UnpackTo(&from_poll));
  EXPECT_EQ(from_poll.description(), "two");

  // A routing change needs ignore_warnings.
  admin::UpdateAppProfileRequest route = request;
  route.mutable_update_mask()->clear_paths();
  route.mutable_update_mask()->add_paths("multi_cluster_routing_use_any");
  route.mutable_app_profile()->mutable_multi_cluster_routing_use_any();
  grpc::Status s = UpdateProfile(route);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("routing policy"));
  admin::AppProfile got;
  ASSERT_GRPC_OK(GetProfile("to-c1", &got));
  EXPECT_TRUE(got.has_single_cluster_routing());

  // A stale etag is ABORTED.
  route.set_ignore_warnings(true);
  route.mutable_app_profile()->set_etag(created.etag());
  EXPECT_GRPC_CODE(UpdateProfile(route), grpc::StatusCode::ABORTED);
  route.mutable_app_profile()->set_etag(updated.etag());
  ASSERT_GRPC_OK(UpdateProfile(route, &op));
  ASSERT_TRUE(op.response().UnpackTo(&updated));
  EXPECT_TRUE(updated.has_multi_cluster_routing_use_any());
  EXPECT_EQ(updated.description(), "two");

  // Priority through standard_isolation.
  admin::UpdateAppProfileRequest priority;
  priority.mutable_app_profile()->set_name(ProfileName("to-c1"));
  priority.mutable_app_profile()->mutable_standard_isolation()->set_priority(
      admin::AppProfile::PRIORITY_MEDIUM);
  priority.mutable_update_mask()->add_paths("standard_isolation");
  ASSERT_GRPC_OK(UpdateProfile(priority, &op));
  ASSERT_TRUE(op.response().UnpackTo(&updated));
  EXPECT_EQ(updated.standard_isolation().priority(),
            admin::AppProfile::PRIORITY_MEDIUM);

  // Routing named in the mask but missing from the profile.
  admin::UpdateAppProfileRequest missing;
  missing.mutable_app_profile()->set_name(ProfileName("to-c1"));
  missing.mutable_update_mask()->add_paths("single_cluster_routing");
  s = UpdateProfile(missing);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("routing_policy"));

  admin::UpdateAppProfileRequest bad = request;
  bad.mutable_update_mask()->add_paths("etag");
  s = UpdateProfile(bad);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("update_mask"));
  bad.mutable_update_mask()->clear_paths();
  EXPECT_GRPC_CODE(UpdateProfile(bad), grpc::StatusCode::INVALID_ARGUMENT);
  bad = request;
  bad.mutable_app_profile()->set_name(ProfileName("nope"));
  EXPECT_GRPC_CODE(UpdateProfile(bad), grpc::StatusCode::NOT_FOUND);
  bad.mutable_app_profile()->set_name("nope");
  s = UpdateProfile(bad);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("app_profile.name"));
}

TEST_F(InstanceAdminTest, DeleteAppProfile) {
  ASSERT_GRPC_OK(CreateProfile("gone", SingleCluster("c2", false)));
  grpc::Status s = DeleteProfile("gone", false);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_THAT(s.error_message(), HasSubstr("may break applications"));
  ASSERT_GRPC_OK(DeleteProfile("gone", true));
  admin::AppProfile got;
  EXPECT_GRPC_CODE(GetProfile("gone", &got), grpc::StatusCode::NOT_FOUND);
  EXPECT_GRPC_CODE(DeleteProfile("gone", true), grpc::StatusCode::NOT_FOUND);
}

// --------------------------------------------------------------- operations

TEST_F(InstanceAdminTest, UnknownOperationIsNotFound) {
  lro::Operation op;
  EXPECT_GRPC_CODE(GetOperation("operations/projects/p/instances/i/x", &op),
                   grpc::StatusCode::NOT_FOUND);
  EXPECT_GRPC_CODE(GetOperation("", &op), grpc::StatusCode::INVALID_ARGUMENT);
}

TEST(OperationsServiceTest, KeepsOnlyTheMostRecentOperations) {
  api::OperationsService service(2);
  admin::Instance instance;
  instance.set_name("projects/p/instances/i");
  std::vector<lro::Operation> ops;
  for (int i = 0; i < 3; ++i) {
    ops.push_back(service.Finish("projects/p/instances/i", instance));
    EXPECT_TRUE(ops.back().done());
  }
  EXPECT_NE(ops[0].name(), ops[1].name());
  lro::GetOperationRequest request;
  lro::Operation got;
  request.set_name(ops[0].name());
  EXPECT_EQ(service.GetOperation(nullptr, &request, &got).error_code(),
            grpc::StatusCode::NOT_FOUND);
  for (int i = 1; i < 3; ++i) {
    request.set_name(ops[i].name());
    ASSERT_TRUE(service.GetOperation(nullptr, &request, &got).ok());
    admin::Instance unpacked;
    ASSERT_TRUE(got.response().UnpackTo(&unpacked));
    EXPECT_EQ(unpacked.name(), "projects/p/instances/i");
  }
}

// -------------------------------------------------- gating, end to end

TEST_F(InstanceAdminTest, TransactionsNeedATransactionalSingleClusterProfile) {
  CreateTable("t");
  ASSERT_GRPC_OK(CreateProfile("txn", SingleCluster("c1", true)));
  ASSERT_GRPC_OK(CreateProfile("no-txn", SingleCluster("c1", false)));

  // The default profile of a three-cluster instance is multi-cluster.
  for (const std::string& profile :
       {std::string(), std::string("default"), std::string("no-txn")}) {
    grpc::Status s = CheckAndMutate(profile);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(s.error_message(), kTransactionsRefused) << profile;
    s = ReadModifyWrite(profile);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::FAILED_PRECONDITION);
    EXPECT_EQ(s.error_message(), kTransactionsRefused) << profile;
  }
  EXPECT_GRPC_OK(CheckAndMutate("txn"));
  EXPECT_GRPC_OK(ReadModifyWrite("txn"));

  // A profile made transactional by an update takes effect at once.
  admin::UpdateAppProfileRequest update;
  update.mutable_app_profile()->set_name(ProfileName("no-txn"));
  *update.mutable_app_profile() = SingleCluster("c1", true);
  update.mutable_app_profile()->set_name(ProfileName("no-txn"));
  update.mutable_update_mask()->add_paths("single_cluster_routing");
  update.set_ignore_warnings(true);
  ASSERT_GRPC_OK(UpdateProfile(update));
  EXPECT_GRPC_OK(ReadModifyWrite("no-txn"));
}

TEST_F(InstanceAdminTest, AnUnknownAppProfileIsNotFound) {
  CreateTable("t");
  grpc::Status s = MutateThrough("t", "r", "nope", "v");
  EXPECT_GRPC_CODE(s, grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(s.error_message(), HasSubstr("nope"));
  v2::ReadRowsRequest request;
  request.set_table_name(TableName("t"));
  request.set_app_profile_id("nope");
  EXPECT_GRPC_CODE(ReadRowsRaw(*data_, request).status,
                   grpc::StatusCode::NOT_FOUND);
  EXPECT_GRPC_CODE(CheckAndMutate("nope"), grpc::StatusCode::NOT_FOUND);
}

}  // namespace
}  // namespace btsim::api_test
