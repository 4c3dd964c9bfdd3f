// ReplicationJournal: what a Replicas reports to a persistent store (the
// file-backed one of `btsim serve --data-dir` lives in durable/). The core
// does no I/O: it only says what changed, in the order it happened, on the
// replicas' thread. Replaying the same calls in the same order through
// Replicas::ReplayCommit and Replicas::ReplayApplied rebuilds the same
// clusters, logs and positions.
#ifndef BTSIM_REPLICATION_JOURNAL_H_
#define BTSIM_REPLICATION_JOURNAL_H_

#include <cstdint>

#include "cluster/commit_record.h"

namespace btsim::replication {

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
