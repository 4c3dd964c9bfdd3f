#include "scenarios/history_file.h"

#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/loader.h"
#include "scenarios/run_setup.h"
#include "scenarios/runner.h"

namespace btsim::scenarios {
namespace {

using ::testing::HasSubstr;

// Every operation type, a cluster down (unreplicated writes), a partition,
// a GC rule change, a removed cluster and a refused step (a second
// DropRowRange while the first runs).
constexpr char kScenario[] = R"txt(
name: "round-trip"
duration { seconds: 6 }
instance {
  clusters { id: "c1" zone: "us-east1-b" }
  clusters { id: "c2" zone: "us-east1-c" }
  clusters { id: "c3" zone: "us-west1-a" }
  app_profiles { id: "tx" single_cluster { cluster_id: "c1" allow_transactional_writes: true } }
}
tables {
  id: "t"
  families { name: "cf" gc_rule { union { rules { max_num_versions: 2 } rules { max_age { seconds: 3 } } } } }
  families { name: "sums" aggregate: SUM }
}
clients {
  name: "mixed"
  count: 2
  zone: "us-east1-b"
  app_profile: "tx"
  workload {
    mix { read_row: 30 scan: 5 write: 20 check_and_mutate: 5 read_modify_write: 10
          delete_row: 2 delete_family: 2 delete_cells: 2 append: 10
          add_to_cell: 10 }
    keys { uniform {} entities: 40 }
    ops_per_second: 400
    idempotent_adds: true
  }
}
clients {
  name: "reader"
  zone: "us-west1-a"
  workload { mix { read_row: 1 } keys { uniform {} entities: 40 } ops_per_second: 200 }
}
timeline { at { seconds: 1 } partition { a: "c2" b: "c3" } for { seconds: 1 } }
timeline { at { seconds: 2 } cluster_down { cluster: "c1" } for { seconds: 1 } }
timeline { at { seconds: 3 } set_gc_rule { table: "t" family: "cf" gc_rule { max_num_versions: 1 } } }
timeline { at { seconds: 4 } remove_cluster { cluster: "c3" } }
timeline { at { seconds: 5 } drop_row_range { table: "t" } }
timeline { at { seconds: 5 } drop_row_range { table: "t" } }
expectations { name: "no lost writes" metric: LOST_WRITES at_most: 0 }
)txt";

struct RoundTrip {
  LoadedScenario scenario;
  RunOutcome outcome;
  RecordedRun read;
};

void FillRoundTrip(RoundTrip& r) {
  auto loaded = ParseScenario(kScenario, "round-trip.textproto");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  r.scenario = *loaded;
  auto outcome = RunScenario(*loaded);
  ASSERT_TRUE(outcome.ok());
  r.outcome = std::move(*outcome);
  std::stringstream file;
  ASSERT_TRUE(WriteHistoryJsonl(r.scenario, r.outcome, file).ok());
  auto read = ReadHistoryJsonl(file, "history.jsonl");
  ASSERT_TRUE(read.ok()) << read.status().message();
  r.read = std::move(*read);
}

// Runs kScenario once and reads its history back.
const RoundTrip& RunAndReadBack() {
  static const RoundTrip* const run = [] {
    auto* r = new RoundTrip;
    FillRoundTrip(*r);
    return r;
  }();
  return *run;
}

// a from history ha, b from hb (tags are compared by text).
void ExpectSameOperation(const History& ha, const Operation& a,
                         const History& hb, const Operation& b) {
  SCOPED_TRACE("operation " + std::to_string(a.id));
  EXPECT_EQ(a.id, b.id);
  EXPECT_EQ(a.attempts, b.attempts);
  EXPECT_EQ(a.type, b.type);
  EXPECT_EQ(a.code, b.code);
  EXPECT_EQ(*a.source, *b.source);
  EXPECT_EQ(a.row, b.row);
  EXPECT_EQ(a.invoke, b.invoke);
  EXPECT_EQ(a.complete, b.complete);
  EXPECT_EQ(a.message, b.message);
  EXPECT_EQ(a.cluster, b.cluster);
  EXPECT_EQ(a.committed, b.committed);
  EXPECT_EQ(a.log_position, b.log_position);
  EXPECT_EQ(a.timestamp, b.timestamp);
  EXPECT_EQ(a.version, b.version);
  EXPECT_EQ(ha.names->Text(a.written()), hb.names->Text(b.written()));
  EXPECT_EQ(ha.names->Text(a.read()), hb.names->Text(b.read()));
  EXPECT_EQ(a.rows(), b.rows());
  EXPECT_EQ(a.counter(), b.counter());
  EXPECT_EQ(a.delete_start(), b.delete_start());
  EXPECT_EQ(a.applied(), b.applied());
  EXPECT_EQ(a.idempotent(), b.idempotent());
}

TEST(HistoryFileTest, ReadingBackGivesTheSameHistory) {
  const RoundTrip& r = RunAndReadBack();
  const History& a = r.outcome.history;
  const History& b = r.read.outcome.history;
  EXPECT_EQ(r.read.outcome.seed, r.outcome.seed);
  EXPECT_EQ(r.read.outcome.fingerprint, r.outcome.fingerprint);
  EXPECT_EQ(r.read.outcome.client_ops, r.outcome.client_ops);
  EXPECT_FALSE(r.read.outcome.live);
  EXPECT_EQ(r.read.file, "round-trip.textproto");
  EXPECT_EQ(b.start, a.start);

  ASSERT_EQ(b.operations.size(), a.operations.size());
  std::vector<bool> seen(10);
  for (size_t i = 0; i < a.operations.size(); ++i) {
    ExpectSameOperation(a, a.operations[i], b, b.operations[i]);
    seen[static_cast<size_t>(a.operations[i].type)] = true;
  }
  EXPECT_THAT(seen, ::testing::Each(true)) << "every operation type ran";

  ASSERT_EQ(b.appends.size(), a.appends.size());
  ASSERT_FALSE(a.appends.empty());
  for (size_t i = 0; i < a.appends.size(); ++i) {
    EXPECT_EQ(b.appends[i].op, a.appends[i].op);
    EXPECT_EQ(b.appends[i].token, a.appends[i].token);
    EXPECT_EQ(b.appends[i].list, a.appends[i].list);
  }

  ASSERT_EQ(b.events.size(), a.events.size());
  bool some_unreplicated = false;
  for (size_t i = 0; i < a.events.size(); ++i) {
    const Event& x = a.events[i];
    const Event& y = b.events[i];
    EXPECT_EQ(y.at, x.at);
    EXPECT_EQ(y.kind, x.kind);
    EXPECT_EQ(y.label, x.label);
    EXPECT_EQ(y.cluster, x.cluster);
    EXPECT_EQ(y.peer, x.peer);
    EXPECT_EQ(y.table, x.table);
    EXPECT_EQ(y.detail, x.detail);
    EXPECT_EQ(y.refused, x.refused);
    EXPECT_EQ(y.end, x.end);
    EXPECT_EQ(y.consistent, x.consistent);
    EXPECT_EQ(y.violations, x.violations);
    EXPECT_EQ(y.unreplicated_ops, x.unreplicated_ops);
    some_unreplicated |= x.unreplicated_ops && !x.unreplicated_ops->empty();
  }
  EXPECT_TRUE(some_unreplicated);
  EXPECT_TRUE(std::any_of(a.events.begin(), a.events.end(), [](const Event& e) {
    return e.refused;
  })) << "the second of two drop_row_range at once is refused";

  ASSERT_EQ(b.gc_rules.size(), a.gc_rules.size());
  ASSERT_EQ(a.gc_rules.size(), 2u);
  for (size_t i = 0; i < a.gc_rules.size(); ++i) {
    EXPECT_EQ(b.gc_rules[i].at, a.gc_rules[i].at);
    EXPECT_EQ(b.gc_rules[i].table, a.gc_rules[i].table);
    EXPECT_EQ(b.gc_rules[i].rule, a.gc_rules[i].rule);
  }

  ASSERT_EQ(b.failovers.size(), a.failovers.size());
  ASSERT_EQ(b.health_changes.size(), a.health_changes.size());
  for (size_t i = 0; i < a.health_changes.size(); ++i) {
    EXPECT_EQ(b.health_changes[i].at, a.health_changes[i].at);
    EXPECT_EQ(b.health_changes[i].cluster, a.health_changes[i].cluster);
    EXPECT_EQ(b.health_changes[i].ejected, a.health_changes[i].ejected);
  }
  ASSERT_EQ(b.cpu.size(), a.cpu.size());
  for (size_t i = 0; i < a.cpu.size(); ++i) {
    EXPECT_EQ(b.cpu[i].at, a.cpu[i].at);
    EXPECT_EQ(b.cpu[i].average, a.cpu[i].average);
    EXPECT_EQ(b.cpu[i].hottest, a.cpu[i].hottest);
  }
  ASSERT_EQ(b.links.size(), a.links.size());
  for (size_t i = 0; i < a.links.size(); ++i) {
    EXPECT_EQ(b.links[i].at, a.links[i].at);
    EXPECT_EQ(b.links[i].from, a.links[i].from);
    EXPECT_EQ(b.links[i].applied, a.links[i].applied);
    EXPECT_EQ(b.links[i].delay_sum, a.links[i].delay_sum);
    EXPECT_EQ(b.links[i].delay_max, a.links[i].delay_max);
    EXPECT_EQ(b.links[i].backlog, a.links[i].backlog);
  }

  ASSERT_EQ(b.final_state.size(), a.final_state.size());
  for (size_t i = 0; i < a.final_state.size(); ++i) {
    const ClusterState& x = a.final_state[i];
    const ClusterState& y = b.final_state[i];
    EXPECT_EQ(y.id, x.id);
    EXPECT_EQ(y.digest, x.digest);
    EXPECT_EQ(y.same_as, x.same_as);
    EXPECT_EQ(y.applied, x.applied);
    ASSERT_EQ(y.rows.size(), x.rows.size());
    auto row = y.rows.begin();
    for (const auto& [key, state] : x.rows) {
      EXPECT_EQ(row->first, key);
      EXPECT_EQ(b.names->Text(row->second.tag), a.names->Text(state.tag));
      EXPECT_EQ(row->second.timestamp, state.timestamp);
      EXPECT_EQ(row->second.version, state.version);
      EXPECT_EQ(row->second.counter, state.counter);
      ++row;
    }
  }
  EXPECT_EQ(b.duration, a.duration);
  EXPECT_EQ(b.settled, a.settled);
  EXPECT_EQ(b.ended, a.ended);
  EXPECT_EQ(b.strong_reads_promised, a.strong_reads_promised);
}

TEST(HistoryFileTest, JudgedAgainTheHistoryGivesTheSameChecks) {
  const RoundTrip& r = RunAndReadBack();
  auto loaded = ParseScenario(r.read.scenario, "history.jsonl");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  RunOutcome again = r.read.outcome;
  JudgeOutcome(loaded->proto, again);
  ASSERT_EQ(again.checks.size(), r.outcome.checks.size());
  for (size_t i = 0; i < again.checks.size(); ++i) {
    EXPECT_EQ(again.checks[i].name, r.outcome.checks[i].name);
    EXPECT_EQ(again.checks[i].value, r.outcome.checks[i].value);
    EXPECT_EQ(again.checks[i].detail, r.outcome.checks[i].detail);
  }
  ASSERT_EQ(again.expectations.size(), 1u);
  EXPECT_EQ(again.expectations[0].detail, r.outcome.expectations[0].detail);
  EXPECT_EQ(again.passed, r.outcome.passed);
}

// The history of `text` lines, read.
Status ReadLines(const std::string& text) {
  std::istringstream in(text);
  return ReadHistoryJsonl(in, "h.jsonl").status();
}

constexpr char kStart[] = R"({"start":{"scenario":"","seed":"1"}})";
constexpr char kEnd[] = R"({"end":{"fingerprint":"x"}})";

std::string Wrapped(const std::string& middle) {
  return std::string(kStart) + "\n" + middle + "\n" + kEnd + "\n";
}

TEST(HistoryFileTest, BadLinesAreRefusedNamingTheLineAndField) {
  EXPECT_TRUE(ReadLines(Wrapped("")).ok());
  const std::string op =
      R"({"operation":{"id":0,"op":"write","status":"OK","client":"a"}})";
  EXPECT_TRUE(ReadLines(Wrapped(op)).ok());
  struct Case {
    std::string text;
    std::string error;
  } cases[] = {
      {"", "h.jsonl: empty: no start line"},
      {std::string(kStart) + "\n" + op + "\n",
       "h.jsonl: incomplete: no end line after line 2"},
      {op + "\n" + kEnd, "h.jsonl:1: the first line must be the start line"},
      {Wrapped("{\"operation\":"), "h.jsonl:2: not a HistoryLine"},
      {Wrapped("{\"nonsense\":1}"), "h.jsonl:2: not a HistoryLine"},
      {Wrapped("{}"), "h.jsonl:2: empty line object"},
      {Wrapped(kStart), "h.jsonl:2: start: a second start line"},
      {Wrapped(R"({"operation":{"id":1,"op":"write","status":"OK"}})"),
       "h.jsonl:2: operation.id: expected 0"},
      {Wrapped(R"({"operation":{"id":0,"op":"frob","status":"OK"}})"),
       "h.jsonl:2: operation.op: unknown operation 'frob'"},
      {Wrapped(R"({"operation":{"id":0,"op":"write","status":"MEH"}})"),
       "h.jsonl:2: operation.status: unknown status 'MEH'"},
      {Wrapped(
           R"({"operation":{"id":0,"op":"write","status":"OK","row":"\u0100"}})"),
       "h.jsonl:2: operation.row: not text of characters U+0000..U+00FF"},
      {Wrapped(
           R"({"operation":{"id":0,"op":"write","status":"OK","append_token":"a"}})"),
       "h.jsonl:2: operation.append_token: only an append has one"},
      {Wrapped(
           R"({"operation":{"id":0,"op":"write","status":"OK","invoke_nanos":"5","complete_nanos":"4"}})"),
       "h.jsonl:2: operation.complete: before its invoke"},
      {Wrapped(
           R"({"operation":{"id":0,"op":"write","status":"OK","invoke_nanos":"5","complete_nanos":"6"}})"
           "\n"
           R"({"operation":{"id":1,"op":"write","status":"OK","invoke_nanos":"4","complete_nanos":"6"}})"),
       "h.jsonl:3: operation.invoke: before the previous operation's"},
      {Wrapped(R"({"event":{"kind":"explode"}})"),
       "h.jsonl:2: event.kind: unknown kind 'explode'"},
      {Wrapped(R"({"cluster":{"id":"c1","same_as":0}})"),
       "h.jsonl:2: cluster.same_as: must name an earlier cluster"},
      {Wrapped(R"({"row":{"cluster":"c1","table":"t","row":"r"}})"),
       "h.jsonl:2: row.cluster: rows follow their cluster's line"},
      {Wrapped(R"({"cluster":{"id":"c1"}})"
               "\n"
               R"({"row":{"cluster":"c1","table":"t","row":"b"}})"
               "\n"
               R"({"row":{"cluster":"c1","table":"t","row":"a"}})"),
       "h.jsonl:4: row.row: rows come in ascending (table, row) order"},
      {Wrapped(R"({"gc_rule":{"table":"t","rule":{"max_num_versions":0}}})"),
       "h.jsonl:2: gc_rule.rule"},
      {Wrapped("") + op, "h.jsonl:4: a line after the end line"},
  };
  for (const Case& c : cases) {
    const Status s = ReadLines(c.text);
    EXPECT_EQ(s.code(), StatusCode::kInvalidArgument) << c.text;
    EXPECT_THAT(s.message(), HasSubstr(c.error)) << c.text;
  }
}

}  // namespace
}  // namespace btsim::scenarios
