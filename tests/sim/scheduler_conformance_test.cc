// One conformance suite for every Scheduler (the contract in sim/scheduler.h),
// run against VirtualScheduler and AsioScheduler, plus AsioScheduler-only
// tests (threads, Shutdown).
//
// Real-time tests only ever assert ordering and "not before"; they never
// assert an upper bound on how long something took, so they hold on a loaded
// machine. Where the outcome could depend on how the test thread is
// scheduled, the setup runs inside a task (nothing else runs meanwhile) or the
// assertion is the exact contract (e.g. "ran" == "Cancel returned false").
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "sim/asio/asio_scheduler.h"
#include "sim/scheduler.h"
#include "sim/virtual_scheduler.h"

namespace btsim::sim {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

constexpr Time kVirtualStart{Duration(1'700'000'000'000'000'000)};
// Generous: only reached when something is broken.
constexpr Duration kRealTimeout = seconds(20);

// A thread-safe record of what tasks did. Tasks append; the test waits.
class Log {
 public:
  void Add(int64_t v) {
    {
      std::lock_guard lock(mu_);
      values_.push_back(v);
    }
    cv_.notify_all();
  }
  std::vector<int64_t> values() const {
    std::lock_guard lock(mu_);
    return values_;
  }
  size_t size() const {
    std::lock_guard lock(mu_);
    return values_.size();
  }
  // Waits, in real time, until at least `n` values were added.
  bool WaitForSize(size_t n, Duration timeout) const {
    std::unique_lock lock(mu_);
    return cv_.wait_for(lock, timeout, [&] { return values_.size() >= n; });
  }

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable cv_;
  std::vector<int64_t> values_;
};

// Polls `done` in real time; for conditions not tied to a Log.
bool WaitUntil(const std::function<bool()>& done,
               Duration timeout = kRealTimeout) {
  const auto give_up = std::chrono::steady_clock::now() + timeout;
  while (!done()) {
    if (std::chrono::steady_clock::now() > give_up) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

// What the suite needs from an implementation: one scheduler, and a way to
// make it run tasks until a log has grown to a given size.
class VirtualHarness {
 public:
  static constexpr bool kRealTime = false;
  Scheduler& scheduler() { return scheduler_; }
  // Steps the scheduler until `log` holds `n` values; false if it runs out
  // of tasks first.
  bool RunUntilLogged(const Log& log, size_t n) {
    while (log.size() < n && scheduler_.Step()) {
    }
    return log.size() >= n;
  }

 private:
  VirtualScheduler scheduler_{kVirtualStart};
};

class AsioHarness {
 public:
  static constexpr bool kRealTime = true;
  Scheduler& scheduler() { return scheduler_; }
  // The scheduler runs on its own; wait (in real time) for the log.
  bool RunUntilLogged(const Log& log, size_t n) {
    return log.WaitForSize(n, kRealTimeout);
  }

 private:
  AsioScheduler scheduler_;
};

template <typename H>
class SchedulerConformanceTest : public ::testing::Test {
 public:
  Scheduler& s() { return harness_.scheduler(); }
  bool Run(size_t n) { return harness_.RunUntilLogged(log_, n); }
  // Schedules a task that logs `tag`.
  TaskId Tagged(Duration delay, int64_t tag) {
    return s().RunAfter(delay, [this, tag] { log_.Add(tag); });
  }

  // Everything tasks touch is declared before harness_, so that the
  // scheduler (and its thread) is gone before this state is destroyed.
  Log log_;
  Log times_;
  std::array<std::atomic<TaskId>, 8> ids_{};
  std::array<std::atomic<int>, 8> results_{};  // 0 unset, 1 false, 2 true
  std::atomic<int> in_flight_{0};
  std::atomic<int> max_in_flight_{0};
  H harness_;
};

struct HarnessNames {
  template <typename T>
  static std::string GetName(int) {
    return T::kRealTime ? "Asio" : "Virtual";
  }
};

using Harnesses = ::testing::Types<VirtualHarness, AsioHarness>;
TYPED_TEST_SUITE(SchedulerConformanceTest, Harnesses, HarnessNames);

constexpr int kFalse = 1;
constexpr int kTrue = 2;
int AsResult(bool b) { return b ? kTrue : kFalse; }

TYPED_TEST(SchedulerConformanceTest, TaskRunsNotBeforeItsDelay) {
  const std::vector<Duration> delays = {Duration(0),      Duration(1),
                                        milliseconds(1),  milliseconds(3),
                                        milliseconds(10), milliseconds(25)};
  for (size_t i = 0; i < delays.size(); ++i) {
    const Time earliest = this->s().Now() + delays[i];
    this->s().RunAfter(delays[i], [this, earliest, i] {
      this->times_.Add((this->s().Now() - earliest).count());
      this->log_.Add(static_cast<int64_t>(i));
    });
  }
  ASSERT_TRUE(this->Run(delays.size()));
  for (int64_t lateness : this->times_.values()) EXPECT_GE(lateness, 0);
}

TYPED_TEST(SchedulerConformanceTest, RunsByDueTimeNotBySchedulingOrder) {
  const std::vector<Duration> delays = {
      milliseconds(30), milliseconds(10), milliseconds(20), Duration(0),
      milliseconds(25), milliseconds(5),  milliseconds(15)};
  // The due time is Now() + delay with Now() read inside RunAfter, so it lies
  // in [lo, hi] below; on a virtual clock lo == hi.
  std::vector<Time> lo, hi;
  for (size_t i = 0; i < delays.size(); ++i) {
    lo.push_back(this->s().Now() + delays[i]);
    this->Tagged(delays[i], static_cast<int64_t>(i));
    hi.push_back(this->s().Now() + delays[i]);
  }
  ASSERT_TRUE(this->Run(delays.size()));
  const std::vector<int64_t> order = this->log_.values();
  ASSERT_EQ(order.size(), delays.size());
  // If a ran before b, b cannot have been due strictly earlier than a.
  for (size_t x = 0; x < order.size(); ++x) {
    for (size_t y = x + 1; y < order.size(); ++y) {
      EXPECT_GE(hi[order[y]], lo[order[x]])
          << "task " << order[y] << " was due before task " << order[x]
          << " but ran after it";
    }
  }
  if (!TypeParam::kRealTime) {
    EXPECT_EQ(order, (std::vector<int64_t>{3, 5, 1, 6, 2, 4, 0}));
  }
}

TYPED_TEST(SchedulerConformanceTest, SameDueTimeRunsInSchedulingOrder) {
  constexpr int kTasks = 100;
  for (int i = 0; i < kTasks; ++i) this->Tagged(Duration(0), i);
  ASSERT_TRUE(this->Run(kTasks));
  std::vector<int64_t> expected(kTasks);
  for (int i = 0; i < kTasks; ++i) expected[i] = i;
  EXPECT_EQ(this->log_.values(), expected);
}

TYPED_TEST(SchedulerConformanceTest, SameDelayRunsInSchedulingOrder) {
  // Same delay from one thread: due times never decrease (and are equal on a
  // virtual clock), so they must run in scheduling order.
  constexpr int kTasks = 100;
  for (int i = 0; i < kTasks; ++i) this->Tagged(milliseconds(2), i);
  ASSERT_TRUE(this->Run(kTasks));
  std::vector<int64_t> expected(kTasks);
  for (int i = 0; i < kTasks; ++i) expected[i] = i;
  EXPECT_EQ(this->log_.values(), expected);
}

TYPED_TEST(SchedulerConformanceTest, SameDelayFromInsideATaskRunsInOrder) {
  constexpr int kTasks = 100;
  this->s().RunAfter(Duration(0), [this] {
    for (int i = 0; i < kTasks; ++i) this->Tagged(milliseconds(1), i);
  });
  ASSERT_TRUE(this->Run(kTasks));
  std::vector<int64_t> expected(kTasks);
  for (int i = 0; i < kTasks; ++i) expected[i] = i;
  EXPECT_EQ(this->log_.values(), expected);
}

TYPED_TEST(SchedulerConformanceTest, NegativeDelayCountsAsZero) {
  // Were -1s honoured, task 1 would be due before task 0 and run first.
  const Time before = this->s().Now();
  this->Tagged(Duration(0), 0);
  this->s().RunAfter(seconds(-1), [this, before] {
    this->times_.Add((this->s().Now() - before).count());
    this->log_.Add(1);
  });
  this->Tagged(Duration(-1), 2);
  this->Tagged(Duration(0), 3);
  ASSERT_TRUE(this->Run(4));
  EXPECT_EQ(this->log_.values(), (std::vector<int64_t>{0, 1, 2, 3}));
  ASSERT_EQ(this->times_.size(), 1u);
  EXPECT_GE(this->times_.values()[0], 0);
}

TYPED_TEST(SchedulerConformanceTest, CancelPendingTaskReturnsTrueAndNeverRuns) {
  // Set up inside a task, so nothing can run between RunAfter and Cancel.
  this->s().RunAfter(Duration(0), [this] {
    const TaskId doomed = this->Tagged(milliseconds(1), 1);
    this->Tagged(milliseconds(5), 2);  // sentinel, due after `doomed`
    this->results_[0] = AsResult(this->s().Cancel(doomed));
  });
  ASSERT_TRUE(this->Run(1));
  EXPECT_EQ(this->results_[0].load(), kTrue);
  EXPECT_EQ(this->log_.values(), (std::vector<int64_t>{2}));
}

TYPED_TEST(SchedulerConformanceTest, CancelFromDrivingThread) {
  const TaskId doomed = this->Tagged(milliseconds(20), 1);
  const bool cancelled = this->s().Cancel(doomed);
  this->Tagged(milliseconds(25), 2);  // sentinel, due after `doomed`
  // A real-time scheduler may, in theory, run `doomed` before Cancel; the
  // contract is that it runs exactly when Cancel says it could not stop it.
  ASSERT_TRUE(this->Run(cancelled ? 1 : 2));
  const std::vector<int64_t> expected =
      cancelled ? std::vector<int64_t>{2} : std::vector<int64_t>{1, 2};
  EXPECT_EQ(this->log_.values(), expected);
  if (!TypeParam::kRealTime) {
    EXPECT_TRUE(cancelled);
  }
  EXPECT_FALSE(this->s().Cancel(doomed));
}

TYPED_TEST(SchedulerConformanceTest, CancelAfterRunReturnsFalse) {
  const TaskId id = this->Tagged(Duration(0), 1);
  ASSERT_TRUE(this->Run(1));
  EXPECT_FALSE(this->s().Cancel(id));
}

TYPED_TEST(SchedulerConformanceTest, CancelUnknownIdReturnsFalse) {
  EXPECT_FALSE(this->s().Cancel(0));
  EXPECT_FALSE(this->s().Cancel(~TaskId{0}));
  const TaskId id = this->Tagged(Duration(0), 1);
  EXPECT_FALSE(this->s().Cancel(id + 1000));
  ASSERT_TRUE(this->Run(1));
}

TYPED_TEST(SchedulerConformanceTest, DoubleCancelReturnsFalse) {
  this->s().RunAfter(Duration(0), [this] {
    const TaskId id = this->Tagged(milliseconds(1), 1);
    this->results_[0] = AsResult(this->s().Cancel(id));
    this->results_[1] = AsResult(this->s().Cancel(id));
    this->Tagged(milliseconds(2), 2);
  });
  ASSERT_TRUE(this->Run(1));
  EXPECT_EQ(this->results_[0].load(), kTrue);
  EXPECT_EQ(this->results_[1].load(), kFalse);
  EXPECT_EQ(this->log_.values(), (std::vector<int64_t>{2}));
}

TYPED_TEST(SchedulerConformanceTest, RunningTaskCannotCancelItself) {
  this->s().RunAfter(Duration(0), [this] {
    this->ids_[0] = this->s().RunAfter(Duration(0), [this] {
      this->results_[0] = AsResult(this->s().Cancel(this->ids_[0]));
      this->log_.Add(1);
    });
  });
  ASSERT_TRUE(this->Run(1));
  EXPECT_EQ(this->results_[0].load(), kFalse);
}

TYPED_TEST(SchedulerConformanceTest, TaskCancelsAnotherPendingTask) {
  this->s().RunAfter(Duration(0), [this] {
    this->ids_[1] = this->Tagged(milliseconds(10), 2);
    this->s().RunAfter(milliseconds(1), [this] {
      this->results_[0] = AsResult(this->s().Cancel(this->ids_[1]));
      this->log_.Add(1);
    });
    this->Tagged(milliseconds(15), 3);
  });
  ASSERT_TRUE(this->Run(2));
  EXPECT_EQ(this->results_[0].load(), kTrue);
  EXPECT_EQ(this->log_.values(), (std::vector<int64_t>{1, 3}));
}

TYPED_TEST(SchedulerConformanceTest, TasksScheduleChains) {
  // Each link schedules the next 1 ms later and logs its Now().
  constexpr int kLinks = 10;
  struct Chain {
    static void Link(SchedulerConformanceTest<TypeParam>* t, int left) {
      t->times_.Add(NanosSinceEpoch(t->s().Now()));
      if (left > 1) {
        t->s().RunAfter(milliseconds(1), [t, left] { Link(t, left - 1); });
      }
      t->log_.Add(left);
    }
  };
  this->s().RunAfter(milliseconds(1), [this] { Chain::Link(this, kLinks); });
  ASSERT_TRUE(this->Run(kLinks));
  const std::vector<int64_t> times = this->times_.values();
  ASSERT_EQ(times.size(), static_cast<size_t>(kLinks));
  for (int i = 1; i < kLinks; ++i) {
    EXPECT_GE(times[i] - times[i - 1], Duration(milliseconds(1)).count());
  }
}

TYPED_TEST(SchedulerConformanceTest, ZeroDelayFromInsideTaskRunsAfterIt) {
  // The new task is due now but must wait for the running one to return.
  this->s().RunAfter(Duration(0), [this] {
    this->Tagged(Duration(0), 2);
    this->Tagged(Duration(-5), 3);
    this->log_.Add(1);
  });
  ASSERT_TRUE(this->Run(3));
  EXPECT_EQ(this->log_.values(), (std::vector<int64_t>{1, 2, 3}));
}

TYPED_TEST(SchedulerConformanceTest, NowNeverDecreasesAcrossTasks) {
  constexpr int kTasks = 200;
  for (int i = 0; i < kTasks; ++i) {
    this->s().RunAfter(Duration((i * 7919) % 5'000'000), [this] {
      this->times_.Add(NanosSinceEpoch(this->s().Now()));
      this->log_.Add(0);
    });
  }
  ASSERT_TRUE(this->Run(kTasks));
  const std::vector<int64_t> times = this->times_.values();
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
}

TYPED_TEST(SchedulerConformanceTest, TasksNeverOverlap) {
  constexpr int kTasks = 200;
  for (int i = 0; i < kTasks; ++i) {
    this->s().RunAfter(milliseconds(i % 3), [this] {
      const int now_running = ++this->in_flight_;
      int seen = this->max_in_flight_.load();
      while (now_running > seen &&
             !this->max_in_flight_.compare_exchange_weak(seen, now_running)) {
      }
      std::this_thread::yield();  // give an overlapping task a chance
      --this->in_flight_;
      this->log_.Add(0);
    });
  }
  ASSERT_TRUE(this->Run(kTasks));
  EXPECT_EQ(this->max_in_flight_.load(), 1);
}

// ---------------------------------------------------------------------------
// AsioScheduler only: threads, wall-clock time, Shutdown.

TEST(AsioSchedulerTest, NowIsWallClockTimeSinceTheEpoch) {
  AsioScheduler s;
  const Time system(std::chrono::duration_cast<Duration>(
      std::chrono::system_clock::now().time_since_epoch()));
  const Time now = s.Now();
  EXPECT_LT(now > system ? now - system : system - now, Duration(seconds(60)));
}

TEST(AsioSchedulerTest, RunAfterFromManyThreadsRunsEachTaskExactlyOnce) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 250;
  constexpr int kTotal = kThreads * kPerThread;
  Log log;
  std::vector<std::atomic<int>> runs(kTotal);
  std::atomic<int> in_flight{0};
  std::atomic<int> overlaps{0};
  {
    AsioScheduler s;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          const int n = t * kPerThread + i;
          s.RunAfter(Duration(0), [&, n] {
            if (++in_flight != 1) ++overlaps;
            ++runs[n];
            --in_flight;
            log.Add(n);
          });
        }
      });
    }
    for (auto& thread : threads) thread.join();
    ASSERT_TRUE(log.WaitForSize(kTotal, kRealTimeout));
    s.Shutdown();
  }
  for (int n = 0; n < kTotal; ++n) EXPECT_EQ(runs[n].load(), 1) << n;
  EXPECT_EQ(overlaps.load(), 0);
  // One thread's zero-delay tasks have non-decreasing due times, so they run
  // in the order that thread scheduled them.
  std::array<int64_t, kThreads> last;
  last.fill(-1);
  for (int64_t n : log.values()) {
    const int t = static_cast<int>(n / kPerThread);
    EXPECT_GT(n, last[t]);
    last[t] = n;
  }
}

