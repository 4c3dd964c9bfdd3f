#include "cluster/compaction_shares.h"

namespace btsim::cluster {

const RowRecord* CompactionShares::Find(const RowRecord& row,
                                        const GcRule& rule,
                                        int64_t now_micros) const {
  auto it = entries_.find(row.allocation());
  if (it == entries_.end()) return nullptr;
  const Entry& e = it->second;
  if (e.now_micros != now_micros || !(*e.rule == rule)) return nullptr;
  return &e.result;
}

void CompactionShares::Add(const RowRecord& row, const GcRule& rule,
                           int64_t now_micros, const RowRecord& result) {
  entries_.insert_or_assign(
      row.allocation(), Entry{row.Share(), &rule, now_micros, result.Share()});
}

}  // namespace btsim::cluster
