// Faults short of a clean outage, and the timeline's `for` and `repeat`:
// what simulated clients see under each.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/loader.h"
#include "scenarios/runner.h"
#include "scenarios/steps.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::scenario::v1;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::HasSubstr;

// c1 and c2 in one region; a client in c1's zone through `PROFILE`
// (single-cluster "pin" to c1, or "default", multi-cluster), writing and
// reading at 200 ops/s with a 1 s deadline. Each test appends a timeline.
constexpr char kBase[] = R"pb(
  duration { seconds: 12 }
  instance {
    clusters { id: "c1" zone: "us-east1-b" nodes: 3 }
    clusters { id: "c2" zone: "us-east1-c" nodes: 3 }
    app_profiles {
      id: "pin"
      single_cluster { cluster_id: "c1" }
    }
  }
  tables {
    id: "t"
    families { name: "cf" }
  }
  clients {
    name: "app"
    zone: "us-east1-b"
    app_profile: "PROFILE"
    deadline { seconds: 1 }
    workload {
      mix { write: 1 read_row: 1 }
      keys { uniform {} }
      ops_per_second: 200
    }
  }
)pb";

std::string Base(const std::string& profile) {
  std::string text = kBase;
  text.replace(text.find("PROFILE"), 7, profile);
  return text;
}

RunOutcome Play(const std::string& text) {
  auto loaded = ParseScenario(text, "s.textproto");
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  if (!loaded.ok()) return {};
  auto outcome = RunScenario(*loaded, RunOptions());
  EXPECT_TRUE(outcome.ok()) << outcome.status().message();
  return outcome.ok() ? std::move(*outcome) : RunOutcome();
}

// Operations invoked in [from, to) seconds, by final code.
std::map<StatusCode, int> Codes(const RunOutcome& o, double from, double to,
                                std::optional<OpType> type = std::nullopt) {
  std::map<StatusCode, int> codes;
  for (const Operation& op : o.history.operations) {
    const double at = std::chrono::duration<double>(op.invoke).count();
    if (at < from || at >= to || (type && op.type != *type)) continue;
    ++codes[op.code];
  }
  return codes;
}

TEST(GrayFaultsTest,
     ABlackHoledClusterLeavesRequestsHangingUntilTheirDeadline) {
  const RunOutcome o = Play(Base("default") + R"pb(
    timeline {
      at { seconds: 3 }
      cluster_down { cluster: "c1" mode: BLACKHOLE }
      for { seconds: 5 }
    }
  )pb");
  // The front end learns from timeouts: requests of the first second of
  // the outage fail, those after the ejection go to c2.
  const auto early = Codes(o, 3, 3.9);
  EXPECT_GT(early.count(StatusCode::kDeadlineExceeded)
                ? early.at(StatusCode::kDeadlineExceeded)
                : 0,
            100);
  EXPECT_EQ(early.count(StatusCode::kUnavailable), 0u);
  const auto late = Codes(o, 4.5, 8);
  EXPECT_EQ(late.size(), 1u);
  EXPECT_GT(late.at(StatusCode::kOk), 500);
  // The `for` brought c1 back at 8 s.
  int ups = 0;
  for (const Event& e : o.history.events) {
    if (e.kind == EventKind::kClusterUp) {
      ++ups;
      EXPECT_EQ(e.at, seconds(8));
    }
  }
  EXPECT_EQ(ups, 1);
}

TEST(GrayFaultsTest, AClusterThatComesBackRefusesInItsNextOutage) {
  // Black-holed at 1-3 s; at 8 s down again with no mode: it refuses, so
  // the front end learns at once and nothing fails.
  const RunOutcome o = Play(Base("default") + R"pb(
    timeline {
      at { seconds: 1 }
      cluster_down { cluster: "c1" mode: BLACKHOLE }
      for { seconds: 2 }
    }
    timeline {
      at { seconds: 8 }
      cluster_down { cluster: "c1" }
      for { seconds: 2 }
    }
  )pb");
  EXPECT_FALSE(Codes(o, 1, 1.9).empty());
  EXPECT_GT(Codes(o, 1, 1.9).count(StatusCode::kDeadlineExceeded), 0u);
  EXPECT_EQ(Codes(o, 7.5, 12).size(), 1u);  // only OK
}

