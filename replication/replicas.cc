#include "replication/replicas.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "base/bytes.h"
#include "base/check.h"

namespace btsim::replication {

using cluster::CommitRecord;
using cluster::Version;

struct Replicas::Shipper {
  uint64_t acked = 0;      // the peer's acknowledged watermark
  bool in_flight = false;  // a batch awaits its ack
  sim::TaskId retransmit = 0;
  // Bumped for every batch shipped: a retransmit timer that could not be
  // cancelled (already taken off the queue) sees it is stale and does
  // nothing.
  uint64_t generation = 0;
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
  std::map<uint32_t, uint64_t> applied;  // origin -> last applied position
  std::map<uint32_t, Shipper> shippers;  // peer origin -> shipper
};

namespace {

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
    member->applied = source->applied;
    member->applied[source->origin] = source->log.last_position();
  }
  member->cluster->set_commit_observer(member->observer.get());

  const uint32_t origin = member->origin;
  for (auto& [other_origin, other] : members_) {
    // other -> new: start after what the copy already holds.
    Shipper to_new;
    to_new.acked = member->applied[other_origin];
    other->shippers[origin] = to_new;
    // new -> other: from the start of the new (empty) log.
    member->shippers[other_origin] = Shipper{};
    other->applied[origin] = 0;
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
    other->applied.erase(origin);
    Truncate(*other);
  }
  return OkStatus();
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
    // batches in flight to and from the cluster and ship again.
    auto reset = [this](Member& from, uint32_t peer) {
      Shipper& shipper = from.shippers[peer];
      if (shipper.retransmit != 0) scheduler_.Cancel(shipper.retransmit);
      shipper.in_flight = false;
      shipper.retransmit = 0;
      ++shipper.generation;  // orphans any timer Cancel could not stop
      Ship(from.origin, peer);
    };
    for (auto& [other_origin, other] : members_) {
      if (other_origin == m->origin) continue;
      reset(*m, other_origin);
      reset(*other, m->origin);
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
    // Ship would return at once: a batch awaits its ack.
    if (shipper.in_flight) continue;
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

void Replicas::Ship(uint32_t origin, uint32_t peer) {
  Member* from = ByOrigin(origin);
  Member* to = ByOrigin(peer);
  if (from == nullptr || to == nullptr || from->down) return;
  Shipper& shipper = from->shippers[peer];
  if (shipper.in_flight) return;
  if (from->log.last_position() <= shipper.acked) return;
  // The batch names positions only: no entry is touched or copied until the
  // peer reads it from the log.
  const uint64_t after = shipper.acked;
  const uint64_t count = std::min<uint64_t>(from->log.last_position() - after,
                                            options_.batch_entries);
  shipper.in_flight = true;
  const uint64_t generation = ++shipper.generation;
  std::weak_ptr<bool> alive = alive_;
  transport_.Send(from->spec.zone, to->spec.zone,
                  [this, alive, peer, origin, after, count] {
                    if (auto a = alive.lock(); !a || !*a) return;
                    Receive(peer, origin, after, count);
                  });
  shipper.retransmit = scheduler_.RunAfter(
      options_.retransmit_after, [this, alive, origin, peer, generation] {
        if (auto a = alive.lock(); !a || !*a) return;
        Member* m = ByOrigin(origin);
        if (m == nullptr) return;
        auto it = m->shippers.find(peer);
        if (it == m->shippers.end()) return;
        if (it->second.generation != generation) return;  // stale timer
        it->second.in_flight = false;
        it->second.retransmit = 0;
        Ship(origin, peer);
      });
}

void Replicas::Receive(uint32_t peer, uint32_t origin, uint64_t after,
                       uint64_t count) {
  Member* m = ByOrigin(peer);
  Member* from = ByOrigin(origin);
  if (m == nullptr || from == nullptr || m->down) return;
  uint64_t& applied = m->applied[origin];
  // Positions up to `applied` are duplicates. Only those can have left the
  // log since the batch was sent: an entry is truncated once every peer
  // acknowledged it, and a peer acknowledges only what it applied (its
  // watermark never moves back), so a stale or retransmitted batch reads
  // nothing truncated. A batch starting after applied + 1 is a gap: nothing
  // is applied until a resend.
  if (after <= applied) {
    const uint64_t last = after + count;
    BTSIM_CHECK(applied >= from->log.truncated_through() &&
                last <= from->log.last_position());
    prefetch_records_.clear();
    for (uint64_t position = applied + 1; position <= last; ++position) {
      prefetch_records_.push_back(&from->log.At(position).record);
    }
    const uint64_t first = applied + 1;
    m->cluster->ApplyReplicatedBatch(prefetch_records_, [&](size_t i) {
      applied = first + i;
      if (apply_hook_) {
        apply_hook_(AppliedInfo{from->spec.id, m->spec.id, origin, peer,
                                applied, *prefetch_records_[i],
                                scheduler_.Now(),
                                i + 1 == prefetch_records_.size()});
      }
    });
  }
  const uint64_t ack = applied;
  std::weak_ptr<bool> alive = alive_;
  transport_.Send(m->spec.zone, from->spec.zone,
                  [this, alive, origin, peer, ack] {
                    if (auto a = alive.lock(); !a || !*a) return;
                    OnAck(origin, peer, ack);
                  });
}

void Replicas::OnAck(uint32_t origin, uint32_t peer, uint64_t applied) {
  Member* m = ByOrigin(origin);
  if (m == nullptr || m->down) return;
  auto it = m->shippers.find(peer);
  if (it == m->shippers.end()) return;
  Shipper& shipper = it->second;
  shipper.acked = std::max(shipper.acked, applied);
  shipper.in_flight = false;
  if (shipper.retransmit != 0) {
    scheduler_.Cancel(shipper.retransmit);
    shipper.retransmit = 0;
  }
  Truncate(*m);
  Ship(origin, peer);
}

void Replicas::Truncate(Member& origin) {
  uint64_t through = origin.log.last_position();
  for (const auto& [peer, shipper] : origin.shippers) {
    through = std::min(through, shipper.acked);
  }
  if (through > origin.log.truncated_through()) {
    origin.log.TruncateThrough(through);
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
  auto it = to->applied.find(from->origin);
  return it == to->applied.end() ? 0 : it->second;
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
      auto it = peer->applied.find(origin->origin);
      const uint64_t applied = it == peer->applied.end() ? 0 : it->second;
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
    // Entries are in commit order: the first of each table is its oldest.
    oldest.try_emplace(
        entry->record.table,
        sim::Time(
            cluster::VersionTime(entry->record.version).time_since_epoch()));
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
    auto it = member.applied.find(origin);
    const uint64_t applied = it == member.applied.end() ? 0 : it->second;
    if (applied < other->log.truncated_through()) continue;  // cannot happen
    std::vector<const LogEntry*> next = other->log.Read(applied, 1);
    if (!next.empty()) {
      horizon = std::min(horizon, next.front()->record.version - 1);
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
