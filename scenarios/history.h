// The record of a scenario run that the checkers read: every client
// operation (as the client saw it, plus the server-side facts the simulator
// knows), the timeline events that happened, and a snapshot of every
// cluster's final contents.
//
// Value tags. Every write of a simulated client writes a unique tag
// "<client>/<sequence>" followed by '|' and padding to the value size, to
// the column kFamily:kValueColumn, with an explicit timestamp. A read
// reports the tag of the newest cell it saw. Increments go to
// kFamily:kCounterColumn (an 8-byte big-endian counter).
//
// Write order. Cells are identified by (row, family, qualifier, timestamp);
// when two writes share all four, the higher commit version wins (the
// engine's last-writer-wins). So write A is newer than write B on the same
// row when (timestamp, version) of A > that of B — see Newer().
//
// Times (sim::Duration) are since the start of the run, except cell
// timestamps, which are absolute (History::start: kRunEpoch in virtual
// time, the wall clock's time of the start in `btsim serve`).
//
// Plain data, no behaviour beyond the helpers below. Operations keep their
// texts as Names in the History's pool (scenarios/name_pool.h): client,
// group, profile and table interned together as one OpSource; cluster and
// error interned; row key and value tags stored.
#ifndef BTSIM_SCENARIOS_HISTORY_H_
#define BTSIM_SCENARIOS_HISTORY_H_

#include <bit>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/check.h"
#include "base/status.h"
#include "cluster/gc_rule.h"
#include "cluster/timestamp.h"
#include "scenarios/name_pool.h"
#include "scenarios/operation.h"
#include "scenarios/operation_log.h"
#include "sim/clock.h"

