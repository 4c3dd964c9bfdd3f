#include "replication/replicas.h"

#include <algorithm>
#include <deque>
#include <limits>
#include <utility>
#include <variant>

#include "base/bytes.h"
#include "base/check.h"

namespace btsim::replication {

using cluster::CommitRecord;
using cluster::Version;

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
  void OnCommit(const CommitRecord& record) override {
    CommitRecord copy = record;
    replicas_.OnLocalCommit(origin_, std::move(copy));
  }
  void OnCommit(CommitRecord&& record) override {
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
  ClusterSpec spec;
  uint32_t origin = 0;
  std::unique_ptr<cluster::Cluster> cluster;
  std::unique_ptr<Observer> observer;
  ReplicationLog log;
  bool down = false;
  std::map<uint32_t, Inbound> inbound;   // by origin
  std::map<uint32_t, Shipper> shippers;  // peer origin -> shipper
  // Runs of entries this member relayed for a removed cluster: they carry
  // older versions than the entries before them in its log. Each run's
  // last position and oldest version, until truncated.
  struct Relayed {
    uint64_t last_position;
    Version oldest;
  };
  std::vector<Relayed> relayed;
  // For each removed cluster: the last position of its log this member
  // has applied, directly or as relayed entries; relayed entries at or
  // before it are not applied again (a tombstone that covered them may
  // have been compacted away since).
  std::map<uint32_t, uint64_t> retired;
};

namespace {

// The size an acknowledgement is counted as on a link with a bandwidth.
constexpr int64_t kAckBytes = 64;
// The longest retransmit timeout a round-trip estimate can give.
constexpr sim::Duration kMaxMeasuredTimeout = std::chrono::seconds(60);

// The size of a log entry on the wire: its keys, names and values, plus a
// fixed overhead per entry and per mutation.
int64_t WireBytes(const CommitRecord& record) {
  int64_t bytes =
      32 + static_cast<int64_t>(record.table.size() + record.row_key.size() +
                                record.prefix.size());
  for (const cluster::Mutation& mutation : record.mutations) {
    bytes += 16;
    if (const auto* set = std::get_if<cluster::SetCell>(&mutation)) {
      bytes += static_cast<int64_t>(set->family.size() + set->qualifier.size() +
                                    set->value.size());
    }
  }
  for (const auto& family : record.families) {
    bytes += 32 + static_cast<int64_t>(family.name.size());
  }
  for (const std::string& split : record.splits) {
    bytes += static_cast<int64_t>(split.size());
  }
  return bytes;
}

bool ValidClusterId(std::string_view id) {
  if (id.empty() || id.size() > 30) return false;
  if (!(id[0] >= 'a' && id[0] <= 'z')) return false;
  for (char c : id) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
      return false;
    }
  }
  return true;
}

}  // namespace

Replicas::Replicas(sim::Scheduler& scheduler, sim::Transport& transport,
                   sim::Rng rng, ReplicationOptions options)
    : scheduler_(scheduler),
      transport_(transport),
      rng_(rng),
      options_(options),
      alive_(std::make_shared<bool>(true)) {}

Replicas::~Replicas() {
  *alive_ = false;
  for (auto& [origin, member] : members_) {
    member->cluster->set_commit_observer(nullptr);
    for (auto& [peer, shipper] : member->shippers) {
      if (shipper.retransmit != 0) scheduler_.Cancel(shipper.retransmit);
    }
  }
}

