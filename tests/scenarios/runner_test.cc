#include "scenarios/runner.h"

#include <algorithm>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/report.h"

namespace btsim::scenarios {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// Two clusters in one region and one far away; a pinned profile, a
// transactional one, and whatever each test appends.
constexpr char kBase[] = R"pb(
  duration { seconds: 10 }
  instance {
    clusters { id: "c1" zone: "us-east1-b" nodes: 2 }
    clusters { id: "c2" zone: "us-east1-c" nodes: 2 }
    clusters { id: "c3" zone: "europe-west1-d" nodes: 2 }
    app_profiles {
      id: "pinned"
      single_cluster { cluster_id: "c1" }
    }
    app_profiles {
      id: "txn"
      single_cluster { cluster_id: "c2" allow_transactional_writes: true }
    }
  }
  tables {
    id: "t"
    families { name: "cf" }
  }
)pb";

RunOutcome Play(const std::string& extra, std::optional<uint64_t> seed = {}) {
  auto loaded = ParseScenario(std::string(kBase) + extra, "test.textproto");
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  RunOptions options;
  options.seed = seed;
  auto outcome = RunScenario(*loaded, options);
  EXPECT_TRUE(outcome.ok()) << outcome.status().message();
  return std::move(*outcome);
}

// Plays a whole scenario (its own instance, not kBase's).
RunOutcome PlayScenario(const std::string& text) {
  auto loaded = ParseScenario(text, "test.textproto");
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  if (!loaded.ok()) return {};
  auto outcome = RunScenario(*loaded, RunOptions{});
  EXPECT_TRUE(outcome.ok()) << outcome.status().message();
  return outcome.ok() ? std::move(*outcome) : RunOutcome{};
}

std::vector<const Operation*> OpsOf(const RunOutcome& o,
                                    const std::string& group) {
  std::vector<const Operation*> ops;
  for (const Operation& op : o.history.operations) {
    if (op.group() == group) ops.push_back(&op);
  }
  return ops;
}

constexpr char kMixedClient[] = R"pb(
  clients {
    name: "app"
    count: 2
    workload {
      mix { read_row: 2 write: 2 scan: 1 }
      keys {
        uniform {}
        entities: 100
      }
      ops_per_second: 100
    }
  }
)pb";

TEST(RunnerTest, SameSeedSameRunOtherSeedOtherRun) {
  const RunOutcome a = Play(kMixedClient);
  const RunOutcome b = Play(kMixedClient);
  const RunOutcome c = Play(kMixedClient, 2);
  EXPECT_EQ(a.fingerprint.size(), 32u);
  EXPECT_EQ(a.fingerprint, b.fingerprint);
  EXPECT_NE(a.fingerprint, c.fingerprint);
  ASSERT_EQ(a.history.operations.size(), b.history.operations.size());
  for (size_t i = 0; i < a.history.operations.size(); ++i) {
    EXPECT_EQ(a.history.operations[i].row, b.history.operations[i].row);
    EXPECT_EQ(a.history.operations[i].complete,
              b.history.operations[i].complete);
  }
}

TEST(RunnerTest, ALatencyStepChangesTheLatencyOfRequestsOverThatLink) {
  // The client sits in c2's zone and its profile pins c1: each request
  // crosses the c1 <-> c2 link, set to 100 ms each way at 3 s and back to
  // the default at 6 s.
  const RunOutcome o = Play(R"pb(
    clients {
      name: "app"
      zone: "us-east1-c"
      app_profile: "pinned"
      workload {
        mix { read_row: 1 }
        keys {
          uniform {}
          entities: 10
        }
        ops_per_second: 50
      }
    }
    timeline {
      at { seconds: 3 }
      latency {
        from_cluster: "c1"
        to_cluster: "c2"
        latency { constant { nanos: 100000000 } }
      }
    }
    timeline {
      at { seconds: 6 }
      latency {
        from_cluster: "c1"
        to_cluster: "c2"
        latency { constant { nanos: 2000000 } }
      }
    }
  )pb");
  int before = 0, during = 0, after = 0;
  for (const Operation& op : o.history.operations) {
    ASSERT_TRUE(op.ok()) << op.message;
    const sim::Duration took = op.complete - op.invoke;
    if (op.complete < seconds(3)) {
      ++before;
      EXPECT_LT(took, milliseconds(100));
    } else if (op.invoke >= seconds(3) && op.complete < seconds(6)) {
      ++during;
      EXPECT_GE(took, milliseconds(200));  // there and back
    } else if (op.invoke >= seconds(6)) {
      ++after;
      EXPECT_GE(took, milliseconds(4));
      EXPECT_LT(took, milliseconds(100));
    }
  }
  EXPECT_GT(before, 50);
  EXPECT_GT(during, 50);
  EXPECT_GT(after, 50);
}

