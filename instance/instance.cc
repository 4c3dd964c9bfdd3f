#include "instance/instance.h"

#include <algorithm>
#include <array>
#include <string>
#include <utility>

#include "base/bytes.h"
#include "base/check.h"
#include "cluster/commit_record.h"
#include "sim/rng.h"

namespace btsim::instance {
namespace {

std::vector<std::string> IdsOf(const std::vector<ClusterConfig>& clusters) {
  std::vector<std::string> ids;
  for (const ClusterConfig& c : clusters) ids.push_back(c.id);
  return ids;
}

// The node model's id of the tablet of `table` that starts at `start` is
// StableHash(table + '\0' + start) (table ids never hold NUL), computed
// without building the string: StableHash is FNV-1a, whose state after a
// prefix continues as the seed (xor the offset basis). TableHash is the
// table's part, computed once per table; the table finishes it
// (Table::TabletStartHash, once per tablet).
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ULL;
constexpr uint64_t kFnvPrime = 0x100000001b3ULL;
uint64_t TableHash(std::string_view table) {
  return (sim::StableHash(table) * kFnvPrime) ^ kFnvOffset;  // then '\0'
}

}  // namespace

Result<std::unique_ptr<Instance>> Instance::Create(
    std::string name, sim::Scheduler& scheduler, sim::Rng rng,
    const InstanceConfig& config) {
  if (config.clusters.empty()) {
    return InvalidArgument("clusters: an instance needs at least one cluster");
  }
  if (config.clusters.size() > replication::kMaxClusters) {
    return InvalidArgument("clusters: an instance has at most 4 clusters");
  }
  for (size_t i = 0; i < config.clusters.size(); ++i) {
    if (config.clusters[i].nodes < 1) {
      return InvalidArgument("clusters[" + std::to_string(i) +
                             "].serve_nodes: a cluster needs at least one "
                             "node");
    }
  }
  std::unique_ptr<Instance> instance(
      new Instance(std::move(name), scheduler, rng, config));
  for (size_t i = 0; i < config.clusters.size(); ++i) {
    const ClusterConfig& c = config.clusters[i];
    if (Status s = instance->replicas_->AddCluster({c.id, c.zone}); !s.ok()) {
      return Status(s.code(),
                    "clusters[" + std::to_string(i) + "]: " + s.message());
    }
    instance->clusters_.push_back(c);
    instance->route_candidates_version_ = kStale;
    instance->capacity_.try_emplace(c.id, config.storage, c.nodes);
  }
  if (config.node_queue_limit < sim::Duration(0)) {
    return InvalidArgument("node_queue_limit: must not be negative");
  }
  BTSIM_RETURN_IF_ERROR(config.detector_options.Validate("detector"));
  if (config.replication_bandwidth < 0) {
    return InvalidArgument("replication_bandwidth: must not be negative");
  }
  instance->transport_->SetDefaultBandwidth(config.replication_bandwidth);
  // Transport::SetLatencyEverywhere hides every per-link model.
  for (size_t i = 0; i < config.link_overrides.size(); ++i) {
    if (config.replication_latency && config.link_overrides[i].latency) {
      return InvalidArgument("link_overrides[" + std::to_string(i) +
                             "].latency: cannot be combined with "
                             "replication_latency");
    }
  }
  auto zone_of = [&config](const std::string& id) -> const std::string* {
    for (const ClusterConfig& c : config.clusters) {
      if (c.id == id) return &c.zone;
    }
    return nullptr;
  };
  for (size_t i = 0; i < config.link_overrides.size(); ++i) {
    const LinkOverride& o = config.link_overrides[i];
    const std::string field = "link_overrides[" + std::to_string(i) + "]";
    const std::string* from = zone_of(o.from_cluster);
    const std::string* to = zone_of(o.to_cluster);
    if (from == nullptr) {
      return InvalidArgument(field + ".from_cluster: unknown cluster '" +
                             o.from_cluster + "'");
    }
    if (to == nullptr) {
      return InvalidArgument(field + ".to_cluster: unknown cluster '" +
                             o.to_cluster + "'");
    }
    if (o.from_cluster == o.to_cluster) {
      return InvalidArgument(field +
                             ": from_cluster and to_cluster must differ");
    }
    if (o.bandwidth < 0) {
      return InvalidArgument(field + ".bandwidth: must not be negative");
    }
    if (o.latency) {
      instance->transport_->SetLatency(*from, *to, *o.latency, o.one_way);
    }
    if (o.bandwidth > 0) {
      instance->transport_->SetBandwidth(*from, *to, o.bandwidth, o.one_way);
    }
  }
  for (size_t i = 0; i < config.app_profiles.size(); ++i) {
    auto created = instance->profiles_.Create(config.app_profiles[i],
                                              /*ignore_warnings=*/true);
    if (!created.ok()) {
      return InvalidArgument("app_profiles[" + std::to_string(i) +
                             "]: " + created.status().message());
    }
  }
  return instance;
}

Instance::Instance(std::string name, sim::Scheduler& scheduler, sim::Rng rng,
                   const InstanceConfig& config)
    : scheduler_(scheduler),
      storage_(config.storage),
      queue_on_nodes_(config.queue_on_nodes),
      node_queue_limit_(config.node_queue_limit),
      name_(std::move(name)),
      client_zone_(config.client_zone.empty() ? config.clusters[0].zone
                                              : config.client_zone),
      rng_(rng.Fork("routing")),
      transport_(std::make_unique<sim::Transport>(
          scheduler, rng.Fork("transport"), config.links)),
      replicas_(std::make_unique<replication::Replicas>(
          scheduler, *transport_, rng.Fork("replication"), config.replication)),
      profiles_(IdsOf(config.clusters)),
      detector_(config.detector),
      detector_options_(config.detector_options),
      probe_rng_(rng.Fork("probes")),
      fault_rng_(rng.Fork("faults")) {
  if (config.replication_latency) {
    transport_->SetLatencyEverywhere(
        sim::LatencyModel::Constant(*config.replication_latency));
  }
  replicas_->set_apply_hook(
      [this](const replication::AppliedInfo& info) { OnApplied(info); });
  replicas_->set_apply_queue(
      [this](uint32_t peer_number, std::string_view peer,
             std::span<const cluster::CommitRecord* const> records) {
        return QueueReplicated(peer_number, peer, records);
      });
  backups_ = std::make_unique<Backups>(*replicas_, scheduler_);
  profiles_.set_on_change([this] { MetadataChanged(); });
}

Instance::~Instance() {
  *alive_ = false;
  replicas_->set_apply_hook(nullptr);
  replicas_->set_apply_queue(nullptr);
}

Result<std::string> Instance::Route(std::string_view app_profile_id,
                                    appprofile::RequestKind kind,
                                    std::string_view row_key,
                                    std::string_view client_zone) {
  return RouteAvoiding(app_profile_id, kind, row_key, client_zone, {});
}

Result<std::string> Instance::RouteAround(std::string_view app_profile_id,
                                          appprofile::RequestKind kind,
                                          std::string_view row_key,
                                          std::string_view client_zone,
                                          std::string_view avoid) {
  BTSIM_CHECK(!avoid.empty());
  return RouteAvoiding(app_profile_id, kind, row_key, client_zone, avoid);
}

Result<std::string> Instance::RouteAvoiding(std::string_view app_profile_id,
                                            appprofile::RequestKind kind,
                                            std::string_view row_key,
                                            std::string_view client_zone,
                                            std::string_view avoid) {
  auto refuse = [&](Status s) {
    for (InstanceObserver* o : observers_) o->OnRefusal(app_profile_id, s);
    return s;
  };
  const appprofile::AppProfile* profile = profiles_.Find(app_profile_id);
  if (profile == nullptr) {
    return refuse(profiles_.Get(app_profile_id).status());
  }
  if (!avoid.empty() &&
      profile->routing == appprofile::AppProfile::Routing::kSingleCluster) {
    return FailedPrecondition("single-cluster routing never fails over");
  }
  const appprofile::RouteRequest request{kind, row_key, ZoneOr(client_zone)};
  const std::vector<appprofile::RouteCandidate>& known =
      RouteCandidates(request.client_zone);
  std::span<const appprofile::RouteCandidate> candidates = known;
  std::array<appprofile::RouteCandidate, appprofile::kMaxRouteCandidates>
      observed;
  const bool observing = detector_ == InstanceConfig::Detector::kObserved;
  if (observing || !avoid.empty()) {
    // What the front end believes, not the truth cached in `known`.
    BTSIM_CHECK(known.size() <= observed.size());
    const appprofile::ClusterHealth* health =
        observing ? &FrontEnd(request.client_zone) : nullptr;
    for (size_t i = 0; i < known.size(); ++i) {
      observed[i] = known[i];
      if (health != nullptr) {
        observed[i].available = health->Admitted(known[i].id);
      }
      if (known[i].id == avoid) observed[i].available = false;
    }
    candidates = std::span(observed.data(), known.size());
  }
  auto route = appprofile::Route(*profile, request, candidates, rng_);
  if (observing && avoid.empty() && !route.ok() &&
      route.status().code() == StatusCode::kUnavailable) {
    // Every cluster of the profile is ejected: the front end tries them
    // all rather than refuse everything.
    for (size_t i = 0; i < known.size(); ++i) observed[i].available = true;
    route = appprofile::Route(*profile, request, candidates, rng_);
  }
  if (!avoid.empty() && !route.ok()) return route.status();
  if (!route.ok()) return refuse(route.status());
  const std::string_view chosen = route->chosen();
  // `chosen` views its entry of candidates.
  const auto candidate = std::find_if(candidates.begin(), candidates.end(),
                                      [&](const appprofile::RouteCandidate& c) {
                                        return c.id.data() == chosen.data();
                                      });
  BTSIM_CHECK(candidate != candidates.end());
  if (!candidate->available && detector_ == InstanceConfig::Detector::kOracle) {
    // Single-cluster routing never fails over by itself. (A front end
    // that only observes sends the request, and the cluster answers.)
    return refuse(Unavailable("cluster '" + std::string(chosen) +
                              "' of app profile '" + profile->id +
                              "' is unavailable"));
  }
  for (InstanceObserver* o : observers_) {
    if (route->nearest != chosen) {
      o->OnFailover(profile->id, route->nearest, chosen);
    }
    o->OnRoute(profile->id, chosen);
  }
  return std::string(chosen);
}

const std::vector<appprofile::RouteCandidate>& Instance::RouteCandidates(
    std::string_view client_zone) {
  // A handful of zones route in a run; a caller with ever new zones only
  // makes the list start over.
  constexpr size_t kMaxZones = 16;
  if (route_candidates_version_ != replicas_->members_version() ||
      route_candidates_.size() >= kMaxZones) {
    route_candidates_.clear();
    route_candidates_version_ = replicas_->members_version();
  }
  for (const ZoneCandidates& z : route_candidates_) {
    if (SameBytes(z.client_zone, client_zone)) return z.candidates;
  }
  ZoneCandidates& z = route_candidates_.emplace_back();
  z.client_zone = std::string(client_zone);
  for (const ClusterConfig& c : clusters_) {
    z.candidates.push_back({c.id, c.zone, !replicas_->IsDown(c.id),
                            appprofile::Distance(client_zone, c.zone)});
  }
  return z.candidates;
}

Result<cluster::Cluster*> Instance::ClusterIfUp(std::string_view id) {
  bool down = false;
  cluster::Cluster* cluster = replicas_->Find(id, &down);
  if (cluster == nullptr) {
    return NotFound("cluster '" + std::string(id) + "' not found");
  }
  if (down) {
    return Unavailable("cluster '" + std::string(id) + "' is unavailable");
  }
  return cluster;
}

Instance::Reception Instance::Reach(std::string_view id) {
  Reception r;
  bool down = false;
  r.cluster = replicas_->Find(id, &down);
  if (r.cluster == nullptr) {
    r.kind = Reception::Kind::kFailed;
    r.status = NotFound("cluster '" + std::string(id) + "' not found");
  } else if (down) {
    r.cluster = nullptr;
    if (faults_.down_mode(id) == DownMode::kBlackhole) {
      r.kind = Reception::Kind::kLost;
      r.status =
          DeadlineExceeded("cluster '" + std::string(id) + "' did not answer");
    } else {
      r.kind = Reception::Kind::kFailed;
      r.status =
          Unavailable("cluster '" + std::string(id) + "' is unavailable");
    }
  }
  return r;
}

Instance::Reception Instance::Receive(std::string_view id,
                                      std::string_view method, sim::Rng& rng) {
  Reception r = Reach(id);
  if (r.kind != Reception::Kind::kServed) return r;
  ClusterFaults::Arrival arrival = faults_.Arrive(id, method, rng);
  if (!arrival.status.ok()) {
    r.kind = Reception::Kind::kFailed;
    r.status = std::move(arrival.status);
    r.cluster = nullptr;
  }
  r.added = arrival.added;
  return r;
}

Status Instance::SetDown(std::string_view id, bool down, DownMode mode) {
  BTSIM_RETURN_IF_ERROR(replicas_->SetDown(id, down));
  faults_.SetDownMode(id, down ? mode : DownMode::kRefuse);
  return OkStatus();
}

Status Instance::Execute(std::string_view app_profile_id,
                         appprofile::RequestKind kind, std::string_view row_key,
                         const std::function<Status(cluster::Cluster&)>& op) {
  BTSIM_ASSIGN_OR_RETURN(std::string id, Route(app_profile_id, kind, row_key));
  Reception reception = Receive(id, "");
  Status status = reception.kind == Reception::Kind::kServed
                      ? op(*reception.cluster)
                      : std::move(reception.status);
  ObserveOutcome("", id, status.code());
  return status;
}

void Instance::SetDeletionProtection(std::string_view table, bool protect) {
  if (protect) {
    if (!protected_tables_.emplace(table).second) return;
  } else if (auto it = protected_tables_.find(table);
             it != protected_tables_.end()) {
    protected_tables_.erase(it);
  } else {
    return;
  }
  MetadataChanged();
}

void Instance::set_journal(InstanceJournal* journal) {
  journal_ = journal;
  replicas_->set_journal(journal);
  backups_->set_journal(journal);
}

Status Instance::DropRowRange(std::string_view table, std::string_view prefix) {
  auto previous = drops_.find(table);
  if (previous != drops_.end() && !replicas_->HasApplied(previous->second)) {
    return Unavailable("A DropRowRange operation is already ongoing");
  }
  BTSIM_ASSIGN_OR_RETURN(cluster::Cluster * cluster, AnyLiveCluster());
  BTSIM_RETURN_IF_ERROR(cluster->DropRowRange(table, prefix));
  drops_[std::string(table)] = replicas_->LogPositions();
  return OkStatus();
}

Result<std::string> Instance::AnyLiveClusterId() const {
  for (const ClusterConfig& c : clusters_) {
    if (!replicas_->IsDown(c.id)) return c.id;
  }
  return Unavailable("every cluster of instance '" + name_ +
                     "' is unavailable");
}

Result<cluster::Cluster*> Instance::AnyLiveCluster() {
  for (const ClusterConfig& c : clusters_) {
    if (!replicas_->IsDown(c.id)) return replicas_->Find(c.id);
  }
  return Unavailable("every cluster of instance '" + name_ +
                     "' is unavailable");
}

Status Instance::AddCluster(const ClusterConfig& config) {
  if (config.nodes < 1) {
    return InvalidArgument(
        "cluster.serve_nodes: a cluster needs at least "
        "one node");
  }
  BTSIM_RETURN_IF_ERROR(replicas_->AddCluster({config.id, config.zone}));
  clusters_.push_back(config);
  route_candidates_version_ = kStale;
  capacity_.try_emplace(config.id, storage_, config.nodes);
  profiles_.SetClusters(IdsOf(clusters_));
  MetadataChanged();
  return OkStatus();
}

Status Instance::RemoveCluster(std::string_view id) {
  BTSIM_RETURN_IF_ERROR(replicas_->RemoveCluster(id));
  std::erase_if(clusters_, [&](const ClusterConfig& c) { return c.id == id; });
  route_candidates_version_ = kStale;
  capacity_by_origin_.clear();
  if (auto it = capacity_.find(id); it != capacity_.end()) capacity_.erase(it);
  profiles_.SetClusters(IdsOf(clusters_));
  for (auto& [zone, health] : front_ends_) health.Forget(id);
  faults_.Forget(id);
  backups_->DropCluster(id);
  MetadataChanged();
  return OkStatus();
}

Status Instance::SetNodes(std::string_view id, int nodes) {
  if (nodes < 1) {
    return InvalidArgument("serve_nodes: a cluster needs at least one node");
  }
  for (ClusterConfig& c : clusters_) {
    if (c.id == id) {
      c.nodes = nodes;
      if (auto it = capacity_.find(id); it != capacity_.end()) {
        it->second.model.SetNodes(nodes);
      }
      MetadataChanged();
      return OkStatus();
    }
  }
  return NotFound("cluster '" + std::string(id) + "' not found");
}

std::vector<ClusterConfig> Instance::Clusters() const { return clusters_; }

Instance::Capacity* Instance::CapacityFor(std::string_view cluster,
                                          std::string_view table,
                                          sim::Time now) {
  auto capacity = capacity_.find(cluster);
  if (capacity == capacity_.end()) return nullptr;
  return Prepare(capacity->second, cluster, table, now);
}

Instance::Capacity* Instance::Prepare(Capacity& cap, std::string_view cluster,
                                      std::string_view table, sim::Time now) {
  if (cap.cluster == nullptr) {
    cap.cluster = replicas_->Find(cluster);
    if (cap.cluster == nullptr) return nullptr;
  }
  cluster::Cluster* c = cap.cluster;
  if (cap.tables_version != c->tables_version() || cap.table == nullptr ||
      !SameBytes(cap.table_id, table)) {
    auto t = c->GetTable(table);
    if (!t.ok()) return nullptr;
    cap.tables_version = c->tables_version();
    cap.table_id.assign(table);
    cap.table = *t;
    cap.table_hash = TableHash(table);
  }
  // No timer of its own: the first charge of each bucket rebalances.
  const int64_t bucket =
      sim::NanosSinceEpoch(now) / cluster::NodeModel::kBucket.count();
  if (bucket != cap.last_rebalance_bucket) {
    cap.last_rebalance_bucket = bucket;
    cap.model.Rebalance(now);
  }
  return &cap;
}

sim::Time Instance::Charge(std::string_view cluster, std::string_view table,
                           std::string_view row_key, cluster::OpKind kind,
                           int64_t units) {
  const sim::Time now = scheduler_.Now();
  return SubmitTo(CapacityFor(cluster, table, now), row_key, kind, units, now);
}

sim::Time Instance::SubmitTo(Capacity* cap, std::string_view row_key,
                             cluster::OpKind kind, int64_t units,
                             sim::Time now) {
  if (cap == nullptr) return now;
  return cap->model.Submit(
      now, cap->table->TabletStartHash(row_key, cap->table_hash), kind, units);
}

cluster::NodeModel::Admission Instance::Admit(
    std::string_view cluster, std::string_view table, std::string_view row_key,
    cluster::OpKind kind, int64_t units, sim::Time deadline) {
  const sim::Time now = scheduler_.Now();
  Capacity* cap = CapacityFor(cluster, table, now);
  if (cap == nullptr)
    return {cluster::NodeModel::Admission::Outcome::kServed, now, now};
  return cap->model.Admit(now,
                          cap->table->TabletStartHash(row_key, cap->table_hash),
                          kind, units, deadline, node_queue_limit_);
}

void Instance::ChargeRows(std::string_view cluster, std::string_view table,
                          std::span<const std::string_view> row_keys,
                          cluster::OpKind kind) {
  if (row_keys.empty()) return;
  const sim::Time now = scheduler_.Now();
  Capacity* cap = CapacityFor(cluster, table, now);
  if (cap == nullptr) return;
  for (std::string_view key : row_keys) {
    cap->model.Submit(now, cap->table->TabletStartHash(key, cap->table_hash),
                      kind, 1);
  }
}

void Instance::AddObserver(InstanceObserver* observer) {
  observers_.push_back(observer);
  records_calls_ = records_calls_ || observer->RecordsCalls();
}

void Instance::RemoveObserver(InstanceObserver* observer) {
  std::erase(observers_, observer);
  records_calls_ =
      std::any_of(observers_.begin(), observers_.end(),
                  [](const InstanceObserver* o) { return o->RecordsCalls(); });
}

void Instance::ReportRequest(const RequestReport& request) {
  for (InstanceObserver* o : observers_) o->OnRequest(request);
}

void Instance::OnApplied(const replication::AppliedInfo& info) {
  for (InstanceObserver* o : observers_) o->OnReplicated(info);
}

std::optional<sim::Time> Instance::QueueReplicated(
    uint32_t peer_number, std::string_view peer,
    std::span<const cluster::CommitRecord* const> records) {
  const sim::Time now = scheduler_.Now();
  // The capacity of `peer`, found by number: this runs for every batch.
  if (peer_number >= capacity_by_origin_.size()) {
    capacity_by_origin_.resize(peer_number + 1, nullptr);
  }
  Capacity*& found = capacity_by_origin_[peer_number];
  if (found == nullptr) {
    auto it = capacity_.find(peer);
    if (it == capacity_.end()) return now;
    found = &it->second;
  }
  // One unit per row mutation, submitted once per tablet (n units at once
  // leave a node model as n submits of one would); schema changes and
  // DropRowRange (no rows of their own) cost nothing.
  sim::Time done = now;
  cluster::NodeModel& model = found->model;
  auto submit = [&](uint64_t tablet, int64_t units) {
    done = std::max(
        done,
        model.Submit(now, tablet, cluster::OpKind::kReplicationApply, units));
  };
  batch_tablets_.clear();
  for (const cluster::CommitRecord* record : records) {
    if (record->kind != cluster::CommitRecord::Kind::kMutateRow) continue;
    Capacity* cap = Prepare(*found, peer, record->table, now);
    if (cap == nullptr) continue;
    batch_tablets_.push_back(
        cap->table->TabletStartHash(record->row_key, cap->table_hash));
  }
  if (queue_on_nodes_) {
    // Nodes whose queues are full take no replicated work either: the
    // batch waits in the origin's log and comes again.
    for (uint64_t tablet : batch_tablets_) {
      const int node = model.NodeOf(tablet);
      if (node >= 0 && model.BusyUntil(node) - now > node_queue_limit_) {
        return std::nullopt;
      }
    }
  }
  for (uint64_t tablet : batch_tablets_) {
    if (!tablet_units_.Add(tablet)) {
      tablet_units_.Drain(submit);
      tablet_units_.Add(tablet);
    }
  }
  tablet_units_.Drain(submit);
  return queue_on_nodes_ ? done : now;
}

const cluster::NodeModel* Instance::Nodes(std::string_view cluster) const {
  auto it = capacity_.find(cluster);
  return it == capacity_.end() ? nullptr : &it->second.model;
}

double Instance::CpuLoad(std::string_view cluster) const {
  const cluster::NodeModel* model = Nodes(cluster);
  return model == nullptr ? 0 : model->CpuLoad(scheduler_.Now());
}

double Instance::HottestNodeLoad(std::string_view cluster) const {
  const cluster::NodeModel* model = Nodes(cluster);
  return model == nullptr ? 0 : model->HottestNodeLoad(scheduler_.Now());
}

std::string_view Instance::ZoneOr(std::string_view client_zone) const {
  return client_zone.empty() ? std::string_view(client_zone_) : client_zone;
}

appprofile::ClusterHealth& Instance::FrontEnd(std::string_view client_zone) {
  const std::string_view zone = ZoneOr(client_zone);
  auto it = front_ends_.find(zone);
  if (it == front_ends_.end()) {
    it = front_ends_
             .emplace(std::string(zone),
                      appprofile::ClusterHealth(detector_options_))
             .first;
  }
  return it->second;
}

void Instance::ObserveOutcome(std::string_view client_zone,
                              std::string_view cluster, StatusCode code) {
  if (detector_ == InstanceConfig::Detector::kOracle || cluster.empty()) {
    return;
  }
  appprofile::ClusterHealth& health = FrontEnd(client_zone);
  if (health.RecordOutcome(cluster, code, scheduler_.Now())) {
    for (InstanceObserver* o : observers_) {
      o->OnHealthChange(ZoneOr(client_zone), cluster, /*ejected=*/true);
    }
  }
  if (health.AnyEjected() && !probing_) {
    probing_ = true;
    scheduler_.RunAfter(detector_options_.probe_interval,
                        [this, alive = alive_] {
                          if (*alive) ProbeEjected();
                        });
  }
}

bool Instance::Admitted(std::string_view client_zone,
                        std::string_view cluster) const {
  auto it = front_ends_.find(ZoneOr(client_zone));
  return it == front_ends_.end() || it->second.Admitted(cluster);
}

std::map<std::string, std::vector<appprofile::ClusterHealth::ClusterView>>
Instance::FrontEndViews() const {
  std::map<std::string, std::vector<appprofile::ClusterHealth::ClusterView>>
      views;
  for (const auto& [zone, health] : front_ends_) views[zone] = health.Views();
  return views;
}

void Instance::EndProbe(const std::string& zone, const std::string& cluster,
                        bool ok) {
  const bool readmitted =
      FrontEnd(zone).RecordProbe(cluster, ok, scheduler_.Now());
  for (InstanceObserver* o : observers_) {
    o->OnProbe(zone, cluster, ok);
    if (readmitted) o->OnHealthChange(zone, cluster, /*ejected=*/false);
  }
}

void Instance::ProbeEjected() {
  probing_ = false;
  bool any = false;
  for (auto& [zone, health] : front_ends_) {
    for (std::string& cluster : health.ProbesDue(scheduler_.Now())) {
      Probe(zone, std::move(cluster));
    }
    any = any || health.AnyEjected();
  }
  if (any) {
    probing_ = true;
    scheduler_.RunAfter(detector_options_.probe_interval,
                        [this, alive = alive_] {
                          if (*alive) ProbeEjected();
                        });
  }
}

void Instance::Probe(std::string zone, std::string cluster) {
  std::string_view cluster_zone;
  for (const ClusterConfig& c : clusters_) {
    if (c.id == cluster) cluster_zone = c.zone;
  }
  if (cluster_zone.empty()) {  // removed since
    FrontEnd(zone).Forget(cluster);
    return;
  }
  const sim::LatencyModel link = transport_->LatencyOf(zone, cluster_zone);
  const sim::Duration there = link.Sample(probe_rng_);
  const sim::Duration back = link.Sample(probe_rng_);
  const sim::Time sent = scheduler_.Now();
  // Ends the probe once: with its answer, or failed at the timeout.
  auto answered = std::make_shared<bool>(false);
  scheduler_.RunAfter(detector_options_.probe_timeout,
                      [this, alive = alive_, zone, cluster, answered] {
                        if (!*alive || *answered) return;
                        *answered = true;
                        EndProbe(zone, cluster, false);
                      });
  if (faults_.RequestLost(zone, "", cluster)) return;
  scheduler_.RunAfter(there, [this, alive = alive_, zone, cluster, back, sent,
                              answered] {
    if (!*alive || *answered) return;
    Reception r = Receive(cluster, "PingAndWarm", probe_rng_);
    if (r.kind == Reception::Kind::kLost) return;
    if (faults_.ReplyLost(zone, "", cluster)) return;
    const bool ok = r.kind == Reception::Kind::kServed;
    const sim::Duration delay = r.added + back;
    if (scheduler_.Now() + delay - sent >= detector_options_.probe_timeout) {
      return;  // the timeout fails it
    }
    scheduler_.RunAfter(delay, [this, alive, zone, cluster, ok, answered] {
      if (!*alive || *answered) return;
      *answered = true;
      EndProbe(zone, cluster, ok);
    });
  });
}

}  // namespace btsim::instance
