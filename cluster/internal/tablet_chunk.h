// The layout of a tablet's chunk of rows (Tablet::Chunk), shared by the
// tablet's searches (tablet.cc) and its probes (tablet_probe.cc). Internal
// to cluster/.
#ifndef BTSIM_CLUSTER_INTERNAL_TABLET_CHUNK_H_
#define BTSIM_CLUSTER_INTERNAL_TABLET_CHUNK_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "base/bytes.h"
#include "cluster/internal/key_heads.h"
#include "cluster/internal/tablet.h"
#include "cluster/row_codec.h"

namespace btsim::cluster::internal {

// Aligned to cache lines, so that what a search reads first (the size, the
// prefix and the summary) fills as few lines as possible (see Advance).
struct alignas(64) Tablet::Chunk {
  static constexpr size_t kCapacity = kMaxChunkRows + 1;
  static constexpr size_t kStride = 8;  // heads per summary entry
  static constexpr size_t kSummary = (kCapacity + kStride - 1) / kStride;

  size_t size = 0;
  // Shared by every key of the chunk: the longest such when last indexed
  // from the rows, possibly shorter after an insert at an end.
  std::string prefix;
  uint64_t summary[kSummary];  // summary[k] = heads[k * kStride]
  uint64_t heads[kCapacity];   // KeyHead(rows[i].key(), prefix.size())
  RowRecord rows[kCapacity];   // rows[size, kCapacity) are invalid

  std::string_view first_key() const { return rows[0].key(); }
  std::string_view last_key() const { return rows[size - 1].key(); }

  // Recomputes summary[k] for every k covering heads from `from` on.
  void Summarize(size_t from) {
    for (size_t k = from / kStride; k * kStride < size; ++k) {
      summary[k] = heads[k * kStride];
    }
  }

  // Recomputes the prefix (the longest one) and every head from the rows.
  void Index() {
    if (size == 0) return;
    prefix.assign(
        first_key().substr(0, CommonPrefixLength(first_key(), last_key())));
    for (size_t i = 0; i < size; ++i) {
      heads[i] = KeyHead(rows[i].key(), prefix.size());
    }
    Summarize(0);
  }

  // Shortens the prefix to `length` bytes, rewriting the heads from the old
  // ones when that is exact (the rows are not read), else from the rows.
  void ShortenPrefix(size_t length) {
    const size_t drop = prefix.size() - length;
    if (drop >= 8) {
      Index();
      return;
    }
    // New head: the dropped prefix bytes, then the old head's first bytes.
    const uint64_t dropped = KeyHead(prefix, length) >> (8 * (8 - drop));
    for (size_t i = 0; i < size; ++i) {
      heads[i] = dropped << (8 * (8 - drop)) | heads[i] >> (8 * drop);
    }
    prefix.resize(length);
    Summarize(0);
  }

  // True when two rows' heads are equal (a search compares their keys).
  bool HasTies() const {
    return std::adjacent_find(heads, heads + size) != heads + size;
  }

  // Moves rows [at, size) into a new chunk. Both keep the prefix and the
  // heads, reading no row, unless heads tie: then a longer prefix may tell
  // the keys apart. Requires 0 < at < size.
  std::unique_ptr<Chunk> CutAt(size_t at) {
    auto tail = std::make_unique<Chunk>();
    tail->size = size - at;
    tail->prefix = prefix;
    std::move(rows + at, rows + size, tail->rows);
    std::copy(heads + at, heads + size, tail->heads);
    tail->Summarize(0);
    size = at;
    if (HasTies()) Index();
    if (tail->HasTies()) tail->Index();
    return tail;
  }

  // heads[from, to) hold the first head >= `head`, or heads[to] is it (or
  // there is none: to == size). summary[k] < head for k < j, and (when
  // j < n) heads[j * kStride] >= head: that head is in
  // (kStride * (j - 1), kStride * j].
  std::pair<size_t, size_t> Interval(uint64_t head) const {
    const size_t n = (size + kStride - 1) / kStride;
    const size_t j = static_cast<size_t>(
        std::lower_bound(summary, summary + n, head) - summary);
    return {j == 0 ? 0 : kStride * (j - 1) + 1, std::min(size, kStride * j)};
  }

  // The key's head, or nullopt when the key does not start with the prefix.
  std::optional<uint64_t> HeadOf(std::string_view key) const {
    if (!SameBytes(key.substr(0, prefix.size()), prefix)) return std::nullopt;
    return KeyHead(key, prefix.size());
  }

  // Whether rows[i] sorts before `key`. Requires i < size. Reads the row
  // only when the heads do not decide.
  bool Before(size_t i, std::string_view key) const {
    if (const std::optional<uint64_t> head = HeadOf(key)) {
      if (heads[i] != *head) return heads[i] < *head;
    }
    return LessBytes(rows[i].key(), key);
  }

  // Index of the first row whose head is >= the key's `head` (HeadOf(key);
  // without one, 0 or size as the key sorts before or after the prefix):
  // the key's lower bound, except that when that row's head ties with the
  // key's, the key may belong just after it. Reads no row.
  size_t HeadBound(std::string_view key,
                   const std::optional<uint64_t>& head) const {
    if (!head) return LessBytes(key, prefix) ? 0 : size;
    const auto [from, to] = Interval(*head);
    return static_cast<size_t>(
        std::lower_bound(heads + from, heads + to, *head) - heads);
  }

  // Index of the first row with key >= key (`upper` false) or > key.
  size_t Bound(std::string_view key, bool upper) const {
    const std::optional<uint64_t> head = HeadOf(key);
    const size_t first = HeadBound(key, head);
    if (!head || first == size || heads[first] != *head) return first;
    // Rows whose heads tie with the key's: compare the keys themselves.
    const size_t last = static_cast<size_t>(
        std::upper_bound(heads + first, heads + size, *head) - heads);
    return TiedBound(first, last, key, upper,
                     [&](size_t i) { return rows[i].key(); });
  }
};

}  // namespace btsim::cluster::internal

#endif  // BTSIM_CLUSTER_INTERNAL_TABLET_CHUNK_H_