TEST(RunnerTest, OpenLoopRateAndMix) {
  const RunOutcome o = Play(kMixedClient);
  // 2 clients x 100/s x 10 s = 2000 expected; Poisson sd ~45.
  const auto n = static_cast<int64_t>(o.history.operations.size());
  EXPECT_NEAR(n, 2000, 250);
  std::map<OpType, int> by_type;
  for (const Operation& op : o.history.operations) {
    ++by_type[op.type];
    EXPECT_TRUE(op.ok()) << op.message;
    EXPECT_GE(op.complete, op.invoke);
    EXPECT_EQ(op.cluster, "c1");  // the nearest cluster of us-east1-b
  }
  EXPECT_NEAR(by_type[OpType::kWrite], n * 2 / 5, n / 10);
  EXPECT_NEAR(by_type[OpType::kScan], n / 5, n / 10);
  EXPECT_EQ(o.history.final_state.size(), 3u);
  EXPECT_EQ(o.history.final_state[0].digest, o.history.final_state[2].digest);
  EXPECT_TRUE(o.passed);  // no expectations
}

TEST(RunnerTest, ReadsSeeTheirOwnWritesOnOneCluster) {
  const RunOutcome o = Play(R"pb(
    clients {
      name: "app"
      app_profile: "pinned"
      workload {
        mix { read_row: 1 write: 1 }
        keys {
          uniform {}
          entities: 5
        }
        in_flight: 1
      }
    }
  )pb");
  std::map<std::string, std::string> last_written;
  int reads_checked = 0;
  for (const Operation& op : o.history.operations) {
    ASSERT_TRUE(op.ok());
    if (op.type == OpType::kWrite)
      last_written[op.row.str()] = o.history.names->Text(op.written());
    if (op.type == OpType::kReadRow && last_written.count(op.row.str()) != 0) {
      EXPECT_EQ(o.history.names->Text(op.read()), last_written[op.row.str()]);
      ++reads_checked;
    }
  }
  EXPECT_GT(reads_checked, 100);
}

TEST(RunnerTest, ClosedLoopKeepsNInFlight) {
  const RunOutcome o = Play(R"pb(
    clients {
      name: "app"
      workload {
        mix { write: 1 }
        keys { uniform {} }
        in_flight: 3
      }
    }
  )pb");
  // Sweep the invoke/complete points: never more than 3 open at once, and
  // 3 most of the time.
  std::vector<std::pair<sim::Duration, int>> points;
  for (const Operation& op : o.history.operations) {
    points.push_back({op.invoke, +1});
    points.push_back({op.complete, -1});
  }
  std::sort(points.begin(), points.end());
  int open = 0, most = 0;
  for (const auto& [t, d] : points) {
    open += d;
    most = std::max(most, open);
  }
  EXPECT_EQ(most, 3);
  EXPECT_GT(o.history.operations.size(), 1000u);
}

// c1 is down from 3 s to 6 s.
constexpr char kC1DownFrom3To6s[] = R"pb(
  timeline {
    at { seconds: 3 }
    cluster_down { cluster: "c1" }
  }
  timeline {
    at { seconds: 6 }
    cluster_up { cluster: "c1" }
  }
)pb";

TEST(RunnerTest, PinnedProfileFailsWhileItsClusterIsDownAndRetries) {
  const RunOutcome o = Play(std::string(R"pb(
                              clients {
                                name: "app"
                                app_profile: "pinned"
                                deadline { seconds: 1 }
                                workload {
                                  mix { write: 1 }
                                  keys { uniform {} }
                                  ops_per_second: 50
                                }
                              }
                            )pb") +
                            kC1DownFrom3To6s);
  int failed_in_outage = 0, ok_after = 0;
  for (const Operation& op : o.history.operations) {
    if (op.invoke >= seconds(3) && op.invoke < seconds(5)) {
      EXPECT_FALSE(op.ok());
      EXPECT_GT(op.attempts, 1);  // retried until the deadline
      EXPECT_TRUE(op.code == StatusCode::kUnavailable ||
                  op.code == StatusCode::kDeadlineExceeded)
          << StatusCodeName(op.code);
      ++failed_in_outage;
    }
    if (op.invoke >= seconds(7)) ok_after += op.ok() ? 1 : 0;
    EXPECT_NE(op.cluster, "c2");  // single-cluster never fails over
  }
  EXPECT_GT(failed_in_outage, 50);
  EXPECT_GT(ok_after, 100);
  EXPECT_TRUE(o.history.failovers.empty());
}

// A writer through the default (multi-cluster) profile.
constexpr char kMultiClusterWriter[] = R"pb(
  clients {
    name: "app"
    workload {
      mix { write: 1 }
      keys { uniform {} }
      ops_per_second: 50
    }
  }
)pb";

TEST(RunnerTest, MultiClusterFailsOverOnceItSeesFailuresAndBackAfterProbes) {
  const RunOutcome o =
      Play(std::string(kMultiClusterWriter) + kC1DownFrom3To6s);
  int retried = 0;
  for (const Operation& op : o.history.operations) {
    EXPECT_TRUE(op.ok()) << op.message;  // failed attempts are retried
    if (op.invoke >= seconds(3) && op.attempts > 1) ++retried;
    if (op.invoke > milliseconds(3500) && op.invoke < seconds(6)) {
      EXPECT_EQ(op.cluster, "c2");  // same region as the client: nearest
    }
    // Readmitted once the 5 s ejection is over and three probes a second
    // apart have succeeded since c1 came back.
    if (op.invoke > milliseconds(6100) && op.invoke < seconds(8)) {
      EXPECT_EQ(op.cluster, "c2");
    }
    if (op.invoke > milliseconds(9100)) {
      EXPECT_EQ(op.cluster, "c1");
    }
  }
  // The front end was not told: requests to c1 failed until it ejected c1.
  EXPECT_GE(retried, 1);
  EXPECT_LE(retried, 5);
  EXPECT_FALSE(o.history.failovers.empty());
}

