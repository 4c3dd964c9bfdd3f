// Instance: one replicated Bigtable instance — its clusters (a
// Replicas over a Transport), its app profiles, and the routing of
// each request to a cluster with failover. Used by `btsim serve` (on the
// asio scheduler, under the caller's lock) and by scenarios (virtual time).
//
// Every routing decision, failover, refusal and replicated apply is reported
// to the InstanceObservers added, and so is every request its server (the API
// layer, or a scenario's simulated clients) reports through ReportRequest.
//
// Not thread-safe: the owner serialises every call and every task the
// Scheduler runs for this instance.
#ifndef BTSIM_INSTANCE_INSTANCE_H_
#define BTSIM_INSTANCE_INSTANCE_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "appprofile/app_profile.h"
#include "appprofile/cluster_health.h"
#include "appprofile/router.h"
#include "base/result.h"
#include "cluster/cluster.h"
#include "cluster/node_model.h"
#include "instance/backups.h"
#include "instance/cluster_faults.h"
#include "instance/journal.h"
#include "instance/request_report.h"
#include "instance/tablet_units.h"
#include "replication/replicas.h"
#include "sim/scheduler.h"
#include "sim/transport.h"

namespace btsim::instance {

struct ClusterConfig {
  std::string id;
  std::string zone;
  int nodes = 1;
};

// The latency and/or bandwidth of the link between two clusters' zones,
// overriding the distance default and replication_bandwidth (both
// directions unless `one_way`).
struct LinkOverride {
  std::string from_cluster;
  std::string to_cluster;
  std::optional<sim::LatencyModel> latency;  // unset: the default
  bool one_way = false;
  int64_t bandwidth = 0;  // bytes/s; 0: the default
};

struct InstanceConfig {
  std::vector<ClusterConfig> clusters;  // at least one
  // Every cluster's storage (Bigtable: the same for all, fixed at creation).
  cluster::StorageType storage = cluster::StorageType::kSsd;
  // Where clients are assumed to be; empty: the first cluster's zone.
  std::string client_zone;
  // When set, every link has this constant one-way delay. Cannot be
  // combined with link_overrides (it would hide them).
  std::optional<sim::Duration> replication_latency;
  sim::TransportDefaults links;
  // Bytes/s each link between clusters carries (sim::Transport); 0:
  // unlimited. Must not be negative.
  int64_t replication_bandwidth = 0;
  replication::ReplicationOptions replication;
  // Created with the instance (ignoring warnings), besides "default".
  std::vector<appprofile::AppProfile> app_profiles;
  // Applied in order; both ends must name clusters of `clusters`.
  std::vector<LinkOverride> link_overrides;
  // True: replicated applies wait for their turn on the receiving nodes
  // (the virtual-time runs of scenarios). False (`btsim serve`, where the
  // real machine serves): they apply on arrival and the node model only
  // measures load.
  bool queue_on_nodes = false;
  // The most work a node holds queued before it refuses new requests
  // (Admit; NodeModel::Admission::kQueueFull). Bigtable publishes no such
  // figure: btsim's assumption (README, "Assumptions").
  sim::Duration node_queue_limit = std::chrono::seconds(1);
  // What multi-cluster routing believes about the clusters' health: what
  // each client zone's routing front end has observed (kObserved,
  // appprofile/cluster_health.h), or the clusters' true state (kOracle, an
  // idealised router for experiments).
  enum class Detector { kObserved, kOracle };
  Detector detector = Detector::kObserved;
  appprofile::DetectorOptions detector_options;
};

// Receives what an Instance does, on the instance's thread (under its
// owner's serialisation). Every method defaults to doing nothing. Observers
// must not call back into the instance, except its const accessors.
class InstanceObserver {
 public:
  virtual ~InstanceObserver() = default;
  virtual void OnRoute(std::string_view /*profile*/,
                       std::string_view /*cluster*/) {}
  // Multi-cluster routing skipped `from` (the nearest) for `to`.
  virtual void OnFailover(std::string_view /*profile*/,
                          std::string_view /*from*/, std::string_view /*to*/) {}
  virtual void OnRefusal(std::string_view /*profile*/,
                         const Status& /*status*/) {}
  virtual void OnRequest(const RequestReport& /*request*/) {}
  // True: this observer wants every served request's recorded fields
  // (RequestReport::recorded), asked once, when it is added.
  virtual bool RecordsCalls() const { return false; }
  // The routing front end of `zone` ejected `cluster` (ejected) or
  // readmitted it after probes.
  virtual void OnHealthChange(std::string_view /*zone*/,
                              std::string_view /*cluster*/, bool /*ejected*/) {}
  // A probe of that front end to `cluster` ended: answered in time (ok) or
  // not.
  virtual void OnProbe(std::string_view /*zone*/, std::string_view /*cluster*/,
                       bool /*ok*/) {}
  // A peer applied an entry of another cluster's log (see
  // Replicas::set_apply_hook for which entries are reported). The peer's
  // node model was charged for it when its batch arrived.
  virtual void OnReplicated(const replication::AppliedInfo& /*info*/) {}
};

class Instance {
 public:
  // INVALID_ARGUMENT (naming the field) for a bad configuration: no
  // cluster, a bad cluster id, two clusters in one zone, more than four, a
  // non-positive node count, an app profile that ProfileSet rejects
  // (app_profiles[i]), a link override naming an unknown cluster or
  // combined with replication_latency (link_overrides[i]). The Scheduler
  // must outlive the instance.
  static Result<std::unique_ptr<Instance>> Create(std::string name,
                                                  sim::Scheduler& scheduler,
                                                  sim::Rng rng,
                                                  const InstanceConfig& config);
  ~Instance();