TEST(GrayFaultsTest, ARefusingClusterIsFoundOutAtOnceAndRetriedElsewhere) {
  const RunOutcome o = Play(Base("default") + R"pb(
    timeline {
      at { seconds: 3 }
      cluster_down { cluster: "c1" }
      for { seconds: 5 }
    }
  )pb");
  const auto codes = Codes(o, 3, 8);
  EXPECT_EQ(codes.size(), 1u);  // every operation succeeded
  int retried = 0;
  for (const Operation& op : o.history.operations) {
    if (op.attempts > 1) ++retried;
  }
  EXPECT_GE(retried, 1);  // the refusals that taught the front end
  EXPECT_LT(retried, 20);
}

TEST(GrayFaultsTest, ASlowClusterServesLaterUntilItsSpeedIsRestored) {
  const RunOutcome o = Play(Base("pin") + R"pb(
    timeline {
      at { seconds: 3 }
      slow_cluster {
        cluster: "c1"
        added { constant { nanos: 200000000 } }
      }
    }
    timeline {
      at { seconds: 6 }
      restore_speed { cluster: "c1" }
    }
  )pb");
  for (const Operation& op : o.history.operations) {
    if (!op.ok()) continue;
    const double at = std::chrono::duration<double>(op.invoke).count();
    const sim::Duration latency = op.complete - op.invoke;
    if (at >= 3 && at < 5.7) {
      EXPECT_GE(latency, milliseconds(200)) << at;
    } else if (at >= 6) {
      EXPECT_LT(latency, milliseconds(50)) << at;
    }
  }
  EXPECT_EQ(Codes(o, 0, 12).size(), 1u);  // slow, not failing
}

TEST(GrayFaultsTest, InjectedErrorsFailTheirMethodWithTheirCode) {
  const RunOutcome o = Play(Base("pin") + R"pb(
    timeline {
      at { seconds: 3 }
      inject_errors {
        cluster: "c1"
        fraction: 1
        code: "INTERNAL"
        method: "MutateRow"
      }
      for { seconds: 3 }
    }
  )pb");
  const auto writes = Codes(o, 3, 6, OpType::kWrite);
  EXPECT_EQ(writes.size(), 1u);
  EXPECT_GT(writes.at(StatusCode::kInternal), 200);        // not retried
  EXPECT_EQ(Codes(o, 3, 6, OpType::kReadRow).size(), 1u);  // reads fine
  EXPECT_EQ(Codes(o, 6.1, 12).size(), 1u);  // stopped by the `for`

  const RunOutcome some = Play(Base("pin") + R"pb(
    timeline {
      at { seconds: 3 }
      inject_errors { cluster: "c1" fraction: 0.2 code: "INTERNAL" }
      for { seconds: 3 }
    }
  )pb");
  const auto codes = Codes(some, 3, 6);
  const double failed = codes.at(StatusCode::kInternal);
  EXPECT_NEAR(failed / (failed + codes.at(StatusCode::kOk)), 0.2, 0.05);
}

TEST(GrayFaultsTest,
     ClientsCutOffFromTheirClusterTimeOutWhileReplicationFlows) {
  const RunOutcome o = Play(Base("pin") + R"pb(
    timeline {
      at { seconds: 3 }
      cut_clients { cluster: "c1" client_zone: "us-east1-b" }
      for { seconds: 3 }
    }
  )pb");
  const auto codes = Codes(o, 3, 5.9);
  EXPECT_EQ(codes.size(), 1u);
  EXPECT_GT(codes.at(StatusCode::kDeadlineExceeded), 300);
  EXPECT_EQ(Codes(o, 6.1, 12).size(), 1u);  // mended by the `for`
  double converged = -1;
  for (const CheckValue& check : o.checks) {
    if (check.name == "converged") converged = check.value;
  }
  EXPECT_EQ(converged, 1);
}

