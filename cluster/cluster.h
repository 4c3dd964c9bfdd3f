// Cluster: one cluster's storage engine — its tables, its commit clock and
// its compaction. Assigns every write a commit Version from the injected
// Clock (a hybrid logical clock: strictly increasing even if the clock
// stalls) and serves Bigtable's table and row operations.
//
// Not thread-safe: callers serialise access (the API layer holds a lock; the
// simulator runs on one thread). The Clock must outlive the Cluster.
#ifndef BTSIM_CLUSTER_CLUSTER_H_
#define BTSIM_CLUSTER_CLUSTER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"
#include "cluster/commit_record.h"
#include "cluster/idempotency.h"
#include "cluster/image.h"
#include "cluster/table.h"
#include "sim/clock.h"
#include "sim/fingerprint.h"
#include "sim/rng.h"

namespace btsim::cluster {

struct ClusterOptions {
  uint32_t origin = 0;  // this cluster's index in version numbers (0-255)
  TableOptions table;
};

class Cluster {
 public:
  Cluster(const sim::Clock& clock, sim::Rng rng, ClusterOptions options);

  // ---- Tables ----
  // ALREADY_EXISTS, or INVALID_ARGUMENT naming the field.
  Status CreateTable(const std::string& id,
                     std::span<const FamilyModification> families,
                     const std::vector<std::string>& splits);
  Status DeleteTable(std::string_view id);
  // A new table `id` holding `source`'s schema and rows, sharing its stored
  // rows (Table::Snapshot), created at `version` (0: a new commit version
  // here; an instance restores a table on every cluster at one version).
  // Returns that version. Errors as CreateTable's. Nothing is reported to
  // the commit observer.
  // What RestoreTable(id, ...) would refuse with, without changing
  // anything: the table id, ALREADY_EXISTS, the table limit.
  Status CanRestoreTable(const std::string& id) const;
  Result<Version> RestoreTable(const std::string& id, const Table& source,
                               Version version = 0);
  // Table::ModifyColumnFamilies, reported to the commit observer.
  Status ModifyColumnFamilies(std::string_view table,
                              std::span<const FamilyModification> mods);
  // NOT_FOUND "table ... not found" when absent.
  Result<Table*> GetTable(std::string_view id);
  Result<const Table*> GetTable(std::string_view id) const;
  std::vector<std::string> ListTables() const;  // sorted
  // Changes whenever a table is created or deleted (by a call, by
  // replication or by CopyDataFrom): a Table* from GetTable stays valid
  // while it is unchanged.
  uint64_t tables_version() const { return tables_version_; }

  // ---- Rows (see Table for the semantics) ----
  // With an idempotency token: IdempotencyMemory::Validate's errors, and a
  // replay of a write this cluster has applied (committed here or
  // replicated from elsewhere) is acknowledged without applying again.
  Status MutateRow(std::string_view table, std::string_view key,
                   std::span<const Mutation> mutations,
                   const Idempotency& idempotency = {});
  // A table-level error (NOT_FOUND, a request over the mutation limit) fails
  // the whole call; otherwise one Status per entry, in order. Entries'
  // idempotency as for MutateRow. With `applied`, also sets (*applied)[i]
  // to whether entry i was applied (not refused, nor acknowledged as a
  // replay).
  Result<std::vector<Status>> MutateRows(std::string_view table,
                                         std::span<const RowMutations> rows,
                                         std::vector<bool>* applied = nullptr);
  Result<bool> CheckAndMutateRow(std::string_view table, std::string_view key,
                                 const Filter* predicate,
                                 std::span<const Mutation> if_true,
                                 std::span<const Mutation> if_false);
  Result<std::vector<ModifiedCell>> ReadModifyWriteRow(
      std::string_view table, std::string_view key,
      std::span<const ReadModifyWriteRule> rules);
  Status DropRowRange(std::string_view table, std::string_view prefix);
  Status ReadRows(std::string_view table, const ReadOptions& options,
                  const RowVisitor& visit);

  // Compacts every table at the current time. With one cluster every
  // tombstone is safe to drop.
  void Compact();
  // Compacts, dropping only tombstones with version <= `horizon`: the
  // oldest version some other cluster may still send changes older than.
  // `shares` (may be null): see Table::Compact.
  void Compact(Version tombstone_horizon, CompactionShares* shares = nullptr);