namespace btsim::scenarios {

// The virtual clock of every run starts at 2026-01-01T00:00:00Z.
inline constexpr sim::Time kRunEpoch{std::chrono::seconds(1767225600)};

// The client group of every operation `btsim serve --scenario` records
// (scenarios/live_session.h): an expectation with `client: "recorded"`
// judges the real applications' calls only.
inline constexpr std::string_view kRecordedGroup = "recorded";

inline constexpr std::string_view kValueColumn = "v";
inline constexpr std::string_view kCounterColumn = "n";
// The column `append` operations append to.
inline constexpr std::string_view kLogColumn = "log";

// Something the timeline (or the settle phase) did.
enum class EventKind {
  kClusterDown,
  kClusterUp,
  kPartition,
  kHeal,
  kLatency,
  kNodeFailure,
  kNodeRecovery,
  kResize,
  kAddCluster,
  kRemoveCluster,
  kUpdateAppProfile,
  kSetGcRule,
  kDropRowRange,
  kStartClient,
  kStopClient,
  kChangeWorkload,
  kTokenWait,  // at: token generated; `end`: the check said consistent
  kSettle,     // the end of `duration`: clients stop
  kSlowCluster,
  kRestoreSpeed,
  kInjectErrors,
  kStopErrors,
  kCutClients,   // `detail`: the client zone, or the client
  kMendClients,  // the same
  kStallReplication,
  kResumeReplication,
  kClockSkew,     // `cluster` or `detail` (the client); `label` the offset
  kCreateBackup,  // `cluster`, `table`, `detail` the backup id
  kRestoreTable,  // `table` the new table; `cluster`, `detail` the backup's
};
std::string_view EventKindName(EventKind kind);  // "cluster_down", ...
// The kind EventKindName names `name`, if any.
std::optional<EventKind> EventKindFromName(std::string_view name);

struct Event {
  sim::Duration at{0};
  EventKind kind = EventKind::kClusterDown;
  std::string label;    // the step's label or a description
  std::string cluster;  // the cluster concerned, if any
  std::string peer;     // the other cluster of a partition / heal / link
  std::string table;    // drop_row_range / set_gc_rule / token wait
  std::string detail;   // prefix of a drop, client name, profile id, ...
  // The step was refused (its label ends "(refused: REASON)") and changed
  // nothing: the checkers treat it as if it had not happened.
  bool refused = false;
  // kTokenWait: when the check said consistent. kHeal, kClusterUp,
  // kAddCluster, kPartition, kClusterDown: when every cluster had applied
  // everything committed (anywhere) before the event. -1: never (within the
  // run and its settling).
  sim::Duration end{-1};
  // kTokenWait: when every cluster had in fact applied the token (checked
  // every 100 ms; `end` is when the polling check saw it). -1: never.
  sim::Duration consistent{-1};
  // kTokenWait: acknowledged writes from before the token that were not
  // readable in every cluster when the check said consistent (must be 0),
  // except those a DropRowRange removed after they committed.
  int64_t violations = 0;
  // kClusterDown (and kRemoveCluster): the ids of the write operations
  // (kWrite, kCheckAndMutate, kReadModifyWrite) that had committed on
  // `cluster` at or before `at` and that no other cluster had applied at
  // `at`, whatever their outcome (the RPO check keeps the acknowledged
  // ones). std::nullopt: not recorded; the RPO check then falls back to a
  // lower bound computed from the final state (see checks.h).
  std::optional<std::vector<uint64_t>> unreplicated_ops;
};

// The GC rule of the family simulated clients write in `table` (its first
// family), in force from `at` (0: the table's creation) until the next
// change for that table.
struct GcRuleChange {
  sim::Duration at{0};
  std::string table;
  cluster::GcRule rule;
};

// Whether delete `del` removed the value cell that write `write` wrote:
// `del` committed after it on the same row, and (kDeleteCells) its time
// range holds the write's timestamp. Deletes of the whole row or family
// remove every cell they find older than themselves.
inline bool DeleteCovers(const Operation& del, const Operation& write) {
  if (!IsDelete(del.type) || del.version == 0 || del.version <= write.version ||
      del.row != write.row || del.table() != write.table()) {
    return false;
  }
  return del.type != OpType::kDeleteCells ||
         (write.timestamp >= del.delete_start() &&
          write.timestamp <= del.timestamp);
}

// Whether `event` is a DropRowRange that took effect (not refused) and
// covers row `row` of `table`: same table, the row starts with its prefix
// (`detail`).
inline bool DropCovers(const Event& event, std::string_view table,
                       std::string_view row) {
  return event.kind == EventKind::kDropRowRange && !event.refused &&
         event.table == table && row.starts_with(event.detail);
}

// What an `append` (OpType::kAppend) of a simulated client appended to
// kLogColumn: a token unique in the run ("<client>/a<n>", followed there by
// kAppendSeparator), and the column's whole value its ReadModifyWriteRow
// returned (empty until it committed, and when longer than
// kMaxAppendList; the last commit's if several did).
inline constexpr char kAppendSeparator = ';';
inline constexpr size_t kMaxAppendList = 64 * 1024;
struct Append {
  uint32_t op = 0;  // Operation::id
  Name token;
  Name list;
};

// A routing front end ejected a cluster or readmitted it (what it
// believes, not the truth).
struct HealthChange {
  sim::Duration at{0};
  std::string zone;  // the front end's client zone
  std::string cluster;
  bool ejected = false;  // false: readmitted
};

// Multi-cluster routing skipped the nearest cluster.
struct Failover {
  sim::Duration at{0};
  std::string profile;
  std::string from;  // the nearest cluster
  std::string to;    // the one that served
};

// A cluster's CPU load (fractions of a node), sampled once per second
// until the run ends (including settling).
struct CpuSample {
  sim::Duration at{0};
  std::string cluster;
  double average = 0;
  double hottest = 0;
};

// The newest value cell and the counter of one row on one cluster, as the
// final state keeps it (its Names are in the History's pool).
struct RowState {
  Tag tag;  // empty when the row has no value cell
  cluster::Timestamp timestamp;
  uint64_t version = 0;  // commit version of that cell
  int64_t counter = 0;   // 0 when absent
};

// Row states keyed by (table, row), in ascending key order: a sorted
// vector of 48-byte entries (millions of rows cost one allocation, and
// iterate in order). The keys' and tags' texts are Names, kept by a pool
// that must outlive the states.
class RowStates {
 public:
  using Key = std::pair<Name, Name>;  // (table, row)
  using Entry = std::pair<Key, RowState>;
  using const_iterator = std::vector<Entry>::const_iterator;

