// Scheduler: runs tasks at points in time (sim/time.h). It is also the Clock
// of whatever runs on it.
//
// Two implementations: VirtualScheduler (here) jumps time from task to task,
// deterministically; AsioScheduler (sim/asio/) runs tasks on one
// boost::asio io_context thread at wall-clock time. Both pass the same
// conformance suite (tests/sim/scheduler_conformance_test.cc).
//
// Contract shared by both:
// - Tasks due at the same time run in the order they were scheduled.
// - A task never runs before its due time; Now() inside a task is >= it.
// - Tasks run one at a time, never concurrently with each other.
// - Cancel(id) returns true and guarantees the task will not run if it is
//   still pending; it returns false once the task has started or finished
//   (or for an unknown id).
// - RunAfter and Cancel may be called from inside tasks. For AsioScheduler
//   they may also be called from any thread.
#ifndef BTSIM_SIM_SCHEDULER_H_
#define BTSIM_SIM_SCHEDULER_H_

#include <cstdint>
#include <functional>

#include "sim/clock.h"

namespace btsim::sim {

using TaskId = uint64_t;
using Task = std::function<void()>;

class Scheduler : public Clock {
 public:
  // Runs `task` once, `delay` from now (a negative delay counts as zero).
  virtual TaskId RunAfter(Duration delay, Task task) = 0;
  virtual bool Cancel(TaskId id) = 0;
};

}  // namespace btsim::sim

#endif  // BTSIM_SIM_SCHEDULER_H_
