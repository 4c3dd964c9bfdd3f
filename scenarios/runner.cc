#include "scenarios/runner.h"

#include <algorithm>
#include <map>
#include <memory>
#include <set>
#include <string_view>
#include <utility>
#include <vector>

#include "scenarios/offered_load.h"
#include "scenarios/row_reader.h"
#include "scenarios/run_context.h"
#include "scenarios/scenario_fields.h"
#include "scenarios/sim_client.h"
#include "scenarios/steps.h"

namespace btsim::scenarios {

std::string_view RunContext::ZoneOf(std::string_view cluster) const {
  const replication::ClusterSpec* spec = instance->replicas().Spec(cluster);
  return spec == nullptr ? std::string_view() : std::string_view(spec->zone);
}

namespace {

namespace v1 = ::btsim::scenario::v1;
namespace cfg = ::btsim::config::v1;
using std::chrono::milliseconds;
using std::chrono::minutes;
using std::chrono::seconds;

constexpr sim::Duration kPollInterval = milliseconds(100);
constexpr sim::Duration kSampleInterval = seconds(1);
constexpr sim::Duration kCompactionInterval = seconds(10);
constexpr sim::Duration kDefaultSettle = minutes(10);

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
  void OnHealthChange(std::string_view zone, std::string_view cluster,
                      bool ejected) override {
    context_.history->health_changes.push_back(HealthChange{
        context_.Elapsed(), std::string(zone), std::string(cluster), ejected});
    sim::Fingerprint& trace = *context_.trace;
    trace.AddInt(context_.Elapsed().count());
    trace.Add(ejected ? "ejected" : "readmitted");
    trace.Add(zone);
    trace.Add(cluster);
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
    const sim::Duration delay = info.applied_at - info.committed_at();
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
    sim::Duration delay_sum{0};
    sim::Duration delay_max{0};
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
  Runner(const LoadedScenario& scenario, uint64_t seed, sim::Duration duration,
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
    steps_.context = &context_;
  }

  Result<RunOutcome> Run();

 private:
  Status Setup();
  // Records CPU and replication per link, every kSampleInterval until the
  // run ends.
  void Sample();
  // Calls options_.on_sample every options_.sample_every until the run ends.
  void SampleExternally();
  void Compact();
  void Settle();
  void Snapshot();

  const LoadedScenario& scenario_;
  const RunOptions& options_;
  const v1::Scenario& s_;
  uint64_t seed_;
  sim::Duration duration_;
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
  // What the timeline's steps act on (the clients by group among them).
  StepRun steps_;
};

Status Runner::Setup() {
  instance::InstanceConfig config = scenario_.instance.config;
  config.queue_on_nodes = true;  // virtual time: the node model serves
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
  cluster::Cluster* origin = instance_->replicas().Find(first);
  for (int i = 0; i < s_.tables_size(); ++i) {
    const v1::Table& t = s_.tables(i);
    steps_.family_of[t.id()] = t.families(0).name();
    history_.gc_rules.push_back(GcRuleChange{
        sim::Duration(0), t.id(), ToGcRule(t.families(0).gc_rule())});
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
    instance_->replicas().ApplyNewestEverywhere(first);
  }

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
      steps_.groups[c.name()].clients.push_back(clients_.back().get());
    }
    steps_.groups[c.name()].group = group.get();
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

void Runner::Sample() {
  if (context_.finished) return;
  const std::vector<std::string> ids = instance_->replicas().ClusterIds();
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
          static_cast<int64_t>(instance_->replicas().Backlog(from, to));
      history_.links.push_back(std::move(link));
    }
  }
  scheduler_.RunAfter(kSampleInterval, [this] { Sample(); });
}

void Runner::SampleExternally() {
  if (context_.finished) return;
  options_.on_sample(scheduler_.Now(), *instance_);
  scheduler_.RunAfter(options_.sample_every, [this] { SampleExternally(); });
}

void Runner::Compact() {
  instance_->replicas().CompactAll();
  if (!context_.finished && context_.Elapsed() < duration_) {
    scheduler_.RunAfter(kCompactionInterval, [this] { Compact(); });
  }
}

