// The node model under overload, played as scenarios: one SSD node (17,000
// reads/s, 14,000 writes/s) offered far more than it can serve. Requests
// execute when the node starts serving them, a full queue refuses
// (UNAVAILABLE), attempts past their deadline are dropped unexecuted, the
// cluster recovers within seconds once the load drops, and stays failed
// when the retries alone exceed its capacity (a metastable failure).
#include <algorithm>
#include <chrono>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "scenarios/runner.h"

namespace btsim::scenarios {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// One cluster of one node; `client` (a clients entry named "app") is
// offered `overload` ops/s for 10 s, then `after` ops/s for 20 s.
std::string Overload(int overload, int after, const std::string& retry,
                     const std::string& mix = "read_row: 9 write: 1") {
  auto workload = [&](int rate) {
    return "workload { mix { " + mix +
           " } keys { uniform {} entities: 100000 } ops_per_second: " +
           std::to_string(rate) + " }";
  };
  return R"pb(
           duration { seconds: 30 }
           instance { clusters { id: "c1" zone: "us-east1-b" nodes: 1 } }
           tables {
             id: "t"
             families { name: "cf" }
           }
           clients { name: "app" count: 4 zone: "us-east1-b"
         )pb" +
         retry + workload(overload / 4) + R"pb(
           }
           timeline {
      at { seconds: 10 }
      change_workload { client: "app" )pb" +
         workload(after / 4) + R"pb(}
                                    }
  )pb";
}

RunOutcome Play(const std::string& text) {
  auto loaded = ParseScenario(text, "overload.textproto");
  EXPECT_TRUE(loaded.ok()) << loaded.status().message();
  if (!loaded.ok()) return {};
  auto outcome = RunScenario(*loaded, RunOptions{});
  EXPECT_TRUE(outcome.ok()) << outcome.status().message();
  return outcome.ok() ? std::move(*outcome) : RunOutcome{};
}

struct Window {
  int64_t ops = 0;
  int64_t errors = 0;
  int64_t unavailable = 0;
  std::vector<sim::Duration> latencies;  // of successes
  double ErrorRate() const {
    return ops == 0 ? 0 : static_cast<double>(errors) / ops;
  }
  sim::Duration P99() {
    if (latencies.empty()) return sim::Duration::max();
    std::sort(latencies.begin(), latencies.end());
    return latencies[latencies.size() * 99 / 100];
  }
};

// Operations issued in [from, to).
Window Between(const RunOutcome& o, sim::Duration from, sim::Duration to) {
  Window w;
  for (const Operation& op : o.history.operations) {
    if (op.invoke < from || op.invoke >= to) continue;
    ++w.ops;
    if (op.code == StatusCode::kOk) {
      w.latencies.push_back(op.complete - op.invoke);
    } else {
      ++w.errors;
      if (op.code == StatusCode::kUnavailable) ++w.unavailable;
    }
  }
  return w;
}

TEST(OverloadTest, ABoundedQueueShedsWorkAndTheClusterRecovers) {
  // 24,000 ops/s (about 1.5x the node) for 10 s, then 65 % of capacity.
  const RunOutcome o = Play(Overload(24'000, 10'000, ""));
  Window during = Between(o, seconds(2), seconds(10));
  // Work beyond the queue is refused (operations fail after their retries
  // are spent), and what is served waits at most about the queue limit
  // (1 s): operations that succeeded at their first attempt.
  EXPECT_GT(during.unavailable, 10'000);
  std::vector<sim::Duration> first_attempts;
  for (const Operation& op : o.history.operations) {
    if (op.invoke >= seconds(2) && op.invoke < seconds(10) &&
        op.code == StatusCode::kOk && op.attempts == 1) {
      first_attempts.push_back(op.complete - op.invoke);
    }
  }
  ASSERT_GT(first_attempts.size(), 10'000u);
  EXPECT_LT(*std::max_element(first_attempts.begin(), first_attempts.end()),
            milliseconds(1'010));
  // Within a few seconds of the drop (the queue and the retries waiting in
  // backoff drain) every operation succeeds again, at the service time.
  EXPECT_EQ(Between(o, seconds(10), seconds(30)).errors, 0);
  Window after = Between(o, seconds(15), seconds(30));
  EXPECT_GT(after.ops, 100'000);
  EXPECT_EQ(after.errors, 0);
  EXPECT_LT(after.P99(), milliseconds(5));
}

TEST(OverloadTest, AWriteCommitsWhenItsNodeServesIt) {
  const RunOutcome o = Play(Overload(24'000, 10'000, ""));
  std::vector<sim::Duration> waits;
  for (const Operation& op : o.history.operations) {
    if (op.type != OpType::kWrite || op.version == 0) continue;
    if (op.invoke < seconds(3) || op.invoke >= seconds(10)) continue;
    // Committed after its queue wait, before its reply.
    EXPECT_LE(op.committed, op.complete) << op.id;
    waits.push_back(op.committed - op.invoke);
  }
  ASSERT_GT(waits.size(), 1000u);
  std::sort(waits.begin(), waits.end());
  EXPECT_GT(waits[waits.size() / 2], milliseconds(300));
}

TEST(OverloadTest, AnAttemptPastItsDeadlineIsDroppedUnexecuted) {
  // 50 ms attempts, no retries: the node's queue is longer than that, so
  // the attempts it would start late are dropped, not executed.
  const RunOutcome o = Play(Overload(
      30'000, 1'000, "deadline { nanos: 50000000 } retry { max_attempts: 1 }",
      "write: 1"));
  int64_t timed_out = 0;
  for (const Operation& op : o.history.operations) {
    if (op.type != OpType::kWrite) continue;
    if (op.version != 0) {
      // What committed started before its deadline.
      EXPECT_LT(op.committed - op.invoke, milliseconds(50)) << op.id;
    }
    if (op.code == StatusCode::kDeadlineExceeded) {
      ++timed_out;
    }
  }
  EXPECT_GT(timed_out, 10'000);
}

TEST(OverloadTest, RetriesAloneAboveCapacityKeepTheClusterFailed) {
  // 100 ms attempts retried up to 10 times within a 5 s deadline. During
  // the overload the queue fills up to the attempts' deadline, so every
  // attempt served replies too late; after the drop to 65 % each operation
  // still makes up to 10 attempts, which alone exceed the node: the
  // failure sustains itself (a metastable failure).
  const RunOutcome o = Play(Overload(
      24'000, 10'000,
      "deadline { seconds: 5 } retry { max_attempts: 10 initial_backoff { "
      "nanos: 10000000 } attempt_timeout { nanos: 100000000 } }"));
  Window after = Between(o, seconds(15), seconds(25));
  EXPECT_GT(after.ErrorRate(), 0.9);
  // The same clients at a load whose retries fit recover.
  const RunOutcome light = Play(Overload(
      24'000, 1'000,
      "deadline { seconds: 5 } retry { max_attempts: 10 initial_backoff { "
      "nanos: 10000000 } attempt_timeout { nanos: 100000000 } }"));
  Window calm = Between(light, seconds(20), seconds(25));
  EXPECT_EQ(calm.errors, 0);
}

}  // namespace
}  // namespace btsim::scenarios
