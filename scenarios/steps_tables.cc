// Table admin: an operator changes a family's GC rule (set_gc_rule), drops
// rows (drop_row_range), or waits for replication with a consistency token
// (wait_for_replication).
#include <algorithm>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/row_set.h"
#include "scenarios/instance_config.h"
#include "scenarios/row_reader.h"
#include "scenarios/scenario_fields.h"
#include "scenarios/steps.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::scenario::v1;

constexpr sim::Duration kDefaultTokenInterval = std::chrono::seconds(10);

// ---- set_gc_rule ----

Status ValidateSetGcRule(const v1::Step& step, const std::string& field,
                         StepScope& scope) {
  const v1::SetGcRule& g = step.set_gc_rule();
  const std::string f = field + ".set_gc_rule";
  BTSIM_RETURN_IF_ERROR(scope.TableKnown(g.table(), f + ".table"));
  if (scope.families[g.table()].count(g.family()) == 0) {
    return InvalidArgument(f + ".family: table '" + g.table() +
                           "' has no family '" + g.family() + "'");
  }
  if (scope.aggregate_families[g.table()].count(g.family()) != 0) {
    return InvalidArgument(f + ".family: '" + g.family() +
                           "' is an aggregate family, which takes no GC rule");
  }
  return ValidateGcRule(g.gc_rule(), f + ".gc_rule");
}

void ApplySetGcRule(const v1::Step& step, Event event, StepRun& run) {
  auto& replicas = run.context->instance->replicas();
  const v1::SetGcRule& g = step.set_gc_rule();
  event.kind = EventKind::kSetGcRule;
  event.table = g.table();
  event.detail = g.family();
  Describe(event, "GC rule of " + g.table() + ":" + g.family());
  auto id = run.context->instance->AnyLiveClusterId();
  if (!id.ok()) {
    Refused(event, id.status());
    run.AddEvent(std::move(event));
    return;
  }
  const cluster::FamilyModification mod{
      g.family(), cluster::FamilyModification::Kind::kUpdate,
      ToGcRule(g.gc_rule())};
  replicas.OrderAfterEverything(*id);
  if (Status s = replicas.Find(*id)->ModifyColumnFamilies(g.table(), {&mod, 1});
      s.ok()) {
    // Schema changes are instance-wide at once (see ApplyNewestEverywhere).
    replicas.ApplyNewestEverywhere(*id);
    if (run.family_of[g.table()] == g.family()) {
      run.context->history->gc_rules.push_back(
          GcRuleChange{event.at, g.table(), mod.gc_rule});
    }
  } else {
    Refused(event, s);
  }
  run.AddEvent(std::move(event));
}

// ---- drop_row_range ----

Status ValidateDropRowRange(const v1::Step& step, const std::string& field,
                            StepScope& scope) {
  return scope.TableKnown(step.drop_row_range().table(),
                          field + ".drop_row_range.table");
}

void ApplyDropRowRange(const v1::Step& step, Event event, StepRun& run) {
  event.kind = EventKind::kDropRowRange;
  event.table = step.drop_row_range().table();
  event.detail = step.drop_row_range().prefix();
  Describe(event,
           "drop rows of " + event.table +
               (event.detail.empty() ? "" : " under '" + event.detail + "'"));
  Status s = run.context->instance->DropRowRange(event.table, event.detail);
  if (!s.ok()) Refused(event, s);
  run.AddEvent(std::move(event));
}

// ---- wait_for_replication ----

Status ValidateWaitForReplication(const v1::Step& step,
                                  const std::string& field, StepScope& scope) {
  const v1::TokenWait& wait = step.wait_for_replication();
  const std::string f = field + ".wait_for_replication";
  BTSIM_RETURN_IF_ERROR(scope.TableKnown(wait.table(), f + ".table"));
  BTSIM_ASSIGN_OR_RETURN(sim::Duration interval,
                         ConfigDuration(wait.interval(), f + ".interval"));
  if (wait.has_interval() && interval <= sim::Duration(0)) {
    return InvalidArgument(f + ".interval: must be positive");
  }
  return OkStatus();
}

// True when `op`'s write (or a newer one) is readable on `cluster`.
bool Visible(StepRun& run, cluster::Cluster& cluster, const Operation& op) {
  cluster::RowSet rows;
  rows.AddKey(op.row.str());
  bool visible = false;
  // A newer timestamp supersedes the write; the same one is the same cell
  // (this write, or a later commit of it that won).
  Status s = ReadRowStates(
      cluster, op.table(), run.family_of[std::string(op.table())], &rows,
      [&](std::string_view, const RowRead& row) {
        visible = !row.tag.empty() && row.timestamp >= op.timestamp;
        return true;
      });
  return s.ok() && visible;
}

// Whether the GC rule of `op`'s family on `cluster` may have removed its
// cell by now, even as its column's newest (a max_age rule).
bool MayHaveExpired(StepRun& run, cluster::Cluster& cluster,
                    const Operation& op) {
  auto table = cluster.GetTable(op.table());
  if (!table.ok()) return false;
  const std::string& family = run.family_of[std::string(op.table())];
  for (const cluster::ColumnFamily& f : (*table)->Families()) {
    if (f.name != family) continue;
    const auto age = f.gc_rule.NewestCellAge();
    return age && op.timestamp + *age <
                      cluster::TimestampOf(run.context->scheduler->Now());
  }
  return false;
}

