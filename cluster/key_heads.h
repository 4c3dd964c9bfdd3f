// Searching sorted row keys by integers instead of by string comparison.
//
// For a sorted list of keys that share a prefix of `lcp` bytes, a key's
// head is the 8 bytes that follow the prefix, zero-padded, read big-endian.
// Heads are in the keys' order, and unequal heads order their keys; only
// keys with equal heads need comparing as strings. The searches below take
// the heads of the list (heads[i] = KeyHead(key_at(i), prefix.size())), the
// shared prefix, and `key_at(i)` (the i-th key, read only on ties).
#ifndef BTSIM_CLUSTER_KEY_HEADS_H_
#define BTSIM_CLUSTER_KEY_HEADS_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <string_view>

namespace btsim::cluster {

namespace key_heads_internal {

// The sizeof(U) bytes at `p` read big-endian (no alignment needed).
template <typename U>
inline U LoadBig(const char* p) {
  static_assert(sizeof(U) == 4 || sizeof(U) == 8);
  U v;
  std::memcpy(&v, p, sizeof v);
  if constexpr (std::endian::native == std::endian::little) {
    if constexpr (sizeof(U) == 8) {
      v = __builtin_bswap64(v);
    } else {
      v = __builtin_bswap32(v);
    }
  }
  return v;
}

}  // namespace key_heads_internal

// The 8 bytes of `key` from `offset`, zero-padded, big-endian. Reads only
// the key's bytes: fewer than 8 are read as two overlapping loads (or, under
// 4, three single bytes), whose overlap holds the same bytes.
inline uint64_t KeyHead(std::string_view key, size_t offset) {
  using key_heads_internal::LoadBig;
  if (offset >= key.size()) return 0;
  const char* const p = key.data() + offset;
  const size_t n = key.size() - offset;
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

inline size_t CommonPrefixLength(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Index of the first key >= `key` (`upper` false) or > `key` (`upper`
// true) in the list described above.
template <typename KeyAt>
size_t HeadsBound(std::span<const uint64_t> heads, std::string_view prefix,
                  std::string_view key, bool upper, const KeyAt& key_at) {
  if (const int c = key.substr(0, prefix.size()).compare(prefix); c != 0) {
    return c < 0 ? 0 : heads.size();
  }
  const uint64_t head = KeyHead(key, prefix.size());
  const auto lo = std::lower_bound(heads.begin(), heads.end(), head);
  // Heads rarely tie: look one place on before searching the rest.
  auto hi = lo;
  if (hi != heads.end() && *hi == head) {
    hi = std::upper_bound(hi + 1, heads.end(), head);
  }
  size_t first = static_cast<size_t>(lo - heads.begin());
  size_t last = static_cast<size_t>(hi - heads.begin());
  while (first < last) {
    const size_t mid = first + (last - first) / 2;
    const std::string_view k = key_at(mid);
    if (upper ? !(key < k) : k < key) {
      first = mid + 1;
    } else {
      last = mid;
    }
  }
  return first;
}

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_KEY_HEADS_H_
