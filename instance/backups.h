// Backups: the backups of an instance's clusters.
//
// A backup belongs to one cluster and holds one table's schema and rows as
// that cluster had applied them when the backup was made: under
// replication, a lagging cluster's backup lacks the writes it had not yet
// received (docs/backups.md). Making a backup is instantaneous (READY at
// once). Its rows are shared with the table (cluster::Table::Snapshot), not
// copied; so are a copy's with its source and a restored table's with its
// backup.
//
// Expired backups are deleted by a sweep that runs every
// kBackupSweepInterval on the instance's scheduler while any backup exists:
// in virtual time under `btsim run`, on the wall clock under `btsim serve`.
//
// Not thread-safe: used under the instance's serialisation.
#ifndef BTSIM_INSTANCE_BACKUPS_H_
#define BTSIM_INSTANCE_BACKUPS_H_

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "base/result.h"
#include "cluster/table.h"
#include "instance/journal.h"
#include "replication/replicas.h"
#include "sim/scheduler.h"

namespace btsim::instance {

// Bigtable's bounds on a backup's expire_time, from the backup's creation.
inline constexpr sim::Duration kMinBackupRetention = std::chrono::hours(6);
inline constexpr sim::Duration kMaxBackupRetention =
    std::chrono::hours(24 * 90);
// How often expired backups are looked for (btsim's choice; Bigtable
// deletes them "after" expiry without a published delay).
inline constexpr sim::Duration kBackupSweepInterval = std::chrono::minutes(1);

struct Backup {
  std::string cluster;
  std::string id;
  std::string source_table;  // a table id
  // For a copy: the backup copied (cluster, id); empty otherwise.
  std::string source_cluster;
  std::string source_backup;
  sim::Time start_time{};  // the data is as of this time
  sim::Time end_time{};
  sim::Time expire_time{};
  int64_t size_bytes = 0;
  std::shared_ptr<const cluster::Table> data;
};

class Backups {
 public:
  // Both must outlive this.
  Backups(replication::Replicas& replicas, sim::Scheduler& scheduler);
  ~Backups();
  Backups(const Backups&) = delete;
  Backups& operator=(const Backups&) = delete;

  // Backs up table `table` of cluster `cluster` now as `id`, to expire at
  // `expire_time`. INVALID_ARGUMENT naming `id_field` or `expire_field`;
  // NOT_FOUND for a missing cluster or table; UNAVAILABLE when the cluster
  // is down; ALREADY_EXISTS for a backup id the cluster already has.
  Result<const Backup*> Create(std::string_view cluster, std::string_view id,
                               std::string_view table, sim::Time expire_time,
                               std::string_view id_field,
                               std::string_view expire_field);
  // Copies backup `source_id` of `source_cluster` to `cluster` as `id` (the
  // same data and times, a new expire_time, bounded from now). Errors as
  // Create's, NOT_FOUND for a missing source.
  Result<const Backup*> Copy(std::string_view source_cluster,
                             std::string_view source_id,
                             std::string_view cluster, std::string_view id,
                             sim::Time expire_time, std::string_view id_field,
                             std::string_view expire_field);
  // NOT_FOUND when absent.
  Result<const Backup*> Get(std::string_view cluster,
                            std::string_view id) const;
  // Ordered by cluster then id; `cluster` empty: every cluster's.
  std::vector<const Backup*> List(std::string_view cluster) const;
  // A new expire_time: after now, and within the bounds from the backup's
  // start_time (INVALID_ARGUMENT naming `expire_field`).
  Result<const Backup*> UpdateExpireTime(std::string_view cluster,
                                         std::string_view id,
                                         sim::Time expire_time,
                                         std::string_view expire_field);
  Status Delete(std::string_view cluster, std::string_view id);
  // A new table `table` holding the backup's schema and rows, on every
  // cluster of the instance at once (as schema changes are); its later
  // writes replicate like any table's. Errors as cluster::Cluster's
  // RestoreTable, NOT_FOUND for a missing backup, UNAVAILABLE when every
  // cluster is down.
  Status Restore(std::string_view cluster, std::string_view id,
                 const std::string& table);
  // Deletes the backups of a removed cluster.
  void DropCluster(std::string_view cluster);
  // Deletes every backup whose expire_time has passed (none while the
  // replicas replay a journal).
  void Sweep();

  // Reports every change to `journal` (null: none, the default) from now
  // on. Must outlive its use.
  void set_journal(InstanceJournal* journal) { journal_ = journal; }

  // ---- Recovery (durable/): what a journal received, again ----
  // `backup`, made as then: created from its cluster's table as the
  // cluster holds it now, or copied from its source backup. Times and
  // sizes are `backup`'s; nothing is checked against the clock.
  // NOT_FOUND for a missing cluster, table or source backup;
  // ALREADY_EXISTS for a backup id the cluster already has.
  Status ReplayCreate(const Backup& backup);
  Status ReplayCopy(const Backup& backup);
  // `backup` as it is, with its data (a snapshot's).
  Status ReplayAdd(Backup backup);
  Status ReplayExpireTime(std::string_view cluster, std::string_view id,
                          sim::Time expire_time);
  // Restore's work at `version`, on every cluster.
  Status ReplayRestore(std::string_view cluster, std::string_view id,
                       const std::string& table, cluster::Version version);

 private:
  using Key = std::pair<std::string, std::string>;  // cluster, id
  Status CheckExpireTime(sim::Time expire_time, sim::Time created,
                         std::string_view field) const;
  Result<const Backup*> Add(Backup backup);
  void ArmSweep();

  replication::Replicas& replicas_;
  sim::Scheduler& scheduler_;
  InstanceJournal* journal_ = nullptr;
  std::map<Key, Backup> backups_;
  bool sweep_armed_ = false;
  sim::TaskId sweep_task_ = 0;
};

}  // namespace btsim::instance

#endif  // BTSIM_INSTANCE_BACKUPS_H_
