#include "cluster/tablet.h"

#include <algorithm>

#include "base/check.h"

namespace btsim::cluster {

size_t Tablet::LowerBound(std::string_view key) const {
  auto it = std::lower_bound(
      rows_.begin(), rows_.end(), key,
      [](const RowRecord& r, std::string_view k) { return r.key() < k; });
  return static_cast<size_t>(it - rows_.begin());
}

size_t Tablet::UpperBound(std::string_view key) const {
  auto it = std::upper_bound(
      rows_.begin(), rows_.end(), key,
      [](std::string_view k, const RowRecord& r) { return k < r.key(); });
  return static_cast<size_t>(it - rows_.begin());
}

const RowRecord* Tablet::Find(std::string_view key) const {
  const size_t i = LowerBound(key);
  if (i < rows_.size() && rows_[i].key() == key) return &rows_[i];
  return nullptr;
}

void Tablet::Put(RowRecord record) {
  BTSIM_CHECK(Covers(record.key()));
  dirty_ = true;
  const size_t i = LowerBound(record.key());
  bytes_ += static_cast<int64_t>(record.bytes());
  if (i < rows_.size() && rows_[i].key() == record.key()) {
    bytes_ -= static_cast<int64_t>(rows_[i].bytes());
    rows_[i] = std::move(record);
  } else {
    rows_.insert(rows_.begin() + static_cast<ptrdiff_t>(i), std::move(record));
  }
}

void Tablet::Erase(std::string_view key) {
  const size_t i = LowerBound(key);
  if (i < rows_.size() && rows_[i].key() == key) EraseRange(i, i + 1);
}

void Tablet::EraseRange(size_t first, size_t last) {
  dirty_ = true;
  for (size_t i = first; i < last; ++i) {
    bytes_ -= static_cast<int64_t>(rows_[i].bytes());
  }
  rows_.erase(rows_.begin() + static_cast<ptrdiff_t>(first),
              rows_.begin() + static_cast<ptrdiff_t>(last));
}

Tablet Tablet::Clone() const {
  Tablet copy(start_, end_, pinned_);
  copy.rows_.reserve(rows_.size());
  for (const RowRecord& r : rows_) copy.rows_.push_back(r.Clone());
  copy.bytes_ = bytes_;
  return copy;
}

Tablet Tablet::SplitAt(size_t at) {
  BTSIM_CHECK(at > 0 && at < rows_.size());
  Tablet right(std::string(rows_[at].key()), end_, /*pinned=*/false);
  right.dirty_ = dirty_;
  right.rows_.reserve(rows_.size() - at);
  for (size_t i = at; i < rows_.size(); ++i) {
    right.bytes_ += static_cast<int64_t>(rows_[i].bytes());
    right.rows_.push_back(std::move(rows_[i]));
  }
  bytes_ -= right.bytes_;
  rows_.resize(at);
  end_ = right.start_;
  return right;
}

void Tablet::Absorb(Tablet&& next) {
  BTSIM_CHECK(next.start_ == end_);
  rows_.reserve(rows_.size() + next.rows_.size());
  for (RowRecord& r : next.rows_) rows_.push_back(std::move(r));
  bytes_ += next.bytes_;
  dirty_ = dirty_ || next.dirty_;
  end_ = next.end_;
  next.rows_.clear();
  next.bytes_ = 0;
}

void Tablet::Rewrite(size_t i, RowRecord record) {
  bytes_ -= static_cast<int64_t>(rows_[i].bytes());
  if (record.valid()) {
    BTSIM_CHECK(record.key() == rows_[i].key());
    bytes_ += static_cast<int64_t>(record.bytes());
  }
  rows_[i] = std::move(record);
}

void Tablet::DropInvalid() {
  std::erase_if(rows_, [](const RowRecord& r) { return !r.valid(); });
}

}  // namespace btsim::cluster
