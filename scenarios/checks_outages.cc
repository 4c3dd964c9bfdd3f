// FindOutages and FindFailbacks (checks_analysis.h): the errors clients saw
// after each fault, and how long traffic took to return once it was
// repaired.
#include <algorithm>
#include <map>
#include <optional>
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
  struct ClientOps {
    std::vector<std::pair<Duration, Duration>> successes;  // (invoke, complete)
    std::vector<std::pair<Duration, uint32_t>> failures;   // (complete, op)
    Duration longest_failure{0};  // the longest complete - invoke of them
  };
  std::map<std::string, ClientOps> clients;  // iterated in name order
  const auto& ops = history.operations;
  // An outage is made of failed operations: only clients with a failure
  // have their successes collected (on a run without errors, none).
  {
    ClientIndex<ClientOps> client_of(&clients);
    for (auto it = ops.begin(); it != ops.end(); ++it) {
      const Operation& op = *it;
      if (op.ok() || !filter.SelectsClient(op)) continue;
      ClientOps& client = client_of(op);
      client.failures.emplace_back(op.complete,
                                   static_cast<uint32_t>(it.index()));
      client.longest_failure =
          std::max(client.longest_failure, op.complete - op.invoke);
    }
  }
  if (clients.empty()) return {};
  ClientIndex<ClientOps> failing(&clients);
  for (const Operation& op : ops) {
    if (!op.ok() || !filter.SelectsClient(op)) continue;
    if (ClientOps* client = failing.Find(op)) {
      client->successes.emplace_back(op.invoke, op.complete);
    }
  }
  std::vector<Outage> outages;
  for (auto& [name, client] : clients) {
    // Operations are in invoke order, so successes are sorted by invoke.
    std::sort(client.failures.begin(), client.failures.end());
    for (size_t e = 0; e < history.events.size(); ++e) {
      const Event& event = history.events[e];
      if (!MayCauseOutage(event) || !filter.InWindow(event.at)) continue;
      if (!filter.cluster.empty() && event.cluster != filter.cluster &&
          event.peer != filter.cluster) {
        continue;
      }
      auto success =
          std::lower_bound(client.successes.begin(), client.successes.end(),
                           std::make_pair(event.at, Duration::min()));
      const bool never = success == client.successes.end();
      const Duration end = never ? Duration::max() : success->second;
      auto failure =
          std::lower_bound(client.failures.begin(), client.failures.end(),
                           std::make_pair(event.at, uint32_t{0}));
      // Its errors: operations that failed after the fault and were
      // issued before the outage ended (those that hung until their
      // deadline included).
      Outage outage;
      // A failure invoked by `end` completes by end + longest_failure.
      const Duration last =
          never ? Duration::max() : end + client.longest_failure;
      for (; failure != client.failures.end() && failure->first <= last;
           ++failure) {
        if (ops.Get(failure->second).invoke <= end) {
          outage.failed.push_back(failure->second);
        }
      }
      if (outage.failed.empty()) continue;
      outage.client = name;
      outage.event = e;
      outage.never = never;
      outage.length = never ? Duration::max() : end - event.at;
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
  const auto& ops = history.operations;
  const auto& events = history.events;
  // Clients with an outage after a fault were moved off their home.
  std::set<std::pair<std::string, size_t>> outages;
  for (const Outage& outage : found) {
    outages.emplace(outage.client, outage.event);
  }
  struct ClientOps {
    std::vector<uint32_t> successes;  // in invoke order
    // Per success: whether another cluster served the one before.
    std::vector<bool> moved;
    // Per success: the index of the next success served by a different
    // cluster (successes.size() when none).
    std::vector<size_t> next_other;
    // Successes per serving cluster, in invoke order.
    std::map<std::string, std::vector<uint32_t>> by_cluster;
    Duration last_invoke = Duration::min();  // of any selected operation
    // The cluster of the last success, and its by_cluster entry.
    Name served_by;
    std::vector<uint32_t>* served = nullptr;
  };
  std::map<std::string, ClientOps> clients;  // iterated in name order
  ClientIndex<ClientOps> client_of(&clients);
  for (auto it = ops.begin(); it != ops.end(); ++it) {
    const Operation& op = *it;
    if (!filter.SelectsClient(op)) continue;
    ClientOps& client = client_of(op);
    client.last_invoke = std::max(client.last_invoke, op.invoke);
    if (!op.ok()) continue;
    const auto i = static_cast<uint32_t>(it.index());
    client.successes.push_back(i);
    // A client's successes mostly come from one cluster: look it up only
    // when it changes.
    const bool moved =
        client.served == nullptr || client.served_by != op.cluster;
    client.moved.push_back(moved);
    if (moved) {
      client.served_by = op.cluster;
      client.served = &client.by_cluster[std::string(op.cluster)];
    }
    client.served->push_back(i);
  }
  for (auto& [name, client] : clients) {
    const size_t n = client.successes.size();
    client.next_other.assign(n, n);
    for (size_t i = n; i-- > 1;) {
      client.next_other[i - 1] = client.moved[i] ? i : client.next_other[i];
    }
  }
  auto first_invoked_at_or_after = [&](const std::vector<uint32_t>& ids,
                                       Duration t) {
    return static_cast<size_t>(
        std::partition_point(
            ids.begin(), ids.end(),
            [&](uint32_t id) { return ops.Get(id).invoke < t; }) -
        ids.begin());
  };

  std::vector<Failback> failbacks;
  for (size_t e = 0; e < events.size(); ++e) {
    const Event& event = events[e];
    if (!IsFault(event) || !filter.InWindow(event.at)) continue;
    if (!filter.cluster.empty() && event.cluster != filter.cluster &&
        event.peer != filter.cluster) {
      continue;
    }
    const std::optional<size_t> repair = RepairOf(events, e);
    const Duration repaired = repair ? events[*repair].at : Duration::max();
    for (const auto& [name, client] : clients) {
      const auto& successes = client.successes;
      const size_t after = first_invoked_at_or_after(successes, event.at);
      if (after == 0) continue;  // no home
      const Name home = ops.Get(successes[after - 1]).cluster;
      if (home.empty()) continue;
      // Moved: an outage, or (when the fault concerns the home) a success
      // between the fault and the repair served by another cluster.
      bool moved = outages.contains({name, e});
      if (!moved && (event.cluster == home || event.peer == home) &&
          after < successes.size() &&
          ops.Get(successes[after]).invoke < repaired) {
        const size_t other = ops.Get(successes[after]).cluster != home
                                 ? after
                                 : client.next_other[after];
        moved = other < successes.size() &&
                ops.Get(successes[other]).invoke < repaired;
      }
      if (!moved) continue;
      Failback failback;
      failback.client = name;
      failback.event = e;
      failback.home = std::string(home);
      if (repair) {
        failback.repaired = repaired;
        const std::vector<uint32_t>& served =
            client.by_cluster.at(failback.home);
        const size_t back = first_invoked_at_or_after(served, repaired);
        if (back < served.size()) {
          failback.length = ops.Get(served[back]).complete - repaired;
        } else if (client.last_invoke >= repaired) {
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
