#include "sim/asio/asio_scheduler.h"

#include <algorithm>
#include <chrono>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/system/error_code.hpp>

#include "base/check.h"

namespace btsim::sim {
namespace {

// The timer is never armed for longer than this, so that a forward step of
// the wall clock delays due tasks by at most this much.
constexpr Duration kMaxTimerWait = std::chrono::seconds(1);

// The scheduler whose thread this is, if any. Unlike a std::thread::id, it
// cannot match a thread that merely reuses the id of an exited one.
thread_local const AsioScheduler* current_scheduler = nullptr;

}  // namespace

struct AsioScheduler::Io {
  // Declaration order matters: the timer and the work guard refer to the
  // context and are destroyed before it.
  boost::asio::io_context context;
  boost::asio::steady_timer timer{context};
  boost::asio::executor_work_guard<boost::asio::io_context::executor_type>
      work = boost::asio::make_work_guard(context);
};

AsioScheduler::AsioScheduler() : io_(std::make_unique<Io>()) {
  thread_ = std::thread([this] {
    current_scheduler = this;
    io_->context.run();
  });
}

AsioScheduler::~AsioScheduler() {
  BTSIM_CHECK_MSG(!OnSchedulerThread(),
                  "AsioScheduler destroyed from inside one of its tasks");
  Shutdown();
}

TaskId AsioScheduler::RunAfter(Duration delay, Task task) {
  const Time now = clock_.Now();
  delay = std::max(delay, Duration(0));
  const Time due =
      delay > Time::max() - now ? Time::max() : now + delay;  // saturate
  bool new_head = false;
  TaskId id;
  {
    std::lock_guard lock(mu_);
    id = next_sequence_++;
    if (shutdown_) return id;  // `task` is destroyed, unlocked, on return.
    auto it = queue_.emplace(std::make_pair(due, id), std::move(task)).first;
    due_by_id_.emplace(id, due);
    new_head = it == queue_.begin();
  }
  // The timer may be armed for a later task. Inside a task there is nothing
  // to do: Pump() looks at the queue again when the task returns.
  if (new_head && !OnSchedulerThread()) {
    boost::asio::post(io_->context, [this] { Pump(); });
  }
  return id;
}

bool AsioScheduler::Cancel(TaskId id) {
  Task cancelled;  // destroyed after the lock is released
  {
    std::lock_guard lock(mu_);
    auto it = due_by_id_.find(id);
    if (it == due_by_id_.end()) return false;
    auto node = queue_.find(std::make_pair(it->second, id));
    cancelled = std::move(node->second);
    queue_.erase(node);
    due_by_id_.erase(it);
  }
  // If it was the head, the timer fires early and Pump() re-arms it.
  return true;
}

bool AsioScheduler::OnSchedulerThread() const {
  return current_scheduler == this;
}

size_t AsioScheduler::pending() const {
  std::lock_guard lock(mu_);
  return queue_.size();
}

void AsioScheduler::Pump() {
  for (;;) {
    Task task;
    {
      std::lock_guard lock(mu_);
      if (shutdown_ || queue_.empty()) return;
      auto head = queue_.begin();
      const Time due = head->first.first;
      const Time now = clock_.Now();
      if (due > now) {
        const Duration wait = std::min(due - now, kMaxTimerWait);
        io_->timer.expires_after(
            std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                wait));
        io_->timer.async_wait([this](const boost::system::error_code& ec) {
          if (ec != boost::asio::error::operation_aborted) Pump();
        });
        return;
      }
      task = std::move(head->second);
      due_by_id_.erase(head->first.second);
      queue_.erase(head);
    }
    task();
  }
}

void AsioScheduler::Shutdown() {
  std::map<std::pair<Time, uint64_t>, Task> dropped;  // destroyed last
  {
    std::lock_guard lock(mu_);
    if (!shutdown_) {
      shutdown_ = true;
      dropped.swap(queue_);
      due_by_id_.clear();
    }
  }
  io_->context.stop();  // thread-safe; run() returns after the current task
  if (OnSchedulerThread()) return;  // cannot wait for ourselves
  std::lock_guard join_lock(join_mu_);
  if (thread_.joinable()) thread_.join();
}

}  // namespace btsim::sim
