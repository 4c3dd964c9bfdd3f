// The state behind Replicas (replication/replicas.h): each member's log,
// shippers and inbound positions. Internal to replication/: shared by
// replicas.cc (membership, positions, compaction) and replicas_shipping.cc
// (shipping, receiving and acknowledging batches).
#ifndef BTSIM_REPLICATION_INTERNAL_REPLICAS_STATE_H_
#define BTSIM_REPLICATION_INTERNAL_REPLICAS_STATE_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "cluster/cluster.h"
#include "cluster/commit_record.h"
#include "cluster/version.h"
#include "replication/log.h"
#include "replication/replicas.h"
#include "sim/scheduler.h"
#include "sim/time.h"

namespace btsim::replication {

struct Replicas::Shipper {
  uint64_t acked = 0;  // the peer's acknowledged watermark
  uint64_t sent = 0;   // the last position shipped (>= acked)
  // Batches awaiting their ack, oldest first.
  struct Batch {
    uint64_t last;  // its last position
    sim::Time sent_at;
  };
  std::deque<Batch> in_flight;
  sim::Time last_send = sim::Time::min();
  bool batch_timer = false;  // a Ship waits for the batching interval
  // After a timeout, one batch at a time until an ack advances.
  bool probing = false;
  sim::TaskId retransmit = 0;
  sim::Time retransmit_at;
  // Bumped whenever the retransmit timer moves or the shipper is reset: a
  // timer that could not be cancelled (already taken off the queue) sees
  // it is stale and does nothing.
  uint64_t generation = 0;
  // The round-trip estimate (RFC 6298), the timeout it gives, and the
  // timeout in force (doubled by each expiry, back to `rto` on progress).
  bool measured = false;
  sim::Duration srtt{0};
  sim::Duration rttvar{0};
  sim::Duration rto{0};
  sim::Duration timeout{0};
};

// What a member received from one origin: applied through `applied`,
// queued on its nodes through `queued` (>= applied), the last queued batch
// finishing at `ready_at`.
struct Replicas::Inbound {
  uint64_t applied = 0;
  uint64_t queued = 0;
  sim::Time ready_at = sim::Time::min();
};

// Forwards a cluster's local commits to the replicas.
class Replicas::Observer : public cluster::CommitObserver {
 public:
  Observer(Replicas& replicas, uint32_t origin)
      : replicas_(replicas), origin_(origin) {}
  void OnCommit(const cluster::CommitRecord& record) override {
    cluster::CommitRecord copy = record;
    replicas_.OnLocalCommit(origin_, std::move(copy));
  }
  void OnCommit(cluster::CommitRecord&& record) override {
    replicas_.OnLocalCommit(origin_, std::move(record));
  }
  void OnRowCommit(cluster::RowCommit&& commit) override {
    replicas_.OnLocalRowCommit(origin_, std::move(commit));
  }
  bool WantsRowRecords() const override {
    return replicas_.WantsRecords(origin_);
  }
  void OnRowCommitSkipped() override { replicas_.SkipLocalCommit(origin_); }

 private:
  Replicas& replicas_;
  uint32_t origin_;
};

struct Replicas::Member {
  explicit Member(const sim::Clock& base) : clock(base) {}
  ClusterSpec spec;
  uint32_t origin = 0;
  // The cluster's own clock: the scheduler's, skewed by SetClockOffset.
  sim::OffsetClock clock;
  std::unique_ptr<cluster::Cluster> cluster;
  std::unique_ptr<Observer> observer;
  ReplicationLog log;
  bool down = false;
  bool stalled = false;                  // ships nothing (SetStalled)
  std::map<uint32_t, Inbound> inbound;   // by origin
  std::map<uint32_t, Shipper> shippers;  // peer origin -> shipper
  // Runs of entries this member relayed for a removed cluster: they carry
  // older versions than the entries before them in its log. Each run's
  // last position and oldest version, until truncated.
  struct Relayed {
    uint64_t last_position;
    cluster::Version oldest;
  };
  std::vector<Relayed> relayed;
  // For each removed cluster: the last position of its log this member
  // has applied, directly or as relayed entries; relayed entries at or
  // before it are not applied again (a tombstone that covered them may
  // have been compacted away since).
  std::map<uint32_t, uint64_t> retired;

  // Whether this member is to apply `entry` of a peer's log: false for one
  // relayed for a removed cluster that it applied already (`retired`,
  // which this advances past it otherwise).
  bool Takes(const LogEntry& entry) {
    if (entry.source_position == 0) return true;
    uint64_t& done = retired[entry.source_origin];
    if (entry.source_position <= done) return false;
    done = entry.source_position;
    return true;
  }
};

}  // namespace btsim::replication

#endif  // BTSIM_REPLICATION_INTERNAL_REPLICAS_STATE_H_
