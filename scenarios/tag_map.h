// TagMap: a value per value tag (Tag, see scenarios/name_pool.h), for
// lookups only: it cannot be iterated, so its order never decides anything.
//
// Compact tags (those simulated clients write, "<client>/<n>") are kept by
// client in vectors indexed by n, filled without hashing; any other tag, or
// an n above `max_sequence` (no huge vectors), goes to a hash map. Tags must
// come from one pool, and a non-compact tag's text must outlive the map.
// Not thread-safe.
#ifndef BTSIM_SCENARIOS_TAG_MAP_H_
#define BTSIM_SCENARIOS_TAG_MAP_H_

#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>  // btsim: order-independent (lookups only)
#include <utility>
#include <vector>

#include "scenarios/name_pool.h"

namespace btsim::scenarios {

// Hashes tags consistently with Tag's ==.
struct TagHash {
  size_t operator()(Tag tag) const {
    return tag.compact() ? std::hash<int64_t>()(tag.bits())
                         : std::hash<std::string_view>()(tag.name().view());
  }
};

template <class T>
class TagMap {
 public:
  // `absent`: the value of a tag never added.
  TagMap(uint64_t max_sequence, T absent)
      : max_sequence_(max_sequence), absent_(std::move(absent)) {}

  // The value of `tag`, added as `absent` when missing.
  T& operator[](Tag tag) {
    if (tag.compact() && tag.sequence() <= max_sequence_) {
      if (by_client_.size() <= tag.client_index()) {
        by_client_.resize(tag.client_index() + 1);
      }
      std::vector<T>& by_n = by_client_[tag.client_index()];
      if (by_n.size() <= tag.sequence())
        by_n.resize(tag.sequence() + 1, absent_);
      return by_n[tag.sequence()];
    }
    return others_.try_emplace(tag, absent_).first->second;
  }

  // The value of `tag`; `absent` when missing.
  const T& Find(Tag tag) const {
    if (tag.compact() && tag.sequence() <= max_sequence_) {
      if (tag.client_index() >= by_client_.size()) return absent_;
      const std::vector<T>& by_n = by_client_[tag.client_index()];
      return tag.sequence() >= by_n.size() ? absent_ : by_n[tag.sequence()];
    }
    auto it = others_.find(tag);
    return it == others_.end() ? absent_ : it->second;
  }

 private:
  uint64_t max_sequence_;
  T absent_;
  std::vector<std::vector<T>> by_client_;       // by client index, then by n
  std::unordered_map<Tag, T, TagHash> others_;  // btsim: order-independent
};

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_TAG_MAP_H_
