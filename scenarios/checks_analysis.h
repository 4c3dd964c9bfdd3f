// Internal to checks.cc and expectations.cc: the indexes over a History that
// the checks share (rows, write order keys, effective read keys, per-read
// verdicts, lost writes, outages). Not a public API; see checks.h for the
// semantics these implement.
#ifndef BTSIM_SCENARIOS_CHECKS_ANALYSIS_H_
#define BTSIM_SCENARIOS_CHECKS_ANALYSIS_H_

#include <chrono>
#include <compare>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>  // btsim: order-independent
#include <utility>
#include <vector>

#include "scenarios/checks.h"
#include "scenarios/flat_index.h"
#include "scenarios/history.h"
#include "scenarios/tag_map.h"

namespace btsim::scenarios::checks_internal {

// Hash maps used for lookups only: their iteration order never decides
// anything.
template <class K, class V, class Hash = std::hash<K>>
using LookupMap = std::unordered_map<K, V, Hash>;  // btsim: order-independent

// A write's position in last-writer-wins order: (timestamp, version),
// compared lexicographically, which is what Newer() does.
struct OrderKey {
  cluster::Timestamp ts = cluster::Timestamp::min();
  uint64_t version = 0;
  friend auto operator<=>(const OrderKey&, const OrderKey&) = default;
};
inline constexpr OrderKey kNothing{};  // older than every write

inline OrderKey KeyOf(const Operation& op) {
  return {op.timestamp, op.version};
}

// Which operations an expectation selects; the default selects everything.
struct Filter {
  std::string profile;
  std::string client;   // Operation::client or Operation::group
  std::string cluster;  // Operation::cluster
  sim::Duration start{0};
  std::optional<sim::Duration> end;  // exclusive

  bool InWindow(sim::Duration t) const {
    return t >= start && (!end || t < *end);
  }
  bool SelectsClient(const Operation& op) const {
    return (profile.empty() || op.profile() == profile) &&
           (client.empty() || op.client() == client || op.group() == client);
  }
  bool Selects(const Operation& op) const {
    return SelectsClient(op) && (cluster.empty() || op.cluster == cluster) &&
           InWindow(op.invoke);
  }
};

// Entries (time, key, op) grouped by a 64-bit group id, sorted by time
// within a group, with the running maximum of the key.
class Series {
 public:
  struct Entry {
    uint64_t group;
    sim::Duration at;
    OrderKey key;
    uint32_t op;
    uint32_t max_index;  // index (in entries_) of the max key so far
  };

  // Room for n entries (a hint: Add works without it).
  void Reserve(size_t n) { entries_.reserve(n); }
  void Add(uint64_t group, sim::Duration at, OrderKey key, uint32_t op);
  // Sorts and computes the running maxima. Call once, after every Add.
  void Finish();
  // The entry with the largest key among those of `group` with at <= t
  // (the earliest such on ties); nullptr when none.
  const Entry* MaxUpTo(uint64_t group, sim::Duration t) const;
  // The earliest entry of `group` whose key is newer than `key`.
  const Entry* FirstNewerThan(uint64_t group, OrderKey key) const;
  // The earliest entry of `group` with at >= t.
  const Entry* FirstAtOrAfter(uint64_t group, sim::Duration t) const {
    return FirstAtOrAfter(Range(group), t);
  }
  // The same within a range Range() returned (to look up one group for
  // several times).
  const Entry* FirstAtOrAfter(std::pair<size_t, size_t> range,
                              sim::Duration t) const;
  // [begin, end) of `group` in the sorted entries.
  std::pair<size_t, size_t> Range(uint64_t group) const;

