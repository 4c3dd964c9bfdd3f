// google.bigtable.admin.v2.BigtableInstanceAdmin app profiles against a real
// replicated server, and the app-profile gating of the data API end to end.
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "google/bigtable/admin/v2/bigtable_instance_admin.grpc.pb.h"
#include "google/longrunning/operations.grpc.pb.h"
#include "tests/api/api_test_util.h"
#include "tests/api/instance_admin_test_util.h"

namespace btsim::api_test {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kTransactionsRefused[] =
    "Single-row transactions are not allowed by this app profile";

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