  const std::string& name() const { return name_; }
  const std::string& client_zone() const { return client_zone_; }
  replication::Replicas& replicas() { return *replicas_; }
  const replication::Replicas& replicas() const { return *replicas_; }
  appprofile::ProfileSet& profiles() { return profiles_; }
  const appprofile::ProfileSet& profiles() const { return profiles_; }
  sim::Transport& transport() { return *transport_; }
  // The time of the instance's scheduler.
  sim::Time Now() const { return scheduler_.Now(); }
  // Observers are called in the order they were added; each must outlive
  // the instance or be removed first.
  void AddObserver(InstanceObserver* observer);
  void RemoveObserver(InstanceObserver* observer);
  // Passes a served request to every observer.
  void ReportRequest(const RequestReport& request);
  // Whether an observer records calls: servers then fill the recorded
  // fields of their reports.
  bool records_calls() const { return records_calls_; }
  // The routing front end of `client_zone` (empty: the instance's client
  // zone) saw a request it routed to `cluster` end with `code` (its reply,
  // or its attempt timing out). Ejected clusters are probed until
  // readmitted. Nothing happens with the oracle detector.
  void ObserveOutcome(std::string_view client_zone, std::string_view cluster,
                      StatusCode code);
  // Whether `client_zone`'s front end routes to `cluster` (not ejected).
  bool Admitted(std::string_view client_zone, std::string_view cluster) const;
  // What each front end believes of the clusters, by client zone (empty
  // with the oracle detector).
  std::map<std::string, std::vector<appprofile::ClusterHealth::ClusterView>>
  FrontEndViews() const;

  // Runs `op` on the cluster that serves this request under the profile
  // (empty id: "default"): NOT_FOUND for an unknown profile,
  // FAILED_PRECONDITION for a refused transaction, what Receive answers
  // for the chosen cluster (DEADLINE_EXCEEDED when it is black-holed; no
  // latency is added). Multi-cluster routing skips the clusters the
  // instance's front end has ejected (a failover when the nearest is
  // skipped); the outcome is what it learns from (ObserveOutcome). Returns
  // `op`'s status.
  Status Execute(std::string_view app_profile_id, appprofile::RequestKind kind,
                 std::string_view row_key,
                 const std::function<Status(cluster::Cluster&)>& op);