Status Replicas::AddCluster(const ClusterSpec& spec) {
  if (!ValidClusterId(spec.id)) {
    return InvalidArgument("cluster_id: '" + spec.id +
                           "' is not a valid cluster id; it must match "
                           "[a-z][-a-z0-9]* and be at most 30 characters");
  }
  if (spec.zone.empty()) {
    return InvalidArgument("location: cluster '" + spec.id + "' has no zone");
  }
  if (FindMember(spec.id) != nullptr) {
    return AlreadyExists("cluster '" + spec.id + "' already exists");
  }
  for (const auto& [origin, m] : members_) {
    if (m->spec.zone == spec.zone) {
      return InvalidArgument("location: zone " + spec.zone +
                             " already has cluster '" + m->spec.id +
                             "'; an instance has at most one cluster per "
                             "zone");
    }
  }
  if (members_.size() >= kMaxClusters) {
    return InvalidArgument("an instance has at most 4 clusters");
  }
  if (next_origin_ >= (1u << cluster::kOriginBits)) {
    return Status(StatusCode::kResourceExhausted,
                  "too many clusters were created in this instance");
  }
  auto member = std::make_unique<Member>();
  member->spec = spec;
  member->origin = next_origin_++;
  member->cluster = std::make_unique<cluster::Cluster>(
      scheduler_, rng_.Fork("cluster/" + spec.id),
      cluster::ClusterOptions{member->origin, options_.table});
  member->observer = std::make_unique<Observer>(*this, member->origin);

  // Seed from the first live cluster: its data and its watermarks.
  const Member* source = nullptr;
  for (const auto& [origin, m] : members_) {
    if (!m->down) {
      source = m.get();
      break;
    }
  }
  if (source == nullptr && !members_.empty()) {
    source = members_.begin()->second.get();
  }
  if (source != nullptr) {
    member->cluster->CopyDataFrom(*source->cluster);
    member->retired = source->retired;
    for (const auto& [origin, in] : source->inbound) {
      member->inbound[origin].applied = member->inbound[origin].queued =
          in.applied;
    }
    Inbound& from_source = member->inbound[source->origin];
    from_source.applied = from_source.queued = source->log.last_position();
  }
  member->cluster->set_commit_observer(member->observer.get());

  const uint32_t origin = member->origin;
  for (auto& [other_origin, other] : members_) {
    // other -> new: start after what the copy already holds.
    other->shippers[origin] = NewShipper(member->inbound[other_origin].applied);
    // new -> other: from the start of the new (empty) log.
    member->shippers[other_origin] = NewShipper(0);
    other->inbound[origin] = Inbound{};
  }
  members_[origin] = std::move(member);
  IndexIds();
  ++members_version_;
  for (auto& [other_origin, other] : members_) {
    if (other_origin != origin) Ship(other_origin, origin);
  }
  return OkStatus();
}

Status Replicas::RemoveCluster(std::string_view id) {
  Member* m = FindMember(id);
  if (m == nullptr)
    return NotFound("cluster '" + std::string(id) + "' not found");
  if (members_.size() == 1) {
    return FailedPrecondition("cannot remove the last cluster of an instance");
  }
  const uint32_t origin = m->origin;
  RelayRemovedEntries(*m);
  for (auto& [peer, shipper] : m->shippers) {
    if (shipper.retransmit != 0) scheduler_.Cancel(shipper.retransmit);
  }
  m->cluster->set_commit_observer(nullptr);
  members_.erase(origin);
  IndexIds();
  ++members_version_;
  for (auto& [other_origin, other] : members_) {
    auto it = other->shippers.find(origin);
    if (it != other->shippers.end()) {
      if (it->second.retransmit != 0) scheduler_.Cancel(it->second.retransmit);
      other->shippers.erase(it);
    }
    auto in = other->inbound.find(origin);
    if (in != other->inbound.end()) {
      uint64_t& retired = other->retired[origin];
      retired = std::max(retired, in->second.applied);
      other->inbound.erase(in);
    }
    Truncate(*other);
  }
  return OkStatus();
}

void Replicas::RelayRemovedEntries(const Member& removed) {
  // The least any survivor applied of the removed cluster's log.
  uint64_t lowest = removed.log.last_position();
  auto applied_by = [&](const Member& survivor) -> uint64_t {
    auto it = survivor.inbound.find(removed.origin);
    return it == survivor.inbound.end() ? 0 : it->second.applied;
  };
  for (auto& [origin, other] : members_) {
    if (origin != removed.origin) lowest = std::min(lowest, applied_by(*other));
  }
  // Entries nobody acknowledged are still in the log (truncation stops at
  // the lowest acknowledgement, which is at most what a peer applied).
  BTSIM_CHECK(lowest >= removed.log.truncated_through());
  // Every survivor that applied more relays it: whichever of them stays
  // up and reachable delivers it.
  for (auto& [origin, relay] : members_) {
    if (origin == removed.origin) continue;
    const uint64_t highest = applied_by(*relay);
    if (highest <= lowest) continue;
    Version oldest = std::numeric_limits<Version>::max();
    for (uint64_t position = lowest + 1; position <= highest; ++position) {
      const LogEntry& entry = removed.log.At(position);
      CommitRecord copy = entry.record;
      copy.share = cluster::RowShare{};  // the removed origin's row versions
      oldest = std::min(oldest, copy.version);
      const size_t before = relay->log.size();
      OnLocalCommit(relay->origin, std::move(copy));
      if (relay->log.size() == before) continue;  // only a position taken
      // Where the entry was first committed, even if it was relayed to the
      // removed cluster itself.
      if (entry.source_position != 0) {
        relay->log.SetSource(relay->log.last_position(), entry.source_origin,
                             entry.source_position);
      } else {
        relay->log.SetSource(relay->log.last_position(), removed.origin,
                             position);
      }
    }
    relay->relayed.push_back({relay->log.last_position(), oldest});
  }
}

