// Plays a loaded scenario in virtual time: builds the instance, tables and
// clients, runs the timeline for the scenario's duration, settles, snapshots
// every cluster, and runs the checks and expectations.
//
// Deterministic: the same scenario and seed give the same History and the
// same fingerprint (a hash of the event trace — every operation and event —
// and of every cluster's final contents), byte for byte. Single-threaded;
// touches no wall clock except to measure `wall_seconds`, which nothing
// else depends on.
#ifndef BTSIM_SCENARIOS_RUNNER_H_
#define BTSIM_SCENARIOS_RUNNER_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/result.h"
#include "scenarios/checks.h"
#include "scenarios/history.h"
#include "scenarios/loader.h"

namespace btsim::scenarios {

struct RunOptions {
  std::optional<uint64_t> seed;        // overrides the scenario's
  std::optional<sim::Nanos> duration;  // overrides the scenario's
};

struct RunOutcome {
  std::string scenario;  // name
  uint64_t seed = 0;
  std::string fingerprint;  // 32 lowercase hex digits
  History history;
  std::vector<CheckValue> checks;
  std::vector<ExpectationResult> expectations;
  bool passed = false;  // every expectation passed
  double wall_seconds = 0;
  int64_t client_ops = 0;  // operations issued
};

// INVALID_ARGUMENT for what only shows when building the instance (naming
// the field); the run itself does not fail.
Result<RunOutcome> RunScenario(const LoadedScenario& scenario,
                               const RunOptions& options = {});

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_RUNNER_H_