TEST(AsioSchedulerTest, TimedTasksFromManyThreadsRunExactlyOnce) {
  constexpr int kThreads = 4;
  constexpr int kPerThread = 100;
  constexpr int kTotal = kThreads * kPerThread;
  Log log;
  std::vector<std::atomic<int>> runs(kTotal);
  std::atomic<int> early{0};
  {
    AsioScheduler s;
    std::vector<std::thread> threads;
    for (int t = 0; t < kThreads; ++t) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < kPerThread; ++i) {
          const int n = t * kPerThread + i;
          const Duration delay = Duration((n * 104729) % 10'000'000);
          const Time earliest = s.Now() + delay;
          s.RunAfter(delay, [&, n, earliest] {
            if (s.Now() < earliest) ++early;
            ++runs[n];
            log.Add(n);
          });
        }
      });
    }
    for (auto& thread : threads) thread.join();
    ASSERT_TRUE(log.WaitForSize(kTotal, kRealTimeout));
  }
  for (int n = 0; n < kTotal; ++n) EXPECT_EQ(runs[n].load(), 1) << n;
  EXPECT_EQ(early.load(), 0);
}

TEST(AsioSchedulerTest, CancelRacingWithExecutionIsExact) {
  // Tasks are cancelled while they become due: each must either have run
  // (Cancel false) or never run (Cancel true), never both or neither.
  constexpr int kTasks = 200;
  Log log;
  std::vector<std::atomic<int>> runs(kTasks);
  std::vector<bool> cancelled(kTasks, false);
  {
    AsioScheduler s;
    std::vector<TaskId> ids;
    for (int i = 0; i < kTasks; ++i) {
      ids.push_back(s.RunAfter(Duration((i % 10) * 500'000), [&, i] {
        ++runs[i];
        log.Add(i);
      }));
    }
    for (int i = 0; i < kTasks; i += 2) {
      cancelled[i] = s.Cancel(ids[i]);
      if (i % 20 == 0) std::this_thread::sleep_for(milliseconds(1));
    }
    s.RunAfter(milliseconds(10), [&] { log.Add(-1); });  // due after all
    ASSERT_TRUE(WaitUntil([&] {
      const std::vector<int64_t> v = log.values();
      return std::find(v.begin(), v.end(), -1) != v.end();
    }));
    for (int i = 0; i < kTasks; i += 2) EXPECT_FALSE(s.Cancel(ids[i]));
  }
  for (int i = 0; i < kTasks; ++i) {
    EXPECT_EQ(runs[i].load(), cancelled[i] ? 0 : 1) << i;
  }
}

