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
#include "scenarios/run_setup.h"
#include "scenarios/scenario_fields.h"
#include "scenarios/sim_client.h"
#include "scenarios/steps.h"
#include "sim/virtual_scheduler.h"

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
    history_.operations = OperationLog(options.history_chunk);
    history_.operations.EnableSpilling();
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
  HistoryObserver observer_;
  std::unique_ptr<instance::Instance> instance_;
  ScenarioClients clients_;
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

  BTSIM_RETURN_IF_ERROR(CreateTables(s_, steps_));
  BTSIM_ASSIGN_OR_RETURN(clients_, CreateClients(s_, rng_, steps_));
  // Strong reads are promised when every client's profile routes to one
  // and the same cluster and no profile changes.
  bool promised = true;
  std::set<std::string> targets;
  for (const auto& group : clients_.groups) {
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
  SampleClustersAndLinks(context_, observer_);
  SettleOperations(clients_, history_);
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
  for (auto& client : clients_.clients) client->Stop();
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
  FinishRun(steps_);
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

  for (int i : TimelineOrder(s_)) {
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
  JudgeOutcome(s_, out);
  if (options_.wall_clock) {
    out.check_wall_seconds = options_.wall_clock() - checks_started;
  }
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
    std::vector<sim::Duration> at(timeline.size());
    for (int i = 0; i < timeline.size(); ++i) {
      at[i] = ToDuration(timeline[i].at());
    }
    const std::vector<int> order = TimelineOrder(scenario.proto);
    BTSIM_RETURN_IF_ERROR(
        CheckOfferedLoad(scenario.proto, duration, order, at));
  }
  Runner runner(scenario, seed, duration, options);
  return runner.Run();
}

}  // namespace btsim::scenarios
