#include "cluster/tablet.h"

#include <algorithm>

#include "base/check.h"
#include "cluster/key_heads.h"

namespace btsim::cluster {
std::pair<size_t, size_t> Tablet::Locate(size_t i) const {
  BTSIM_CHECK(i < size_);
  const auto it = std::upper_bound(first_.begin(), first_.end(), i);
  const auto c = static_cast<size_t>(it - first_.begin()) - 1;
  return {c, i - first_[c]};
}

const RowRecord& Tablet::row(size_t i) const {
  const auto [c, j] = Locate(i);
  return chunks_[c][j];
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
  const size_t c = ChunkFor(key);
  return first_[c] + BoundIn(c, key, /*upper=*/false);
}

size_t Tablet::UpperBound(std::string_view key) const {
  if (chunks_.empty()) return 0;
  const size_t c = ChunkFor(key);
  return first_[c] + BoundIn(c, key, /*upper=*/true);
}

size_t Tablet::BoundIn(size_t c, std::string_view key, bool upper) const {
  const std::vector<RowRecord>& chunk = chunks_[c];
  const Heads& h = heads_[c];
  return HeadsBound(h.heads, std::string_view(first_key_[c].data(), h.lcp), key,
                    upper, [&chunk](size_t i) { return chunk[i].key(); });
}

void Tablet::RebuildHeads(size_t c) {
  const std::vector<RowRecord>& chunk = chunks_[c];
  Heads& h = heads_[c];
  h.lcp = CommonPrefixLength(chunk.front().key(), chunk.back().key());
  h.heads.clear();
  h.heads.reserve(chunk.capacity());
  for (const RowRecord& r : chunk) h.heads.push_back(KeyHead(r.key(), h.lcp));
}

Tablet::Slot Tablet::Seek(std::string_view key) const {
  if (chunks_.empty()) return Slot{};
  const size_t c = ChunkFor(key);
  const std::vector<RowRecord>& chunk = chunks_[c];
  const size_t i = BoundIn(c, key, /*upper=*/false);
  return Slot{c, i, i < chunk.size() && chunk[i].key() == key};
}

const RowRecord* Tablet::Find(std::string_view key) const {
  return At(Seek(key));
}

void Tablet::set_all_dirty(bool all_dirty) {
  all_dirty_ = all_dirty;
  if (all_dirty_) TakeCandidates();
}

void Tablet::AddCandidate(std::string_view key) {
  if (!all_dirty_) candidates_.emplace_back(key);
}

std::vector<std::string> Tablet::TakeCandidates() {
  std::vector<std::string> taken;
  taken.swap(candidates_);
  return taken;
}

void Tablet::Put(RowRecord record, bool dirty) {
  const Slot slot = Seek(record.key());
  Put(std::move(record), dirty, slot);
}

void Tablet::Put(RowRecord record, bool dirty, const Slot& slot) {
  const std::string_view key = record.key();
  BTSIM_CHECK(Covers(key));
  if (dirty) AddCandidate(key);
  bytes_ += static_cast<int64_t>(record.bytes());
  if (chunks_.empty()) {
    chunks_.emplace_back();
    chunks_.back().push_back(std::move(record));
    first_.assign(1, 0);
    first_key_.assign(1, std::string(key));
    IndexChunks();
    heads_.assign(1, Heads{});
    RebuildHeads(0);
    size_ = 1;
    return;
  }
  const size_t c = slot.chunk;
  std::vector<RowRecord>& chunk = chunks_[c];
  const auto it = chunk.begin() + static_cast<ptrdiff_t>(slot.offset);
  if (slot.found) {
    bytes_ -= static_cast<int64_t>(it->bytes());
    *it = std::move(record);
    return;
  }
  const bool at_an_end = it == chunk.begin() || it == chunk.end();
  if (it == chunk.begin()) {  // only in chunk 0
    first_key_[c].assign(key);
    if (first_key_.size() > 1 && key.starts_with(first_prefix_)) {
      first_heads_[c] = KeyHead(key, first_prefix_.size());
    } else {
      IndexChunks();
    }
  }
  const size_t offset = slot.offset;
  chunk.insert(it, std::move(record));
  ++size_;
  Heads& heads = heads_[c];
  if (at_an_end && CommonPrefixLength(chunk.front().key(),
                                      chunk.back().key()) != heads.lcp) {
    RebuildHeads(c);
  } else {
    heads.heads.insert(heads.heads.begin() + static_cast<ptrdiff_t>(offset),
                       KeyHead(key, heads.lcp));
  }
  for (size_t d = c + 1; d < first_.size(); ++d) ++first_[d];
  if (chunk.size() > kMaxChunkRows) {
    // Split the full chunk in two halves.
    const size_t half = chunk.size() / 2;
    std::vector<RowRecord> right;
    right.reserve(kMaxChunkRows);
    right.insert(right.end(), std::make_move_iterator(chunk.begin() + half),
                 std::make_move_iterator(chunk.end()));
    chunk.resize(half);
    const size_t right_first = first_[c] + half;
    chunks_.insert(chunks_.begin() + static_cast<ptrdiff_t>(c) + 1,
                   std::move(right));
    first_.insert(first_.begin() + static_cast<ptrdiff_t>(c) + 1, right_first);
    first_key_.insert(first_key_.begin() + static_cast<ptrdiff_t>(c) + 1,
                      std::string(chunks_[c + 1].front().key()));
    heads_.insert(heads_.begin() + static_cast<ptrdiff_t>(c) + 1, Heads{});
    RebuildHeads(c);
    RebuildHeads(c + 1);
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
  }
  rows.erase(rows.begin() + static_cast<ptrdiff_t>(first),
             rows.begin() + static_cast<ptrdiff_t>(last));
  SetRows(std::move(rows));
}

std::vector<RowRecord> Tablet::TakeRows() {
  std::vector<RowRecord> rows;
  rows.reserve(size_);
  for (std::vector<RowRecord>& chunk : chunks_) {
    for (RowRecord& r : chunk) rows.push_back(std::move(r));
  }
  chunks_.clear();
  first_.clear();
  first_key_.clear();
  heads_.clear();
  IndexChunks();
  size_ = 0;
  return rows;
}

void Tablet::SetRows(std::vector<RowRecord> rows) {
  chunks_.clear();
  first_.clear();
  first_key_.clear();
  heads_.clear();
  size_ = rows.size();
  // Half-full chunks leave room for inserts before the first split.
  constexpr size_t kFill = kMaxChunkRows / 2;
  for (size_t i = 0; i < rows.size(); i += kFill) {
    const size_t end = std::min(rows.size(), i + kFill);
    std::vector<RowRecord> chunk;
    chunk.reserve(kMaxChunkRows);
    chunk.insert(
        chunk.end(),
        std::make_move_iterator(rows.begin() + static_cast<ptrdiff_t>(i)),
        std::make_move_iterator(rows.begin() + static_cast<ptrdiff_t>(end)));
    first_.push_back(i);
    first_key_.emplace_back(chunk.front().key());
    chunks_.push_back(std::move(chunk));
    heads_.emplace_back();
    RebuildHeads(chunks_.size() - 1);
  }
  IndexChunks();
}

void Tablet::Reindex() {
  std::erase_if(chunks_, [](const std::vector<RowRecord>& chunk) {
    return chunk.empty();
  });
  first_.resize(chunks_.size());
  first_key_.resize(chunks_.size());
  heads_.resize(chunks_.size());
  size_ = 0;
  for (size_t c = 0; c < chunks_.size(); ++c) {
    first_[c] = size_;
    first_key_[c].assign(chunks_[c].front().key());
    RebuildHeads(c);
    size_ += chunks_[c].size();
  }
  IndexChunks();
}

Tablet Tablet::Clone() const {
  Tablet copy(start_, end_, pinned_);
  copy.chunks_.reserve(chunks_.size());
  for (const std::vector<RowRecord>& chunk : chunks_) {
    std::vector<RowRecord> c;
    c.reserve(chunk.capacity());
    for (const RowRecord& r : chunk) c.push_back(r.Clone());
    copy.chunks_.push_back(std::move(c));
  }
  copy.first_ = first_;
  copy.first_key_ = first_key_;
  copy.first_heads_ = first_heads_;
  copy.first_prefix_ = first_prefix_;
  copy.heads_ = heads_;
  copy.size_ = size_;
  copy.bytes_ = bytes_;
  return copy;
}

Tablet Tablet::SplitAt(size_t at) {
  BTSIM_CHECK(at > 0 && at < size_);
  std::vector<RowRecord> rows = TakeRows();
  Tablet right(std::string(rows[at].key()), end_, /*pinned=*/false);
  right.all_dirty_ = all_dirty_;
  const auto moved = std::partition(
      candidates_.begin(), candidates_.end(),
      [&](const std::string& key) { return key < right.start_; });
  right.candidates_.assign(std::make_move_iterator(moved),
                           std::make_move_iterator(candidates_.end()));
  candidates_.erase(moved, candidates_.end());
  std::vector<RowRecord> right_rows;
  right_rows.reserve(rows.size() - at);
  for (size_t i = at; i < rows.size(); ++i) {
    right.bytes_ += static_cast<int64_t>(rows[i].bytes());
    right_rows.push_back(std::move(rows[i]));
  }
  rows.resize(at);
  right.SetRows(std::move(right_rows));
  SetRows(std::move(rows));
  bytes_ -= right.bytes_;
  end_ = right.start_;
  return right;
}

void Tablet::Absorb(Tablet&& next) {
  BTSIM_CHECK(next.start_ == end_);
  for (std::vector<RowRecord>& chunk : next.chunks_) {
    chunks_.push_back(std::move(chunk));
  }
  Reindex();
  bytes_ += next.bytes_;
  set_all_dirty(all_dirty_ || next.all_dirty_);
  for (const std::string& key : next.TakeCandidates()) AddCandidate(key);
  end_ = next.end_;
  next.chunks_.clear();
  next.first_.clear();
  next.first_key_.clear();
  next.heads_.clear();
  next.IndexChunks();
  next.size_ = 0;
  next.bytes_ = 0;
}

Tablet::Slot Tablet::SlotAt(size_t i) const {
  const auto [c, j] = Locate(i);
  return Slot{c, j, true};
}

void Tablet::Rewrite(const Slot& slot, RowRecord record) {
  BTSIM_CHECK(slot.found);
  RowRecord& old = chunks_[slot.chunk][slot.offset];
  bytes_ -= static_cast<int64_t>(old.bytes());
  if (record.valid()) {
    BTSIM_CHECK(record.key() == old.key());
    bytes_ += static_cast<int64_t>(record.bytes());
  }
  old = std::move(record);
}

void Tablet::DropInvalid() {
  for (std::vector<RowRecord>& chunk : chunks_) {
    std::erase_if(chunk, [](const RowRecord& r) { return !r.valid(); });
  }
  Reindex();
}

}  // namespace btsim::cluster
