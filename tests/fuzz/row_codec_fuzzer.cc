// Fuzz target: the row codec (cluster/row_codec.h) and the edits made on
// encodings (cluster/internal/row_edits.h).
//
// The input describes a well-formed RowData (families by ascending id,
// columns by ascending qualifier, cells newest first with distinct
// millisecond timestamps: the invariants every writer keeps) and one edit.
// Checks that encoding round-trips, that RowRecord keeps key and bytes, that
// the readers of encodings (AppendLiveCells, NewestLiveCell,
// MayNeedCompaction, ReadLoneColumn) agree with the decoded row, and that
// WithCellWritten and KeepNewestCells give byte for byte what decoding,
// editing and re-encoding gives.
//
// DecodeRow is never fed arbitrary bytes: it aborts on corrupt input by
// contract, and only the engine's own encoder produces its input.
#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "base/check.h"
#include "cluster/internal/row_edits.h"
#include "cluster/row_codec.h"
#include "tests/fuzz/fuzz_input.h"

namespace btsim::cluster {
namespace {

using fuzz::FuzzInput;

bool SameRow(const RowData& a, const RowData& b) {
  if (a.tombstone != b.tombstone || a.families.size() != b.families.size()) {
    return false;
  }
  for (size_t f = 0; f < a.families.size(); ++f) {
    const FamilyData& fa = a.families[f];
    const FamilyData& fb = b.families[f];
    if (fa.id != fb.id || fa.tombstone != fb.tombstone ||
        fa.columns.size() != fb.columns.size()) {
      return false;
    }
    for (size_t c = 0; c < fa.columns.size(); ++c) {
      const ColumnData& ca = fa.columns[c];
      const ColumnData& cb = fb.columns[c];
      if (ca.qualifier != cb.qualifier ||
          ca.tombstones.size() != cb.tombstones.size() ||
          ca.cells.size() != cb.cells.size()) {
        return false;
      }
      for (size_t t = 0; t < ca.tombstones.size(); ++t) {
        const ColumnTombstone& x = ca.tombstones[t];
        const ColumnTombstone& y = cb.tombstones[t];
        if (x.start != y.start || x.end != y.end || x.version != y.version) {
          return false;
        }
      }
      for (size_t k = 0; k < ca.cells.size(); ++k) {
        const CellData& x = ca.cells[k];
        const CellData& y = cb.cells[k];
        if (x.timestamp != y.timestamp || x.version != y.version ||
            x.value != y.value) {
          return false;
        }
      }
    }
  }
  return true;
}

Version ReadVersion(FuzzInput& in) {
  // Mostly small (so that tombstones and cells compare), sometimes huge.
  return in.Bool() ? in.Below(64) : in.U64();
}

Timestamp ReadMillis(FuzzInput& in) {
  if (in.Below(8) == 0) {
    return TimestampFromMicros(static_cast<int64_t>(in.U64() >> 20) * 1000 *
                               (in.Bool() ? 1 : -1));
  }
  return TimestampFromMicros(in.Range(-2, 12) * 1000);
}

// Value bytes live in `values` (stable addresses: a std::set of strings).
RowData ReadRow(FuzzInput& in, std::set<std::string>& strings) {
  auto keep = [&](std::string s) -> std::string_view {
    return *strings.insert(std::move(s)).first;
  };
  RowData row;
  if (in.Below(4) == 0) row.tombstone = ReadVersion(in);
  std::set<uint32_t> ids;
  for (uint64_t n = in.Below(4); n > 0; --n) {
    ids.insert(static_cast<uint32_t>(in.Bool() ? in.Below(4) : in.U64()));
  }
  for (uint32_t id : ids) {
    FamilyData family{id, kNoVersion, {}};
    if (in.Below(4) == 0) family.tombstone = ReadVersion(in);
    std::set<std::string> qualifiers;
    for (uint64_t n = in.Below(5); n > 0; --n) {
      qualifiers.insert(in.Bool() ? in.String(2, "abc") : in.Bytes(300));
    }
    for (const std::string& q : qualifiers) {
      ColumnData column{keep(q), {}, {}};
      for (uint64_t n = in.Below(4) == 0 ? in.Below(4) : 0; n > 0; --n) {
        const Timestamp start =
            TimestampFromMicros(in.Range(-1, 12) * (in.Bool() ? 1000 : 1));
        const Timestamp end =
            TimestampFromMicros(in.Range(0, 13) * (in.Bool() ? 1000 : 1));
        column.tombstones.push_back({start, end, ReadVersion(in)});
      }
      std::set<Timestamp, std::greater<>> stamps;
      for (uint64_t n = in.Below(10); n > 0; --n) stamps.insert(ReadMillis(in));
      for (Timestamp t : stamps) {
        column.cells.push_back(
            {t, ReadVersion(in),
             keep(in.Bool() ? in.String(3, "xy") : in.Bytes(200))});
      }
      family.columns.push_back(std::move(column));
    }
    row.families.push_back(std::move(family));
  }
  return row;
}

void CheckReaders(const RowData& row, std::string_view encoded) {
  std::vector<LiveCell> live;
  AppendLiveCells(encoded, &live);
  size_t k = 0;
  for (const FamilyData& f : row.families) {
    for (const ColumnData& c : f.columns) {
      std::optional<LiveCell> newest;
      for (const CellData& cell : c.cells) {
        if (IsCovered(row, f, c, cell)) continue;
        BTSIM_CHECK_MSG(HiddenAt(row, f, c, cell) == kNoVersion,
                        "HiddenAt disagrees with IsCovered");
        BTSIM_CHECK_MSG(k < live.size(), "AppendLiveCells lost a cell");
        const LiveCell& got = live[k++];
        BTSIM_CHECK(got.family_id == f.id && got.qualifier == c.qualifier &&
                    got.timestamp == cell.timestamp && got.value == cell.value);
        if (!newest) newest = got;
      }
      const std::optional<LiveCell> got =
          NewestLiveCell(encoded, f.id, c.qualifier);
      BTSIM_CHECK_MSG(got.has_value() == newest.has_value(),
                      "NewestLiveCell disagrees on presence");
      if (got) {
        BTSIM_CHECK(got->timestamp == newest->timestamp &&
                    got->value == newest->value);
      }
    }
  }
  BTSIM_CHECK_MSG(k == live.size(), "AppendLiveCells has extra cells");
  BTSIM_CHECK(MayNeedCompaction(row) == MayNeedCompaction(encoded));
}

// WithCellWritten against the general path: decode, write, encode.
void CheckCellWritten(FuzzInput& in, const RowRecord& old, const RowData& row,
                      std::set<std::string>& strings) {
  const bool absent = in.Below(8) == 0;
  RowData edited = absent ? RowData{} : DecodeRow(old.encoded());
  const uint32_t family_id = static_cast<uint32_t>(in.Below(5));
  const std::string qualifier = *strings.insert(in.String(2, "abc")).first;
  ColumnData* column = nullptr;
  for (FamilyData& f : edited.families) {
    if (f.id != family_id) continue;
    for (ColumnData& c : f.columns) {
      if (c.qualifier == qualifier) column = &c;
    }
  }
  CellData* newest = column != nullptr && !column->cells.empty()
                         ? &column->cells.front()
                         : nullptr;
  int64_t ts = in.Range(-2, 14) * 1000 + (in.Below(8) == 0 ? 1 : 0);
  if (newest != nullptr && in.Bool()) ts = Micros(newest->timestamp);
  const Version version = ReadVersion(in);
  const std::string_view value = *strings.insert(in.Bytes(200)).first;
  Version superseded = 1;
  const RowRecord got = internal::WithCellWritten(
      "key", absent ? nullptr : &old, family_id, qualifier,
      TimestampFromMicros(ts), version, value, &superseded);
  if (!got.valid()) return;  // declined: the general path writes it
  BTSIM_CHECK_MSG(ts >= 0 && ts % 1000 == 0,
                  "WithCellWritten applied off the millisecond grid");
  const CellData cell{TimestampFromMicros(ts), version, value};
  if (absent) {
    edited.families.push_back(
        FamilyData{family_id, kNoVersion, {ColumnData{qualifier, {}, {cell}}}});
  } else if (newest != nullptr && ts == Micros(newest->timestamp)) {
    BTSIM_CHECK_MSG(version >= newest->version,
                    "WithCellWritten replaced a newer version");
    BTSIM_CHECK(superseded == newest->version);
    *newest = cell;
  } else {
    BTSIM_CHECK_MSG(column != nullptr, "WithCellWritten made a column");
    BTSIM_CHECK_MSG(newest == nullptr || ts > Micros(newest->timestamp),
                    "WithCellWritten applied behind the newest cell");
    column->cells.insert(column->cells.begin(), cell);
  }
  const RowRecord expected("key", edited);
  BTSIM_CHECK_MSG(got.key() == "key" && got.encoded() == expected.encoded(),
                  "WithCellWritten differs from decode, write, encode");
  (void)row;
}

// ReadLoneColumn and KeepNewestCells against decode, trim, encode.
void CheckLoneColumn(FuzzInput& in, const RowRecord& record,
                     const RowData& row) {
  internal::LoneColumn lone;
  const bool is_lone = internal::ReadLoneColumn(record.encoded(), &lone);
  const bool expected = row.tombstone == kNoVersion &&
                        row.families.size() == 1 &&
                        row.families[0].tombstone == kNoVersion &&
                        row.families[0].columns.size() == 1 &&
                        row.families[0].columns[0].tombstones.empty() &&
                        !row.families[0].columns[0].cells.empty() &&
                        row.families[0].columns[0].cells.size() <=
                            internal::LoneColumn::kMaxCells;
  BTSIM_CHECK_MSG(is_lone == expected, "ReadLoneColumn misjudged the row");
  if (!is_lone || lone.cells < 2) return;
  const size_t keep = 1 + static_cast<size_t>(in.Below(lone.cells - 1));
  RowData trimmed = row;
  trimmed.families[0].columns[0].cells.resize(keep);
  const RowRecord want("key", trimmed);
  const RowRecord got = internal::KeepNewestCells(record, lone, keep);
  BTSIM_CHECK_MSG(got.encoded() == want.encoded(),
                  "KeepNewestCells differs from decode, trim, encode");
}

void Run(const uint8_t* data, size_t size) {
  FuzzInput in(data, size);
  std::set<std::string> strings;
  const std::string key = in.Bytes(64);
  const RowData row = ReadRow(in, strings);

  std::string encoded = "prefix";
  EncodeRow(row, &encoded);
  BTSIM_CHECK(encoded.size() == 6 + EncodedSize(row));
  const std::string_view body = std::string_view(encoded).substr(6);
  BTSIM_CHECK_MSG(SameRow(DecodeRow(body), row), "round trip changed the row");
  CheckReaders(row, body);

  const RowRecord record(key, row);
  BTSIM_CHECK(record.valid() && record.key() == key &&
              record.encoded() == body);
  BTSIM_CHECK(record.bytes() == 8 + key.size() + body.size());
  const RowRecord shared = record.Share();
  const RowRecord clone = record.Clone();
  BTSIM_CHECK(shared.SameRow(record) && clone.SameRow(record));
  BTSIM_CHECK(clone.allocation() != record.allocation());

  CheckLoneColumn(in, record, row);
  CheckCellWritten(in, RowRecord("key", row), row, strings);
}

}  // namespace
}  // namespace btsim::cluster

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  btsim::cluster::Run(data, size);
  return 0;
}
