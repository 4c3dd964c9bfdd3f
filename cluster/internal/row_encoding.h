// The row encoding's building blocks (see cluster/row_codec.h for the
// format), shared by the codec and the edits that work on encodings
// (cluster/internal/row_edits.h). Internal to the cluster library.
#ifndef BTSIM_CLUSTER_INTERNAL_ROW_ENCODING_H_
#define BTSIM_CLUSTER_INTERNAL_ROW_ENCODING_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "base/check.h"
#include "cluster/timestamp.h"
#include "cluster/version.h"

namespace btsim::cluster::internal::encoding {

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
inline uint64_t ZigZag(int64_t v) {
  return (static_cast<uint64_t>(v) << 1) ^ static_cast<uint64_t>(v >> 63);
}
inline int64_t UnZigZag(uint64_t v) {
  return static_cast<int64_t>(v >> 1) ^ -static_cast<int64_t>(v & 1);
}

// A cell's timestamp is stored in milliseconds (it is at millisecond
// granularity); the bounds of a column tombstone's range in microseconds.
template <typename Sink>
void PutRangeBound(Sink& sink, Timestamp bound) {
  PutVarint(sink, ZigZag(Micros(bound)));
}
template <typename Sink>
void PutCell(Sink& sink, Timestamp timestamp, Version version,
             std::string_view value) {
  PutVarint(sink, ZigZag(Micros(timestamp) / 1000));
  PutVarint(sink, version);
  PutVarint(sink, value.size());
  sink.Bytes(value);
}

class Reader {
 public:
  explicit Reader(std::string_view in)
      : p_(in.data()), end_(in.data() + in.size()) {}

  // A varint of up to 10 bytes (bits past the 64th dropped).
  uint64_t Varint() {
    BTSIM_CHECK_MSG(p_ < end_, "truncated row encoding");
    // Most are one byte (counts, ids, lengths): decoded before the loop.
    if (static_cast<uint8_t>(*p_) < 0x80) return static_cast<uint8_t>(*p_++);
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

// What PutRangeBound and PutCell wrote of a timestamp.
inline Timestamp GetRangeBound(Reader& in) {
  return TimestampFromMicros(UnZigZag(in.Varint()));
}
inline Timestamp GetCellTimestamp(Reader& in) {
  return TimestampFromMicros(UnZigZag(in.Varint()) * 1000);
}

// A RowRecord's allocation starts with a header of this size (its
// reference count and the key's and the encoding's lengths).
inline constexpr size_t kHeader = 2 * sizeof(uint32_t);

// Skips a column's tombstones and cells (after its qualifier).
inline void SkipColumnRest(Reader& in) {
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

}  // namespace btsim::cluster::internal::encoding

#endif  // BTSIM_CLUSTER_INTERNAL_ROW_ENCODING_H_