std::vector<std::string> Replicas::ClusterIds() const {
  std::vector<std::string> ids;
  for (const auto& [origin, m] : members_) ids.push_back(m->spec.id);
  return ids;
}

void Replicas::IndexIds() {
  ids_.clear();
  for (const auto& [origin, m] : members_) {
    ids_.push_back({BigEndianWord(m->spec.id, 0), m->spec.id, m.get()});
  }
}

Replicas::Member* Replicas::FindMember(std::string_view id) {
  return const_cast<Member*>(std::as_const(*this).FindMember(id));
}

const Replicas::Member* Replicas::FindMember(std::string_view id) const {
  // Ids of up to 8 bytes are told apart by their heads and lengths alone.
  const uint64_t head = BigEndianWord(id, 0);
  for (const IdEntry& entry : ids_) {
    if (entry.head == head && entry.id.size() == id.size() &&
        (id.size() <= 8 || entry.id == id)) {
      return entry.member;
    }
  }
  return nullptr;
}

Replicas::Member* Replicas::ByOrigin(uint32_t origin) {
  return const_cast<Member*>(std::as_const(*this).ByOrigin(origin));
}

const Replicas::Member* Replicas::ByOrigin(uint32_t origin) const {
  auto it = members_.find(origin);
  return it == members_.end() ? nullptr : it->second.get();
}

cluster::Cluster* Replicas::Find(std::string_view id) {
  Member* m = FindMember(id);
  return m ? m->cluster.get() : nullptr;
}

cluster::Cluster* Replicas::Find(std::string_view id, bool* down) {
  Member* m = FindMember(id);
  if (m == nullptr) return nullptr;
  *down = m->down;
  return m->cluster.get();
}

const ClusterSpec* Replicas::Spec(std::string_view id) const {
  const Member* m = FindMember(id);
  return m ? &m->spec : nullptr;
}

Status Replicas::SetDown(std::string_view id, bool down) {
  Member* m = FindMember(id);
  if (m == nullptr)
    return NotFound("cluster '" + std::string(id) + "' not found");
  m->down = down;
  ++members_version_;
  if (!down) {
    // Resume at once instead of waiting for retransmit timers: forget
    // batches in flight to and from the cluster, and what the cluster had
    // queued but not applied when it went down, and ship again.
    for (auto& [origin, in] : m->inbound) {
      in.queued = in.applied;
      in.ready_at = sim::Time::min();
    }
    for (auto& [other_origin, other] : members_) {
      if (other_origin == m->origin) continue;
      ResetShipper(m->shippers[other_origin]);
      ResetShipper(other->shippers[m->origin]);
      Ship(m->origin, other_origin);
      Ship(other_origin, m->origin);
    }
  }
  return OkStatus();
}

void Replicas::ApplyNewestEverywhere(std::string_view origin) {
  Member* m = FindMember(origin);
  if (m == nullptr || m->log.last_position() <= m->log.truncated_through()) {
    return;  // nothing kept: no peer needs it
  }
  const std::vector<const LogEntry*> newest =
      m->log.Read(m->log.last_position() - 1, 1);
  for (auto& [other_origin, other] : members_) {
    if (other_origin != m->origin) {
      other->cluster->ApplyReplicated(newest.front()->record);
    }
  }
}

void Replicas::OrderAfterEverything(std::string_view id) {
  Member* m = FindMember(id);
  if (m == nullptr) return;
  for (const auto& [origin, other] : members_) {
    m->cluster->Observe(other->cluster->last_version());
  }
}

bool Replicas::IsDown(std::string_view id) const {
  const Member* m = FindMember(id);
  return m != nullptr && m->down;
}

