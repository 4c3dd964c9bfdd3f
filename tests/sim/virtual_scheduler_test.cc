// VirtualScheduler-only behaviour: exact time jumps, the Run* drivers,
// pending()/next_due() and determinism. The behaviour it shares with
// AsioScheduler is in scheduler_conformance_test.cc.
#include "sim/virtual_scheduler.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "sim/rng.h"

namespace btsim::sim {
namespace {

using std::chrono::hours;
using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr Time kStart{Duration(1'700'000'000'000'000'000)};

TEST(VirtualSchedulerTest, StartsAtTheGivenTimeWithNothingPending) {
  VirtualScheduler s(kStart);
  EXPECT_EQ(s.Now(), kStart);
  EXPECT_EQ(s.pending(), 0u);
  EXPECT_FALSE(s.Step());
  EXPECT_EQ(s.RunUntilIdle(), 0);
  EXPECT_EQ(s.Now(), kStart);
}

TEST(VirtualSchedulerTest, TimeJumpsExactlyToEachDueTime) {
  VirtualScheduler s(kStart);
  std::vector<Duration> seen;
  for (Duration d : {Duration(hours(1)), Duration(1), Duration(milliseconds(5)),
                     Duration(seconds(2)), Duration(0)}) {
    s.RunAfter(d, [&] { seen.push_back(s.Now() - kStart); });
  }
  EXPECT_EQ(s.RunUntilIdle(), 5);
  EXPECT_EQ(seen,
            (std::vector<Duration>{Duration(0), Duration(1), milliseconds(5),
                                   seconds(2), hours(1)}));
  EXPECT_EQ(s.Now(), kStart + hours(1));  // no further than the last task
}

TEST(VirtualSchedulerTest, StepRunsOneTaskAndAdvancesToIt) {
  VirtualScheduler s(kStart);
  int ran = 0;
  s.RunAfter(seconds(3), [&] { ++ran; });
  s.RunAfter(seconds(7), [&] { ++ran; });
  ASSERT_TRUE(s.Step());
  EXPECT_EQ(ran, 1);
  EXPECT_EQ(s.Now(), kStart + seconds(3));
  ASSERT_TRUE(s.Step());
  EXPECT_EQ(ran, 2);
  EXPECT_EQ(s.Now(), kStart + seconds(7));
  EXPECT_FALSE(s.Step());
  EXPECT_EQ(s.Now(), kStart + seconds(7));
}

TEST(VirtualSchedulerTest, NegativeDelayIsDueNow) {
  VirtualScheduler s(kStart);
  Time seen;
  s.RunAfter(seconds(-5), [&] { seen = s.Now(); });
  EXPECT_EQ(s.next_due(), kStart);
  s.RunUntilIdle();
  EXPECT_EQ(seen, kStart);
}

TEST(VirtualSchedulerTest, RunUntilRunsTasksDueAtTheDeadlineAndStopsThere) {
  VirtualScheduler s(kStart);
  std::vector<int> ran;
  const Time deadline = kStart + milliseconds(10);
  s.RunAfter(milliseconds(4), [&] { ran.push_back(4); });
  s.RunAfter(milliseconds(10), [&] { ran.push_back(10); });
  s.RunAfter(milliseconds(10) + Duration(1), [&] { ran.push_back(11); });
  EXPECT_EQ(s.RunUntil(deadline), 2);
  EXPECT_EQ(ran, (std::vector<int>{4, 10}));
  EXPECT_EQ(s.Now(), deadline);
  EXPECT_EQ(s.pending(), 1u);
  EXPECT_EQ(s.next_due(), deadline + Duration(1));
}

TEST(VirtualSchedulerTest, RunUntilMovesTheClockToTheDeadlineWhenIdle) {
  VirtualScheduler s(kStart);
  EXPECT_EQ(s.RunUntil(kStart + seconds(30)), 0);
  EXPECT_EQ(s.Now(), kStart + seconds(30));
}

TEST(VirtualSchedulerTest, RunUntilNeverMovesTheClockBackwards) {
  VirtualScheduler s(kStart + seconds(10));
  int ran = 0;
  s.RunAfter(Duration(0), [&] { ++ran; });
  EXPECT_EQ(s.RunUntil(kStart), 0);  // the task is due later than that
  EXPECT_EQ(s.Now(), kStart + seconds(10));
  EXPECT_EQ(ran, 0);
  EXPECT_EQ(s.RunUntil(kStart + seconds(10)), 1);
  EXPECT_EQ(ran, 1);
}

TEST(VirtualSchedulerTest, RunForAdvancesByTheDuration) {
  VirtualScheduler s(kStart);
  std::vector<Duration> seen;
  for (int i = 1; i <= 5; ++i) {
    s.RunAfter(milliseconds(300 * i),
               [&] { seen.push_back(s.Now() - kStart); });
  }
  EXPECT_EQ(s.RunFor(seconds(1)), 3);  // 300, 600, 900 ms
  EXPECT_EQ(s.Now(), kStart + seconds(1));
  EXPECT_EQ(s.RunFor(seconds(1)), 2);  // 1200, 1500 ms
  EXPECT_EQ(s.Now(), kStart + seconds(2));
  EXPECT_EQ(s.RunFor(Duration(0)), 0);
  EXPECT_EQ(s.Now(), kStart + seconds(2));
  EXPECT_EQ(seen, (std::vector<Duration>{milliseconds(300), milliseconds(600),
                                         milliseconds(900), milliseconds(1200),
                                         milliseconds(1500)}));
}

TEST(VirtualSchedulerTest, RunUntilIdleStopsAfterMaxTasks) {
  VirtualScheduler s(kStart);
  int ran = 0;
  for (int i = 0; i < 10; ++i) s.RunAfter(seconds(i), [&] { ++ran; });
  EXPECT_EQ(s.RunUntilIdle(3), 3);
  EXPECT_EQ(ran, 3);
  EXPECT_EQ(s.pending(), 7u);
  EXPECT_EQ(s.Now(), kStart + seconds(2));
  EXPECT_EQ(s.RunUntilIdle(0), 0);
  EXPECT_EQ(s.RunUntilIdle(), 7);
  EXPECT_EQ(ran, 10);
  EXPECT_EQ(s.pending(), 0u);
}

TEST(VirtualSchedulerTest, RunUntilIdleBoundsATaskThatReschedulesItself) {
  VirtualScheduler s(kStart);
  int ran = 0;
  std::function<void()> tick = [&] {
    ++ran;
    s.RunAfter(seconds(1), tick);
  };
  s.RunAfter(Duration(0), tick);
  EXPECT_EQ(s.RunUntilIdle(100), 100);
  EXPECT_EQ(ran, 100);
  EXPECT_EQ(s.Now(), kStart + seconds(99));
  EXPECT_EQ(s.pending(), 1u);
}

TEST(VirtualSchedulerTest, PendingAndNextDueTrackTheQueue) {
  VirtualScheduler s(kStart);
  const TaskId late = s.RunAfter(seconds(9), [] {});
  EXPECT_EQ(s.pending(), 1u);
  EXPECT_EQ(s.next_due(), kStart + seconds(9));
  const TaskId early = s.RunAfter(seconds(2), [] {});
  s.RunAfter(seconds(5), [] {});
  EXPECT_EQ(s.pending(), 3u);
  EXPECT_EQ(s.next_due(), kStart + seconds(2));
  EXPECT_TRUE(s.Cancel(early));
  EXPECT_EQ(s.pending(), 2u);
  EXPECT_EQ(s.next_due(), kStart + seconds(5));
  ASSERT_TRUE(s.Step());
  EXPECT_EQ(s.pending(), 1u);
  EXPECT_EQ(s.next_due(), kStart + seconds(9));
  EXPECT_TRUE(s.Cancel(late));
  EXPECT_EQ(s.pending(), 0u);
  EXPECT_FALSE(s.Step());
}

TEST(VirtualSchedulerTest, TaskScheduledNowFromInsideATaskRunsInTheSameRun) {
  VirtualScheduler s(kStart);
  std::vector<std::string> ran;
  const Time deadline = kStart + seconds(1);
  s.RunAfter(seconds(1), [&] {
    ran.push_back("parent");
    s.RunAfter(Duration(0), [&] {
      ran.push_back("child");
      s.RunAfter(Duration(0), [&] { ran.push_back("grandchild"); });
      s.RunAfter(Duration(1), [&] { ran.push_back("too late"); });
    });
  });
  EXPECT_EQ(s.RunUntil(deadline), 3);
  EXPECT_EQ(ran, (std::vector<std::string>{"parent", "child", "grandchild"}));
  EXPECT_EQ(s.Now(), deadline);
  EXPECT_EQ(s.pending(), 1u);
  EXPECT_EQ(s.next_due(), deadline + Duration(1));
}

TEST(VirtualSchedulerTest, ManyTasksAtOneInstantRunInSchedulingOrder) {
  VirtualScheduler s(kStart);
  std::vector<int> ran;
  // Interleave two due times; each keeps its own scheduling order.
  for (int i = 0; i < 50; ++i) {
    s.RunAfter(seconds(i % 2), [&, i] { ran.push_back(i); });
  }
  s.RunUntilIdle();
  std::vector<int> expected;
  for (int i = 0; i < 50; i += 2) expected.push_back(i);
  for (int i = 1; i < 50; i += 2) expected.push_back(i);
  EXPECT_EQ(ran, expected);
}

// A little simulation: tasks spawn children at pseudo-random delays (some
// zero, many colliding) and cancel each other; the trace records who ran
// when. Identical input must give an identical trace.
std::vector<std::pair<int64_t, Time>> RunScripted(uint64_t seed) {
  VirtualScheduler s(kStart);
  Rng rng(seed);
  std::vector<std::pair<int64_t, Time>> trace;
  std::vector<TaskId> ids;
  int64_t next_tag = 0;
  std::function<void(int)> spawn = [&](int depth) {
    const int64_t tag = next_tag++;
    const auto ms = static_cast<int64_t>(rng.Uniform(4));
    const auto times = static_cast<int64_t>(rng.Uniform(3));
    const Duration delay = milliseconds(ms * times);
    ids.push_back(s.RunAfter(delay, [&, tag, depth] {
      trace.emplace_back(tag, s.Now());
      if (depth < 6) {
        for (uint64_t i = 0, n = rng.Uniform(3); i < n; ++i) spawn(depth + 1);
      }
      if (!ids.empty() && rng.Bernoulli(0.2)) {
        const bool cancelled = s.Cancel(ids[rng.Uniform(ids.size())]);
        trace.emplace_back(cancelled ? -1 : -2, s.Now());
      }
    }));
  };
  for (int i = 0; i < 20; ++i) spawn(0);
  s.RunUntilIdle(100'000);
  return trace;
}

TEST(VirtualSchedulerTest, SameScheduleGivesTheSameTrace) {
  const auto a = RunScripted(42);
  const auto b = RunScripted(42);
  EXPECT_GT(a.size(), 50u);
  EXPECT_EQ(a, b);
  // Time in the trace never goes backwards.
  for (size_t i = 1; i < a.size(); ++i) EXPECT_GE(a[i].second, a[i - 1].second);
  EXPECT_NE(RunScripted(43), a);  // and the input does matter
}

// Against a model (a sorted set of (due, scheduling order)): thousands of
// pending tasks, so the heap is several levels deep, with cancels of tasks
// anywhere in it, between runs and from inside tasks. Every task runs
// exactly when the model says, and a cancelled one never runs.
TEST(VirtualSchedulerTest, RunsInTheModelsOrderWithCancelsAnywhereInTheHeap) {
  VirtualScheduler s(kStart);
  Rng rng(7);
  std::set<std::pair<Time, int>> model;  // (due, tag): tags rise with time
  std::map<int, TaskId> pending;         // tag -> id
  std::vector<int> ran;
  int next_tag = 0;
  // Cancels a pending task picked at random and drops it from the model;
  // returns what Cancel said.
  auto cancel_one = [&] {
    auto victim = pending.begin();
    std::advance(victim, rng.Uniform(pending.size()));
    const bool cancelled = s.Cancel(victim->second);
    std::erase_if(model,
                  [&](const auto& e) { return e.second == victim->first; });
    pending.erase(victim);
    return cancelled;
  };
  std::function<void()> schedule = [&] {
    const int tag = next_tag++;
    // Few distinct delays: many ties, which must go by scheduling order.
    const Duration delay = milliseconds(static_cast<int64_t>(rng.Uniform(50)));
    model.emplace(s.Now() + delay, tag);
    pending[tag] = s.RunAfter(delay, [&, tag] {
      ran.push_back(tag);
      pending.erase(tag);
      if (rng.Bernoulli(0.5)) schedule();
      if (!pending.empty() && rng.Bernoulli(0.3)) {
        EXPECT_TRUE(cancel_one());
      }
    });
  };
  for (int i = 0; i < 3000; ++i) schedule();
  // Cancel a tenth of them before anything runs, from all over the heap.
  for (int i = 0; i < 300; ++i) {
    ASSERT_TRUE(cancel_one());
  }
  EXPECT_EQ(s.pending(), model.size());
  std::vector<int> expected;
  while (s.Step()) {
    // The task that ran was the model's first, at its due time.
    ASSERT_FALSE(model.empty());
    EXPECT_EQ(ran.back(), model.begin()->second);
    EXPECT_EQ(s.Now(), model.begin()->first);
    expected.push_back(model.begin()->second);
    model.erase(model.begin());
    EXPECT_EQ(s.pending(), model.size());
  }
  EXPECT_TRUE(model.empty());
  EXPECT_EQ(ran, expected);
  EXPECT_GT(ran.size(), 3000u);
}

}  // namespace
}  // namespace btsim::sim
