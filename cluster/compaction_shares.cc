#include "cluster/compaction_shares.h"

#include <bit>
#include <utility>

namespace btsim::cluster {

size_t CompactionShares::Home(const void* allocation) const {
  // Fibonacci hashing of the address (allocations are 16-byte aligned).
  const uint64_t h =
      (reinterpret_cast<uintptr_t>(allocation) >> 4) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h >> (64 - std::countr_zero(slots_.size())));
}

CompactionShares::Recorded CompactionShares::Find(const RowRecord& row,
                                                  int64_t now_micros) const {
  // A recorded row is shared at least with this table's own reference.
  if (slots_.empty() || now_micros != now_micros_ || !row.shared()) return {};
  const size_t mask = slots_.size() - 1;
  for (size_t i = Home(row.allocation());; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (!slot.row.valid()) return {};
    if (slot.row.allocation() == row.allocation()) {
      return {&slot.result, slot.family_id, slot.rule};
    }
  }
}

void CompactionShares::PrefetchResult(const RowRecord& row) const {
  if (slots_.empty() || !row.shared()) return;
  const size_t mask = slots_.size() - 1;
  for (size_t i = Home(row.allocation());; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (!slot.row.valid()) return;
    if (slot.row.allocation() == row.allocation()) {
      slot.result.Prefetch();
      return;
    }
  }
}

void CompactionShares::Add(const RowRecord& row, uint32_t family_id,
                           const GcRule& rule, int64_t now_micros,
                           const RowRecord& result) {
  if (now_micros != now_micros_) {
    Clear();
    now_micros_ = now_micros;
  }
  if ((used_ + 1) * 2 > slots_.size()) Grow();
  const size_t mask = slots_.size() - 1;
  size_t i = Home(row.allocation());
  while (slots_[i].row.valid() &&
         slots_[i].row.allocation() != row.allocation()) {
    i = (i + 1) & mask;
  }
  Slot& slot = slots_[i];
  if (!slot.row.valid()) {
    slot.row = row.Share();
    ++used_;
  }
  slot.result = result.Share();
  slot.rule = &rule;
  slot.family_id = family_id;
}

void CompactionShares::Clear() {
  if (used_ == 0) return;
  // The size Grow reaches for used_ results.
  size_t wanted = 1024;
  while (used_ * 2 > wanted) wanted *= 2;
  if (slots_.size() > 2 * wanted) {
    slots_ = std::vector<Slot>(wanted);
  } else {
    for (Slot& slot : slots_) slot = Slot();
  }
  used_ = 0;
}

void CompactionShares::Grow() {
  std::vector<Slot> old = std::move(slots_);
  slots_ = std::vector<Slot>(old.empty() ? 1024 : old.size() * 2);
  const size_t mask = slots_.size() - 1;
  for (Slot& slot : old) {
    if (!slot.row.valid()) continue;
    size_t i = Home(slot.row.allocation());
    while (slots_[i].row.valid()) i = (i + 1) & mask;
    slots_[i] = std::move(slot);
  }
}

}  // namespace btsim::cluster
