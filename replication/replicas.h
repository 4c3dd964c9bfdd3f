// Replicas: the clusters of one instance, each a full replica of its
// data, and the replication between them. Every cluster is a primary. Each
// cluster's local commits go to its ReplicationLog; for every peer a shipper
// sends batches of entries over the Transport (cluster zone -> peer zone).
//
// Shipping, per link (origin -> peer):
// - Up to `batches_in_flight` batches await acknowledgement at once. A batch
//   holds at most `batch_entries` entries. An idle link ships a new entry at
//   once; while batches are in flight, a part-full batch waits until
//   `batch_interval` after the previous one (a full one goes at once).
// - The peer queues each batch on its nodes (the apply queue, see
//   set_apply_queue), applies its entries exactly once and in order per
//   origin (deduplicated by position), then acknowledges its watermark and
//   echoes the batch's send time. An overloaded peer therefore acknowledges
//   late, or refuses the batch (the origin sends it again after its
//   timeout), and the origin's backlog grows in its log, not in the
//   network.
// - Round trips are measured from the echoed send times (so retransmitted
//   batches measure too). The retransmit timeout is srtt + 4 rttvar (RFC
//   6298's estimator) within [min_retransmit, ...], `initial_retransmit`
//   before the first sample. When it expires for the oldest batch in
//   flight, the shipper goes back to the last acknowledged position and
//   sends again (go-back-N), doubling the timeout up to the larger of
//   `max_retransmit` and twice the measured one. Loss and partitions only
//   delay replication: the backlog drains after.
// - Entries every peer has acknowledged are truncated from the log.
//
// A new cluster is seeded with a copy of an existing cluster's data and
// watermarks, then catches up from the logs. Removing a cluster drops it
// and its shippers; each survivor that had applied more of its log than
// another relays, through its own log, the entries that survivor lacks.
// A relayed entry keeps where it was first committed (LogEntry), and each
// cluster applies it once: not again where it was applied already, since a
// tombstone that covered it may have been compacted away since. So a write
// of the removed cluster that reached any survivor reaches all that
// remain; writes only the removed cluster held are lost.
//
// Runs on the Scheduler's thread and is not thread-safe. The Scheduler and
// Transport must outlive the Replicas; tasks it leaves in the scheduler are
// harmless after it is destroyed.
#ifndef BTSIM_REPLICATION_REPLICAS_H_
#define BTSIM_REPLICATION_REPLICAS_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "cluster/cluster.h"
#include "cluster/commit_record.h"
#include "cluster/row_sharing.h"
#include "cluster/version.h"
#include "replication/journal.h"
#include "replication/log.h"
#include "sim/scheduler.h"
#include "sim/transport.h"

namespace btsim::replication {

inline constexpr int kMaxClusters = 4;
// A cluster id: [a-z][-a-z0-9]*, at most 30 characters (Bigtable's rule).
bool IsValidClusterId(std::string_view id);

struct ClusterSpec {
  std::string id;
  std::string zone;  // e.g. "us-east1-b"
};

// One log entry a peer applied, as reported to the apply hook. The views
// and the record are valid only during the call.
struct AppliedInfo {
  // The cluster whose log the entry came from: the one that committed it,
  // or a survivor relaying it for a removed cluster (see the header).
  std::string_view origin;
  std::string_view peer;  // the cluster that applied it
  // The same two clusters by number: their origins in commit versions
  // (cluster::VersionOrigin). An instance never reuses one, even for a
  // cluster re-added under an old id, so consumers may key state by them.
  uint32_t origin_number = 0;
  uint32_t peer_number = 0;
  uint64_t position = 0;  // its position in the origin's log
  const cluster::CommitRecord& record;
  // When the peer applied it (the scheduler's Now()).
  sim::Time applied_at;
  // True for the last entry of the batch being applied. The entries of a
  // batch are applied and reported one after another at one applied_at,
  // with nothing else running in between: a consumer may gather what it
  // does per entry and finish it here.
  bool last_of_batch = true;
  // When the origin committed it (cluster::VersionTime(record.version)) in
  // simulator time, so applied_at - committed_at is the replication delay.
  sim::Time committed_at() const {
    return sim::Time(cluster::VersionTime(record.version).time_since_epoch());
  }
};

// Shipping parameters (see the header comment). Bigtable publishes none of
// them; the defaults are btsim's assumptions (README, "Assumptions").
struct ReplicationOptions {
  size_t batch_entries = 500;
  int batches_in_flight = 64;
  sim::Duration batch_interval = std::chrono::milliseconds(10);
  sim::Duration initial_retransmit = std::chrono::seconds(1);
  sim::Duration min_retransmit = std::chrono::milliseconds(20);
  sim::Duration max_retransmit = std::chrono::seconds(1);
  cluster::TableOptions table;
};

// The largest clock skew, either way (SetClockOffset).
inline constexpr sim::Duration kMaxClockOffset = std::chrono::hours(1);

class Replicas {
 public:
  Replicas(sim::Scheduler& scheduler, sim::Transport& transport, sim::Rng rng,
           ReplicationOptions options = {});
  ~Replicas();
  Replicas(const Replicas&) = delete;
  Replicas& operator=(const Replicas&) = delete;

