// Row edits made on the encoding (cluster/row_codec.h) without decoding it:
// the commonest writes and compactions, each byte-for-byte what decoding,
// editing and encoding the row would give. Each one either applies or says
// so, leaving the general path to the caller.
#ifndef BTSIM_CLUSTER_ROW_EDITS_H_
#define BTSIM_CLUSTER_ROW_EDITS_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "cluster/row_codec.h"
#include "cluster/version.h"

namespace btsim::cluster {

// A row holding one cell and nothing else: the first write of a row.
RowRecord SingleCellRow(std::string_view key, uint32_t family_id,
                        std::string_view qualifier, int64_t timestamp_micros,
                        Version version, std::string_view value);

// `old` with one more cell: the common write of a cell newer than every cell
// of its column. Only when the column (family `family_id`, `qualifier`)
// exists and `timestamp_micros` (>= 0) is in a later millisecond than its
// newest cell, so the new cell comes first; otherwise an invalid record.
RowRecord WithNewestCell(const RowRecord& old, uint32_t family_id,
                         std::string_view qualifier, int64_t timestamp_micros,
                         Version version, std::string_view value);

// `old` with the newest cell of column (family `family_id`, `qualifier`)
// replaced: the write of a cell in the same millisecond as that cell, with a
// version no older than its own (of one timestamp the newest version wins;
// the later write on a tie), as ReadModifyWriteRow writes a hot row. Only
// when that cell exists and `timestamp_micros` is a non-negative multiple
// of 1000 in its millisecond; otherwise an invalid record. The cell count
// is unchanged, so whether compaction may change the row is unchanged too.
RowRecord WithNewestCellReplaced(const RowRecord& old, uint32_t family_id,
                                 std::string_view qualifier,
                                 int64_t timestamp_micros, Version version,
                                 std::string_view value);

// A row with no tombstone and one column (of one family) holding at most
// kMaxCells cells: what compaction's commonest case reads of it.
struct LoneColumn {
  static constexpr size_t kMaxCells = 8;
  uint32_t family_id = 0;
  size_t cells = 0;
  // Cell k's timestamp (newest first), and where its encoding ends.
  std::array<int64_t, kMaxCells> timestamp_micros{};
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

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_ROW_EDITS_H_
