// Tablet: a contiguous key range of one table, [start, end), holding its rows
// sorted by key. Rows are kept in chunks (sorted arrays of at most
// kMaxChunkRows RowRecords, in key order), so inserting a row shifts at most
// one chunk instead of the whole tablet (a tablet holds up to the table's
// split_rows, 16 Ki rows by default). Rows are still addressed by their index
// in the whole tablet (0 .. size() - 1); row(i) finds the chunk by binary
// search over the chunks' first indices. Not thread-safe.
#ifndef BTSIM_CLUSTER_TABLET_H_
#define BTSIM_CLUSTER_TABLET_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/bytes.h"
#include "cluster/row_codec.h"

namespace btsim::cluster {

class Tablet {
  // A chunk of rows in one allocation holding what a search reads: the
  // prefix all its keys share, their heads after it (cluster/key_heads.h),
  // a summary of every eighth head, and the rows. Defined in tablet.cc.
  struct Chunk;

 public:
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
  // sim::StableHash(start(), seed), remembered for the last seed asked (the
  // start never changes): computed once per tablet by a caller that names
  // tablets by such a hash. Mutable state: needs the owner's serialisation.
  uint64_t StartHash(uint64_t seed) const;

  // Compaction bookkeeping. With the schema unchanged and no age-based GC
  // rule, compaction can change only the marked rows (RowRecord::marked()),
  // or any row while all_dirty().
  //
  // True when compaction must consider every row: a new or cloned tablet.
  // Setting it unmarks every row.
  bool all_dirty() const { return all_dirty_; }
  void set_all_dirty(bool all_dirty);
  // Rows Put with `dirty`, or marked, since compaction last took the marks.
  // None while all_dirty().
  size_t marked() const { return marked_; }
  // True when compaction may change some row.
  bool dirty() const { return all_dirty_ || marked_ > 0; }

  // A chunk splits in two when it would exceed this many rows.
  static constexpr size_t kMaxChunkRows = 128;

  size_t size() const { return size_; }
  int64_t bytes() const { return bytes_; }
  // Requires i < size().
  const RowRecord& row(size_t i) const;

  // Index of the first row with key >= `key`.
  size_t LowerBound(std::string_view key) const;
  // Index of the first row with key > `key`.
  size_t UpperBound(std::string_view key) const;
  // Null when absent.
  const RowRecord* Find(std::string_view key) const;

  // Where a key is, or would be inserted: valid until the tablet changes.
  struct Slot {
    size_t chunk = 0;
    size_t offset = 0;  // in the chunk
    bool found = false;
  };
  Slot Seek(std::string_view key) const;

  // The row at `slot` (from Seek, tablet unchanged since); null when the key
  // was not found.
  const RowRecord* At(const Slot& slot) const;

  // Batched prefetching, for a caller about to Seek many keys (a
  // replication batch): it calls ProbeChunk, then ProbeHeads, then ProbeRow
  // for each key, several other keys' steps between a key's two steps (so
  // that what a step requested has arrived when the next reads it), and
  // only then searches (SeekProbed). Each step touches only memory the
  // previous one requested, so the cache misses of different keys overlap
  // instead of following one another; ProbeRow also fetches the rows and
  // heads that inserting an absent key would shift. Changes nothing.
  struct Probe {
    const Chunk* chunk = nullptr;  // null: none (empty tablet, stale index)
    size_t index = 0;              // chunks_[index] held `chunk`
    size_t offset = 0;  // ProbeRow: the key's lower bound in the chunk
  };
  Probe ProbeChunk(std::string_view key) const;
  // ProbeChunk(key) in two steps, so that a batch's searches of the chunk
  // index and its loads of the chunks found overlap: FindChunk searches the
  // index and requests the chunk's entry; ProbeChunkAt(FindChunk(key)),
  // with no change in between, is ProbeChunk(key). After changes,
  // ProbeChunkAt may probe another chunk (a probe is never trusted) or give
  // an empty probe.
  size_t FindChunk(std::string_view key) const;
  Probe ProbeChunkAt(size_t found) const;
  // Both require Current(probe) (true with no change since ProbeChunk).
  void ProbeHeads(std::string_view key, const Probe& probe) const;
  void ProbeRow(std::string_view key, Probe* probe) const;
  // Whether the probe's chunk is still this tablet's chunk at its index
  // (compared as a pointer before it is followed).
  bool Current(const Probe& probe) const {
    return probe.chunk != nullptr && probe.index < chunks_.size() &&
           chunks_[probe.index].get() == probe.chunk;
  }
  // Seek(key) from a probe ProbeRow made (usually for `key`, but any key
  // will do) possibly before later changes to this tablet: the slot when
  // the probe still gives it (checked against the rows and the tablet's
  // bounds, never trusted), nullopt when it does not. A slot returned here
  // also means that this tablet covers `key`; after nullopt, it may not.
  std::optional<Slot> SeekProbed(std::string_view key,
                                 const Probe& probe) const;

  // Marks the row at `slot` (found; nothing while all_dirty()).
  void Mark(const Slot& slot);
  // The slots of the marked rows, in key order, unmarking them.
  std::vector<Slot> TakeMarked();

