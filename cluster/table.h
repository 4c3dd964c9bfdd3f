// Table: one table of one cluster — its schema (column families and GC
// rules) and its rows, split into tablets. Implements Bigtable's row
// operations; every operation on one row is atomic (validated in full before
// anything changes). Commit versions and server time come from the caller
// (Cluster). Not thread-safe: the owner serialises access.
#ifndef BTSIM_CLUSTER_TABLE_H_
#define BTSIM_CLUSTER_TABLE_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "cluster/cell_view.h"
#include "cluster/compaction_shares.h"
#include "cluster/filter.h"
#include "cluster/gc_rule.h"
#include "cluster/mutation.h"
#include "cluster/row_set.h"
#include "cluster/row_share.h"
#include "cluster/tablet.h"
#include "cluster/version.h"
#include "sim/rng.h"

namespace btsim::cluster {

struct TableOptions {
  // A tablet splits when it holds more than this many bytes or rows...
  int64_t split_bytes = 16 << 20;
  int64_t split_rows = 16 * 1024;
  // ...and two neighbours merge at compaction when together they hold less
  // than a quarter of both limits (never across a user-requested split).
  int64_t merge_divisor = 4;
};

struct ColumnFamily {
  std::string name;
  GcRule gc_rule;
};

// One step of ModifyColumnFamilies.
struct FamilyModification {
  enum class Kind { kCreate, kUpdate, kDrop };
  std::string name;
  Kind kind = Kind::kCreate;
  GcRule gc_rule;  // kCreate, kUpdate
};

// When and as whom a write commits. Every mutation of one request commits
// at `version`; the mutations still take effect in order (a delete also
// erases the cells written earlier in the same request).
struct CommitContext {
  Version version = 0;
  int64_t server_time_micros = 0;  // a multiple of 1000
};

struct ReadOptions {
  const RowSet* rows = nullptr;    // null: all rows
  const Filter* filter = nullptr;  // null: pass all
  bool reversed = false;
  // Skip rows up to and including this key (in scan order): resumes a read.
  std::optional<std::string> resume_after;
};

// Receives one output row; return false to stop the read. Views are valid
// only during the call.
using RowVisitor =
    std::function<bool(std::string_view key, std::span<const CellView> cells)>;

// A cell written by ReadModifyWriteRow.
struct ModifiedCell {
  std::string family;
  std::string qualifier;
  int64_t timestamp_micros;
  std::string value;
};

struct KeySample {
  std::string row_key;  // "" for the end of the table
  int64_t offset_bytes;
};

struct TableStats {
  int64_t rows = 0;  // stored rows, including rows holding only tombstones
  int64_t bytes = 0;
  int64_t tablets = 0;
};

class Table {
 public:
  // `splits` are the initial split keys (any order, duplicates ignored).
  Table(std::string id, TableOptions options,
        const std::vector<std::string>& splits);
  ~Table();
  // A deep copy: schema, rows (with their tombstones and versions) and
  // tablet boundaries. The commit hook is not copied.
  std::unique_ptr<Table> Clone() const;
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;

  const std::string& id() const { return id_; }

  // ---- Schema ----
  // Families sorted by name.
  std::vector<ColumnFamily> Families() const;
  bool HasFamily(std::string_view name) const;
  // Applies every modification in order, or none: NOT_FOUND, ALREADY_EXISTS
  // or INVALID_ARGUMENT (naming `modifications[i]`) when one is invalid.
  Status ModifyColumnFamilies(std::span<const FamilyModification> mods);

  // ---- Writes ----
  // INVALID_ARGUMENT / NOT_FOUND when a mutation is invalid, naming
  // `mutations[i]`; then nothing changes.
  Status ValidateMutations(std::span<const Mutation> mutations) const;
  // Applies mutations atomically (validates first). `probe`: the index of
  // `key` among the keys of the last PrefetchRows call, or kNoProbe.
  Status MutateRow(std::string_view key, std::span<const Mutation> mutations,
                   const CommitContext& commit, size_t probe = kNoProbe);
  // Evaluates `predicate` (null: "row has any cell") on the row, then applies
  // the matching list. Returns whether the predicate matched.
  Result<bool> CheckAndMutateRow(std::string_view key, const Filter* predicate,
                                 std::span<const Mutation> if_true,
                                 std::span<const Mutation> if_false,
                                 const CommitContext& commit, sim::Rng& rng);
  // Applies the rules in order; returns the final value of each modified
  // column, in canonical order.
  Result<std::vector<ModifiedCell>> ReadModifyWriteRow(
      std::string_view key, std::span<const ReadModifyWriteRule> rules,
      const CommitContext& commit);
  // Removes every row starting with `prefix` ("" = every row) at once.
  void DropRowRange(std::string_view prefix);

