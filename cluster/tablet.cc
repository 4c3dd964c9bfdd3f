#include "cluster/tablet.h"

#include <algorithm>
#include <iterator>
#include <optional>

#include "base/bytes.h"
#include "base/check.h"
#include "base/prefetch.h"
#include "cluster/key_heads.h"
#include "sim/rng.h"

namespace btsim::cluster {

// Aligned to cache lines, so that what a search reads first (the size, the
// prefix and the summary) fills as few lines as possible (see ProbeChunk).
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
    size_t first = HeadBound(key, head);
    if (!head || first == size || heads[first] != *head) return first;
    // Rows whose heads tie with the key's: compare the keys themselves.
    size_t last = static_cast<size_t>(
        std::upper_bound(heads + first, heads + size, *head) - heads);
    while (first < last) {
      const size_t mid = first + (last - first) / 2;
      const std::string_view k = rows[mid].key();
      if (upper ? !LessBytes(key, k) : LessBytes(k, key)) {
        first = mid + 1;
      } else {
        last = mid;
      }
    }
    return first;
  }
};

Tablet::Tablet(std::string start, std::string end, bool pinned)
    : start_(std::move(start)), end_(std::move(end)), pinned_(pinned) {}
Tablet::Tablet(Tablet&&) noexcept = default;
Tablet& Tablet::operator=(Tablet&&) noexcept = default;
Tablet::~Tablet() = default;

uint64_t Tablet::StartHash(uint64_t seed) const {
  if (!has_start_hash_ || start_hash_seed_ != seed) {
    start_hash_ = sim::StableHash(start_, seed);
    start_hash_seed_ = seed;
    has_start_hash_ = true;
  }
  return start_hash_;
}

void Tablet::FreshenFirst() const {
  if (stale_from_ == kFresh) return;
  // Chunks before stale_from_ - 1 counted no insert: their starts, and the
  // start of chunk stale_from_ - 1, are exact.
  size_t added = 0;
  for (size_t c = stale_from_ - 1; c + 1 < first_.size(); ++c) {
    added += inserted_[c];
    inserted_[c] = 0;
    first_[c + 1] += added;
  }
  inserted_.back() = 0;
  stale_from_ = kFresh;
}

void Tablet::ClearFirst() {
  first_.clear();
  inserted_.clear();
  stale_from_ = kFresh;
}

std::pair<size_t, size_t> Tablet::Locate(size_t i) const {
  BTSIM_CHECK(i < size_);
  FreshenFirst();
  const auto it = std::upper_bound(first_.begin(), first_.end(), i);
  const auto c = static_cast<size_t>(it - first_.begin()) - 1;
  return {c, i - first_[c]};
}

const RowRecord& Tablet::row(size_t i) const {
  const auto [c, j] = Locate(i);
  return chunks_[c]->rows[j];
}

std::span<const RowRecord> Tablet::ChunkRows(size_t c) const {
  BTSIM_CHECK(c < chunks_.size());
  return {chunks_[c]->rows, chunks_[c]->size};
}

const RowRecord* Tablet::At(const Slot& slot) const {
  return slot.found ? &chunks_[slot.chunk]->rows[slot.offset] : nullptr;
}

size_t Tablet::ChunkFor(std::string_view key) const {
  const size_t after = HeadsBound(
      first_heads_, first_prefix_, key, /*upper=*/true,
      [this](size_t c) -> std::string_view { return first_key_[c]; });
  return after == 0 ? 0 : after - 1;
}

void Tablet::IndexChunks() {
  first_heads_.clear();
  first_prefix_.clear();
  if (first_key_.empty()) return;
  const size_t lcp = CommonPrefixLength(first_key_.front(), first_key_.back());
  first_prefix_ = first_key_.front().substr(0, lcp);
  first_heads_.reserve(first_key_.capacity());
  for (const std::string& k : first_key_) {
    first_heads_.push_back(KeyHead(k, lcp));
  }
}

size_t Tablet::LowerBound(std::string_view key) const {
  if (chunks_.empty()) return 0;
  FreshenFirst();
  const size_t c = ChunkFor(key);
  return first_[c] + BoundIn(c, key, /*upper=*/false);
}

