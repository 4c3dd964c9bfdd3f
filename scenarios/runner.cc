#include "scenarios/runner.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <utility>

#include "cluster/filter.h"
#include "cluster/row_set.h"
#include "scenarios/instance_config.h"
#include "scenarios/row_reader.h"
#include "scenarios/run_context.h"
#include "scenarios/scenario_fields.h"
#include "scenarios/sim_client.h"

namespace btsim::scenarios {

std::string_view RunContext::ZoneOf(std::string_view cluster) const {
  const replication::ClusterSpec* spec = instance->fabric().Spec(cluster);
  return spec == nullptr ? std::string_view() : std::string_view(spec->zone);
}

namespace {

namespace v1 = ::btsim::scenario::v1;
namespace cfg = ::btsim::config::v1;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr sim::Nanos kPollInterval = milliseconds(100);
constexpr sim::Nanos kSampleInterval = seconds(1);
constexpr sim::Nanos kCompactionInterval = seconds(10);
constexpr sim::Nanos kDefaultSettle = minutes(10);
constexpr sim::Nanos kDefaultNodeRecovery = minutes(5);
constexpr sim::Nanos kDefaultTokenInterval = seconds(10);

class Observer : public instance::InstanceObserver {
 public:
  explicit Observer(RunContext& context) : context_(context) {}
  void OnRoute(std::string_view, std::string_view) override {}
  void OnFailover(std::string_view profile, std::string_view from,
                  std::string_view to) override {
    context_.history->failovers.push_back(
        Failover{context_.Elapsed(), std::string(profile), std::string(from),
                 std::string(to)});
  }
  void OnReplicated(const replication::AppliedInfo& info) override {
    // This runs for every replicated entry: the link is found by the
    // clusters' numbers, and by their names (links_) only the first time.
    Link* found = nullptr;
    for (const NumberedLink& n : by_number_) {
      if (n.origin == info.origin_number && n.peer == info.peer_number) {
        found = n.link;
        break;
      }
    }
    if (found == nullptr) {
      auto from = links_.find(info.origin);
      if (from == links_.end()) {
        from = links_.emplace(std::string(info.origin), PeerLinks()).first;
      }
      auto to = from->second.find(info.peer);
      if (to == from->second.end()) {
        to = from->second.emplace(std::string(info.peer), Link()).first;
      }
      found = &to->second;
      by_number_.push_back({info.origin_number, info.peer_number, found});
    }
    Link& link = *found;
    const sim::Nanos delay = info.applied_at - info.committed_at();
    ++link.applied;
    link.delay_sum += delay;
    link.delay_max = std::max(link.delay_max, delay);
  }
  // What happened on `from` -> `to` since the last call (then reset).
  LinkSample TakeLink(const std::string& from, const std::string& to) {
    LinkSample sample;
    sample.from = from;
    sample.to = to;
    auto f = links_.find(from);
    if (f == links_.end()) return sample;
    auto it = f->second.find(to);
    if (it != f->second.end()) {
      sample.applied = it->second.applied;
      sample.delay_sum = it->second.delay_sum;
      sample.delay_max = it->second.delay_max;
      it->second = Link();
    }
    return sample;
  }

 private:
  struct Link {
    int64_t applied = 0;
    sim::Nanos delay_sum{0};
    sim::Nanos delay_max{0};
  };
  using PeerLinks = std::map<std::string, Link, std::less<>>;
  // A link of links_ by the numbers of its clusters (AppliedInfo), which
  // are never reused: an id re-added later gets new numbers and finds its
  // old entry in links_ by name.
  struct NumberedLink {
    uint32_t origin;
    uint32_t peer;
    Link* link;  // a node of links_ (never erased)
  };
  RunContext& context_;
  // By names; the sampler reads it by name (TakeLink).
  std::map<std::string, PeerLinks, std::less<>> links_;  // origin -> peer
  std::vector<NumberedLink> by_number_;
};

class Runner {
 public:
  Runner(const LoadedScenario& scenario, uint64_t seed, sim::Nanos duration,
         const RunOptions& options)
      : scenario_(scenario),
        options_(options),
        s_(scenario.proto),
        seed_(seed),
        duration_(duration),
        scheduler_(kRunEpoch),
        rng_(seed),
        observer_(context_) {
    context_.scheduler = &scheduler_;
    context_.history = &history_;
    context_.trace = &trace_;
  }

