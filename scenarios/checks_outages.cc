// FindOutages and FindFailbacks (checks_analysis.h): the errors clients saw
// after each fault, and how long traffic took to return once it was
// repaired.
#include <algorithm>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "scenarios/checks_analysis.h"

namespace btsim::scenarios::checks_internal {
namespace {

using sim::Duration;

// A fault that takes clusters (or the way to them) away, or makes them
// fail or slow, for failback.
bool IsFault(const Event& event) {
  switch (event.kind) {
    case EventKind::kClusterDown:
    case EventKind::kPartition:
    case EventKind::kNodeFailure:
    case EventKind::kRemoveCluster:
    case EventKind::kSlowCluster:
    case EventKind::kInjectErrors:
    case EventKind::kCutClients:
    case EventKind::kStallReplication:
      return !event.refused;
    default:
      return false;
  }
}

// What may start an outage (RTO): a fault, a latency change (its
// DEADLINE_EXCEEDED errors are an outage like any other), or a change of
// load or capacity (a workload change or a resize: an overloaded node
// refuses and drops requests).
bool MayCauseOutage(const Event& event) {
  if (event.refused) return false;
  return IsFault(event) || event.kind == EventKind::kLatency ||
         event.kind == EventKind::kChangeWorkload ||
         event.kind == EventKind::kResize;
}

// Finds (adding when absent) the entry of an operation's client in
// `*by_name`. The map is what callers iterate (in name order). Lookups go
// by the operation's interned source (one pointer hash; a source names one
// client), then, for a source not seen yet, by the client's name. The hash
// maps are for lookups only and view the history's names (which must
// outlive the index).
template <class V>
class ClientIndex {
 public:
  explicit ClientIndex(std::map<std::string, V>* by_name) : by_name_(by_name) {}
  V& operator()(const Operation& op) {
    // Null: a new source, or one Find cached as having no entry.
    auto it = by_source_.try_emplace(op.source, nullptr).first;
    if (it->second == nullptr) it->second = &ByName(op.client());
    return *it->second;
  }
  // The entry of op's client; nullptr when it has none (adds nothing).
  V* Find(const Operation& op) {
    auto [it, added] = by_source_.try_emplace(op.source, nullptr);
    if (added) {
      auto named = by_name_->find(std::string(op.client().view()));
      it->second = named == by_name_->end() ? nullptr : &named->second;
    }
    return it->second;
  }

 private:
  V& ByName(std::string_view name) {
    auto [it, added] = index_.try_emplace(name, nullptr);
    if (added) it->second = &(*by_name_)[std::string(name)];
    return *it->second;
  }

