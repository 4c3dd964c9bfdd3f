// Plays a loaded scenario in virtual time: builds the instance, tables and
// clients, runs the timeline for the scenario's duration, settles, snapshots
// every cluster, and runs the checks and expectations.
//
// Deterministic: the same scenario and seed give the same History and the
// same fingerprint (a hash of the event trace — every operation and event —
// and of every cluster's final contents), byte for byte. Single-threaded;
// touches no wall clock (the caller measures `wall_seconds`, and may pass
// one in RunOptions::wall_clock to time the checks); nothing depends on
// either.
#ifndef BTSIM_SCENARIOS_RUNNER_H_
#define BTSIM_SCENARIOS_RUNNER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "instance/instance.h"
#include "scenarios/checks.h"
#include "scenarios/history.h"
#include "scenarios/loader.h"

namespace btsim::scenarios {

struct RunOptions {
  std::optional<uint64_t> seed;           // overrides the scenario's
  std::optional<sim::Duration> duration;  // overrides the scenario's
  // Also told everything the instance does (e.g. the metrics layer); they
  // must outlive the run.
  std::vector<instance::InstanceObserver*> observers;
  // When set, called at virtual times 0, sample_every, 2 * sample_every,
  // ... (absolute: kRunEpoch + elapsed) until the run ends, settling
  // included. It must not change the instance.
  sim::Duration sample_every{0};
  std::function<void(sim::Time now, instance::Instance& instance)> on_sample;
  // When set, a wall clock in seconds (any origin): the runner reads it
  // before and after the checks to fill RunOutcome::check_wall_seconds, and
  // for nothing else (scenarios/ reads no clock of its own).
  std::function<double()> wall_clock;
  // Operations per chunk of the history (OperationLog): settled chunks
  // leave memory for a temporary file. Tests make it small so that short
  // runs spill too.
  size_t history_chunk = OperationLog::kDefaultChunkOperations;
};

struct RunOutcome {
  std::string scenario;  // name
  uint64_t seed = 0;
  std::string fingerprint;  // 32 lowercase hex digits
  History history;
  std::vector<CheckValue> checks;
  std::vector<ExpectationResult> expectations;
  // Computed once with the checks, for the reports (see checks.h).
  std::vector<VisibilityCurve> visibility;  // TVisibility(history)
  KStaleness k_staleness;                   // ComputeKStaleness(history)
  std::vector<Failback> failbacks;          // ComputeFailbacks(history)
  bool passed = false;                      // every expectation passed
  // Played on the wall clock against live traffic (`btsim serve
  // --scenario`): the times are wall time, and the fingerprint identifies
  // nothing reproducible.
  bool live = false;
  int64_t recorded_ops = 0;  // live: operations of recorded calls
  double wall_seconds = 0;
  // Wall time the checkers and expectations took (part of wall_seconds;
  // the rest is the run itself), when RunOptions::wall_clock was set (else
  // 0). Never part of the fingerprint.
  double check_wall_seconds = 0;
  int64_t client_ops = 0;  // operations issued
};

// INVALID_ARGUMENT for what only shows when building the instance (naming
// the field); the run itself does not fail.
Result<RunOutcome> RunScenario(const LoadedScenario& scenario,
                               const RunOptions& options = {});

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_RUNNER_H_
