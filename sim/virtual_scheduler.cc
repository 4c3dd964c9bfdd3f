#include "sim/virtual_scheduler.h"

#include <algorithm>

#include "base/check.h"

namespace btsim::sim {

void VirtualScheduler::Place(size_t index, const Entry& entry) {
  heap_[index] = entry;
  heap_index_[entry.slot()] = static_cast<uint32_t>(index);
}

void VirtualScheduler::SiftUp(size_t index, Entry entry) {
  while (index > 0) {
    const size_t parent = (index - 1) / kArity;
    if (!(entry < heap_[parent])) break;
    Place(index, heap_[parent]);
    index = parent;
  }
  Place(index, entry);
}

void VirtualScheduler::SiftDown(size_t index, Entry entry) {
  const size_t n = heap_.size();
  while (true) {
    const size_t first = kArity * index + 1;
    if (first >= n) break;
    size_t least = first;
    const size_t last = std::min(n, first + kArity);
    for (size_t child = first + 1; child < last; ++child) {
      if (heap_[child] < heap_[least]) least = child;
    }
    if (!(heap_[least] < entry)) break;
    Place(index, heap_[least]);
    index = least;
  }
  Place(index, entry);
}

uint32_t VirtualScheduler::RemoveAt(size_t index) {
  const uint32_t slot = heap_[index].slot();
  const Entry last = heap_.back();
  heap_.pop_back();
  if (index < heap_.size()) {
    if (index > 0 && last < heap_[(index - 1) / kArity]) {
      SiftUp(index, last);
    } else {
      SiftDown(index, last);
    }
  }
  return slot;
}

TaskId VirtualScheduler::RunAfter(Duration delay, Task task) {
  // Saturate instead of overflowing: Duration::max() means "never".
  const Duration d = std::max(delay, Duration(0));
  const Time due = d > Time::max() - now_ ? Time::max() : now_ + d;
  uint32_t slot;
  if (free_slots_.empty()) {
    BTSIM_CHECK_MSG(slots_.size() <= kSlotMask,
                    "VirtualScheduler: too many pending tasks");
    slot = static_cast<uint32_t>(slots_.size());
    slots_.emplace_back();
    heap_index_.push_back(0);
  } else {
    slot = free_slots_.back();
    free_slots_.pop_back();
  }
  const uint64_t sequence = next_sequence_++;
  // The id keeps the sequence's order only while it fits above the slot.
  BTSIM_CHECK_MSG(sequence < (uint64_t{1} << (64 - kSlotBits)),
                  "VirtualScheduler: too many tasks scheduled");
  const TaskId id = (sequence << kSlotBits) | slot;
  Slot& s = slots_[slot];
  s.task = std::move(task);
  s.id = id;
  heap_.emplace_back();
  SiftUp(heap_.size() - 1, Entry{due, id});
  return id;
}

bool VirtualScheduler::Cancel(TaskId id) {
  const uint64_t slot = id & kSlotMask;
  if (id == 0 || slot >= slots_.size() || slots_[slot].id != id) return false;
  Slot& s = slots_[slot];
  RemoveAt(heap_index_[slot]);
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

int64_t VirtualScheduler::RunUntil(Time deadline) {
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
