#include "cluster/row_codec.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>

#include "base/check.h"
#include "cluster/internal/row_encoding.h"

namespace btsim::cluster {

using internal::encoding::GetCellTimestamp;
using internal::encoding::GetRangeBound;
using internal::encoding::kHeader;
using internal::encoding::PtrSink;
using internal::encoding::PutCell;
using internal::encoding::PutRangeBound;
using internal::encoding::PutVarint;
using internal::encoding::Reader;
using internal::encoding::SizeSink;
using internal::encoding::SkipColumnRest;

namespace {

template <typename Sink>
void Encode(const RowData& row, Sink& sink) {
  PutVarint(sink, row.tombstone);
  PutVarint(sink, row.families.size());
  for (const FamilyData& f : row.families) {
    PutVarint(sink, f.id);
    PutVarint(sink, f.tombstone);
    PutVarint(sink, f.columns.size());
    for (const ColumnData& c : f.columns) {
      PutVarint(sink, c.qualifier.size());
      sink.Bytes(c.qualifier);
      PutVarint(sink, c.tombstones.size());
      for (const ColumnTombstone& t : c.tombstones) {
        PutRangeBound(sink, t.start);
        PutRangeBound(sink, t.end);
        PutVarint(sink, t.version);
      }
      PutVarint(sink, c.cells.size());
      for (const CellData& cell : c.cells) {
        PutCell(sink, cell.timestamp, cell.version, cell.value);
      }
    }
  }
}

}  // namespace

bool IsCovered(const RowData& row, const FamilyData& family,
               const ColumnData& column, const CellData& cell) {
  return HiddenAt(row, family, column, cell) != kNoVersion;
}

Version HiddenAt(const RowData& row, const FamilyData& family,
                 const ColumnData& column, const CellData& cell) {
  Version oldest = kNoVersion;
  auto consider = [&](Version tombstone) {
    if (cell.version < tombstone &&
        (oldest == kNoVersion || tombstone < oldest)) {
      oldest = tombstone;
    }
  };
  consider(row.tombstone);
  consider(family.tombstone);
  for (const ColumnTombstone& t : column.tombstones) {
    if (InTimestampRange(cell.timestamp, t.start, t.end)) consider(t.version);
  }
  return oldest;
}

RowRecord::RowRecord(std::string_view key, const RowData& row) {
  SizeSink size;
  Encode(row, size);
  char* encoding = nullptr;
  *this = Uninitialized(key, size.n, &encoding);
  PtrSink sink{encoding};
  Encode(row, sink);
}

namespace {

// A record's allocation starts with an 8-byte header (kHeader): the
// reference count and the key's length (uint16_t each), then the
// encoding's length (uint32_t).
constexpr size_t kKeyLengthAt = 2;
constexpr size_t kEncodedLengthAt = 4;

uint16_t Load16(const char* at) {
  uint16_t v;
  std::memcpy(&v, at, sizeof(v));
  return v;
}
uint32_t Load32(const char* at) {
  uint32_t v;
  std::memcpy(&v, at, sizeof(v));
  return v;
}
void Store16(char* at, uint16_t v) { std::memcpy(at, &v, sizeof(v)); }
void Store32(char* at, uint32_t v) { std::memcpy(at, &v, sizeof(v)); }

}  // namespace

RowRecord RowRecord::Uninitialized(std::string_view key, size_t encoded_size,
                                   char** encoding) {
  BTSIM_CHECK(key.size() <= UINT16_MAX && encoded_size <= UINT32_MAX);
  RowRecord out;
  char* data = out.Allocate(kHeader + key.size() + encoded_size);
  Store16(data + kKeyLengthAt, static_cast<uint16_t>(key.size()));
  Store32(data + kEncodedLengthAt, static_cast<uint32_t>(encoded_size));
  if (!key.empty()) std::memcpy(data + kHeader, key.data(), key.size());
  *encoding = data + kHeader + key.size();
  return out;
}

void RowRecord::ShiftRight(RowRecord* first, RowRecord* last) {
  BTSIM_CHECK(!last->valid());
  for (RowRecord* at = last; at != first; --at) at->bits_ = (at - 1)->bits_;
  first->bits_ = 0;
}

void RowRecord::Release() {
  char* const at = data();
  if (at == nullptr) return;
  bits_ = 0;
  const uint16_t count = Load16(at);
  if (count == 1) {
    delete[] at;
  } else {
    Store16(at, count - 1);
  }
}

char* RowRecord::Allocate(size_t n) {
  Release();
  char* const data = new char[n];
  Store16(data, 1);
  // new[] aligns to at least 16 bytes: the low bit is free for the mark.
  bits_ = reinterpret_cast<uintptr_t>(data);
  BTSIM_CHECK((bits_ & 1) == 0);
  return data;
}

RowRecord RowRecord::Share() const {
  char* const at = data();
  if (at == nullptr) return RowRecord();
  const uint16_t count = Load16(at);
  if (count == UINT16_MAX) return Clone();
  Store16(at, count + 1);
  RowRecord copy;
  copy.bits_ = reinterpret_cast<uintptr_t>(at);
  return copy;
}

bool RowRecord::shared() const {
  char* const at = data();
  return at != nullptr && Load16(at) > 1;
}

bool RowRecord::SameRow(const RowRecord& other) const {
  if (data() == other.data()) return true;
  if (!valid() || !other.valid()) return false;
  // Everything after the reference counts: lengths, key and encoding.
  const size_t n = bytes();
  return n == other.bytes() &&
         std::memcmp(data() + kKeyLengthAt, other.data() + kKeyLengthAt,
                     n - kKeyLengthAt) == 0;
}

void RowRecord::set_marked(bool marked) {
  BTSIM_CHECK(valid());
  bits_ = (bits_ & ~uintptr_t{1}) | (marked ? 1 : 0);
}

std::string_view RowRecord::key() const {
  return {data() + kHeader, Load16(data() + kKeyLengthAt)};
}

std::string_view RowRecord::encoded() const {
  return {data() + kHeader + Load16(data() + kKeyLengthAt),
          Load32(data() + kEncodedLengthAt)};
}

RowRecord RowRecord::Clone() const {
  RowRecord copy;
  if (valid()) {
    char* const at = copy.Allocate(bytes());
    std::memcpy(at + kKeyLengthAt, data() + kKeyLengthAt,
                bytes() - kKeyLengthAt);
  }
  return copy;
}

size_t RowRecord::bytes() const {
  return kHeader + Load16(data() + kKeyLengthAt) +
         Load32(data() + kEncodedLengthAt);
}

size_t EncodedSize(const RowData& row) {
  SizeSink size;
  Encode(row, size);
  return size.n;
}

void EncodeRow(const RowData& row, std::string* out) {
  const size_t old = out->size();
  out->resize(old + EncodedSize(row));
  PtrSink sink{out->data() + old};
  Encode(row, sink);
}

RowData DecodeRow(std::string_view encoded) {
  Reader in(encoded);
  RowData row;
  row.tombstone = in.Varint();
  row.families.resize(in.Varint());
  for (FamilyData& f : row.families) {
    f.id = static_cast<uint32_t>(in.Varint());
    f.tombstone = in.Varint();
    f.columns.resize(in.Varint());
    for (ColumnData& c : f.columns) {
      c.qualifier = in.Bytes(in.Varint());
      c.tombstones.resize(in.Varint());
      for (ColumnTombstone& t : c.tombstones) {
        t.start = GetRangeBound(in);
        t.end = GetRangeBound(in);
        t.version = in.Varint();
      }
      c.cells.resize(in.Varint());
      for (CellData& cell : c.cells) {
        cell.timestamp = GetCellTimestamp(in);
        cell.version = in.Varint();
        cell.value = in.Bytes(in.Varint());
      }
    }
  }
  BTSIM_CHECK_MSG(in.done(), "trailing bytes in row encoding");
  return row;
}

namespace {

// Reads an encoding from outside the process: reads past the end or of a
// malformed varint set failed() and return 0 or "" instead of aborting.
class CheckedReader {
 public:
  explicit CheckedReader(std::string_view in) : in_(in) {}

