// The compact storage format of one row, and its decoded, editable form.
//
// A stored row is one heap allocation (RowRecord): two 32-bit lengths, the
// key, then the encoded row: varint-coded tombstones, families (by family
// id), columns (by qualifier) and cells (newest first, timestamp stored in
// milliseconds). Deleted cells stay in the encoding, hidden by tombstones,
// until compaction rewrites the row.
//
// RowData is the decoded form. Its string_views point into the RowRecord it
// was decoded from (and into whatever owns new values); keep those alive until
// the row is re-encoded.
#ifndef BTSIM_CLUSTER_ROW_CODEC_H_
#define BTSIM_CLUSTER_ROW_CODEC_H_

#include <cstdint>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

#include "base/prefetch.h"
#include "base/status.h"
#include "cluster/timestamp.h"
#include "cluster/version.h"

namespace btsim::cluster {

struct CellData {
  Timestamp timestamp;  // at millisecond granularity
  Version version;
  std::string_view value;
};

// Covers cells of its column with a timestamp in [start, end) (see
// InTimestampRange) and version < tombstone version.
struct ColumnTombstone {
  Timestamp start;
  Timestamp end;
  Version version;
};

struct ColumnData {
  std::string_view qualifier;
  std::vector<ColumnTombstone> tombstones;
  std::vector<CellData> cells;  // timestamp descending, unique
};

// A family id no family has: what a mutation that names no family
// (DeleteFromRow) resolves to.
inline constexpr uint32_t kNoFamily = UINT32_MAX;

struct FamilyData {
  uint32_t id;
  Version tombstone = kNoVersion;   // covers cells with an older version
  std::vector<ColumnData> columns;  // qualifier ascending
};

struct RowData {
  Version tombstone = kNoVersion;    // covers cells with an older version
  std::vector<FamilyData> families;  // id ascending

  bool empty() const { return tombstone == kNoVersion && families.empty(); }
};

// True when a tombstone of the row, family or column hides `cell`.
bool IsCovered(const RowData& row, const FamilyData& family,
               const ColumnData& column, const CellData& cell);
// The version of the oldest tombstone of the row, family or column that
// hides `cell`; kNoVersion when none does.
Version HiddenAt(const RowData& row, const FamilyData& family,
                 const ColumnData& column, const CellData& cell);

// One stored row: key and encoded data in a single allocation, plus one bit
// its owner may keep with it (mark).
//
// The bytes never change once written, so records may share them: Share()
// returns another reference to the same allocation, which is freed with the
// last one (replicas that hold the same row version share one copy, see
// cluster/row_sharing.h). The count is not atomic: every record sharing an
// allocation must be used by one thread at a time (an instance's). Keys are
// at most 65,535 bytes (Bigtable's limit is 4 KiB).
class RowRecord {
 public:
  RowRecord() = default;
  RowRecord(std::string_view key, const RowData& row);
  RowRecord(RowRecord&& other) noexcept
      : bits_(std::exchange(other.bits_, 0)) {}
  RowRecord& operator=(RowRecord&& other) noexcept {
    if (this != &other) {
      if (bits_ != 0) Release();
      bits_ = std::exchange(other.bits_, 0);
    }
    return *this;
  }
  RowRecord(const RowRecord&) = delete;
  RowRecord& operator=(const RowRecord&) = delete;
  ~RowRecord() {
    if (bits_ != 0) Release();
  }

  // Moves the records [first, last) one place on, to [first + 1, last + 1),
  // as plain words (no reference count is touched), leaving *first invalid.
  // Requires *last invalid. For sorted arrays of records making room for an
  // insert.
  static void ShiftRight(RowRecord* first, RowRecord* last);

