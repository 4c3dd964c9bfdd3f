// VirtualScheduler: the deterministic Scheduler of `btsim run`. Tasks are
// ordered by (due time, scheduling sequence); running them moves the clock
// straight to each task's due time, so a simulated hour takes as long as its
// tasks take to compute. Single-threaded: every call must come from the
// thread that drives it. Tasks may call RunAfter and Cancel, but must not
// drive the scheduler (Step, RunUntil, ...): that aborts.
#ifndef BTSIM_SIM_VIRTUAL_SCHEDULER_H_
#define BTSIM_SIM_VIRTUAL_SCHEDULER_H_

#include <cstdint>
#include <map>
#include <utility>

#include "sim/scheduler.h"

namespace btsim::sim {

class VirtualScheduler : public Scheduler {
 public:
  explicit VirtualScheduler(Nanos start) : now_(start) {}

  Nanos Now() const override { return now_; }
  TaskId RunAfter(Nanos delay, Task task) override;
  bool Cancel(TaskId id) override;

  // Runs the next pending task, advancing time to its due time. Returns
  // false when nothing is pending.
  bool Step();
  // Runs tasks due at or before `deadline`, then sets the clock to
  // `deadline` (never backwards). Returns the number of tasks run.
  int64_t RunUntil(Nanos deadline);
  int64_t RunFor(Nanos duration) { return RunUntil(now_ + duration); }
  // Runs until nothing is pending or `max_tasks` have run. Returns the
  // number of tasks run.
  int64_t RunUntilIdle(int64_t max_tasks = INT64_MAX);

  size_t pending() const { return queue_.size(); }
  // Due time of the next pending task; requires pending() > 0.
  Nanos next_due() const { return queue_.begin()->first.first; }

 private:
  Nanos now_;
  bool running_ = false;  // a task is running: Step() must not nest
  uint64_t next_sequence_ = 1;
  // (due, sequence) -> task; the sequence doubles as the TaskId.
  std::map<std::pair<Nanos, uint64_t>, Task> queue_;
  std::map<TaskId, Nanos> due_by_id_;
};

}  // namespace btsim::sim

#endif  // BTSIM_SIM_VIRTUAL_SCHEDULER_H_