 private:
  std::vector<Entry> entries_;
  // Group -> its index g among the groups (lookups only, never iterated);
  // group g is [begins_[g], begins_[g + 1]) in entries_.
  FlatIndex ranges_;
  std::vector<size_t> begins_;
  std::vector<uint64_t> groups_;  // group g's id (compact, for lookups)
};

// A read's verdicts.
struct ReadResult {
  uint32_t op = 0;
  int32_t row = 0;
  OrderKey effective;  // what it saw, raised to the drop floor
  bool unknown_tag = false;
  // The write it missed (its position in history.operations, like `op`),
  // when it violates the check; -1 otherwise.
  int64_t ryw_missed = -1;
  int64_t monotonic_missed = -1;  // the newer write an earlier read saw
  int64_t strong_missed = -1;
  sim::Duration staleness{0};
  int64_t stale_missed = -1;  // the earliest-acknowledged missed write
  // k-staleness: acknowledged writes on the row whose order key is newer
  // than `effective` and that were acknowledged (complete) at or before the
  // read's invoke. 0 exactly when staleness is 0.
  int64_t k_stale = 0;
};

struct LostWrite {
  uint32_t op;
  size_t cluster;  // index in History::final_state
};

// One client's outage after one fault.
struct Outage {
  std::string client;
  size_t event = 0;    // index in History::events
  bool never = false;  // no success afterwards
  sim::Duration length{0};
  // The ops that failed at or after the fault and were invoked before the
  // outage ended.
  std::vector<uint32_t> failed;
};

// (row, tag) -> the write op that wrote that tag on that row (lookups
// only, never iterated): the first one added wins. Tags of simulated
// clients are unique in the run; a recorded application may write the
// same value on many rows, and a read of a row saw a write on that row.
class TagIndex {
 public:
  // For the tags of a history of `operations` operations.
  explicit TagIndex(size_t operations) : ops_(4 * operations + 16, kNone) {}
  // Maps (`row`, `tag`) to `op`, unless it is mapped already. `tag`'s text
  // must outlive this; `row_of` gives the row of every op added before.
  void Add(Tag tag, int32_t row, uint32_t op,
           const std::vector<int32_t>& row_of) {
    uint32_t& mapped = ops_[tag];
    if (mapped == kNone) {
      mapped = op;
    } else if (row_of[mapped] != row) {
      elsewhere_.try_emplace({row, tag}, op);
    }
  }
  // The op (`row`, `tag`) maps to; -1 when none.
  int64_t Find(Tag tag, int32_t row, const std::vector<int32_t>& row_of) const {
    const uint32_t op = ops_.Find(tag);
    if (op == kNone) return -1;
    if (row_of[op] == row) return op;
    auto it = elsewhere_.find({row, tag});
    return it == elsewhere_.end() ? -1 : int64_t{it->second};
  }

 private:
  static constexpr uint32_t kNone = 0xffffffff;
  using RowTag = std::pair<int32_t, Tag>;
  struct Hash {
    size_t operator()(const RowTag& k) const {
      return TagHash()(k.second) ^
             (static_cast<size_t>(k.first) * 0x9e3779b97f4a7c15ULL);
    }
  };
  // The first op that wrote each tag, on whichever row.
  TagMap<uint32_t> ops_;
  // Tags written on more than one row: the first op on each other row.
  LookupMap<RowTag, uint32_t, Hash> elsewhere_;
};

// The surviving clusters (checks.h), as indexes in History::final_state.
std::vector<size_t> SurvivingClusters(const History& history);

class Analysis {
 public:
  explicit Analysis(const History& history);