TEST(RunnerTest, TheOracleFailsOverAndBackAtOnce) {
  std::string text =
      std::string(kBase) + kMultiClusterWriter + kC1DownFrom3To6s;
  const std::string c3 =
      R"(clusters { id: "c3" zone: "europe-west1-d" nodes: 2 })";
  text.replace(text.find(c3), c3.size(), c3 + " detector { mode: ORACLE }");
  const RunOutcome o = PlayScenario(text);
  for (const Operation& op : o.history.operations) {
    EXPECT_TRUE(op.ok()) << op.message;
    if (op.invoke > milliseconds(3100) && op.invoke < seconds(6)) {
      EXPECT_EQ(op.cluster, "c2");
    }
    if (op.invoke > milliseconds(6100)) {
      EXPECT_EQ(op.cluster, "c1");
    }
  }
  EXPECT_FALSE(o.history.failovers.empty());
}

TEST(RunnerTest, TransactionsAreGatedUnlessBypassed) {
  const RunOutcome o = Play(R"pb(
    clients {
      name: "gated"
      workload {
        mix { read_modify_write: 1 }
        keys {
          uniform {}
          entities: 3
        }
        ops_per_second: 20
      }
    }
    clients {
      name: "txn"
      app_profile: "txn"
      workload {
        mix { read_modify_write: 1 check_and_mutate: 1 }
        keys {
          uniform {}
          entities: 3
        }
        ops_per_second: 20
      }
    }
    clients {
      name: "bypass"
      bypass_transaction_gating: true
      workload {
        mix { read_modify_write: 1 }
        keys {
          uniform {}
          entities: 3
        }
        ops_per_second: 20
      }
    }
  )pb");
  for (const Operation* op : OpsOf(o, "gated")) {
    EXPECT_EQ(op->code, StatusCode::kFailedPrecondition);
    EXPECT_EQ(op->attempts, 1);  // never retried
  }
  for (const Operation* op : OpsOf(o, "txn")) {
    EXPECT_TRUE(op->ok()) << op->message;
    EXPECT_EQ(op->cluster, "c2");
  }
  for (const Operation* op : OpsOf(o, "bypass")) {
    EXPECT_TRUE(op->ok()) << op->message;
    EXPECT_EQ(op->cluster, "c1");
  }
  EXPECT_GT(OpsOf(o, "gated").size(), 100u);
}

TEST(RunnerTest, StopAndStartClients) {
  const RunOutcome o = Play(R"pb(
    clients {
      name: "a"
      workload {
        mix { write: 1 }
        keys { uniform {} }
        ops_per_second: 50
      }
    }
    clients {
      name: "late"
      start_stopped: true
      workload {
        mix { write: 1 }
        keys { uniform {} }
        ops_per_second: 50
      }
    }
    timeline {
      at { seconds: 2 }
      stop_client { client: "a" }
    }
    timeline {
      at { seconds: 5 }
      start_client { client: "late" }
    }
  )pb");
  for (const Operation* op : OpsOf(o, "a")) EXPECT_LT(op->invoke, seconds(2));
  for (const Operation* op : OpsOf(o, "late")) {
    EXPECT_GE(op->invoke, seconds(5));
  }
  EXPECT_GT(OpsOf(o, "late").size(), 100u);
}

TEST(RunnerTest, TokenWaitEndsWhenEveryClusterHasTheWrites) {
  const RunOutcome o = Play(R"pb(
    clients {
      name: "app"
      workload {
        mix { write: 1 }
        keys { uniform {} }
        ops_per_second: 100
      }
    }
    timeline {
      at { seconds: 4 }
      wait_for_replication {
        table: "t"
        interval { nanos: 10000000 }
      }
    }
  )pb");
  const Event* wait = nullptr;
  for (const Event& e : o.history.events) {
    if (e.kind == EventKind::kTokenWait) wait = &e;
  }
  ASSERT_NE(wait, nullptr);
  ASSERT_GE(wait->end, wait->at);
  // Cross-region replication takes tens of milliseconds.
  EXPECT_GT(wait->end - wait->at, milliseconds(10));
  EXPECT_LT(wait->end - wait->at, seconds(1));
  EXPECT_EQ(wait->violations, 0);
}

TEST(RunnerTest, DeadlineExceededAcrossRegions) {
  const RunOutcome o = Play(R"pb(
    clients {
      name: "far"
      zone: "asia-east1-a"
      deadline { nanos: 5000000 }
      workload {
        mix { write: 1 }
        keys { uniform {} }
        ops_per_second: 20
      }
    }
  )pb");
  ASSERT_FALSE(o.history.operations.empty());
  for (const Operation& op : o.history.operations) {
    EXPECT_EQ(op.code, StatusCode::kDeadlineExceeded);
    EXPECT_EQ(op.complete - op.invoke, milliseconds(5));
    // The request reached its cluster after its deadline: the node dropped
    // it unexecuted.
    EXPECT_EQ(op.version, 0u) << op.id;
  }
}

