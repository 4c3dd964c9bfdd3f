#include "replication/log.h"

#include <algorithm>

#include "base/check.h"

namespace btsim::replication {

uint64_t ReplicationLog::Append(cluster::CommitRecord record) {
  const uint64_t position = last_position() + 1;
  entries_.push_back(
      std::make_shared<const LogEntry>(LogEntry{position, std::move(record)}));
  return position;
}

std::vector<const LogEntry*> ReplicationLog::Read(uint64_t after,
                                                  size_t max) const {
  BTSIM_CHECK(after >= truncated_through());
  std::vector<const LogEntry*> out;
  for (uint64_t p = after + 1; p <= last_position() && out.size() < max; ++p) {
    out.push_back(entries_[p - first_position_].get());
  }
  return out;
}

std::vector<std::shared_ptr<const LogEntry>> ReplicationLog::ReadShared(
    uint64_t after, size_t max) const {
  BTSIM_CHECK(after >= truncated_through());
  std::vector<std::shared_ptr<const LogEntry>> out;
  const uint64_t last = last_position();
  if (last > after) {
    out.reserve(static_cast<size_t>(std::min<uint64_t>(last - after, max)));
  }
  for (uint64_t p = after + 1; p <= last && out.size() < max; ++p) {
    out.push_back(entries_[p - first_position_]);
  }
  return out;
}

void ReplicationLog::Skip() {
  BTSIM_CHECK(entries_.empty());
  ++first_position_;
}

void ReplicationLog::TruncateThrough(uint64_t position) {
  while (!entries_.empty() && first_position_ <= position) {
    entries_.pop_front();
    ++first_position_;
  }
}

}  // namespace btsim::replication