  // Adds a row whose key is greater than every key present (rows read in
  // order); anything else aborts.
  void Append(Key key, RowState state);
  // The state of `key`, added (empty) where it belongs when absent.
  RowState& operator[](const Key& key);
  // Null when absent.
  const RowState* Find(std::string_view table, std::string_view row) const;
  // The state of the i-th row in key order. Requires i < size().
  RowState& at(size_t i) { return entries_[i].second; }

  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }
  void reserve(size_t n) { entries_.reserve(n); }
  const_iterator begin() const { return entries_.begin(); }
  const_iterator end() const { return entries_.end(); }

 private:
  const_iterator LowerBound(std::string_view table, std::string_view row) const;

  std::vector<Entry> entries_;
};
static_assert(sizeof(RowStates::Entry) <= 48, "see docs/PERFORMANCE.md");

// One cluster's final contents, as far as the checkers need them.
struct ClusterState {
  std::string id;
  std::string digest;  // a hash of the whole contents (hex)
  RowStates rows;
  // Set when this cluster's contents equal those of the earlier cluster
  // final_state[*same_as] (equal digests): `rows` is then left empty, and
  // RowsOf() reads that cluster's. Converged clusters share one copy.
  std::optional<size_t> same_as;
  // The last position of each other cluster's replication log this one had
  // applied when the final state was read, by that cluster's id.
  std::map<std::string, uint64_t, std::less<>> applied;
};

// Replication on one link (entries `from` committed, applied by `to`) over
// one sampling interval (1 s) ending at `at`.
struct LinkSample {
  sim::Duration at{0};
  std::string from;
  std::string to;
  int64_t applied = 0;         // entries `to` applied in the interval
  sim::Duration delay_sum{0};  // their delays (apply time - commit time)
  sim::Duration delay_max{0};
  int64_t backlog = 0;  // entries of `from` that `to` had not acknowledged
};

struct History {
  // The absolute time of the run's start: kRunEpoch for `btsim run`.
  sim::Time start = kRunEpoch;
  // The texts operations refer to. Copies of a History share it (texts
  // are only ever added).
  std::shared_ptr<NamePool> names = std::make_shared<NamePool>();
  OperationLog operations;                   // in invoke order (id == index)
  std::vector<Event> events;                 // in time order
  std::vector<ClusterState> final_state;     // clusters in creation order
  std::vector<Failover> failovers;           // in time order
  std::vector<HealthChange> health_changes;  // in time order
  std::vector<Append> appends;               // in operation order
  std::vector<CpuSample> cpu;                // in time order
  // Every second until the run ends (including settling), per ordered pair
  // of clusters present (in creation order).
  std::vector<LinkSample> links;
  sim::Duration duration{0};  // end of the client phase
  sim::Duration settled{-1};  // when replication drained (-1: it did not)
  sim::Duration ended{0};     // when the final state was read
  std::vector<GcRuleChange> gc_rules;  // in time order
  // True when the routing promises strong reads: every client uses a
  // single-cluster profile, all to the same cluster, and no profile changed
  // during the run.
  bool strong_reads_promised = false;
};

// Whether a write with (timestamp, version) a is newer than b.
inline bool Newer(cluster::Timestamp ts_a, uint64_t version_a,
                  cluster::Timestamp ts_b, uint64_t version_b) {
  return ts_a != ts_b ? ts_a > ts_b : version_a > version_b;
}

// The Append of operation `op`, or null (not an append of a simulated
// client).
const Append* FindAppend(const History& history, uint32_t op);
Append* FindAppend(History& history, uint32_t op);

// The rows of final_state[cluster], following same_as. Requires cluster <
// history.final_state.size().
const RowStates& RowsOf(const History& history, size_t cluster);

// The tag of a value written by a simulated client: the bytes before the
// first '|' (the whole value when there is none).
std::string_view TagOf(std::string_view value);

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_HISTORY_H_