size_t Tablet::UpperBound(std::string_view key) const {
  if (chunks_.empty()) return 0;
  FreshenFirst();
  const size_t c = ChunkFor(key);
  return first_[c] + BoundIn(c, key, /*upper=*/true);
}

size_t Tablet::BoundIn(size_t c, std::string_view key, bool upper) const {
  return chunks_[c]->Bound(key, upper);
}

Tablet::Slot Tablet::Seek(std::string_view key) const {
  if (chunks_.empty()) return Slot{};
  const size_t c = ChunkFor(key);
  const Chunk& chunk = *chunks_[c];
  const size_t i = chunk.Bound(key, /*upper=*/false);
  return Slot{c, i, i < chunk.size && SameBytes(chunk.rows[i].key(), key)};
}

Tablet::Probe Tablet::ProbeChunk(std::string_view key) const {
  return ProbeChunkAt(FindChunk(key));
}

size_t Tablet::FindChunk(std::string_view key) const {
  if (chunks_.empty()) return 0;
  const size_t c = ChunkFor(key);
  __builtin_prefetch(&chunks_[c]);
  return c;
}

Tablet::Probe Tablet::ProbeChunkAt(size_t c) const {
  if (c >= chunks_.size()) return Probe{};
  const Chunk* chunk = chunks_[c].get();
  // The size, the prefix and the summary: every line up to the summary's
  // end (three).
  const char* const base = reinterpret_cast<const char*>(chunk);
  const char* const end =
      reinterpret_cast<const char*>(&chunk->summary[Chunk::kSummary]);
  PrefetchForRead(base, static_cast<size_t>(end - base));
  return Probe{chunk, c, 0};
}

void Tablet::ProbeHeads(std::string_view key, const Probe& probe) const {
  if (probe.chunk == nullptr) return;
  const std::optional<uint64_t> head = probe.chunk->HeadOf(key);
  if (!head) return;
  // The interval's heads and row pointers, heads[to] included: at most two
  // lines each.
  const auto [from, to] = probe.chunk->Interval(*head);
  const size_t last = std::min(to, probe.chunk->size - 1);
  __builtin_prefetch(&probe.chunk->heads[from]);
  __builtin_prefetch(&probe.chunk->heads[last]);
  __builtin_prefetch(&probe.chunk->rows[from]);
  __builtin_prefetch(&probe.chunk->rows[last]);
}

void Tablet::ProbeRow(std::string_view key, Probe* probe) const {
  if (probe->chunk == nullptr) return;
  const Chunk& chunk = *probe->chunk;
  // The heads' bound: a tie is left for SeekProbed to check, so that this
  // step reads no row that was not requested.
  const std::optional<uint64_t> head = chunk.HeadOf(key);
  const size_t i = chunk.HeadBound(key, head);
  probe->offset = i;
  if (i < chunk.size) chunk.rows[i].Prefetch();
  // When the heads say the key is absent, its insert will shift the rows
  // and heads from i to the end of the chunk, one place on: fetch every line
  // of both (the shift would otherwise wait for them one after another).
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
}