  // INVALID_ARGUMENT for a bad id, an empty zone, a zone already used by
  // another cluster, or a fifth cluster; ALREADY_EXISTS for a known id.
  // Every cluster after the first is seeded from the first live cluster.
  Status AddCluster(const ClusterSpec& spec);
  // NOT_FOUND for an unknown id; FAILED_PRECONDITION for the last cluster
  // (except during a replay, which adds the clusters it needs next). See
  // the header comment for what survivors relay.
  Status RemoveCluster(std::string_view id);

  std::vector<std::string> ClusterIds() const;  // in creation order
  // Null when unknown.
  cluster::Cluster* Find(std::string_view id);
  // The same, and (when found) whether it is down, in one lookup; *down is
  // left alone when the id is unknown.
  cluster::Cluster* Find(std::string_view id, bool* down);
  const ClusterSpec* Spec(std::string_view id) const;

  // Applies `origin`'s newest log entry to every other cluster now. Table
  // and column-family changes are instance-wide in Bigtable, so the admin
  // layer calls this right after committing one; the entry still ships as
  // usual, and applying it twice is harmless.
  void ApplyNewestEverywhere(std::string_view origin);
  // Moves cluster `id`'s commit clock past every cluster's newest commit,
  // so that an instance-wide change it commits next orders after
  // everything committed anywhere, as Bigtable's admin API orders schema
  // changes. The admin layer calls this before such a change.
  void OrderAfterEverything(std::string_view id);

  // A down cluster ships nothing and drops what it receives until it is up
  // again (callers stop routing to it); its data is kept.
  Status SetDown(std::string_view id, bool down);
  bool IsDown(std::string_view id) const;
  // A stalled cluster keeps serving and applying what its peers send, but
  // ships nothing of its own log until resumed (a replication stall).
  // NOT_FOUND for an unknown id.
  Status SetStalled(std::string_view id, bool stalled);
  bool IsStalled(std::string_view id) const;
  // Offsets cluster `id`'s clock from the scheduler's (clock skew): its
  // commit versions and the timestamps it assigns move with it. The clock
  // never goes back: after a smaller offset it stands still until it has
  // caught up. NOT_FOUND for an unknown id, INVALID_ARGUMENT ("offset: ...")
  // beyond kMaxClockOffset either way.
  Status SetClockOffset(std::string_view id, sim::Duration offset);
  sim::Duration ClockOffset(std::string_view id) const;
  // Changes whenever a cluster is added or removed or goes down or up: IsDown
  // answers cached along with it hold while it stays the same.
  uint64_t members_version() const { return members_version_; }

  // The newest log position of cluster `id` (0 for an unknown id).
  uint64_t LogPosition(std::string_view id) const;
  // The last position of `origin`'s log that `peer` has applied (0 when
  // either is unknown or they are the same cluster).
  uint64_t Applied(std::string_view origin, std::string_view peer) const;
  // The newest log position of every cluster, by id.
  std::map<std::string, uint64_t> LogPositions() const;
  // True when every cluster has applied every other cluster's entries up to
  // the given positions (ids no longer in the instance are ignored).
  bool HasApplied(const std::map<std::string, uint64_t>& positions) const;
  // Entries `origin` committed that `peer` has not acknowledged.
  uint64_t Backlog(std::string_view origin, std::string_view peer) const;
  // The commit time of the oldest entry of each table that `origin`
  // committed and `peer` has not acknowledged (tables with none are absent;
  // schema entries count for their table). Scans the unacknowledged entries.
  std::map<std::string, sim::Time> PendingSince(std::string_view origin,
                                                std::string_view peer) const;

