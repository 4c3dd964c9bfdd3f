#include "scenarios/steps.h"

#include <map>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include "scenarios/runner.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::scenario::v1;
using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(StepKindsTest, EveryCaseOfStepActionHasExactlyOneKind) {
  const google::protobuf::OneofDescriptor* action =
      v1::Step::descriptor()->FindOneofByName("action");
  ASSERT_NE(action, nullptr);
  for (int i = 0; i < action->field_count(); ++i) {
    const google::protobuf::FieldDescriptor* field = action->field(i);
    int kinds = 0;
    for (const StepKind& kind : StepKinds()) {
      if (kind.action == field->number()) {
        ++kinds;
        EXPECT_NE(kind.validate, nullptr) << field->name();
        EXPECT_NE(kind.apply, nullptr) << field->name();
      }
    }
    EXPECT_EQ(kinds, 1) << "Step." << field->name();
  }
  // And no kind for anything else.
  EXPECT_EQ(StepKinds().size(), static_cast<size_t>(action->field_count()));
}

TEST(StepKindsTest, AStepWithoutActionIsAnError) {
  StepScope scope;
  const Status s = ValidateStep(v1::Step(), "timeline[2]", scope);
  EXPECT_EQ(s.code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("timeline[2]: set one action"));
}

TEST(StepKindsTest, ClusterStepsSeeTheClustersOfTheirTime) {
  StepScope scope;
  scope.clusters_now = {"c1", "c2"};
  scope.clusters_ever = scope.clusters_now;
  scope.zone_of = {{"c1", "us-east1-b"}, {"c2", "us-east1-c"}};
  v1::Step add;
  add.mutable_add_cluster()->set_id("c3");
  add.mutable_add_cluster()->set_zone("us-west1-a");
  ASSERT_TRUE(ValidateStep(add, "timeline[0]", scope).ok());
  EXPECT_EQ(scope.clusters_now.count("c3"), 1u);
  EXPECT_EQ(scope.zone_of["c3"], "us-west1-a");
  v1::Step remove;
  remove.mutable_remove_cluster()->set_cluster("c1");
  ASSERT_TRUE(ValidateStep(remove, "timeline[1]", scope).ok());
  EXPECT_EQ(scope.clusters_now.count("c1"), 0u);
  EXPECT_EQ(scope.clusters_ever.count("c1"), 1u);  // for expectations
  // c1's zone is free again.
  v1::Step readd = add;
  readd.mutable_add_cluster()->set_id("c4");
  readd.mutable_add_cluster()->set_zone("us-east1-b");
  EXPECT_TRUE(ValidateStep(readd, "timeline[2]", scope).ok());
}

// Two clusters in one region and one far away (c3, one node), a table and
// a writing client; each test appends its timeline.
constexpr char kBase[] = R"pb(
  duration { seconds: 10 }
  instance {
    clusters { id: "c1" zone: "us-east1-b" nodes: 3 }
    clusters { id: "c2" zone: "us-east1-c" nodes: 2 }
    clusters { id: "c3" zone: "europe-west1-d" nodes: 1 }
  }
  tables {
    id: "t"
    families { name: "cf" }
  }
  clients {
    name: "app"
    workload {
      mix { write: 1 }
      keys { uniform {} }
      ops_per_second: 50
    }
  }
)pb";

constexpr sim::Duration kSampleEvery = std::chrono::milliseconds(100);

struct Played {
  RunOutcome outcome;
  // Each cluster's node count (0: no such cluster) every kSampleEvery,
  // from 0 until the run has settled.
  std::map<std::string, std::vector<int>> nodes;

  int NodesAt(const std::string& cluster, sim::Duration at) const {
    return nodes.at(cluster).at(at / kSampleEvery);
  }
};

Played Play(const std::string& timeline) {
  Played played;
  auto loaded = ParseScenario(std::string(kBase) + timeline, "s.textproto");
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  if (!loaded.ok()) return played;
  RunOptions options;
  options.sample_every = kSampleEvery;
  options.on_sample = [&](sim::Time, instance::Instance& instance) {
    for (const char* id : {"c1", "c2", "c3"}) {
      const cluster::NodeModel* nodes = instance.Nodes(id);
      played.nodes[id].push_back(nodes == nullptr ? 0 : nodes->nodes());
    }
  };
  auto outcome = RunScenario(*loaded, options);
  EXPECT_TRUE(outcome.ok()) << outcome.status().message();
  if (outcome.ok()) played.outcome = std::move(*outcome);
  return played;
}

std::vector<const Event*> EventsOf(const RunOutcome& o, EventKind kind) {
  std::vector<const Event*> events;
  for (const Event& e : o.history.events) {
    if (e.kind == kind) events.push_back(&e);
  }
  return events;
}

TEST(StepsTest, ANodeFailureTakesANodeAwayUntilItsReplacementJoins) {
  const Played p = Play(R"pb(
    timeline {
      at { seconds: 2 nanos: 50000000 }
      node_failure {
        cluster: "c1"
        recovery { seconds: 3 }
      }
    }
    timeline {
      at { seconds: 6 nanos: 50000000 }
      resize { cluster: "c2" nodes: 4 }
    }
  )pb");
  std::vector<int> c1;
  for (int s = 0; s < 8; ++s) c1.push_back(p.NodesAt("c1", seconds(s)));
  EXPECT_THAT(c1, ElementsAre(3, 3, 3, 2, 2, 2, 3, 3));
  EXPECT_EQ(p.NodesAt("c2", seconds(6)), 2);
  EXPECT_EQ(p.NodesAt("c2", seconds(7)), 4);
  const auto recovered = EventsOf(p.outcome, EventKind::kNodeRecovery);
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0]->at, std::chrono::milliseconds(5050));
  EXPECT_EQ(recovered[0]->label, "a replacement node joins c1");
}

