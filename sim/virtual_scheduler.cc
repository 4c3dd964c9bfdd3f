#include "sim/virtual_scheduler.h"

#include <algorithm>

#include "base/check.h"

namespace btsim::sim {

void VirtualScheduler::Place(size_t index, const Entry& entry) {
  heap_[index] = entry;
  slots_[entry.slot].heap_index = static_cast<uint32_t>(index);
}

void VirtualScheduler::SiftUp(size_t index, Entry entry) {
  while (index > 0) {
    const size_t parent = (index - 1) / 2;
    if (!(entry < heap_[parent])) break;
    Place(index, heap_[parent]);
    index = parent;
  }
  Place(index, entry);
}

void VirtualScheduler::SiftDown(size_t index, Entry entry) {
  const size_t n = heap_.size();
  while (true) {
    size_t child = 2 * index + 1;
    if (child >= n) break;
    if (child + 1 < n && heap_[child + 1] < heap_[child]) ++child;
    if (!(heap_[child] < entry)) break;
    Place(index, heap_[child]);
    index = child;
  }
  Place(index, entry);
}

uint32_t VirtualScheduler::RemoveAt(size_t index) {
  const uint32_t slot = heap_[index].slot;
  const Entry last = heap_.back();
  heap_.pop_back();
  if (index < heap_.size()) {
    if (index > 0 && last < heap_[(index - 1) / 2]) {
      SiftUp(index, last);
    } else {
      SiftDown(index, last);
    }
  }
  return slot;
}

TaskId VirtualScheduler::RunAfter(Nanos delay, Task task) {
  // Saturate instead of overflowing: Nanos::max() means "never".
  const Nanos d = std::max(delay, Nanos(0));
  const Nanos due = d > Nanos::max() - now_ ? Nanos::max() : now_ + d;
  uint32_t slot;
  if (free_slots_.empty()) {
    BTSIM_CHECK_MSG(slots_.size() <= kSlotMask,
                    "VirtualScheduler: too many pending tasks");
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  const uint64_t sequence = next_sequence_++;
  const TaskId id = (sequence << kSlotBits) | slot;
  Slot& s = slots_[slot];
  s.task = std::move(task);
  s.id = id;
  heap_.emplace_back();
  SiftUp(heap_.size() - 1, Entry{due, sequence, slot});
  return id;
}

bool VirtualScheduler::Cancel(TaskId id) {
  const uint64_t slot = id & kSlotMask;
  if (id == 0 || slot >= slots_.size() || slots_[slot].id != id) return false;
  Slot& s = slots_[slot];
  RemoveAt(s.heap_index);
  s.id = 0;
  s.task = nullptr;
  free_slots_.push_back(static_cast<uint32_t>(slot));
  return true;
}

bool VirtualScheduler::Step() {
  BTSIM_CHECK_MSG(!running_, "VirtualScheduler driven from inside a task");
  if (heap_.empty()) return false;
  now_ = std::max(now_, heap_.front().due);
  const uint32_t slot = RemoveAt(0);
  Slot& s = slots_[slot];
  Task task = std::move(s.task);
  s.task = nullptr;
  s.id = 0;
  free_slots_.push_back(slot);
  running_ = true;
  task();
  running_ = false;
  return true;
}

int64_t VirtualScheduler::RunUntil(Nanos deadline) {
  int64_t ran = 0;
  while (!heap_.empty() && heap_.front().due <= deadline) {
    Step();
    ++ran;
  }
  now_ = std::max(now_, deadline);
  return ran;
}

int64_t VirtualScheduler::RunUntilIdle(int64_t max_tasks) {
  int64_t ran = 0;
  while (ran < max_tasks && Step()) ++ran;
  return ran;
}

}  // namespace btsim::sim
