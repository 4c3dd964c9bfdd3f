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
#include "cluster/commit_record.h"
#include "cluster/filter.h"
#include "cluster/gc_rule.h"
#include "cluster/image.h"
#include "cluster/mutation.h"
#include "cluster/row_set.h"
#include "cluster/row_sharing.h"
#include "cluster/schema.h"
#include "cluster/timestamp.h"
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

// When and as whom a write commits. Every mutation of one request commits
// at `version`; the mutations still take effect in order (a delete also
// erases the cells written earlier in the same request).
struct CommitContext {
  Version version = 0;
  Timestamp server_time;  // at millisecond granularity
};

struct ReadOptions {
  const RowSet* rows = nullptr;    // null: all rows
  const Filter* filter = nullptr;  // null: pass all
  bool reversed = false;
  // Skip rows up to and including this key (in scan order): resumes a read.
  std::optional<std::string> resume_after;
  // When > 0: examine at most this many stored rows, returned or not (a
  // filter may drop them all; rows passed again by overlapping ranges
  // count too). A read that stops for it sets *stopped_at to the furthest
  // row it passed in scan order, so that the caller can resume after it
  // (resume_after), e.g. once it has released a lock; otherwise it leaves
  // *stopped_at empty. Requires stopped_at when > 0.
  int64_t max_rows_examined = 0;
  std::optional<std::string>* stopped_at = nullptr;
};

// Receives one output row; return false to stop the read. Views are valid
// only during the call.
using RowVisitor =
    std::function<bool(std::string_view key, std::span<const CellView> cells)>;

// A cell written by ReadModifyWriteRow.
struct ModifiedCell {
  std::string family;
  std::string qualifier;
  Timestamp timestamp;
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

namespace internal {
struct GcCell;
struct GcPeriod;
struct SupersededCell;
class RowProbes;
class Tablet;
struct RowEdit;
struct RowSlot;
}  // namespace internal

class Table {
 public:
  // `splits` are the initial split keys (any order, duplicates ignored).
  Table(std::string id, TableOptions options,
        const std::vector<std::string>& splits);
  ~Table();
  // A deep copy: schema, rows (with their tombstones and versions) and
  // tablet boundaries. The commit hook is not copied.
  std::unique_ptr<Table> Clone() const;
  // The same copy named `id`, sharing this table's stored rows (which never
  // change once written) instead of copying them: a backup, or a table
  // restored from one. Holders of shared rows must be used by one thread at
  // a time (cluster/row_sharing.h).
  std::unique_ptr<Table> Snapshot(std::string id) const;
  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;

  const std::string& id() const { return id_; }

  // ---- Schema ----
  // Families sorted by name.
  std::vector<ColumnFamily> Families() const;
  bool HasFamily(std::string_view name) const;
  // Applies every modification in order, or none: NOT_FOUND, ALREADY_EXISTS
  // or INVALID_ARGUMENT (naming `modifications[i]`) when one is invalid.
  // `version` is the change's commit version (see ApplyReplicatedFamilies);
  // 0 for a table that never replicates.
  Status ModifyColumnFamilies(std::span<const FamilyModification> mods,
                              Version version = 0);
  // The version of the CreateTable that made this table (0: unknown). Row
  // changes older than it belong to an earlier table of the same id and
  // are ignored when replicated.
  Version created_version() const { return created_version_; }
  void set_created_version(Version version) { created_version_ = version; }

  // ---- Row operations ----
  // Applies mutations atomically: INVALID_ARGUMENT / NOT_FOUND naming
  // `mutations[i]` when one is invalid (then nothing changes).
  // `idempotency_token` (may be empty) goes to the commit hook.
  Status MutateRow(std::string_view key, std::span<const Mutation> mutations,
                   const CommitContext& commit,
                   std::string_view idempotency_token = {});
  // MutateRow for each entry, in order, all committed at `commit` (entries
  // for one row apply in order): one Status per entry. Each entry's
  // idempotency token goes to the commit hook (its window is the caller's).
  std::vector<Status> MutateRows(std::span<const RowMutations> rows,
                                 const CommitContext& commit);
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

  // ---- Reads ----
  void Read(const ReadOptions& options, sim::Rng& rng,
            const RowVisitor& visit) const;
  std::vector<KeySample> SampleRowKeys() const;

