// ReplicationLog: the changes one cluster committed, in commit order, each
// at a position (1, 2, 3, ...). Peers fetch entries after the last position
// they acknowledged; entries every peer has acknowledged are truncated.
//
// Entries are stored by value in fixed-size chunks, oldest first: appending
// costs no allocation of its own (one per kChunkEntries entries), reading a
// run of positions walks contiguous memory, and an entry never moves while
// it is in the log (appending does not invalidate pointers or references to
// the entries it keeps). Truncation destroys entries. Not thread-safe.
#ifndef BTSIM_REPLICATION_LOG_H_
#define BTSIM_REPLICATION_LOG_H_

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include "cluster/commit_record.h"

namespace btsim::replication {

struct LogEntry {
  uint64_t position = 0;
  cluster::CommitRecord record;
  // For an entry relayed for a removed cluster: where it was first
  // committed, that cluster's origin number and its position in that
  // cluster's log (source_position 0: committed by this log's cluster).
  uint32_t source_origin = 0;
  uint64_t source_position = 0;
};

class ReplicationLog {
 public:
  static constexpr size_t kChunkEntries = 256;

  ReplicationLog() = default;
  ReplicationLog(ReplicationLog&&) = default;
  ReplicationLog& operator=(ReplicationLog&&) = default;

  // Appends a record (moved from, not copied); returns its position.
  uint64_t Append(cluster::CommitRecord&& record);
  // Appends an empty record and returns it, to be filled in place before
  // anything reads it (its position is last_position()).
  cluster::CommitRecord& Emplace();
  // Takes the next position for a record no peer will read, storing
  // nothing: the log of a cluster with no peer. Requires size() == 0.
  void Skip();
  // Position of the newest entry (0 when nothing was ever appended).
  uint64_t last_position() const { return end_position_ - 1; }
  // The entry at `position`. Requires truncated_through() < position <=
  // last_position(). Valid until it is truncated.
  const LogEntry& At(uint64_t position) const;
  // Records where the entry at `position` was first committed (see
  // LogEntry). Same requirement as At.
  void SetSource(uint64_t position, uint32_t origin, uint64_t source_position);
  // Entries with position in (after, after + max], oldest first. Requires
  // after >= truncated_through(). Valid until they are truncated.
  std::vector<const LogEntry*> Read(uint64_t after, size_t max) const;
  // Makes an empty log's next position `position` + 1 (the entries before
  // it are gone): a log restored from a snapshot. Requires size() == 0.
  void StartAfter(uint64_t position);
  // Drops entries with position <= `position`.
  void TruncateThrough(uint64_t position);
  uint64_t truncated_through() const { return first_position_ - 1; }
  size_t size() const { return end_position_ - first_position_; }

 private:
  using Chunk = std::unique_ptr<LogEntry[]>;
  LogEntry& Slot(uint64_t position) const;

  uint64_t first_position_ = 1;  // the oldest entry kept
  uint64_t end_position_ = 1;    // last_position() + 1
  // Position of chunks_.front()[0]; slots before first_position_ and from
  // end_position_ on hold default (empty) entries.
  uint64_t chunks_start_ = 1;
  std::deque<Chunk> chunks_;
  Chunk spare_;  // the last chunk emptied, reused by the next one needed
};

}  // namespace btsim::replication

#endif  // BTSIM_REPLICATION_LOG_H_
