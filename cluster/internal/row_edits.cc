#include "cluster/internal/row_edits.h"

#include <optional>

#include "base/check.h"
#include "cluster/internal/row_encoding.h"

namespace btsim::cluster::internal {

using encoding::GetCellTimestamp;
using encoding::PtrSink;
using encoding::PutCell;
using encoding::PutVarint;
using encoding::Reader;
using encoding::SizeSink;
using encoding::SkipColumnRest;

namespace {

// The encoding of a row holding one cell.
template <typename Sink>
void EncodeSingleCell(Sink& sink, uint32_t family_id,
                      std::string_view qualifier, Timestamp timestamp,
                      Version version, std::string_view value) {
  PutVarint(sink, kNoVersion);  // row tombstone
  PutVarint(sink, 1);           // families
  PutVarint(sink, family_id);
  PutVarint(sink, kNoVersion);  // family tombstone
  PutVarint(sink, 1);           // columns
  PutVarint(sink, qualifier.size());
  sink.Bytes(qualifier);
  PutVarint(sink, 0);  // column tombstones
  PutVarint(sink, 1);  // cells
  PutCell(sink, timestamp, version, value);
}

// A row holding one cell and nothing else.
RowRecord SingleCellRow(std::string_view key, uint32_t family_id,
                        std::string_view qualifier, Timestamp timestamp,
                        Version version, std::string_view value) {
  SizeSink size;
  EncodeSingleCell(size, family_id, qualifier, timestamp, version, value);
  char* at = nullptr;
  RowRecord out = RowRecord::Uninitialized(key, size.n, &at);
  PtrSink sink{at};
  EncodeSingleCell(sink, family_id, qualifier, timestamp, version, value);
  return out;
}

// Where the cells of column (family_id, qualifier) start in `encoded`: the
// offsets of its cell count and of its first cell, and the count. nullopt
// when the row has no such column.
struct ColumnCells {
  size_t count_at = 0;
  size_t cells_at = 0;
  uint64_t cells = 0;
};
std::optional<ColumnCells> FindColumnCells(std::string_view encoded,
                                           uint32_t family_id,
                                           std::string_view qualifier) {
  Reader in(encoded);
  in.Varint();  // row tombstone
  for (uint64_t families = in.Varint(); families > 0; --families) {
    const uint64_t id = in.Varint();
    in.Varint();  // family tombstone
    uint64_t columns = in.Varint();
    if (id < family_id) {
      for (; columns > 0; --columns) {
        in.Bytes(in.Varint());
        SkipColumnRest(in);
      }
      continue;
    }
    if (id > family_id) return std::nullopt;  // families by id: absent
    for (; columns > 0; --columns) {
      const std::string_view q = in.Bytes(in.Varint());
      if (q < qualifier) {
        SkipColumnRest(in);
        continue;
      }
      if (q > qualifier) return std::nullopt;  // columns in order: absent
      for (uint64_t t = in.Varint(); t > 0; --t) {
        in.Varint();
        in.Varint();
        in.Varint();
      }
      ColumnCells found;
      found.count_at = static_cast<size_t>(in.pos() - encoded.data());
      found.cells = in.Varint();
      found.cells_at = static_cast<size_t>(in.pos() - encoded.data());
      return found;
    }
    return std::nullopt;
  }
  return std::nullopt;
}

// A record of old's key whose encoding is old's with bytes [from, to)
// replaced by what put(sink) writes (called twice: to size, then to write).
template <typename Put>
RowRecord Spliced(const RowRecord& old, size_t from, size_t to,
                  const Put& put) {
  const std::string_view encoded = old.encoded();
  SizeSink added;
  put(added);
  char* at = nullptr;
  RowRecord out = RowRecord::Uninitialized(
      old.key(), encoded.size() - (to - from) + added.n, &at);
  PtrSink sink{at};
  sink.Bytes(encoded.substr(0, from));
  put(sink);
  sink.Bytes(encoded.substr(to));
  return out;
}

// `old` with one more cell, first in its column, when the column exists
// and the cell is in a later millisecond than its newest cell; otherwise an
// invalid record.
RowRecord WithNewestCell(const RowRecord& old, uint32_t family_id,
                         std::string_view qualifier, Timestamp timestamp,
                         Version version, std::string_view value) {
  const std::string_view encoded = old.encoded();
  const std::optional<ColumnCells> column =
      FindColumnCells(encoded, family_id, qualifier);
  if (!column) return RowRecord();
  if (column->cells > 0) {
    Reader in(encoded.substr(column->cells_at));
    if (timestamp <= GetCellTimestamp(in)) {
      return RowRecord();  // not newer than the newest cell
    }
  }
  // The old encoding with the cell count raised and the cell first.
  return Spliced(old, column->count_at, column->cells_at, [&](auto& sink) {
    PutVarint(sink, column->cells + 1);
    PutCell(sink, timestamp, version, value);
  });
}

// `old` with the newest cell of the column replaced, when that cell is in
// the write's millisecond and its version is not newer; otherwise an
// invalid record.
RowRecord WithNewestCellReplaced(const RowRecord& old, uint32_t family_id,
                                 std::string_view qualifier,
                                 Timestamp timestamp, Version version,
                                 std::string_view value, Version* superseded) {
  const std::string_view encoded = old.encoded();
  const std::optional<ColumnCells> column =
      FindColumnCells(encoded, family_id, qualifier);
  if (!column || column->cells == 0) return RowRecord();
  Reader in(encoded.substr(column->cells_at));
  if (GetCellTimestamp(in) != timestamp) return RowRecord();
  const Version replaced = in.Varint();
  if (replaced > version) return RowRecord();  // the old cell wins
  in.Bytes(in.Varint());
  *superseded = replaced;
  const size_t first_end = static_cast<size_t>(in.pos() - encoded.data());
  // The old encoding with its first cell of the column rewritten.
  return Spliced(old, column->cells_at, first_end,
                 [&](auto& sink) { PutCell(sink, timestamp, version, value); });
}

}  // namespace

RowRecord WithCellWritten(std::string_view key, const RowRecord* old,
                          uint32_t family_id, std::string_view qualifier,
                          Timestamp timestamp, Version version,
                          std::string_view value, Version* superseded) {
  *superseded = kNoVersion;
  const int64_t micros = Micros(timestamp);
  if (micros < 0 || micros % 1000 != 0) return RowRecord();
  if (old == nullptr) {
    return SingleCellRow(key, family_id, qualifier, timestamp, version, value);
  }
  RowRecord out =
      WithNewestCell(*old, family_id, qualifier, timestamp, version, value);
  if (out.valid()) return out;
  return WithNewestCellReplaced(*old, family_id, qualifier, timestamp, version,
                                value, superseded);
}

bool ReadLoneColumn(std::string_view encoded, LoneColumn* out) {
  Reader in(encoded);
  if (in.Varint() != kNoVersion || in.Varint() != 1) return false;
  const uint64_t family_id = in.Varint();
  if (in.Varint() != kNoVersion || in.Varint() != 1) return false;
  in.Bytes(in.Varint());               // qualifier
  if (in.Varint() != 0) return false;  // column tombstones
  out->count_at = static_cast<size_t>(in.pos() - encoded.data());
  const uint64_t cells = in.Varint();
  if (cells == 0 || cells > LoneColumn::kMaxCells) return false;
  out->family_id = static_cast<uint32_t>(family_id);
  out->cells = static_cast<size_t>(cells);
  out->cells_at = static_cast<size_t>(in.pos() - encoded.data());
  for (size_t k = 0; k < out->cells; ++k) {
    out->timestamps[k] = GetCellTimestamp(in);
    out->versions[k] = in.Varint();
    in.Bytes(in.Varint());
    out->end[k] = static_cast<size_t>(in.pos() - encoded.data());
  }
  BTSIM_CHECK_MSG(in.done(), "trailing bytes in row encoding");
  return true;
}

RowRecord KeepNewestCells(const RowRecord& old, const LoneColumn& column,
                          size_t keep) {
  BTSIM_CHECK(keep > 0 && keep < column.cells);
  const std::string_view encoded = old.encoded();
  const std::string_view kept =
      encoded.substr(column.cells_at, column.end[keep - 1] - column.cells_at);
  SizeSink count;
  PutVarint(count, keep);
  char* at = nullptr;
  RowRecord out = RowRecord::Uninitialized(
      old.key(), column.count_at + count.n + kept.size(), &at);
  PtrSink sink{at};
  sink.Bytes(encoded.substr(0, column.count_at));
  PutVarint(sink, keep);
  sink.Bytes(kept);
  return out;
}

}  // namespace btsim::cluster::internal
