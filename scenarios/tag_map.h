// TagMap: a value per value tag (see scenarios/history.h), for lookups
// only: it cannot be iterated, so its order never decides anything.
//
// Tags simulated clients write, "<client>/<n>" (ParseTag), are kept by
// client in vectors indexed by n, filled without hashing each tag; any
// other tag, or an n above `max_sequence` (no huge vectors), goes to a hash
// map. Keys view the tags passed in: they must outlive the map. Not
// thread-safe.
#ifndef BTSIM_SCENARIOS_TAG_MAP_H_
#define BTSIM_SCENARIOS_TAG_MAP_H_

#include <cstdint>
#include <functional>
#include <string_view>
#include <unordered_map>  // btsim: order-independent (lookups only)
#include <utility>
#include <vector>

#include "base/bytes.h"
#include "scenarios/history.h"

namespace btsim::scenarios {

template <class T>
class TagMap {
 public:
  // `absent`: the value of a tag never added.
  TagMap(uint64_t max_sequence, T absent)
      : max_sequence_(max_sequence), absent_(std::move(absent)) {}

  // The value of `tag`, added as `absent` when missing.
  T& operator[](std::string_view tag) {
    std::string_view client;
    uint64_t n = 0;
    if (ParseTag(tag, &client, &n) && n <= max_sequence_) {
      std::vector<T>& by_n = by_client_[client];
      if (by_n.size() <= n) by_n.resize(n + 1, absent_);
      return by_n[n];
    }
    return others_.try_emplace(tag, absent_).first->second;
  }

  // The value of `tag`; `absent` when missing.
  const T& Find(std::string_view tag) const {
    std::string_view client;
    uint64_t n = 0;
    if (ParseTag(tag, &client, &n) && n <= max_sequence_) {
      auto it = by_client_.find(client);
      return it == by_client_.end() || n >= it->second.size() ? absent_
                                                              : it->second[n];
    }
    auto it = others_.find(tag);
    return it == others_.end() ? absent_ : it->second;
  }

 private:
  uint64_t max_sequence_;
  T absent_;
  template <class V>
  using Lookup =
      std::unordered_map<std::string_view, V,  // btsim: order-independent
                         std::hash<std::string_view>, BytesEqual>;
  Lookup<std::vector<T>> by_client_;
  Lookup<T> others_;
};

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_TAG_MAP_H_
