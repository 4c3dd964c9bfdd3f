// RowProbes: the searches for the rows of a batch of writes to one table,
// made together before the writes. Internal to cluster/ (Table's batches).
//
// A search for a row misses the cache several times in a row (the chunk
// index, the chunk's header, its heads, the row), each miss waiting for
// the one before. Start takes every key's search step by step
// (Tablet::Advance), several other keys' steps between one key's two, so
// that the misses of different keys overlap instead of following one
// another. Find then gives each write its row's slot from its probe,
// checked against the rows: a probe made stale by the batch's earlier
// writes costs a search, never a wrong answer.
#ifndef BTSIM_CLUSTER_INTERNAL_ROW_PROBES_H_
#define BTSIM_CLUSTER_INTERNAL_ROW_PROBES_H_

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/internal/tablet.h"

namespace btsim::cluster::internal {

class RowProbes {
 public:
  using Tablets = std::span<const std::unique_ptr<Tablet>>;

  // Probes each of `keys` in `tablets` (sorted by start; tablet_of(key) is
  // the index of the one covering key), forgetting earlier probes. Changes
  // no tablet.
  void Start(Tablets tablets, std::span<const std::string_view> keys,
             const std::function<size_t(std::string_view)>& tablet_of);
  // Where keys[i] of the last Start is in `tablets` (the same table,
  // possibly changed since): the covering tablet's index and the key's slot
  // in it, when the probe still gives them; nullopt when it does not (or
  // there is no probe i).
  std::optional<std::pair<size_t, RowSlot>> Find(Tablets tablets, size_t i,
                                                 std::string_view key) const;

 private:
  struct Entry {
    const Tablet* tablet = nullptr;  // tablets[index] when probed
    size_t index = 0;
    Tablet::Probe probe;
  };
  std::vector<Entry> entries_;
};

}  // namespace btsim::cluster::internal

#endif  // BTSIM_CLUSTER_INTERNAL_ROW_PROBES_H_
