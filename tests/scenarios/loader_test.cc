#include "scenarios/loader.h"

#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace btsim::scenarios {
namespace {

using ::testing::HasSubstr;
using ::testing::StartsWith;

// A small valid scenario. The tests check line numbers: `name` is on line
// 1, the clients' app_profile on line 11, ops_per_second on line 15, the
// timeline on line 18. (The delimiter is not "pb", so that clang-format
// leaves the text alone.)
constexpr char kValid[] = R"txt(name: "t"
duration { seconds: 10 }
instance {
  clusters { id: "c1" zone: "us-east1-b" }
  clusters { id: "c2" zone: "us-east1-c" }
  app_profiles { id: "pinned" single_cluster { cluster_id: "c1" } }
}
tables { id: "t1" families { name: "cf" } }
clients {
  name: "app"
  app_profile: "pinned"
  workload {
    mix { read_row: 1 write: 1 }
    keys { uniform {} }
    ops_per_second: 10
  }
}
timeline { at { seconds: 5 } cluster_down { cluster: "c2" } }
expectations { name: "e" metric: ERRORS at_most: 0 }
)txt";

Result<LoadedScenario> Parse(const std::string& text,
                             std::vector<Override> overrides = {}) {
  return ParseScenario(text, "s.textproto", overrides);
}

std::string Replace(std::string text, const std::string& from,
                    const std::string& to) {
  const size_t at = text.find(from);
  EXPECT_NE(at, std::string::npos) << from;
  return text.replace(at, from.size(), to);
}

TEST(LoaderTest, ValidScenarioLoads) {
  auto loaded = Parse(kValid);
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->name, "t");
  EXPECT_EQ(loaded->instance.config.clusters.size(), 2u);
  EXPECT_EQ(loaded->proto.clients(0).app_profile(), "pinned");
}

// The clients entry of kValid (lines 8 to 16).
std::string WithoutClients(std::string text) {
  const size_t from = text.find("clients {");
  const size_t to = text.find("timeline {");
  return text.erase(from, to - from);
}

TEST(LoaderTest, RunNeedsAClientServeDoesNot) {
  const std::string text = WithoutClients(kValid);
  auto run = Parse(text);
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(run.status().message(),
              HasSubstr("clients: at least one client is required"));
  auto served = ParseScenario(text, "s.textproto", {}, ScenarioUse::kServe);
  EXPECT_TRUE(served.ok()) << served.status().message();
}

TEST(LoaderTest, ExpectationsMayNameRecordedClientsWhenServed) {
  // "recorded" (every recorded call) in either use.
  EXPECT_TRUE(Parse(Replace(kValid, "metric: ERRORS",
                            "metric: ERRORS client: \"recorded\""))
                  .ok());
  // A caller's identity only when served.
  const std::string named =
      Replace(kValid, "metric: ERRORS", "metric: ERRORS client: \"checkout\"");
  auto run = Parse(named);
  ASSERT_FALSE(run.ok());
  EXPECT_THAT(run.status().message(), HasSubstr("unknown client 'checkout'"));
  EXPECT_TRUE(
      ParseScenario(named, "s.textproto", {}, ScenarioUse::kServe).ok());
}

TEST(LoaderTest, RecordedIsNotASimulatedClientName) {
  auto loaded = Parse(Replace(kValid, "name: \"app\"", "name: \"recorded\""));
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), HasSubstr("is reserved"));
}

TEST(LoaderTest, NameDefaultsToTheFileStem) {
  auto loaded = ParseScenario(Replace(kValid, "name: \"t\"", ""),
                              "dir/zone-outage.textproto", {});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->name, "zone-outage");
}

TEST(LoaderTest, SyntaxErrorNamesFileAndLine) {
  auto loaded =
      Parse(Replace(kValid, "ops_per_second: 10", "ops_per_second: 10 }"));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(loaded.status().message(), StartsWith("s.textproto:17:"));
}

TEST(LoaderTest, UnknownFieldIsAnError) {
  auto loaded = Parse(
      Replace(kValid, "ops_per_second: 10", "ops_per_second: 10 speed: 3"));
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(), StartsWith("s.textproto:15:"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("speed"));
}

TEST(LoaderTest, MissingProfileNamesLineAndField) {
  auto loaded = Parse(
      Replace(kValid, "app_profile: \"pinned\"", "app_profile: \"nope\""));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().message(),
            "s.textproto:11: clients[0].app_profile: unknown app profile "
            "'nope'");
}