  // A varint as PutVarint writes it: at most 64 bits, shortest form.
  uint64_t Varint() {
    uint64_t result = 0;
    for (int shift = 0; !failed_ && shift <= 63; shift += 7) {
      if (pos_ >= in_.size()) break;
      const uint8_t b = static_cast<uint8_t>(in_[pos_++]);
      if (shift == 63 && b > 1) break;  // bits past the 64th
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) {
        if (b == 0 && shift > 0) break;  // a longer form than needed
        return result;
      }
    }
    failed_ = true;
    return 0;
  }
  std::string_view Bytes(uint64_t n) {
    if (failed_ || n > in_.size() - pos_) {
      failed_ = true;
      return {};
    }
    const std::string_view out = in_.substr(pos_, n);
    pos_ += n;
    return out;
  }
  bool failed() const { return failed_; }
  bool done() const { return !failed_ && pos_ == in_.size(); }
  size_t pos() const { return pos_; }

 private:
  std::string_view in_;
  size_t pos_ = 0;
  bool failed_ = false;
};

}  // namespace

Status CheckRowEncoding(std::string_view encoded, uint32_t family_ids) {
  CheckedReader in(encoded);
  size_t at = 0;  // where the item being checked starts
  auto bad = [&](const std::string& what) {
    return InvalidArgument("row encoding: " + what + " at byte " +
                           std::to_string(at));
  };
  auto truncated = [&] {
    at = in.pos();
    return bad("truncated or malformed varint or length");
  };
  in.Varint();  // row tombstone
  const uint64_t families = in.Varint();
  uint64_t last_id = 0;
  for (uint64_t fi = 0; fi < families && !in.failed(); ++fi) {
    at = in.pos();
    const uint64_t id = in.Varint();
    if (in.failed()) break;
    if (id >= family_ids) {
      return bad("family id " + std::to_string(id) + " is not below " +
                 std::to_string(family_ids));
    }
    if (fi > 0 && id <= last_id) return bad("family ids not ascending");
    last_id = id;
    in.Varint();  // family tombstone
    const uint64_t columns = in.Varint();
    std::string_view last_qualifier;
    for (uint64_t ci = 0; ci < columns && !in.failed(); ++ci) {
      at = in.pos();
      const std::string_view qualifier = in.Bytes(in.Varint());
      if (in.failed()) break;
      if (ci > 0 && qualifier <= last_qualifier) {
        return bad("qualifiers not ascending");
      }
      last_qualifier = qualifier;
      for (uint64_t t = in.Varint(); t > 0 && !in.failed(); --t) {
        in.Varint();  // start, end and version of a column tombstone
        in.Varint();
        in.Varint();
      }
      const uint64_t cells = in.Varint();
      uint64_t last_millis = 0;
      uint64_t last_version = 0;
      for (uint64_t k = 0; k < cells && !in.failed(); ++k) {
        at = in.pos();
        const uint64_t zigzag = in.Varint();
        if (in.failed()) break;
        // Not negative (odd zigzag) and in range once in microseconds.
        const uint64_t millis = zigzag >> 1;
        if ((zigzag & 1) != 0 ||
            millis > static_cast<uint64_t>(INT64_MAX / 1000)) {
          return bad("cell timestamp out of range");
        }
        const uint64_t version = in.Varint();
        if (k > 0 && (millis > last_millis ||
                      (millis == last_millis && version > last_version))) {
          return bad("cells not by timestamp, then version, descending");
        }
        last_millis = millis;
        last_version = version;
        in.Bytes(in.Varint());  // value
      }
    }
  }
  if (in.failed()) return truncated();
  if (!in.done()) {
    at = in.pos();
    return bad("trailing bytes");
  }
  return OkStatus();
}