  Result<RunOutcome> Run();

 private:
  Status Setup();
  void DoStep(int index);
  void AddEvent(Event event);
  // Records in events_[index].end when everything committed before now has
  // been applied everywhere.
  void WatchCatchUp(size_t event_index);
  // Records CPU and replication per link, every kSampleInterval until the
  // run ends.
  void Sample();
  // Calls options_.on_sample every options_.sample_every until the run ends.
  void SampleExternally();
  void Compact();
  void WaitForToken(size_t event_index, std::map<std::string, uint64_t> token,
                    std::vector<uint64_t> writes, sim::Nanos interval);
  // True when `op`'s write (or a newer one) is readable on `cluster`.
  bool Visible(cluster::Cluster& cluster, const Operation& op);
  std::vector<SimClient*> ClientsOf(const std::string& group);
  // Write operations committed on `cluster` that no other cluster has
  // applied yet (for RPO).
  std::vector<uint64_t> Unreplicated(const std::string& cluster);
  void Settle();
  void Snapshot();
  Status SetCluster(const std::string& id, bool down);

  const LoadedScenario& scenario_;
  const RunOptions& options_;
  const v1::Scenario& s_;
  uint64_t seed_;
  sim::Nanos duration_;
  sim::VirtualScheduler scheduler_;
  sim::Rng rng_;
  sim::Fingerprint trace_;
  // The run's fingerprint (filled by Snapshot).
  sim::Fingerprint fingerprint_;
  History history_;
  RunContext context_;
  Observer observer_;
  std::unique_ptr<instance::Instance> instance_;
  std::vector<std::unique_ptr<ClientGroup>> groups_;
  std::vector<std::unique_ptr<SimClient>> clients_;
  std::map<std::string, std::vector<SimClient*>> by_group_;
  // Each table's first family: the one clients write.
  std::map<std::string, std::string> family_of_;
  // Failed nodes per cluster, and clusters down because their only node
  // failed.
  std::map<std::string, int> failed_nodes_;
  std::set<std::string> down_by_node_failure_;
  bool finished_ = false;
};

Status Runner::Setup() {
  instance::InstanceConfig config = scenario_.instance.config;
  BTSIM_ASSIGN_OR_RETURN(
      instance_, instance::Instance::Create(scenario_.name, scheduler_,
                                            rng_.Fork("instance"), config));
  instance_->AddObserver(&observer_);
  for (instance::InstanceObserver* o : options_.observers) {
    instance_->AddObserver(o);
  }
  context_.instance = instance_.get();

  // Tables: created on one cluster, then applied everywhere at once.
  BTSIM_ASSIGN_OR_RETURN(std::string first, instance_->AnyLiveClusterId());
  cluster::Cluster* origin = instance_->fabric().Find(first);
  for (int i = 0; i < s_.tables_size(); ++i) {
    const v1::Table& t = s_.tables(i);
    family_of_[t.id()] = t.families(0).name();
    std::vector<cluster::FamilyModification> families;
    for (const v1::Family& f : t.families()) {
      families.push_back(cluster::FamilyModification{
          f.name(), cluster::FamilyModification::Kind::kCreate,
          ToGcRule(f.gc_rule())});
    }
    std::vector<std::string> splits(t.initial_splits().begin(),
                                    t.initial_splits().end());
    std::sort(splits.begin(), splits.end());
    if (Status s = origin->CreateTable(t.id(), families, splits); !s.ok()) {
      return InvalidArgument("tables[" + std::to_string(i) +
                             "]: " + s.message());
    }
  }
  instance_->fabric().ApplyNewestEverywhere(first);

  // Clients.
  const std::string default_zone = instance_->client_zone();
  for (const v1::Client& c : s_.clients()) {
    BTSIM_ASSIGN_OR_RETURN(std::unique_ptr<ClientGroup> group,
                           MakeClientGroup(c, s_, default_zone));
    const int count = c.count() == 0 ? 1 : c.count();
    for (int i = 0; i < count; ++i) {
      const std::string name = count == 1 && c.count() == 0
                                   ? c.name()
                                   : c.name() + "-" + std::to_string(i);
      clients_.push_back(std::make_unique<SimClient>(
          context_, *group, name, rng_.Fork("client/" + name)));
      by_group_[c.name()].push_back(clients_.back().get());
    }
    groups_.push_back(std::move(group));
  }
  // Room for the operations open-loop clients are expected to issue (10 %
  // over the mean), so that the history does not move them as it grows.
  // Capacity only: untouched memory costs nothing, and nothing depends on
  // it.
  {
    double expected = 0;
    const double seconds = std::chrono::duration<double>(duration_).count();
    for (const v1::Client& c : s_.clients()) {
      if (c.workload().rate_case() != v1::Workload::kOpsPerSecond) continue;
      expected += (c.count() == 0 ? 1 : c.count()) *
                  c.workload().ops_per_second() * seconds;
    }
    constexpr double kMaxReserved = 1e8;
    history_.operations.reserve(
        static_cast<size_t>(std::min(expected * 1.1, kMaxReserved)) + 1024);
  }

  // Strong reads are promised when every client's profile routes to one
  // and the same cluster and no profile changes.
  bool promised = true;
  std::set<std::string> targets;
  for (const auto& group : groups_) {
    auto profile = instance_->profiles().Get(group->profile);
    if (!profile.ok() ||
        profile->routing != appprofile::AppProfile::Routing::kSingleCluster) {
      promised = false;
      break;
    }
    targets.insert(profile->cluster_id);
  }
  for (const v1::Step& step : s_.timeline()) {
    if (step.has_update_app_profile()) promised = false;
  }
  history_.strong_reads_promised = promised && targets.size() == 1;
  return OkStatus();
}

std::vector<SimClient*> Runner::ClientsOf(const std::string& group) {
  auto it = by_group_.find(group);
  return it == by_group_.end() ? std::vector<SimClient*>() : it->second;
}

void Runner::AddEvent(Event event) {
  trace_.AddInt(event.at.count());
  trace_.Add(EventKindName(event.kind));
  trace_.Add(event.cluster);
  trace_.Add(event.peer);
  trace_.Add(event.detail);
  history_.events.push_back(std::move(event));
}

Status Runner::SetCluster(const std::string& id, bool down) {
  return instance_->fabric().SetDown(id, down);
}

std::vector<uint64_t> Runner::Unreplicated(const std::string& cluster) {
  auto& fabric = instance_->fabric();
  uint64_t replicated = 0;  // the furthest any peer has applied
  for (const std::string& peer : fabric.ClusterIds()) {
    if (peer != cluster) {
      replicated = std::max(replicated, fabric.Applied(cluster, peer));
    }
  }
  std::vector<uint64_t> ids;
  for (const Operation& op : history_.operations) {
    if (op.version != 0 && op.cluster == cluster &&
        op.log_position > replicated) {
      ids.push_back(op.id);
    }
  }
  return ids;
}

void Runner::WatchCatchUp(size_t event_index) {
  auto positions = instance_->fabric().LogPositions();
  // The pending task owns the poll; the poll refers to itself weakly (a
  // strong self-reference would never be freed).
  auto poll = std::make_shared<std::function<void()>>();
  std::weak_ptr<std::function<void()>> weak = poll;
  *poll = [this, event_index, positions, weak] {
    if (instance_->fabric().HasApplied(positions)) {
      history_.events[event_index].end = context_.Elapsed();
      return;
    }
    if (finished_) return;
    if (auto self = weak.lock()) {
      scheduler_.RunAfter(kPollInterval, [self] { (*self)(); });
    }
  };
  (*poll)();
}

bool Runner::Visible(cluster::Cluster& cluster, const Operation& op) {
  cluster::RowSet rows;
  rows.AddKey(op.row.str());
  bool visible = false;
  // A newer timestamp supersedes the write; the same one is the same cell
  // (this write, or a later commit of it that won).
  Status s =
      ReadRowStates(cluster, op.table(), family_of_[std::string(op.table())],
                    &rows, [&](std::string_view, const RowRead& row) {
                      visible = !row.tag.empty() &&
                                row.timestamp_micros >= op.timestamp_micros;
                      return true;
                    });
  return s.ok() && visible;
}

void Runner::WaitForToken(size_t event_index,
                          std::map<std::string, uint64_t> token,
                          std::vector<uint64_t> writes, sim::Nanos interval) {
  if (instance_->fabric().HasApplied(token)) {
    Event& event = history_.events[event_index];
    event.end = context_.Elapsed();
    int64_t violations = 0;
    for (uint64_t id : writes) {
      const Operation& op = history_.operations[id];
      for (const std::string& cluster_id : instance_->fabric().ClusterIds()) {
        cluster::Cluster* cluster = instance_->fabric().Find(cluster_id);
        if (cluster != nullptr && !Visible(*cluster, op)) ++violations;
      }
    }
    event.violations = violations;
    trace_.AddInt(event.end.count());
    trace_.AddInt(violations);
    return;
  }
  if (finished_) return;
  scheduler_.RunAfter(interval, [this, event_index, token = std::move(token),
                                 writes = std::move(writes), interval] {
    WaitForToken(event_index, token, writes, interval);
  });
}

void Runner::Sample() {
  if (finished_) return;
  const std::vector<std::string> ids = instance_->fabric().ClusterIds();
  for (const std::string& id : ids) {
    history_.cpu.push_back(CpuSample{context_.Elapsed(), id,
                                     instance_->CpuLoad(id),
                                     instance_->HottestNodeLoad(id)});
  }
  for (const std::string& from : ids) {
    for (const std::string& to : ids) {
      if (from == to) continue;
      LinkSample link = observer_.TakeLink(from, to);
      link.at = context_.Elapsed();
      link.backlog =
          static_cast<int64_t>(instance_->fabric().Backlog(from, to));
      history_.links.push_back(std::move(link));
    }
  }
  scheduler_.RunAfter(kSampleInterval, [this] { Sample(); });
}

void Runner::SampleExternally() {
  if (finished_) return;
  options_.on_sample(scheduler_.Now(), *instance_);
  scheduler_.RunAfter(options_.sample_every, [this] { SampleExternally(); });
}

void Runner::Compact() {
  instance_->fabric().CompactAll();
  if (!finished_ && context_.Elapsed() < duration_) {
    scheduler_.RunAfter(kCompactionInterval, [this] { Compact(); });
  }
}

void Runner::DoStep(int index) {
  const v1::Step& step = s_.timeline(index);
  Event event;
  event.at = context_.Elapsed();
  event.label = step.label();
  auto& fabric = instance_->fabric();
  auto describe = [&](std::string text) {
    if (event.label.empty()) event.label = std::move(text);
  };
  bool watch = false;
  switch (step.action_case()) {
    case v1::Step::kClusterDown:
      event.kind = EventKind::kClusterDown;
      event.cluster = step.cluster_down().cluster();
      describe("cluster " + event.cluster + " down");
      event.unreplicated_ops = Unreplicated(event.cluster);
      (void)SetCluster(event.cluster, true);
      watch = true;
      break;
    case v1::Step::kClusterUp:
      event.kind = EventKind::kClusterUp;
      event.cluster = step.cluster_up().cluster();
      describe("cluster " + event.cluster + " up");
      (void)SetCluster(event.cluster, false);
      down_by_node_failure_.erase(event.cluster);
      watch = true;
      break;
    case v1::Step::kPartition:
    case v1::Step::kHeal: {
      const bool heal = step.has_heal();
      const v1::Partition& p = heal ? step.heal() : step.partition();
      event.kind = heal ? EventKind::kHeal : EventKind::kPartition;
      event.cluster = p.a();
      event.peer = p.b();
      const std::string za(context_.ZoneOf(p.a()));
      const std::string zb(context_.ZoneOf(p.b()));
      if (heal) {
        instance_->transport().Heal(za, zb);
        describe("heal " + p.a() + " <-> " + p.b());
      } else {
        instance_->transport().Partition(za, zb, p.one_way());
        describe("partition " + p.a() + (p.one_way() ? " -> " : " <-> ") +
                 p.b());
      }
      watch = true;
      break;
    }
    case v1::Step::kLatency: {
      const cfg::Link& link = step.latency();
      event.kind = EventKind::kLatency;
      event.cluster = link.from_cluster();
      event.peer = link.to_cluster();
      auto model = ConfigLatency(link.latency(), "latency");
      if (model.ok()) {
        instance_->transport().SetLatency(context_.ZoneOf(link.from_cluster()),
                                          context_.ZoneOf(link.to_cluster()),
                                          *model, link.one_way());
      }
      describe("latency " + link.from_cluster() +
               (link.one_way() ? " -> " : " <-> ") + link.to_cluster());
      break;
    }
    case v1::Step::kNodeFailure: {
      const std::string& id = step.node_failure().cluster();
      event.kind = EventKind::kNodeFailure;
      event.cluster = id;
      describe("a node of " + id + " fails");
      const sim::Nanos recovery = step.node_failure().has_recovery()
                                      ? ToNanos(step.node_failure().recovery())
                                      : kDefaultNodeRecovery;
      const cluster::NodeModel* nodes = instance_->Nodes(id);
      const int count = nodes == nullptr ? 1 : nodes->nodes();
      const bool whole_cluster = count <= 1;
      if (whole_cluster) {
        // The only node: the cluster cannot serve until a replacement joins.
        event.unreplicated_ops = Unreplicated(id);
        (void)SetCluster(id, true);
        down_by_node_failure_.insert(id);
        watch = true;
      } else {
        (void)instance_->SetNodes(id, count - 1);
        ++failed_nodes_[id];
      }
      scheduler_.RunAfter(recovery, [this, id, whole_cluster] {
        Event recovered;
        recovered.at = context_.Elapsed();
        recovered.kind = EventKind::kNodeRecovery;
        recovered.cluster = id;
        recovered.label = "a replacement node joins " + id;
        if (whole_cluster) {
          if (down_by_node_failure_.erase(id) != 0) (void)SetCluster(id, false);
        } else if (failed_nodes_[id] > 0) {
          --failed_nodes_[id];
          const cluster::NodeModel* nodes = instance_->Nodes(id);
          if (nodes != nullptr)
            (void)instance_->SetNodes(id, nodes->nodes() + 1);
        }
        AddEvent(std::move(recovered));
      });
      break;
    }
    case v1::Step::kResize: {
      event.kind = EventKind::kResize;
      event.cluster = step.resize().cluster();
      event.detail = std::to_string(step.resize().nodes());
      describe("resize " + event.cluster + " to " + event.detail + " nodes");
      (void)instance_->SetNodes(event.cluster, step.resize().nodes());
      break;
    }
    case v1::Step::kAddCluster: {
      const cfg::Cluster& c = step.add_cluster();
      event.kind = EventKind::kAddCluster;
      event.cluster = c.id();
      describe("add cluster " + c.id() + " in " + c.zone());
      Status s = instance_->AddCluster(instance::ClusterConfig{
          c.id(), c.zone(), c.nodes() == 0 ? 1 : c.nodes()});
      if (!s.ok()) event.detail = s.message();
      watch = true;
      break;
    }
    case v1::Step::kRemoveCluster:
      event.kind = EventKind::kRemoveCluster;
      event.cluster = step.remove_cluster().cluster();
      describe("remove cluster " + event.cluster);
      event.unreplicated_ops = Unreplicated(event.cluster);
      if (Status s = instance_->RemoveCluster(event.cluster); !s.ok()) {
        event.detail = s.message();
      }
      break;
    case v1::Step::kUpdateAppProfile: {
      const cfg::AppProfile& p = step.update_app_profile();
      event.kind = EventKind::kUpdateAppProfile;
      event.detail = p.id();
      describe("update app profile " + p.id());
      // Convert through the instance description's own rules.
      cfg::InstanceConfig probe;
      for (const instance::ClusterConfig& c : instance_->Clusters()) {
        cfg::Cluster* added = probe.add_clusters();
        added->set_id(c.id);
        added->set_zone(c.zone);
      }
      cfg::AppProfile* copy = probe.add_app_profiles();
      *copy = p;
      copy->set_id("update");
      auto converted = ConvertInstanceConfig(probe);
      if (!converted.ok() || converted->profiles.empty()) {
        event.detail += ": " + converted.status().message();
        break;
      }
      appprofile::ProfileUpdate update;
      update.profile = converted->profiles[0];
      update.profile.id = p.id();
      update.routing = true;
      update.description = !p.description().empty();
      auto updated = instance_->profiles().Update(update,
                                                  /*ignore_warnings=*/true);
      if (!updated.ok()) event.detail += ": " + updated.status().message();
      break;
    }
    case v1::Step::kSetGcRule: {
      const v1::SetGcRule& g = step.set_gc_rule();
      event.kind = EventKind::kSetGcRule;
      event.table = g.table();
      event.detail = g.family();
      describe("GC rule of " + g.table() + ":" + g.family());
      auto id = instance_->AnyLiveClusterId();
      if (!id.ok()) {
        event.detail += ": " + id.status().message();
        break;
      }
      const cluster::FamilyModification mod{
          g.family(), cluster::FamilyModification::Kind::kUpdate,
          ToGcRule(g.gc_rule())};
      Status s = fabric.Find(*id)->ModifyColumnFamilies(g.table(), {&mod, 1});
      if (!s.ok()) event.detail += ": " + s.message();
      fabric.ApplyNewestEverywhere(*id);
      break;
    }
    case v1::Step::kDropRowRange: {
      event.kind = EventKind::kDropRowRange;
      event.table = step.drop_row_range().table();
      event.detail = step.drop_row_range().prefix();
      describe("drop rows of " + event.table +
               (event.detail.empty() ? "" : " under '" + event.detail + "'"));
      Status s = instance_->DropRowRange(event.table, event.detail);
      if (!s.ok()) event.label += " (refused: " + s.message() + ")";
      break;
    }
    case v1::Step::kStartClient:
    case v1::Step::kStopClient: {
      const bool start = step.has_start_client();
      const std::string& name =
          start ? step.start_client().client() : step.stop_client().client();
      event.kind = start ? EventKind::kStartClient : EventKind::kStopClient;
      event.detail = name;
      describe((start ? "start " : "stop ") + name);
      for (SimClient* c : ClientsOf(name)) {
        if (start) {
          c->Start();
        } else {
          c->Stop();
        }
      }
      break;
    }
    case v1::Step::kChangeWorkload: {
      const std::string& name = step.change_workload().client();
      event.kind = EventKind::kChangeWorkload;
      event.detail = name;
      describe("new workload for " + name);
      for (auto& group : groups_) {
        if (group->name != name) continue;
        group->workload = step.change_workload().workload();
        auto keys = KeyGenerator::Create(group->workload.keys(), "keys");
        if (keys.ok()) group->keys = std::move(*keys);
        ++group->generation;
      }
      for (SimClient* c : ClientsOf(name)) c->Restart();
      break;
    }
    case v1::Step::kWaitForReplication: {
      event.kind = EventKind::kTokenWait;
      event.table = step.wait_for_replication().table();
      describe("wait for replication of " + event.table);
      std::vector<uint64_t> writes;
      for (const Operation& op : history_.operations) {
        // Finished (attempts > 0) and acknowledged.
        if (op.attempts > 0 && op.ok() && !op.written().empty() &&
            op.table() == event.table && op.version != 0) {
          writes.push_back(op.id);
        }
      }
      const sim::Nanos interval =
          step.wait_for_replication().has_interval()
              ? ToNanos(step.wait_for_replication().interval())
              : kDefaultTokenInterval;
      const size_t event_index = history_.events.size();
      auto token = fabric.LogPositions();
      AddEvent(std::move(event));
      WaitForToken(event_index, std::move(token), std::move(writes), interval);
      return;
    }
    case v1::Step::ACTION_NOT_SET:
      return;
  }
  const size_t event_index = history_.events.size();
  AddEvent(std::move(event));
  if (watch) WatchCatchUp(event_index);
}

void Runner::Settle() {
  Event settle;
  settle.at = context_.Elapsed();
  settle.kind = EventKind::kSettle;
  settle.label = "clients stop; the run settles";
  for (auto& client : clients_) client->Stop();
  auto& fabric = instance_->fabric();
  if (!s_.settle().keep_faults()) {
    const std::vector<std::string> ids = fabric.ClusterIds();
    for (const std::string& id : ids) (void)SetCluster(id, false);
    down_by_node_failure_.clear();
    for (size_t i = 0; i < ids.size(); ++i) {
      for (size_t j = i + 1; j < ids.size(); ++j) {
        instance_->transport().Heal(context_.ZoneOf(ids[i]),
                                    context_.ZoneOf(ids[j]));
      }
    }
    for (auto& [id, failed] : failed_nodes_) {
      const cluster::NodeModel* nodes = instance_->Nodes(id);
      if (failed > 0 && nodes != nullptr) {
        (void)instance_->SetNodes(id, nodes->nodes() + failed);
      }
      failed = 0;
    }
  }
  AddEvent(std::move(settle));
  const sim::Nanos limit =
      context_.Elapsed() +
      (s_.settle().has_max() ? ToNanos(s_.settle().max()) : kDefaultSettle);
  while (context_.Elapsed() < limit) {
    if (context_.in_flight == 0 && fabric.HasApplied(fabric.LogPositions())) {
      history_.settled = context_.Elapsed();
      break;
    }
    scheduler_.RunUntil(
        std::min(scheduler_.Now() + kPollInterval, kRunEpoch + limit));
  }
  finished_ = true;
  // Operations that never finished.
  for (Operation& op : history_.operations) {
    if (op.attempts == 0) {  // finished operations have attempts >= 1
      op.complete = context_.Elapsed();
      op.code = StatusCode::kUnknown;
      op.message = history_.names->Intern("still in flight when the run ended");
    }
  }
}

void Runner::Snapshot() {
  auto& fabric = instance_->fabric();
  fabric.CompactAll();
  // The run's fingerprint: the trace, then each cluster's id and digest.
  fingerprint_.Add(trace_.Hex());
  ReadFinalState(fabric, family_of_, &history_, &fingerprint_);
}

Result<RunOutcome> Runner::Run() {
  BTSIM_RETURN_IF_ERROR(Setup());
  history_.duration = duration_;

  // The timeline, in time order (same time: file order).
  std::vector<int> order(s_.timeline_size());
  for (int i = 0; i < s_.timeline_size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return ToNanos(s_.timeline(a).at()) < ToNanos(s_.timeline(b).at());
  });
  for (int i : order) {
    scheduler_.RunAfter(ToNanos(s_.timeline(i).at()), [this, i] { DoStep(i); });
  }
  for (int g = 0; g < s_.clients_size(); ++g) {
    if (s_.clients(g).start_stopped()) continue;
    for (SimClient* c : ClientsOf(s_.clients(g).name())) c->Start();
  }
  Sample();
  if (options_.on_sample && options_.sample_every > sim::Nanos(0)) {
    SampleExternally();
  }
  // Compaction applies GC rules and drops deleted data, as in Bigtable.
  scheduler_.RunAfter(kCompactionInterval, [this] { Compact(); });