  // ---- Replication ----
  // Called after every local row commit with the applied mutations (server
  // timestamps, kServerTimestamp, not resolved yet: they mean
  // `server_time`), their version and what replicas may take instead of
  // applying them (cluster/row_sharing.h; none unless a single mutation)
  // and the write's idempotency token (empty: none). Empty by default.
  using CommitHook = std::function<void(
      std::string_view key, std::span<const Mutation>, Timestamp server_time,
      Version, RowShare, std::string_view idempotency_token)>;
  void set_commit_hook(CommitHook hook) { commit_hook_ = std::move(hook); }
  // Applies row changes committed elsewhere (kMutateRow records of this
  // table), in order, calling applied(i) after records[i]: mutations on
  // families this table lacks are skipped, no limit is enforced, and
  // nothing is reported to the commit hook. Changes older than a replicated
  // DropRowRange covering their row are ignored. A record's share is taken
  // when it applies here. `applied` must not change this table.
  void ApplyReplicated(std::span<const CommitRecord* const> records,
                       const std::function<void(size_t)>& applied);
  // Applies column family changes committed at `version` elsewhere, by
  // last-writer-wins on versions: each family (present or dropped)
  // remembers the version of its last change, and a change no newer than
  // that is skipped, so replicas converge whatever order changes arrive
  // in. Leniently: creating a present family updates its GC rule,
  // updating an absent one creates it, dropping an absent one only
  // records the drop. Replicated mutations of a family older than the
  // family's creation (an earlier family of the same name) are ignored.
  void ApplyReplicatedFamilies(std::span<const FamilyModification> mods,
                               Version version);
  // DropRowRange committed at `version` (locally or elsewhere): removes the
  // cells older than `version` from the rows starting with `prefix` ("":
  // every row) now, and remembers the range so that older changes arriving
  // later are ignored (until compaction passes the horizon).
  void DropRowRangeAt(std::string_view prefix, Version version);

  // ---- Compaction ----
  // Rewrites the rows that may have something to reclaim (written since
  // the last compaction, holding tombstones or versions above the horizon,
  // or subject to an age-based GC rule; every row after a schema change):
  // drops tombstones with version <= `tombstone_horizon` and the cells they
  // hide, data of dropped families, and the cells garbage collection
  // removes as judged at the versions up to the horizon
  // (cluster/internal/column_gc.h); then splits large tablets and merges
  // small ones. Requires every change with a version <= the horizon
  // applied; ages are judged at the judged versions' times, so at most the
  // horizon's, whatever `now`. With `shares` (may be null),
  // results are shared with the other clusters compacting at `now`
  // (cluster/row_sharing.h).
  void Compact(Timestamp now, Version tombstone_horizon,
               CompactionShares* shares = nullptr);

  // ---- Images (cluster/image.h; table_image.cc) ----
  // Everything Clone copies but the rows.
  TableImage Image() const;
  // Calls visit(key, encoded) for every stored row, in key order (rows
  // holding only tombstones too). Views are valid only during the call.
  void ForEachStoredRow(
      const std::function<void(std::string_view key, std::string_view encoded)>&
          visit) const;
  // A table with `image`'s state and no rows yet (see LoadRow), as a Clone
  // is: every row due for compaction, no commit hook. INVALID_ARGUMENT
  // naming what does not fit (ids, names, rules, tablet starts).
  static Result<std::unique_ptr<Table>> FromImage(const TableImage& image,
                                                  TableOptions options);
  // Stores a row as ForEachStoredRow gave it, into the tablet covering it,
  // without the row size limit and reporting nothing to the commit hook.
  // INVALID_ARGUMENT when `key` is empty, over 4 KiB, stored already or
  // not after the previous key LoadRow stored, or when `encoded` fails
  // CheckRowEncoding for the family ids this table has handed out (then
  // nothing changes).
  Status LoadRow(std::string_view key, std::string_view encoded);

  // ---- Statistics ----
  TableStats Stats() const;
  // True when both tables hold the same id, families (names, ids and GC
  // rules) and rows (keys and encodings): then every read of one returns
  // what the same read of the other does. Tablet boundaries, compaction
  // marks and remembered DropRowRange horizons are not compared. False for
  // some tables that read alike: the same cells stored under different
  // family ids.
  bool SameContents(const Table& other) const;
  // The start key of the tablet that holds `key` now ("" for the first
  // tablet). Changes only when that tablet splits or merges.
  const std::string& TabletStartOf(std::string_view key) const;
  // sim::StableHash(TabletStartOf(key), seed), computed once per tablet
  // and seed in a row.
  uint64_t TabletStartHash(std::string_view key, uint64_t seed) const;

