#include "cluster/row_sharing.h"

#include <bit>
#include <utility>

namespace btsim::cluster {

RowShare::RowShare(const RowRecord* before, const RowRecord& after, bool dirty,
                   uint32_t family_id)
    : before_(before != nullptr ? before->Share() : RowRecord()),
      after_(after.Share()),
      dirty_(dirty),
      family_id_(family_id) {}

RowShare::RowShare(const RowShare& other)
    : before_(other.before_.Share()),
      after_(other.after_.Share()),
      dirty_(other.dirty_),
      family_id_(other.family_id_) {}

RowShare& RowShare::operator=(const RowShare& other) {
  if (this != &other) *this = RowShare(other);
  return *this;
}

const RowRecord* RowShare::ResultFor(const RowRecord* row,
                                     uint32_t family_id) const {
  if (!valid() || family_id != family_id_) return nullptr;
  const bool same = row == nullptr ? !before_.valid() : row->SameRow(before_);
  return same ? &after_ : nullptr;
}

size_t CompactionShares::Home(const void* allocation) const {
  // Fibonacci hashing of the address (allocations are 16-byte aligned).
  const uint64_t h =
      (reinterpret_cast<uintptr_t>(allocation) >> 4) * 0x9E3779B97F4A7C15ull;
  return static_cast<size_t>(h >> (64 - std::countr_zero(slots_.size())));
}

CompactionShares::Recorded CompactionShares::Find(const RowRecord& row,
                                                  Timestamp now) const {
  // A recorded row is shared at least with this table's own reference.
  if (slots_.empty() || now != now_ || !row.shared()) return {};
  const size_t mask = slots_.size() - 1;
  for (size_t i = Home(row.allocation());; i = (i + 1) & mask) {
    const Slot& slot = slots_[i];
    if (!slot.row.valid()) return {};
    if (slot.row.allocation() == row.allocation()) {
      return {&slot.result, slot.family_id, slot.rule, slot.newest_version};
    }
  }
}

void CompactionShares::Prefetch(const RowRecord& row, bool near) const {
  if (slots_.empty()) return;
  if (!near) {
    __builtin_prefetch(&slots_[Home(row.allocation())]);
    return;
  }
  // Find's walk, without reading the row: a result's row is shared.
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
                           const GcRule& rule, Timestamp now,
                           Version newest_version, const RowRecord& result) {
  if (now != now_) {
    Clear();
    now_ = now;
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
  slot.newest_version = newest_version;
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