// Whether a DropRowRange that took effect after `op`'s write committed
// covers its row: the write is gone everywhere by design.
bool DroppedSince(const History& history, const Operation& op) {
  return std::any_of(history.events.begin(), history.events.end(),
                     [&](const Event& event) {
                       return event.at >= op.committed &&
                              DropCovers(event, op.table(), op.row);
                     });
}

// When every cluster has applied the token of wait `event_index`: records
// in history->events[event_index] when, and how many of its writes were
// not readable everywhere then, forgets the wait and returns true (also
// when it is no longer pending).
bool FinishTokenWait(StepRun& run, size_t event_index) {
  RunContext& context = *run.context;
  auto& replicas = context.instance->replicas();
  auto wait = run.token_waits.find(event_index);
  if (wait == run.token_waits.end()) return true;
  if (!replicas.HasApplied(wait->second.token)) return false;
  {
    Event& event = context.history->events[event_index];
    event.end = context.Elapsed();
    int64_t violations = 0;
    // Deletes that committed, by row: they remove writes by design.
    std::map<std::pair<std::string_view, std::string_view>,
             std::vector<Operation>>
        deletes;
    for (const Operation& op : context.history->operations) {
      if (IsDelete(op.type) && op.version != 0) {
        deletes[{op.table(), op.row}].push_back(op);
      }
    }
    auto deleted = [&](const Operation& write) {
      auto it = deletes.find({write.table(), write.row});
      return it != deletes.end() &&
             std::any_of(it->second.begin(), it->second.end(),
                         [&](const Operation& del) {
                           return DeleteCovers(del, write);
                         });
    };
    for (uint64_t id : wait->second.writes) {
      const Operation op = context.history->operations.Get(id);
      if (DroppedSince(*context.history, op) || deleted(op)) continue;
      for (const std::string& cluster_id : replicas.ClusterIds()) {
        cluster::Cluster* cluster = replicas.Find(cluster_id);
        if (cluster != nullptr && !Visible(run, *cluster, op) &&
            !MayHaveExpired(run, *cluster, op)) {
          ++violations;
        }
      }
    }
    event.violations = violations;
    context.trace->AddInt(event.end.count());
    context.trace->AddInt(violations);
  }
  run.token_waits.erase(wait);
  return true;
}

// Checks wait `event_index` every `interval` until it is consistent or the
// run has finished.
void WaitForToken(StepRun& run, size_t event_index, sim::Duration interval) {
  if (FinishTokenWait(run, event_index) || run.context->finished) return;
  run.context->scheduler->RunAfter(interval, [&run, event_index, interval] {
    WaitForToken(run, event_index, interval);
  });
}

// Sets events[event_index].consistent once every cluster has applied
// `token`, checking every 100 ms until then or the end of the run.
void WatchConsistency(StepRun& run, size_t event_index,
                      std::map<std::string, uint64_t> token) {
  RunContext& context = *run.context;
  if (context.instance->replicas().HasApplied(token)) {
    context.history->events[event_index].consistent = context.Elapsed();
    return;
  }
  if (context.finished) return;
  context.scheduler->RunAfter(
      std::chrono::milliseconds(100),
      [&run, event_index, token = std::move(token)]() mutable {
        WatchConsistency(run, event_index, std::move(token));
      });
}

void ApplyWaitForReplication(const v1::Step& step, Event event, StepRun& run) {
  const v1::TokenWait& wait = step.wait_for_replication();
  event.kind = EventKind::kTokenWait;
  event.table = wait.table();
  Describe(event, "wait for replication of " + event.table);
  std::vector<uint64_t> writes;
  for (const Operation& op : run.context->history->operations) {
    // Finished (attempts > 0) and acknowledged.
    if (op.attempts > 0 && op.ok() && !op.written().empty() &&
        op.table() == event.table && op.version != 0) {
      writes.push_back(op.id);
    }
  }
  const sim::Duration interval =
      wait.has_interval() ? ToDuration(wait.interval()) : kDefaultTokenInterval;
  auto token = run.context->instance->replicas().LogPositions();
  const size_t event_index = run.AddEvent(std::move(event));
  WatchConsistency(run, event_index, token);
  run.token_waits[event_index] =
      StepRun::TokenWait{std::move(token), std::move(writes)};
  WaitForToken(run, event_index, interval);
}

constexpr StepKind kKinds[] = {
    {v1::Step::kSetGcRule, ValidateSetGcRule, ApplySetGcRule, nullptr},
    {v1::Step::kDropRowRange, ValidateDropRowRange, ApplyDropRowRange, nullptr},
    {v1::Step::kWaitForReplication, ValidateWaitForReplication,
     ApplyWaitForReplication, nullptr},
};

}  // namespace

std::span<const StepKind> TableStepKinds() { return kKinds; }

void CheckTokenWaits(StepRun& run) {
  std::vector<size_t> pending;
  for (const auto& [event_index, wait] : run.token_waits) {
    pending.push_back(event_index);
  }
  for (size_t event_index : pending) FinishTokenWait(run, event_index);
}

}  // namespace btsim::scenarios