TEST(RunnerTest, ATimedOutWriteThatCommittedSaysWhen) {
  // 60 ms: enough for a request to reach a cluster in another region
  // (~40 ms), not for the reply to come back too.
  const RunOutcome o = Play(R"pb(
    clients {
      name: "far"
      zone: "asia-east1-a"
      deadline { nanos: 60000000 }
      retry { max_attempts: 1 }
      workload {
        mix { write: 1 }
        keys { uniform {} }
        ops_per_second: 20
      }
    }
  )pb");
  size_t timed_out = 0;
  size_t committed = 0;
  for (const Operation& op : o.history.operations) {
    if (op.code != StatusCode::kDeadlineExceeded) continue;
    ++timed_out;
    if (op.version != 0) {
      ++committed;
      // Before its deadline, and before the client gave up.
      EXPECT_LT(op.committed - op.invoke, milliseconds(60)) << op.id;
      EXPECT_LT(op.committed, op.complete) << op.id;
    }
  }
  EXPECT_GT(timed_out, 100u);
  EXPECT_GT(committed, timed_out * 9 / 10);
}

// Requests to one cluster over a heavy-tailed link, with attempts that time
// out after 2 ms: an abandoned attempt often reaches the cluster after a
// later attempt, or after its operation finished. It still executes (its
// write commits), but only the current attempt records a result, so no read
// returns a value written after it completed.
TEST(RunnerTest, OnlyTheCurrentAttemptRecordsAResult) {
  const RunOutcome outcome = PlayScenario(R"pb(
    duration { seconds: 10 }
    instance {
      clusters { id: "c1" zone: "us-east1-b" nodes: 3 }
      links {
        same_region {
          log_normal {
            median { nanos: 1000000 }
            sigma: 1.5
          }
        }
      }
    }
    tables {
      id: "t"
      families { name: "cf" }
    }
    clients {
      name: "app"
      zone: "us-east1-c"
      deadline { seconds: 1 }
      retry {
        attempt_timeout { nanos: 2000000 }
        initial_backoff { nanos: 500000 }
      }
      workload {
        mix { read_row: 1 write: 1 }
        keys {
          uniform {}
          entities: 3
        }
        ops_per_second: 300
      }
    }
    expectations {
      name: "one cluster: reads are monotonic"
      metric: MONOTONIC_READ_VIOLATIONS
      at_most: 0
    }
  )pb");
  const History& history = outcome.history;
  std::map<std::string, const Operation*> writer_of;
  int retried = 0;
  for (const Operation& op : history.operations) {
    if (op.type == OpType::kWrite)
      writer_of[history.names->Text(op.written())] = &op;
    retried += op.attempts > 1 ? 1 : 0;
  }
  int reads = 0;
  for (const Operation& op : history.operations) {
    if (op.type != OpType::kReadRow || !op.ok() || op.read().empty()) continue;
    const auto writer = writer_of.find(history.names->Text(op.read()));
    ASSERT_NE(writer, writer_of.end()) << history.names->Text(op.read());
    EXPECT_LE(writer->second->invoke, op.complete)
        << "read " << op.id << " returned " << history.names->Text(op.read());
    ++reads;
  }
  EXPECT_GT(reads, 500);
  EXPECT_GT(retried, 300);  // the case arises often
  ASSERT_EQ(outcome.expectations.size(), 1u);
  EXPECT_TRUE(outcome.expectations[0].pass)
      << outcome.expectations[0].value << ": "
      << outcome.expectations[0].detail;
}

// Cells a max_age GC rule removes are not losses: with one cluster
// serving everything, no write is lost and every read sees its own writes,
// although compaction removed most of the written cells.
TEST(RunnerTest, CellsRemovedByAnAgeRuleAreNotLostWrites) {
  const RunOutcome outcome = PlayScenario(R"pb(
    duration { seconds: 30 }
    instance { clusters { id: "c1" zone: "us-east1-b" nodes: 3 } }
    tables {
      id: "t"
      families {
        name: "cf"
        gc_rule { max_age { seconds: 2 } }
      }
    }
    clients {
      name: "app"
      workload {
        mix { read_row: 1 write: 1 }
        keys {
          uniform {}
          entities: 1000
        }
        ops_per_second: 200
      }
    }
    expectations { name: "lost" metric: LOST_WRITES at_most: 0 }
    expectations { name: "ryw" metric: READ_YOUR_WRITES_VIOLATIONS at_most: 0 }
    expectations { name: "strong" metric: STRONG_READ_VIOLATIONS at_most: 0 }
    expectations { name: "mono" metric: MONOTONIC_READ_VIOLATIONS at_most: 0 }
  )pb");
  // Most written rows are gone from the final state.
  std::set<std::string> written;
  for (const Operation& op : outcome.history.operations) {
    if (op.type == OpType::kWrite && op.ok()) written.insert(op.row.str());
  }
  ASSERT_EQ(outcome.history.final_state.size(), 1u);
  EXPECT_LT(RowsOf(outcome.history, 0).size() * 4, written.size());
  ASSERT_EQ(outcome.history.gc_rules.size(), 1u);
  for (const ExpectationResult& e : outcome.expectations) {
    EXPECT_TRUE(e.pass) << e.name << ": " << e.value << " " << e.detail;
  }
}