 private:
  // Clone or Snapshot.
  std::unique_ptr<Table> Copy(std::string id, bool share_rows) const;
  struct FamilyEntry {
    std::string name;
    uint32_t id;  // never reused, so a dropped family's data is unreachable
    GcRule gc_rule;
    Aggregate aggregate = Aggregate::kNone;  // fixed at creation
    Version created = 0;                     // the change that created it
    Version changed = 0;  // its last change (gc_rule's, from then on)
    // The rules in effect before `changed`, each from `since` until the
    // next one (oldest first): compaction judges each version by the rule
    // then in effect (cluster/internal/column_gc.h), and forgets one once
    // its successor is at or below the horizon.
    struct PastRule {
      Version since;
      GcRule rule;
    };
    std::vector<PastRule> past_rules;
  };
  using Tablets = std::vector<std::unique_ptr<internal::Tablet>>;

  // ---- Families (table.cc) ----
  const FamilyEntry* FindFamily(std::string_view name) const;
  const std::string* FamilyNameById(uint32_t id) const;
  // The id of the family `m` names (kNoFamily when it names none); nullopt
  // when this table lacks it.
  std::optional<uint32_t> FamilyIdOf(const Mutation& m) const;
  // INVALID_ARGUMENT / NOT_FOUND naming `mutations[i]` when one is invalid
  // (table_validate.cc).
  Status ValidateMutations(std::span<const Mutation> mutations) const;
  // The same for ReadModifyWriteRow's rules, naming `rules[i]`.
  Status ValidateRules(std::span<const ReadModifyWriteRule> rules) const;
  // The aggregate of each mutation's family into *out (one per mutation,
  // kNone where it has none or names none); leaves *out empty when this
  // table has no aggregate family.
  void AggregatesOf(std::span<const Mutation> mutations,
                    std::span<const uint32_t> family_ids,
                    std::vector<Aggregate>* out) const;
  // The error for a mutation or rule naming `family`, which this table
  // lacks: INVALID_ARGUMENT for "", else NOT_FOUND; naming `field`.
  Status MissingFamily(const std::string& field, std::string_view family) const;
  // Applies one valid modification, committed at `version`.
  void ApplyFamilyModification(const FamilyModification& m, Version version);
  // Whether a replicated change at `version` applies to mutation `m`: its
  // family exists here (kNoFamily: any) and is older than the change.
  std::optional<uint32_t> ReplicatedFamilyIdOf(const Mutation& m,
                                               Version version) const;

  // ---- Writes (table.cc, table_maintenance.cc) ----
  // The tablet that holds (or is to hold) `key`, and the key's slot in it,
  // from probe `probe` of probes_ when that is still exact (kNoProbe: none).
  static constexpr size_t kNoProbe = static_cast<size_t>(-1);
  void Locate(std::string_view key, size_t probe, size_t* tablet,
              internal::RowSlot* slot) const;
  // MutateRow, its key found by `probe`.
  Status Mutate(std::string_view key, std::span<const Mutation> mutations,
                const CommitContext& commit, size_t probe,
                std::string_view idempotency_token);
  // Applies valid `mutations` locally: enforces the row size limit and
  // reports to the commit hook.
  Status ApplyToRow(std::string_view key, std::span<const Mutation> mutations,
                    const CommitContext& commit, size_t probe,
                    std::string_view idempotency_token = {});
  // A replicated change of one row (ApplyReplicated).
  void ApplyReplicatedRow(const CommitRecord& record, size_t probe);
  // Remembers the cells a write to row `key` superseded (superseded_).
  void RecordSuperseded(std::string_view key,
                        std::span<const internal::SupersededCell> superseded);
  // Starts probes_ for `keys` (the rows of a batch of writes).
  void ProbeRows(std::span<const std::string_view> keys);
  // After every row write in tablet `ti`: a split if it grew too large.
  void AfterWrite(size_t ti);

