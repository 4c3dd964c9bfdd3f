#include "appprofile/app_profile.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

namespace btsim::appprofile {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

constexpr char kWarningsPrefix[] = "The operation has the following warnings:";

const std::vector<std::string> kThreeClusters = {"c1", "c2", "c3"};

AppProfile Single(std::string id, std::string cluster, bool txn = false) {
  AppProfile p;
  p.id = std::move(id);
  p.routing = AppProfile::Routing::kSingleCluster;
  p.cluster_id = std::move(cluster);
  p.allow_transactional_writes = txn;
  return p;
}

AppProfile Multi(std::string id, std::vector<std::string> group = {},
                 bool affinity = false) {
  AppProfile p;
  p.id = std::move(id);
  p.routing = AppProfile::Routing::kMultiCluster;
  p.cluster_ids = std::move(group);
  p.row_affinity = affinity;
  return p;
}

ProfileUpdate RoutingUpdate(AppProfile p) {
  ProfileUpdate u;
  u.profile = std::move(p);
  u.routing = true;
  return u;
}

void ExpectWarning(const Status& s, std::string_view what) {
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition) << s.ToString();
  EXPECT_THAT(s.message(), AllOf(StartsWith(kWarningsPrefix), HasSubstr(what)));
}

void ExpectInvalid(const Status& s, std::string_view field) {
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << s.ToString();
  EXPECT_THAT(s.message(), HasSubstr(field));
}

// --- Profile ids ------------------------------------------------------------

TEST(ValidateProfileIdTest, AcceptsValidIds) {
  for (const std::string& id :
       std::vector<std::string>{"a", "default", "_x", "9lives", "A-b_c.d", "x.",
                                std::string(50, 'z')}) {
    EXPECT_TRUE(ValidateProfileId(id).ok()) << id;
  }
}

TEST(ValidateProfileIdTest, RejectsInvalidIds) {
  for (const std::string& id :
       std::vector<std::string>{"", "-a", ".a", "a b", "a/b", "é", "a*", "a:b",
                                std::string(51, 'z')}) {
    Status s = ValidateProfileId(id);
    ExpectInvalid(s, "app_profile_id");
  }
}

// --- Default profile --------------------------------------------------------

TEST(ProfileSetTest, DefaultProfileWithOneClusterIsSingleTransactional) {
  ProfileSet set({"c1"});
  Result<AppProfile> p = set.Get("default");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->id, "default");
  EXPECT_EQ(p->routing, AppProfile::Routing::kSingleCluster);
  EXPECT_EQ(p->cluster_id, "c1");
  EXPECT_TRUE(p->allow_transactional_writes);
  EXPECT_TRUE(p->transactional());
  EXPECT_FALSE(p->etag.empty());
}

TEST(ProfileSetTest, DefaultProfileWithThreeClustersIsMultiAny) {
  ProfileSet set(kThreeClusters);
  Result<AppProfile> p = set.Get("default");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->routing, AppProfile::Routing::kMultiCluster);
  EXPECT_TRUE(p->cluster_ids.empty());
  EXPECT_FALSE(p->row_affinity);
  EXPECT_FALSE(p->transactional());
}

TEST(ProfileSetTest, EmptyIdMeansDefault) {
  ProfileSet set(kThreeClusters);
  Result<AppProfile> p = set.Get("");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->id, "default");
}

TEST(ProfileSetTest, DefaultUnchangedBySetClusters) {
  ProfileSet set({"c1"});
  set.SetClusters(kThreeClusters);
  Result<AppProfile> p = set.Get("");
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->routing, AppProfile::Routing::kSingleCluster);
  EXPECT_EQ(p->cluster_id, "c1");
}

