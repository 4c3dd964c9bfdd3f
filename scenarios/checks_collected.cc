// Analysis::IndexCollected: the committed writes a version-count GC rule
// may have removed (checks_analysis.h).
#include <algorithm>
#include <cstdint>
#include <functional>
#include <iterator>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "scenarios/checks_analysis.h"

namespace btsim::scenarios::checks_internal {
namespace {

using sim::Duration;

// The fewest versions of a column `rule` may keep, taking every age limit
// as reached (so an age part of an intersection never saves a version);
// nullopt when no version count limits it.
std::optional<int64_t> VersionLimit(const cluster::GcRule& rule) {
  using Kind = cluster::GcRule::Kind;
  switch (rule.kind) {
    case Kind::kMaxVersions:
      return rule.max_versions;
    case Kind::kUnion:
    case Kind::kIntersection: {
      std::optional<int64_t> out;
      for (const cluster::GcRule& r : rule.rules) {
        const std::optional<int64_t> limit = VersionLimit(r);
        if (!limit) continue;
        // A union deletes beyond the smallest limit, an intersection only
        // beyond the largest.
        if (!out ||
            (rule.kind == Kind::kUnion ? *limit < *out : *limit > *out)) {
          out = limit;
        }
      }
      return out;
    }
    case Kind::kNone:
    case Kind::kMaxAge:
      return std::nullopt;
  }
  return std::nullopt;
}

}  // namespace

void Analysis::IndexCollected() {
  // Each table's version limits over time (from `at` on).
  std::map<std::string,
           std::vector<std::pair<Duration, std::optional<int64_t>>>,
           std::less<>>
      limits;
  bool any = false;
  for (const GcRuleChange& change : history_.gc_rules) {
    limits[change.table].emplace_back(change.at, VersionLimit(change.rule));
    any |= limits[change.table].back().second.has_value();
  }
  if (!any) return;
  const auto& ops = history_.operations;
  // Per row: its committed writes, and the moments each one starts and
  // stops being visible (its removal by design, or a newer version of its
  // timestamp, which replaces it).
  struct Change {
    Duration at;
    uint64_t version;  // orders changes at one moment
    bool visible;      // appears (true) or goes
    uint32_t op;
  };
  std::map<int32_t, std::vector<Change>> rows;
  for (size_t id = 0; id < ops.size(); ++id) {
    const Operation& op = ops[id];
    if (op.written().empty() || op.version == 0) {  // not a committed write
      continue;
    }
    std::vector<Change>& changes = rows[row_of_[id]];
    changes.push_back(
        {op.committed, op.version, true, static_cast<uint32_t>(id)});
    if (auto d = drops_.find(row_of_[id]); d != drops_.end()) {
      for (size_t k = FirstRemovalFor(d->second, op.committed);
           k < d->second.removals.size(); ++k) {
        if (d->second.removals[k].Covers(op)) {
          changes.push_back({d->second.removals[k].at, op.version, false,
                             static_cast<uint32_t>(id)});
          break;
        }
      }
    }
  }
  collected_.assign(ops.size(), false);
  for (auto& [row, changes] : rows) {
    std::sort(changes.begin(), changes.end(),
              [](const Change& a, const Change& b) {
                return std::tie(a.at, a.version, a.visible) <
                       std::tie(b.at, b.version, b.visible);
              });
    const auto table = limits.find(row_names_[row].table);
    if (table == limits.end()) continue;
    const auto& periods = table->second;
    // The visible writes by timestamp, newest first.
    std::map<cluster::Timestamp, uint32_t, std::greater<>> visible;
    std::optional<int64_t> limit;
    size_t next_period = 0;
    // The visible writes beyond the limit are surplus, and GC may remove
    // them from then on: they no longer count for older ones.
    auto collect = [&] {
      if (!limit || static_cast<int64_t>(visible.size()) <= *limit) return;
      auto surplus = std::next(visible.begin(), *limit);
      for (auto it = surplus; it != visible.end(); ++it) {
        collected_[it->second] = true;
      }
      visible.erase(surplus, visible.end());
    };
    // The rule changes up to `t` (a stricter limit acts when it is set).
    auto rules_until = [&](Duration t) {
      for (; next_period < periods.size() && periods[next_period].first <= t;
           ++next_period) {
        limit = periods[next_period].second;
        collect();
      }
    };
    for (const Change& change : changes) {
      rules_until(change.at);
      const Operation& op = ops[change.op];
      if (!change.visible) {
        auto it = visible.find(op.timestamp);
        if (it != visible.end() && it->second == change.op) visible.erase(it);
        continue;
      }
      auto [it, inserted] = visible.try_emplace(op.timestamp, change.op);
      if (!inserted) {
        // One cell per timestamp: the newer version replaces the other.
        if (ops[it->second].version > op.version) continue;
        it->second = change.op;
      }
      collect();
    }
    rules_until(Duration::max());
  }
}

bool Analysis::MayHaveBeenCollected(uint32_t op) const {
  return op < collected_.size() && collected_[op];
}

}  // namespace btsim::scenarios::checks_internal
