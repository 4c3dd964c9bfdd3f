// The cells of aggregate columns: each contribution (AddToCell) is a cell
// of its own, and reads and compaction combine those of one timestamp.
// Internal to cluster/ (row edits and compaction).
#ifndef BTSIM_CLUSTER_INTERNAL_AGGREGATE_CELLS_H_
#define BTSIM_CLUSTER_INTERNAL_AGGREGATE_CELLS_H_

#include <list>
#include <string>

#include "cluster/row_codec.h"
#include "cluster/schema.h"
#include "cluster/version.h"

namespace btsim::cluster::internal {

// Orders the cells of a column of an aggregate family after cells were
// appended: every contribution stays, by timestamp then version (both
// descending), so that replicas holding the same contributions encode them
// alike.
void NormalizeContributions(ColumnData& column);

// Folds the contributions of an aggregate column (`column`'s cells that
// compaction keeps) at or below `horizon` into one cell per timestamp, of
// the newest folded version, its value kept in *folded. Every change at or
// below the horizon is applied everywhere, so every replica folds the same
// contributions; the tombstones still kept are above the horizon, so each
// covers all of one timestamp's folded contributions or none, and a
// tombstone arriving later is newer than all of them. Returns whether
// anything was folded.
bool FoldContributions(Aggregate aggregate, Version horizon, ColumnData* column,
                       std::list<std::string>* folded);

}  // namespace btsim::cluster::internal

#endif  // BTSIM_CLUSTER_INTERNAL_AGGREGATE_CELLS_H_