  // ---- Replication ----
  // Called after every local row commit with the applied mutations (server
  // timestamps, -1, not resolved yet: they mean `server_time_micros`), their
  // version and, for a single mutation, the share replicas may take
  // (cluster/row_share.h; invalid otherwise). Empty by default.
  using CommitHook =
      std::function<void(std::string_view key, std::span<const Mutation>,
                         int64_t server_time_micros, Version, RowShare)>;
  void set_commit_hook(CommitHook hook) { commit_hook_ = std::move(hook); }
  // Applies a row change committed elsewhere at `version`: mutations on
  // families this table lacks are skipped, no limit is enforced, and
  // nothing is reported to the commit hook. Changes older than a replicated
  // DropRowRange covering the row are ignored. With the origin's `share`
  // (may be null) the row becomes the origin's when the share applies here.
  // `probe` as for MutateRow.
  void ApplyReplicated(std::string_view key,
                       std::span<const Mutation> mutations, Version version,
                       const RowShare* share = nullptr,
                       size_t probe = kNoProbe);
  // DropRowRange committed at `version` (locally or elsewhere): removes the
  // cells older than `version` in the range now, and remembers the range so
  // that older changes arriving later are ignored (until compaction passes
  // the horizon).
  void DropRowRangeAt(std::string_view prefix, Version version);
  // Brings into cache what searching for each of `keys` reads (see
  // Tablet::Probe), and remembers where each key was found: call before
  // applying a batch of writes, passing each write its key's index as
  // `probe`. A write uses what was found only after checking it against the
  // rows, so a probe made stale by earlier writes (or a wrong index) costs a
  // search, never a wrong result. Changes no row; not const (it uses
  // scratch space), so call it where writes are allowed.
  static constexpr size_t kNoProbe = static_cast<size_t>(-1);
  void PrefetchRows(std::span<const std::string_view> keys);

  // ---- Reads ----
  void Read(const ReadOptions& options, sim::Rng& rng,
            const RowVisitor& visit) const;
  std::vector<KeySample> SampleRowKeys() const;

  // ---- Maintenance ----
  // Rewrites the rows of every tablet that may have something to reclaim
  // (written since the last compaction, holding tombstones newer than the
  // horizon, or subject to an age-based GC rule; every tablet after a schema
  // change): drops cells hidden by tombstones, tombstones with version <=
  // `tombstone_horizon`, data of dropped families, and cells the GC rules
  // delete at `now_micros`; then merges small tablets. With `shares` (may
  // be null), results are shared with the other clusters compacting in the
  // same round (cluster/compaction_shares.h).
  void Compact(int64_t now_micros, Version tombstone_horizon,
               CompactionShares* shares = nullptr);

  TableStats Stats() const;
  // True when both tables hold the same id, families (names, ids and GC
  // rules) and rows (keys and encodings): then every read of one returns
  // what the same read of the other does. Tablet boundaries, compaction
  // marks and remembered DropRowRange horizons are not compared. Rows that
  // share an allocation are compared without reading them, so replicas
  // holding the same row versions compare at the cost of a walk over their
  // indexes. False for some tables that read alike: the same cells stored
  // under different family ids.
  bool SameContents(const Table& other) const;
  // The start key of the tablet that holds `key` now ("" for the first
  // tablet). Changes only when that tablet splits or merges.
  const std::string& TabletStartOf(std::string_view key) const;
  // sim::StableHash(TabletStartOf(key), seed), computed once per tablet
  // and seed in a row (Tablet::StartHash).
  uint64_t TabletStartHash(std::string_view key, uint64_t seed) const;