  // The first step of Execute: the id of the cluster that serves the
  // request (reported to the observer), or the refusal. `client_zone`
  // decides which clusters are nearest and whose front end's view of their
  // health counts; empty: the instance's client zone. The caller reports
  // the outcome (ObserveOutcome).
  Result<std::string> Route(std::string_view app_profile_id,
                            appprofile::RequestKind kind,
                            std::string_view row_key,
                            std::string_view client_zone = {});
  // Latency-aware failover (DetectorOptions::failover_after): the cluster
  // a multi-cluster request that `avoid` has not answered in time goes to
  // next, as Route chooses among the others (reported as a failover);
  // FAILED_PRECONDITION for a single-cluster profile (it never fails over
  // by itself), UNAVAILABLE when no other cluster is admitted.
  Result<std::string> RouteAround(std::string_view app_profile_id,
                                  appprofile::RequestKind kind,
                                  std::string_view row_key,
                                  std::string_view client_zone,
                                  std::string_view avoid);
  const appprofile::DetectorOptions& detector_options() const {
    return detector_options_;
  }
  // The cluster `id` if it exists and is up; UNAVAILABLE when down,
  // NOT_FOUND when gone (e.g. between batches of a streaming read).
  Result<cluster::Cluster*> ClusterIfUp(std::string_view id);

  // The faults injected into the clusters and between clients and them
  // (down modes, slowness, errors, client cuts). Steps and `btsim ctl`
  // set them; routing never reads them.
  ClusterFaults& faults() { return faults_; }
  const ClusterFaults& faults() const { return faults_; }
  // What a request of `method` meets on reaching cluster `id` now.
  struct Reception {
    enum class Kind {
      kServed,  // `cluster` serves it, `added` later than it would
      kFailed,  // answered at once with `status`: NOT_FOUND (gone),
                // UNAVAILABLE (down, refusing), or an injected error
      kLost,    // down and black-holed: no answer ever comes
    };
    Kind kind = Kind::kServed;
    Status status;
    cluster::Cluster* cluster = nullptr;
    sim::Duration added{0};
  };
  // Draws injected errors and added latency from `rng` (only when the
  // cluster has such faults).
  Reception Receive(std::string_view id, std::string_view method,
                    sim::Rng& rng);
  // Only whether cluster `id` is there and up (or how it fails while
  // down): Receive without injected errors or slowness, no draw.
  Reception Reach(std::string_view id);
  // Takes cluster `id` down (it stops serving and replicating; its
  // requests fail as `mode` says) or brings it back up (the next outage
  // refuses unless told otherwise). NOT_FOUND for an unknown id.
  Status SetDown(std::string_view id, bool down,
                 DownMode mode = DownMode::kRefuse);
  // The same with the instance's own stream (`btsim serve`).
  Reception Receive(std::string_view id, std::string_view method) {
    return Receive(id, method, fault_rng_);
  }

  // DropRowRange on a live cluster; it replicates. Only one may be in
  // progress per table: until every cluster has applied the previous one, a
  // second answers UNAVAILABLE "A DropRowRange operation is already
  // ongoing".
  Status DropRowRange(std::string_view table, std::string_view prefix);

  // Table.deletion_protection, instance-wide like the schema: while a table
  // is protected the admin API refuses to delete it or its column
  // families. Tables start unprotected (and only an unprotected table
  // can be deleted, so a new table of the same id starts so too).
  void SetDeletionProtection(std::string_view table, bool protect);
  bool DeletionProtected(std::string_view table) const {
    return protected_tables_.contains(table);
  }
  std::vector<std::string> ProtectedTables() const {  // sorted
    return {protected_tables_.begin(), protected_tables_.end()};
  }

  // Reports every commit, apply and metadata change to `journal` (null:
  // none, the default). It must outlive the instance or be unset first.
  void set_journal(InstanceJournal* journal);

  // The clusters' backups (a removed cluster's go with it).
  Backups& backups() { return *backups_; }

  // The id of the first live cluster; UNAVAILABLE when every one is down.
  Result<std::string> AnyLiveClusterId() const;
  // Any live cluster, for admin operations (schema changes replicate).
  // UNAVAILABLE when every cluster is down.
  Result<cluster::Cluster*> AnyLiveCluster();

  // Adds or removes a cluster (replication seeding / teardown) and keeps
  // the profiles' view of the clusters current.
  Status AddCluster(const ClusterConfig& config);
  Status RemoveCluster(std::string_view id);
  // Changes a cluster's node count: NOT_FOUND for an unknown id,
  // INVALID_ARGUMENT (serve_nodes) for fewer than one node.
  Status SetNodes(std::string_view id, int nodes);
  std::vector<ClusterConfig> Clusters() const;  // in creation order