TEST(ProfileSetTest, DefaultCanBeDeletedAndThenIsNotFound) {
  ProfileSet set(kThreeClusters);
  ExpectWarning(set.Delete("default", false), "default");
  ASSERT_TRUE(set.Delete("default", true).ok());
  EXPECT_EQ(set.Get("").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(set.Get("default").status().code(), StatusCode::kNotFound);
}

// --- Create / Get / List / Update / Delete ----------------------------------

TEST(ProfileSetTest, CreateGetList) {
  ProfileSet set(kThreeClusters);
  AppProfile in = Multi("zeta", {"c2", "c3"}, true);
  in.description = "batch";
  in.priority = Priority::kLow;
  in.etag = "ignored";
  Result<AppProfile> created = set.Create(in, false);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  EXPECT_EQ(created->id, "zeta");
  EXPECT_EQ(created->description, "batch");
  EXPECT_EQ(created->priority, Priority::kLow);
  EXPECT_EQ(created->cluster_ids, (std::vector<std::string>{"c2", "c3"}));
  EXPECT_TRUE(created->row_affinity);
  EXPECT_NE(created->etag, "ignored");
  EXPECT_FALSE(created->etag.empty());

  ASSERT_TRUE(set.Create(Single("alpha", "c1"), false).ok());
  Result<AppProfile> got = set.Get("zeta");
  ASSERT_TRUE(got.ok());
  EXPECT_EQ(*got, *created);

  std::vector<AppProfile> list = set.List();
  ASSERT_EQ(list.size(), 3u);
  EXPECT_EQ(list[0].id, "alpha");
  EXPECT_EQ(list[1].id, "default");
  EXPECT_EQ(list[2].id, "zeta");
}

TEST(ProfileSetTest, CreateRejectsDuplicateAndBadId) {
  ProfileSet set(kThreeClusters);
  ASSERT_TRUE(set.Create(Multi("p"), false).ok());
  EXPECT_EQ(set.Create(Multi("p"), false).status().code(),
            StatusCode::kAlreadyExists);
  EXPECT_EQ(set.Create(Multi("default"), false).status().code(),
            StatusCode::kAlreadyExists);
  ExpectInvalid(set.Create(Multi("-bad"), false).status(), "app_profile_id");
  ExpectInvalid(set.Create(Multi(""), false).status(), "app_profile_id");
}

TEST(ProfileSetTest, GetUnknownIsNotFound) {
  ProfileSet set(kThreeClusters);
  EXPECT_EQ(set.Get("nope").status().code(), StatusCode::kNotFound);
}

TEST(ProfileSetTest, DeleteNeedsIgnoreWarnings) {
  ProfileSet set(kThreeClusters);
  ASSERT_TRUE(set.Create(Multi("p"), false).ok());
  EXPECT_EQ(set.Delete("nope", true).code(), StatusCode::kNotFound);
  ExpectWarning(set.Delete("p", false), "'p'");
  ASSERT_TRUE(set.Get("p").ok());  // not deleted
  ASSERT_TRUE(set.Delete("p", true).ok());
  EXPECT_EQ(set.Get("p").status().code(), StatusCode::kNotFound);
  EXPECT_EQ(set.Delete("p", true).code(), StatusCode::kNotFound);
  // The id can be reused.
  EXPECT_TRUE(set.Create(Multi("p"), false).ok());
}

TEST(ProfileSetTest, UpdateUnknownIsNotFound) {
  ProfileSet set(kThreeClusters);
  ProfileUpdate u;
  u.profile.id = "nope";
  u.description = true;
  EXPECT_EQ(set.Update(u, true).status().code(), StatusCode::kNotFound);
}

TEST(ProfileSetTest, EtagChangesOnEveryCreateAndUpdate) {
  ProfileSet set(kThreeClusters);
  std::set<std::string> etags = {set.Get("")->etag};
  Result<AppProfile> a = set.Create(Multi("a"), false);
  Result<AppProfile> b = set.Create(Multi("b"), false);
  ASSERT_TRUE(a.ok() && b.ok());
  etags.insert(a->etag);
  etags.insert(b->etag);
  ProfileUpdate u;
  u.profile.id = "a";
  u.profile.description = "one";
  u.description = true;
  for (int i = 0; i < 3; ++i) {
    Result<AppProfile> r = set.Update(u, false);
    ASSERT_TRUE(r.ok());
    etags.insert(r->etag);
    EXPECT_EQ(set.Get("a")->etag, r->etag);
  }
  // An update that changes nothing still gets a new etag.
  ProfileUpdate nothing;
  nothing.profile.id = "a";
  Result<AppProfile> r = set.Update(nothing, false);
  ASSERT_TRUE(r.ok());
  etags.insert(r->etag);
  EXPECT_EQ(etags.size(), 7u);
}

TEST(ProfileSetTest, EtagsAreDeterministic) {
  ProfileSet s1(kThreeClusters), s2(kThreeClusters);
  EXPECT_EQ(s1.Create(Multi("a"), false)->etag,
            s2.Create(Multi("a"), false)->etag);
}

TEST(ProfileSetTest, UpdateChecksEtag) {
  ProfileSet set(kThreeClusters);
  Result<AppProfile> a = set.Create(Multi("a"), false);
  ASSERT_TRUE(a.ok());
  ProfileUpdate u;
  u.profile.id = "a";
  u.profile.description = "new";
  u.description = true;
  u.etag = "stale";
  Result<AppProfile> r = set.Update(u, true);
  EXPECT_EQ(r.status().code(), StatusCode::kAborted);
  EXPECT_THAT(r.status().message(), HasSubstr("etag mismatch"));
  EXPECT_EQ(set.Get("a")->description, "");

  u.etag = a->etag;
  Result<AppProfile> ok = set.Update(u, false);
  ASSERT_TRUE(ok.ok()) << ok.status().ToString();
  EXPECT_EQ(ok->description, "new");
  // The old etag is stale now.
  EXPECT_EQ(set.Update(u, true).status().code(), StatusCode::kAborted);
  // An empty etag skips the check.
  u.etag.clear();
  EXPECT_TRUE(set.Update(u, false).ok());
}

TEST(ProfileSetTest, UpdateAppliesOnlyMaskedFields) {
  ProfileSet set(kThreeClusters);
  AppProfile a = Multi("a", {"c1", "c2"});
  a.description = "old";
  a.priority = Priority::kHigh;
  ASSERT_TRUE(set.Create(a, false).ok());

  ProfileUpdate u;
  u.profile = Single("a", "c3", true);
  u.profile.description = "new";
  u.profile.priority = Priority::kLow;

  u.description = true;
  Result<AppProfile> r = set.Update(u, false);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->description, "new");
  EXPECT_EQ(r->priority, Priority::kHigh);
  EXPECT_EQ(r->routing, AppProfile::Routing::kMultiCluster);
  EXPECT_EQ(r->cluster_ids, (std::vector<std::string>{"c1", "c2"}));

  u.description = false;
  u.priority = true;
  r = set.Update(u, false);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r->priority, Priority::kLow);
  EXPECT_EQ(r->routing, AppProfile::Routing::kMultiCluster);

  u.priority = false;
  u.routing = true;
  r = set.Update(u, true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_EQ(r->routing, AppProfile::Routing::kSingleCluster);
  EXPECT_EQ(r->cluster_id, "c3");
  EXPECT_TRUE(r->allow_transactional_writes);
  EXPECT_TRUE(r->cluster_ids.empty());  // the other routing's fields go
  EXPECT_EQ(r->description, "new");
  EXPECT_EQ(*set.Get("a"), *r);
}