  // ---- Tablets (table.cc) ----
  size_t TabletIndex(std::string_view key) const;
  const internal::Tablet& TabletFor(std::string_view key) const;
  // TabletFor(key), trying the tablet of the last write first.
  const internal::Tablet& TabletNearWrite(std::string_view key) const;
  // Recomputes start_heads_ and start_prefix_; call after tablets_ changes.
  void IndexTablets();
  void MaybeSplit(size_t tablet_index);
  void MergeSmallTablets();

  // ---- Reads (table_read.cc) ----
  // Live cells of a stored row, in canonical order, into `*out`; in
  // aggregate families the contributions of one timestamp as one cell, the
  // combined value (held in *folded).
  void LiveCells(const RowRecord& record, std::vector<LiveCell>* scratch,
                 std::vector<CellView>* out, std::string* folded) const;
  // The stored row of `key`; null when absent.
  const RowRecord* FindRow(std::string_view key) const;

  // ---- Compaction (table_maintenance.cc) ----
  // What compaction does to `row`: nothing unless `every_row` or the row
  // may need it; `shares` and the rest as for Compact.
  internal::RowEdit CompactRow(const RowRecord& row, bool every_row,
                               Timestamp now, Version tombstone_horizon,
                               CompactionShares* shares);
  struct Superseded;
  // Inserts into *cells, at their place in timestamp order, the superseded
  // cells of `column` (visible until the next version of their timestamp,
  // or until hidden), with -1 - (its index in `superseded`) at the same
  // place in *from.
  static void AddSuperseded(const RowData& row, const FamilyData& family,
                            const ColumnData& column,
                            const std::vector<Superseded>& superseded,
                            std::vector<internal::GcCell>* cells,
                            std::vector<ptrdiff_t>* from);
  // Whether `entry`'s current rule is the only one that judged the
  // versions up to `horizon` (no past rule remembered, no change above it).
  static bool RuleSettled(const FamilyEntry& entry, Version horizon);
  // The GC rules `entry` has had, oldest first: in *one when it has had
  // only its current rule, else in *many.
  static std::span<const internal::GcPeriod> PeriodsOf(
      const FamilyEntry& entry, internal::GcPeriod* one,
      std::vector<internal::GcPeriod>* many);

  std::string id_;
  TableOptions options_;
  std::map<std::string, std::unique_ptr<FamilyEntry>, std::less<>> families_;
  std::vector<const FamilyEntry*> families_by_id_;  // null once dropped
  // Whether any family ever created here has an aggregate (then writes
  // pass each family's aggregate to the row edits).
  bool has_aggregates_ = false;
  // The version of the latest drop of each family ever dropped.
  std::map<std::string, Version, std::less<>> dropped_families_;
  Version created_version_ = 0;
  // Cells that another version of the same timestamp replaced or beat, by
  // row key: garbage collection counts them for the versions they were
  // the cell at their timestamp (cluster/internal/column_gc.h), so
  // compaction keeps them until the horizon passes their successor.
  struct Superseded {
    uint32_t family_id;
    std::string qualifier;
    Timestamp timestamp;
    Version version;
    Version until;         // the version that superseded it
    bool garbage = false;  // found so by compaction (then forgotten)
  };
  std::map<std::string, std::vector<Superseded>, std::less<>> superseded_;
  // FindFamily's last answer (writes name the same family again and again):
  // null, or an entry of families_. Cleared whenever one is dropped.
  mutable const FamilyEntry* last_family_ = nullptr;
  Tablets tablets_;  // sorted by start
  // For TabletIndex (see cluster/internal/key_heads.h): the heads of the
  // start keys of tablets_[1..] (tablets_[0] starts at ""), after the
  // prefix they all share.
  std::vector<uint64_t> start_heads_;
  std::string start_prefix_;
  // Set when the schema changes (GC rules, dropped families): the next
  // compaction must visit every row, not only the dirty ones.
  bool schema_dirty_ = true;
  // The highest horizon compaction has judged GC through.
  Version judged_through_ = 0;
  CommitHook commit_hook_;
  struct RangeTombstone {
    std::string prefix;
    Version version;
  };
  std::vector<RangeTombstone> range_tombstones_;
  std::unique_ptr<internal::RowProbes> probes_;  // of the batch being applied
  std::vector<std::string_view> probe_keys_;     // scratch for ProbeRows
  // The tablet of the last write: a hint for TabletStartOf (the node model
  // charges each write right after it).
  size_t written_tablet_ = 0;
  // The key of the last row LoadRow stored ("": none yet).
  std::string last_loaded_;
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_TABLE_H_
