// VirtualScheduler: the deterministic Scheduler of `btsim run`. Tasks are
// ordered by (due time, scheduling sequence); running them moves the clock
// straight to each task's due time, so a simulated hour takes as long as its
// tasks take to compute. Single-threaded: every call must come from the
// thread that drives it. Tasks may call RunAfter and Cancel, but must not
// drive the scheduler (Step, RunUntil, ...): that aborts.
//
// Cost: the pending tasks live in a 4-ary min-heap of 16-byte entries (due,
// task id), four to a cache line, with each slot's heap position in a dense
// array, so RunAfter, Step and Cancel take O(log n) with no allocation of
// their own once the heap and the slot table have grown (a task's captures
// may still allocate: std::function keeps up to 16 bytes inline).
#ifndef BTSIM_SIM_VIRTUAL_SCHEDULER_H_
#define BTSIM_SIM_VIRTUAL_SCHEDULER_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "sim/scheduler.h"

namespace btsim::sim {

class VirtualScheduler : public Scheduler {
 public:
  explicit VirtualScheduler(Time start) : now_(start) {}

  Time Now() const override { return now_; }
  TaskId RunAfter(Duration delay, Task task) override;
  bool Cancel(TaskId id) override;

  // Runs the next pending task, advancing time to its due time. Returns
  // false when nothing is pending.
  bool Step();
  // Runs tasks due at or before `deadline`, then sets the clock to
  // `deadline` (never backwards). Returns the number of tasks run.
  int64_t RunUntil(Time deadline);
  int64_t RunFor(Duration duration) { return RunUntil(now_ + duration); }
  // Runs until nothing is pending or `max_tasks` have run. Returns the
  // number of tasks run.
  int64_t RunUntilIdle(int64_t max_tasks = INT64_MAX);

  size_t pending() const { return heap_.size(); }
  // Due time of the next pending task; requires pending() > 0.
  Time next_due() const { return heap_.front().due; }

 private:
  // A TaskId is (sequence << kSlotBits) | slot: unique, and it names the
  // slot holding the task, so Cancel needs no lookup table.
  static constexpr int kSlotBits = 24;
  static constexpr uint64_t kSlotMask = (uint64_t{1} << kSlotBits) - 1;

  // Children of heap_[i]: heap_[kArity * i + 1 .. kArity * i + kArity].
  static constexpr size_t kArity = 4;

  struct Entry {
    Time due;
    // The task's id: its high bits are the scheduling sequence, so ties on
    // `due` go by sequence.
    TaskId id;
    bool operator<(const Entry& o) const {
      return due != o.due ? due < o.due : id < o.id;
    }
    uint32_t slot() const { return static_cast<uint32_t>(id & kSlotMask); }
  };
  struct Slot {
    Task task;
    TaskId id = 0;  // 0: free
  };

  void Place(size_t index, const Entry& entry);
  void SiftUp(size_t index, Entry entry);
  void SiftDown(size_t index, Entry entry);
  // Removes heap_[index] and returns its slot (still holding the task).
  uint32_t RemoveAt(size_t index);

  Time now_;
  bool running_ = false;  // a task is running: Step() must not nest
  uint64_t next_sequence_ = 1;
  std::vector<Entry> heap_;  // min-heap on (due, sequence)
  std::vector<Slot> slots_;
  std::vector<uint32_t> heap_index_;  // by slot: its entry's place in heap_
  std::vector<uint32_t> free_slots_;
};

}  // namespace btsim::sim

#endif  // BTSIM_SIM_VIRTUAL_SCHEDULER_H_
