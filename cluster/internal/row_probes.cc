#include "cluster/internal/row_probes.h"

namespace btsim::cluster::internal {

void RowProbes::Start(
    Tablets tablets, std::span<const std::string_view> keys,
    const std::function<size_t(std::string_view)>& tablet_of) {
  entries_.clear();
  // The chunk indexes first (each search waits for its own loads, not for
  // the chunk entry of the key before)...
  for (std::string_view key : keys) {
    const size_t index = tablet_of(key);
    Entry& e = entries_.emplace_back(Entry{tablets[index].get(), index, {}});
    e.tablet->Advance(key, &e.probe);
  }
  // ...then each chunk's header, read by the next step kSkew keys after it
  // was requested: requesting every key's before reading any would find
  // the first ones not yet arrived...
  constexpr size_t kSkew = 8;
  for (size_t i = 0; i < keys.size() + kSkew; ++i) {
    if (i < keys.size())
      entries_[i].tablet->Advance(keys[i], &entries_[i].probe);
    if (i >= kSkew) {
      Entry& e = entries_[i - kSkew];
      e.tablet->Advance(keys[i - kSkew], &e.probe);
    }
  }
  // ...then the rows.
  for (size_t i = 0; i < keys.size(); ++i) {
    entries_[i].tablet->Advance(keys[i], &entries_[i].probe);
  }
}

std::optional<std::pair<size_t, RowSlot>> RowProbes::Find(
    Tablets tablets, size_t i, std::string_view key) const {
  if (i >= entries_.size()) return std::nullopt;
  const Entry& e = entries_[i];
  // The probe's tablet may be gone: compared as a pointer before it is
  // followed.
  if (e.index >= tablets.size() || tablets[e.index].get() != e.tablet) {
    return std::nullopt;
  }
  const std::optional<RowSlot> slot = e.tablet->SeekProbed(key, e.probe);
  if (!slot) return std::nullopt;
  return std::make_pair(e.index, *slot);
}

}  // namespace btsim::cluster::internal
