// FlatIndex: a hash index from 64-bit hashes to uint32_t values, for
// lookups only (it cannot be iterated, so its order never decides
// anything). The caller owns the keys: it passes a key's hash and a
// predicate that tells whether a stored value names that key. Open
// addressing with linear probing in one flat array of 8-byte slots (32 bits
// derived from the hash, and the value): no allocation per entry, unlike
// std::unordered_map.
//
// Not thread-safe. Values are never removed.
#ifndef BTSIM_SCENARIOS_FLAT_INDEX_H_
#define BTSIM_SCENARIOS_FLAT_INDEX_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string_view>
#include <utility>
#include <vector>

#include "base/check.h"

namespace btsim::scenarios {

class FlatIndex {
 public:
  // Values must be below kNoValue.
  static constexpr uint32_t kNoValue = 0xffffffff;

  // Room for `expected` entries before the first growth.
  void Reserve(size_t expected) {
    size_t capacity = kMinCapacity;
    while (capacity < 2 * expected) capacity *= 2;
    if (capacity > slots_.size()) Rehash(capacity);
  }

  // The value of the first entry with `hash` for which `same(value)` is
  // true; nullptr when none. (`same` may also be asked about entries with
  // other hashes; it must tell whether the value names the key sought.)
  template <class Same>
  const uint32_t* Find(uint64_t hash, Same same) const {
    if (slots_.empty()) return nullptr;
    const uint32_t check = Check(hash);
    for (size_t i = Home(check);; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.value == kNoValue) return nullptr;
      if (slot.check == check && same(slot.value)) return &slot.value;
    }
  }

  // Finds as above; when none matches, adds (hash, value). Returns the
  // stored value and whether it was added.
  template <class Same>
  std::pair<uint32_t, bool> Emplace(uint64_t hash, uint32_t value, Same same) {
    BTSIM_CHECK(value != kNoValue);
    if (2 * (size_ + 1) > slots_.size()) {
      Rehash(slots_.empty() ? kMinCapacity : 2 * slots_.size());
    }
    const uint32_t check = Check(hash);
    size_t i = Home(check);
    for (;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.value == kNoValue) break;
      if (slot.check == check && same(slot.value)) return {slot.value, false};
    }
    slots_[i] = Slot{check, value};
    ++size_;
    return {value, true};
  }

  // Hints for lookups of many keys at once, whose cache misses then
  // overlap instead of following one another. Neither changes anything.
  //
  // Starts fetching the slot where a lookup of `hash` begins.
  void Prefetch(uint64_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[Home(Check(hash))]);
  }
  // The value of the first entry a lookup of `hash` would ask `same` about
  // (maybe another key's), to prefetch what `same` reads; kNoValue when
  // there is none.
  uint32_t Candidate(uint64_t hash) const {
    if (slots_.empty()) return kNoValue;
    const uint32_t check = Check(hash);
    for (size_t i = Home(check);; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (slot.value == kNoValue || slot.check == check) return slot.value;
    }
  }

  size_t size() const { return size_; }

 private:
  static constexpr size_t kMinCapacity = 16;
  // 8 bytes: half the memory (and cache misses) of a slot holding the
  // whole hash. `check` is what placement uses, so growth needs nothing
  // else; `same` settles the rare equal checks of different keys.
  struct Slot {
    uint32_t check = 0;
    uint32_t value = kNoValue;
  };

  // Fibonacci hashing: the top 32 bits of hash * 2^64/phi, which depend on
  // every bit of the hash...
  static uint32_t Check(uint64_t hash) {
    return static_cast<uint32_t>((hash * 0x9e3779b97f4a7c15ULL) >> 32);
  }
  // ...and the home slot is their top bits.
  size_t Home(uint32_t check) const {
    return static_cast<size_t>(check >> shift_);
  }

  void Rehash(size_t capacity) {
    BTSIM_CHECK(capacity <= (size_t{1} << 32));
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 32;
    for (size_t c = capacity; c > 1; c /= 2) --shift_;
    for (const Slot& slot : old) {
      if (slot.value == kNoValue) continue;
      size_t i = Home(slot.check);
      while (slots_[i].value != kNoValue) i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
  int shift_ = 32;
};

// The hash FlatIndex users give a string (any good 64-bit hash will do:
// it only places entries).
inline uint64_t HashString(std::string_view s) {
  return std::hash<std::string_view>{}(s);
}

// The hash of a (table, row) pair.
inline uint64_t HashTableRow(std::string_view table, std::string_view row) {
  return HashString(row) ^ (HashString(table) * 0x9e3779b97f4a7c15ULL);
}

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_FLAT_INDEX_H_
