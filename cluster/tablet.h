// Tablet: a contiguous key range of one table, [start, end), holding its rows
// sorted by key in one vector of RowRecords. The table bounds each tablet's
// size, so inserting into the vector stays cheap. Not thread-safe.
#ifndef BTSIM_CLUSTER_TABLET_H_
#define BTSIM_CLUSTER_TABLET_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "cluster/row_codec.h"

namespace btsim::cluster {

class Tablet {
 public:
  Tablet(std::string start, std::string end, bool pinned)
      : start_(std::move(start)), end_(std::move(end)), pinned_(pinned) {}

  const std::string& start() const { return start_; }  // "" = first key
  const std::string& end() const { return end_; }      // "" = no end
  // A pinned start is a user-requested split: never merged away.
  bool pinned() const { return pinned_; }
  bool Covers(std::string_view key) const {
    return key >= start_ && (end_.empty() || key < end_);
  }

  // True when rows changed since compaction last cleared the flag.
  bool dirty() const { return dirty_; }
  void set_dirty(bool dirty) { dirty_ = dirty; }

  size_t size() const { return rows_.size(); }
  int64_t bytes() const { return bytes_; }
  const RowRecord& row(size_t i) const { return rows_[i]; }

  // Index of the first row with key >= `key`.
  size_t LowerBound(std::string_view key) const;
  // Index of the first row with key > `key`.
  size_t UpperBound(std::string_view key) const;
  // Null when absent.
  const RowRecord* Find(std::string_view key) const;

  // Inserts or replaces the row with the record's key. Requires Covers(key).
  void Put(RowRecord record);
  void Erase(std::string_view key);
  // Erases rows [first, last).
  void EraseRange(size_t first, size_t last);

  // A deep copy (rows copied byte for byte), marked dirty.
  Tablet Clone() const;

  // Moves rows at index >= `at` into a new tablet starting at that row's key.
  // Requires 0 < at < size().
  Tablet SplitAt(size_t at);
  // Appends every row of `next`, which must start where this one ends.
  void Absorb(Tablet&& next);

  // Replaces row i in place with `record` (same key) or removes it when
  // `record` is invalid. Used by compaction.
  void Rewrite(size_t i, RowRecord record);
  // Removes invalid records left by Rewrite.
  void DropInvalid();

 private:
  std::string start_;
  std::string end_;
  bool pinned_;
  std::vector<RowRecord> rows_;
  int64_t bytes_ = 0;
  bool dirty_ = true;
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_TABLET_H_