// c2 stays down after the run (keep_faults), so replication never drains:
// the run says it did not settle and fails, and the writes c2 never
// received are pending, not lost.
TEST(RunnerTest, ARunThatDoesNotSettleFailsAndReportsPendingWrites) {
  auto loaded = ParseScenario(
      std::string(kBase) + R"pb(
        clients {
          name: "app"
          app_profile: "pinned"
          workload {
            mix { write: 1 }
            keys {
              uniform {}
              entities: 100
            }
            ops_per_second: 100
          }
        }
        timeline {
          at { seconds: 5 }
          cluster_down { cluster: "c2" }
        }
        settle {
          keep_faults: true
          max { seconds: 2 }
        }
        expectations { name: "lost" metric: LOST_WRITES at_most: 0 }
      )pb",
      "unsettled.textproto");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  auto outcome = RunScenario(*loaded, RunOptions{});
  ASSERT_TRUE(outcome.ok()) << outcome.status().message();
  const RunOutcome& o = *outcome;
  EXPECT_LT(o.history.settled, seconds(0));
  EXPECT_FALSE(o.passed);
  ASSERT_EQ(o.expectations.size(), 1u);
  EXPECT_TRUE(o.expectations[0].pass) << o.expectations[0].detail;
  EXPECT_THAT(o.expectations[0].detail,
              ::testing::HasSubstr(" pending (not yet replicated"));
  std::ostringstream summary;
  PrintSummary(*loaded, o, summary);
  EXPECT_THAT(summary.str(),
              ::testing::HasSubstr("result: FAIL (the run did not settle"));
}

// Writes a DropRowRange removed after they committed are gone everywhere by
// design: a consistency-token wait after the drop counts none of them.
TEST(RunnerTest, ATokenWaitAfterADropRowRangeCountsNoDroppedWrite) {
  const RunOutcome o = Play(R"pb(
    clients {
      name: "app"
      workload {
        mix { write: 1 }
        keys {
          uniform {}
          entities: 200
        }
        ops_per_second: 200
      }
    }
    timeline {
      at { seconds: 3 }
      drop_row_range { table: "t" }
    }
    timeline {
      at { seconds: 3 }
      wait_for_replication {
        table: "t"
        interval { nanos: 100000000 }
      }
    }
  )pb");
  int waits = 0;
  for (const Event& e : o.history.events) {
    if (e.kind != EventKind::kTokenWait) continue;
    ++waits;
    EXPECT_GE(e.end, e.at);
    EXPECT_EQ(e.violations, 0);
  }
  EXPECT_EQ(waits, 1);
}

// A token wait whose next check (every 10 s by default) would come after
// the run ends is checked once more when the run has settled: replication
// drained, so it was consistent, not "never".
TEST(RunnerTest, ATokenWaitIsCheckedOnceMoreWhenTheRunSettles) {
  const RunOutcome o = Play(R"pb(
    clients {
      name: "app"
      workload {
        mix { write: 1 }
        keys {
          uniform {}
          entities: 200
        }
        ops_per_second: 200
      }
    }
    timeline {
      at { seconds: 3 }
      wait_for_replication { table: "t" }
    }
  )pb");
  ASSERT_GE(o.history.settled, seconds(10));
  int waits = 0;
  for (const Event& e : o.history.events) {
    if (e.kind != EventKind::kTokenWait) continue;
    ++waits;
    EXPECT_EQ(e.end, o.history.settled);
    EXPECT_EQ(e.violations, 0);
  }
  EXPECT_EQ(waits, 1);
}

// With nothing left to replicate, a run settles even when settling may
// not wait at all.
TEST(RunnerTest, ARunWithNothingToReplicateSettlesWithoutWaiting) {
  const RunOutcome o = PlayScenario(R"pb(
    duration { seconds: 2 }
    instance { clusters { id: "c1" zone: "us-east1-b" } }
    tables {
      id: "t"
      families { name: "cf" }
    }
    clients {
      name: "app"
      workload {
        mix { write: 1 }
        keys { uniform {} }
        ops_per_second: 10
      }
    }
    settle { max {} }
  )pb");
  EXPECT_GE(o.history.settled, seconds(2));
  EXPECT_TRUE(o.passed);
}

// --duration replaces the file's duration after the loader projected the
// offered load: the run projects it again with the duration it plays.
TEST(RunnerTest, ALongerDurationIsCheckedForItsOfferedLoad) {
  auto loaded = ParseScenario(std::string(kBase) + R"pb(
                                clients {
                                  name: "app"
                                  count: 20
                                  workload {
                                    mix { write: 1 }
                                    keys { uniform {} }
                                    ops_per_second: 1000000
                                  }
                                }
                              )pb",
                              "load.textproto");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();  // 200M in 10 s
  RunOptions options;
  options.duration = seconds(30);
  auto outcome = RunScenario(*loaded, options);
  ASSERT_FALSE(outcome.ok());
  EXPECT_EQ(outcome.status().code(), StatusCode::kInvalidArgument);
  EXPECT_THAT(outcome.status().message(),
              ::testing::HasSubstr("clients[0].workload.ops_per_second: the "
                                   "open-loop clients would offer about "
                                   "600000000 operations in 30 s"));
}