TEST(GrayFaultsTest, LostRepliesLeaveWritesCommittedButUnacknowledged) {
  const RunOutcome o = Play(Base("pin") + R"pb(
    timeline {
      at { seconds: 3 }
      cut_clients { cluster: "c1" client: "app" direction: REPLIES }
      for { seconds: 3 }
    }
  )pb");
  int committed_unacknowledged = 0;
  for (const Operation& op : o.history.operations) {
    const double at = std::chrono::duration<double>(op.invoke).count();
    if (at < 3 || at >= 5.9 || op.type != OpType::kWrite) continue;
    EXPECT_EQ(op.code, StatusCode::kDeadlineExceeded);
    if (op.version != 0) ++committed_unacknowledged;
  }
  EXPECT_GT(committed_unacknowledged, 200);
}

TEST(GrayFaultsTest, ARepeatedStepWithAForIsAFlappingCluster) {
  const RunOutcome o = Play(Base("default") + R"pb(
    timeline {
      at { seconds: 2 }
      cluster_down { cluster: "c1" }
      for { seconds: 1 }
      repeat { every { seconds: 3 } times: 3 }
    }
  )pb");
  std::vector<std::pair<EventKind, sim::Duration>> seen;
  for (const Event& e : o.history.events) {
    if (e.kind == EventKind::kClusterDown || e.kind == EventKind::kClusterUp) {
      seen.emplace_back(e.kind, e.at);
    }
  }
  const std::vector<std::pair<EventKind, sim::Duration>> want = {
      {EventKind::kClusterDown, seconds(2)},
      {EventKind::kClusterUp, seconds(3)},
      {EventKind::kClusterDown, seconds(5)},
      {EventKind::kClusterUp, seconds(6)},
      {EventKind::kClusterDown, seconds(8)},
      {EventKind::kClusterUp, seconds(9)},
  };
  EXPECT_EQ(seen, want);
}

TEST(GrayFaultsTest, AClientClockSkewMovesTheTimestampsItWrites) {
  const RunOutcome o = Play(Base("pin") + R"pb(
    timeline {
      at { seconds: 3 }
      clock_skew { client: "app" offset { seconds: -2 } }
      for { seconds: 3 }
    }
  )pb");
  int skewed = 0;
  for (const Operation& op : o.history.operations) {
    if (op.type != OpType::kWrite) continue;
    const auto ts = std::chrono::duration_cast<std::chrono::milliseconds>(
        op.timestamp.time_since_epoch());
    const auto at = std::chrono::duration_cast<std::chrono::milliseconds>(
        (kRunEpoch + op.invoke).time_since_epoch());
    const double s = std::chrono::duration<double>(op.invoke).count();
    if (s >= 3 && s < 6) {
      EXPECT_EQ(at - ts, milliseconds(2000)) << s;
      ++skewed;
    } else {
      EXPECT_EQ(at - ts, milliseconds(0)) << s;
    }
  }
  EXPECT_GT(skewed, 200);
}

TEST(GrayFaultsTest, AStalledClusterServesButShipsNothingUntilResumed) {
  const RunOutcome o = Play(Base("pin") + R"pb(
    timeline {
      at { seconds: 3 }
      stall_replication { cluster: "c1" }
      for { seconds: 4 }
    }
  )pb");
  EXPECT_EQ(Codes(o, 0, 12).size(), 1u);  // served throughout
  // Nothing c1 committed during the stall reached c2 before the resume,
  // then it caught up.
  const Event* resume = nullptr;
  for (const Event& e : o.history.events) {
    if (e.kind == EventKind::kResumeReplication) resume = &e;
  }
  ASSERT_NE(resume, nullptr);
  EXPECT_EQ(resume->at, seconds(7));
  ASSERT_GE(resume->end, seconds(7));
  EXPECT_LT(resume->end, seconds(8));
  double converged = -1;
  for (const CheckValue& check : o.checks) {
    if (check.name == "converged") converged = check.value;
  }
  EXPECT_EQ(converged, 1);
}

