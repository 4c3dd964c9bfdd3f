// NodeModel: a deterministic capacity model of one cluster's nodes.
//
// A Bigtable cluster serves each tablet (a contiguous key range) from exactly
// one node; a node has a fixed throughput taken from the published per-node
// figures for 1 KB rows (reference/bigtable.md, "Instances, clusters, nodes"):
//
//              reads/s   writes/s   scan bytes/s
//     SSD       17,000     14,000    220,000,000
//     HDD          500     10,000    180,000,000
//
// Each figure is the whole node's capacity for that kind alone, so one
// operation costs 1 s / rate of the node's time and mixes add up linearly
// (half the read rate plus half the write rate fills a node). Capacity is
// linear in nodes.
//
// OpKind::kReplicationApply (applying a write that another cluster committed)
// costs exactly like a write. Assumption, as documented by Bigtable:
// replication costs CPU on every cluster because each cluster pulls and
// applies every other cluster's writes, so replication does not raise write
// throughput (it raises read throughput only).
//
// Queueing. Each node is a single FIFO server with a busy-until time. Submit()
// places a request on the node that owns its tablet; it starts at
// max(now, busy-until) and completes after its service time. Requests beyond
// capacity therefore queue: a node offered more work than it can do sees
// latency grow without bound (linearly in time for a constant overload), and
// one offered little sees latency ≈ service time. Service times are exact
// rationals of a nanosecond (each node keeps the fractional remainder), so
// 17,000 SSD reads fill exactly one second of one node; the completion time
// returned is rounded up to the next whole nanosecond.
//
// Admission (Admit, for requests; Submit charges unconditionally). A request
// carries its deadline, as a gRPC request does. It is refused (kQueueFull,
// nothing charged) when its node already holds more than the queue limit of
// work; it is dropped without executing (kExpired, nothing charged) when it
// would start at or after its deadline. Otherwise it is served FIFO as
// above, and the caller executes it at `start`. Bigtable publishes no queue
// limit; the caller chooses it.
//
// Load. The load of a tablet is the service time of the work *offered* to it
// (charged at arrival) over a sliding window of the last ~1 s of virtual time,
// kept in 100 ms buckets (the 10 complete buckets before the current one, plus
// the current partial bucket; the divisor is the window's exact length). A
// load is a fraction of one node: 1.0 means a node's full capacity; above 1.0
// means the node is over capacity and its queue is growing (a metrics layer
// that wants a CPU percentage should clamp at 1). A node's load is the sum of
// the loads of the tablets it serves *now*, so moving a tablet moves its load
// at once. Loads decay to 0 once a window passes with no requests.
//
// Placement. A tablet is assigned the first time it is seen (Submit or
// AddTablet) to the least-loaded node; ties go to the node serving fewer
// tablets, then to the lowest node index. Rebalance() moves the hottest
// tablets off the hottest node to the least-loaded node when the hottest
// node's load exceeds the average by more than 20 %; a move is a pointer move
// (storage is shared), so it costs nothing and loses nothing, and work already
// queued on the old node stays there. A tablet is moved only when that lowers
// the hotter of the two nodes, so a single hot tablet is never moved back and
// forth: this model cannot split a hot tablet (Bigtable splits busy tablets by
// key range; that belongs to the table, not to this model), so one hot key
// range saturates one node (HottestNodeLoad ≈ 1) while the others idle
// (CpuLoad ≈ 1 / nodes). Several hot tablets on one node are spread.
//
// SetNodes(n) grows or shrinks the cluster. Growing adds idle nodes that new
// tablets and Rebalance() then use (nothing moves by itself). Shrinking drops
// the highest-indexed nodes and reassigns their tablets, in tablet-id order,
// each to the then least-loaded remaining node (loads as of the latest `now`
// passed to Submit, AddTablet or Rebalance); their queued work is dropped.
//
// Determinism: time is integer nanoseconds, tablet state is in std::map, all
// decisions compare integers (work in fractions of a nanosecond) with ties
// broken by index or id. Same calls in the same order ⇒ same results. Calls
// should come with non-decreasing `now`. Not thread-safe.
#ifndef BTSIM_CLUSTER_NODE_MODEL_H_
#define BTSIM_CLUSTER_NODE_MODEL_H_

#include <array>
#include <cstdint>
#include <limits>
#include <map>
#include <utility>
#include <vector>

#include "sim/clock.h"

namespace btsim::cluster {

enum class StorageType { kSsd, kHdd };

enum class OpKind {
  kRead,              // one row read (units = rows)
  kWrite,             // one row write (units = rows)
  kScanBytes,         // scanned bytes (units = bytes)
  kReplicationApply,  // one replicated write applied (units = rows)
};

class NodeModel {
 public:
  // Width of one load bucket and the number of complete buckets in a window.
  static constexpr sim::Duration kBucket = std::chrono::milliseconds(100);
  static constexpr int kWindowBuckets = 10;
  // Rebalance acts when the hottest node exceeds the average by this factor.
  static constexpr double kRebalanceThreshold = 1.2;
  // At most this many tablet moves per Rebalance() call.
  static constexpr int kMaxMovesPerRebalance = 4;

