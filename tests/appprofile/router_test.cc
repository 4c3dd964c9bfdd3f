#include "appprofile/router.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "sim/rng.h"

namespace btsim::appprofile {
namespace {

using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

AppProfile Single(std::string cluster, bool txn = false) {
  AppProfile p;
  p.id = "single-" + cluster;
  p.routing = AppProfile::Routing::kSingleCluster;
  p.cluster_id = std::move(cluster);
  p.allow_transactional_writes = txn;
  return p;
}

AppProfile Multi(std::vector<std::string> group = {}, bool affinity = false) {
  AppProfile p;
  p.id = "multi";
  p.routing = AppProfile::Routing::kMultiCluster;
  p.cluster_ids = std::move(group);
  p.row_affinity = affinity;
  return p;
}

// c1 and c2 share a region; c3 is on another continent.
std::vector<RouteCandidate> Instance(std::set<std::string> down = {}) {
  std::vector<RouteCandidate> clusters = {
      {"c1", "us-east1-b"}, {"c2", "us-east1-c"}, {"c3", "europe-west1-d"}};
  for (RouteCandidate& c : clusters) {
    c.available = !down.contains(std::string(c.id));
  }
  return clusters;
}

// The route's clusters, in order, as strings.
std::vector<std::string> Order(const RouteChoice& choice) {
  return {choice.clusters().begin(), choice.clusters().end()};
}

RouteRequest Req(std::string_view zone,
                 RequestKind kind = RequestKind::kSingleRow,
                 std::string_view key = "row") {
  RouteRequest r;
  r.kind = kind;
  r.row_key = key;
  r.client_zone = zone;
  return r;
}

// The serving cluster, or the error code's name.
std::string Serves(const AppProfile& p, const RouteRequest& req,
                   const std::vector<RouteCandidate>& clusters, sim::Rng& rng) {
  Result<RouteChoice> r = Route(p, req, clusters, rng);
  if (!r.ok()) return std::string(StatusCodeName(r.status().code()));
  EXPECT_GT(r->size, 0u);
  return std::string(r->chosen());
}

// --- Which cluster serves ----------------------------------------------------

TEST(RouterTest, WhichClusterServes) {
  const std::array<std::set<std::string>, 4> faults = {
      std::set<std::string>{}, {"c1"}, {"c1", "c2"}, {"c1", "c2", "c3"}};
  struct Row {
    std::string name;
    AppProfile profile;
    std::string zone;
    // Per fault: none, c1 down, c1+c2 down, all down.
    std::array<std::string, 4> serves;
  };
  const std::string kU = "UNAVAILABLE";
  const std::vector<Row> table = {
      // Single-cluster routing never fails over by itself.
      {"single-c1", Single("c1"), "us-east1-b", {"c1", "c1", "c1", "c1"}},
      {"single-c1", Single("c1"), "us-east1-c", {"c1", "c1", "c1", "c1"}},
      {"single-c1", Single("c1"), "europe-west1-d", {"c1", "c1", "c1", "c1"}},
      {"single-c3", Single("c3"), "us-east1-b", {"c3", "c3", "c3", "c3"}},
      {"single-c3", Single("c3"), "us-east1-c", {"c3", "c3", "c3", "c3"}},
      {"single-c3", Single("c3"), "europe-west1-d", {"c3", "c3", "c3", "c3"}},
      // Multi-cluster: nearest available.
      {"multi-any", Multi(), "us-east1-b", {"c1", "c2", "c3", kU}},
      {"multi-any", Multi(), "us-east1-c", {"c2", "c2", "c3", kU}},
      {"multi-any", Multi(), "europe-west1-d", {"c3", "c3", "c3", kU}},
      {"group-c2c3", Multi({"c2", "c3"}), "us-east1-b", {"c2", "c2", "c3", kU}},
      {"group-c2c3", Multi({"c2", "c3"}), "us-east1-c", {"c2", "c2", "c3", kU}},
      {"group-c2c3",
       Multi({"c2", "c3"}),
       "europe-west1-d",
       {"c3", "c3", "c3", kU}},
      {"affinity", Multi({}, true), "us-east1-b", {"c1", "c2", "c3", kU}},
      {"affinity", Multi({}, true), "us-east1-c", {"c2", "c2", "c3", kU}},
      {"affinity", Multi({}, true), "europe-west1-d", {"c3", "c3", "c3", kU}},
  };
  for (const Row& row : table) {
    for (size_t f = 0; f < faults.size(); ++f) {
      for (RequestKind kind :
           {RequestKind::kSingleRow, RequestKind::kMultiRow}) {
        for (uint64_t seed = 0; seed < 8; ++seed) {
          sim::Rng rng(seed);
          EXPECT_EQ(Serves(row.profile, Req(row.zone, kind),
                           Instance(faults[f]), rng),
                    row.serves[f])
              << row.name << " from " << row.zone << ", fault #" << f
              << ", seed " << seed;
        }
      }
    }
  }
}

TEST(RouterTest, FailoverOrderIsTheRestOfTheList) {
  sim::Rng rng(1);
  Result<RouteChoice> r = Route(Multi(), Req("us-east1-b"), Instance(), rng);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(Order(*r), ElementsAre("c1", "c2", "c3"));
  r = Route(Multi(), Req("us-east1-b"), Instance({"c2"}), rng);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(Order(*r), ElementsAre("c1", "c3"));
  r = Route(Multi({"c2", "c3"}), Req("us-east1-b"), Instance(), rng);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(Order(*r), ElementsAre("c2", "c3"));  // c1 is outside the group
  r = Route(Multi(), Req("europe-west1-d"), Instance(), rng);
  ASSERT_TRUE(r.ok());
  ASSERT_EQ(r->size, 3u);
  EXPECT_EQ(r->chosen(), "c3");
  EXPECT_THAT(
      std::vector<std::string>(r->order.begin() + 1, r->order.begin() + 3),
      UnorderedElementsAre("c1", "c2"));
}

TEST(RouterTest, SingleClusterReturnsItsClusterEvenWhenDown) {
  sim::Rng rng(1);
  Result<RouteChoice> r =
      Route(Single("c2"), Req("us-east1-b"), Instance({"c1", "c2", "c3"}), rng);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(Order(*r), ElementsAre("c2"));
}

TEST(RouterTest, SingleClusterToMissingClusterIsNotFound) {
  sim::Rng rng(1);
  Result<RouteChoice> r =
      Route(Single("c9"), Req("us-east1-b"), Instance(), rng);
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST(RouterTest, GroupIdsMissingFromInstanceAreIgnored) {
  sim::Rng rng(1);
  Result<RouteChoice> r =
      Route(Multi({"c9", "c3"}), Req("us-east1-b"), Instance(), rng);
  ASSERT_TRUE(r.ok());
  EXPECT_THAT(Order(*r), ElementsAre("c3"));
  r = Route(Multi({"c9"}), Req("us-east1-b"), Instance(), rng);
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
}

TEST(RouterTest, AllDownIsUnavailableWithMessage) {
  sim::Rng rng(1);
  Result<RouteChoice> r =
      Route(Multi(), Req("us-east1-b"), Instance({"c1", "c2", "c3"}), rng);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.status().message(),
            "No cluster of this app profile is available");
}

// --- Equidistant clusters ----------------------------------------------------

TEST(RouterTest, SameRegionClustersAreEquidistant) {
  std::map<std::string, int> first;
  for (uint64_t seed = 0; seed < 200; ++seed) {
    sim::Rng rng(seed);
    for (RequestKind kind : {RequestKind::kSingleRow, RequestKind::kMultiRow}) {
      Result<RouteChoice> r =
          Route(Multi(), Req("us-east1-d", kind), Instance(), rng);
      ASSERT_TRUE(r.ok());
      ASSERT_EQ(r->size, 3u);
      EXPECT_EQ(r->order[2], "c3");  // the far cluster is always last
      ++first[std::string(r->chosen())];
    }
  }
  EXPECT_EQ(first.size(), 2u);
  EXPECT_GT(first["c1"], 100);
  EXPECT_GT(first["c2"], 100);
}

TEST(RouterTest, OneRngDrawPerTieGroup) {
  // From us-east1-b every cluster is at its own distance: no draw.
  sim::Rng rng(7), reference(7);
  ASSERT_TRUE(Route(Multi(), Req("us-east1-b"), Instance(), rng).ok());
  EXPECT_EQ(rng.Next(), reference.Next());
  // From us-east1-d, {c1, c2} tie: exactly one draw.
  sim::Rng rng2(7), reference2(7);
  ASSERT_TRUE(Route(Multi(), Req("us-east1-d"), Instance(), rng2).ok());
  reference2.Uniform(2);
  EXPECT_EQ(rng2.Next(), reference2.Next());
}

// --- Row affinity ------------------------------------------------------------

TEST(RouterTest, RowAffinityIsStickyPerKey) {
  const AppProfile p = Multi({}, true);
  std::map<std::string, int> spread;
  for (int k = 0; k < 100; ++k) {
    const std::string key = "user#" + std::to_string(k);
    std::set<std::string> firsts;
    for (uint64_t seed = 0; seed < 10; ++seed) {
      sim::Rng rng(seed);
      Result<RouteChoice> r = Route(
          p, Req("us-east1-d", RequestKind::kSingleRow, key), Instance(), rng);
      ASSERT_TRUE(r.ok());
      firsts.insert(std::string(r->chosen()));
    }
    ASSERT_EQ(firsts.size(), 1u) << key;
    ++spread[*firsts.begin()];
  }
  // Keys spread over both equidistant clusters, never the far one.
  EXPECT_EQ(spread.size(), 2u);
  EXPECT_GT(spread["c1"], 20);
  EXPECT_GT(spread["c2"], 20);
}

TEST(RouterTest, RowAffinityFailsOverDeterministicallyAndFailsBack) {
  const AppProfile p = Multi({}, true);
  for (int k = 0; k < 20; ++k) {
    const std::string key = "k" + std::to_string(k);
    const RouteRequest req = Req("us-east1-d", RequestKind::kSingleRow, key);
    sim::Rng rng(k);
    const std::string home = Serves(p, req, Instance(), rng);
    ASSERT_TRUE(home == "c1" || home == "c2");
    const std::string other = home == "c1" ? "c2" : "c1";
    for (uint64_t seed = 0; seed < 10; ++seed) {
      sim::Rng r(seed);
      Result<RouteChoice> down = Route(p, req, Instance({home}), r);
      ASSERT_TRUE(down.ok());
      EXPECT_THAT(Order(*down), ElementsAre(other, "c3"));
    }
    // Back home once it recovers.
    EXPECT_EQ(Serves(p, req, Instance(), rng), home);
  }
}

TEST(RouterTest, RowAffinityDoesNotPinMultiRowRequests) {
  const AppProfile p = Multi({}, true);
  std::set<std::string> firsts;
  for (uint64_t seed = 0; seed < 100; ++seed) {
    sim::Rng rng(seed);
    firsts.insert(Serves(p, Req("us-east1-d", RequestKind::kMultiRow, "k"),
                         Instance(), rng));
  }
  EXPECT_THAT(firsts, UnorderedElementsAre("c1", "c2"));
}

// --- Transaction gating ------------------------------------------------------

TEST(RouterTest, TransactionsAllowedOnlyBySingleClusterTransactional) {
  struct Case {
    std::string name;
    AppProfile profile;
    bool allows;
  };
  const std::vector<Case> cases = {
      {"single+txn", Single("c1", true), true},
      {"single", Single("c1", false), false},
      {"multi-any", Multi(), false},
      {"multi-group", Multi({"c2", "c3"}), false},
      {"multi-affinity", Multi({}, true), false},
  };
  for (const Case& c : cases) {
    sim::Rng rng(3);
    Result<RouteChoice> r =
        Route(c.profile, Req("us-east1-b", RequestKind::kTransaction),
              Instance(), rng);
    if (c.allows) {
      ASSERT_TRUE(r.ok()) << c.name;
      EXPECT_THAT(Order(*r), ElementsAre("c1"));
    } else {
      ASSERT_FALSE(r.ok()) << c.name;
      EXPECT_EQ(r.status().code(), StatusCode::kFailedPrecondition) << c.name;
      EXPECT_EQ(r.status().message(),
                "Single-row transactions are not allowed by this app profile");
    }
    // Non-transactional requests go through for every kind of profile.
    for (RequestKind kind : {RequestKind::kSingleRow, RequestKind::kMultiRow}) {
      EXPECT_TRUE(
          Route(c.profile, Req("us-east1-b", kind), Instance(), rng).ok())
          << c.name;
    }
  }
}

TEST(RouterTest, GatingComesFirst) {
  sim::Rng rng(3);
  // Refused before the missing cluster or the outage is noticed.
  EXPECT_EQ(Route(Single("c9"), Req("us-east1-b", RequestKind::kTransaction),
                  Instance(), rng)
                .status()
                .code(),
            StatusCode::kFailedPrecondition);
  EXPECT_EQ(Route(Multi(), Req("us-east1-b", RequestKind::kTransaction),
                  Instance({"c1", "c2", "c3"}), rng)
                .status()
                .code(),
            StatusCode::kFailedPrecondition);
}

// --- Distance ----------------------------------------------------------------

TEST(DistanceTest, ZoneRegionAndElsewhere) {
  EXPECT_EQ(Distance("us-east1-b", "us-east1-b"), 0);
  EXPECT_EQ(Distance("us-east1-b", "us-east1-c"), 1);
  EXPECT_EQ(Distance("us-east1-c", "us-east1-b"), 1);
  EXPECT_EQ(Distance("us-east1-b", "us-east4-b"), 2);
  EXPECT_EQ(Distance("us-east1-b", "europe-west1-b"), 2);
  EXPECT_EQ(Distance("europe-west1-d", "europe-west1-b"), 1);
  EXPECT_EQ(Distance("asia-northeast1-a", "asia-northeast2-a"), 2);
  EXPECT_EQ(Distance("", ""), 0);
  EXPECT_EQ(Distance("", "us-east1-b"), 2);
  EXPECT_EQ(Distance("local", "local"), 0);
  EXPECT_EQ(Distance("local", "other"), 2);
}

// --- Determinism -------------------------------------------------------------

std::vector<std::string> Choices(uint64_t seed) {
  sim::Rng rng(seed);
  std::vector<std::string> out;
  const std::vector<std::string> zones = {"us-east1-d", "europe-west1-b",
                                          "asia-east1-a"};
  for (int i = 0; i < 300; ++i) {
    const RequestKind kind =
        i % 2 == 0 ? RequestKind::kSingleRow : RequestKind::kMultiRow;
    const std::string key = "k" + std::to_string(i);
    Result<RouteChoice> r =
        Route(i % 3 == 0 ? Multi({}, true) : Multi(),
              Req(zones[i % zones.size()], kind, key), Instance(), rng);
    EXPECT_TRUE(r.ok());
    std::string joined;
    for (std::string_view c : r->clusters()) joined += std::string(c) + ",";
    out.push_back(joined);
  }
  return out;
}

TEST(RouterTest, SameSeedSameChoices) {
  EXPECT_EQ(Choices(42), Choices(42));
  EXPECT_NE(Choices(42), Choices(43));
}

// "nearest" is the choice Route makes with every candidate available, and
// availability changes neither the draws nor the order of the rest.
TEST(RouterTest, NearestIsTheChoiceWithEveryClusterAvailable) {
  const std::vector<AppProfile> profiles = {Multi(),
                                            Multi({}, /*affinity=*/true),
                                            Multi({"c1", "c3"}),
                                            Single("c2"),
                                            Single("c9"),
                                            Single("c1", /*txn=*/true)};
  const std::vector<std::set<std::string>> downs = {
      {}, {"c1"}, {"c1", "c2"}, {"c3"}, {"c1", "c2", "c3"}};
  const std::vector<std::string> zones = {"us-east1-b", "us-east1-d",
                                          "europe-west1-b", "asia-east1-a"};
  int compared = 0;
  for (const AppProfile& profile : profiles) {
    for (const auto& down : downs) {
      for (const std::string& zone : zones) {
        for (RequestKind kind :
             {RequestKind::kSingleRow, RequestKind::kMultiRow,
              RequestKind::kTransaction}) {
          for (int row = 0; row < 20; ++row) {
            const std::string key = "row" + std::to_string(row);
            const RouteRequest request{kind, key, zone};
            sim::Rng rng(row + 1), all_rng = rng;
            auto route = Route(profile, request, Instance(down), rng);
            auto all = Route(profile, request, Instance(), all_rng);
            EXPECT_EQ(rng.Next(), all_rng.Next());
            if (!route.ok()) continue;
            ASSERT_TRUE(all.ok());
            ++compared;
            EXPECT_EQ(route->nearest, all->chosen());
            EXPECT_EQ(all->nearest, all->chosen());
            // The available clusters keep the order they have with all up.
            std::vector<std::string> expected;
            for (const std::string& c : Order(*all)) {
              if (!down.contains(c) ||
                  profile.routing == AppProfile::Routing::kSingleCluster) {
                expected.push_back(c);
              }
            }
            EXPECT_EQ(Order(*route), expected);
          }
        }
      }
    }
  }
  EXPECT_GT(compared, 1000);
}

TEST(RouterTest, GivenDistancesAreUsed) {
  // A distance given with a cluster is taken as is (the caller vouches for
  // it): here it makes the far cluster the nearest.
  const std::vector<RouteCandidate> candidates = {
      {"c1", "us-east1-b", true, 2}, {"c2", "europe-west1-b", true, 0}};
  sim::Rng rng(1);
  auto route = Route(Multi(), {RequestKind::kSingleRow, "k", "us-east1-b"},
                     candidates, rng);
  ASSERT_TRUE(route.ok());
  EXPECT_EQ(route->chosen(), "c2");
  EXPECT_THAT(Order(*route), ElementsAre("c2", "c1"));
}

TEST(RouterTest, MoreCandidatesThanTheLimitAreRefused) {
  std::vector<std::string> names;
  for (size_t i = 0; i <= kMaxRouteCandidates; ++i) {
    names.push_back("c" + std::to_string(i));
  }
  std::vector<RouteCandidate> candidates;
  for (const std::string& name : names) {
    candidates.push_back({name, "us-east1-b"});
  }
  sim::Rng rng(1);
  auto route = Route(Multi(), {RequestKind::kSingleRow, "k", "us-east1-b"},
                     candidates, rng);
  EXPECT_EQ(route.status().code(), StatusCode::kInvalidArgument);
  candidates.pop_back();
  EXPECT_TRUE(Route(Multi(), {RequestKind::kSingleRow, "k", "us-east1-b"},
                    candidates, rng)
                  .ok());
}

}  // namespace
}  // namespace btsim::appprofile
