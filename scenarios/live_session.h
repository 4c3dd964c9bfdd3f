// LiveSession: a scenario played against a served instance on the wall
// clock (`btsim serve --scenario`). It creates the scenario's tables in the
// instance, plays the timeline from Start (time 0), runs the scenario's
// simulated clients as background load, and records every data call the
// server reports (instance::RequestReport::recorded) into the same History
// `btsim run` writes, so the same checks judge it at the end.
//
// A recorded call becomes one Operation per row it named (a scan: one
// operation): a ReadRows of one key is a read_row, other ReadRows a scan,
// MutateRow and each MutateRows entry a write (or a delete), and so on. Its
// client is the caller's identity, its group kRecordedGroup. The checkers
// follow the value column of simulated clients: a recorded write's tag is
// the value it sets in the table's first family, column kValueColumn (a
// write elsewhere is recorded without one), and a read's tag the newest such
// cell it returned; unique values there make the consistency checks
// meaningful (docs/serve-scenario.md).
//
// Threading: every method, and every task the session schedules, runs under
// the instance's lock (the scheduler given must take it, as
// api::LockingScheduler does). The session must outlive the scheduler's
// tasks (destroy it after the server has shut down) and be removed from the
// instance's observers before the instance goes.
#ifndef BTSIM_SCENARIOS_LIVE_SESSION_H_
#define BTSIM_SCENARIOS_LIVE_SESSION_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "instance/instance.h"
#include "scenarios/loader.h"
#include "scenarios/run_context.h"
#include "scenarios/run_setup.h"
#include "scenarios/runner.h"
#include "scenarios/steps.h"
#include "sim/fingerprint.h"
#include "sim/rng.h"
#include "sim/scheduler.h"

namespace btsim::scenarios {

class LiveSession : public instance::InstanceObserver {
 public:
  // Creates the scenario's tables in `instance` (which must have been
  // created from scenario.instance.config on `scheduler`) and its clients,
  // and starts observing the instance. INVALID_ARGUMENT naming the field
  // when the instance refuses a table. `scenario` must outlive the session.
  static Result<std::unique_ptr<LiveSession>> Create(
      const LoadedScenario& scenario, instance::Instance& instance,
      sim::Scheduler& scheduler);
  ~LiveSession() override;

  // Time 0: starts the timeline and the clients. Once only.
  void Start();
  bool started() const { return started_; }
  // Whether the scenario's duration has passed since Start.
  bool DurationOver() const;
  // Ends the client phase now: simulated clients stop, recording stops,
  // steps still due are dropped, and faults end (unless settle.keep_faults).
  // Then call Settled until it is true or you give up, then Finish.
  void EndClientPhase();
  // Whether every cluster has applied everything committed and no
  // simulated operation is in flight (noting the time the first time it
  // is true). Calls served after the end are not recorded: the server
  // should refuse them, so that the final state is what the recorded
  // calls did.
  bool Settled();
  // The outcome: the final state read, the checks and expectations judged.
  // Requires that the scheduler runs none of the session's tasks
  // afterwards (stop it first): they would act on the history given away.
  RunOutcome Finish();

  // InstanceObserver.
  bool RecordsCalls() const override { return true; }
  void OnRequest(const instance::RequestReport& request) override;

 private:
  LiveSession(const LoadedScenario& scenario, instance::Instance& instance,
              sim::Scheduler& scheduler);
  // Samples every second until the session has finished.
  void Sample();
  // Appends the operations of one recorded call.
  void Record(const instance::RequestReport& request);

  const LoadedScenario& scenario_;
  sim::Scheduler& scheduler_;
  sim::Rng rng_;
  sim::Fingerprint trace_;
  History history_;
  RunContext context_;
  HistoryObserver observer_;
  StepRun steps_;
  ScenarioClients clients_;
  bool started_ = false;
  bool client_phase_over_ = false;
  std::vector<sim::TaskId> timeline_;
};

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_LIVE_SESSION_H_