bool Replicas::WantsRecords(uint32_t origin) const {
  const Member* m = ByOrigin(origin);
  return m != nullptr && (!m->shippers.empty() || m->log.size() != 0);
}

void Replicas::SkipLocalCommit(uint32_t origin) {
  Member* m = ByOrigin(origin);
  BTSIM_CHECK(m != nullptr && !WantsRecords(origin));
  m->log.Skip();
}

cluster::CommitRecord* Replicas::NewLogRecord(Member& m) {
  // With no peer, no ack would ever truncate the entry: keep only its
  // position, or a single-cluster instance keeps every record it ever
  // committed.
  if (!WantsRecords(m.origin)) {
    SkipLocalCommit(m.origin);
    return nullptr;
  }
  return &m.log.Emplace();
}

void Replicas::ShipNewRecord(Member& m) {
  if (m.shippers.empty()) Truncate(m);
  for (auto& [peer, shipper] : m.shippers) {
    // Ship would return at once: the window is full or a batch waits.
    if (shipper.batch_timer || shipper.in_flight.size() >= Window(shipper)) {
      continue;
    }
    Ship(m.origin, peer);
  }
}

void Replicas::OnLocalCommit(uint32_t origin, CommitRecord&& record) {
  Member* m = ByOrigin(origin);
  BTSIM_CHECK(m != nullptr);
  if (CommitRecord* slot = NewLogRecord(*m)) {
    *slot = std::move(record);
    ShipNewRecord(*m);
  }
}

void Replicas::OnLocalRowCommit(uint32_t origin, cluster::RowCommit&& commit) {
  Member* m = ByOrigin(origin);
  BTSIM_CHECK(m != nullptr);
  if (CommitRecord* slot = NewLogRecord(*m)) {
    cluster::FillRowRecord(commit, slot);
    ShipNewRecord(*m);
  }
}

Replicas::Shipper Replicas::NewShipper(uint64_t acked) const {
  Shipper shipper;
  shipper.acked = shipper.sent = acked;
  shipper.rto = shipper.timeout = options_.initial_retransmit;
  return shipper;
}

size_t Replicas::Window(const Shipper& shipper) const {
  return shipper.probing
             ? 1
             : static_cast<size_t>(std::max(options_.batches_in_flight, 1));
}

void Replicas::ResetShipper(Shipper& shipper) {
  if (shipper.retransmit != 0) scheduler_.Cancel(shipper.retransmit);
  shipper.retransmit = 0;
  ++shipper.generation;  // orphans any timer Cancel could not stop
  shipper.in_flight.clear();
  shipper.sent = shipper.acked;
  shipper.probing = false;
  shipper.timeout = shipper.rto;
}

void Replicas::Ship(uint32_t origin, uint32_t peer) {
  Member* from = ByOrigin(origin);
  Member* to = ByOrigin(peer);
  if (from == nullptr || to == nullptr || from->down) return;
  auto it = from->shippers.find(peer);
  if (it == from->shippers.end()) return;
  Shipper& shipper = it->second;
  const sim::Time now = scheduler_.Now();
  while (shipper.in_flight.size() < Window(shipper) &&
         shipper.sent < from->log.last_position()) {
    const uint64_t unsent = from->log.last_position() - shipper.sent;
    const sim::Time due = shipper.last_send + options_.batch_interval;
    if (unsent < options_.batch_entries && !shipper.in_flight.empty() &&
        now < due) {
      if (!shipper.batch_timer) {
        shipper.batch_timer = true;
        std::weak_ptr<bool> alive = alive_;
        scheduler_.RunAfter(due - now, [this, alive, origin, peer] {
          if (auto a = alive.lock(); !a || !*a) return;
          Member* m = ByOrigin(origin);
          if (m == nullptr) return;
          auto found = m->shippers.find(peer);
          if (found == m->shippers.end()) return;
          found->second.batch_timer = false;
          Ship(origin, peer);
        });
      }
      return;
    }
    SendBatch(*from, *to, shipper);
  }
}

