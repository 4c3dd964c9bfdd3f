// RowSet: the rows a read asks for, as keys and ranges. With neither keys
// nor ranges it means every row. A range with no bounds is the whole table.
#ifndef BTSIM_CLUSTER_ROW_SET_H_
#define BTSIM_CLUSTER_ROW_SET_H_

#include <string>
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

 private:
  std::vector<std::string> keys_;
  std::vector<Interval> ranges_;
};

// The smallest key greater than every key with this prefix, or "" (no upper
// bound) when the prefix is all 0xff bytes or empty.
std::string PrefixSuccessor(std::string_view prefix);

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_ROW_SET_H_