  // Called once per log entry a peer applies from another cluster's log,
  // right after applying it: never for a duplicate (an entry the peer had
  // already applied, e.g. retransmitted after a lost acknowledgement), nor
  // for ApplyNewestEverywhere's eager applications (the entry is reported
  // when it arrives through the log) or the copy that seeds a new cluster.
  // Runs inside the replicas: it must not add, remove or take down clusters.
  // Empty (the default) reports nothing.
  using ApplyHook = std::function<void(const AppliedInfo&)>;
  void set_apply_hook(ApplyHook hook) { apply_hook_ = std::move(hook); }

  // Queues the application of `records` (the new entries of one batch, in
  // log order, arriving now) on the nodes of cluster `peer` (number
  // `peer_number`, see AppliedInfo) and returns when they finish, >= now.
  // The entries are applied then, and never before the previous batch from
  // the same origin. nullopt: the nodes refuse the batch now (overloaded);
  // it is neither applied nor acknowledged, and the origin sends it again
  // after its retransmit timeout. Unset (the default): at once. Must not
  // call back into the replicas.
  using ApplyQueue = std::function<std::optional<sim::Time>(
      uint32_t peer_number, std::string_view peer,
      std::span<const cluster::CommitRecord* const> records)>;
  void set_apply_queue(ApplyQueue queue) { apply_queue_ = std::move(queue); }

  // Reports every local commit and every apply to `journal` (null: none;
  // the default). While one is set, every commit keeps its record, even in
  // a cluster with no peer. Must outlive its use.
  void set_journal(ReplicationJournal* journal) { journal_ = journal; }

  // ---- Recovery (replication/replicas_replay.cc) ----
  // Between BeginReplay and EndReplay nothing ships; ReplayCommit and
  // ReplayApplied repeat, in their order, the calls a journal received.
  // EndReplay then ships every backlog from the replayed positions.
  void BeginReplay();
  void EndReplay();
  bool replaying() const { return replaying_; }
  // Commits `record` at cluster `origin` again: applies it there (and, for
  // a table or column-family change, everywhere at once, as the admin API
  // does) and appends it to its log. FAILED_PRECONDITION when `origin` is
  // unknown or `position` is not the next position of its log.
  Status ReplayCommit(uint32_t origin, uint64_t position,
                      const cluster::CommitRecord& record);
  // `peer` applies `origin`'s entries through `position` again.
  // FAILED_PRECONDITION when either is unknown or the entries are gone.
  Status ReplayApplied(uint32_t origin, uint32_t peer, uint64_t position);
  // The origin number of cluster `id` (nullopt when unknown).
  std::optional<uint32_t> OriginOf(std::string_view id) const;

  // ---- Snapshots (replication/replicas_replay.cc) ----
  // Every cluster's replication state, in creation order.
  std::vector<ReplicaState> States() const;
  // The entries `origin`'s log holds, oldest first (none for an unknown
  // origin). Valid until the replicas next change.
  std::vector<const LogEntry*> LogEntries(uint32_t origin) const;
  // The origin number the next cluster added gets.
  uint32_t next_origin() const { return next_origin_; }
  // During a replay: the next cluster added gets origin `next`.
  // FAILED_PRECONDITION when a cluster already had it or a later one.
  Status ReplayNextOrigin(uint32_t next);
  // During a replay: makes cluster `state.id` (which must have origin
  // `state.origin`) hold an empty log positioned after
  // `state.truncated_through`, and the positions, retired and relayed
  // runs `state` gives; ReplayLogEntry then appends its entries, in order,
  // through `state.last_position`. FAILED_PRECONDITION when it does not
  // fit (an unknown cluster, an origin or position out of order).
  Status ReplayState(const ReplicaState& state);
  Status ReplayLogEntry(uint32_t origin, LogEntry entry);

