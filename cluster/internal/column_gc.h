// Which cells of one column compaction removes: garbage collection as a
// function of what was committed, so that replicas that applied the same
// changes keep the same cells, whenever and in whatever order each one
// applied and compacted them. Internal to cluster/ (Table::CompactRow).
//
// The rule: GC acts as if it ran just after every commit. Take the
// column's cells in commit-version order: at each version a cell is
// visible from its own version until a tombstone hides it or GC removes
// it. A cell is garbage once, at some version, the GC rule then in effect
// deletes it among the cells then visible (its index counts the newer
// visible cells; ages are measured at that version's time). A version-count
// rule therefore removes a version for good once it was surplus, even if
// the newer versions are deleted afterwards.
//
// Only versions up to `horizon` are judged: every change at or below it has
// been applied here, so the judgement is final. A hidden cell stays (hidden)
// until its tombstone is at or below the horizon, since it still counts for
// the older cells at the versions before it was hidden; likewise a cell
// that a newer version of its timestamp superseded counts, as a cell hidden
// from that version on, whichever of the two a replica received first.
#ifndef BTSIM_CLUSTER_INTERNAL_COLUMN_GC_H_
#define BTSIM_CLUSTER_INTERNAL_COLUMN_GC_H_

#include <limits>
#include <span>

#include "cluster/gc_rule.h"
#include "cluster/timestamp.h"
#include "cluster/version.h"

namespace btsim::cluster::internal {

// HiddenAt for a cell no tombstone hides.
inline constexpr Version kNeverHidden = std::numeric_limits<Version>::max();

struct GcCell {
  Timestamp timestamp;
  Version version;
  Version hidden_at = kNeverHidden;  // the oldest tombstone hiding it
  bool garbage = false;              // FindGarbage's answer
};

// A family's GC rule, in effect from version `since` until the next one's.
struct GcPeriod {
  Version since;
  const GcRule* rule;
};

// Sets each cell's `garbage` to whether compaction at `horizon` removes
// it. Requires `cells` in timestamp-descending order (one column's) and
// `periods` in ascending `since` order; versions before the first period
// have no rule.
void FindGarbage(std::span<GcCell> cells, std::span<const GcPeriod> periods,
                 Version horizon);

// FindGarbage judging every stretch of versions in turn: the definition,
// for tests to compare FindGarbage's shortcut against.
void FindGarbageSlowly(std::span<GcCell> cells,
                       std::span<const GcPeriod> periods, Version horizon);

}  // namespace btsim::cluster::internal

#endif  // BTSIM_CLUSTER_INTERNAL_COLUMN_GC_H_