TEST(GrayFaultsTest, LatencyAwareFailoverSendsASlowRequestOn) {
  const std::string slow = R"pb(
    timeline {
      at { seconds: 3 }
      slow_cluster {
        cluster: "c1"
        added { constant { seconds: 2 } }
      }
      for { seconds: 3 }
    }
  )pb";
  auto with_failover = [](std::string text) {
    text.replace(text.find("  app_profiles"), 0,
                 "  detector { failover_after: 0.5 }\n");
    return text;
  };
  const RunOutcome multi = Play(with_failover(Base("default")) + slow);
  int sent_on = 0;
  for (const Operation& op : multi.history.operations) {
    EXPECT_TRUE(op.ok());
    if (op.attempts == 2) {
      ++sent_on;
      const double at = std::chrono::duration<double>(op.invoke).count();
      EXPECT_GE(at, 3);
      EXPECT_LT(at, 3.6);
      // Sent on after half its 1 s deadline, answered by c2.
      EXPECT_EQ(op.cluster, "c2");
      EXPECT_GE(op.complete - op.invoke, milliseconds(500));
      EXPECT_LT(op.complete - op.invoke, milliseconds(520));
    }
  }
  // The requests of the first half second (200/s), all sent to c1 before
  // the first was sent on; the fifth sent on ejected it.
  EXPECT_GE(sent_on, 80);
  EXPECT_LE(sent_on, 130);
  // A single-cluster profile never fails over by itself: its calls time
  // out.
  const RunOutcome pinned = Play(with_failover(Base("pin")) + slow);
  const auto codes = Codes(pinned, 3, 5.9);
  EXPECT_EQ(codes.size(), 1u);
  EXPECT_GT(codes.at(StatusCode::kDeadlineExceeded), 500);
}

TEST(GrayFaultsTest, ATokenWaitRecordsTrueConsistencyAndWhatPollingSaw) {
  // c1 stalls from 2 s to 5 s: a token taken at 3 s is consistent only
  // after the resume, and a check every 4 s sees it at 7 s.
  const RunOutcome o = Play(Base("pin") + R"pb(
    timeline {
      at { seconds: 2 }
      stall_replication { cluster: "c1" }
      for { seconds: 3 }
    }
    timeline {
      at { seconds: 3 }
      wait_for_replication {
        table: "t"
        interval { seconds: 4 }
      }
    }
  )pb");
  const Event* wait = nullptr;
  for (const Event& e : o.history.events) {
    if (e.kind == EventKind::kTokenWait) wait = &e;
  }
  ASSERT_NE(wait, nullptr);
  EXPECT_GE(wait->consistent, seconds(5));
  EXPECT_LE(wait->consistent, milliseconds(5200));
  EXPECT_EQ(wait->end, seconds(7));
}

TEST(ExpandTimelineTest, ForAndRepeatExpandInFileOrder) {
  v1::Scenario s;
  v1::Step* down = s.add_timeline();
  down->mutable_at()->set_seconds(1);
  down->mutable_cluster_down()->set_cluster("c1");
  down->mutable_for_()->set_seconds(2);
  down->mutable_repeat()->mutable_every()->set_seconds(5);
  down->mutable_repeat()->set_times(2);
  v1::Step* resize = s.add_timeline();
  resize->mutable_at()->set_seconds(1);
  resize->mutable_resize()->set_cluster("c1");
  auto expanded = ExpandTimeline(s.timeline(), seconds(7));
  ASSERT_TRUE(expanded.ok()) << expanded.status().message();
  // The second copy's end (at 8 s) is after the run: the settle ends it.
  ASSERT_EQ(expanded->size(), 4u);
  EXPECT_TRUE((*expanded)[0].step.has_cluster_down());
  EXPECT_EQ((*expanded)[0].at, seconds(1));
  EXPECT_FALSE((*expanded)[0].step.has_for_());
  EXPECT_FALSE((*expanded)[0].step.has_repeat());
  EXPECT_TRUE((*expanded)[1].step.has_cluster_up());
  EXPECT_EQ((*expanded)[1].step.cluster_up().cluster(), "c1");
  EXPECT_EQ((*expanded)[1].at, seconds(3));
  EXPECT_EQ((*expanded)[1].step.at().seconds(), 3);
  EXPECT_EQ((*expanded)[2].at, seconds(6));
  EXPECT_EQ((*expanded)[2].field, "timeline[0]");
  EXPECT_TRUE((*expanded)[3].step.has_resize());
  EXPECT_EQ((*expanded)[3].field, "timeline[1]");
}