  // Requires nodes >= 1.
  NodeModel(StorageType storage, int nodes);

  StorageType storage() const { return storage_; }
  int nodes() const { return static_cast<int>(nodes_.size()); }
  // Requires n >= 1. See the header comment.
  void SetNodes(int n);

  // Service time of `units` operations of `kind` on one idle node, rounded up
  // to a whole nanosecond. Requires units >= 0.
  static sim::Duration ServiceTime(StorageType storage, OpKind kind,
                                   int64_t units = 1);

  // Routes `units` operations of `kind` on tablet `tablet_id` (an opaque id
  // the caller derives, e.g. a hash of the tablet's start key) arriving at
  // `now` to the node that owns the tablet (assigning it first if new) and
  // returns the completion time: it queues FIFO behind that node's earlier
  // work. Requires units >= 0.
  sim::Time Submit(sim::Time now, uint64_t tablet_id, OpKind kind,
                   int64_t units = 1);

  struct Admission {
    enum class Outcome { kServed, kQueueFull, kExpired };
    Outcome outcome = Outcome::kServed;
    sim::Time start;  // kServed: when the node begins serving it
    sim::Time done;   // kServed: when it finishes
  };
  // Submit for a request that must start before `deadline` and finds at
  // most `queue_limit` of work queued on its node (see the header comment).
  Admission Admit(sim::Time now, uint64_t tablet_id, OpKind kind, int64_t units,
                  sim::Time deadline, sim::Duration queue_limit);

  // Assigns a tablet without charging work (no-op if already known). Returns
  // its node.
  int AddTablet(sim::Time now, uint64_t tablet_id);
  // Forgets a tablet (e.g. after a merge); its load goes with it.
  void RemoveTablet(uint64_t tablet_id);
  // The node serving `tablet_id`, or -1 if unknown. Found at once for a
  // tablet charged lately.
  int NodeOf(uint64_t tablet_id) const;
  // When node `node` finishes its queued work (<= now means idle).
  sim::Time BusyUntil(int node) const;

  // Moves up to kMaxMovesPerRebalance tablets; returns the number moved.
  int Rebalance(sim::Time now);

  // Average node load, in [0, 1+].
  double CpuLoad(sim::Time now) const;
  // The hottest node's load, in [0, 1+].
  double HottestNodeLoad(sim::Time now) const;
  // Every node's load, by node index.
  std::vector<double> NodeLoads(sim::Time now) const;
  // Every known tablet's load (fraction of one node), sorted by tablet id.
  std::vector<std::pair<uint64_t, double>> TabletLoads(sim::Time now) const;

 private:
  // Offered work per 100 ms bucket: a ring holding the current bucket and the
  // kWindowBuckets before it. Work is in units of 1/denominator ns.
  struct Window {
    std::array<int64_t, kWindowBuckets + 1> index{};
    std::array<int64_t, kWindowBuckets + 1> work{};
    bool used = false;
    void Add(int64_t bucket, int64_t w);
    int64_t Sum(int64_t current_bucket) const;
  };
  struct TabletState {
    int node = 0;
    Window window;
  };
  struct NodeState {
    // Free at busy_ns + busy_frac / denominator ns.
    int64_t busy_ns = 0;
    int64_t busy_frac = 0;
    bool ever_busy = false;
  };

  int LeastLoadedNode(const std::vector<int64_t>& work,
                      const std::vector<int64_t>& tablets) const;
  std::vector<int64_t> NodeWork(int64_t bucket) const;
  std::vector<int64_t> NodeTabletCounts() const;
  // Window length at `now`, in units of 1/denominator ns.
  double WindowLength(sim::Time now) const;
  TabletState& Assign(sim::Time now, uint64_t tablet_id);

  StorageType storage_;
  int64_t denominator_;  // sub-nanosecond units per nanosecond
  std::vector<NodeState> nodes_;
  std::map<uint64_t, TabletState> tablets_;
  // A direct-mapped cache of tablets_ for Assign (map nodes never move);
  // RemoveTablet clears an entry it removes, and a copied or moved model
  // starts with it empty (its pointers are the source's).
  struct Recent {
    static constexpr size_t kSize = 256;
    std::array<std::pair<uint64_t, TabletState*>, kSize> entries{};
    Recent() = default;
    Recent(const Recent&) {}
    Recent& operator=(const Recent&) {
      entries = {};
      return *this;
    }
    std::pair<uint64_t, TabletState*>& For(uint64_t id) {
      return entries[id % kSize];
    }
  };
  Recent recent_;
  // The latest bucket seen by Submit, AddTablet or Rebalance (SetNodes has no
  // `now` of its own).
  int64_t last_bucket_ = std::numeric_limits<int64_t>::min() / 2;
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_NODE_MODEL_H_