TEST(AsioSchedulerTest, NowNeverDecreasesAcrossThreads) {
  Log log;
  std::atomic<bool> stop{false};
  std::atomic<int> backwards{0};
  AsioScheduler s;
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; ++t) {
    readers.emplace_back([&] {
      Time last = s.Now();
      while (!stop) {
        const Time now = s.Now();
        if (now < last) ++backwards;
        last = now;
      }
    });
  }
  for (int i = 0; i < 50; ++i) {
    s.RunAfter(Duration(i * 100'000),
               [&] { log.Add(sim::NanosSinceEpoch(s.Now())); });
  }
  EXPECT_TRUE(log.WaitForSize(50, kRealTimeout));
  stop = true;
  for (auto& reader : readers) reader.join();
  EXPECT_EQ(backwards.load(), 0);
  const std::vector<int64_t> times = log.values();
  EXPECT_TRUE(std::is_sorted(times.begin(), times.end()));
}

TEST(AsioSchedulerTest, ShutdownDropsPendingTasksAndIsIdempotent) {
  auto token = std::make_shared<int>(0);
  std::atomic<int> ran{0};
  AsioScheduler s;
  std::vector<TaskId> ids;
  for (int i = 0; i < 5; ++i) {
    ids.push_back(s.RunAfter(seconds(10 + i), [token, &ran] { ++ran; }));
  }
  EXPECT_EQ(s.pending(), 5u);
  EXPECT_EQ(token.use_count(), 6);
  s.Shutdown();
  EXPECT_EQ(s.pending(), 0u);
  EXPECT_EQ(token.use_count(), 1);  // the dropped tasks were destroyed
  for (TaskId id : ids) EXPECT_FALSE(s.Cancel(id));
  s.Shutdown();
  s.Shutdown();
  // After Shutdown, RunAfter is a no-op: the task is destroyed, never run.
  const TaskId late = s.RunAfter(Duration(0), [token, &ran] { ++ran; });
  EXPECT_EQ(token.use_count(), 1);
  EXPECT_EQ(s.pending(), 0u);
  EXPECT_FALSE(s.Cancel(late));
  std::this_thread::sleep_for(milliseconds(5));
  EXPECT_EQ(ran.load(), 0);
}

