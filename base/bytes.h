// Byte strings compared without a call to memcmp when they are short.
//
// Row keys, family names, table and cluster ids are mostly under 17 bytes,
// and the hot paths compare them millions of times: a few word loads
// inlined at the call site cost less than std::string_view's operators,
// which call memcmp. The results are exactly those operators' (bytes
// compare as unsigned), for strings of any length; longer ones fall back to
// memcmp. Header-only; no state.
#ifndef BTSIM_BASE_BYTES_H_
#define BTSIM_BASE_BYTES_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace btsim {

namespace bytes_internal {

// The sizeof(U) bytes at `p` in the host's byte order (no alignment
// needed).
template <typename U>
inline U Load(const char* p) {
  U v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// The same read big-endian.
template <typename U>
inline U LoadBig(const char* p) {
  static_assert(sizeof(U) == 4 || sizeof(U) == 8);
  U v = Load<U>(p);
  if constexpr (std::endian::native == std::endian::little) {
    if constexpr (sizeof(U) == 8) {
      v = __builtin_bswap64(v);
    } else {
      v = __builtin_bswap32(v);
    }
  }
  return v;
}

}  // namespace bytes_internal

// The 8 bytes of `s` from `offset`, zero-padded, read big-endian: words of
// two strings at the same offset order as those bytes do. Reads only the
// string's bytes: fewer than 8 are read as two overlapping loads (or, under
// 4, three single bytes), whose overlap holds the same bytes.
inline uint64_t BigEndianWord(std::string_view s, size_t offset) {
  using bytes_internal::LoadBig;
  if (offset >= s.size()) return 0;
  const char* const p = s.data() + offset;
  const size_t n = s.size() - offset;
  if (n >= 8) return LoadBig<uint64_t>(p);
  uint64_t v;  // p[0, n) as an n-byte big-endian number
  if (n >= 4) {
    v = (uint64_t{LoadBig<uint32_t>(p)} << (8 * (n - 4))) |
        LoadBig<uint32_t>(p + n - 4);
  } else {
    auto byte = [p](size_t i) {
      return static_cast<uint64_t>(static_cast<uint8_t>(p[i]));
    };
    v = (byte(0) << (8 * (n - 1))) | (byte(n / 2) << (8 * (n - 1 - n / 2))) |
        byte(n - 1);
  }
  return v << (8 * (8 - n));
}

// a == b.
inline bool SameBytes(std::string_view a, std::string_view b) {
  using bytes_internal::Load;
  const size_t n = a.size();
  if (n != b.size()) return false;
  const char* const x = a.data();
  const char* const y = b.data();
  if (n > 16) return std::memcmp(x, y, n) == 0;
  // Two loads from each end, overlapping when n is under twice their size.
  if (n >= 8) {
    return Load<uint64_t>(x) == Load<uint64_t>(y) &&
           Load<uint64_t>(x + n - 8) == Load<uint64_t>(y + n - 8);
  }
  if (n >= 4) {
    return Load<uint32_t>(x) == Load<uint32_t>(y) &&
           Load<uint32_t>(x + n - 4) == Load<uint32_t>(y + n - 4);
  }
  return n == 0 ||
         (x[0] == y[0] && x[n / 2] == y[n / 2] && x[n - 1] == y[n - 1]);
}

// a.compare(b) reduced to its sign: -1, 0 or 1.
inline int CompareBytes(std::string_view a, std::string_view b) {
  using bytes_internal::LoadBig;
  const auto sign = [](auto x, auto y) { return (x > y) - (x < y); };
  const size_t n = std::min(a.size(), b.size());
  if (n < 8) {  // byte by byte: short strings mostly differ early
    for (size_t i = 0; i < n; ++i) {
      if (a[i] != b[i]) {
        return sign(static_cast<uint8_t>(a[i]), static_cast<uint8_t>(b[i]));
      }
    }
    return sign(a.size(), b.size());
  }
  const uint64_t x = LoadBig<uint64_t>(a.data());
  const uint64_t y = LoadBig<uint64_t>(b.data());
  if (x != y) return sign(x, y);
  // Equal sizes up to 16: the last 8 bytes of each decide (the bytes they
  // share with the first word are equal).
  if (a.size() == b.size() && n <= 16) {
    return sign(LoadBig<uint64_t>(a.data() + n - 8),
                LoadBig<uint64_t>(b.data() + n - 8));
  }
  const int c = std::memcmp(a.data() + 8, b.data() + 8, n - 8);
  return c != 0 ? sign(c, 0) : sign(a.size(), b.size());
}

// a < b.
inline bool LessBytes(std::string_view a, std::string_view b) {
  return CompareBytes(a, b) < 0;
}

// SameBytes as the equality of a hash map keyed by std::string_view.
struct BytesEqual {
  bool operator()(std::string_view a, std::string_view b) const {
    return SameBytes(a, b);
  }
};

}  // namespace btsim

#endif  // BTSIM_BASE_BYTES_H_
