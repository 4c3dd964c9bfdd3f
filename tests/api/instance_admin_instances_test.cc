// google.bigtable.admin.v2.BigtableInstanceAdmin instances and
// google.longrunning.Operations against a real replicated server.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "api/operations_service.h"
#include "google/bigtable/admin/v2/bigtable_instance_admin.grpc.pb.h"
#include "google/longrunning/operations.grpc.pb.h"
#include "tests/api/api_test_util.h"
#include "tests/api/instance_admin_test_util.h"

namespace btsim::api_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

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

}  // namespace
}  // namespace btsim::api_test
