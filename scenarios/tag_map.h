// TagMap: a value per value tag (Tag, see scenarios/name_pool.h), for
// lookups only: it cannot be iterated, so its order never decides anything.
//
// Compact tags (those simulated clients write, "<client>/<n>") are kept by
// client in vectors indexed by n, filled without hashing, as long as the
// vectors hold at most `max_slots` values in all (a map of a few tags with
// large n, such as one part of a long run's history, must not cost a slot
// for every n below them); any other tag goes to a hash map. Tags must come
// from one pool, and a non-compact tag's text must outlive the map. Not
// thread-safe.
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
  TagMap(uint64_t max_slots, T absent)
      : slots_left_(max_slots), absent_(std::move(absent)) {}

  // The value of `tag`, added as `absent` when missing.
  T& operator[](Tag tag) {
    if (tag.compact()) {
      if (by_client_.size() <= tag.client_index()) {
        by_client_.resize(tag.client_index() + 1);
      }
      std::vector<T>& by_n = by_client_[tag.client_index()];
      const uint64_t n = tag.sequence();
      if (n < by_n.size()) return by_n[n];
      // A tag refused a slot here never gets one later: the vector can
      // only reach n by spending more than was left when it was refused.
      if (n + 1 - by_n.size() <= slots_left_) {
        slots_left_ -= n + 1 - by_n.size();
        by_n.resize(n + 1, absent_);
        return by_n[n];
      }
    }
    return others_.try_emplace(tag, absent_).first->second;
  }

  // The value of `tag`; `absent` when missing.
  const T& Find(Tag tag) const {
    if (tag.compact() && tag.client_index() < by_client_.size() &&
        tag.sequence() < by_client_[tag.client_index()].size()) {
      return by_client_[tag.client_index()][tag.sequence()];
    }
    auto it = others_.find(tag);
    return it == others_.end() ? absent_ : it->second;
  }

 private:
  uint64_t slots_left_;
  T absent_;
  std::vector<std::vector<T>> by_client_;       // by client index, then by n
  std::unordered_map<Tag, T, TagHash> others_;  // btsim: order-independent
};

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_TAG_MAP_H_