std::optional<Tablet::Slot> Tablet::SeekProbed(std::string_view key,
                                               const Probe& probe) const {
  // The probe's chunk may be gone.
  if (!Current(probe)) return std::nullopt;
  const size_t c = probe.index;
  const Chunk& chunk = *probe.chunk;
  const size_t i = probe.offset;
  if (i > chunk.size) return std::nullopt;
  // Keys are unique: the key at rows[i] is the key's row.
  if (i < chunk.size) {
    const std::string_view at = chunk.rows[i].key();
    if (SameBytes(at, key)) return Slot{c, i, true};
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
  return Slot{c, i, false};
}

const RowRecord* Tablet::Find(std::string_view key) const {
  return At(Seek(key));
}

void Tablet::set_all_dirty(bool all_dirty) {
  all_dirty_ = all_dirty;
  if (all_dirty_ && marked_ > 0) TakeMarked();
}

void Tablet::Mark(const Slot& slot) {
  BTSIM_CHECK(slot.found);
  RowRecord& row = chunks_[slot.chunk]->rows[slot.offset];
  if (all_dirty_ || row.marked()) return;
  row.set_marked(true);
  ++marked_;
}

std::vector<Tablet::Slot> Tablet::TakeMarked() {
  std::vector<Slot> slots;
  slots.reserve(marked_);
  for (size_t c = 0; c < chunks_.size() && slots.size() < marked_; ++c) {
    Chunk& chunk = *chunks_[c];
    for (size_t i = 0; i < chunk.size; ++i) {
      if (!chunk.rows[i].marked()) continue;
      chunk.rows[i].set_marked(false);
      slots.push_back(Slot{c, i, true});
    }
  }
  BTSIM_CHECK(slots.size() == marked_);
  marked_ = 0;
  return slots;
}

void Tablet::Put(RowRecord record, bool dirty) {
  const Slot slot = Seek(record.key());
  Put(std::move(record), dirty, slot);
}

void Tablet::Put(RowRecord record, bool dirty, const Slot& slot) {
  const std::string_view key = record.key();
  BTSIM_CHECK(Covers(key));
  bytes_ += static_cast<int64_t>(record.bytes());
  const bool mark = dirty && !all_dirty_;
  if (chunks_.empty()) {
    record.set_marked(mark);
    marked_ += mark ? 1 : 0;
    std::vector<RowRecord> rows;
    rows.push_back(std::move(record));
    SetRows(std::move(rows));
    return;
  }
  const size_t c = slot.chunk;
  Chunk& chunk = *chunks_[c];
  const size_t offset = slot.offset;
  if (slot.found) {
    RowRecord& old = chunk.rows[offset];
    bytes_ -= static_cast<int64_t>(old.bytes());
    const bool was_marked = old.marked();
    record.set_marked(was_marked || mark);
    marked_ += !was_marked && mark ? 1 : 0;
    old = std::move(record);
    return;
  }
  record.set_marked(mark);
  marked_ += mark ? 1 : 0;
  if (offset == 0) {  // only in chunk 0
    first_key_[c].assign(key);
    if (first_key_.size() > 1 && key.starts_with(first_prefix_)) {
      first_heads_[c] = KeyHead(key, first_prefix_.size());
    } else {
      IndexChunks();
    }
  }
  RowRecord::ShiftRight(chunk.rows + offset, chunk.rows + chunk.size);
  std::copy_backward(chunk.heads + offset, chunk.heads + chunk.size,
                     chunk.heads + chunk.size + 1);
  chunk.rows[offset] = std::move(record);
  ++chunk.size;
  ++size_;
  const std::string_view stored = chunk.rows[offset].key();
  const size_t shared = CommonPrefixLength(stored, chunk.prefix);
  if (shared < chunk.prefix.size()) {
    // Only at an end: rows in between share the prefix of the ends. (The
    // new row's head, still stale, is set below.)
    chunk.ShortenPrefix(shared);
  }
  chunk.heads[offset] = KeyHead(stored, chunk.prefix.size());
  chunk.Summarize(offset);
  ++inserted_[c];
  stale_from_ = std::min(stale_from_, c + 1);
  if (chunk.size > kMaxChunkRows) {
    // Split the full chunk in two halves.
    FreshenFirst();
    const size_t half = chunk.size / 2;
    std::unique_ptr<Chunk> right = chunk.CutAt(half);
    const size_t right_first = first_[c] + half;
    first_key_.insert(first_key_.begin() + static_cast<ptrdiff_t>(c) + 1,
                      std::string(right->first_key()));
    chunks_.insert(chunks_.begin() + static_cast<ptrdiff_t>(c) + 1,
                   std::move(right));
    first_.insert(first_.begin() + static_cast<ptrdiff_t>(c) + 1, right_first);
    inserted_.insert(inserted_.begin() + static_cast<ptrdiff_t>(c) + 1, 0);
    IndexChunks();
  }
}

void Tablet::Erase(std::string_view key) {
  const size_t i = LowerBound(key);
  if (i < size_ && row(i).key() == key) EraseRange(i, i + 1);
}

void Tablet::EraseRange(size_t first, size_t last) {
  if (first >= last) return;
  std::vector<RowRecord> rows = TakeRows();
  for (size_t i = first; i < last; ++i) {
    bytes_ -= static_cast<int64_t>(rows[i].bytes());
    marked_ -= rows[i].marked() ? 1 : 0;
  }
  rows.erase(rows.begin() + static_cast<ptrdiff_t>(first),
             rows.begin() + static_cast<ptrdiff_t>(last));
  SetRows(std::move(rows));
}

std::vector<RowRecord> Tablet::TakeRows() {
  std::vector<RowRecord> rows;
  rows.reserve(size_);
  for (std::unique_ptr<Chunk>& chunk : chunks_) {
    std::move(chunk->rows, chunk->rows + chunk->size, std::back_inserter(rows));
  }
  chunks_.clear();
  ClearFirst();
  first_key_.clear();
  IndexChunks();
  size_ = 0;
  return rows;
}

void Tablet::SetRows(std::vector<RowRecord> rows) {
  chunks_.clear();
  ClearFirst();
  first_key_.clear();
  size_ = rows.size();
  // Half-full chunks leave room for inserts before the first split.
  constexpr size_t kFill = kMaxChunkRows / 2;
  for (size_t i = 0; i < rows.size(); i += kFill) {
    const size_t end = std::min(rows.size(), i + kFill);
    auto chunk = std::make_unique<Chunk>();
    chunk->size = end - i;
    std::move(rows.begin() + static_cast<ptrdiff_t>(i),
              rows.begin() + static_cast<ptrdiff_t>(end), chunk->rows);
    chunk->Index();
    first_.push_back(i);
    inserted_.push_back(0);
    first_key_.emplace_back(chunk->first_key());
    chunks_.push_back(std::move(chunk));
  }
  IndexChunks();
}

void Tablet::Reindex() {
  std::erase_if(chunks_, [](const std::unique_ptr<Chunk>& chunk) {
    return chunk->size == 0;
  });
  for (const std::unique_ptr<Chunk>& chunk : chunks_) chunk->Index();
  IndexChunkStarts();
}

void Tablet::IndexChunkStarts() {
  first_.resize(chunks_.size());
  inserted_.assign(chunks_.size(), 0);
  stale_from_ = kFresh;
  first_key_.resize(chunks_.size());
  size_ = 0;
  for (size_t c = 0; c < chunks_.size(); ++c) {
    first_[c] = size_;
    first_key_[c].assign(chunks_[c]->first_key());
    size_ += chunks_[c]->size;
  }
  IndexChunks();
}

template <typename F>
void Tablet::WalkRows(size_t first, F&& f) const {
  if (first >= size_) return;
  // Far enough ahead to overlap several misses, near enough that the lines
  // are still in cache when read.
  constexpr size_t kAhead = 8;
  auto [c, j] = Locate(first);
  for (; c < chunks_.size(); ++c, j = 0) {
    const Chunk& chunk = *chunks_[c];
    for (size_t k = j; k < std::min(chunk.size, j + kAhead); ++k) {
      chunk.rows[k].Prefetch();
    }
    for (; j < chunk.size; ++j) {
      if (j + kAhead < chunk.size) chunk.rows[j + kAhead].Prefetch();
      if (!f(chunk.rows[j])) return;
    }
  }
}

size_t Tablet::HalfBytesIndex() const {
  size_t at = 0;
  int64_t acc = 0;
  if (bytes_ <= 0) return 0;
  WalkRows(0, [&](const RowRecord& row) {
    acc += static_cast<int64_t>(row.bytes());
    ++at;
    return acc * 2 < bytes_;
  });
  return at;
}

Tablet Tablet::Clone() const {
  Tablet copy(start_, end_, pinned_);
  copy.chunks_.reserve(chunks_.size());
  for (const std::unique_ptr<Chunk>& chunk : chunks_) {
    auto c = std::make_unique<Chunk>();
    c->size = chunk->size;
    c->prefix = chunk->prefix;
    std::copy(chunk->summary, chunk->summary + Chunk::kSummary, c->summary);
    std::copy(chunk->heads, chunk->heads + chunk->size, c->heads);
    for (size_t i = 0; i < chunk->size; ++i)
      c->rows[i] = chunk->rows[i].Clone();
    copy.chunks_.push_back(std::move(c));
  }
  FreshenFirst();
  copy.first_ = first_;
  copy.inserted_.assign(first_.size(), 0);
  copy.first_key_ = first_key_;
  copy.first_heads_ = first_heads_;
  copy.first_prefix_ = first_prefix_;
  copy.size_ = size_;
  copy.bytes_ = bytes_;
  return copy;
}

Tablet Tablet::SplitAt(size_t at) {
  BTSIM_CHECK(at > 0 && at < size_);
  auto [c, j] = Locate(at);
  Tablet right(std::string(chunks_[c]->rows[j].key()), end_,
               /*pinned=*/false);
  right.all_dirty_ = all_dirty_;
  WalkRows(at, [&](const RowRecord& row) {
    right.bytes_ += static_cast<int64_t>(row.bytes());
    return true;
  });
  if (j > 0) {  // the chunk holding row `at` is cut; its tail goes right
    chunks_.insert(chunks_.begin() + static_cast<ptrdiff_t>(c) + 1,
                   chunks_[c]->CutAt(j));
    ++c;
  }
  right.chunks_.assign(
      std::make_move_iterator(chunks_.begin() + static_cast<ptrdiff_t>(c)),
      std::make_move_iterator(chunks_.end()));
  chunks_.resize(c);
  for (const std::unique_ptr<Chunk>& chunk : right.chunks_) {
    for (size_t i = 0; i < chunk->size; ++i) {
      right.marked_ += chunk->rows[i].marked() ? 1 : 0;
    }
  }
  marked_ -= right.marked_;
  bytes_ -= right.bytes_;
  end_ = right.start_;
  IndexChunkStarts();
  right.IndexChunkStarts();
  return right;
}

void Tablet::Absorb(Tablet&& next) {
  BTSIM_CHECK(next.start_ == end_);
  for (std::unique_ptr<Chunk>& chunk : next.chunks_) {
    chunks_.push_back(std::move(chunk));
  }
  Reindex();
  bytes_ += next.bytes_;
  marked_ += next.marked_;
  set_all_dirty(all_dirty_ || next.all_dirty_);
  end_ = next.end_;
  next.chunks_.clear();
  next.ClearFirst();
  next.first_key_.clear();
  next.IndexChunks();
  next.size_ = 0;
  next.bytes_ = 0;
  next.marked_ = 0;
}

Tablet::Slot Tablet::SlotAt(size_t i) const {
  const auto [c, j] = Locate(i);
  return Slot{c, j, true};
}

void Tablet::Rewrite(const Slot& slot, RowRecord record) {
  BTSIM_CHECK(slot.found);
  RowRecord& old = chunks_[slot.chunk]->rows[slot.offset];
  bytes_ -= static_cast<int64_t>(old.bytes());
  if (record.valid()) {
    BTSIM_CHECK(record.key() == old.key());
    bytes_ += static_cast<int64_t>(record.bytes());
    record.set_marked(old.marked());
  } else {
    marked_ -= old.marked() ? 1 : 0;
  }
  old = std::move(record);
}

void Tablet::DropInvalid() {
  for (std::unique_ptr<Chunk>& chunk : chunks_) {
    RowRecord* end =
        std::remove_if(chunk->rows, chunk->rows + chunk->size,
                       [](const RowRecord& r) { return !r.valid(); });
    const size_t kept = static_cast<size_t>(end - chunk->rows);
    // Moved-from records left past the end are empty already.
    for (size_t i = kept; i < chunk->size; ++i) chunk->rows[i] = RowRecord();
    chunk->size = kept;
  }
  Reindex();
}

}  // namespace btsim::cluster