  // ---- Replication ----
  // Receives every local commit (rows and schema), or nothing when null.
  // The observer must outlive the cluster or be reset first.
  void set_commit_observer(CommitObserver* observer) { observer_ = observer; }
  // Applies a record another cluster committed. Idempotent; never fails:
  // changes to a missing table or family are skipped. Schema changes
  // resolve by last-writer-wins on their versions, as cells do: a table
  // remembers its creation and deletions, a family its last change
  // (Table::ApplyReplicatedFamilies), and an older change never undoes a
  // newer one. (The admin layers also apply every schema change on every
  // cluster at once: with changes that only travel the logs, a table or
  // family deleted and created again on different clusters can still end
  // different when the records reach a third cluster out of order.)
  void ApplyReplicated(const CommitRecord& record);
  // ApplyReplicated for each of `records` in order, calling `applied(i)`
  // after records[i]; each run of row writes to one table goes to the table
  // as one batch (Table::ApplyReplicated). `applied` must not change this
  // cluster.
  void ApplyReplicatedBatch(std::span<const CommitRecord* const> records,
                            const std::function<void(size_t)>& applied);
  // Replaces every table with a deep copy of `source`'s, with the versions
  // of its schema (seeding a new replica). Nothing is reported to the
  // commit observer.
  void CopyDataFrom(const Cluster& source);
  // Receives each row AddContents adds: the table id, the row key and the
  // row's live cells in canonical order (what ReadRows returns without a
  // filter). Views are valid only during the call.
  using ContentsVisitor =
      std::function<void(std::string_view table, std::string_view key,
                         std::span<const CellView> cells)>;
  // Adds every table's schema and live cells, in canonical order, to `out`.
  // When `visit` is set, also passes it every row as it is added (tables in
  // id order, rows in key order): one pass for the fingerprint and a copy.
  void AddContents(sim::Fingerprint* out,
                   const ContentsVisitor& visit = nullptr) const;
  // True when AddContents would add the same to a fingerprint here as on
  // `other`: the same tables, each Table::SameContents (cheap for replicas
  // that share row versions). False for some clusters that read alike (see
  // Table::SameContents).
  bool SameContents(const Cluster& other) const;

  // ---- Images (cluster/image.h; cluster_image.cc) ----
  // Writes this cluster's complete state to `out`: ClusterImage, then each
  // table (id order) and its stored rows (key order). Left out, as
  // CopyDataFrom leaves them: the random source of sampling filters and
  // compaction's bookkeeping (a loaded table's next compaction visits
  // every row, as a Clone's does, to the same result).
  void WriteImage(ImageWriter& out) const;
  // Replaces this cluster's state by an image's: LoadImage (drops every
  // table), then LoadTable for each table, each followed by LoadRow for
  // its rows in key order. INVALID_ARGUMENT naming what does not fit: an
  // unknown table, a key not after the previous one, a row encoding that
  // does not decode, a family id out of range (a call refused changes
  // nothing). Loaded tables take this cluster's TableOptions; nothing is
  // reported to the commit observer.
  Status LoadImage(const ClusterImage& image);
  Status LoadTable(const TableImage& image);
  Status LoadRow(std::string_view table, std::string_view key,
                 std::string_view encoded);

  const sim::Clock& clock() const { return clock_; }
  // What this cluster's tables are made with.
  const TableOptions& table_options() const { return options_.table; }
  // The newest version this cluster committed: its replication log position.
  Version last_version() const { return last_version_; }
  // Moves the commit clock past `version`, a change seen from another
  // cluster (a hybrid logical clock): later commits here order after it.
  void Observe(Version version);

 private:
  // The next commit version: the clock's time in microseconds, bumped past
  // the previous version if the clock has not moved.
  CommitContext Commit();

  const sim::Clock& clock_;
  sim::Rng rng_;
  ClusterOptions options_;
  Version last_version_ = 0;
  void Report(CommitRecord record);
  // Remembers the idempotency token of a replicated row write.
  void RememberToken(const CommitRecord& record);
  IdempotencyMemory idempotency_;
  void HookTable(Table& table);

  std::map<std::string, std::unique_ptr<Table>, std::less<>> tables_;
  // The version of the latest deletion of each table ever deleted.
  std::map<std::string, Version, std::less<>> deleted_tables_;
  uint64_t tables_version_ = 0;
  CommitObserver* observer_ = nullptr;
};

// Table ids and family names: [_a-zA-Z0-9][-_.a-zA-Z0-9]*, bounded length.
// INVALID_ARGUMENT naming `field`.
Status ValidateTableId(std::string_view id,
                       std::string_view field = "table_id");
Status ValidateFamilyName(std::string_view name, const std::string& field);
// Backup ids: the table id rule.
Status ValidateBackupId(std::string_view id,
                        std::string_view field = "backup_id");

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_CLUSTER_H_
