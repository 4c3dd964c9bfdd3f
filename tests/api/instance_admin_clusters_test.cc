// google.bigtable.admin.v2.BigtableInstanceAdmin clusters against a real
// replicated server: listing, state, create (seeded), update and delete.
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/instance_registry.h"
#include "google/bigtable/admin/v2/bigtable_instance_admin.grpc.pb.h"
#include "google/longrunning/operations.grpc.pb.h"
#include "tests/api/api_test_util.h"
#include "tests/api/chunk_merger.h"
#include "tests/api/instance_admin_test_util.h"

namespace btsim::api_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

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
    ASSERT_TRUE((*served)->instance->replicas().SetDown("c2", true).ok());
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
  // A malformed id is INVALID_ARGUMENT, not NOT_FOUND: the same rule on
  // every RPC.
  for (const std::string& id : {std::string("C9"), std::string("9c"),
                                std::string("c 9"), std::string(31, 'c')}) {
    s = GetCluster(ClusterName(id), &cluster);
    EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(s.error_message(), HasSubstr("is not a valid cluster id"));
  }
  s = GetCluster("projects/../instances/i/clusters/c1", &cluster);
  EXPECT_GRPC_CODE(s, grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(s.error_message(), HasSubstr("is not a valid project id"));
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

}  // namespace
}  // namespace btsim::api_test
