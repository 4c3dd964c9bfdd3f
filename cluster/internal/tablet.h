// Tablet: a contiguous key range of one table, [start, end), holding its
// rows sorted by key and remembering which of them compaction may change.
// Internal to cluster/: Table's storage.
//
// Rows are kept in chunks (sorted arrays of at most kMaxChunkRows records),
// so that inserting a row shifts at most one chunk; chunks are found by
// integer keys (cluster/internal/key_heads.h). Not thread-safe: even const
// calls update caches, so the owner serialises every call.
#ifndef BTSIM_CLUSTER_INTERNAL_TABLET_H_
#define BTSIM_CLUSTER_INTERNAL_TABLET_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/bytes.h"
#include "cluster/bound.h"
#include "cluster/row_codec.h"

namespace btsim::cluster::internal {

// Where a key is, or would be inserted, in one tablet: valid until the
// tablet next changes (edits through EditDue and EditRange excepted).
struct RowSlot {
  size_t chunk = 0;
  size_t offset = 0;               // in the chunk
  const RowRecord* row = nullptr;  // the key's row; null when absent
};

// What an editor (Tablet::EditDue, EditRange) does to one row.
struct RowEdit {
  RowRecord replacement;  // when valid: the row's new record (same key)
  bool erase = false;     // removes the row
  bool mark = false;      // marks the row: compaction may change it
};
using RowEditor = std::function<RowEdit(const RowRecord& row)>;

class Tablet {
  struct Chunk;  // defined in tablet.cc

 public:
  // A search for one key made in steps (Advance), so that a caller
  // searching for many keys can interleave their steps and overlap their
  // cache misses (cluster/internal/row_probes.h).
  struct Probe {
    const Chunk* chunk = nullptr;  // null: none (empty tablet)
    size_t index = 0;              // the chunk's index when probed
    size_t offset = 0;             // the key's bound in the chunk
    int steps = 0;                 // taken so far, of kProbeSteps
  };
  static constexpr int kProbeSteps = 4;
  // A chunk splits in two when it would exceed this many rows.
  static constexpr size_t kMaxChunkRows = 128;

  // Every row of a new tablet is due for compaction (see EditDue).
  Tablet(std::string start, std::string end, bool pinned);
  Tablet(Tablet&&) noexcept;
  Tablet& operator=(Tablet&&) noexcept;
  ~Tablet();

  const std::string& start() const { return start_; }  // "" = first key
  const std::string& end() const { return end_; }      // "" = no end
  // A pinned start is a user-requested split: never merged away.
  bool pinned() const { return pinned_; }
  bool Covers(std::string_view key) const {
    return !LessBytes(key, start_) && (end_.empty() || LessBytes(key, end_));
  }
  size_t size() const { return size_; }  // rows
  int64_t bytes() const { return bytes_; }
  // sim::StableHash(start(), seed), remembered for the last seed asked.
  uint64_t StartHash(uint64_t seed) const;

  RowSlot Seek(std::string_view key) const;
  // Inserts or replaces the row with the record's key at `slot`, which
  // Seek(record.key()) returned with no change since. Requires
  // Covers(key). Marks the row when `dirty`; a replaced row keeps its mark.
  void Put(const RowSlot& slot, RowRecord record, bool dirty);
  // Calls visit(row) for each row inside `interval`, in key order (reversed:
  // descending), until it returns false; then returns false.
  bool Scan(const Interval& interval, bool reversed,
            const std::function<bool(const RowRecord&)>& visit) const;

  // Takes a probe made for `key` one step further (nothing after the last
  // step). Requires no change to the tablet since the probe's first step.
  // Changes nothing but the probe.
  void Advance(std::string_view key, Probe* probe) const;
  // Seek(key) from a probe (of every step, usually for `key`), possibly
  // made before later changes: the slot when the probe still gives it
  // (checked against the rows and the tablet's bounds, never trusted),
  // nullopt when it does not. A slot also means that the tablet covers
  // `key`; after nullopt, it may not.
  std::optional<RowSlot> SeekProbed(std::string_view key,
                                    const Probe& probe) const;