TEST(ProfileSetTest, UpdateRevalidatesRouting) {
  ProfileSet set(kThreeClusters);
  ASSERT_TRUE(set.Create(Multi("a"), false).ok());
  ExpectInvalid(set.Update(RoutingUpdate(Single("a", "c9")), true).status(),
                "single_cluster_routing.cluster_id");
  ExpectInvalid(
      set.Update(RoutingUpdate(Multi("a", {"c1", "c1"})), true).status(),
      "multi_cluster_routing_use_any.cluster_ids");
  AppProfile bad = Single("a", "c1");
  bad.row_affinity = true;
  ExpectInvalid(set.Update(RoutingUpdate(bad), true).status(), "row_affinity");
  EXPECT_EQ(set.Get("a")->routing, AppProfile::Routing::kMultiCluster);
}

TEST(ProfileSetTest, ProfileNamingRemovedClusterRemainsAndCanBeEdited) {
  ProfileSet set(kThreeClusters);
  ASSERT_TRUE(set.Create(Single("a", "c3"), false).ok());
  set.SetClusters({"c1", "c2"});
  ASSERT_TRUE(set.Get("a").ok());
  EXPECT_EQ(set.Get("a")->cluster_id, "c3");
  ProfileUpdate u;
  u.profile.id = "a";
  u.profile.description = "still here";
  u.description = true;
  EXPECT_TRUE(set.Update(u, false).ok());
  // New references to the removed cluster are refused.
  ExpectInvalid(set.Create(Single("b", "c3"), false).status(),
                "single_cluster_routing.cluster_id");
  // And a new cluster can be named.
  set.SetClusters({"c1", "c2", "c4"});
  EXPECT_TRUE(set.Create(Multi("c", {"c4"}), false).ok());
}