TEST(RunnerTest, FinalStateHoldsTheNewestWrites) {
  const RunOutcome o = Play(R"pb(
    clients {
      name: "app"
      app_profile: "pinned"
      workload {
        mix { write: 1 }
        keys {
          uniform {}
          entities: 10
        }
        in_flight: 1
      }
    }
  )pb");
  // The newest write of each row (one client, one write at a time): its
  // tag, and the version it committed at.
  std::map<std::string, std::pair<std::string, uint64_t>> newest;
  for (const Operation& op : o.history.operations) {
    ASSERT_NE(op.version, 0u);
    newest[op.row.str()] = {o.history.names->Text(op.written()), op.version};
  }
  for (size_t c = 0; c < o.history.final_state.size(); ++c) {
    const std::string& id = o.history.final_state[c].id;
    const RowStates& rows = RowsOf(o.history, c);
    ASSERT_EQ(rows.size(), newest.size()) << id;
    for (const auto& [row, write] : newest) {
      const RowState* state = rows.Find("t", row);
      ASSERT_NE(state, nullptr) << id << " " << row;
      EXPECT_EQ(o.history.names->Text(state->tag), write.first)
          << id << " " << row;
      EXPECT_EQ(state->version, write.second) << id << " " << row;
    }
  }
  // Converged clusters share one copy of their rows.
  for (size_t c = 1; c < o.history.final_state.size(); ++c) {
    EXPECT_EQ(o.history.final_state[c].same_as, std::optional<size_t>(0));
    EXPECT_TRUE(o.history.final_state[c].rows.empty());
  }
  EXPECT_GE(o.history.settled, seconds(10));
}

TEST(RunnerTest, AClusterThatDivergedKeepsItsOwnDigestAndRows) {
  // c3 is cut off half way and stays so (the settle phase keeps the
  // faults): it misses the later writes.
  const RunOutcome o = Play(R"pb(
    clients {
      name: "app"
      app_profile: "pinned"
      workload {
        mix { write: 1 }
        keys {
          uniform {}
          entities: 1000
        }
        ops_per_second: 100
      }
    }
    timeline {
      at { seconds: 5 }
      partition { a: "c1" b: "c3" }
    }
    timeline {
      at { seconds: 5 }
      partition { a: "c2" b: "c3" }
    }
    settle {
      keep_faults: true
      max { seconds: 1 }
    }
  )pb");
  ASSERT_EQ(o.history.final_state.size(), 3u);
  const ClusterState& c1 = o.history.final_state[0];
  const ClusterState& c2 = o.history.final_state[1];
  const ClusterState& c3 = o.history.final_state[2];
  EXPECT_EQ(c2.same_as, std::optional<size_t>(0));
  EXPECT_EQ(c2.digest, c1.digest);
  EXPECT_EQ(c3.same_as, std::nullopt);
  EXPECT_NE(c3.digest, c1.digest);
  EXPECT_GT(c3.rows.size(), 100u);
  EXPECT_LT(c3.rows.size(), c1.rows.size());
  // c3's own row states carry the tag and commit version of the write each
  // row holds, as the first cluster's do.
  std::map<std::string, uint64_t, std::less<>> version_of;
  for (const Operation& op : o.history.operations) {
    if (op.version != 0 && !op.written().empty()) {
      uint64_t& v = version_of[o.history.names->Text(op.written())];
      v = std::max(v, op.version);
    }
  }
  for (const auto& [key, state] : c3.rows) {
    ASSERT_FALSE(state.tag.empty()) << key.second;
    const auto it = version_of.find(o.history.names->Text(state.tag));
    ASSERT_NE(it, version_of.end()) << o.history.names->Text(state.tag);
    EXPECT_EQ(state.version, it->second) << o.history.names->Text(state.tag);
  }
}

TEST(RunnerTest, LinkSamplesRecordLagAndBacklog) {
  const RunOutcome o = Play(R"pb(
    clients {
      name: "app"
      app_profile: "pinned"
      workload {
        mix { write: 1 }
        keys { uniform {} }
        ops_per_second: 100
      }
    }
    timeline {
      at { seconds: 3 }
      partition { a: "c1" b: "c3" }
    }
    timeline {
      at { seconds: 6 }
      heal { a: "c1" b: "c3" }
    }
  )pb");
  // Writes land on c1 only: c1 -> c2 (same region) applies them with a
  // small lag, c1 -> c3 (another continent) with a larger one, and backs up
  // while partitioned.
  int64_t to_c2 = 0, to_c3_during = 0, backlog_c3 = 0;
  sim::Duration max_c2{0}, max_c3_before{0};
  for (const LinkSample& s : o.history.links) {
    if (s.from == "c2" || s.from == "c3") {
      EXPECT_EQ(s.applied, 0) << s.from;
      continue;
    }
    if (s.applied > 0) {
      EXPECT_LE(s.delay_sum / s.applied, s.delay_max);
    }
    if (s.to == "c2") {
      to_c2 += s.applied;
      max_c2 = std::max(max_c2, s.delay_max);
    } else if (s.at <= seconds(3)) {
      max_c3_before = std::max(max_c3_before, s.delay_max);
    } else if (s.at > seconds(4) && s.at <= seconds(6)) {
      to_c3_during += s.applied;
      backlog_c3 = std::max(backlog_c3, s.backlog);
    }
  }
  EXPECT_GT(to_c2, 800);
  EXPECT_LT(max_c2, milliseconds(20));
  EXPECT_GT(max_c3_before, milliseconds(30));
  EXPECT_EQ(to_c3_during, 0);
  EXPECT_GT(backlog_c3, 150);  // ~100 writes/s for 2-3 s
  // Sampled every second, settling included, for each ordered pair.
  ASSERT_FALSE(o.history.links.empty());
  EXPECT_EQ(o.history.links.size() % 6, 0u);
  EXPECT_GE(o.history.links.back().at, seconds(10));
}