// 1,000 clients at 10^6 operations per second each: every field is legal,
// but the run could not record its operations.
TEST(LoaderTest, ImpossibleOfferedLoadIsRefusedNamingTheRate) {
  auto loaded = Parse(
      Replace(Replace(kValid, "ops_per_second: 10", "ops_per_second: 1000000"),
              "name: \"app\"", "name: \"app\" count: 1000"));
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(loaded.status().message(),
              StartsWith("s.textproto:15: clients[0].workload.ops_per_second: "
                         "the open-loop clients would offer about "
                         "10000000000 operations in 10 s"));
  EXPECT_THAT(loaded.status().message(), HasSubstr("500000000"));
}

// The projection follows the timeline: the same rate for one second, then
// stopped, fits; raised by change_workload, it does not, and the step's
// field is named.
TEST(LoaderTest, OfferedLoadFollowsStartStopAndChangeWorkload) {
  const std::string fast =
      Replace(kValid, "ops_per_second: 10", "ops_per_second: 1000000");
  auto stopped = Parse(Replace(
      fast, "timeline { at { seconds: 5 } cluster_down { cluster: \"c2\" } }",
      "timeline { at { seconds: 1 } stop_client { client: \"app\" } }"));
  EXPECT_TRUE(stopped.ok()) << stopped.status().message();
  auto raised = Parse(
      Replace(Replace(kValid, "name: \"app\"", "name: \"app\" count: 101"),
              "timeline { at { seconds: 5 } cluster_down { cluster: \"c2\" } }",
              "timeline { at { seconds: 5 } change_workload { client: \"app\" "
              "workload { mix { write: 1 } keys { uniform {} } "
              "ops_per_second: 1000000 } } }"));
  ASSERT_FALSE(raised.ok());
  EXPECT_THAT(raised.status().message(),
              HasSubstr("timeline[0].change_workload.workload.ops_per_second: "
                        "the open-loop clients would offer about 505005050 "));
}

TEST(LoaderTest, MissingClusterInTimelineNamesLine) {
  auto loaded = Parse(Replace(kValid, "cluster_down { cluster: \"c2\" }",
                              "cluster_down { cluster: \"c9\" }"));
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(),
              StartsWith("s.textproto:18: timeline[0].cluster_down.cluster: "
                         "no cluster 'c9'"));
}

TEST(LoaderTest, InstanceErrorsArePrefixed) {
  auto loaded =
      Parse(Replace(kValid, "zone: \"us-east1-c\"", "zone: \"us-east1-b\""));
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(),
              StartsWith("s.textproto:5: instance.clusters[1].zone:"));
}

TEST(LoaderTest, ImpossibleValues) {
  struct Case {
    std::string from, to, field;
  };
  const std::vector<Case> cases = {
      {"ops_per_second: 10", "ops_per_second: -1",
       "clients[0].workload.ops_per_second"},
      {"mix { read_row: 1 write: 1 }", "mix { }", "clients[0].workload.mix"},
      {"duration { seconds: 10 }", "duration { seconds: 0 }", "duration"},
      {"at { seconds: 5 }", "at { seconds: 50 }", "timeline[0].at"},
      {"at_most: 0", "", "expectations[0]: set at_most or at_least"},
      {"metric: ERRORS", "", "expectations[0].metric: required"},
      {"keys { uniform {} }", "keys { }", "clients[0].workload.keys"},
      {"families { name: \"cf\" }",
       "families { name: \"cf\" } "
       "families { name: \"cf\" }",
       "tables[0].families[1].name"},
      {"name: \"app\"", "name: \"App\"", "clients[0].name"},
  };
  for (const Case& c : cases) {
    auto loaded = Parse(Replace(kValid, c.from, c.to));
    ASSERT_FALSE(loaded.ok()) << c.from << " -> " << c.to;
    EXPECT_THAT(loaded.status().message(), HasSubstr(c.field))
        << loaded.status().message();
  }
}

TEST(LoaderTest, TimelineSeesClustersAddedEarlier) {
  std::string text = Replace(
      kValid, "timeline { at { seconds: 5 } cluster_down { cluster: \"c2\" } }",
      "timeline { at { seconds: 6 } cluster_down { cluster: \"c3\" } }\n"
      "timeline { at { seconds: 5 } add_cluster { id: \"c3\" zone: "
      "\"us-west1-a\" } }");
  auto loaded = Parse(text);
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  // Down before it exists.
  text = Replace(text, "at { seconds: 6 }", "at { seconds: 4 }");
  loaded = Parse(text);
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(),
              HasSubstr("timeline[0].cluster_down.cluster: no cluster 'c3'"));
}

// The message after "s.textproto:LINE: ".
std::string WithoutLocation(const Status& status) {
  const std::string& message = status.message();
  const size_t colon = message.find(": ");
  return colon == std::string::npos ? message : message.substr(colon + 2);
}

