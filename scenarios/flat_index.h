// FlatIndex: a hash index from 64-bit hashes to uint32_t values, for
// lookups only (it cannot be iterated, so its order never decides
// anything). The caller owns the keys: it passes a key's hash and a
// predicate that tells whether a stored value names that key. Open
// addressing with linear probing in one flat array: no allocation per
// entry, unlike std::unordered_map.
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

namespace btsim::scenarios {

class FlatIndex {
 public:
  // Room for `expected` entries before the first growth.
  void Reserve(size_t expected) {
    size_t capacity = kMinCapacity;
    while (capacity < 2 * expected) capacity *= 2;
    if (capacity > slots_.size()) Rehash(capacity);
  }

  // The value of the first entry with `hash` for which `same(value)` is
  // true; nullptr when none.
  template <class Same>
  const uint32_t* Find(uint64_t hash, Same same) const {
    if (slots_.empty()) return nullptr;
    for (size_t i = Home(hash);; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (!slot.used) return nullptr;
      if (slot.hash == hash && same(slot.value)) return &slot.value;
    }
  }

  // Finds as above; when none matches, adds (hash, value). Returns the
  // stored value and whether it was added.
  template <class Same>
  std::pair<uint32_t, bool> Emplace(uint64_t hash, uint32_t value, Same same) {
    if (2 * (size_ + 1) > slots_.size()) {
      Rehash(slots_.empty() ? kMinCapacity : 2 * slots_.size());
    }
    size_t i = Home(hash);
    for (;; i = (i + 1) & mask_) {
      const Slot& slot = slots_[i];
      if (!slot.used) break;
      if (slot.hash == hash && same(slot.value)) return {slot.value, false};
    }
    slots_[i] = Slot{hash, value, true};
    ++size_;
    return {value, true};
  }

  size_t size() const { return size_; }

 private:
  static constexpr size_t kMinCapacity = 16;
  struct Slot {
    uint64_t hash = 0;
    uint32_t value = 0;
    bool used = false;
  };

  // Fibonacci hashing: the top bits of hash * 2^64/phi.
  size_t Home(uint64_t hash) const {
    return static_cast<size_t>((hash * 0x9e3779b97f4a7c15ULL) >> shift_);
  }

  void Rehash(size_t capacity) {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
    shift_ = 64;
    for (size_t c = capacity; c > 1; c /= 2) --shift_;
    for (const Slot& slot : old) {
      if (!slot.used) continue;
      size_t i = Home(slot.hash);
      while (slots_[i].used) i = (i + 1) & mask_;
      slots_[i] = slot;
    }
  }

  std::vector<Slot> slots_;
  size_t size_ = 0;
  size_t mask_ = 0;
  int shift_ = 64;
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
