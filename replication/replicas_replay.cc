// Recovery of a Replicas from its journal (replication/journal.h): the
// journaled commits and applies, repeated in their order.
#include <algorithm>
#include <string>
#include <utility>

#include "replication/internal/replicas_state.h"
#include "replication/replicas.h"

namespace btsim::replication {

using cluster::CommitRecord;

void Replicas::BeginReplay() { replaying_ = true; }

void Replicas::EndReplay() {
  replaying_ = false;
  // Nothing is in flight: every link starts again from what its peer has
  // applied, so a backlog left at the end of the journal ships now.
  for (auto& [origin, m] : members_) {
    for (auto& [peer, shipper] : m->shippers) {
      if (const Member* to = ByOrigin(peer)) {
        auto in = to->inbound.find(origin);
        if (in != to->inbound.end()) shipper.acked = in->second.applied;
      }
      ResetShipper(shipper);
    }
    Truncate(*m);
  }
  for (auto& [origin, m] : members_) {
    for (auto& [peer, shipper] : m->shippers) Ship(origin, peer);
  }
}

std::optional<uint32_t> Replicas::OriginOf(std::string_view id) const {
  const Member* m = FindMember(id);
  if (m == nullptr) return std::nullopt;
  return m->origin;
}

Status Replicas::ReplayCommit(uint32_t origin, uint64_t position,
                              const CommitRecord& record) {
  Member* m = ByOrigin(origin);
  if (m == nullptr) {
    return FailedPrecondition("commit of unknown cluster number " +
                              std::to_string(origin));
  }
  if (position != m->log.last_position() + 1) {
    return FailedPrecondition("commit at position " + std::to_string(position) +
                              " of cluster '" + m->spec.id +
                              "', whose log ends at " +
                              std::to_string(m->log.last_position()));
  }
  m->cluster->ApplyReplicated(record);
  m->cluster->Observe(record.version);
  const bool schema = record.kind == CommitRecord::Kind::kCreateTable ||
                      record.kind == CommitRecord::Kind::kDeleteTable ||
                      record.kind == CommitRecord::Kind::kModifyFamilies;
  if (schema) {
    for (auto& [other_origin, other] : members_) {
      if (other_origin != origin) other->cluster->ApplyReplicated(record);
    }
  }
  CommitRecord copy = record;
  m->log.Append(std::move(copy));
  if (m->shippers.empty()) Truncate(*m);
  return OkStatus();
}

Status Replicas::ReplayApplied(uint32_t origin, uint32_t peer,
                               uint64_t position) {
  Member* m = ByOrigin(peer);
  Member* from = ByOrigin(origin);
  if (m == nullptr || from == nullptr || origin == peer) {
    return FailedPrecondition("apply between unknown cluster numbers " +
                              std::to_string(origin) + " -> " +
                              std::to_string(peer));
  }
  Inbound& in = m->inbound[origin];
  if (position <= in.applied) return OkStatus();
  if (in.applied < from->log.truncated_through() ||
      position > from->log.last_position()) {
    return FailedPrecondition("cluster '" + m->spec.id + "' applied position " +
                              std::to_string(position) + " of cluster '" +
                              from->spec.id + "', which the log does not hold");
  }
  for (uint64_t p = in.applied + 1; p <= position; ++p) {
    const LogEntry& entry = from->log.At(p);
    if (m->Takes(entry)) m->cluster->ApplyReplicated(entry.record);
  }
  in.applied = in.queued = position;
  if (auto it = from->shippers.find(peer); it != from->shippers.end()) {
    it->second.acked = std::max(it->second.acked, position);
    it->second.sent = std::max(it->second.sent, it->second.acked);
  }
  Truncate(*from);
  return OkStatus();
}

std::vector<ReplicaState> Replicas::States() const {
  std::vector<ReplicaState> out;
  for (const auto& [origin, m] : members_) {
    ReplicaState state;
    state.id = m->spec.id;
    state.origin = origin;
    state.truncated_through = m->log.truncated_through();
    state.last_position = m->log.last_position();
    for (const auto& [from, in] : m->inbound) state.applied[from] = in.applied;
    state.retired = m->retired;
    for (const Member::Relayed& r : m->relayed) {
      state.relayed.emplace_back(r.last_position, r.oldest);
    }
    out.push_back(std::move(state));
  }
  return out;
}

std::vector<const LogEntry*> Replicas::LogEntries(uint32_t origin) const {
  const Member* m = ByOrigin(origin);
  if (m == nullptr) return {};
  return m->log.Read(m->log.truncated_through(), m->log.size());
}

Status Replicas::ReplayNextOrigin(uint32_t next) {
  if (next < next_origin_ || next >= (1u << cluster::kOriginBits)) {
    return FailedPrecondition("cluster number " + std::to_string(next) +
                              " is out of order (next is " +
                              std::to_string(next_origin_) + ")");
  }
  next_origin_ = next;
  return OkStatus();
}

Status Replicas::ReplayState(const ReplicaState& state) {
  Member* m = FindMember(state.id);
  if (m == nullptr || m->origin != state.origin) {
    return FailedPrecondition("no cluster '" + state.id + "' numbered " +
                              std::to_string(state.origin));
  }
  if (state.last_position < state.truncated_through) {
    return FailedPrecondition("cluster '" + state.id + "': log ends at " +
                              std::to_string(state.last_position) +
                              ", before it starts");
  }
  m->log = ReplicationLog();
  m->log.StartAfter(state.truncated_through);
  for (auto& [origin, in] : m->inbound) in = Inbound{};
  for (const auto& [origin, position] : state.applied) {
    if (origin == m->origin || ByOrigin(origin) == nullptr) {
      return FailedPrecondition("cluster '" + state.id +
                                "' applied the log of unknown cluster number " +
                                std::to_string(origin));
    }
    Inbound& in = m->inbound[origin];
    in.applied = in.queued = position;
  }
  m->retired = state.retired;
  m->relayed.clear();
  for (const auto& [last, oldest] : state.relayed) {
    m->relayed.push_back({last, oldest});
  }
  return OkStatus();
}

Status Replicas::ReplayLogEntry(uint32_t origin, LogEntry entry) {
  Member* m = ByOrigin(origin);
  if (m == nullptr) {
    return FailedPrecondition("log entry of unknown cluster number " +
                              std::to_string(origin));
  }
  if (entry.position != m->log.last_position() + 1) {
    return FailedPrecondition("log entry at position " +
                              std::to_string(entry.position) + " of cluster '" +
                              m->spec.id + "', whose log ends at " +
                              std::to_string(m->log.last_position()));
  }
  const uint64_t position = m->log.Append(std::move(entry.record));
  if (entry.source_position != 0) {
    m->log.SetSource(position, entry.source_origin, entry.source_position);
  }
  return OkStatus();
}

}  // namespace btsim::replication
