#include "scenarios/run_setup.h"

#include <algorithm>
#include <utility>

#include "scenarios/scenario_fields.h"

namespace btsim::scenarios {

namespace v1 = ::btsim::scenario::v1;

void HistoryObserver::OnFailover(std::string_view profile,
                                 std::string_view from, std::string_view to) {
  context_.history->failovers.push_back(
      Failover{context_.Elapsed(), std::string(profile), std::string(from),
               std::string(to)});
}

void HistoryObserver::OnHealthChange(std::string_view zone,
                                     std::string_view cluster, bool ejected) {
  context_.history->health_changes.push_back(HealthChange{
      context_.Elapsed(), std::string(zone), std::string(cluster), ejected});
  sim::Fingerprint& trace = *context_.trace;
  trace.AddInt(context_.Elapsed().count());
  trace.Add(ejected ? "ejected" : "readmitted");
  trace.Add(zone);
  trace.Add(cluster);
}

void HistoryObserver::OnReplicated(const replication::AppliedInfo& info) {
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

LinkSample HistoryObserver::TakeLink(const std::string& from,
                                     const std::string& to) {
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

Status CreateTables(const v1::Scenario& scenario, StepRun& run) {
  instance::Instance& instance = *run.context->instance;
  History& history = *run.context->history;
  BTSIM_ASSIGN_OR_RETURN(std::string first, instance.AnyLiveClusterId());
  cluster::Cluster* origin = instance.replicas().Find(first);
  for (int i = 0; i < scenario.tables_size(); ++i) {
    const v1::Table& t = scenario.tables(i);
    run.family_of[t.id()] = t.families(0).name();
    history.gc_rules.push_back(GcRuleChange{sim::Duration(0), t.id(),
                                            ToGcRule(t.families(0).gc_rule())});
    std::vector<cluster::FamilyModification> families;
    for (const v1::Family& f : t.families()) {
      families.push_back(cluster::FamilyModification{
          f.name(), cluster::FamilyModification::Kind::kCreate,
          ToGcRule(f.gc_rule()), ToAggregate(f.aggregate())});
    }
    std::vector<std::string> splits(t.initial_splits().begin(),
                                    t.initial_splits().end());
    std::sort(splits.begin(), splits.end());
    if (Status s = origin->CreateTable(t.id(), families, splits); !s.ok()) {
      return InvalidArgument("tables[" + std::to_string(i) +
                             "]: " + s.message());
    }
    instance.replicas().ApplyNewestEverywhere(first);
  }
  return OkStatus();
}

Result<ScenarioClients> CreateClients(const v1::Scenario& scenario,
                                      sim::Rng& rng, StepRun& run) {
  ScenarioClients out;
  const std::string default_zone = run.context->instance->client_zone();
  for (const v1::Client& c : scenario.clients()) {
    BTSIM_ASSIGN_OR_RETURN(std::unique_ptr<ClientGroup> group,
                           MakeClientGroup(c, scenario, default_zone));
    const int count = c.count() == 0 ? 1 : c.count();
    for (int i = 0; i < count; ++i) {
      const std::string name = count == 1 && c.count() == 0
                                   ? c.name()
                                   : c.name() + "-" + std::to_string(i);
      out.clients.push_back(std::make_unique<SimClient>(
          *run.context, *group, name, rng.Fork("client/" + name)));
      run.groups[c.name()].clients.push_back(out.clients.back().get());
    }
    run.groups[c.name()].group = group.get();
    out.groups.push_back(std::move(group));
  }
  return out;
}

std::vector<int> TimelineOrder(const v1::Scenario& scenario) {
  std::vector<int> order(scenario.timeline_size());
  for (int i = 0; i < scenario.timeline_size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return ToDuration(scenario.timeline(a).at()) <
           ToDuration(scenario.timeline(b).at());
  });
  return order;
}

void FinishRun(StepRun& run) {
  CheckTokenWaits(run);
  run.FinishCatchUps();
  RunContext& context = *run.context;
  context.finished = true;
  History& history = *context.history;
  // Settled operations have finished.
  for (size_t i = history.operations.Settled(); i < history.operations.size();
       ++i) {
    Operation& op = history.operations[i];
    if (op.attempts == 0) {  // finished operations have attempts >= 1
      op.complete = context.Elapsed();
      op.code = StatusCode::kUnknown;
      op.message = history.names->Intern("still in flight when the run ended");
    }
  }
}

void SettleOperations(const ScenarioClients& clients, History& history) {
  uint64_t open = history.operations.size();
  for (const auto& client : clients.clients) {
    open = std::min(open, client->OldestOpenOperation());
  }
  history.operations.Settle(open);
}

void SampleClustersAndLinks(RunContext& context, HistoryObserver& observer) {
  instance::Instance& instance = *context.instance;
  History& history = *context.history;
  const std::vector<std::string> ids = instance.replicas().ClusterIds();
  for (const std::string& id : ids) {
    history.cpu.push_back(CpuSample{context.Elapsed(), id, instance.CpuLoad(id),
                                    instance.HottestNodeLoad(id)});
  }
  for (const std::string& from : ids) {
    for (const std::string& to : ids) {
      if (from == to) continue;
      LinkSample link = observer.TakeLink(from, to);
      link.at = context.Elapsed();
      link.backlog =
          static_cast<int64_t>(instance.replicas().Backlog(from, to));
      history.links.push_back(std::move(link));
    }
  }
}

void JudgeOutcome(const v1::Scenario& scenario, RunOutcome& out) {
  AllChecks all = RunAllChecks(out.history, scenario.expectations());
  out.checks = std::move(all.checks);
  out.expectations = std::move(all.expectations);
  out.visibility = std::move(all.visibility);
  out.k_staleness = std::move(all.k_staleness);
  out.failbacks = std::move(all.failbacks);
  // A run that did not settle measured a moment, not an outcome.
  out.passed = out.history.settled >= sim::Duration(0) &&
               std::all_of(out.expectations.begin(), out.expectations.end(),
                           [](const ExpectationResult& e) { return e.pass; });
}

}  // namespace btsim::scenarios
