#include "sim/virtual_scheduler.h"

#include <algorithm>

#include "base/check.h"

namespace btsim::sim {

TaskId VirtualScheduler::RunAfter(Nanos delay, Task task) {
  // Saturate instead of overflowing: Nanos::max() means "never".
  const Nanos d = std::max(delay, Nanos(0));
  const Nanos due = d > Nanos::max() - now_ ? Nanos::max() : now_ + d;
  const TaskId id = next_sequence_++;
  queue_.emplace(std::make_pair(due, id), std::move(task));
  due_by_id_.emplace(id, due);
  return id;
}

bool VirtualScheduler::Cancel(TaskId id) {
  auto it = due_by_id_.find(id);
  if (it == due_by_id_.end()) return false;
  queue_.erase(std::make_pair(it->second, id));
  due_by_id_.erase(it);
  return true;
}

bool VirtualScheduler::Step() {
  BTSIM_CHECK_MSG(!running_, "VirtualScheduler driven from inside a task");
  if (queue_.empty()) return false;
  auto it = queue_.begin();
  now_ = std::max(now_, it->first.first);
  Task task = std::move(it->second);
  due_by_id_.erase(it->first.second);
  queue_.erase(it);
  running_ = true;
  task();
  running_ = false;
  return true;
}

int64_t VirtualScheduler::RunUntil(Nanos deadline) {
  int64_t ran = 0;
  while (!queue_.empty() && queue_.begin()->first.first <= deadline) {
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