  const History& history() const { return history_; }
  const std::vector<ReadResult>& reads() const { return reads_; }
  const std::vector<uint32_t>& acked_writes() const { return acked_writes_; }
  const std::vector<size_t>& surviving() const { return surviving_; }
  const std::vector<LostWrite>& lost_writes() const { return lost_writes_; }
  // Acknowledged writes missing on a surviving cluster that had not yet
  // applied them from their origin's log when the run ended (it did not
  // settle): pending, not lost.
  const std::vector<LostWrite>& pending_writes() const {
    return pending_writes_;
  }
  int32_t RowOf(uint32_t op) const { return row_of_[op]; }
  // Whether some successful kReadRow names `row`.
  bool RowHasReads(int32_t row) const { return row_has_reads_[row]; }
  // The table and key of `row`.
  struct RowName {
    Name table;
    Name row;
    uint32_t first_op = 0;  // the first op naming it
  };
  const RowName& NameOf(int32_t row) const { return row_names_[row]; }
  // The write op that wrote `tag` on `row`; -1 when none committed it.
  int64_t WriteOfTag(Tag tag, int32_t row) const;
  // The final state of `row` on final_state[cluster] (nullptr: absent).
  const RowState* State(int32_t row, size_t cluster) const;
  // The effective key of a read of `row` that saw `seen` and completed at
  // `complete`.
  OrderKey Effective(int32_t row, OrderKey seen, sim::Duration complete) const;
  // Whether a removal by design (a DropRowRange covering its row, or a
  // delete of the row, its family or a time range holding its timestamp)
  // took effect at or after committed write `op` committed.
  bool RemovedLater(int32_t row, const Operation& op) const;
  // The earliest time garbage collection may remove the cell committed
  // write or increment `op` wrote, were it still its column's newest (an
  // increment's counter cell has its commit time, in whole milliseconds):
  // when the table's GC rule in force deletes a newest cell of that age
  // (History::gc_rules; max_age parts only, since max_num_versions keeps
  // the newest). nullopt: never within the run's rules.
  std::optional<sim::Duration> ExpiryOf(const Operation& op) const;
  // The time of the last DropRowRange covering `row`, or delete of the
  // row or its family, which also removes counters (nullopt: none).
  std::optional<sim::Duration> LastDrop(int32_t row) const;
  // Whether committed write `op` (an id) was, at some moment, beyond the
  // table's version limit among its row's visible writes: garbage
  // collection may then have removed it for good (cluster GC acts as if
  // after every commit), even once the newer versions are deleted. Age
  // limits of an intersection are taken as reached.
  bool MayHaveBeenCollected(uint32_t op) const;

 private:
  // What removed a row's value cells by design: a DropRowRange (every cell
  // committed before it) or a delete (DeleteCovers); all but a delete of
  // cells also remove counters (`whole`).
  struct Removal {
    sim::Duration at{0};
    const Operation* del = nullptr;  // the delete; null: a DropRowRange
    bool Covers(const Operation& write) const {
      return del != nullptr ? DeleteCovers(*del, write) : write.committed <= at;
    }
    bool whole() const {
      return del == nullptr || del->type != OpType::kDeleteCells;
    }
  };
  struct RowDrops {
    std::vector<Removal> removals;  // sorted by `at`
    std::vector<OrderKey> floor;    // newest write removals[0..k] removed
  };
  // The writes of a row that garbage collection may remove, by expiry.
  struct RowExpiries {
    std::vector<std::pair<sim::Duration, OrderKey>> at;  // sorted by time
    std::vector<OrderKey> floor;  // newest key expired at or before at[k]
  };
  // A table's GC rule periods: from `from`, newest cells older than `age`
  // may be removed (nullopt: none are).
  struct AgePeriod {
    sim::Duration from{0};
    std::optional<std::chrono::microseconds> age;
  };
  // The first of `drops` that may remove a write committed at
  // `committed` (Removal::Covers decides).
  static size_t FirstRemovalFor(const RowDrops& drops, sim::Duration committed);
  void IndexRows();
  void IndexDrops();
  void IndexExpiries();
  // Fills collected_ (checks_collected.cc).
  void IndexCollected();
  void AnalyzeReads();
  // Fills ReadResult::k_stale (called by AnalyzeReads).
  void CountStaleWrites();
  void FindLostWrites();