  // Compacts every cluster, dropping only tombstones no pending entry can
  // still need. Replicas holding one shared row version share its
  // compacted form too (cluster/row_sharing.h).
  void CompactAll();
  // Adds every cluster's id and contents, in creation order.
  void AddContents(sim::Fingerprint* out) const;

 private:
  struct Member;
  struct Shipper;
  struct Inbound;
  class Observer;

  void IndexIds();  // after every change to members_
  // Appends to survivors' logs the entries of `removed` that some
  // survivors lack (see the header comment).
  void RelayRemovedEntries(const Member& removed);
  Member* FindMember(std::string_view id);
  const Member* FindMember(std::string_view id) const;
  Member* ByOrigin(uint32_t origin);
  const Member* ByOrigin(uint32_t origin) const;
  // A cluster needs its row records only while it has a peer or an entry
  // still in its log; otherwise its commits only take a log position.
  bool WantsRecords(uint32_t origin) const;
  void SkipLocalCommit(uint32_t origin);
  // A local commit of `origin`: a new record at the end of its log, shipped
  // to its peers, or only a log position (see WantsRecords).
  void OnLocalCommit(uint32_t origin, cluster::CommitRecord&& record);
  void OnLocalRowCommit(uint32_t origin, cluster::RowCommit&& commit);
  // The empty record to fill at the end of m's log; null when the commit
  // only takes a position (done). Ship the record once filled.
  cluster::CommitRecord* NewLogRecord(Member& m);
  void ShipNewRecord(Member& m);
  Shipper NewShipper(uint64_t acked) const;
  // The batches that may be in flight on a shipper's link now.
  size_t Window(const Shipper& shipper) const;
  // Sends what the window and batching rules allow on origin -> peer.
  void Ship(uint32_t origin, uint32_t peer);
  void SendBatch(Member& from, const Member& to, Shipper& shipper);
  // Starts or moves the retransmit timer to the oldest batch in flight.
  void ArmRetransmit(uint32_t origin, uint32_t peer, Shipper& shipper);
  void OnRetransmitTimer(uint32_t origin, uint32_t peer, uint64_t generation);
  // Forgets what is in flight on origin -> peer (nothing of it will count).
  void ResetShipper(Shipper& shipper);
  // A batch is the positions (after, after + count] of `origin`'s log,
  // read from the log when it arrives (see Receive).
  void Receive(uint32_t peer, uint32_t origin, uint64_t after, uint64_t count,
               sim::Time sent_at);
  // Applies what `peer` queued from `origin` through `last`, then acks.
  void ApplyQueued(uint32_t peer, uint32_t origin, uint64_t last,
                   sim::Time sent_at);
  void SendAck(const Member& peer, const Member& origin, sim::Time sent_at);
  void OnAck(uint32_t origin, uint32_t peer, uint64_t applied,
             sim::Time sent_at);
  void Truncate(Member& origin);
  cluster::Version SafeHorizon(const Member& member) const;

  sim::Scheduler& scheduler_;
  sim::Transport& transport_;
  sim::Rng rng_;
  ReplicationOptions options_;
  uint32_t next_origin_ = 0;
  std::map<uint32_t, std::unique_ptr<Member>> members_;  // by origin
  // members_ for FindMember, in origin order: each id's first 8 bytes
  // (cluster::KeyHead) and the id (a view of the member's spec.id).
  struct IdEntry {
    uint64_t head;
    std::string_view id;
    Member* member;
  };
  std::vector<IdEntry> ids_;  // rebuilt by IndexIds
  uint64_t members_version_ = 0;
  std::shared_ptr<bool> alive_;  // tasks check it before touching `this`
  std::vector<const cluster::CommitRecord*> prefetch_records_;  // scratch
  std::vector<uint64_t> positions_;  // ApplyQueued's, of prefetch_records_
  // CompactAll's, empty between rounds (kept for its memory).
  cluster::CompactionShares compaction_shares_;
  ApplyHook apply_hook_;
  ApplyQueue apply_queue_;
  ReplicationJournal* journal_ = nullptr;
  bool replaying_ = false;  // between BeginReplay and EndReplay
};

}  // namespace btsim::replication

#endif  // BTSIM_REPLICATION_REPLICAS_H_