// --- Validation of cluster references ---------------------------------------

TEST(ProfileSetTest, InvalidClusterReferences) {
  ProfileSet set(kThreeClusters);
  ExpectInvalid(set.Create(Single("a", ""), false).status(),
                "single_cluster_routing.cluster_id");
  ExpectInvalid(set.Create(Single("a", "c9"), false).status(),
                "single_cluster_routing.cluster_id");
  ExpectInvalid(set.Create(Multi("a", {"c1", "c9"}), false).status(),
                "multi_cluster_routing_use_any.cluster_ids");
  ExpectInvalid(set.Create(Multi("a", {"c1", "c2", "c1"}), false).status(),
                "multi_cluster_routing_use_any.cluster_ids");
  EXPECT_EQ(set.Get("a").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(set.Create(Multi("a", {"c3"}), false).ok());
}

TEST(ProfileSetTest, RowAffinityRequiresMultiClusterRouting) {
  ProfileSet set(kThreeClusters);
  AppProfile p = Single("a", "c1");
  p.row_affinity = true;
  ExpectInvalid(set.Create(p, true).status(), "row_affinity");
  EXPECT_TRUE(set.Create(Multi("b", {}, true), false).ok());
}

TEST(ProfileSetTest, LimitOfTwoThousandProfilesCountsDefault) {
  ProfileSet set(kThreeClusters);
  for (int i = 1; i < kMaxProfiles; ++i) {
    ASSERT_TRUE(set.Create(Multi("p" + std::to_string(i)), false).ok()) << i;
  }
  EXPECT_EQ(set.List().size(), 2000u);
  ExpectInvalid(set.Create(Multi("one-too-many"), false).status(), "2,000");
  ASSERT_TRUE(set.Delete("p1", true).ok());
  EXPECT_TRUE(set.Create(Multi("one-too-many"), false).ok());
}

// --- Warnings ---------------------------------------------------------------

// Runs an update that must warn about `what`: fails without ignore_warnings
// (leaving the profile as it was) and succeeds with it.
void ExpectUpdateWarns(ProfileSet& set, const ProfileUpdate& u,
                       std::string_view what) {
  const AppProfile before = *set.Get(u.profile.id);
  Result<AppProfile> r = set.Update(u, false);
  ExpectWarning(r.status(), what);
  EXPECT_EQ(*set.Get(u.profile.id), before);
  r = set.Update(u, true);
  ASSERT_TRUE(r.ok()) << r.status().ToString();
  EXPECT_NE(r->etag, before.etag);
}

TEST(ProfileWarningsTest, SingleToMulti) {
  ProfileSet set(kThreeClusters);
  ASSERT_TRUE(set.Create(Single("a", "c1"), false).ok());
  ExpectUpdateWarns(set, RoutingUpdate(Multi("a")), "routing policy");
  EXPECT_EQ(set.Get("a")->routing, AppProfile::Routing::kMultiCluster);
}

TEST(ProfileWarningsTest, MultiToSingle) {
  ProfileSet set(kThreeClusters);
  ASSERT_TRUE(set.Create(Multi("a"), false).ok());
  ExpectUpdateWarns(set, RoutingUpdate(Single("a", "c2")), "routing policy");
}

TEST(ProfileWarningsTest, SingleClusterTargetChanged) {
  ProfileSet set(kThreeClusters);
  ASSERT_TRUE(set.Create(Single("a", "c1"), false).ok());
  ExpectUpdateWarns(set, RoutingUpdate(Single("a", "c2")), "'c2'");
  EXPECT_EQ(set.Get("a")->cluster_id, "c2");
}

TEST(ProfileWarningsTest, ClusterGroupChanged) {
  ProfileSet set(kThreeClusters);
  ASSERT_TRUE(set.Create(Multi("a", {"c1", "c2"}), false).ok());
  ExpectUpdateWarns(set, RoutingUpdate(Multi("a", {"c2", "c3"})),
                    "routing policy");
  ExpectUpdateWarns(set, RoutingUpdate(Multi("a")), "any cluster");
}

TEST(ProfileWarningsTest, SameRoutingDoesNotWarn) {
  ProfileSet set(kThreeClusters);
  ASSERT_TRUE(set.Create(Multi("a", {"c1", "c2"}), false).ok());
  ASSERT_TRUE(set.Create(Single("b", "c1"), false).ok());
  // Same group in another order; row affinity alone is not a policy change.
  EXPECT_TRUE(
      set.Update(RoutingUpdate(Multi("a", {"c2", "c1"}, true)), false).ok());
  EXPECT_TRUE(set.Update(RoutingUpdate(Single("b", "c1")), false).ok());
  ProfileUpdate u;
  u.profile.id = "b";
  u.profile.description = "d";
  u.description = true;
  u.priority = true;
  EXPECT_TRUE(set.Update(u, false).ok());
}

TEST(ProfileWarningsTest, TogglingTransactionalWrites) {
  ProfileSet set(kThreeClusters);
  ASSERT_TRUE(set.Create(Single("a", "c1"), false).ok());
  ExpectUpdateWarns(set, RoutingUpdate(Single("a", "c1", true)),
                    "transactions");
  EXPECT_TRUE(set.Get("a")->allow_transactional_writes);
  ExpectUpdateWarns(set, RoutingUpdate(Single("a", "c1", false)),
                    "transactions");
  EXPECT_FALSE(set.Get("a")->allow_transactional_writes);
}

TEST(ProfileWarningsTest, WarningListsEveryWarning) {
  ProfileSet set(kThreeClusters);
  ASSERT_TRUE(set.Create(Single("a", "c1", true), false).ok());
  Result<AppProfile> r = set.Update(RoutingUpdate(Multi("a")), false);
  ExpectWarning(r.status(), "routing policy");
  ExpectWarning(r.status(), "transactions");
}

TEST(ProfileWarningsTest, TransactionalProfilesOnSameClusterDoNotWarn) {
  ProfileSet set(kThreeClusters);
  ASSERT_TRUE(set.Create(Single("a", "c1", true), false).ok());
  EXPECT_TRUE(set.Create(Single("b", "c1", true), false).ok());
  // Non-transactional profiles elsewhere do not matter.
  EXPECT_TRUE(set.Create(Single("c", "c2", false), false).ok());
  EXPECT_TRUE(set.Create(Multi("d"), false).ok());
}

TEST(ProfileWarningsTest,
     TransactionalProfilesOnDifferentClustersWarnOnCreate) {
  ProfileSet set(kThreeClusters);
  ASSERT_TRUE(set.Create(Single("a", "c1", true), false).ok());
  Result<AppProfile> r = set.Create(Single("b", "c2", true), false);
  ExpectWarning(r.status(), "'a'");
  ExpectWarning(r.status(), "'b'");
  ExpectWarning(r.status(), "'c1'");
  ExpectWarning(r.status(), "'c2'");
  EXPECT_EQ(set.Get("b").status().code(), StatusCode::kNotFound);
  EXPECT_TRUE(set.Create(Single("b", "c2", true), true).ok());
}

TEST(ProfileWarningsTest,
     TransactionalProfilesOnDifferentClustersWarnOnUpdate) {
  ProfileSet set(kThreeClusters);
  ASSERT_TRUE(set.Create(Single("a", "c1", true), false).ok());
  ASSERT_TRUE(set.Create(Single("b", "c2", false), false).ok());
  Result<AppProfile> r =
      set.Update(RoutingUpdate(Single("b", "c2", true)), false);
  ExpectWarning(r.status(), "different clusters");
  ExpectWarning(r.status(), "'a'");
  // Moving a transactional profile away from its partner warns as well.
  ASSERT_TRUE(set.Create(Single("c", "c1", true), false).ok());
  r = set.Update(RoutingUpdate(Single("c", "c3", true)), false);
  ExpectWarning(r.status(), "different clusters");
  ExpectWarning(r.status(), "'c3'");
}

TEST(ProfileWarningsTest, DefaultSingleClusterProfileCountsAsTransactional) {
  ProfileSet set({"c1"});
  set.SetClusters({"c1", "c2"});
  ExpectWarning(set.Create(Single("b", "c2", true), false).status(),
                "'default'");
  EXPECT_TRUE(set.Create(Single("b", "c1", true), false).ok());
}

TEST(ProfileWarningsTest, CreateNeverWarnsAboutRoutingChange) {
  ProfileSet set(kThreeClusters);
  EXPECT_TRUE(set.Create(Single("a", "c1", true), false).ok());
  EXPECT_TRUE(set.Create(Multi("b", {"c1"}, true), false).ok());
}

}  // namespace
}  // namespace btsim::appprofile
