// The load a scenario offers, projected before it runs: a run records every
// operation (in a temporary file once settled), so a scenario whose clients
// would offer more than it can record is refused up front.
#ifndef BTSIM_SCENARIOS_OFFERED_LOAD_H_
#define BTSIM_SCENARIOS_OFFERED_LOAD_H_

#include <span>

#include "base/status.h"
#include "btsim/scenario/v1/scenario.pb.h"
#include "sim/time.h"

namespace btsim::scenarios {

// INVALID_ARGUMENT, naming the rate field of the client entry that offers
// the most, when the open-loop clients of `scenario` would offer more than
// 500,000,000 operations in `duration`, following its start_client,
// stop_client and change_workload steps (`order`: the timeline's indexes
// in time order; `at`: each step's time, by index). Closed-loop clients are
// not projected: their rate follows latency. Requires a validated
// scenario (known client names).
Status CheckOfferedLoad(const btsim::scenario::v1::Scenario& scenario,
                        sim::Duration duration, std::span<const int> order,
                        std::span<const sim::Duration> at);

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_OFFERED_LOAD_H_