 private:
  struct FamilyEntry {
    std::string name;
    uint32_t id;  // never reused, so a dropped family's data is unreachable
    GcRule gc_rule;
  };
  Tablet& TabletFor(std::string_view key);
  const Tablet& TabletFor(std::string_view key) const;
  // TabletFor(key), trying the tablet of the last write first.
  const Tablet& TabletNearWrite(std::string_view key) const;
  size_t TabletIndex(std::string_view key) const;
  // Recomputes start_heads_ and start_prefix_; call after tablets_ changes.
  void IndexTablets();
  const std::string* FamilyNameById(uint32_t id) const;
  const FamilyEntry* FindFamily(std::string_view name) const;
  // Live cells of a stored row, in canonical order, into `*out`.
  void LiveCells(const RowRecord& record, std::vector<LiveCell>* scratch,
                 std::vector<CellView>* out) const;
  // `local`: enforce the row size limit and report to the commit hook.
  // `share` (replicated writes; may be null): the origin's result, taken
  // when CanTake. `probe`: see PrefetchRows.
  Status ApplyToRow(std::string_view key, std::span<const Mutation> mutations,
                    const CommitContext& commit, bool local = true,
                    const RowShare* share = nullptr, size_t probe = kNoProbe);
  // What PrefetchRows found: tablets_[index] held `tablet`.
  struct RowProbe {
    const Tablet* tablet = nullptr;
    size_t index = 0;
    Tablet::Probe probe;
  };
  // Whether tablets_[probe.index] is still the probe's tablet (compared as
  // a pointer before it is followed: the tablet may be gone).
  bool Current(const RowProbe& probe) const {
    return probe.index < tablets_.size() &&
           tablets_[probe.index].get() == probe.tablet;
  }
  // The tablet holding (or to hold) `key` and the key's slot in it, from
  // `probe` (may be null) when that is still exact.
  std::pair<size_t, Tablet::Slot> Locate(std::string_view key,
                                         const RowProbe* probe) const;
  // The id of the family `m` names (RowShare::kNoFamily when it names none);
  // nullopt when this table lacks it.
  std::optional<uint32_t> FamilyIdOf(const Mutation& m) const;
  // Whether applying `mutations` to `row` (null: absent) here gives exactly
  // share.after. Requires the share's family id to be this table's for the
  // mutation's family (ApplyReplicated passes only such shares).
  bool CanTake(const RowShare& share, const RowRecord* row,
               std::span<const Mutation> mutations) const;
  // What follows every row write in tablet `ti`: a split if it grew too
  // large, and the commit hook (given `share`) for a local write.
  void AfterWrite(size_t ti, std::string_view key,
                  std::span<const Mutation> mutations,
                  const CommitContext& commit, bool local, RowShare share);
  void MaybeSplit(size_t tablet_index);
  void MergeSmallTablets();
  // Compacts the rows of `tablet` that may need it: every row when
  // `every_row`, else those MayNeedCompaction accepts among every row
  // (all_dirty()) or the marked ones.
  void CompactTablet(Tablet& tablet, bool every_row, int64_t now_micros,
                     Version tombstone_horizon, CompactionShares* shares);
  // Replaces the row at `slot` with the result `shares` holds for it, when
  // it holds one for this table's GC rule of the row's family (CompactRow
  // would compute the same bytes): true when it did. Reads only the row's
  // record, not its cells.
  bool TakeCompacted(Tablet& tablet, const Tablet::Slot& slot,
                     int64_t now_micros, const CompactionShares* shares);
  // Compacts the row at `slot` in place. A row left with nothing is added to
  // `*emptied` instead (for the caller to remove once done with the slots);
  // one that keeps tombstones newer than the horizon stays marked.
  void CompactRow(Tablet& tablet, const Tablet::Slot& slot, int64_t now_micros,
                  Version tombstone_horizon, CompactionShares* shares,
                  std::vector<Tablet::Slot>* emptied);

  std::string id_;
  TableOptions options_;
  std::map<std::string, std::unique_ptr<FamilyEntry>, std::less<>> families_;
  std::vector<const FamilyEntry*> families_by_id_;  // null once dropped
  // FindFamily's last answer (writes name the same family again and again):
  // null, or an entry of families_. Cleared whenever one is dropped.
  mutable const FamilyEntry* last_family_ = nullptr;
  std::vector<std::unique_ptr<Tablet>> tablets_;  // sorted by start
  // For TabletIndex (see cluster/key_heads.h): the heads of the start keys
  // of tablets_[1..] (tablets_[0] starts at ""), after the prefix they all
  // share.
  std::vector<uint64_t> start_heads_;
  std::string start_prefix_;
  // Set when the schema changes (GC rules, dropped families): the next
  // compaction must visit every tablet, not only the dirty ones.
  bool schema_dirty_ = true;
  CommitHook commit_hook_;
  struct RangeTombstone {
    std::string prefix;
    Version version;
  };
  std::vector<RangeTombstone> range_tombstones_;
  std::vector<RowProbe> probes_;  // PrefetchRows'
  // The tablet of the last write: a hint for TabletStartOf (the node model
  // charges each write right after it).
  size_t written_tablet_ = 0;
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_TABLE_H_