void Replicas::SendBatch(Member& from, const Member& to, Shipper& shipper) {
  // The batch names positions only: no entry is touched or copied until the
  // peer reads it from the log (unless the link's bandwidth needs its size).
  const uint64_t after = shipper.sent;
  const uint64_t count = std::min<uint64_t>(from.log.last_position() - after,
                                            options_.batch_entries);
  const sim::Time now = scheduler_.Now();
  shipper.sent = after + count;
  shipper.last_send = now;
  shipper.in_flight.push_back({shipper.sent, now});
  int64_t bytes = 0;
  if (transport_.BandwidthOf(from.spec.zone, to.spec.zone) > 0) {
    for (const LogEntry* entry : from.log.Read(after, count)) {
      bytes += WireBytes(entry->record);
    }
  }
  std::weak_ptr<bool> alive = alive_;
  const uint32_t origin = from.origin;
  const uint32_t peer = to.origin;
  transport_.Send(
      from.spec.zone, to.spec.zone,
      [this, alive, peer, origin, after, count, now] {
        if (auto a = alive.lock(); !a || !*a) return;
        Receive(peer, origin, after, count, now);
      },
      bytes);
  if (shipper.in_flight.size() == 1) ArmRetransmit(origin, peer, shipper);
}

void Replicas::ArmRetransmit(uint32_t origin, uint32_t peer, Shipper& shipper) {
  if (shipper.in_flight.empty()) {
    if (shipper.retransmit != 0) scheduler_.Cancel(shipper.retransmit);
    shipper.retransmit = 0;
    return;
  }
  const sim::Time at = shipper.in_flight.front().sent_at + shipper.timeout;
  if (shipper.retransmit != 0 && shipper.retransmit_at == at) return;
  if (shipper.retransmit != 0) scheduler_.Cancel(shipper.retransmit);
  const uint64_t generation = ++shipper.generation;
  shipper.retransmit_at = at;
  std::weak_ptr<bool> alive = alive_;
  shipper.retransmit =
      scheduler_.RunAfter(std::max(at - scheduler_.Now(), sim::Duration(0)),
                          [this, alive, origin, peer, generation] {
                            if (auto a = alive.lock(); !a || !*a) return;
                            OnRetransmitTimer(origin, peer, generation);
                          });
}

void Replicas::OnRetransmitTimer(uint32_t origin, uint32_t peer,
                                 uint64_t generation) {
  Member* m = ByOrigin(origin);
  if (m == nullptr) return;
  auto it = m->shippers.find(peer);
  if (it == m->shippers.end()) return;
  Shipper& shipper = it->second;
  if (shipper.generation != generation) return;  // stale timer
  shipper.retransmit = 0;
  // Go back to the acknowledged position, one batch at a time, and wait
  // longer for it.
  const sim::Duration cap = std::max(options_.max_retransmit, 2 * shipper.rto);
  shipper.timeout = std::min(2 * shipper.timeout, cap);
  shipper.in_flight.clear();
  shipper.sent = shipper.acked;
  shipper.probing = true;
  Ship(origin, peer);
}

void Replicas::Receive(uint32_t peer, uint32_t origin, uint64_t after,
                       uint64_t count, sim::Time sent_at) {
  Member* m = ByOrigin(peer);
  Member* from = ByOrigin(origin);
  if (m == nullptr || from == nullptr || m->down) return;
  Inbound& in = m->inbound[origin];
  const uint64_t last = after + count;
  // A batch starting after what is queued is a gap (an earlier batch was
  // lost): nothing is queued until a resend. One ending within it holds
  // only duplicates. Either way the ack tells the origin where the peer is.
  if (after > in.queued || last <= in.queued) {
    SendAck(*m, *from, sent_at);
    return;
  }
  // Only positions up to `applied` can have left the log since the batch
  // was sent: an entry is truncated once every peer acknowledged it, and a
  // peer acknowledges only what it applied.
  BTSIM_CHECK(in.queued >= from->log.truncated_through() &&
              last <= from->log.last_position());
  const uint64_t first = in.queued + 1;
  in.queued = last;
  const sim::Time now = scheduler_.Now();
  sim::Time ready = now;
  if (apply_queue_) {
    prefetch_records_.clear();
    for (uint64_t position = first; position <= last; ++position) {
      prefetch_records_.push_back(&from->log.At(position).record);
    }
    const std::optional<sim::Time> done =
        apply_queue_(peer, m->spec.id, prefetch_records_);
    if (!done) {
      // Refused: as if it had not arrived (the ack says where the peer is).
      in.queued = first - 1;
      SendAck(*m, *from, sent_at);
      return;
    }
    ready = std::max(ready, *done);
  }
  ready = std::max(ready, in.ready_at);
  in.ready_at = ready;
  if (ready == now) {
    ApplyQueued(peer, origin, last, sent_at);
    return;
  }
  std::weak_ptr<bool> alive = alive_;
  scheduler_.RunAfter(ready - now, [this, alive, peer, origin, last, sent_at] {
    if (auto a = alive.lock(); !a || !*a) return;
    ApplyQueued(peer, origin, last, sent_at);
  });
}

