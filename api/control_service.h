// ControlService: btsim.control.v1.Control, btsim's own fault-injection
// service, served next to the Bigtable services (`btsim ctl` is its client).
// Takes clusters down (refusing or black-holing requests) and up, cuts and
// heals replication links, sets the replication delay of a link, makes
// clusters slow, injects errors, cuts the server's clients off from a
// cluster, stalls a cluster's replication, skews its clock, and reports all of
// it with the replication backlog per link, the routing front end's view of
// each cluster and the app profiles.
//
// A request names one instance (created on first use, like the data API) or,
// with an empty `instance`, every instance created so far: a change then
// applies to every instance that has the named clusters. Clusters are named
// by their short id and mapped to their zones, since the Transport links
// zones. Every access to an instance holds its mutex. Thread-safe.
//
// `serve --replication-latency` installs a latency that overrides every
// link (Transport::SetLatencyEverywhere). The first SetLatency on such an
// instance replaces it with the same delay on each link between the
// instance's clusters, so that the requested link can differ; links of
// clusters added later get that delay when the next Control call touches the
// instance, and a cleared link goes back to it rather than to the distance
// default.
#ifndef BTSIM_API_CONTROL_SERVICE_H_
#define BTSIM_API_CONTROL_SERVICE_H_

#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "api/instance_registry.h"
#include "base/result.h"
#include "btsim/control/v1/control.grpc.pb.h"
#include "sim/transport.h"

namespace btsim::api {

// What `btsim serve --scenario` does when told to start or finish its
// scenario (StartScenario, FinishScenario). Called on gRPC threads.
class ScenarioControl {
 public:
  virtual ~ScenarioControl() = default;
  virtual Status Start() = 0;
  virtual Status Finish() = 0;
};

class ControlService final : public btsim::control::v1::Control::Service {
 public:
  // `registry` and `scenario` (optional: a server playing no scenario)
  // must outlive the service.
  ControlService(InstanceRegistry& registry, ScenarioControl* scenario)
      : registry_(registry), scenario_(scenario) {}

  grpc::Status SetClusterState(
      grpc::ServerContext* context,
      const btsim::control::v1::SetClusterStateRequest* request,
      btsim::control::v1::SetClusterStateResponse* response) override;
  grpc::Status SetPartition(
      grpc::ServerContext* context,
      const btsim::control::v1::SetPartitionRequest* request,
      btsim::control::v1::SetPartitionResponse* response) override;
  grpc::Status SetLatency(
      grpc::ServerContext* context,
      const btsim::control::v1::SetLatencyRequest* request,
      btsim::control::v1::SetLatencyResponse* response) override;
  grpc::Status SetSlowness(
      grpc::ServerContext* context,
      const btsim::control::v1::SetSlownessRequest* request,
      btsim::control::v1::SetSlownessResponse* response) override;
  grpc::Status InjectErrors(
      grpc::ServerContext* context,
      const btsim::control::v1::InjectErrorsRequest* request,
      btsim::control::v1::InjectErrorsResponse* response) override;
  grpc::Status CutClients(
      grpc::ServerContext* context,
      const btsim::control::v1::CutClientsRequest* request,
      btsim::control::v1::CutClientsResponse* response) override;
  grpc::Status SetReplicationStall(
      grpc::ServerContext* context,
      const btsim::control::v1::SetReplicationStallRequest* request,
      btsim::control::v1::SetReplicationStallResponse* response) override;
  grpc::Status SetClockSkew(
      grpc::ServerContext* context,
      const btsim::control::v1::SetClockSkewRequest* request,
      btsim::control::v1::SetClockSkewResponse* response) override;
  grpc::Status StartScenario(
      grpc::ServerContext* context,
      const btsim::control::v1::StartScenarioRequest* request,
      btsim::control::v1::StartScenarioResponse* response) override;
  grpc::Status FinishScenario(
      grpc::ServerContext* context,
      const btsim::control::v1::FinishScenarioRequest* request,
      btsim::control::v1::FinishScenarioResponse* response) override;
  grpc::Status GetStatus(
      grpc::ServerContext* context,
      const btsim::control::v1::GetStatusRequest* request,
      btsim::control::v1::GetStatusResponse* response) override;

 private:
  // The zones of the clusters a request names, in the request's order.
  using Zones = std::vector<std::string>;
  using Op = std::function<Status(ServedInstance&, const Zones&)>;

  // The instances `instance` names: that one, created on first use, or
  // (empty) every instance created so far.
  Result<std::vector<ServedInstance*>> Targets(const std::string& instance);
  // Runs `op` under the lock of each target instance that has every cluster
  // in `cluster_ids`. NOT_FOUND naming the cluster when the named instance
  // (or, for an empty `instance`, every instance) lacks one;
  // FAILED_PRECONDITION when `instance` is empty and no instance exists yet.
  Status Apply(const std::string& instance,
               const std::vector<std::string>& cluster_ids, const Op& op);
  // With the instance's lock held: the latency that replaced the instance's
  // "everywhere" override, if any, after giving it to the links of clusters
  // added since it was last applied.
  std::optional<sim::LatencyModel> BaseLatency(ServedInstance& served);
  // With the instance's lock held: replaces the everywhere override (if one
  // is in force) by the same model on every link between the instance's
  // clusters, and remembers it. Probes the link probe_from -> probe_to and
  // leaves it without a per-link model: the caller sets it next.
  void ReplaceEverywhereOverride(ServedInstance& served,
                                 const std::string& probe_from,
                                 const std::string& probe_to);

  // The delay that stood in for `serve --replication-latency` on an
  // instance, and the zones whose links have it.
  struct Base {
    sim::LatencyModel model;
    std::set<std::string> zones;
  };

  InstanceRegistry& registry_;
  ScenarioControl* const scenario_;
  std::mutex mu_;  // guards bases_; taken after an instance's mutex
  std::map<const ServedInstance*, Base> bases_;
};

}  // namespace btsim::api

#endif  // BTSIM_API_CONTROL_SERVICE_H_
