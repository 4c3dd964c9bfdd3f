// Applying the mutations of one request to one row: the row a commit
// leaves. Internal to cluster/ (Table's writes).
//
// ApplyMutations is the general path: it decodes the row, edits it and
// encodes the result. ApplyRequest takes one fast path when it can (a
// single SetCell made on the encoding, cluster/internal/row_edits.h) and
// the general path otherwise; both give the same bytes
// (tests/cluster/row_apply_test.cc compares them).
#ifndef BTSIM_CLUSTER_INTERNAL_ROW_APPLY_H_
#define BTSIM_CLUSTER_INTERNAL_ROW_APPLY_H_

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "cluster/mutation.h"
#include "cluster/row_codec.h"
#include "cluster/schema.h"
#include "cluster/timestamp.h"
#include "cluster/version.h"

namespace btsim::cluster::internal {

// A request: mutations, each with the table's id of the family it names
// (kNoFamily for DeleteFromRow), committed at `version`. Every mutation is
// valid (Table::ValidateMutations); each takes effect in order, and a
// delete also erases the cells earlier mutations of the request wrote.
//
// Columns of aggregate families keep each contribution (AddToCell) as a
// cell of its own, ordered by timestamp then version, both descending:
// cells of one timestamp do not replace each other there. The inputs of
// one commit to one cell (a request's several inputs, or those of several
// entries of one MutateRows batch, which share its version) combine into
// one contribution. (Replication never applies a record twice: replicas
// deduplicate by origin and log position.)
struct Request {
  std::span<const Mutation> mutations;
  std::span<const uint32_t> family_ids;  // one per mutation
  Version version = 0;
  Timestamp server_time;  // what kServerTimestamp resolves to
  // The aggregate of each mutation's family, one per mutation; empty when
  // no family of the request has one.
  std::span<const Aggregate> aggregates = {};
};

// Request::family_ids, held without an allocation for the common request
// of one mutation.
class FamilyIds {
 public:
  void Add(uint32_t id) {
    if (size_ == 1) many_.push_back(one_);
    if (size_ == 0) {
      one_ = id;
    } else {
      many_.push_back(id);
    }
    ++size_;
  }
  size_t size() const { return size_; }
  std::span<const uint32_t> ids() const {
    return size_ <= 1 ? std::span<const uint32_t>(&one_, size_)
                      : std::span<const uint32_t>(many_);
  }

 private:
  uint32_t one_ = 0;
  size_t size_ = 0;
  std::vector<uint32_t> many_;  // every id, once there are two
};

// A cell that another of the same timestamp replaced (or, arriving late,
// lost to): the cell at `timestamp` from `version` until `until`, the
// winner's version. Garbage collection still needs it (column_gc.h).
// `qualifier` points into the request or the old row.
struct SupersededCell {
  uint32_t family_id;
  std::string_view qualifier;
  Timestamp timestamp;
  Version version;
  Version until;
};

// The row after a request.
struct WrittenRow {
  RowRecord row;       // invalid when the row would exceed the size limit
  size_t size = 0;     // bytes of key and encoding
  bool dirty = false;  // MayNeedCompaction(row)
  // Cells of another version the request's writes met at their
  // timestamps (writes of one request do not supersede each other).
  std::vector<SupersededCell> superseded;
};

// Applies `request` to `old` (null: the row does not exist) for row `key`.
// A row that would exceed `max_bytes` is not encoded (only its size is
// given).
WrittenRow ApplyMutations(std::string_view key, const RowRecord* old,
                          const Request& request, int64_t max_bytes);
// The same bytes, by the fast path when it applies.
WrittenRow ApplyRequest(std::string_view key, const RowRecord* old,
                        const Request& request, int64_t max_bytes);

}  // namespace btsim::cluster::internal

#endif  // BTSIM_CLUSTER_INTERNAL_ROW_APPLY_H_