TEST(LoaderTest, EveryStepKindNamesTheFieldItRejects) {
  struct Case {
    std::string timeline;  // replaces kValid's timeline
    std::string message;
  };
  const std::vector<Case> cases = {
      {"timeline { at { seconds: 5 } }",
       "timeline[0]: set one action (cluster_down, partition, resize, ...)"},
      {"timeline { cluster_down {} }",
       "timeline[0].cluster_down.cluster: required"},
      {"timeline { cluster_up { cluster: \"c9\" } }",
       "timeline[0].cluster_up.cluster: no cluster 'c9' at that time"},
      {"timeline { partition { a: \"c1\" b: \"c1\" } }",
       "timeline[0].partition.b: must differ from a"},
      {"timeline { heal { a: \"c1\" b: \"c9\" } }",
       "timeline[0].heal.b: no cluster 'c9' at that time"},
      {"timeline { latency { from_cluster: \"c1\" to_cluster: \"c1\" } }",
       "timeline[0].latency.to_cluster: must differ from from_cluster"},
      {"timeline { latency { from_cluster: \"c1\" to_cluster: \"c2\" } }",
       "timeline[0].latency.latency: required"},
      {"timeline { node_failure { cluster: \"c9\" } }",
       "timeline[0].node_failure.cluster: no cluster 'c9' at that time"},
      {"timeline { resize { cluster: \"c1\" nodes: 0 } }",
       "timeline[0].resize.nodes: must be in 1..1000"},
      {"timeline { add_cluster { zone: \"us-west1-a\" } }",
       "timeline[0].add_cluster.id: required"},
      {"timeline { add_cluster { id: \"C3\" zone: \"us-west1-a\" } }",
       "timeline[0].add_cluster.id: 'C3' is not a valid cluster id; it must "
       "match [a-z][-a-z0-9]* and be at most 30 characters"},
      {"timeline { add_cluster { id: \"c1\" zone: \"us-west1-a\" } }",
       "timeline[0].add_cluster.id: cluster 'c1' already exists at that "
       "time"},
      {"timeline { add_cluster { id: \"c3\" zone: \"west\" } }",
       "timeline[0].add_cluster.zone: 'west' is not a zone name such as "
       "us-east1-b"},
      {"timeline { add_cluster { id: \"c3\" zone: \"us-east1-c\" } }",
       "timeline[0].add_cluster.zone: zone us-east1-c already has cluster "
       "'c2'"},
      {"timeline { add_cluster { id: \"c3\" zone: \"us-west1-a\" nodes: -1 "
       "} }",
       "timeline[0].add_cluster.nodes: must not be negative"},
      {"timeline { add_cluster { id: \"c3\" zone: \"us-west1-a\" } }\n"
       "timeline { add_cluster { id: \"c4\" zone: \"us-west1-b\" } }\n"
       "timeline { add_cluster { id: \"c5\" zone: \"us-west1-c\" } }",
       "timeline[2].add_cluster: an instance has at most 4 clusters"},
      {"timeline { remove_cluster { cluster: \"c2\" } }\n"
       "timeline { at { seconds: 1 } remove_cluster { cluster: \"c1\" } }",
       "timeline[1].remove_cluster.cluster: cannot remove the last cluster"},
      {"timeline { remove_cluster { cluster: \"c2\" } }\n"
       "timeline { at { seconds: 1 } cluster_down { cluster: \"c2\" } }",
       "timeline[1].cluster_down.cluster: no cluster 'c2' at that time"},
      {"timeline { update_app_profile { id: \"nope\" } }",
       "timeline[0].update_app_profile.id: unknown app profile 'nope'"},
      {"timeline { update_app_profile { id: \"pinned\" } }",
       "timeline[0].update_app_profile: set single_cluster or multi_cluster"},
      {"timeline { update_app_profile { id: \"default\" single_cluster { "
       "cluster_id: \"c9\" } } }",
       "timeline[0].update_app_profile.single_cluster.cluster_id: no cluster "
       "'c9' at that time"},
      {"timeline { update_app_profile { id: \"pinned\" multi_cluster { "
       "cluster_ids: \"c1\" cluster_ids: \"c9\" } } }",
       "timeline[0].update_app_profile.multi_cluster.cluster_ids[1]: no "
       "cluster 'c9' at that time"},
      {"timeline { set_gc_rule { family: \"cf\" } }",
       "timeline[0].set_gc_rule.table: required"},
      {"timeline { set_gc_rule { table: \"t9\" family: \"cf\" } }",
       "timeline[0].set_gc_rule.table: unknown table 't9'"},
      {"timeline { set_gc_rule { table: \"t1\" family: \"x\" } }",
       "timeline[0].set_gc_rule.family: table 't1' has no family 'x'"},
      {"timeline { set_gc_rule { table: \"t1\" family: \"cf\" gc_rule { "
       "union {} } } }",
       "timeline[0].set_gc_rule.gc_rule.union.rules: at least one rule is "
       "required"},
      {"timeline { drop_row_range { prefix: \"a\" } }",
       "timeline[0].drop_row_range.table: required"},
      {"timeline { start_client { client: \"x\" } }",
       "timeline[0].start_client.client: unknown client 'x'"},
      {"timeline { stop_client {} }",
       "timeline[0].stop_client.client: required"},
      {"timeline { change_workload { client: \"app\" } }",
       "timeline[0].change_workload.workload: required"},
      {"timeline { change_workload { workload {} } }",
       "timeline[0].change_workload.client: required"},
      {"timeline { change_workload { client: \"app\" workload { keys { "
       "uniform {} } ops_per_second: 1 } } }",
       "timeline[0].change_workload.workload.mix: at least one operation "
       "needs a non-zero weight"},
      {"timeline { wait_for_replication { table: \"x\" } }",
       "timeline[0].wait_for_replication.table: unknown table 'x'"},
      {"timeline { wait_for_replication { table: \"t1\" interval {} } }",
       "timeline[0].wait_for_replication.interval: must be positive"},
  };
  const std::string valid_step =
      "timeline { at { seconds: 5 } cluster_down { cluster: \"c2\" } }";
  for (const Case& c : cases) {
    auto loaded = Parse(Replace(kValid, valid_step, c.timeline));
    ASSERT_FALSE(loaded.ok()) << c.timeline;
    EXPECT_EQ(loaded.status().code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(WithoutLocation(loaded.status()), c.message) << c.timeline;
  }
}

TEST(LoaderTest, SetOverridesScalars) {
  auto loaded = Parse(kValid, {{"clients[0].workload.ops_per_second", "500"},
                               {"seed", "7"},
                               {"duration", "8.5s"},
                               {"instance.clusters[1].nodes", "3"},
                               {"expectations[0].metric", "SUCCESSES"}});
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  EXPECT_EQ(loaded->proto.clients(0).workload().ops_per_second(), 500);
  EXPECT_EQ(loaded->proto.seed(), 7u);
  EXPECT_EQ(loaded->proto.duration().seconds(), 8);
  EXPECT_EQ(loaded->proto.duration().nanos(), 500'000'000);
  EXPECT_EQ(loaded->instance.config.clusters[1].nodes, 3);
  EXPECT_EQ(loaded->proto.expectations(0).metric(),
            btsim::scenario::v1::SUCCESSES);
}

TEST(LoaderTest, SetErrorsNameThePath) {
  const std::vector<std::pair<Override, std::string>> cases = {
      {{"clients[3].name", "x"}, "has only 1 entries"},
      {{"clients.name", "x"}, "give an index"},
      {{"bogus", "1"}, "has no field 'bogus'"},
      {{"seed", "abc"}, "is not a uint64"},
      {{"instance", "x"}, "not a scalar"},
      {{"expectations[0].metric", "NOPE"}, "is not a value of Metric"},
      {{"duration", "forever"}, "is not a duration"},
  };
  for (const auto& [override, message] : cases) {
    auto loaded = Parse(kValid, {override});
    ASSERT_FALSE(loaded.ok()) << override.path;
    EXPECT_THAT(loaded.status().message(), StartsWith("s.textproto:0: --set "));
    EXPECT_THAT(loaded.status().message(), HasSubstr(message));
  }
  // A valid path with an impossible value fails validation.
  auto loaded = Parse(kValid, {{"clients[0].workload.ops_per_second", "0"}});
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(),
              HasSubstr("clients[0].workload.ops_per_second"));
}

TEST(LoaderTest, ParseOverride) {
  auto o = ParseOverride("a.b[2]=x=y");
  ASSERT_TRUE(o.ok());
  EXPECT_EQ(o->path, "a.b[2]");
  EXPECT_EQ(o->value, "x=y");
  EXPECT_FALSE(ParseOverride("novalue").ok());
  EXPECT_FALSE(ParseOverride("=3").ok());
}

TEST(LoaderTest, MissingFileIsNotFound) {
  auto loaded = LoadScenario("/nonexistent/x.textproto");
  ASSERT_FALSE(loaded.ok());
  EXPECT_EQ(loaded.status().code(), StatusCode::kNotFound);
}

}  // namespace
}  // namespace btsim::scenarios
