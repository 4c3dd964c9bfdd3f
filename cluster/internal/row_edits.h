// Row edits made on the encoding (cluster/row_codec.h) without decoding it:
// the commonest writes and compactions, each byte-for-byte what decoding,
// editing and encoding the row would give. Each one either applies or says
// so, leaving the general path to the caller.
#ifndef BTSIM_CLUSTER_INTERNAL_ROW_EDITS_H_
#define BTSIM_CLUSTER_INTERNAL_ROW_EDITS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cluster/row_codec.h"
#include "cluster/timestamp.h"
#include "cluster/version.h"

namespace btsim::cluster::internal {

// The row `old` (null: no row) with one cell written: family `family_id`,
// `qualifier`, at `timestamp`, committed at `version`, holding `value`.
// Made on the encoding when the timestamp is not before the epoch, at
// millisecond granularity, and the write is one of the commonest: a row's first
// cell; a cell in an existing column in a later millisecond than its newest
// cell (it comes first); or that newest cell rewritten in its millisecond, by a
// version no older than its own (of one timestamp the newest version wins; the
// later write on a tie), as ReadModifyWriteRow writes a hot row; then
// *superseded is the rewritten cell's version (else kNoVersion). Otherwise an
// invalid record.
RowRecord WithCellWritten(std::string_view key, const RowRecord* old,
                          uint32_t family_id, std::string_view qualifier,
                          Timestamp timestamp, Version version,
                          std::string_view value, Version* superseded);

// A row with no tombstone and one column (of one family) holding at most
// kMaxCells cells: what compaction's commonest case reads of it.
struct LoneColumn {
  static constexpr size_t kMaxCells = 8;
  uint32_t family_id = 0;
  size_t cells = 0;
  // Cell k's timestamp (newest first), version, and where its encoding
  // ends.
  std::array<Timestamp, kMaxCells> timestamps{};
  std::array<Version, kMaxCells> versions{};
  std::array<size_t, kMaxCells> end{};
  size_t count_at = 0;  // where the cell count starts
  size_t cells_at = 0;  // where the first cell starts
};
// Fills `*out` and returns true when `encoded` is such a row.
bool ReadLoneColumn(std::string_view encoded, LoneColumn* out);

// `old` (described by `column`, from ReadLoneColumn(old.encoded())) keeping
// only its newest `keep` cells, 0 < keep < column.cells.
RowRecord KeepNewestCells(const RowRecord& old, const LoneColumn& column,
                          size_t keep);

}  // namespace btsim::cluster::internal

#endif  // BTSIM_CLUSTER_INTERNAL_ROW_EDITS_H_
