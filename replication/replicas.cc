#include "replication/replicas.h"

#include <algorithm>
#include <limits>
#include <utility>

#include "base/bytes.h"
#include "base/check.h"
#include "replication/internal/replicas_state.h"

namespace btsim::replication {

using cluster::CommitRecord;
using cluster::Version;

bool IsValidClusterId(std::string_view id) {
  if (id.empty() || id.size() > 30) return false;
  if (!(id[0] >= 'a' && id[0] <= 'z')) return false;
  for (char c : id) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-')) {
      return false;
    }
  }
  return true;
}

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
  if (!IsValidClusterId(spec.id)) {
    return InvalidArgument("cluster_id: " + QuoteForError(spec.id) +
                           " is not a valid cluster id; it must match "
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
  auto member = std::make_unique<Member>(scheduler_);
  member->spec = spec;
  member->origin = next_origin_++;
  member->cluster = std::make_unique<cluster::Cluster>(
      member->clock, rng_.Fork("cluster/" + spec.id),
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
  if (members_.size() == 1 && !replaying_) {
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
  // up and reachable delivers it. The journal hears nothing of it:
  // replaying the removal relays the same entries again.
  ReplicationJournal* const journal = journal_;
  journal_ = nullptr;
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
  journal_ = journal;
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

Status Replicas::SetStalled(std::string_view id, bool stalled) {
  Member* m = FindMember(id);
  if (m == nullptr) {
    return NotFound("cluster '" + std::string(id) + "' not found");
  }
  if (m->stalled == stalled) return OkStatus();
  m->stalled = stalled;
  if (!stalled) {
    // Ship again at once rather than at the next retransmit.
    for (auto& [peer, shipper] : m->shippers) {
      ResetShipper(shipper);
      Ship(m->origin, peer);
    }
  }
  return OkStatus();
}

bool Replicas::IsStalled(std::string_view id) const {
  const Member* m = FindMember(id);
  return m != nullptr && m->stalled;
}

Status Replicas::SetClockOffset(std::string_view id, sim::Duration offset) {
  if (offset > kMaxClockOffset || offset < -kMaxClockOffset) {
    return InvalidArgument("offset: at most 1 hour either way");
  }
  Member* m = FindMember(id);
  if (m == nullptr) {
    return NotFound("cluster '" + std::string(id) + "' not found");
  }
  m->clock.set_offset(offset);
  return OkStatus();
}

sim::Duration Replicas::ClockOffset(std::string_view id) const {
  const Member* m = FindMember(id);
  return m == nullptr ? sim::Duration(0) : m->clock.offset();
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
  return m != nullptr &&
         (journal_ != nullptr || !m->shippers.empty() || m->log.size() != 0);
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
    if (journal_) journal_->OnCommit(origin, m->log.last_position(), *slot);
    ShipNewRecord(*m);
  }
}

void Replicas::OnLocalRowCommit(uint32_t origin, cluster::RowCommit&& commit) {
  Member* m = ByOrigin(origin);
  BTSIM_CHECK(m != nullptr);
  if (CommitRecord* slot = NewLogRecord(*m)) {
    cluster::FillRowRecord(commit, slot);
    if (journal_) journal_->OnCommit(origin, m->log.last_position(), *slot);
    ShipNewRecord(*m);
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
  // Its own next commits come after its newest and no earlier than its
  // clock, which may run behind the scheduler's (clock skew): GC judged up
  // to a later version would not be final, since a change it commits next
  // (a tombstone, or a GC rule change, even one the admin layer orders
  // after everything) may still fall before it.
  horizon = std::min(
      horizon, std::max(member.cluster->last_version(),
                        cluster::MakeVersion(
                            cluster::TimestampOf(member.clock.Now()), 0)));
  for (const auto& [origin, other] : members_) {
    if (origin == member.origin) continue;
    // Its next commits are no older than its clock, which never goes back
    // but may run behind the scheduler's (clock skew): a tombstone newer
    // than that may yet have to cover one of them.
    horizon = std::min(
        horizon,
        cluster::MakeVersion(cluster::TimestampOf(other->clock.Now()), 0) - 1);
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