bool MayNeedCompaction(const RowData& row) {
  if (row.tombstone != kNoVersion) return true;
  for (const FamilyData& f : row.families) {
    if (f.tombstone != kNoVersion) return true;
    for (const ColumnData& c : f.columns) {
      if (!c.tombstones.empty() || c.cells.size() > 1) return true;
    }
  }
  return false;
}

bool MayNeedCompaction(std::string_view encoded) {
  Reader in(encoded);
  if (in.Varint() != kNoVersion) return true;
  const uint64_t families = in.Varint();
  for (uint64_t fi = 0; fi < families; ++fi) {
    in.Varint();  // family id
    if (in.Varint() != kNoVersion) return true;
    const uint64_t columns = in.Varint();
    for (uint64_t ci = 0; ci < columns; ++ci) {
      in.Bytes(in.Varint());              // qualifier
      if (in.Varint() != 0) return true;  // column tombstones
      const uint64_t cells = in.Varint();
      if (cells > 1) return true;
      for (uint64_t k = 0; k < cells; ++k) {
        in.Varint();  // timestamp
        in.Varint();  // version
        in.Bytes(in.Varint());
      }
    }
  }
  return false;
}

namespace {

// Calls visit(cell) for each live cell of `encoded` in a column that
// want(family_id, qualifier) selects, in storage order, until visit returns
// false. Columns not selected are skipped without reading their cells.
template <typename Want, typename Visit>
void VisitLiveCells(std::string_view encoded, const Want& want,
                    const Visit& visit) {
  Reader in(encoded);
  const Version row_tombstone = in.Varint();
  const uint64_t families = in.Varint();
  for (uint64_t fi = 0; fi < families; ++fi) {
    const uint32_t family_id = static_cast<uint32_t>(in.Varint());
    const Version family_tombstone = in.Varint();
    const Version floor = std::max(row_tombstone, family_tombstone);
    const uint64_t columns = in.Varint();
    for (uint64_t ci = 0; ci < columns; ++ci) {
      const std::string_view qualifier = in.Bytes(in.Varint());
      if (!want(family_id, qualifier)) {
        SkipColumnRest(in);
        continue;
      }
      const uint64_t tombstones = in.Varint();
      ColumnTombstone small[4];
      std::vector<ColumnTombstone> large;
      ColumnTombstone* ts = small;
      if (tombstones > 4) {
        large.resize(tombstones);
        ts = large.data();
      }
      for (uint64_t t = 0; t < tombstones; ++t) {
        ts[t].start = GetRangeBound(in);
        ts[t].end = GetRangeBound(in);
        ts[t].version = in.Varint();
      }
      const uint64_t cells = in.Varint();
      for (uint64_t k = 0; k < cells; ++k) {
        const Timestamp timestamp = GetCellTimestamp(in);
        const Version version = in.Varint();
        const std::string_view value = in.Bytes(in.Varint());
        bool covered = version < floor;
        for (uint64_t t = 0; !covered && t < tombstones; ++t) {
          covered = version < ts[t].version &&
                    InTimestampRange(timestamp, ts[t].start, ts[t].end);
        }
        if (!covered &&
            !visit(LiveCell{family_id, qualifier, timestamp, value})) {
          return;
        }
      }
    }
  }
}

}  // namespace

void AppendLiveCells(std::string_view encoded, std::vector<LiveCell>* out) {
  VisitLiveCells(
      encoded, [](uint32_t, std::string_view) { return true; },
      [out](const LiveCell& cell) {
        out->push_back(cell);
        return true;
      });
}

std::optional<LiveCell> NewestLiveCell(std::string_view encoded,
                                       uint32_t family_id,
                                       std::string_view qualifier) {
  std::optional<LiveCell> newest;
  VisitLiveCells(
      encoded,
      [&](uint32_t id, std::string_view q) {
        return id == family_id && q == qualifier;
      },
      [&](const LiveCell& cell) {
        newest = cell;
        return false;
      });
  return newest;
}

}  // namespace btsim::cluster
