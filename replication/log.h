// ReplicationLog: the changes one cluster committed, in commit order, each
// at a position (1, 2, 3, ...). Peers fetch entries after the last position
// they acknowledged; entries every peer has acknowledged are truncated.
// Entries are shared (ReadShared), so batches in flight to several peers
// reference one copy of each record, which outlives its truncation for as
// long as a batch holds it. Not thread-safe.
#ifndef BTSIM_REPLICATION_LOG_H_
#define BTSIM_REPLICATION_LOG_H_

#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "cluster/commit_record.h"

namespace btsim::replication {

struct LogEntry {
  uint64_t position;
  cluster::CommitRecord record;
};

class ReplicationLog {
 public:
  // Appends a record; returns its position.
  uint64_t Append(cluster::CommitRecord record);
  // Takes the next position for a record no peer will read, storing
  // nothing: the log of a cluster with no peer. Requires size() == 0.
  void Skip();
  // Position of the newest entry (0 when nothing was ever appended).
  uint64_t last_position() const {
    return first_position_ + entries_.size() - 1;
  }
  // Entries with position in (after, after + max], oldest first. Requires
  // after >= truncated_through().
  std::vector<const LogEntry*> Read(uint64_t after, size_t max) const;
  // The same entries, shared: valid after they are truncated.
  std::vector<std::shared_ptr<const LogEntry>> ReadShared(uint64_t after,
                                                          size_t max) const;
  // Drops entries with position <= `position`.
  void TruncateThrough(uint64_t position);
  uint64_t truncated_through() const { return first_position_ - 1; }
  size_t size() const { return entries_.size(); }

 private:
  uint64_t first_position_ = 1;  // position of entries_.front()
  std::deque<std::shared_ptr<const LogEntry>> entries_;
};

}  // namespace btsim::replication

#endif  // BTSIM_REPLICATION_LOG_H_
