#include "cluster/row_codec.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "base/check.h"

namespace btsim::cluster {
namespace {

// Counts bytes instead of writing them.
struct SizeSink {
  size_t n = 0;
  void Byte(uint8_t) { ++n; }
  void Bytes(std::string_view s) { n += s.size(); }
};

struct PtrSink {
  char* p;
  void Byte(uint8_t b) { *p++ = static_cast<char>(b); }
  void Bytes(std::string_view s) {
    if (!s.empty()) std::memcpy(p, s.data(), s.size());
    p += s.size();
  }
};

template <typename Sink>
void PutVarint(Sink& sink, uint64_t v) {
  while (v >= 0x80) {
    sink.Byte(static_cast<uint8_t>(v | 0x80));
    v >>= 7;
  }
  sink.Byte(static_cast<uint8_t>(v));
}

// Zig-zag keeps small negative numbers small (timestamps may be negative in
// column tombstone ranges only in principle; cell timestamps never are).
uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

template <typename Sink>
void PutCell(Sink& sink, int64_t timestamp_micros, Version version,
             std::string_view value) {
  PutVarint(sink, ZigZag(timestamp_micros / 1000));
  PutVarint(sink, version);
  PutVarint(sink, value.size());
  sink.Bytes(value);
}

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
        PutVarint(sink, ZigZag(t.start_micros));
        PutVarint(sink, ZigZag(t.end_micros));
        PutVarint(sink, t.version);
      }
      PutVarint(sink, c.cells.size());
      for (const CellData& cell : c.cells) {
        PutCell(sink, cell.timestamp_micros, cell.version, cell.value);
      }
    }
  }
}

class Reader {
 public:
  explicit Reader(std::string_view in)
      : p_(in.data()), end_(in.data() + in.size()) {}

  uint64_t Varint() {
    uint64_t result = 0;
    for (int shift = 0; shift <= 63; shift += 7) {
      BTSIM_CHECK_MSG(p_ < end_, "truncated row encoding");
      const uint8_t b = static_cast<uint8_t>(*p_++);
      result |= static_cast<uint64_t>(b & 0x7f) << shift;
      if (b < 0x80) return result;
    }
    BTSIM_CHECK_MSG(false, "bad varint in row encoding");
    return 0;
  }
  std::string_view Bytes(size_t n) {
    BTSIM_CHECK_MSG(static_cast<size_t>(end_ - p_) >= n,
                    "truncated row encoding");
    std::string_view out(p_, n);
    p_ += n;
    return out;
  }
  bool done() const { return p_ == end_; }
  const char* pos() const { return p_; }

 private:
  const char* p_;
  const char* end_;
};

constexpr size_t kHeader = 2 * sizeof(uint32_t);

// Skips a column's tombstones and cells (after its qualifier).
void SkipColumnRest(Reader& in) {
  for (uint64_t t = in.Varint(); t > 0; --t) {
    in.Varint();
    in.Varint();
    in.Varint();
  }
  for (uint64_t c = in.Varint(); c > 0; --c) {
    in.Varint();
    in.Varint();
    in.Bytes(in.Varint());
  }
}

}  // namespace

bool IsCovered(const RowData& row, const FamilyData& family,
               const ColumnData& column, const CellData& cell) {
  if (cell.version < row.tombstone || cell.version < family.tombstone) {
    return true;
  }
  for (const ColumnTombstone& t : column.tombstones) {
    if (cell.version < t.version && cell.timestamp_micros >= t.start_micros &&
        (t.end_micros == 0 || cell.timestamp_micros < t.end_micros)) {
      return true;
    }
  }
  return false;
}

RowRecord WithNewestCell(const RowRecord& old, uint32_t family_id,
                         std::string_view qualifier, int64_t timestamp_micros,
                         Version version, std::string_view value) {
  if (timestamp_micros < 0) return RowRecord();
  const std::string_view encoded = old.encoded();
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
    if (id > family_id) return RowRecord();  // families by id: absent
    for (; columns > 0; --columns) {
      const std::string_view q = in.Bytes(in.Varint());
      if (q < qualifier) {
        SkipColumnRest(in);
        continue;
      }
      if (q > qualifier) return RowRecord();  // columns in order: absent
      for (uint64_t t = in.Varint(); t > 0; --t) {
        in.Varint();
        in.Varint();
        in.Varint();
      }
      const size_t count_at = static_cast<size_t>(in.pos() - encoded.data());
      const uint64_t cells = in.Varint();
      const size_t cells_at = static_cast<size_t>(in.pos() - encoded.data());
      if (cells > 0 && timestamp_micros / 1000 <= UnZigZag(in.Varint())) {
        return RowRecord();  // not newer than the newest cell
      }
      // The old encoding with the cell count raised and the cell first.
      SizeSink added;
      PutVarint(added, cells + 1);
      PutCell(added, timestamp_micros, version, value);
      const std::string_view key = old.key();
      const size_t size = encoded.size() - (cells_at - count_at) + added.n;
      BTSIM_CHECK(size <= UINT32_MAX);
      RowRecord out;
      char* data = out.Allocate(kHeader + key.size() + size);
      const uint32_t lens[2] = {static_cast<uint32_t>(key.size()),
                                static_cast<uint32_t>(size)};
      std::memcpy(data, lens, kHeader);
      PtrSink sink{data + kHeader};
      sink.Bytes(key);
      sink.Bytes(encoded.substr(0, count_at));
      PutVarint(sink, cells + 1);
      PutCell(sink, timestamp_micros, version, value);
      sink.Bytes(encoded.substr(cells_at));
      return out;
    }
    return RowRecord();
  }
  return RowRecord();
}