TEST(AsioSchedulerTest, ShutdownWaitsForTheRunningTask) {
  std::atomic<bool> started{false};
  std::atomic<bool> finished{false};
  std::atomic<bool> later_ran{false};
  AsioScheduler s;
  s.RunAfter(Duration(0), [&] {
    started = true;
    std::this_thread::sleep_for(milliseconds(30));
    finished = true;
  });
  s.RunAfter(Duration(0), [&] { later_ran = true; });
  ASSERT_TRUE(WaitUntil([&] { return started.load(); }));
  s.Shutdown();
  EXPECT_TRUE(finished.load());
  EXPECT_FALSE(later_ran.load());
}

TEST(AsioSchedulerTest, ConcurrentShutdownsAllWaitForTheRunningTask) {
  std::atomic<bool> started{false};
  std::atomic<bool> finished{false};
  AsioScheduler s;
  s.RunAfter(Duration(0), [&] {
    started = true;
    std::this_thread::sleep_for(milliseconds(30));
    finished = true;
  });
  ASSERT_TRUE(WaitUntil([&] { return started.load(); }));
  std::vector<std::thread> threads;
  std::atomic<int> saw_unfinished{0};
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back([&] {
      s.Shutdown();
      if (!finished) ++saw_unfinished;
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(saw_unfinished.load(), 0);
}

TEST(AsioSchedulerTest, ShutdownFromInsideATaskReturnsAndStopsTheRest) {
  Log log;
  std::atomic<bool> on_thread{false};
  std::atomic<bool> dropped_ran{false};
  AsioScheduler s;
  s.RunAfter(Duration(0), [&] {
    log.Add(1);
    on_thread = s.OnSchedulerThread();
    s.Shutdown();  // must not wait for itself
    s.Shutdown();
    s.RunAfter(Duration(0), [&] { dropped_ran = true; });
    log.Add(2);  // the calling task runs to its end
  });
  s.RunAfter(milliseconds(1), [&] { dropped_ran = true; });
  ASSERT_TRUE(log.WaitForSize(2, kRealTimeout));
  s.Shutdown();  // joins the thread
  EXPECT_TRUE(on_thread.load());
  EXPECT_FALSE(s.OnSchedulerThread());
  EXPECT_EQ(log.values(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(s.pending(), 0u);
  std::this_thread::sleep_for(milliseconds(5));
  EXPECT_FALSE(dropped_ran.load());
}

TEST(AsioSchedulerTest, DestructorShutsDownWithTasksPending) {
  std::atomic<int> ran{0};
  auto s = std::make_unique<AsioScheduler>();
  for (int i = 0; i < 10; ++i) s->RunAfter(seconds(30), [&] { ++ran; });
  s->RunAfter(Duration(0), [&] { ++ran; });
  ASSERT_TRUE(WaitUntil([&] { return ran.load() == 1; }));
  s.reset();  // must not wait for the 30 s tasks
  EXPECT_EQ(ran.load(), 1);
}

TEST(AsioSchedulerTest, EarlierTaskScheduledLaterPreemptsTheArmedTimer) {
  // The timer is armed for a far task; a nearer one added afterwards (from
  // another thread) must not wait for it.
  Log log;
  AsioScheduler s;
  s.RunAfter(seconds(30), [&] { log.Add(30); });
  std::thread other([&] { s.RunAfter(milliseconds(2), [&] { log.Add(2); }); });
  other.join();
  ASSERT_TRUE(log.WaitForSize(1, kRealTimeout));
  EXPECT_EQ(log.values(), (std::vector<int64_t>{2}));
  EXPECT_EQ(s.pending(), 1u);
}

TEST(AsioSchedulerTest, CancellingTheHeadLetsTheNextOneRun) {
  Log log;
  AsioScheduler s;
  const TaskId head = s.RunAfter(seconds(30), [&] { log.Add(30); });
  s.RunAfter(seconds(31), [&] { log.Add(31); });
  s.RunAfter(milliseconds(3), [&] { log.Add(3); });
  EXPECT_TRUE(s.Cancel(head));
  ASSERT_TRUE(log.WaitForSize(1, kRealTimeout));
  EXPECT_EQ(log.values(), (std::vector<int64_t>{3}));
  EXPECT_EQ(s.pending(), 1u);
}

}  // namespace
}  // namespace btsim::sim
