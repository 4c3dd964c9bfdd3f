// ClusterHealth: what one routing front end believes about each cluster's
// health, learned only from what it observes: the outcomes of the requests
// it routed and of its own probes. Multi-cluster routing skips the clusters
// it has ejected.
//
// - Passive detection: `consecutive_failures` failed requests in a row, or
//   a failed fraction of at least `error_rate` over the last `window` with
//   at least `min_requests` outcomes, eject a cluster.
// - An ejection lasts at least base_ejection × (the cluster's ejections so
//   far), at most max_ejection: a flapping cluster stays out longer each
//   time. Its count is forgotten after max_ejection admitted without one.
// - Active detection: an ejected cluster is probed every probe_interval
//   (ProbesDue); a probe fails when it is not answered within
//   probe_timeout (the caller times it). The cluster is readmitted once its
//   ejection time has passed and its last `readmit_after` probes succeeded.
//
// Failures are what say a cluster is unhealthy (UNAVAILABLE,
// DEADLINE_EXCEEDED, INTERNAL, UNKNOWN, RESOURCE_EXHAUSTED, ABORTED); any
// other answer, errors about the request itself included, is a success.
// Outcomes for an ejected cluster (requests still in flight) are ignored.
//
// Deterministic: times are the caller's (virtual or wall). Not thread-safe.
#ifndef BTSIM_APPPROFILE_CLUSTER_HEALTH_H_
#define BTSIM_APPPROFILE_CLUSTER_HEALTH_H_

#include <chrono>
#include <cstddef>
#include <deque>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sim/time.h"

namespace btsim::appprofile {

struct DetectorOptions {
  int consecutive_failures = 5;
  double error_rate = 0.5;
  sim::Duration window = std::chrono::seconds(10);
  int min_requests = 20;
  sim::Duration base_ejection = std::chrono::seconds(5);
  sim::Duration max_ejection = std::chrono::seconds(60);
  sim::Duration probe_interval = std::chrono::seconds(1);
  int readmit_after = 3;
  // A probe not answered within this fails.
  sim::Duration probe_timeout = std::chrono::milliseconds(500);
  // Latency-aware failover: a multi-cluster attempt not answered within
  // this fraction of its time (to its attempt deadline) is sent again to
  // the next cluster, and counts as a failure of the first. 0: off.
  double failover_after = 0;

  // INVALID_ARGUMENT naming `field` + "." + the offending option.
  Status Validate(const std::string& field) const;
};

// Whether an answer with `code` says its cluster is unhealthy.
bool IsHealthFailure(StatusCode code);

class ClusterHealth {
 public:
  explicit ClusterHealth(DetectorOptions options = {}) : options_(options) {}

  // A request routed to `cluster` ended with `code` at `now` (its reply,
  // or its attempt's timeout). True when this ejected the cluster.
  bool RecordOutcome(std::string_view cluster, StatusCode code, sim::Time now);
  // A probe of `cluster` ended at `now`; `ok` when it answered. True when
  // this readmitted the cluster. Ignored for a cluster not ejected (or
  // forgotten).
  bool RecordProbe(std::string_view cluster, bool ok, sim::Time now);
  // Forgets `cluster` (removed from the instance): it is admitted if it
  // comes back.
  void Forget(std::string_view cluster);

  // False while `cluster` is ejected.
  bool Admitted(std::string_view cluster) const;
  // The ejected clusters due a probe at `now`, in name order; marks them
  // probed (the next is due probe_interval later).
  std::vector<std::string> ProbesDue(sim::Time now);
  // Whether some cluster is ejected.
  bool AnyEjected() const;
  // How many times `cluster` was ejected in all (0 for an unknown one).
  int Ejections(std::string_view cluster) const;
  // What the front end believes of each cluster it has heard of, in the
  // order it first did.
  struct ClusterView {
    std::string cluster;
    bool ejected = false;
    sim::Time ejected_at;  // the latest ejection (when ejections > 0)
    int ejections = 0;     // in all
  };
  std::vector<ClusterView> Views() const;

 private:
  struct State {
    std::string cluster;
    bool ejected = false;
    int consecutive_failures = 0;
    std::deque<std::pair<sim::Time, bool>> recent;  // (when, failed)
    int recent_failures = 0;
    int ejections = 0;        // the count that sets the next ejection's length
    int total_ejections = 0;  // ever
    sim::Time ejected_at;
    sim::Time ejected_until;
    sim::Time last_ejection_end;
    sim::Time next_probe;
    int probe_successes = 0;
  };
  State& StateOf(std::string_view cluster);
  const State* Find(std::string_view cluster) const;
  void Eject(State& state, sim::Time now);

  DetectorOptions options_;
  std::vector<State> states_;  // a handful: searched in order
};

}  // namespace btsim::appprofile

#endif  // BTSIM_APPPROFILE_CLUSTER_HEALTH_H_