void Runner::Settle() {
  Event settle;
  settle.at = context_.Elapsed();
  settle.kind = EventKind::kSettle;
  settle.label = "clients stop; the run settles";
  for (auto& client : clients_) client->Stop();
  auto& replicas = instance_->replicas();
  if (!s_.settle().keep_faults()) UndoFaults(steps_);
  steps_.AddEvent(std::move(settle));
  const sim::Duration limit =
      context_.Elapsed() +
      (s_.settle().has_max() ? ToDuration(s_.settle().max()) : kDefaultSettle);
  while (context_.Elapsed() < limit) {
    if (context_.in_flight == 0 &&
        replicas.HasApplied(replicas.LogPositions())) {
      history_.settled = context_.Elapsed();
      break;
    }
    scheduler_.RunUntil(
        std::min(scheduler_.Now() + kPollInterval, kRunEpoch + limit));
  }
  // The loop's last wait reached the limit without a check there.
  if (history_.settled < sim::Duration(0) && context_.in_flight == 0 &&
      replicas.HasApplied(replicas.LogPositions())) {
    history_.settled = context_.Elapsed();
  }
  CheckTokenWaits(steps_);
  steps_.FinishCatchUps();
  context_.finished = true;
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
  auto& replicas = instance_->replicas();
  replicas.CompactAll();
  history_.ended = context_.Elapsed();
  // The run's fingerprint: the trace, then each cluster's id and digest.
  fingerprint_.Add(trace_.Hex());
  ReadFinalState(replicas, steps_.family_of, &history_, &fingerprint_);
}

Result<RunOutcome> Runner::Run() {
  BTSIM_RETURN_IF_ERROR(Setup());
  history_.duration = duration_;

  // The timeline, in time order (same time: file order).
  std::vector<int> order(s_.timeline_size());
  for (int i = 0; i < s_.timeline_size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return ToDuration(s_.timeline(a).at()) < ToDuration(s_.timeline(b).at());
  });
  for (int i : order) {
    scheduler_.RunAfter(ToDuration(s_.timeline(i).at()),
                        [this, i] { ApplyStep(s_.timeline(i), steps_); });
  }
  for (int g = 0; g < s_.clients_size(); ++g) {
    if (s_.clients(g).start_stopped()) continue;
    for (SimClient* c : steps_.groups[s_.clients(g).name()].clients) c->Start();
  }
  Sample();
  if (options_.on_sample && options_.sample_every > sim::Duration(0)) {
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
  // A run that did not settle measured a moment, not an outcome.
  out.passed = out.history.settled >= sim::Duration(0) &&
               std::all_of(out.expectations.begin(), out.expectations.end(),
                           [](const ExpectationResult& e) { return e.pass; });
  return out;
}

}  // namespace

Result<RunOutcome> RunScenario(const LoadedScenario& scenario,
                               const RunOptions& options) {
  uint64_t seed = options.seed ? *options.seed : scenario.proto.seed();
  if (seed == 0) seed = 1;
  const sim::Duration duration = options.duration
                                     ? *options.duration
                                     : ToDuration(scenario.proto.duration());
  if (duration <= sim::Duration(0)) {
    return InvalidArgument("duration: must be positive");
  }
  if (options.duration) {
    // The loader projected the offered load over the file's duration.
    const auto& timeline = scenario.proto.timeline();
    std::vector<int> order(timeline.size());
    std::vector<sim::Duration> at(timeline.size());
    for (int i = 0; i < timeline.size(); ++i) {
      order[i] = i;
      at[i] = ToDuration(timeline[i].at());
    }
    std::stable_sort(order.begin(), order.end(),
                     [&](int a, int b) { return at[a] < at[b]; });
    BTSIM_RETURN_IF_ERROR(
        CheckOfferedLoad(scenario.proto, duration, order, at));
  }
  Runner runner(scenario, seed, duration, options);
  return runner.Run();
}

}  // namespace btsim::scenarios
