// ReplicationJournal: what a Replicas reports to a persistent store (the
// file-backed one of `btsim serve --data-dir` lives in durable/). The core
// does no I/O: it only says what changed, in the order it happened, on the
// replicas' thread. Replaying the same calls in the same order through
// Replicas::ReplayCommit and Replicas::ReplayApplied rebuilds the same
// clusters, logs and positions.
#ifndef BTSIM_REPLICATION_JOURNAL_H_
#define BTSIM_REPLICATION_JOURNAL_H_

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "cluster/commit_record.h"
#include "cluster/version.h"

namespace btsim::replication {

// One cluster's replication state, as a snapshot of a persistent store
// keeps it (Replicas::State, Replicas::ReplayState). Its log's retained
// entries travel separately (Replicas::LogEntries, ReplayLogEntry).
struct ReplicaState {
  std::string id;
  uint32_t origin = 0;
  uint64_t truncated_through = 0;        // its log holds the entries after it
  uint64_t last_position = 0;            // through this one
  std::map<uint32_t, uint64_t> applied;  // of each other origin's log
  // For each removed cluster, the last of its positions applied here.
  std::map<uint32_t, uint64_t> retired;
  // Runs of entries relayed for removed clusters: (last position, oldest
  // version).
  std::vector<std::pair<uint64_t, cluster::Version>> relayed;
};

class ReplicationJournal {
 public:
  virtual ~ReplicationJournal() = default;
  // Cluster `origin` (its origin number, cluster::VersionOrigin) committed
  // `record` locally; it took `position` in its replication log. Server
  // timestamps are resolved: the record is what the commit resulted in
  // (ReadModifyWrite and CheckAndMutate as plain cell writes). Entries
  // relayed for a removed cluster are not reported (removing the cluster
  // again relays them again).
  virtual void OnCommit(uint32_t origin, uint64_t position,
                        const cluster::CommitRecord& record) = 0;
  // Cluster `peer` has applied `origin`'s log through `position`.
  virtual void OnApplied(uint32_t origin, uint32_t peer, uint64_t position) = 0;
};

}  // namespace btsim::replication

#endif  // BTSIM_REPLICATION_JOURNAL_H_
