// ClusterFaults: the faults a cluster shows the requests that reach it,
// other than being down and cut from its peers (replication::Replicas and
// sim::Transport hold those): how a down cluster fails requests, service
// latency added to what it serves, injected errors, and cuts of the network
// between clients and the cluster. It is the truth a request meets when it
// arrives; routing never reads it (it learns from outcomes,
// appprofile/cluster_health.h).
//
// Deterministic: the draws use the caller's Rng. Not thread-safe.
#ifndef BTSIM_INSTANCE_CLUSTER_FAULTS_H_
#define BTSIM_INSTANCE_CLUSTER_FAULTS_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "sim/rng.h"
#include "sim/time.h"
#include "sim/transport.h"

namespace btsim::instance {

// How a down cluster fails the requests that reach it.
enum class DownMode {
  kRefuse,     // at once, UNAVAILABLE (the connection is refused)
  kBlackhole,  // never: the request hangs until its deadline
};
std::string_view DownModeName(DownMode mode);  // "REFUSE", "BLACKHOLE"

// A fraction of a cluster's requests fail with `code`.
struct InjectedErrors {
  double fraction = 0;  // in (0, 1]
  StatusCode code = StatusCode::kUnavailable;
  std::string method;  // the RPC, e.g. "MutateRow"; empty: every RPC
};

// The network between clients and a cluster is cut: the requests they send
// it, the replies it sends them, or both, are lost. Links between clusters
// (replication) are not affected.
struct ClientCut {
  std::string client_zone;  // required
  std::string client;       // empty: every client of the zone
  std::string cluster;      // required
  bool requests = true;
  bool replies = true;
};

class ClusterFaults {
 public:
  // How `cluster` fails requests while it is down (kRefuse until set;
  // Instance::SetDown sets it with the down state).
  void SetDownMode(std::string_view cluster, DownMode mode);
  DownMode down_mode(std::string_view cluster) const;

  // Adds a latency drawn from `added` to every request `cluster` serves;
  // nullopt removes it.
  void SetSlowness(std::string_view cluster,
                   std::optional<sim::LatencyModel> added);
  // Fails a fraction of `cluster`'s requests; nullopt stops it.
  void SetErrors(std::string_view cluster,
                 std::optional<InjectedErrors> errors);

  // Adds `cut`, replacing one with the same zone, client and cluster.
  void Cut(const ClientCut& cut);
  // Removes the cut with this zone, client and cluster (if any).
  void Mend(std::string_view client_zone, std::string_view client,
            std::string_view cluster);
  // Whether what `client` (empty: the zone's routing front end) of
  // `client_zone` sends to `cluster`, or receives from it, is lost: a cut
  // of the zone, or of that client.
  bool RequestLost(std::string_view client_zone, std::string_view client,
                   std::string_view cluster) const;
  bool ReplyLost(std::string_view client_zone, std::string_view client,
                 std::string_view cluster) const;

  // What a request of `method` meets when it reaches `cluster` (up): an
  // injected error (drawn from `rng`) or OK, and the latency added to its
  // service (drawn from `rng`; 0 when the cluster is not slow).
  struct Arrival {
    Status status;
    sim::Duration added{0};
  };
  Arrival Arrive(std::string_view cluster, std::string_view method,
                 sim::Rng& rng) const;

  // Everything about `cluster` (removed from the instance).
  void Forget(std::string_view cluster);
  // Every fault, for the end of a run.
  void Clear();
  // Faults set now, for status pages: slow clusters, erring clusters,
  // cuts.
  const std::map<std::string, sim::LatencyModel, std::less<>>& slowness()
      const {
    return slowness_;
  }
  const std::map<std::string, InjectedErrors, std::less<>>& errors() const {
    return errors_;
  }
  const std::vector<ClientCut>& cuts() const { return cuts_; }

 private:
  // The cut matching exactly, or null.
  const ClientCut* Find(std::string_view client_zone, std::string_view client,
                        std::string_view cluster) const;
  // RequestLost / ReplyLost, by the cut's `direction` flag.
  bool Lost(std::string_view client_zone, std::string_view client,
            std::string_view cluster, bool ClientCut::*direction) const;

  std::map<std::string, DownMode, std::less<>> down_modes_;
  std::map<std::string, sim::LatencyModel, std::less<>> slowness_;
  std::map<std::string, InjectedErrors, std::less<>> errors_;
  std::vector<ClientCut> cuts_;  // few: searched in order
};

}  // namespace btsim::instance

#endif  // BTSIM_INSTANCE_CLUSTER_FAULTS_H_