  scheduler_.RunUntil(kRunEpoch + duration_);
  Settle();
  Snapshot();

  RunOutcome out;
  out.scenario = scenario_.name;
  out.seed = seed_;
  out.fingerprint = fingerprint_.Hex();  // see Snapshot()
  out.client_ops = static_cast<int64_t>(history_.operations.size());
  out.history = std::move(history_);
  // How long the checks take, by the caller's wall clock (if any).
  const double checks_started =
      options_.wall_clock ? options_.wall_clock() : 0.0;
  AllChecks all = RunAllChecks(out.history, s_.expectations());
  out.checks = std::move(all.checks);
  out.expectations = std::move(all.expectations);
  out.visibility = std::move(all.visibility);
  out.k_staleness = std::move(all.k_staleness);
  out.failbacks = std::move(all.failbacks);
  if (options_.wall_clock) {
    out.check_wall_seconds = options_.wall_clock() - checks_started;
  }
  out.passed = std::all_of(out.expectations.begin(), out.expectations.end(),
                           [](const ExpectationResult& e) { return e.pass; });
  return out;
}

}  // namespace

Result<RunOutcome> RunScenario(const LoadedScenario& scenario,
                               const RunOptions& options) {
  uint64_t seed = options.seed ? *options.seed : scenario.proto.seed();
  if (seed == 0) seed = 1;
  const sim::Nanos duration =
      options.duration ? *options.duration : ToNanos(scenario.proto.duration());
  if (duration <= sim::Nanos(0)) {
    return InvalidArgument("duration: must be positive");
  }
  Runner runner(scenario, seed, duration, options);
  return runner.Run();
}

}  // namespace btsim::scenarios
