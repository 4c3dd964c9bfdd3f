// The `add_to_cell` operation of simulated clients, with and without
// idempotency tokens: what an Operation records of it, the
// DOUBLE_APPLIED_INCREMENTS check on hand-written histories, the loader's
// validation, and runs in which retries after committed attempts double
// count without a token and never with one, the record of applications
// agreeing with the clusters' counters.
#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "cluster/aggregate.h"
#include "scenarios/loader.h"
#include "scenarios/runner.h"
#include "tests/scenarios/checks_test_util.h"

namespace btsim::scenarios {
namespace {

using checks_test::Builder;
using checks_test::Eval;
using ::testing::HasSubstr;

TEST(AddOperationTest, AppliedAndIdempotentShareTheSlot) {
  Operation op;
  op.type = OpType::kAddToCell;
  EXPECT_EQ(op.applied(), 0);
  EXPECT_FALSE(op.idempotent());
  op.set_idempotent(true);
  op.set_applied(3);
  EXPECT_EQ(op.applied(), 3);
  EXPECT_TRUE(op.idempotent());
  op.set_applied(1);
  op.set_idempotent(false);
  EXPECT_EQ(op.applied(), 1);
  EXPECT_FALSE(op.idempotent());
  EXPECT_EQ(OpTypeName(OpType::kAddToCell), "add_to_cell");
  EXPECT_EQ(OpTypeFromName("add_to_cell"), OpType::kAddToCell);

  Operation write;
  write.type = OpType::kWrite;
  EXPECT_EQ(write.applied(), 0);
  EXPECT_FALSE(write.idempotent());
}

// An add by `client` on `row` that `applied` attempts applied.
Operation& Add(Builder& b, const std::string& client, const std::string& row,
               int64_t invoke_ms, int64_t applied, bool idempotent,
               StatusCode code = StatusCode::kOk) {
  Operation& op = b.Op(OpType::kAddToCell, client, row, invoke_ms,
                       invoke_ms + 10, "c1", code);
  op.set_applied(applied);
  op.set_idempotent(idempotent);
  op.attempts = static_cast<int16_t>(applied > 0 ? applied : 1);
  return op;
}

TEST(DoubleAppliedTest, CountsApplicationsBeyondTheFirst) {
  Builder b;
  Add(b, "plain-0", "r1", 0, 2, false, StatusCode::kDeadlineExceeded);
  Add(b, "plain-0", "r1", 5, 1, false);
  Add(b, "plain-1", "r2", 10, 3, false);
  Add(b, "plain-1", "r3", 20, 0, false, StatusCode::kUnavailable);
  Add(b, "tokened-0", "r1", 30, 1, true);
  Add(b, "tokened-0", "r4", 40, 2, true);         // beat replication elsewhere
  b.Write("plain-0", "r1", "plain-0/0", 50, 60);  // not an add

  const ExpectationResult all =
      Eval(b.history(), "metric: DOUBLE_APPLIED_INCREMENTS at_most: 0");
  EXPECT_EQ(all.value, 1 + 2 + 1);
  EXPECT_FALSE(all.pass);
  EXPECT_THAT(all.detail,
              HasSubstr("4 extra applications of 3 of 6 adds, on 3 rows"));
  EXPECT_THAT(all.detail, HasSubstr("first: add 0 by plain-0 to t/r1, "
                                    "applied by 2 of 2 attempts"));

  EXPECT_EQ(Eval(b.history(),
                 "metric: DOUBLE_APPLIED_INCREMENTS client: 'plain-1' "
                 "at_least: 1")
                .value,
            2);
  const ExpectationResult tokened =
      Eval(b.history(),
           "metric: DOUBLE_APPLIED_INCREMENTS client: 'tokened' at_most: 0");
  EXPECT_EQ(tokened.value, 1);
  EXPECT_THAT(tokened.detail, HasSubstr("(with a token)"));
  EXPECT_EQ(Eval(b.history(),
                 "metric: DOUBLE_APPLIED_INCREMENTS window_start { nanos: "
                 "15000000 } at_most: 0")
                .value,
            1);
}

TEST(DoubleAppliedTest, NoAddsMeasureZero) {
  Builder b;
  b.Write("a-0", "r", "a-0/0", 0, 10);
  const ExpectationResult result =
      Eval(b.history(), "metric: DOUBLE_APPLIED_INCREMENTS at_most: 0");
  EXPECT_EQ(result.value, 0);
  EXPECT_TRUE(result.pass);
}

constexpr char kScenario[] = R"pb(
  name: "adds"
  seed: 7
  duration { seconds: 20 }
  instance {
    clusters { id: "c1" zone: "us-east1-b" nodes: 1 }
    clusters { id: "c2" zone: "us-east1-c" nodes: 1 }
  }
  tables {
    id: "t"
    families { name: "cf" }
    families { name: "sums" aggregate: SUM }
  }
  clients {
    name: "plain"
    zone: "us-east1-b"
    deadline { seconds: 2 }
    retry { attempt_timeout { nanos: 250000000 } }
    workload {
      mix { add_to_cell: 1 }
      keys { uniform {} entities: 50 }
      ops_per_second: 100
    }
  }
  clients {
    name: "tokened"
    zone: "us-east1-b"
    deadline { seconds: 2 }
    retry { attempt_timeout { nanos: 250000000 } }
    workload {
      mix { add_to_cell: 1 }
      keys { uniform {} entities: 50 }
      ops_per_second: 100
      idempotent_adds: true
    }
  }
  timeline {
    at { seconds: 5 }
    cut_clients { cluster: "c1" client_zone: "us-east1-b" direction: REPLIES }
    for { seconds: 5 }
  }
  timeline {
    at { seconds: 14 }
    stop_client { client: "plain" }
  }
  timeline {
    at { seconds: 14 }
    stop_client { client: "tokened" }
  }
  expectations {
    name: "plain"
    metric: DOUBLE_APPLIED_INCREMENTS
    client: "plain"
    at_least: 1
  }
  expectations {
    name: "tokened"
    metric: DOUBLE_APPLIED_INCREMENTS
    client: "tokened"
    at_most: 0
  }
)pb";

// The sum of the Sum family's cells of table "t" on each cluster.
std::map<std::string, int64_t> Counters(instance::Instance& instance) {
  std::map<std::string, int64_t> out;
  for (const std::string& id : instance.replicas().ClusterIds()) {
    cluster::Cluster* c = instance.replicas().Find(id);
    int64_t total = 0;
    const cluster::ReadOptions options;
    EXPECT_TRUE(c->ReadRows("t", options,
                            [&](std::string_view,
                                std::span<const cluster::CellView> cells) {
                              for (const cluster::CellView& cell : cells) {
                                if (cell.family == "sums") {
                                  total += cluster::DecodeInt64(cell.value);
                                }
                              }
                              return true;
                            })
                    .ok());
    out[id] = total;
  }
  return out;
}

TEST(AddsRunTest, RetriesDoubleCountWithoutATokenAndTheCountersAgree) {
  auto loaded = ParseScenario(kScenario, "adds.textproto");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  RunOptions options;
  options.sample_every = std::chrono::seconds(1);
  std::map<std::string, int64_t> last;
  options.on_sample = [&](sim::Time, instance::Instance& instance) {
    last = Counters(instance);
  };
  auto outcome = RunScenario(*loaded, options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  for (const ExpectationResult& e : outcome->expectations) {
    EXPECT_TRUE(e.pass) << e.name << ": " << e.value << " " << e.detail;
  }

  int64_t applied = 0;
  int64_t adds = 0;
  int64_t retried = 0;
  for (const Operation& op : outcome->history.operations) {
    ASSERT_EQ(op.type, OpType::kAddToCell);
    ++adds;
    applied += op.applied();
    retried += op.attempts > 1;
    EXPECT_EQ(op.idempotent(), op.group() == "tokened");
    if (op.ok()) EXPECT_GE(op.applied(), 1) << op.id;
    if (op.idempotent()) EXPECT_LE(op.applied(), 1) << op.id;
  }
  EXPECT_GT(retried, 0);
  EXPECT_GT(applied, adds / 2);
  // The clients stopped at 14 s: by the last sample every application had
  // replicated, and each cluster counts exactly the applications recorded.
  ASSERT_EQ(last.size(), 2u);
  EXPECT_EQ(last["c1"], applied);
  EXPECT_EQ(last["c2"], applied);
}

TEST(AddsLoaderTest, AggregateFamiliesAndAddsAreValidated) {
  struct Case {
    std::string from, to, field;
  };
  const std::vector<Case> cases = {
      {"families { name: \"sums\" aggregate: SUM }",
       "families { name: \"sums\" aggregate: MAX }",
       "clients[0].workload.mix.add_to_cell: the client's table has no "
       "family with aggregate: SUM"},
      {"families { name: \"cf\" }", "families { name: \"cf\" aggregate: SUM }",
       "tables[0].families[0].aggregate: the first family"},
      {"families { name: \"sums\" aggregate: SUM }",
       "families { name: \"sums\" aggregate: SUM "
       "gc_rule { max_num_versions: 1 } }",
       "tables[0].families[1].gc_rule: an aggregate family takes no GC rule"},
  };
  for (const Case& c : cases) {
    std::string text = kScenario;
    const size_t at = text.find(c.from);
    ASSERT_NE(at, std::string::npos) << c.from;
    text.replace(at, c.from.size(), c.to);
    auto loaded = ParseScenario(text, "adds.textproto");
    ASSERT_FALSE(loaded.ok()) << c.to;
    EXPECT_THAT(loaded.status().message(), HasSubstr(c.field))
        << loaded.status().message();
  }
}

// `text` with every `from` replaced by `to`.
std::string ReplaceAll(std::string text, const std::string& from,
                       const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos;
       at = text.find(from, at + to.size())) {
    text.replace(at, from.size(), to);
  }
  return text;
}

// Where a step can go in kScenario: before its first expectation.
constexpr char kFirstExpectation[] = "expectations {\n    name: \"plain\"";

// kScenario with `step` added to its timeline.
std::string WithStep(std::string text, const std::string& step) {
  return ReplaceAll(std::move(text), kFirstExpectation,
                    step + " " + kFirstExpectation);
}

TEST(AddsLoaderTest, StepsKeepTheRulesOfAggregateFamilies) {
  auto loaded = ParseScenario(
      WithStep(kScenario,
               "timeline { at { seconds: 1 } set_gc_rule { table: 't' "
               "family: 'sums' gc_rule { max_num_versions: 1 } } }"),
      "adds.textproto");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(),
              HasSubstr("set_gc_rule.family: 'sums' is an aggregate family, "
                        "which takes no GC rule"));

  // Clients of a table without a SUM family may not switch to adds.
  std::string text = ReplaceAll(kScenario, "aggregate: SUM", "aggregate: MIN");
  text = ReplaceAll(text, "mix { add_to_cell: 1 }", "mix { write: 1 }");
  loaded = ParseScenario(
      WithStep(text,
               "timeline { at { seconds: 1 } change_workload { client: "
               "'plain' workload { mix { add_to_cell: 1 } keys { uniform {} } "
               "ops_per_second: 10 } } }"),
      "adds.textproto");
  ASSERT_FALSE(loaded.ok());
  EXPECT_THAT(loaded.status().message(),
              HasSubstr("change_workload.workload.mix.add_to_cell: the "
                        "client's table has no family with aggregate: SUM"));
}

}  // namespace
}  // namespace btsim::scenarios