  const History& history_;
  std::vector<int32_t> row_of_;  // per op; -1: no row
  // Per row: its table and key, as the first op naming it named them (the
  // row index's compares read this, then the key's text: no op).
  std::vector<RowName> row_names_;
  std::vector<bool> row_has_reads_;  // per row (see RowHasReads)
  std::map<int32_t, RowDrops> drops_;
  std::map<std::string, std::vector<AgePeriod>, std::less<>> age_periods_;
  std::map<int32_t, RowExpiries> expiries_;
  std::vector<bool> collected_;  // per op (empty: no version limits)
  TagIndex tags_;                // committed writes' tags
  std::vector<uint32_t> acked_writes_;
  std::vector<size_t> surviving_;
  // States by row and column: row r's state on final_state[c] is
  // states_[r * columns_ + column_of_[c]], with one column per cluster that
  // has rows of its own (converged clusters share one).
  std::vector<const RowState*> states_;
  size_t columns_ = 0;
  std::vector<size_t> column_of_;  // per cluster in final_state
  std::vector<ReadResult> reads_;
  std::vector<LostWrite> lost_writes_;
  std::vector<LostWrite> pending_writes_;
};

// The outages of the clients selected by `filter` (see checks.h, RTO):
// client and profile filters select operations, cluster selects faults by
// `cluster` or `peer`, the window selects faults by time. Sorted by
// (client, event).
std::vector<Outage> FindOutages(const History& history, const Filter& filter);
// The event that repairs fault `events[fault]` (a kClusterUp for a
// kClusterDown, ...; kSettle when nothing earlier does); nullopt when none
// (always for kRemoveCluster).
std::optional<size_t> RepairOf(const std::vector<Event>& events, size_t fault);

// The fail-backs of the clients selected by `filter` (see checks.h,
// FAILBACK_SECONDS; the filters apply as for FindOutages). Sorted by
// (event, client).
std::vector<Failback> FindFailbacks(const History& history,
                                    const Filter& filter);
// The same, given FindOutages(history, filter) (to find them once for
// several uses).
std::vector<Failback> FindFailbacks(const History& history,
                                    const Filter& filter,
                                    const std::vector<Outage>& outages);

// LWW_ANOMALIES (checks.h): acknowledged writes (kWrite, kCheckAndMutate)
// selected by `filter` that an acknowledged write to the same row (of the
// same table),
// acknowledged before they were invoked, shadows with a newer timestamp;
// the first found, with its shadowing write (checks_lww.cc).
struct LwwAnomalies {
  int64_t count = 0;
  int64_t writes = 0;     // selected acknowledged writes
  uint32_t shadowed = 0;  // indexes in history.operations
  uint32_t shadowing = 0;
};
LwwAnomalies FindLwwAnomalies(const History& history, const Filter& filter);

// Nearest-rank percentile (p in (0, 100]) of a non-empty vector.
sim::Duration Percentile(std::vector<sim::Duration> values, double p);
int64_t Percentile(std::vector<int64_t> values, double p);

// The parts joined with `separator` between them.
std::string Join(const std::vector<std::string>& parts,
                 const std::string& separator = "; ");
// "key count, key count" in the map's order.
template <typename Key>
std::string Breakdown(const std::map<Key, int64_t>& counts) {
  std::vector<std::string> parts;
  for (const auto& [key, count] : counts) {
    parts.push_back(std::string(key) + " " + std::to_string(count));
  }
  return Join(parts, ", ");
}

// Shortest round-trip text of a number ("1.5", "100", "inf").
std::string FormatNumber(double value);
// Seconds with an "s": "1.5s"; "never" for infinity.
std::string FormatSeconds(double seconds);
std::string FormatSeconds(sim::Duration d);
double Seconds(sim::Duration d);

// "client/row" style descriptions for details.
std::string DescribeOp(const Operation& op);
// "'tag'" of the write at position `op` of history.operations, or "nothing"
// for -1.
std::string DescribeTag(const History& history, int64_t op);

}  // namespace btsim::scenarios::checks_internal

#endif  // BTSIM_SCENARIOS_CHECKS_ANALYSIS_H_