  std::string_view key() const;
  std::string_view encoded() const;
  // The stored row's size: key, encoded row and an 8-byte header (the same
  // for every record that shares the allocation).
  size_t bytes() const;
  bool valid() const { return data() != nullptr; }
  // Asks the CPU to bring the record's first 128 bytes into cache (a hint:
  // harmless on an invalid record).
  void Prefetch() const {
    const uintptr_t at = bits_ & ~uintptr_t{1};
    __builtin_prefetch(reinterpret_cast<const void*>(at));
    __builtin_prefetch(reinterpret_cast<const void*>(at + 64));
  }
  // Asks for the rest of a record longer than the 128 bytes Prefetch
  // fetches. Reads its header: call it once an earlier Prefetch has had
  // time to bring that in.
  void PrefetchRest() const {
    if (!valid()) return;
    const size_t size = bytes();
    if (size > 128) PrefetchForRead(data() + 128, size - 128);
  }
  // Asks the CPU for the line Release writes (the reference count, which
  // free() writes too, with the 8 bytes before it), for writing (a hint:
  // harmless on an invalid record). For loops that drop many records.
  void PrefetchForRelease() const {
    const uintptr_t at = bits_ & ~uintptr_t{1};
    if (at != 0) PrefetchForWrite(reinterpret_cast<const void*>(at - 8), 16);
  }
  // A byte-for-byte copy in an allocation of its own, unmarked.
  RowRecord Clone() const;
  // Another reference to the same allocation, unmarked (invalid when this
  // one is); a Clone when 65,535 records already share it.
  RowRecord Share() const;
  // Identifies the allocation (equal for records that share it; null when
  // invalid). Not for ordering anything.
  const void* allocation() const { return data(); }
  // True when another record refers to the same allocation.
  bool shared() const;
  // True when both hold the same key and encoding (or both are invalid):
  // always when they share an allocation, else by comparing the bytes.
  bool SameRow(const RowRecord& other) const;
  // A record of `key` whose encoding of `encoded_size` bytes the caller then
  // writes at *encoding: for edits made on encodings
  // (cluster/internal/row_edits.h).
  static RowRecord Uninitialized(std::string_view key, size_t encoded_size,
                                 char** encoding);

  // Not part of the row: a flag that moves with the record (the tablet's
  // "compaction may change this row"), kept in the pointer's low bit.
  // Requires valid() to set.
  bool marked() const { return (bits_ & 1) != 0; }
  void set_marked(bool marked);

 private:
  // The allocation: a header holding the reference count and the lengths,
  // then the key and the encoding.
  char* data() const { return reinterpret_cast<char*>(bits_ & ~uintptr_t{1}); }
  // Drops this reference (freeing the allocation with the last one) and
  // leaves the record invalid.
  void Release();
  // Replaces the contents with a new, uninitialized allocation for n bytes
  // of row.
  char* Allocate(size_t n);

  uintptr_t bits_ = 0;  // the allocation's address | mark
};

// Appends the encoding of `row` to `out`.
void EncodeRow(const RowData& row, std::string* out);
// Size EncodeRow would produce.
size_t EncodedSize(const RowData& row);
// Decodes `encoded` (produced by EncodeRow). Aborts on corrupt input.
RowData DecodeRow(std::string_view encoded);
// OK when `encoded` is what EncodeRow gives for a row keeping the
// invariants every writer keeps: families by strictly ascending id, each
// below `family_ids`; columns by strictly ascending qualifier; cells by
// timestamp, then version, both descending, no timestamp negative (equal
// timestamps are an aggregate family's contributions: which families have
// an aggregate is not checked); varints in their shortest form; nothing
// after the row. Then DecodeRow and every reader of
// encodings accept it. Otherwise INVALID_ARGUMENT saying what does not fit
// and at which byte. Never aborts: for encodings from outside the process
// (cluster/image.h).
Status CheckRowEncoding(std::string_view encoded, uint32_t family_ids);

// False when compaction could only change the row through an age rule or a
// dropped family: it has no tombstone and at most one cell per column
// (version-count rules keep at least one). The encoded form is read
// without allocating.
bool MayNeedCompaction(const RowData& row);
bool MayNeedCompaction(std::string_view encoded);

// A cell that no tombstone hides, as the read path sees it.
struct LiveCell {
  uint32_t family_id;
  std::string_view qualifier;
  Timestamp timestamp;
  std::string_view value;
};

// Appends every live cell of `encoded` to `out`, in storage order (family id,
// qualifier ascending, timestamp descending), without building a RowData.
void AppendLiveCells(std::string_view encoded, std::vector<LiveCell>* out);
// The newest live cell of column (family `family_id`, `qualifier`): the
// first of that column AppendLiveCells would append; nullopt when it has
// none. Reads no other column's cells.
std::optional<LiveCell> NewestLiveCell(std::string_view encoded,
                                       uint32_t family_id,
                                       std::string_view qualifier);

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_ROW_CODEC_H_