void Replicas::ApplyQueued(uint32_t peer, uint32_t origin, uint64_t last,
                           sim::Time sent_at) {
  Member* m = ByOrigin(peer);
  Member* from = ByOrigin(origin);
  if (m == nullptr || from == nullptr || m->down) return;
  auto found = m->inbound.find(origin);
  if (found == m->inbound.end()) return;
  Inbound& in = found->second;
  if (in.applied < last) {
    BTSIM_CHECK(in.applied >= from->log.truncated_through() &&
                last <= from->log.last_position());
    prefetch_records_.clear();
    positions_.clear();
    for (uint64_t position = in.applied + 1; position <= last; ++position) {
      const LogEntry& entry = from->log.At(position);
      if (entry.source_position != 0) {
        // Relayed for a removed cluster: once only.
        uint64_t& retired = m->retired[entry.source_origin];
        if (entry.source_position <= retired) continue;
        retired = entry.source_position;
      }
      prefetch_records_.push_back(&entry.record);
      positions_.push_back(position);
    }
    uint64_t& applied = in.applied;
    m->cluster->ApplyReplicatedBatch(prefetch_records_, [&](size_t i) {
      applied = positions_[i];
      if (apply_hook_) {
        apply_hook_(AppliedInfo{from->spec.id, m->spec.id, origin, peer,
                                applied, *prefetch_records_[i],
                                scheduler_.Now(),
                                i + 1 == prefetch_records_.size()});
      }
    });
    applied = last;
    in.queued = std::max(in.queued, in.applied);
  }
  SendAck(*m, *from, sent_at);
}

void Replicas::SendAck(const Member& peer, const Member& origin,
                       sim::Time sent_at) {
  auto it = peer.inbound.find(origin.origin);
  const uint64_t ack = it == peer.inbound.end() ? 0 : it->second.applied;
  std::weak_ptr<bool> alive = alive_;
  const uint32_t origin_number = origin.origin;
  const uint32_t peer_number = peer.origin;
  transport_.Send(
      peer.spec.zone, origin.spec.zone,
      [this, alive, origin_number, peer_number, ack, sent_at] {
        if (auto a = alive.lock(); !a || !*a) return;
        OnAck(origin_number, peer_number, ack, sent_at);
      },
      kAckBytes);
}

void Replicas::OnAck(uint32_t origin, uint32_t peer, uint64_t applied,
                     sim::Time sent_at) {
  Member* m = ByOrigin(origin);
  if (m == nullptr || m->down) return;
  auto it = m->shippers.find(peer);
  if (it == m->shippers.end()) return;
  Shipper& shipper = it->second;
  // Every ack echoes the send time of the batch it answers: a round trip,
  // retransmitted or not.
  const sim::Duration rtt = scheduler_.Now() - sent_at;
  if (!shipper.measured) {
    shipper.measured = true;
    shipper.srtt = rtt;
    shipper.rttvar = rtt / 2;
  } else {
    const sim::Duration error =
        shipper.srtt > rtt ? shipper.srtt - rtt : rtt - shipper.srtt;
    shipper.rttvar = (3 * shipper.rttvar + error) / 4;
    shipper.srtt = (7 * shipper.srtt + rtt) / 8;
  }
  shipper.rto =
      std::clamp(shipper.srtt + 4 * shipper.rttvar,
                 std::min(options_.min_retransmit, kMaxMeasuredTimeout),
                 kMaxMeasuredTimeout);
  if (applied > shipper.acked) {
    shipper.acked = applied;
    shipper.sent = std::max(shipper.sent, applied);
    shipper.timeout = shipper.rto;
    shipper.probing = false;
    while (!shipper.in_flight.empty() &&
           shipper.in_flight.front().last <= applied) {
      shipper.in_flight.pop_front();
    }
    ArmRetransmit(origin, peer, shipper);
    Truncate(*m);
  }
  Ship(origin, peer);
}