RowRecord::RowRecord(std::string_view key, const RowData& row) {
  SizeSink size;
  Encode(row, size);
  BTSIM_CHECK(key.size() <= UINT32_MAX && size.n <= UINT32_MAX);
  char* data = Allocate(kHeader + key.size() + size.n);
  const uint32_t lens[2] = {static_cast<uint32_t>(key.size()),
                            static_cast<uint32_t>(size.n)};
  std::memcpy(data, lens, kHeader);
  PtrSink sink{data + kHeader};
  sink.Bytes(key);
  Encode(row, sink);
}

RowRecord& RowRecord::operator=(RowRecord&& other) noexcept {
  if (this != &other) {
    delete[] data();
    bits_ = std::exchange(other.bits_, 0);
  }
  return *this;
}

char* RowRecord::Allocate(size_t n) {
  delete[] data();
  char* data = new char[n];
  // new[] aligns to at least 16 bytes: the low bit is free for the mark.
  bits_ = reinterpret_cast<uintptr_t>(data);
  BTSIM_CHECK((bits_ & 1) == 0);
  return data;
}

void RowRecord::set_marked(bool marked) {
  BTSIM_CHECK(valid());
  bits_ = (bits_ & ~uintptr_t{1}) | (marked ? 1 : 0);
}

std::string_view RowRecord::key() const {
  uint32_t len;
  std::memcpy(&len, data(), sizeof(len));
  return {data() + kHeader, len};
}

std::string_view RowRecord::encoded() const {
  uint32_t lens[2];
  std::memcpy(lens, data(), kHeader);
  return {data() + kHeader + lens[0], lens[1]};
}

RowRecord RowRecord::Clone() const {
  RowRecord copy;
  if (valid()) std::memcpy(copy.Allocate(bytes()), data(), bytes());
  return copy;
}

size_t RowRecord::bytes() const {
  uint32_t lens[2];
  std::memcpy(lens, data(), kHeader);
  return kHeader + lens[0] + lens[1];
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
        t.start_micros = UnZigZag(in.Varint());
        t.end_micros = UnZigZag(in.Varint());
        t.version = in.Varint();
      }
      c.cells.resize(in.Varint());
      for (CellData& cell : c.cells) {
        cell.timestamp_micros = UnZigZag(in.Varint()) * 1000;
        cell.version = in.Varint();
        cell.value = in.Bytes(in.Varint());
      }
    }
  }
  BTSIM_CHECK_MSG(in.done(), "trailing bytes in row encoding");
  return row;
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

void AppendLiveCells(std::string_view encoded, std::vector<LiveCell>* out) {
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
      const uint64_t tombstones = in.Varint();
      ColumnTombstone small[4];
      std::vector<ColumnTombstone> large;
      ColumnTombstone* ts = small;
      if (tombstones > 4) {
        large.resize(tombstones);
        ts = large.data();
      }
      for (uint64_t t = 0; t < tombstones; ++t) {
        ts[t].start_micros = UnZigZag(in.Varint());
        ts[t].end_micros = UnZigZag(in.Varint());
        ts[t].version = in.Varint();
      }
      const uint64_t cells = in.Varint();
      for (uint64_t k = 0; k < cells; ++k) {
        const int64_t timestamp = UnZigZag(in.Varint()) * 1000;
        const Version version = in.Varint();
        const std::string_view value = in.Bytes(in.Varint());
        bool covered = version < floor;
        for (uint64_t t = 0; !covered && t < tombstones; ++t) {
          covered = version < ts[t].version &&
                    timestamp >= ts[t].start_micros &&
                    (ts[t].end_micros == 0 || timestamp < ts[t].end_micros);
        }
        if (!covered) {
          out->push_back(LiveCell{family_id, qualifier, timestamp, value});
        }
      }
    }
  }
}

}  // namespace btsim::cluster
