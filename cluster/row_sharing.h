// Row sharing: the clusters of one instance holding one allocation for a row
// version they each computed alike.
//
// Every cluster is a complete storage engine: its tables hold every row it
// serves, and it can compute each of them itself. Stored rows never change
// once written (RowRecord), so clusters holding the same version of a row
// may hold one allocation of it: memory and work saved, no state shared
// (what one cluster does never changes what another reads). Two operations
// give the same bytes on every cluster, and so may be shared:
//
// - A commit. Applying a change to a row is a pure function of the row's
//   bytes, the mutations (with their family ids) and the commit version. A
//   local commit of one mutation offers its result with its replication
//   record (RowShare); a replica whose row holds the bytes the origin's
//   held before, and whose id for the mutation's family is the origin's,
//   takes the origin's row instead of computing it again.
// - A compaction. Compacting one row version with the same GC rule at the
//   same moment gives the same bytes. Within one round of compactions
//   (CompactionShares), the first cluster records its result for a shared
//   row and the others take it, so the row stays shared.
//
// Either way the result is what the cluster would have computed
// (tests/cluster/row_sharing_test.cc); a cluster given no share computes
// it. Records sharing an allocation are used by one thread at a time (an
// instance's). Not thread-safe.
#ifndef BTSIM_CLUSTER_ROW_SHARING_H_
#define BTSIM_CLUSTER_ROW_SHARING_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cluster/gc_rule.h"
#include "cluster/row_codec.h"
#include "cluster/timestamp.h"

namespace btsim::cluster {

// What a local commit of one mutation offers the replicas.
class RowShare {
 public:
  RowShare() = default;  // none
  // The commit turned `before` (null: no row) into `after`, which it marked
  // for compaction when `dirty`; `family_id` is the origin's id of the
  // family its mutation names (kNoFamily: none).
  RowShare(const RowRecord* before, const RowRecord& after, bool dirty,
           uint32_t family_id);
  RowShare(RowShare&&) noexcept = default;
  RowShare& operator=(RowShare&&) noexcept = default;
  // Copies share the rows.
  RowShare(const RowShare& other);
  RowShare& operator=(const RowShare& other);

  bool valid() const { return after_.valid(); }
  const RowRecord& before() const { return before_; }  // invalid: no row
  const RowRecord& after() const { return after_; }
  // Whether the result is marked for compaction (as applying would mark it).
  bool dirty() const { return dirty_; }
  uint32_t family_id() const { return family_id_; }

  // The origin's row after the commit, when applying the commit's mutation
  // to `row` (null: no row), whose family is `family_id` here, gives exactly
  // it; null when it may not (or there is no share).
  const RowRecord* ResultFor(const RowRecord* row, uint32_t family_id) const;

  // Hints for loops over many records: ask the CPU for the line taking the
  // result writes (its reference count), and for the lines dropping the
  // share writes. Harmless without a share.
  void PrefetchForTake() const { after_.Prefetch(); }
  void PrefetchForRelease() const {
    before_.PrefetchForRelease();
    after_.PrefetchForRelease();
  }

 private:
  RowRecord before_;  // invalid: there was no row
  RowRecord after_;
  bool dirty_ = false;
  uint32_t family_id_ = kNoFamily;
};

// The results of one round of compactions (one moment), for the clusters
// compacting in it one after another: Clear() readies it for the next
// round. The GC rules it points to must not change during a round.
class CompactionShares {
 public:
  // What was recorded for compacting `row` (the same allocation): the
  // result, the family id of the row's one column, the GC rule used and
  // the row's newest commit version. A cluster whose rule for that family
  // equals *rule (and has been its only rule through the horizon), whose
  // compaction horizon is at or above that version, and which holds no
  // superseded cell of the row, would compute the same result, and may
  // take it without reading the row.
  struct Recorded {
    const RowRecord* result = nullptr;  // null: nothing recorded
    uint32_t family_id = 0;
    const GcRule* rule = nullptr;
    Version newest_version = 0;
  };
  Recorded Find(const RowRecord& row, Timestamp now) const;
  // Hints for a caller about to compact many rows: requests what Find(row,
  // ...) reads first, reading nothing of the row but its address; then,
  // once that has arrived (`near`), the result taking it writes to.
  void Prefetch(const RowRecord& row, bool near) const;
  // Records `result` as what compacting `row`, whose one column is in
  // family `family_id` and whose newest version is `newest_version`, with
  // `rule` at `now` gives (forgetting the results of another moment). Only
  // shared rows are worth recording.
  void Add(const RowRecord& row, uint32_t family_id, const GcRule& rule,
           Timestamp now, Version newest_version, const RowRecord& result);
  // Forgets every result, dropping its references, and keeps room for
  // about as many results as this round had.
  void Clear();

 private:
  // An open-addressing table keyed by the row's allocation (linear
  // probing; a slot with an invalid `row` is empty), so that a lookup
  // usually touches one cache line. Only looked up, never iterated.
  struct Slot {
    RowRecord row;  // keeps the allocation from being reused
    RowRecord result;
    const GcRule* rule = nullptr;
    uint32_t family_id = 0;
    Version newest_version = 0;
  };
  size_t Home(const void* allocation) const;
  // Doubles the table (at least 1,024 slots), moving every entry.
  void Grow();

  std::vector<Slot> slots_;  // a power of two in size, at most half used
  size_t used_ = 0;
  Timestamp now_;  // the moment of every result held
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_ROW_SHARING_H_
