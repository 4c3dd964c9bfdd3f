// Searching sorted row keys by integers instead of by string comparison.
//
// For a sorted list of keys that share a prefix of `lcp` bytes, a key's
// head is the 8 bytes that follow the prefix, zero-padded, read big-endian.
// Heads are in the keys' order, and unequal heads order their keys; only
// keys with equal heads need comparing as strings. The searches below take
// the heads of the list (heads[i] = KeyHead(key_at(i), prefix.size())), the
// shared prefix, and `key_at(i)` (the i-th key, read only on ties).
#ifndef BTSIM_CLUSTER_INTERNAL_KEY_HEADS_H_
#define BTSIM_CLUSTER_INTERNAL_KEY_HEADS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

#include "base/bytes.h"

namespace btsim::cluster::internal {

// The 8 bytes of `key` from `offset`, zero-padded, big-endian
// (btsim::BigEndianWord).
inline uint64_t KeyHead(std::string_view key, size_t offset) {
  return BigEndianWord(key, offset);
}

inline size_t CommonPrefixLength(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

// Index of the first key >= `key` (`upper` false) or > `key` (`upper`
// true) among keys [first, last) of the list, whose heads all tie with
// `key`'s: the keys themselves are compared.
template <typename KeyAt>
size_t TiedBound(size_t first, size_t last, std::string_view key, bool upper,
                 const KeyAt& key_at) {
  while (first < last) {
    const size_t mid = first + (last - first) / 2;
    const std::string_view k = key_at(mid);
    if (upper ? !LessBytes(key, k) : LessBytes(k, key)) {
      first = mid + 1;
    } else {
      last = mid;
    }
  }
  return first;
}

// Index of the first key >= `key` (`upper` false) or > `key` (`upper`
// true) in the list described above.
template <typename KeyAt>
size_t HeadsBound(std::span<const uint64_t> heads, std::string_view prefix,
                  std::string_view key, bool upper, const KeyAt& key_at) {
  if (const std::string_view start = key.substr(0, prefix.size());
      !SameBytes(start, prefix)) {
    return LessBytes(start, prefix) ? 0 : heads.size();
  }
  const uint64_t head = KeyHead(key, prefix.size());
  const auto lo = std::lower_bound(heads.begin(), heads.end(), head);
  // Heads rarely tie: look one place on before searching the rest.
  auto hi = lo;
  if (hi != heads.end() && *hi == head) {
    hi = std::upper_bound(hi + 1, heads.end(), head);
  }
  return TiedBound(static_cast<size_t>(lo - heads.begin()),
                   static_cast<size_t>(hi - heads.begin()), key, upper, key_at);
}

}  // namespace btsim::cluster::internal

#endif  // BTSIM_CLUSTER_INTERNAL_KEY_HEADS_H_
