// Replicas' shipping: batches of log entries sent to each peer, a window
// of them in flight, retransmitted after a timeout measured from round
// trips; received batches queued on the peer's nodes and applied; acks and
// log truncation. The rest of Replicas is in replicas.cc.
#include <algorithm>
#include <limits>
#include <utility>
#include <variant>
#include <vector>

#include "base/check.h"
#include "replication/internal/replicas_state.h"
#include "replication/replicas.h"

namespace btsim::replication {

using cluster::CommitRecord;
using cluster::Version;

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
    } else if (const auto* add = std::get_if<cluster::AddToCell>(&mutation)) {
      bytes += static_cast<int64_t>(add->family.size() + add->qualifier.size() +
                                    add->input.size());
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

}  // namespace

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
  if (replaying_ || from == nullptr || to == nullptr || from->down ||
      from->stalled) {
    return;
  }
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
      if (!m->Takes(entry)) continue;  // relayed, applied already
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
    if (journal_) journal_->OnApplied(origin, peer, last);
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

}  // namespace btsim::replication