TEST(ExpandTimelineTest, BadForAndRepeatAreErrorsNamingTheField) {
  auto error = [](const std::string& step) {
    auto loaded = ParseScenario(Base("default") + step, "s.textproto");
    return loaded.ok() ? std::string("ok") : loaded.status().message();
  };
  EXPECT_THAT(error(R"pb(                                                                                                                                                      timeline {
                           at { seconds: 1 }
                           resize { cluster: "c1" nodes: 2 }
                           for { seconds: 1 }
                         })pb"),
              HasSubstr("timeline[0].for: only for cluster_down"));
  EXPECT_THAT(error(R"pb(                                                                                                                                                      timeline {
                           at { seconds: 1 }
                           cluster_down { cluster: "c1" }
                           for {}
                         })pb"),
              HasSubstr("timeline[0].for: must be positive"));
  EXPECT_THAT(error(R"pb(timeline {
                           at { seconds: 1 }
                           cluster_down { cluster: "c1" }
                           repeat {
                             every { seconds: 5 }
                             times: 4
                           }
                         })pb"),
              HasSubstr("timeline[0].repeat: the last copy is after the end"));
  EXPECT_THAT(error(R"pb(timeline {
                           at { seconds: 1 }
                           cluster_down { cluster: "c1" }
                           repeat {
                             every { seconds: 1 }
                             times: 1
                           }
                         })pb"),
              HasSubstr("timeline[0].repeat.times: must be in 2..1000"));
  EXPECT_THAT(
      error(R"pb(timeline {
                   at { seconds: 1 }
                   inject_errors { cluster: "c1" fraction: 1.5 }
                 })pb"),
      HasSubstr("timeline[0].inject_errors.fraction: must be in (0, 1]"));
  EXPECT_THAT(
      error(R"pb(timeline {
                   at { seconds: 1 }
                   inject_errors { cluster: "c1" fraction: 1 code: "OOPS" }
                 })pb"),
      HasSubstr("timeline[0].inject_errors.code: 'OOPS'"));
  EXPECT_THAT(
      error(R"pb(timeline {
                   at { seconds: 1 }
                   inject_errors { cluster: "c1" fraction: 1 method: "Get" }
                 })pb"),
      HasSubstr("timeline[0].inject_errors.method: 'Get'"));
  EXPECT_THAT(error(R"pb(timeline {
                           at { seconds: 1 }
                           cut_clients { cluster: "c1" }
                         })pb"),
              HasSubstr("timeline[0].cut_clients: set exactly one of"));
  EXPECT_THAT(error(R"pb(timeline {
                           at { seconds: 1 }
                           cut_clients { cluster: "c1" client: "nobody" }
                         })pb"),
              HasSubstr("timeline[0].cut_clients.client: unknown client"));
  EXPECT_THAT(error(R"pb(timeline {
                           at { seconds: 1 }
                           slow_cluster { cluster: "c1" }
                         })pb"),
              HasSubstr("timeline[0].slow_cluster.added: required"));
  // A copy meets the clusters of its own time.
  EXPECT_THAT(error(R"pb(timeline {
                           at { seconds: 5 }
                           remove_cluster { cluster: "c2" }
                         }
                         timeline {
                           at { seconds: 1 }
                           slow_cluster {
                             cluster: "c2"
                             added { constant { seconds: 1 } }
                           }
                           repeat {
                             every { seconds: 3 }
                             times: 3
                           }
                         })pb"),
              HasSubstr("timeline[1].slow_cluster.cluster: no cluster 'c2'"));
}

}  // namespace
}  // namespace btsim::scenarios
