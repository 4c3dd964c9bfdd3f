// Tablet's probes: a search for one key taken in steps (Tablet::Advance)
// and checked when used (Tablet::SeekProbed). The rest of Tablet is in
// tablet.cc.
#include <algorithm>
#include <optional>

#include "base/bytes.h"
#include "base/prefetch.h"
#include "cluster/internal/tablet.h"
#include "cluster/internal/tablet_chunk.h"

namespace btsim::cluster::internal {

void Tablet::Advance(std::string_view key, Probe* probe) const {
  if (probe->steps >= kProbeSteps) return;
  switch (probe->steps++) {
    case 0:
      // The chunk index: the search reads only first_heads_ (and first_key_
      // on ties); the chunk's entry is requested.
      if (chunks_.empty()) {
        probe->steps = kProbeSteps;
        return;
      }
      probe->index = ChunkFor(key);
      __builtin_prefetch(&chunks_[probe->index]);
      return;
    case 1: {
      // The chunk's size, prefix and summary: every line up to the
      // summary's end (three).
      if (probe->index >= chunks_.size()) {
        probe->steps = kProbeSteps;
        return;
      }
      const Chunk* chunk = chunks_[probe->index].get();
      probe->chunk = chunk;
      const char* const base = reinterpret_cast<const char*>(chunk);
      const char* const end =
          reinterpret_cast<const char*>(&chunk->summary[Chunk::kSummary]);
      PrefetchForRead(base, static_cast<size_t>(end - base));
      return;
    }
    case 2: {
      // The interval's heads and row pointers, heads[to] included: at most
      // two lines each.
      const Chunk& chunk = *probe->chunk;
      const std::optional<uint64_t> head = chunk.HeadOf(key);
      if (!head) return;
      const auto [from, to] = chunk.Interval(*head);
      const size_t last = std::min(to, chunk.size - 1);
      __builtin_prefetch(&chunk.heads[from]);
      __builtin_prefetch(&chunk.heads[last]);
      __builtin_prefetch(&chunk.rows[from]);
      __builtin_prefetch(&chunk.rows[last]);
      return;
    }
    default: {
      // The heads' bound and its row: a tie is left for SeekProbed to
      // check, so that this step reads no row that was not requested.
      const Chunk& chunk = *probe->chunk;
      const std::optional<uint64_t> head = chunk.HeadOf(key);
      const size_t i = chunk.HeadBound(key, head);
      probe->offset = i;
      if (i < chunk.size) chunk.rows[i].Prefetch();
      // When the heads say the key is absent, its insert will shift the
      // rows and heads from i to the end of the chunk one place on: fetch
      // every line of both (the shift would otherwise wait for them one
      // after another).
      if (i == chunk.size || !head || chunk.heads[i] != *head) {
        constexpr size_t kPerLine = 64 / sizeof(uint64_t);
        static_assert(sizeof(RowRecord) == sizeof(uint64_t));
        for (size_t j = i; j <= chunk.size; j += kPerLine) {
          __builtin_prefetch(&chunk.rows[j]);
          __builtin_prefetch(&chunk.heads[j]);
        }
        __builtin_prefetch(&chunk.rows[chunk.size]);
        __builtin_prefetch(&chunk.heads[chunk.size]);
      }
      return;
    }
  }
}

std::optional<RowSlot> Tablet::SeekProbed(std::string_view key,
                                          const Probe& probe) const {
  // The probe's chunk may be gone: compared as a pointer before it is
  // followed.
  if (probe.steps < kProbeSteps || probe.chunk == nullptr ||
      probe.index >= chunks_.size() ||
      chunks_[probe.index].get() != probe.chunk) {
    return std::nullopt;
  }
  const size_t c = probe.index;
  const Chunk& chunk = *probe.chunk;
  const size_t i = probe.offset;
  if (i > chunk.size) return std::nullopt;
  // Keys are unique: the key at rows[i] is the key's row.
  if (i < chunk.size) {
    const std::string_view at = chunk.rows[i].key();
    if (SameBytes(at, key)) return RowSlot{c, i, &chunk.rows[i]};
    if (LessBytes(at, key)) return std::nullopt;
  } else if (c + 1 < chunks_.size() ? !LessBytes(key, first_key_[c + 1])
                                    : !(end_.empty() || LessBytes(key, end_))) {
    return std::nullopt;  // it goes after this chunk
  }
  // Absent: it goes at i when the row before sorts before it (in this
  // chunk, or, at the tablet's first position, when the tablet covers it).
  if (i > 0 ? !chunk.Before(i - 1, key) : c > 0 || LessBytes(key, start_)) {
    return std::nullopt;
  }
  return RowSlot{c, i, nullptr};
}

}  // namespace btsim::cluster::internal