  // Inserts or replaces the row with the record's key. Requires Covers(key).
  // Marks the row (for compaction) when `dirty`, and keeps the mark of a row
  // it replaces: a caller that knows compaction would leave the row as it is
  // passes false.
  void Put(RowRecord record, bool dirty = true);
  // The same at `slot`, which Seek(record.key()) returned with no change to
  // the tablet since: saves the second search of a read-modify-write.
  void Put(RowRecord record, bool dirty, const Slot& slot);
  // Erased rows take their marks with them.
  void Erase(std::string_view key);
  // Erases rows [first, last).
  void EraseRange(size_t first, size_t last);

  // A deep copy (rows copied byte for byte), all_dirty().
  Tablet Clone() const;

  // The least index i such that the rows before i hold at least half of
  // bytes() (size() when there is none): where a split leaves half the bytes
  // on each side. Reads every row up to i, prefetching ahead.
  size_t HalfBytesIndex() const;

  // Moves rows at index >= `at`, with their marks, into a new tablet starting
  // at that key (all_dirty() when this one is). Requires 0 < at < size().
  // Whole chunks move; only the chunk holding row `at` is cut in two.
  Tablet SplitAt(size_t at);
  // Appends every row of `next`, with their marks, which must start where
  // this one ends; all_dirty() (and unmarked) when either was.
  void Absorb(Tablet&& next);

  // The rows chunk by chunk, for walks over every row in key order that
  // need no index: chunk c's rows are ChunkRows(c), c < chunk_count().
  // Valid until the tablet changes.
  size_t chunk_count() const { return chunks_.size(); }
  std::span<const RowRecord> ChunkRows(size_t c) const;

  // The slot of row i. Requires i < size().
  Slot SlotAt(size_t i) const;
  // Replaces the row at `slot` (found) in place with `record` (same key), or
  // with an invalid record when `record` is invalid: slots and indices stay
  // valid, but the tablet must not be searched until DropInvalid(). A valid
  // record takes over the row's mark; an invalid one drops it. Used by
  // compaction.
  void Rewrite(const Slot& slot, RowRecord record);
  void Rewrite(size_t i, RowRecord record) {
    Rewrite(SlotAt(i), std::move(record));
  }
  // Removes invalid records left by Rewrite.
  void DropInvalid();

 private:
  // The chunk holding row `i` (requires i < size()) and the row's offset in
  // it.
  std::pair<size_t, size_t> Locate(size_t i) const;
  // The chunk that holds or would hold `key`: the last one whose first key
  // is <= key (0 when none is). Requires !chunks_.empty().
  size_t ChunkFor(std::string_view key) const;
  // Every row, in order, moved out of the chunks (which are dropped).
  std::vector<RowRecord> TakeRows();
  // Replaces the contents with `rows` (sorted), re-chunked; bytes_ is kept.
  void SetRows(std::vector<RowRecord> rows);
  // Recomputes first_, first_key_ and every chunk's heads, dropping empty
  // chunks.
  void Reindex();
  // Recomputes size_, first_, first_key_ and the chunk index from chunks_
  // (none empty), leaving the chunks' heads as they are.
  void IndexChunkStarts();
  // Calls f(row) for each row from index `first` on, in order, until f
  // returns false, prefetching rows a few places ahead: for walks over many
  // rows that are likely not in cache. Requires first <= size().
  template <typename F>
  void WalkRows(size_t first, F&& f) const;
  // Index in chunk c of the first row with key >= `key` (`upper` false) or
  // > `key` (`upper` true), touching only the rows whose head ties with the
  // key's.
  size_t BoundIn(size_t c, std::string_view key, bool upper) const;
  // Recomputes first_heads_ and first_prefix_ from first_key_.
  void IndexChunks();
  // Brings first_ up to date with the inserts counted in inserted_. Every
  // reader of first_ calls it first.
  void FreshenFirst() const;
  // Empties first_ and inserted_ (with chunks_).
  void ClearFirst();

  std::string start_;
  std::string end_;
  bool pinned_;
  // StartHash's last answer, for start_hash_seed_ (when has_start_hash_).
  mutable bool has_start_hash_ = false;
  mutable uint64_t start_hash_seed_ = 0;
  mutable uint64_t start_hash_ = 0;
  // Non-empty chunks in key order; first_[c] is the tablet index of
  // chunks_[c]'s first row, first_key_[c] a copy of its key (searching the
  // chunks touches no row).
  std::vector<std::unique_ptr<Chunk>> chunks_;
  // An insert into chunk c counts itself in inserted_[c] (same size as
  // first_) instead of adding one to the start of every later chunk: first_
  // is exact only for the chunks before stale_from_ (kFresh: no insert since
  // FreshenFirst), and FreshenFirst adds the counts in (a pass over two
  // arrays, made by a read, not by each insert). Mutable: const reads
  // update them, so even const calls need the owner's serialisation.
  static constexpr size_t kFresh = static_cast<size_t>(-1);
  mutable std::vector<size_t> first_;
  mutable std::vector<uint32_t> inserted_;
  mutable size_t stale_from_ = kFresh;
  std::vector<std::string> first_key_;
  // For ChunkFor (see cluster/key_heads.h): the heads of first_key_ after
  // the prefix they all share. Kept by IndexChunks whenever first_key_
  // changes.
  std::vector<uint64_t> first_heads_;
  std::string first_prefix_;
  size_t size_ = 0;
  int64_t bytes_ = 0;
  bool all_dirty_ = true;
  size_t marked_ = 0;
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_TABLET_H_