TEST(StepsTest, TheSettlePhaseReplacesFailedNodesUnlessFaultsAreKept) {
  // c3 is down at the end, so settling takes a while (it catches up).
  const std::string timeline = R"pb(
    timeline {
      at { seconds: 8 }
      node_failure { cluster: "c1" }
    }
    timeline {
      at { seconds: 9 }
      cluster_down { cluster: "c3" }
    }
  )pb";
  const Played repaired = Play(timeline);
  // The replacement would take 5 minutes.
  EXPECT_EQ(repaired.NodesAt("c1", seconds(10)), 2);
  ASSERT_GT(repaired.nodes.at("c1").size(), 101u);
  EXPECT_EQ(repaired.nodes.at("c1").back(), 3);
  EXPECT_GE(repaired.outcome.history.settled, seconds(10));
  const Played kept = Play(timeline + R"pb(
    settle {
      keep_faults: true
      max { seconds: 2 }
    }
  )pb");
  ASSERT_GT(kept.nodes.at("c1").size(), 101u);
  EXPECT_EQ(kept.nodes.at("c1").back(), 2);
  EXPECT_LT(kept.outcome.history.settled, seconds(0));  // c3 stayed down
}

TEST(StepsTest, TheHistoryRecordsTheGcRulesOfTheClientsFamily) {
  const Played p = Play(R"pb(
    timeline {
      at { seconds: 3 }
      set_gc_rule {
        table: "t"
        family: "cf"
        gc_rule { max_age { seconds: 60 } }
      }
    }
  )pb");
  const std::vector<GcRuleChange>& rules = p.outcome.history.gc_rules;
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].at, seconds(0));
  EXPECT_EQ(rules[0].table, "t");
  EXPECT_EQ(rules[0].rule, cluster::GcRule::None());
  EXPECT_EQ(rules[1].at, seconds(3));
  EXPECT_EQ(rules[1].rule, cluster::GcRule::MaxAge(std::chrono::minutes(1)));
}

TEST(StepsTest, AStepTheInstanceRefusesSaysSoInItsEvent) {
  const Played p = Play(R"pb(
    timeline {
      at { seconds: 1 }
      node_failure {
        cluster: "c3"
        recovery { seconds: 2 }
      }
    }
    timeline {
      at { seconds: 2 }
      remove_cluster { cluster: "c3" }
    }
    timeline {
      at { seconds: 4 }
      cluster_down { cluster: "c1" }
    }
    timeline {
      at { seconds: 4 }
      cluster_down { cluster: "c2" }
    }
    timeline {
      at { seconds: 5 }
      label: "keep one version"
      set_gc_rule {
        table: "t"
        family: "cf"
        gc_rule { max_num_versions: 1 }
      }
    }
    timeline {
      at { seconds: 6 }
      cluster_up { cluster: "c1" }
    }
    timeline {
      at { seconds: 7 }
      drop_row_range { table: "t" }
    }
    timeline {
      at { seconds: 7 }
      drop_row_range { table: "t" }
    }
  )pb");
  // c3's only node failed, then c3 was removed: its replacement has
  // nowhere to join.
  const auto recovered = EventsOf(p.outcome, EventKind::kNodeRecovery);
  ASSERT_EQ(recovered.size(), 1u);
  EXPECT_EQ(recovered[0]->label,
            "a replacement node joins c3 (refused: cluster 'c3' not found)");
  // No cluster is up to take the schema change; the step's own label is
  // kept.
  const auto gc = EventsOf(p.outcome, EventKind::kSetGcRule);
  ASSERT_EQ(gc.size(), 1u);
  EXPECT_THAT(gc[0]->label, HasSubstr("keep one version (refused: "));
  EXPECT_EQ(gc[0]->detail, "cf");
  // A second DropRowRange while the first is still replicating (c2 is
  // down).
  const auto drops = EventsOf(p.outcome, EventKind::kDropRowRange);
  ASSERT_EQ(drops.size(), 2u);
  EXPECT_EQ(drops[0]->label, "drop rows of t");
  EXPECT_FALSE(drops[0]->refused);
  EXPECT_THAT(drops[1]->label,
              HasSubstr("(refused: A DropRowRange operation is already "
                        "ongoing)"));
  EXPECT_TRUE(drops[1]->refused);  // the checkers ignore it
  EXPECT_TRUE(recovered[0]->refused);
  // What the instance did is not marked.
  for (EventKind kind : {EventKind::kNodeFailure, EventKind::kRemoveCluster,
                         EventKind::kClusterDown, EventKind::kClusterUp}) {
    for (const Event* e : EventsOf(p.outcome, kind)) {
      EXPECT_THAT(e->label, Not(HasSubstr("refused"))) << e->label;
      EXPECT_FALSE(e->refused) << e->label;
    }
  }
}

}  // namespace
}  // namespace btsim::scenarios
