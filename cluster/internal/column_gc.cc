#include "cluster/internal/column_gc.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace btsim::cluster::internal {
namespace {

// The rule in effect at version `v`; null before the first period.
const GcRule* RuleAt(std::span<const GcPeriod> periods, Version v) {
  const GcRule* rule = nullptr;
  for (const GcPeriod& p : periods) {
    if (p.since > v) break;
    rule = p.rule;
  }
  return rule;
}

}  // namespace

void FindGarbageSlowly(std::span<GcCell> cells,
                       std::span<const GcPeriod> periods, Version horizon) {
  // Between two consecutive events (a cell committed or hidden, a rule
  // changed) the visible cells stay the same and only grow older, so each
  // stretch is judged once, at its last version.
  std::vector<Version> events;
  for (const GcCell& c : cells) {
    if (c.version <= horizon) events.push_back(c.version);
    if (c.hidden_at <= horizon) events.push_back(c.hidden_at);
  }
  for (const GcPeriod& p : periods) {
    if (p.since <= horizon) events.push_back(p.since);
  }
  std::sort(events.begin(), events.end());
  events.erase(std::unique(events.begin(), events.end()), events.end());
  std::vector<bool> removed(cells.size(), false);
  for (size_t e = 0; e < events.size(); ++e) {
    const Version at = events[e];
    const GcRule* rule = RuleAt(periods, at);
    if (rule == nullptr) continue;
    const Version last = e + 1 < events.size() ? events[e + 1] - 1 : horizon;
    const Timestamp now = VersionTime(last);
    int64_t index = 0;
    for (size_t i = 0; i < cells.size(); ++i) {
      const GcCell& c = cells[i];
      if (removed[i] || c.version > at || c.hidden_at <= at) continue;
      if (rule->Deletes(index, c.timestamp, now)) removed[i] = true;
      ++index;
    }
  }
  for (size_t i = 0; i < cells.size(); ++i) {
    cells[i].garbage = removed[i] || cells[i].hidden_at <= horizon;
  }
}

void FindGarbage(std::span<GcCell> cells, std::span<const GcPeriod> periods,
                 Version horizon) {
  // The common case: one rule throughout and no cell hidden at or below
  // the horizon. The visible cells then only accumulate, and a cell GC
  // removes early makes every older one removable too, so judging each
  // cell once, at the horizon, among all the newer cells committed by
  // then, gives the same answer.
  const GcRule* rule = nullptr;
  size_t rules = 0;
  for (const GcPeriod& p : periods) {
    if (p.since > horizon) break;
    rule = p.rule;
    ++rules;
  }
  const bool hidden =
      std::any_of(cells.begin(), cells.end(),
                  [&](const GcCell& c) { return c.hidden_at <= horizon; });
  if (rules > 1 || hidden) {
    FindGarbageSlowly(cells, periods, horizon);
    return;
  }
  const Timestamp now = VersionTime(horizon);
  int64_t index = 0;  // among the cells committed by the horizon
  for (GcCell& c : cells) {
    c.garbage = false;
    if (rule == nullptr || c.version > horizon) continue;
    c.garbage = rule->Deletes(index, c.timestamp, now);
    ++index;
  }
}

}  // namespace btsim::cluster::internal
