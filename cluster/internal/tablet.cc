#include "cluster/internal/tablet.h"

#include <algorithm>
#include <iterator>
#include <optional>

#include "base/bytes.h"
#include "base/check.h"
#include "cluster/internal/key_heads.h"
#include "cluster/internal/tablet_chunk.h"
#include "sim/rng.h"

namespace btsim::cluster::internal {

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

void Tablet::Reindex() {
  std::erase_if(chunks_, [](const std::unique_ptr<Chunk>& chunk) {
    return chunk->size == 0;
  });
  for (const std::unique_ptr<Chunk>& chunk : chunks_) chunk->Index();
  IndexChunkStarts();
}

void Tablet::IndexChunkStarts() {
  first_key_.resize(chunks_.size());
  size_ = 0;
  for (size_t c = 0; c < chunks_.size(); ++c) {
    first_key_[c].assign(chunks_[c]->first_key());
    size_ += chunks_[c]->size;
  }
  IndexChunks();
}

template <typename F>
void Tablet::Walk(size_t c, size_t j, F&& f) const {
  // Rows are scattered over the heap: each is requested this many rows
  // ahead, far enough to overlap several misses, near enough that the
  // lines are still in cache when read.
  constexpr size_t kAhead = 8;
  auto request = [this](size_t rc, size_t rj) {
    if (rc >= chunks_.size()) return;
    if (rj >= chunks_[rc]->size) {
      rj -= chunks_[rc]->size;
      if (++rc == chunks_.size() || rj >= chunks_[rc]->size) return;
    }
    chunks_[rc]->rows[rj].Prefetch();
  };
  for (size_t k = 0; k < kAhead; ++k) request(c, j + k);
  for (; c < chunks_.size(); ++c, j = 0) {
    const size_t n = chunks_[c]->size;
    for (; j < n; ++j) {
      request(c, j + kAhead);
      if (!f(c, j)) return;
    }
  }
}

RowSlot Tablet::Seek(std::string_view key) const {
  if (chunks_.empty()) return RowSlot{};
  const size_t c = ChunkFor(key);
  const Chunk& chunk = *chunks_[c];
  const size_t i = chunk.Bound(key, /*upper=*/false);
  const bool found = i < chunk.size && SameBytes(chunk.rows[i].key(), key);
  return RowSlot{c, i, found ? &chunk.rows[i] : nullptr};
}

void Tablet::Mark(RowRecord& row) {
  if (all_due_ || row.marked()) return;
  row.set_marked(true);
  ++marked_;
}

void Tablet::Put(const RowSlot& slot, RowRecord record, bool dirty) {
  const std::string_view key = record.key();
  BTSIM_CHECK(Covers(key));
  bytes_ += static_cast<int64_t>(record.bytes());
  const bool mark = dirty && !all_due_;
  record.set_marked(mark);
  if (chunks_.empty()) {
    marked_ += mark ? 1 : 0;
    auto chunk = std::make_unique<Chunk>();
    chunk->rows[0] = std::move(record);
    chunk->size = 1;
    chunk->Index();
    chunks_.push_back(std::move(chunk));
    IndexChunkStarts();
    return;
  }
  const size_t c = slot.chunk;
  Chunk& chunk = *chunks_[c];
  const size_t offset = slot.offset;
  if (slot.row != nullptr) {
    RowRecord& old = chunk.rows[offset];
    bytes_ -= static_cast<int64_t>(old.bytes());
    if (old.marked()) {
      record.set_marked(true);
    } else {
      marked_ += mark ? 1 : 0;
    }
    old = std::move(record);
    return;
  }
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
  if (chunk.size > kMaxChunkRows) {
    // Split the full chunk in two halves.
    std::unique_ptr<Chunk> right = chunk.CutAt(chunk.size / 2);
    first_key_.insert(first_key_.begin() + static_cast<ptrdiff_t>(c) + 1,
                      std::string(right->first_key()));
    chunks_.insert(chunks_.begin() + static_cast<ptrdiff_t>(c) + 1,
                   std::move(right));
    IndexChunks();
  }
}

bool Tablet::Scan(const Interval& interval, bool reversed,
                  const std::function<bool(const RowRecord&)>& visit) const {
  if (chunks_.empty()) return true;
  if (!reversed) {
    size_t c = 0;
    size_t j = 0;
    if (!interval.start.unbounded()) {
      const RowSlot from = Seek(interval.start.value);
      c = from.chunk;
      j = from.offset;
      if (from.row != nullptr && interval.start.kind == Bound::Kind::kOpen) {
        ++j;
      }
    }
    bool more = true;
    Walk(c, j, [&](size_t rc, size_t rj) {
      const RowRecord& row = chunks_[rc]->rows[rj];
      if (!interval.end.AdmitsAsEnd(row.key())) return false;
      more = visit(row);
      return more;
    });
    return more;
  }
  // One past the row to visit first.
  size_t c = chunks_.size() - 1;
  size_t j = chunks_.back()->size;
  if (!interval.end.unbounded()) {
    const RowSlot to = Seek(interval.end.value);
    c = to.chunk;
    j = to.offset;
    if (to.row != nullptr && interval.end.kind == Bound::Kind::kClosed) ++j;
  }
  while (true) {
    const Chunk& chunk = *chunks_[c];
    for (; j > 0; --j) {
      const RowRecord& row = chunk.rows[j - 1];
      if (!interval.start.AdmitsAsStart(row.key())) return true;
      if (!visit(row)) return false;
    }
    if (c == 0) return true;
    --c;
    j = chunks_[c]->size;
  }
}

void Tablet::UnmarkAll() {
  for (size_t c = 0; c < chunks_.size() && marked_ > 0; ++c) {
    Chunk& chunk = *chunks_[c];
    for (size_t i = 0; i < chunk.size; ++i) {
      if (!chunk.rows[i].marked()) continue;
      chunk.rows[i].set_marked(false);
      --marked_;
    }
  }
  BTSIM_CHECK(marked_ == 0);
}

bool Tablet::Apply(size_t c, size_t i, RowEdit edit) {
  RowRecord& row = chunks_[c]->rows[i];
  if (edit.erase) {
    bytes_ -= static_cast<int64_t>(row.bytes());
    marked_ -= row.marked() ? 1 : 0;
    row = RowRecord();
    return true;
  }
  if (edit.replacement.valid()) {
    BTSIM_CHECK(SameBytes(edit.replacement.key(), row.key()));
    bytes_ += static_cast<int64_t>(edit.replacement.bytes()) -
              static_cast<int64_t>(row.bytes());
    edit.replacement.set_marked(row.marked());
    row = std::move(edit.replacement);
  }
  if (edit.mark) Mark(row);
  return false;
}

void Tablet::EditDue(bool every_row, const RowEditor& edit,
                     const Ahead& ahead) {
  // Rows (and what `ahead` requests for them) are scattered over the heap:
  // each is requested this many rows ahead, so that their cache misses
  // overlap, and the rest of a long row half as far ahead.
  constexpr size_t kAhead = 8;
  if (!every_row && !all_due_ && marked_ == 0) return;
  bool erased = false;
  if (every_row || all_due_) {
    UnmarkAll();
    all_due_ = false;
    Walk(0, 0, [&](size_t c, size_t i) {
      erased |= Apply(c, i, edit(chunks_[c]->rows[i]));
      return true;
    });
  } else {
    // The marked rows, unmarked; Apply keeps their places.
    std::vector<std::pair<size_t, size_t>> due;
    due.reserve(marked_);
    for (size_t c = 0; c < chunks_.size() && due.size() < marked_; ++c) {
      Chunk& chunk = *chunks_[c];
      for (size_t i = 0; i < chunk.size; ++i) {
        if (!chunk.rows[i].marked()) continue;
        chunk.rows[i].set_marked(false);
        due.emplace_back(c, i);
      }
    }
    BTSIM_CHECK(due.size() == marked_);
    marked_ = 0;
    auto row_at = [this](const std::pair<size_t, size_t>& at) -> RowRecord& {
      return chunks_[at.first]->rows[at.second];
    };
    for (size_t k = 0; k < due.size(); ++k) {
      if (k + kAhead < due.size()) {
        const RowRecord& far = row_at(due[k + kAhead]);
        far.Prefetch();
        if (ahead) ahead(far, /*near=*/false);
      }
      if (k + kAhead / 2 < due.size()) {
        const RowRecord& near = row_at(due[k + kAhead / 2]);
        near.PrefetchRest();
        if (ahead) ahead(near, /*near=*/true);
      }
      erased |= Apply(due[k].first, due[k].second, edit(row_at(due[k])));
    }
  }
  if (erased) DropErased();
}

void Tablet::EditRange(std::string_view from, std::string_view to,
                       const RowEditor& edit) {
  if (chunks_.empty()) return;
  const RowSlot first = Seek(from);
  bool erased = false;
  Walk(first.chunk, first.offset, [&](size_t c, size_t i) {
    const RowRecord& row = chunks_[c]->rows[i];
    if (!to.empty() && !LessBytes(row.key(), to)) return false;
    erased |= Apply(c, i, edit(row));
    return true;
  });
  if (erased) DropErased();
}

void Tablet::DropErased() {
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

Tablet Tablet::SplitInHalf() {
  BTSIM_CHECK(size_ >= 2);
  // Row `at` (chunks_[c]->rows[j]) starts the right half; the rows before
  // it hold `left` bytes.
  size_t at = 0;
  size_t c = 0;
  size_t j = 0;
  int64_t left = 0;
  Walk(0, 0, [&](size_t rc, size_t rj) {
    c = rc;
    j = rj;
    if (at == size_ - 1 || (at > 0 && left * 2 >= bytes_)) return false;
    left += static_cast<int64_t>(chunks_[rc]->rows[rj].bytes());
    ++at;
    return true;
  });
  Tablet right(std::string(chunks_[c]->rows[j].key()), end_,
               /*pinned=*/false);
  right.all_due_ = all_due_;
  right.bytes_ = bytes_ - left;
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
  bytes_ = left;
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
  if (all_due_ || next.all_due_) {
    all_due_ = true;
    UnmarkAll();
  }
  end_ = next.end_;
  next.chunks_.clear();
  next.IndexChunkStarts();
  next.bytes_ = 0;
  next.marked_ = 0;
}

Tablet Tablet::Clone(bool share_rows) const {
  Tablet copy(start_, end_, pinned_);
  copy.chunks_.reserve(chunks_.size());
  for (const std::unique_ptr<Chunk>& chunk : chunks_) {
    auto c = std::make_unique<Chunk>();
    c->size = chunk->size;
    c->prefix = chunk->prefix;
    std::copy(chunk->summary, chunk->summary + Chunk::kSummary, c->summary);
    std::copy(chunk->heads, chunk->heads + chunk->size, c->heads);
    for (size_t i = 0; i < chunk->size; ++i) {
      c->rows[i] = share_rows ? chunk->rows[i].Share() : chunk->rows[i].Clone();
    }
    copy.chunks_.push_back(std::move(c));
  }
  copy.first_key_ = first_key_;
  copy.first_heads_ = first_heads_;
  copy.first_prefix_ = first_prefix_;
  copy.size_ = size_;
  copy.bytes_ = bytes_;
  return copy;
}

}  // namespace btsim::cluster::internal
