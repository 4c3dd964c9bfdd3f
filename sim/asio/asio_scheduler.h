// AsioScheduler: the wall-clock Scheduler of `btsim serve`. It owns one
// boost::asio io_context and the one thread that runs it (started by the
// constructor, joined by Shutdown() or the destructor); every task runs on
// that thread, so tasks never overlap.
//
// Time: Now() is wall-clock time in nanoseconds since the Unix epoch (a
// WallClock, so it never decreases). A task is due at Now() + delay, read
// when it is scheduled. Pending tasks are kept in one queue ordered by (due
// time, scheduling sequence) and a single steady_timer is armed for the
// earliest of them. When the timer fires the head task runs only if Now() has
// reached its due time; if the wall clock lags the steady clock, the timer is
// simply re-armed for the remainder. So a task never runs early, Now() inside
// it is >= its due time, and tasks due at the same time run in the order they
// were scheduled. The timer is re-armed at least once a second, so a forward
// step of the wall clock is noticed promptly.
//
// Threading contract:
// - Now(), RunAfter(), Cancel(), pending() and Shutdown() may be called from
//   any thread, including from inside a task.
// - Cancel(id) returns true exactly when the task was still pending; it is
//   then removed and will never run. It returns false once the task has been
//   taken off the queue to run (even if it is still running), after it ran,
//   after Shutdown(), and for unknown ids.
// - Tasks must not throw; an exception escaping a task terminates the
//   process.
// - Shutdown() is idempotent. It drops (destroys without running) every
//   pending task and makes later RunAfter() calls no-ops (they return an id
//   whose task is destroyed and never runs). Called from a thread other than
//   the scheduler's, it waits for a running task to finish and joins the
//   thread, so once it returns no task is running or will ever run. Called
//   from inside a task, it cannot wait for itself: it drops the pending tasks,
//   stops the io_context and returns at once; the calling task runs to its
//   end, no other task runs afterwards, and the thread exits when the task
//   returns (it is joined by the next Shutdown() from another thread or by
//   the destructor).
// - The destructor calls Shutdown(). It must not run on the scheduler's own
//   thread (i.e. do not destroy the scheduler from inside one of its tasks);
//   doing so is a checked failure.
//
// Boost is an implementation detail: this header does not include it.
#ifndef BTSIM_SIM_ASIO_ASIO_SCHEDULER_H_
#define BTSIM_SIM_ASIO_ASIO_SCHEDULER_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <utility>

#include "sim/asio/wall_clock.h"
#include "sim/scheduler.h"

namespace btsim::sim {

class AsioScheduler : public Scheduler {
 public:
  AsioScheduler();
  ~AsioScheduler() override;

  AsioScheduler(const AsioScheduler&) = delete;
  AsioScheduler& operator=(const AsioScheduler&) = delete;

  Time Now() const override { return clock_.Now(); }
  TaskId RunAfter(Duration delay, Task task) override;
  bool Cancel(TaskId id) override;

  // See the threading contract above.
  void Shutdown();
  // Now() never returns less than `floor` from now on (WallClock::AdvanceTo).
  void AdvanceClockTo(Time floor) { clock_.AdvanceTo(floor); }

  // Number of tasks waiting to run (not counting a running one).
  size_t pending() const;
  // True when called from the scheduler's thread (i.e. from inside a task).
  bool OnSchedulerThread() const;

 private:
  struct Io;  // boost::asio state; defined in the .cc.

  // Runs every due task, then arms the timer for the next one. Runs only on
  // the scheduler's thread.
  void Pump();

  WallClock clock_;
  std::unique_ptr<Io> io_;

  mutable std::mutex mu_;
  bool shutdown_ = false;       // guarded by mu_
  uint64_t next_sequence_ = 1;  // guarded by mu_
  // (due, sequence) -> task; the sequence doubles as the TaskId.
  std::map<std::pair<Time, uint64_t>, Task> queue_;  // guarded by mu_
  std::unordered_map<TaskId, Time> due_by_id_;       // guarded by mu_

  std::mutex join_mu_;  // serialises joining thread_
  std::thread thread_;
};

}  // namespace btsim::sim

#endif  // BTSIM_SIM_ASIO_ASIO_SCHEDULER_H_