void Replicas::Truncate(Member& origin) {
  uint64_t through = origin.log.last_position();
  for (const auto& [peer, shipper] : origin.shippers) {
    through = std::min(through, shipper.acked);
  }
  if (through > origin.log.truncated_through()) {
    origin.log.TruncateThrough(through);
    std::erase_if(origin.relayed, [&](const Member::Relayed& r) {
      return r.last_position <= through;
    });
  }
}

uint64_t Replicas::LogPosition(std::string_view id) const {
  const Member* m = FindMember(id);
  return m == nullptr ? 0 : m->log.last_position();
}

uint64_t Replicas::Applied(std::string_view origin,
                           std::string_view peer) const {
  const Member* from = FindMember(origin);
  const Member* to = FindMember(peer);
  if (from == nullptr || to == nullptr || from == to) return 0;
  auto it = to->inbound.find(from->origin);
  return it == to->inbound.end() ? 0 : it->second.applied;
}

std::map<std::string, uint64_t> Replicas::LogPositions() const {
  std::map<std::string, uint64_t> out;
  for (const auto& [origin, m] : members_) {
    out[m->spec.id] = m->log.last_position();
  }
  return out;
}

bool Replicas::HasApplied(
    const std::map<std::string, uint64_t>& positions) const {
  for (const auto& [id, position] : positions) {
    const Member* origin = FindMember(id);
    if (origin == nullptr) continue;
    for (const auto& [peer_origin, peer] : members_) {
      if (peer_origin == origin->origin) continue;
      auto it = peer->inbound.find(origin->origin);
      const uint64_t applied =
          it == peer->inbound.end() ? 0 : it->second.applied;
      if (applied < position) return false;
    }
  }
  return true;
}

uint64_t Replicas::Backlog(std::string_view origin,
                           std::string_view peer) const {
  const Member* from = FindMember(origin);
  const Member* to = FindMember(peer);
  if (from == nullptr || to == nullptr || from == to) return 0;
  auto it = from->shippers.find(to->origin);
  if (it == from->shippers.end()) return 0;
  return from->log.last_position() - it->second.acked;
}

std::map<std::string, sim::Time> Replicas::PendingSince(
    std::string_view origin, std::string_view peer) const {
  std::map<std::string, sim::Time> oldest;
  const Member* from = FindMember(origin);
  const Member* to = FindMember(peer);
  if (from == nullptr || to == nullptr || from == to) return oldest;
  auto it = from->shippers.find(to->origin);
  if (it == from->shippers.end()) return oldest;
  const uint64_t after =
      std::max(it->second.acked, from->log.truncated_through());
  for (const LogEntry* entry :
       from->log.Read(after, std::numeric_limits<size_t>::max())) {
    // The oldest of each table (entries relayed for a removed cluster can
    // be older than those before them).
    const sim::Time committed(
        cluster::VersionTime(entry->record.version).time_since_epoch());
    auto [found, inserted] = oldest.try_emplace(entry->record.table, committed);
    if (!inserted) found->second = std::min(found->second, committed);
  }
  return oldest;
}

Version Replicas::SafeHorizon(const Member& member) const {
  // Older entries may still arrive from each origin: the first one this
  // member has not applied bounds what its tombstones must keep covering.
  Version horizon =
      cluster::MakeVersion(cluster::TimestampOf(scheduler_.Now()), 0);
  for (const auto& [origin, other] : members_) {
    if (origin == member.origin) continue;
    auto it = member.inbound.find(origin);
    const uint64_t applied =
        it == member.inbound.end() ? 0 : it->second.applied;
    if (applied < other->log.truncated_through()) continue;  // cannot happen
    std::vector<const LogEntry*> next = other->log.Read(applied, 1);
    if (!next.empty()) {
      horizon = std::min(horizon, next.front()->record.version - 1);
    }
    // Versions grow along a log, except in runs relayed for a removed
    // cluster.
    for (const Member::Relayed& r : other->relayed) {
      if (r.last_position > applied) horizon = std::min(horizon, r.oldest - 1);
    }
  }
  return horizon;
}

void Replicas::CompactAll() {
  for (auto& [origin, m] : members_) {
    m->cluster->Compact(SafeHorizon(*m), &compaction_shares_);
  }
  compaction_shares_.Clear();
}

void Replicas::AddContents(sim::Fingerprint* out) const {
  for (const auto& [origin, m] : members_) {
    out->Add(m->spec.id);
    m->cluster->AddContents(out);
  }
}

}  // namespace btsim::replication
