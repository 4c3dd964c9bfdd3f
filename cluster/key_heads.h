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
#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace btsim::cluster {

// The 8 bytes of `key` from `offset`, zero-padded, big-endian.
inline uint64_t KeyHead(std::string_view key, size_t offset) {
  uint64_t head = 0;
  for (size_t i = 0; i < 8; ++i) {
    const size_t at = offset + i;
    const uint8_t b = at < key.size() ? static_cast<uint8_t>(key[at]) : 0;
    head = (head << 8) | b;
  }
  return head;
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
  const std::string_view key_prefix = key.substr(0, prefix.size());
  if (key_prefix < prefix) return 0;
  if (key_prefix > prefix) return heads.size();
  const uint64_t head = KeyHead(key, prefix.size());
  const auto lo = std::lower_bound(heads.begin(), heads.end(), head);
  const auto hi = std::upper_bound(lo, heads.end(), head);
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
