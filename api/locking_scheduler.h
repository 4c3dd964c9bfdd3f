// LockingScheduler: a Scheduler decorator for serving one instance from
// gRPC threads. Every task it schedules on the underlying (asio) scheduler
// runs with `mu` held, the same mutex the gRPC handlers hold while they
// touch the instance, so the instance is only ever used by one thread at a
// time. The mutex must outlive every task scheduled through it.
#ifndef BTSIM_API_LOCKING_SCHEDULER_H_
#define BTSIM_API_LOCKING_SCHEDULER_H_

#include <mutex>

#include "sim/scheduler.h"

namespace btsim::api {

class LockingScheduler : public sim::Scheduler {
 public:
  LockingScheduler(sim::Scheduler& base, std::mutex& mu)
      : base_(base), mu_(mu) {}

  sim::Time Now() const override { return base_.Now(); }
  sim::TaskId RunAfter(sim::Duration delay, sim::Task task) override {
    return base_.RunAfter(delay, [this, task = std::move(task)] {
      std::lock_guard<std::mutex> lock(mu_);
      task();
    });
  }
  bool Cancel(sim::TaskId id) override { return base_.Cancel(id); }

 private:
  sim::Scheduler& base_;
  std::mutex& mu_;
};

}  // namespace btsim::api

#endif  // BTSIM_API_LOCKING_SCHEDULER_H_