  // ---- Capacity (one cluster::NodeModel per cluster) ----
  // Charges `units` operations of `kind` to the node of cluster `cluster`
  // that serves the tablet of `table` holding `row_key`, arriving now, and
  // returns when that node finishes them (>= now; they queue behind the
  // node's earlier work). Unknown cluster or table: now, nothing charged.
  // Replicated applies are charged by the instance itself (kReplicationApply
  // per row, on the receiving cluster, when their batch arrives; see
  // InstanceConfig::queue_on_nodes). Tablets
  // are rebalanced between nodes as time passes (no timer of its own).
  sim::Time Charge(std::string_view cluster, std::string_view table,
                   std::string_view row_key, cluster::OpKind kind,
                   int64_t units = 1);
  // The admission of a request of `units` of `kind` for `row_key` of
  // `table` arriving now at cluster `cluster` with the given deadline
  // (NodeModel::Admit with node_queue_limit): kServed with when its node
  // starts and finishes it, or kQueueFull / kExpired with nothing charged.
  // Unknown cluster or table: served now, nothing charged.
  cluster::NodeModel::Admission Admit(std::string_view cluster,
                                      std::string_view table,
                                      std::string_view row_key,
                                      cluster::OpKind kind, int64_t units,
                                      sim::Time deadline);
  // Charge(cluster, table, key, kind) for each of `row_keys`, in order,
  // with the cluster and table looked up once (a MutateRows batch).
  void ChargeRows(std::string_view cluster, std::string_view table,
                  std::span<const std::string_view> row_keys,
                  cluster::OpKind kind);
  // A cluster's node model (nullptr for an unknown id).
  const cluster::NodeModel* Nodes(std::string_view cluster) const;
  // Average and hottest-node load of a cluster now, as fractions of a node
  // (0 for an unknown id); see cluster::NodeModel.
  double CpuLoad(std::string_view cluster) const;
  double HottestNodeLoad(std::string_view cluster) const;

 private:
  // One cluster's node model and the virtual-time bucket of its latest
  // Rebalance() (Charge rebalances at most once per NodeModel::kBucket).
  struct Capacity {
    Capacity(cluster::StorageType storage, int nodes) : model(storage, nodes) {}
    cluster::NodeModel model;
    int64_t last_rebalance_bucket = std::numeric_limits<int64_t>::min();
    // The cluster, found on first use: a Capacity is added and removed with
    // its cluster (only Instance changes the instance's membershiphip). The
    // table charged last (most charges go to one table), valid while the
    // cluster's tables_version() is unchanged.
    cluster::Cluster* cluster = nullptr;
    uint64_t tables_version = 0;
    std::string table_id;
    const cluster::Table* table = nullptr;
    uint64_t table_hash = 0;  // TabletId's hash of table_id
  };
  // The capacity of `cluster` and its `table`, rebalanced if a new bucket
  // began at `now`; null (nothing to charge) for an unknown cluster or
  // table.
  Capacity* CapacityFor(std::string_view cluster, std::string_view table,
                        sim::Time now);
  // The same for a capacity already found (`cluster` is its id).
  Capacity* Prepare(Capacity& cap, std::string_view cluster,
                    std::string_view table, sim::Time now);
  // Charges `units` of `kind` to the node of `cap` (from CapacityFor or
  // Prepare at `now`) serving `row_key`'s tablet; returns when that node
  // finishes them, or `now` when cap is null (nothing charged).
  sim::Time SubmitTo(Capacity* cap, std::string_view row_key,
                     cluster::OpKind kind, int64_t units, sim::Time now);

  Instance(std::string name, sim::Scheduler& scheduler, sim::Rng rng,
           const InstanceConfig& config);
  // Tells the observers about a replicated entry (Replicas' apply hook).
  void OnApplied(const replication::AppliedInfo& info);
  // Charges a batch's rows to the receiving cluster's nodes, once per
  // tablet in the order the batch first names them, and returns when they
  // are done (Replicas' apply queue; now unless queue_on_nodes_). With
  // queue_on_nodes_, nullopt (nothing charged) when a node serving one of
  // its rows holds more than node_queue_limit_ of work.
  std::optional<sim::Time> QueueReplicated(
      uint32_t peer_number, std::string_view peer,
      std::span<const cluster::CommitRecord* const> records);