  std::map<std::string, V>* by_name_;
  LookupMap<const OpSource*, V*> by_source_;
  LookupMap<std::string_view, V*> index_;
};

}  // namespace

std::optional<size_t> RepairOf(const std::vector<Event>& events, size_t fault) {
  const Event& f = events[fault];
  if (f.kind == EventKind::kRemoveCluster) return std::nullopt;
  for (size_t e = fault + 1; e < events.size(); ++e) {
    const Event& r = events[e];
    if (r.refused) continue;
    if (r.kind == EventKind::kSettle) return e;
    switch (f.kind) {
      case EventKind::kClusterDown:
        if (r.kind == EventKind::kClusterUp && r.cluster == f.cluster) {
          return e;
        }
        break;
      case EventKind::kPartition:
        if (r.kind == EventKind::kHeal &&
            ((r.cluster == f.cluster && r.peer == f.peer) ||
             (r.cluster == f.peer && r.peer == f.cluster))) {
          return e;
        }
        break;
      case EventKind::kNodeFailure:
        if (r.kind == EventKind::kNodeRecovery && r.cluster == f.cluster) {
          return e;
        }
        break;
      case EventKind::kSlowCluster:
        if (r.kind == EventKind::kRestoreSpeed && r.cluster == f.cluster) {
          return e;
        }
        break;
      case EventKind::kInjectErrors:
        if (r.kind == EventKind::kStopErrors && r.cluster == f.cluster) {
          return e;
        }
        break;
      case EventKind::kCutClients:
        if (r.kind == EventKind::kMendClients && r.cluster == f.cluster &&
            r.detail == f.detail) {
          return e;
        }
        break;
      case EventKind::kStallReplication:
        if (r.kind == EventKind::kResumeReplication && r.cluster == f.cluster) {
          return e;
        }
        break;
      default:
        break;
    }
  }
  return std::nullopt;
}

std::vector<Outage> FindOutages(const History& history, const Filter& filter) {
  const auto& ops = history.operations;
  // The events that may start an outage, in time order.
  std::vector<size_t> starts;
  for (size_t e = 0; e < history.events.size(); ++e) {
    const Event& event = history.events[e];
    if (!MayCauseOutage(event) || !filter.InWindow(event.at)) continue;
    if (!filter.cluster.empty() && event.cluster != filter.cluster &&
        event.peer != filter.cluster) {
      continue;
    }
    starts.push_back(e);
  }
  if (starts.empty()) return {};
  // The first-success cursor below needs the starts in time order (a
  // history read from a file may list events otherwise).
  std::stable_sort(starts.begin(), starts.end(), [&](size_t a, size_t b) {
    return history.events[a].at < history.events[b].at;
  });
  // Three passes over the history, with state per (client, event) only.
  struct ClientOps {
    // Per start: the completion of the first success invoked at or after
    // it (Duration::max(): none, the outage never ended).
    std::vector<Duration> end;
    size_t ended = 0;  // starts [0, ended) have their end
    // Per start: its failures, (complete, op).
    std::vector<std::vector<std::pair<Duration, uint32_t>>> failed;
  };
  // An outage is made of failed operations: only clients with a failure
  // have an entry (on a run without errors, none).
  std::map<std::string, ClientOps> clients;  // iterated in name order
  {
    ClientIndex<ClientOps> client_of(&clients);
    for (const Operation& op : ops) {
      if (!op.ok() && filter.SelectsClient(op)) client_of(op);
    }
  }
  if (clients.empty()) return {};
  for (auto& [name, client] : clients) {
    client.end.assign(starts.size(), Duration::max());
    client.failed.resize(starts.size());
  }
  // The first success invoked at or after each start (operations come in
  // invoke order).
  ClientIndex<ClientOps> failing(&clients);
  for (const Operation& op : ops) {
    if (!op.ok() || !filter.SelectsClient(op)) continue;
    ClientOps* client = failing.Find(op);
    if (client == nullptr) continue;
    while (client->ended < starts.size() &&
           history.events[starts[client->ended]].at <= op.invoke) {
      client->end[client->ended++] = op.complete;
    }
  }
  // Its errors: operations that failed after the fault and were issued
  // before the outage ended (those that hung until their deadline
  // included).
  for (auto it = ops.begin(); it != ops.end(); ++it) {
    const Operation& op = *it;
    if (op.ok() || !filter.SelectsClient(op)) continue;
    ClientOps& client = *failing.Find(op);
    for (size_t s = 0; s < starts.size(); ++s) {
      const Duration end = client.end[s];
      if (op.complete >= history.events[starts[s]].at && op.invoke <= end) {
        client.failed[s].emplace_back(op.complete,
                                      static_cast<uint32_t>(it.index()));
      }
    }
  }
  std::vector<Outage> outages;
  for (auto& [name, client] : clients) {
    for (size_t s = 0; s < starts.size(); ++s) {
      auto& failed = client.failed[s];
      if (failed.empty()) continue;
      std::sort(failed.begin(), failed.end());
      const Event& event = history.events[starts[s]];
      Outage outage;
      outage.client = name;
      outage.event = starts[s];
      outage.never = client.end[s] == Duration::max();
      outage.length = outage.never ? Duration::max() : client.end[s] - event.at;
      outage.failed.reserve(failed.size());
      for (const auto& [complete, op] : failed) outage.failed.push_back(op);
      outages.push_back(std::move(outage));
    }
  }
  return outages;
}

std::vector<Failback> FindFailbacks(const History& history,
                                    const Filter& filter) {
  return FindFailbacks(history, filter, FindOutages(history, filter));
}

std::vector<Failback> FindFailbacks(const History& history,
                                    const Filter& filter,
                                    const std::vector<Outage>& found) {
  const auto& events = history.events;
  // The faults, each with its repair time (Duration::max(): never).
  struct Fault {
    size_t event;
    std::optional<size_t> repair;
    Duration at, repaired;
  };
  std::vector<Fault> faults;
  for (size_t e = 0; e < events.size(); ++e) {
    const Event& event = events[e];
    if (!IsFault(event) || !filter.InWindow(event.at)) continue;
    if (!filter.cluster.empty() && event.cluster != filter.cluster &&
        event.peer != filter.cluster) {
      continue;
    }
    const std::optional<size_t> repair = RepairOf(events, e);
    faults.push_back(
        {e, repair, event.at, repair ? events[*repair].at : Duration::max()});
  }
  if (faults.empty()) return {};
  // Clients with an outage after a fault were moved off their home.
  std::set<std::pair<std::string, size_t>> outages;
  for (const Outage& outage : found) {
    outages.emplace(outage.client, outage.event);
  }
  // What one client's successes say about one fault, gathered in one pass
  // over the history (operations come in invoke order).
  struct Watch {
    bool homed = false;  // a success before the fault
    Name home;           // the cluster of the last one
    // The invoke of the first success at or after the fault served by
    // another cluster (while it matters: before the repair), and the
    // completion of the first one served by home invoked at or after the
    // repair.
    std::optional<Duration> other_invoke, back_complete;
  };
  // The faults by time: a client's successes reach them in this order.
  std::vector<size_t> by_time(faults.size());
  for (size_t f = 0; f < faults.size(); ++f) by_time[f] = f;
  std::stable_sort(by_time.begin(), by_time.end(), [&](size_t a, size_t b) {
    return faults[a].at < faults[b].at;
  });
  struct ClientOps {
    Duration last_invoke = Duration::min();  // of any selected operation
    std::vector<Watch> watches;              // per fault
    bool homed = false;                      // a success so far
    Name home;                               // the cluster of the last one
    size_t reached = 0;        // faults (by_time) at or before the last success
    std::vector<size_t> open;  // reached faults whose watch may still change
  };
  // Fault f's watch starts from the client's successes before it.
  auto reach = [&](ClientOps& client, size_t f) {
    Watch& w = client.watches[f];
    w.homed = client.homed;
    w.home = client.home;
    if (w.homed) client.open.push_back(f);
  };
  std::map<std::string, ClientOps> clients;  // iterated in name order
  ClientIndex<ClientOps> client_of(&clients);
  for (const Operation& op : history.operations) {
    if (!filter.SelectsClient(op)) continue;
    ClientOps& client = client_of(op);
    client.last_invoke = std::max(client.last_invoke, op.invoke);
    if (!op.ok()) continue;
    if (client.watches.empty()) client.watches.resize(faults.size());
    for (; client.reached < faults.size() &&
           faults[by_time[client.reached]].at <= op.invoke;
         ++client.reached) {
      reach(client, by_time[client.reached]);
    }
    for (size_t i = 0; i < client.open.size();) {
      const size_t f = client.open[i];
      Watch& w = client.watches[f];
      const bool repaired = op.invoke >= faults[f].repaired;
      if (!w.other_invoke && !repaired && op.cluster != w.home) {
        w.other_invoke = op.invoke;
      }
      if (repaired && op.cluster == w.home) w.back_complete = op.complete;
      if (w.back_complete) {  // nothing later changes this watch
        client.open[i] = client.open.back();
        client.open.pop_back();
      } else {
        ++i;
      }
    }
    client.homed = true;
    client.home = op.cluster;
  }
  for (auto& [name, client] : clients) {
    if (client.watches.empty()) continue;
    for (; client.reached < faults.size(); ++client.reached) {
      reach(client, by_time[client.reached]);
    }
  }

  std::vector<Failback> failbacks;
  for (size_t f = 0; f < faults.size(); ++f) {
    const Fault& fault = faults[f];
    const Event& event = events[fault.event];
    for (const auto& [name, client] : clients) {
      if (client.watches.empty()) continue;  // no success at all
      const Watch& w = client.watches[f];
      if (!w.homed || w.home.empty()) continue;  // no home
      // Moved: an outage, or (when the fault concerns the home) a success
      // between the fault and the repair served by another cluster.
      const bool moved = outages.contains({name, fault.event}) ||
                         ((event.cluster == w.home || event.peer == w.home) &&
                          w.other_invoke && *w.other_invoke < fault.repaired);
      if (!moved) continue;
      Failback failback;
      failback.client = name;
      failback.event = fault.event;
      failback.home = std::string(w.home);
      if (fault.repair) {
        failback.repaired = fault.repaired;
        if (w.back_complete) {
          failback.length = *w.back_complete - fault.repaired;
        } else if (client.last_invoke >= fault.repaired) {
          failback.never = true;
        } else {
          failback.unobserved = true;
        }
      }
      failbacks.push_back(std::move(failback));
    }
  }
  return failbacks;
}

}  // namespace btsim::scenarios::checks_internal
