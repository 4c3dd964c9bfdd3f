// What the parts of one scenario run share: the scheduler, the instance,
// the history being written and the event trace. Internal to scenarios/.
// Single-threaded (in `btsim serve`, under the instance's lock); owned by
// the runner or the live session, which outlives every user.
#ifndef BTSIM_SCENARIOS_RUN_CONTEXT_H_
#define BTSIM_SCENARIOS_RUN_CONTEXT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "instance/instance.h"
#include "scenarios/history.h"
#include "sim/fingerprint.h"
#include "sim/scheduler.h"

namespace btsim::scenarios {

struct RunContext {
  // Virtual time (btsim run) or the wall clock (btsim serve).
  sim::Scheduler* scheduler = nullptr;
  instance::Instance* instance = nullptr;
  History* history = nullptr;
  sim::Fingerprint* trace = nullptr;
  // Operations issued and not yet completed.
  int64_t in_flight = 0;
  // Set once the run has settled: periodic tasks stop rescheduling.
  bool finished = false;

  // Time since the start of the run (history->start).
  sim::Duration Elapsed() const { return scheduler->Now() - history->start; }
  // The zone of a cluster of the instance ("" when unknown); valid while
  // the cluster is in the instance.
  std::string_view ZoneOf(std::string_view cluster) const;
};

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_RUN_CONTEXT_H_