  sim::Scheduler& scheduler_;
  cluster::StorageType storage_;
  bool queue_on_nodes_;
  sim::Duration node_queue_limit_;
  // By cluster id; one per entry of clusters_.
  std::map<std::string, Capacity, std::less<>> capacity_;
  // Entries of capacity_ by origin number (AppliedInfo), found on
  // first use (null: not yet). Origin numbers are never reused; the whole
  // list is dropped when a cluster is removed.
  std::vector<Capacity*> capacity_by_origin_;
  // QueueReplicated's rows per tablet, and the tablet of each row; empty
  // between calls.
  TabletUnits tablet_units_;
  std::vector<uint64_t> batch_tablets_;
  std::string name_;
  std::string client_zone_;
  sim::Rng rng_;
  std::unique_ptr<sim::Transport> transport_;
  std::unique_ptr<replication::Replicas> replicas_;
  appprofile::ProfileSet profiles_;
  std::vector<ClusterConfig> clusters_;
  std::vector<InstanceObserver*> observers_;
  bool records_calls_ = false;  // some observer RecordsCalls()
  // Route's lists of clusters, one per client zone seen (views into
  // clusters_, with whether each is up and its distance from the zone),
  // valid while route_candidates_version_ is the instance's
  // membership_version() and clusters_ is unchanged (its changes reset the
  // version to kStale).
  struct ZoneCandidates {
    std::string client_zone;
    std::vector<appprofile::RouteCandidate> candidates;
  };
  std::vector<ZoneCandidates> route_candidates_;
  // route_candidates_' entry for `client_zone`, made when missing.
  const std::vector<appprofile::RouteCandidate>& RouteCandidates(
      std::string_view client_zone);
  static constexpr uint64_t kStale = ~uint64_t{0};
  uint64_t route_candidates_version_ = kStale;
  // Per table: the log positions right after its last DropRowRange.
  std::map<std::string, std::map<std::string, uint64_t>, std::less<>> drops_;
  std::set<std::string, std::less<>> protected_tables_;
  InstanceJournal* journal_ = nullptr;
  void MetadataChanged() {
    if (journal_ != nullptr) journal_->OnMetadataChanged(*this);
  }

  // ---- Routing front ends ----
  // `client_zone`, or the instance's client zone when it is empty.
  std::string_view ZoneOr(std::string_view client_zone) const;
  // Route, never choosing `avoid` (when not empty) and refusing a
  // single-cluster profile then.
  Result<std::string> RouteAvoiding(std::string_view app_profile_id,
                                    appprofile::RequestKind kind,
                                    std::string_view row_key,
                                    std::string_view client_zone,
                                    std::string_view avoid);
  // `client_zone`'s front end (empty: the instance's), made when missing.
  appprofile::ClusterHealth& FrontEnd(std::string_view client_zone);
  // Records a probe's end in `zone`'s front end and tells the observers.
  void EndProbe(const std::string& zone, const std::string& cluster, bool ok);
  // Probes what every front end has ejected and is due, then runs again
  // after a probe interval while any cluster is ejected.
  void ProbeEjected();
  // A probe (PingAndWarm) from `zone`'s front end to `cluster` sent now.
  // It fails when its answer is an error, or none comes within the probe
  // timeout (a black-holed or cut cluster, or one too slow).
  void Probe(std::string zone, std::string cluster);
  ClusterFaults faults_;
  std::unique_ptr<Backups> backups_;
  InstanceConfig::Detector detector_;
  appprofile::DetectorOptions detector_options_;
  sim::Rng probe_rng_;
  sim::Rng fault_rng_;  // Receive's draws for requests served by the API
  std::map<std::string, appprofile::ClusterHealth, std::less<>> front_ends_;
  bool probing_ = false;  // a ProbeEjected is scheduled
  // False once the instance is destroyed (its scheduled probes see it).
  std::shared_ptr<bool> alive_ = std::make_shared<bool>(true);
};

}  // namespace btsim::instance

#endif  // BTSIM_INSTANCE_INSTANCE_H_
