// RowShare: what a replica needs to take the row version a commit produced
// on its origin cluster instead of computing it again.
//
// Applying a commit to a row is a pure function of the row's bytes, the
// mutations (with their family ids) and the commit version. So a replica
// whose row holds the same bytes the origin's held before the commit, and
// whose family ids for the commit's mutation are the origin's, gets exactly
// the origin's row after it: it stores a reference to that allocation
// (RowRecord::Share) instead of decoding, editing, encoding and allocating a
// copy. Results are identical either way; sharing only saves the work and
// the memory. Any other replica applies the mutations itself.
//
// Only single-mutation commits carry a share. Records in a share are used
// by the instance's thread only (see RowRecord).
#ifndef BTSIM_CLUSTER_ROW_SHARE_H_
#define BTSIM_CLUSTER_ROW_SHARE_H_

#include <cstdint>
#include <limits>
#include <utility>

#include "cluster/row_codec.h"

namespace btsim::cluster {

struct RowShare {
  // The family id of a mutation that names no family (DeleteFromRow).
  static constexpr uint32_t kNoFamily = std::numeric_limits<uint32_t>::max();

  RowShare() = default;
  RowShare(RowShare&&) noexcept = default;
  RowShare& operator=(RowShare&&) noexcept = default;
  // Copies share the rows.
  RowShare(const RowShare& other)
      : before(other.before.Share()),
        after(other.after.Share()),
        dirty(other.dirty),
        family_id(other.family_id) {}
  RowShare& operator=(const RowShare& other) {
    if (this != &other) *this = RowShare(other);
    return *this;
  }

  // False when the commit carries no share (then the rest is meaningless).
  bool valid() const { return after.valid(); }

  RowRecord before;  // the origin's row before the commit; invalid: none
  RowRecord after;   // and after it
  // Whether the origin marked the row for compaction (a function of `after`
  // and `before`, so every replica that takes the share marks it alike).
  bool dirty = false;
  // The origin's id of the family the commit's one mutation names.
  uint32_t family_id = kNoFamily;
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_ROW_SHARE_H_