// Counts what the instance reports, and the sampling hook's calls.
class CountingObserver : public instance::InstanceObserver {
 public:
  void OnRequest(const instance::RequestReport& r) override {
    ++requests[std::string(r.method) + "/" + std::string(r.cluster) + "/" +
               std::string(StatusCodeName(r.code))];
    if (r.refused) ++refused;
    modified += r.modified_rows;
  }
  void OnReplicated(const replication::AppliedInfo& info) override {
    if (info.record.kind == cluster::CommitRecord::Kind::kMutateRow) ++applied;
  }
  std::map<std::string, int64_t> requests;
  int64_t refused = 0, modified = 0, applied = 0;
};

TEST(RunnerTest, ObserversSeeRequestsAndReplicationAndSamplesAreRegular) {
  auto loaded =
      ParseScenario(std::string(kBase) + R"pb(
                      clients {
                        name: "app"
                        app_profile: "pinned"
                        workload {
                          mix { write: 3 read_row: 1 read_modify_write: 1 }
                          keys { uniform {} }
                          ops_per_second: 100
                        }
                      }
                    )pb",
                    "test.textproto");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  CountingObserver observer;
  std::vector<sim::Time> samples;
  RunOptions options;
  options.observers.push_back(&observer);
  options.sample_every = milliseconds(500);
  options.on_sample = [&](sim::Time now, instance::Instance& instance) {
    samples.push_back(now);
    EXPECT_EQ(instance.Clusters().size(), 3u);
  };
  auto o = RunScenario(*loaded, options);
  ASSERT_TRUE(o.ok()) << o.status().message();
  int64_t writes = 0, reads = 0, rmw = 0;
  for (const Operation& op : o->history.operations) {
    if (op.type == OpType::kWrite && op.ok()) ++writes;
    if (op.type == OpType::kReadRow && op.ok()) ++reads;
    if (op.type == OpType::kReadModifyWrite) ++rmw;
  }
  EXPECT_EQ(observer.requests["MutateRow/c1/OK"], writes);
  EXPECT_EQ(observer.requests["ReadRows/c1/OK"], reads);
  // "pinned" does not allow transactions: every increment is refused by
  // routing, before any cluster.
  EXPECT_GT(rmw, 0);
  EXPECT_EQ(observer.requests["ReadModifyWriteRow//FAILED_PRECONDITION"], rmw);
  EXPECT_EQ(observer.refused, rmw);
  EXPECT_EQ(observer.modified, writes);
  // Each write is applied by the two other clusters.
  EXPECT_EQ(observer.applied, 2 * writes);
  // Every 500 ms from the start until the run settled.
  ASSERT_GE(samples.size(), 20u);
  for (size_t i = 0; i < samples.size(); ++i) {
    EXPECT_EQ(samples[i], kRunEpoch + i * milliseconds(500));
  }
  // Observing and sampling do not change the run.
  RunOptions plain;
  auto p = RunScenario(*loaded, plain);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->fingerprint, o->fingerprint);
}

TEST(RunnerTest, WrittenValuesAreTheTagAndPaddingToASizeInRange) {
  auto loaded = ParseScenario(std::string(kBase) + R"pb(
                                clients {
                                  name: "app"
                                  app_profile: "txn"
                                  workload {
                                    mix { write: 3 check_and_mutate: 1 }
                                    keys {
                                      uniform {}
                                      entities: 500
                                    }
                                    ops_per_second: 200
                                    value_bytes { min: 12 max: 40 }
                                  }
                                }
                              )pb",
                              "test.textproto");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  // Every cell value of column "v" in c2 (which serves "txn"), read at the
  // last sample (the run's end, settling included).
  std::vector<std::string> values;
  RunOptions options;
  options.sample_every = seconds(1);
  options.on_sample = [&](sim::Time, instance::Instance& instance) {
    values.clear();
    cluster::Cluster* c2 = instance.replicas().Find("c2");
    ASSERT_NE(c2, nullptr);
    const Status s = c2->ReadRows(
        "t", cluster::ReadOptions{},
        [&](std::string_view, std::span<const cluster::CellView> cells) {
          for (const cluster::CellView& cell : cells) {
            if (cell.qualifier == kValueColumn) {
              values.emplace_back(cell.value);
            }
          }
          return true;
        });
    EXPECT_TRUE(s.ok()) << s.message();
  };
  auto o = RunScenario(*loaded, options);
  ASSERT_TRUE(o.ok()) << o.status().message();
  std::map<std::string, size_t> size_of;  // tag -> value size written
  std::set<size_t> sizes;
  for (const std::string& value : values) {
    const std::string_view tag = TagOf(value);
    std::string_view client;
    uint64_t n = 0;
    ASSERT_TRUE(ParseTag(tag, &client, &n)) << value;
    ASSERT_GT(value.size(), tag.size()) << value;
    EXPECT_EQ(value[tag.size()], '|') << value;
    // Padded with 'x' to a size in range (a longer tag is not cut).
    EXPECT_GE(value.size(), 12u) << value;
    EXPECT_LE(value.size(), std::max<size_t>(40, tag.size() + 1)) << value;
    EXPECT_EQ(value.find_first_not_of('x', tag.size() + 1), std::string::npos)
        << value;
    size_of[std::string(tag)] = value.size();
    sizes.insert(value.size());
  }
  // Many values (the family keeps every version), with sizes spread over
  // the range, so that shorter values followed longer ones.
  EXPECT_GT(values.size(), 400u);
  EXPECT_GT(sizes.size(), 15u);
  // Each stored value was written by one operation of the history.
  EXPECT_EQ(size_of.size(), values.size());
  size_t found = 0;
  for (const Operation& op : o->history.operations) {
    if (!op.written().empty() &&
        size_of.count(o->history.names->Text(op.written())) != 0) {
      ++found;
    }
  }
  EXPECT_EQ(found, size_of.size());
}

