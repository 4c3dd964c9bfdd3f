// CompactionShares: compaction results that the clusters of an instance,
// compacting one after another at the same moment, share.
//
// Replicas often hold one shared row version (cluster/row_share.h).
// Compacting it gives the same bytes on every replica that compacts it with
// the same GC rule at the same time, so the first computes the result and
// the others take a reference to it, without reading the row's cells: the
// row stays shared instead of becoming one copy per cluster. Covers
// compaction's splice of a row with one column and no tombstone
// (Table::CompactRow), nearly every compaction of a replicated write.
//
// Holds one round's results (ReplicationFabric::CompactAll), then Clear()
// readies it for the next. Results of one moment only: an Add at another
// time than the results held forgets them first. The GC rules it points to
// must not change during a round. Not thread-safe.
#ifndef BTSIM_CLUSTER_COMPACTION_SHARES_H_
#define BTSIM_CLUSTER_COMPACTION_SHARES_H_

#include <cstddef>
#include <cstdint>
#include <vector>

#include "cluster/gc_rule.h"
#include "cluster/row_codec.h"

namespace btsim::cluster {

class CompactionShares {
 public:
  // What Add recorded for compacting `row` (the same allocation) at
  // `now_micros`: the result, the family id of the row's one column and the
  // GC rule it was compacted with. A caller whose rule for that family
  // equals *rule would compute the same result (the row's bytes decide the
  // rest), so it may take the result without reading the row.
  struct Recorded {
    const RowRecord* result = nullptr;
    uint32_t family_id = 0;
    const GcRule* rule = nullptr;
  };
  // Empty (result null) when nothing was recorded for `row` at `now_micros`.
  Recorded Find(const RowRecord& row, int64_t now_micros) const;
  // Brings into cache what Find(row, ...) and Add(row, ...) look at first,
  // reading only the record, not the row's bytes: for a caller about to
  // compact rows one after another. Changes nothing.
  void Prefetch(const RowRecord& row) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[Home(row.allocation())]);
  }
  // The second step after Prefetch(row): asks for the header of the result
  // recorded for `row`, if any, which taking it (RowRecord::Share) writes.
  // Reads the slot and the row's header. Changes nothing.
  void PrefetchResult(const RowRecord& row) const;
  // Records `result` as what compacting `row`, whose one column is in
  // family `family_id`, with `rule` at `now_micros` gives (forgetting every
  // result of another time). Only rows that other records share are worth
  // recording.
  void Add(const RowRecord& row, uint32_t family_id, const GcRule& rule,
           int64_t now_micros, const RowRecord& result);
  // Forgets every result, dropping its references (a row's allocation, the
  // key, may then be reused), and keeps room for about as many results as
  // this round had: the next round reuses memory already touched.
  void Clear();

 private:
  // An open-addressing table keyed by the row's allocation (linear
  // probing; a slot with an invalid `row` is empty), so that a lookup
  // usually touches one cache line. Only looked up, never iterated.
  struct Slot {
    RowRecord row;  // keeps the allocation (the key) from being reused
    RowRecord result;
    const GcRule* rule = nullptr;
    uint32_t family_id = 0;
  };
  size_t Home(const void* allocation) const;
  // Doubles the table (at least 1,024 slots), moving every entry.
  void Grow();

  std::vector<Slot> slots_;  // a power of two in size, at most half used
  size_t used_ = 0;
  int64_t now_micros_ = 0;  // the time of every result held
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_COMPACTION_SHARES_H_
