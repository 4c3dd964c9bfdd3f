// Operation: one client operation of a run, as the history records it
// (see scenarios/history.h for the value tags, the write order and the
// times). Plain data: 96 bytes, no pointer into anything but the History's
// name pool and kNoSource, so an Operation can be copied byte for byte.
#ifndef BTSIM_SCENARIOS_OPERATION_H_
#define BTSIM_SCENARIOS_OPERATION_H_

#include <bit>
#include <cstdint>
#include <optional>
#include <string_view>

#include "base/check.h"
#include "base/status.h"
#include "cluster/timestamp.h"
#include "scenarios/name_pool.h"
#include "sim/clock.h"

namespace btsim::scenarios {

// The source of an operation nobody set one for: every name empty.
inline constexpr OpSource kNoSource{};

enum class OpType : uint8_t {
  kReadRow,
  kScan,
  kWrite,
  kCheckAndMutate,
  kReadModifyWrite,
  kDeleteRow,     // DeleteFromRow
  kDeleteFamily,  // DeleteFromFamily of the table's first family
  kDeleteCells,   // DeleteFromColumn of the value column, a time range
  kAppend,        // ReadModifyWriteRow appending to another column
  kAddToCell,     // AddToCell (simulated clients: 1 to a Sum counter)
};
std::string_view OpTypeName(OpType type);  // "read_row", "scan", ...
// The type OpTypeName names `name`, if any.
std::optional<OpType> OpTypeFromName(std::string_view name);
// The deletes: kDeleteRow, kDeleteFamily, kDeleteCells.
bool IsDelete(OpType type);

// At most 96 bytes: a run records millions of them, and every byte per
// operation costs time (docs/PERFORMANCE.md).
struct Operation {
  uint32_t id = 0;  // position in invoke order, from 0
  int16_t attempts = 0;
  OpType type = OpType::kReadRow;
  // UNKNOWN "still in flight when the run ended" for an operation that
  // never finished (then attempts is 0). One byte: every code fits.
  StatusCode code : 8 = StatusCode::kOk;
  // Client, group, profile and table, interned in History::names (see
  // name_pool.h); never null.
  const OpSource* source = &kNoSource;
  Name row;                   // the row key (a scan's start key)
  sim::Duration invoke{0};    // virtual time the client issued it
  sim::Duration complete{0};  // virtual time the client saw the outcome
  Name message;               // the error, if any
  // The cluster the last attempt was routed to ("" if routing refused it).
  Name cluster;

  // Writes (kWrite, and kCheckAndMutate whichever branch ran), adds and
  // deletes: the virtual time the change committed on the serving cluster
  // (an add's last application), its position in that cluster's
  // replication log, the cell timestamp (a delete's: the end of what it
  // covers; an add's: 0), and the commit version there.
  // `version` is 0 when nothing was committed; it can be non-zero for a
  // failed operation (committed, but the reply came too late). The tag
  // written is written().
  sim::Duration committed{0};
  uint64_t log_position = 0;
  cluster::Timestamp timestamp;
  uint64_t version = 0;

  // What only some types have, sharing one slot: each getter returns ""
  // or 0 for the other types; each setter requires `type` to be one of its
  // types (set it first).
  //
  // kWrite, kCheckAndMutate: the tag written.
  Tag written() const { return IsWrite() ? Tag::FromBits(slot_) : Tag(); }
  void set_written(Tag tag) {
    BTSIM_CHECK(IsWrite());
    slot_ = tag.bits();
  }
  // kReadRow: the tag of the newest value cell ("" when the row had none).
  Tag read() const {
    return type == OpType::kReadRow ? Tag::FromBits(slot_) : Tag();
  }
  void set_read(Tag tag) {
    BTSIM_CHECK(type == OpType::kReadRow);
    slot_ = tag.bits();
  }
  // kScan: rows returned.
  int64_t rows() const { return type == OpType::kScan ? slot_ : 0; }
  void set_rows(int64_t rows) {
    BTSIM_CHECK(type == OpType::kScan);
    slot_ = rows;
  }
  // kReadModifyWrite: the counter value after the increment. (Its
  // `version` and `committed` are filled too when it committed: the
  // lost-updates check uses `committed` to leave out increments wiped by a
  // later DropRowRange, and `complete` when `version` is 0.)
  int64_t counter() const {
    return type == OpType::kReadModifyWrite ? slot_ : 0;
  }
  void set_counter(int64_t counter) {
    BTSIM_CHECK(type == OpType::kReadModifyWrite);
    slot_ = counter;
  }
  // kAddToCell: how many of its attempts a cluster applied (0 or 1 when
  // the increment counted once at most; each one beyond the first counted
  // it again), and whether it carried an idempotency token (a cluster that
  // has the original then acknowledges a retry without applying it). A
  // recorded call (`serve --scenario`) is one attempt: applied 1 when it
  // committed; whether it carried a token is not recorded (false).
  int64_t applied() const {
    return type == OpType::kAddToCell ? slot_ & kAppliedMask : 0;
  }
  void set_applied(int64_t applied) {
    BTSIM_CHECK(type == OpType::kAddToCell);
    BTSIM_CHECK(applied >= 0 && applied <= kAppliedMask);
    slot_ = (slot_ & ~kAppliedMask) | applied;
  }
  bool idempotent() const {
    return type == OpType::kAddToCell && (slot_ & kIdempotentBit) != 0;
  }
  void set_idempotent(bool idempotent) {
    BTSIM_CHECK(type == OpType::kAddToCell);
    slot_ = idempotent ? slot_ | kIdempotentBit : slot_ & ~kIdempotentBit;
  }
  // kDeleteCells: the start of the time range it deletes (the end is
  // `timestamp`, included).
  cluster::Timestamp delete_start() const {
    return type == OpType::kDeleteCells ? cluster::TimestampFromMicros(slot_)
                                        : cluster::Timestamp::min();
  }
  void set_delete_start(cluster::Timestamp start) {
    BTSIM_CHECK(type == OpType::kDeleteCells);
    slot_ = cluster::Micros(start);
  }

  Name client() const { return source->client; }  // e.g. "writer-3"
  Name group() const { return source->group; }    // e.g. "writer"
  Name profile() const { return source->profile; }
  Name table() const { return source->table; }

  bool ok() const { return code == StatusCode::kOk; }

 private:
  static constexpr int64_t kAppliedMask = (int64_t{1} << 32) - 1;
  static constexpr int64_t kIdempotentBit = int64_t{1} << 32;

  bool IsWrite() const {
    return type == OpType::kWrite || type == OpType::kCheckAndMutate;
  }
  // Right after `version`, in the same 16 bytes: ReadFinalState fetches the
  // two together.
  int64_t slot_ = 0;
};
static_assert(sizeof(Operation) <= 96, "see docs/PERFORMANCE.md");

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_OPERATION_H_
