// InstanceJournal: what an Instance reports to a persistent store (the
// file-backed one of `btsim serve --data-dir` is in durable/): the
// replication journal's commits and applies, every change of the
// instance's metadata, and its backups. Called on the instance's thread, under
// its owner's serialisation, right after each change, in the order they happen.
#ifndef BTSIM_INSTANCE_JOURNAL_H_
#define BTSIM_INSTANCE_JOURNAL_H_

#include <string>
#include <string_view>

#include "cluster/version.h"
#include "replication/journal.h"

namespace btsim::instance {

class Instance;
struct Backup;

enum class BackupChange {
  kCreated,  // from its cluster's table, now
  kCopied,   // from backup (source_cluster, source_backup)
  kExpireTimeChanged,
};

class InstanceJournal : public replication::ReplicationJournal {
 public:
  // A cluster was added or removed or its node count changed, an app
  // profile was created, updated or deleted, or a table's deletion
  // protection changed. `instance` is in its new state (Clusters(),
  // profiles(), ProtectedTables()).
  virtual void OnMetadataChanged(const Instance& instance) = 0;
  // Backup `backup` was created or copied (right after: a created one
  // holds the table as its cluster has it at this point of the journal),
  // or its expire time changed.
  virtual void OnBackupChanged(const Backup& backup, BackupChange change) = 0;
  // Backup (cluster, id) was deleted: by a call, or expired. (The backups
  // of a removed cluster go with it, which OnMetadataChanged reports.)
  virtual void OnBackupDeleted(std::string_view cluster,
                               std::string_view id) = 0;
  // Table `table` was restored from backup (cluster, id) on every cluster
  // at `version`.
  virtual void OnTableRestored(std::string_view cluster, std::string_view id,
                               const std::string& table,
                               cluster::Version version) = 0;
};

}  // namespace btsim::instance

#endif  // BTSIM_INSTANCE_JOURNAL_H_