  // Compaction's walk: calls edit(row) for each row compaction may change
  // and applies what it returns. Those are every row when `every_row` or
  // when the tablet is new (or a clone), else the rows put with `dirty` or
  // marked since the last walk. The walk unmarks them first: only edits
  // that mark keep them due. `ahead` (may be empty) is called twice for
  // each marked row before `edit`, for the caller to request what its
  // edit will read (it must change nothing): a few rows before, with
  // `near` false, when the row's bytes have not arrived (read only its
  // address); then half as far, with `near` true.
  using Ahead = std::function<void(const RowRecord& row, bool near)>;
  void EditDue(bool every_row, const RowEditor& edit, const Ahead& ahead = {});
  // Calls edit(row) for every row with key in [from, to) (to "": no end),
  // in key order, and applies what it returns.
  void EditRange(std::string_view from, std::string_view to,
                 const RowEditor& edit);

  // Moves the rows from where the rows before hold half the bytes (at
  // least one row on each side) into a new tablet starting at that key,
  // with their marks. Requires size() >= 2.
  Tablet SplitInHalf();
  // Appends every row of `next`, which must start where this one ends,
  // with their marks (every row is due when either tablet's was).
  void Absorb(Tablet&& next);
  // A copy, every row due: rows copied byte for byte, or, with
  // `share_rows`, the same row allocations (RowRecord::Share; stored rows
  // never change once written).
  Tablet Clone(bool share_rows = false) const;

 private:
  // The chunk that holds or would hold `key`: the last one whose first key
  // is <= key (0 when none is). Requires !chunks_.empty().
  size_t ChunkFor(std::string_view key) const;
  // Recomputes first_heads_ and first_prefix_ from first_key_.
  void IndexChunks();
  // Drops empty chunks and recomputes every chunk's heads, first_key_,
  // size_ and the chunk index.
  void Reindex();
  // Recomputes first_key_, size_ and the chunk index from chunks_ (none
  // empty), leaving the chunks' heads as they are.
  void IndexChunkStarts();
  // Calls f(c, i) for the rows chunks_[c]->rows[i] from (c, i) on, in
  // order, until it returns false, requesting rows a few places ahead.
  template <typename F>
  void Walk(size_t c, size_t i, F&& f) const;
  // Marks `row` (nothing while all_due_).
  void Mark(RowRecord& row);
  // Unmarks every row.
  void UnmarkAll();
  // Applies `edit` to the row at chunks_[c]->rows[i]; an erased row is left
  // invalid, for DropErased. Returns whether it erased.
  bool Apply(size_t c, size_t i, RowEdit edit);
  // Removes the rows left invalid by Apply.
  void DropErased();

  std::string start_;
  std::string end_;
  bool pinned_;
  // StartHash's last answer, for start_hash_seed_ (when has_start_hash_).
  mutable bool has_start_hash_ = false;
  mutable uint64_t start_hash_seed_ = 0;
  mutable uint64_t start_hash_ = 0;
  // Non-empty chunks in key order; first_key_[c] is a copy of chunks_[c]'s
  // first key (searching the chunks touches no row).
  std::vector<std::unique_ptr<Chunk>> chunks_;
  std::vector<std::string> first_key_;
  // For ChunkFor: the heads of first_key_ after the prefix they all share.
  std::vector<uint64_t> first_heads_;
  std::string first_prefix_;
  size_t size_ = 0;
  int64_t bytes_ = 0;
  // Every row is due for compaction (then no row is marked); else the
  // marked rows (RowRecord::marked()), marked_ of them.
  bool all_due_ = true;
  size_t marked_ = 0;
};

}  // namespace btsim::cluster::internal

#endif  // BTSIM_CLUSTER_INTERNAL_TABLET_H_
