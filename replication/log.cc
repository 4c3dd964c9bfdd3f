#include "replication/log.h"

#include "base/check.h"

namespace btsim::replication {

uint64_t ReplicationLog::Append(cluster::CommitRecord record) {
  const uint64_t position = last_position() + 1;
  entries_.push_back(LogEntry{position, std::move(record)});
  return position;
}

std::vector<const LogEntry*> ReplicationLog::Read(uint64_t after,
                                                  size_t max) const {
  BTSIM_CHECK(after >= truncated_through());
  std::vector<const LogEntry*> out;
  for (uint64_t p = after + 1; p <= last_position() && out.size() < max; ++p) {
    out.push_back(&entries_[p - first_position_]);
  }
  return out;
}

void ReplicationLog::TruncateThrough(uint64_t position) {
  while (!entries_.empty() && first_position_ <= position) {
    entries_.pop_front();
    ++first_position_;
  }
}

}  // namespace btsim::replication
