// RowSet: the rows a read asks for, as keys and ranges. With neither keys
// nor ranges it means every row. A range with no bounds is the whole table.
#ifndef BTSIM_CLUSTER_ROW_SET_H_
#define BTSIM_CLUSTER_ROW_SET_H_

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/bound.h"

namespace btsim::cluster {

class RowSet {
 public:
  RowSet() = default;  // all rows

  void AddKey(std::string key);
  void AddRange(Interval range);
  bool IsAllRows() const { return keys_.empty() && ranges_.empty(); }

  // The non-empty intervals to scan (keys become closed point intervals),
  // sorted by start ascending; overlaps are possible and are the reader's to
  // skip. Empty and inverted ranges are dropped. An all-rows set yields one
  // unbounded interval; a set whose every member is empty yields none.
  std::vector<Interval> Normalized() const;

  // Normalized() in the order a read visits it: by start ascending, or
  // (reversed) by end descending. Computed on first use and kept until the
  // set changes, so that a read resumed batch after batch sorts it once.
  const std::vector<Interval>& ScanOrder(bool reversed) const;
  // The first position in ScanOrder(reversed) from which a read resuming
  // after row `after` must look: every interval before it ends at or before
  // `after` (reversed: starts at or after it). O(log n).
  size_t ResumeFrom(std::string_view after, bool reversed) const;

  // Not thread-safe: the caches above make even the const methods write.

 private:
  struct Order {
    std::vector<Interval> intervals;
    // reach[i]: the index of the furthest end (reversed: the smallest
    // start) among intervals[0..i]; unbounded counts as furthest. Empty
    // until the first ResumeFrom.
    std::vector<size_t> reach;
  };
  Order& OrderFor(bool reversed) const;

  std::vector<std::string> keys_;
  std::vector<Interval> ranges_;
  mutable std::optional<Order> forward_;
  mutable std::optional<Order> reversed_;
};

// The smallest key greater than every key with this prefix, or "" (no upper
// bound) when the prefix is all 0xff bytes or empty.
std::string PrefixSuccessor(std::string_view prefix);

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_ROW_SET_H_