// The caller's wall clock is read once before and once after the checks,
// and nothing in the outcome depends on it.
TEST(RunnerTest, WallClockIsReadAroundTheChecksAndChangesNothing) {
  auto loaded =
      ParseScenario(std::string(kBase) + kMixedClient, "test.textproto");
  ASSERT_TRUE(loaded.ok()) << loaded.status().message();
  auto plain = RunScenario(*loaded, RunOptions());
  ASSERT_TRUE(plain.ok()) << plain.status().message();
  EXPECT_EQ(plain->check_wall_seconds, 0);

  int reads = 0;
  RunOptions timed;
  timed.wall_clock = [&reads] { return 10.0 * ++reads; };
  auto run = RunScenario(*loaded, timed);
  ASSERT_TRUE(run.ok()) << run.status().message();
  EXPECT_EQ(reads, 2);
  EXPECT_EQ(run->check_wall_seconds, 10.0);
  EXPECT_EQ(run->fingerprint, plain->fingerprint);
  EXPECT_EQ(run->history.operations.size(), plain->history.operations.size());
  EXPECT_EQ(run->passed, plain->passed);
}

}  // namespace
}  // namespace btsim::scenarios

namespace btsim::scenarios {
namespace {

// A heal just before the end: replication catches up while the run
// settles, and the heal's catch-up is recorded even when the run settled
// before the catch-up's next poll.
TEST(RunnerTest, ACatchUpCompletedWhileSettlingIsRecorded) {
  for (int heal_ms : {9'930, 9'950, 9'970, 9'990}) {
    SCOPED_TRACE("heal at " + std::to_string(heal_ms) + " ms");
    const RunOutcome o = Play(R"pb(
                                clients {
                                  name: "w"
                                  app_profile: "pinned"
                                  workload {
                                    mix { write: 1 }
                                    keys {
                                      uniform {}
                                      entities: 1000
                                    }
                                    ops_per_second: 200
                                  }
                                }
                                timeline {
                                  at { seconds: 1 }
                                  partition { a: "c1" b: "c3" }
                                }
                                timeline { at { seconds: 9 nanos:)pb" +
                              std::to_string((heal_ms - 9'000) * 1'000'000) +
                              R"pb(}
                                   heal { a: "c1" b: "c3" }
      }
    )pb");
    ASSERT_GE(o.history.settled, sim::Duration(0));
    bool found = false;
    for (const Event& e : o.history.events) {
      if (e.kind != EventKind::kHeal) continue;
      found = true;
      EXPECT_GE(e.end, e.at);
      EXPECT_LE(e.end, o.history.settled);
    }
    EXPECT_TRUE(found);
  }
}

}  // namespace
}  // namespace btsim::scenarios

namespace btsim::scenarios {
namespace {

// A consistency-token wait that ends after an age rule removed some of
// the writes before it counts none of them as violations.
TEST(RunnerTest, ATokenWaitCountsNoWriteAnAgeRuleRemoved) {
  const RunOutcome o = PlayScenario(R"pb(
    duration { seconds: 15 }
    instance {
      clusters { id: "c1" zone: "us-east1-b" nodes: 1 }
      clusters { id: "c2" zone: "us-east1-c" nodes: 1 }
    }
    tables {
      id: "t"
      families {
        name: "cf"
        gc_rule { max_age { seconds: 1 } }
      }
    }
    clients {
      name: "w"
      workload {
        mix { write: 1 }
        keys {
          uniform {}
          entities: 100000
        }
        ops_per_second: 100
      }
    }
    timeline {
      at { seconds: 12 }
      wait_for_replication {
        table: "t"
        interval { nanos: 10000000 }
      }
    }
  )pb");
  bool found = false;
  for (const Event& e : o.history.events) {
    if (e.kind != EventKind::kTokenWait) continue;
    found = true;
    EXPECT_GE(e.end, e.at);
    EXPECT_EQ(e.violations, 0);
  }
  EXPECT_TRUE(found);
}

}  // namespace
}  // namespace btsim::scenarios
