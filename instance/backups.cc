#include "instance/backups.h"

#include <string>
#include <utility>

#include "cluster/cluster.h"

namespace btsim::instance {
namespace {

std::string BackupLabel(std::string_view cluster, std::string_view id) {
  return "backup " + QuoteForError(id) + " of cluster " +
         QuoteForError(cluster);
}

}  // namespace

Backups::Backups(replication::Replicas& replicas, sim::Scheduler& scheduler)
    : replicas_(replicas), scheduler_(scheduler) {}

Backups::~Backups() {
  if (sweep_armed_) scheduler_.Cancel(sweep_task_);
}

Status Backups::CheckExpireTime(sim::Time expire_time, sim::Time created,
                                std::string_view field) const {
  if (expire_time < created + kMinBackupRetention ||
      expire_time > created + kMaxBackupRetention) {
    return InvalidArgument(std::string(field) +
                           ": must be at least 6 hours and at most 90 days "
                           "after the backup's creation");
  }
  return OkStatus();
}

Result<const Backup*> Backups::Create(std::string_view cluster,
                                      std::string_view id,
                                      std::string_view table,
                                      sim::Time expire_time,
                                      std::string_view id_field,
                                      std::string_view expire_field) {
  BTSIM_RETURN_IF_ERROR(cluster::ValidateBackupId(id, id_field));
  const sim::Time now = scheduler_.Now();
  BTSIM_RETURN_IF_ERROR(CheckExpireTime(expire_time, now, expire_field));
  bool down = false;
  cluster::Cluster* c = replicas_.Find(cluster, &down);
  if (c == nullptr) {
    return NotFound("cluster " + QuoteForError(cluster) + " not found");
  }
  if (down) {
    return Unavailable("cluster " + QuoteForError(cluster) +
                       " is down; it cannot make a backup");
  }
  BTSIM_ASSIGN_OR_RETURN(const cluster::Table* source, c->GetTable(table));
  Backup backup;
  backup.cluster = std::string(cluster);
  backup.id = std::string(id);
  backup.source_table = std::string(table);
  backup.start_time = now;
  backup.end_time = now;
  backup.expire_time = expire_time;
  backup.size_bytes = source->Stats().bytes;
  backup.data = source->Snapshot(std::string(table));
  BTSIM_ASSIGN_OR_RETURN(const Backup* made, Add(std::move(backup)));
  if (journal_ != nullptr)
    journal_->OnBackupChanged(*made, BackupChange::kCreated);
  return made;
}

Result<const Backup*> Backups::Copy(std::string_view source_cluster,
                                    std::string_view source_id,
                                    std::string_view cluster,
                                    std::string_view id, sim::Time expire_time,
                                    std::string_view id_field,
                                    std::string_view expire_field) {
  BTSIM_RETURN_IF_ERROR(cluster::ValidateBackupId(id, id_field));
  BTSIM_RETURN_IF_ERROR(
      CheckExpireTime(expire_time, scheduler_.Now(), expire_field));
  if (replicas_.Find(cluster) == nullptr) {
    return NotFound("cluster " + QuoteForError(cluster) + " not found");
  }
  BTSIM_ASSIGN_OR_RETURN(const Backup* source, Get(source_cluster, source_id));
  Backup copy = *source;
  copy.cluster = std::string(cluster);
  copy.id = std::string(id);
  copy.source_cluster = source->cluster;
  copy.source_backup = source->id;
  copy.expire_time = expire_time;
  BTSIM_ASSIGN_OR_RETURN(const Backup* made, Add(std::move(copy)));
  if (journal_ != nullptr)
    journal_->OnBackupChanged(*made, BackupChange::kCopied);
  return made;
}

Result<const Backup*> Backups::Add(Backup backup) {
  Key key(backup.cluster, backup.id);
  if (backups_.contains(key)) {
    return AlreadyExists(BackupLabel(backup.cluster, backup.id) +
                         " already exists");
  }
  auto [it, inserted] = backups_.emplace(std::move(key), std::move(backup));
  ArmSweep();
  return &it->second;
}

Result<const Backup*> Backups::Get(std::string_view cluster,
                                   std::string_view id) const {
  auto it = backups_.find(Key(cluster, id));
  if (it == backups_.end()) {
    return NotFound(BackupLabel(cluster, id) + " not found");
  }
  return &it->second;
}

std::vector<const Backup*> Backups::List(std::string_view cluster) const {
  std::vector<const Backup*> out;
  for (const auto& [key, backup] : backups_) {
    if (cluster.empty() || key.first == cluster) out.push_back(&backup);
  }
  return out;
}

Result<const Backup*> Backups::UpdateExpireTime(std::string_view cluster,
                                                std::string_view id,
                                                sim::Time expire_time,
                                                std::string_view expire_field) {
  auto it = backups_.find(Key(cluster, id));
  if (it == backups_.end()) {
    return NotFound(BackupLabel(cluster, id) + " not found");
  }
  if (expire_time <= scheduler_.Now()) {
    return InvalidArgument(std::string(expire_field) +
                           ": must be in the future");
  }
  BTSIM_RETURN_IF_ERROR(
      CheckExpireTime(expire_time, it->second.start_time, expire_field));
  it->second.expire_time = expire_time;
  if (journal_ != nullptr) {
    journal_->OnBackupChanged(it->second, BackupChange::kExpireTimeChanged);
  }
  return &it->second;
}

Status Backups::Delete(std::string_view cluster, std::string_view id) {
  auto it = backups_.find(Key(cluster, id));
  if (it == backups_.end()) {
    return NotFound(BackupLabel(cluster, id) + " not found");
  }
  backups_.erase(it);
  if (journal_ != nullptr) journal_->OnBackupDeleted(cluster, id);
  return OkStatus();
}

Status Backups::Restore(std::string_view cluster, std::string_view id,
                        const std::string& table) {
  BTSIM_ASSIGN_OR_RETURN(const Backup* backup, Get(cluster, id));
  // The first live cluster commits the creation; every other cluster
  // holds the table from the same version on.
  std::string first;
  for (const std::string& c : replicas_.ClusterIds()) {
    if (!replicas_.IsDown(c)) {
      first = c;
      break;
    }
  }
  if (first.empty()) {
    return Unavailable("every cluster is down; no table can be restored");
  }
  // Every cluster takes the table, or none does (a table on some clusters
  // only would be in no journal).
  for (const std::string& c : replicas_.ClusterIds()) {
    BTSIM_RETURN_IF_ERROR(replicas_.Find(c)->CanRestoreTable(table));
  }
  cluster::Cluster* origin = replicas_.Find(first);
  replicas_.OrderAfterEverything(first);
  BTSIM_ASSIGN_OR_RETURN(const cluster::Version version,
                         origin->RestoreTable(table, *backup->data));
  for (const std::string& c : replicas_.ClusterIds()) {
    if (c == first) continue;
    // Checked above: this cannot fail.
    BTSIM_RETURN_IF_ERROR(replicas_.Find(c)
                              ->RestoreTable(table, *backup->data, version)
                              .status());
  }
  if (journal_ != nullptr) {
    journal_->OnTableRestored(cluster, id, table, version);
  }
  return OkStatus();
}

void Backups::DropCluster(std::string_view cluster) {
  std::erase_if(backups_, [&](const auto& entry) {
    return entry.first.first == cluster;
  });
}

void Backups::Sweep() {
  // During a replay the journal says which backups expired, and when.
  if (replicas_.replaying()) return;
  const sim::Time now = scheduler_.Now();
  for (auto it = backups_.begin(); it != backups_.end();) {
    if (it->second.expire_time > now) {
      ++it;
      continue;
    }
    if (journal_ != nullptr) {
      journal_->OnBackupDeleted(it->first.first, it->first.second);
    }
    it = backups_.erase(it);
  }
}

Status Backups::ReplayCreate(const Backup& backup) {
  cluster::Cluster* c = replicas_.Find(backup.cluster);
  if (c == nullptr) {
    return NotFound("cluster " + QuoteForError(backup.cluster) + " not found");
  }
  BTSIM_ASSIGN_OR_RETURN(const cluster::Table* source,
                         c->GetTable(backup.source_table));
  Backup made = backup;
  made.data = source->Snapshot(backup.source_table);
  return Add(std::move(made)).status();
}

Status Backups::ReplayCopy(const Backup& backup) {
  if (replicas_.Find(backup.cluster) == nullptr) {
    return NotFound("cluster " + QuoteForError(backup.cluster) + " not found");
  }
  BTSIM_ASSIGN_OR_RETURN(const Backup* source,
                         Get(backup.source_cluster, backup.source_backup));
  Backup copy = backup;
  copy.data = source->data;
  return Add(std::move(copy)).status();
}

Status Backups::ReplayAdd(Backup backup) {
  if (backup.data == nullptr) {
    return InvalidArgument(BackupLabel(backup.cluster, backup.id) +
                           " has no data");
  }
  return Add(std::move(backup)).status();
}

Status Backups::ReplayExpireTime(std::string_view cluster, std::string_view id,
                                 sim::Time expire_time) {
  auto it = backups_.find(Key(cluster, id));
  if (it == backups_.end()) {
    return NotFound(BackupLabel(cluster, id) + " not found");
  }
  it->second.expire_time = expire_time;
  return OkStatus();
}

Status Backups::ReplayRestore(std::string_view cluster, std::string_view id,
                              const std::string& table,
                              cluster::Version version) {
  BTSIM_ASSIGN_OR_RETURN(const Backup* backup, Get(cluster, id));
  for (const std::string& c : replicas_.ClusterIds()) {
    BTSIM_RETURN_IF_ERROR(replicas_.Find(c)
                              ->RestoreTable(table, *backup->data, version)
                              .status());
  }
  return OkStatus();
}

void Backups::ArmSweep() {
  if (sweep_armed_ || backups_.empty()) return;
  sweep_armed_ = true;
  sweep_task_ = scheduler_.RunAfter(kBackupSweepInterval, [this] {
    sweep_armed_ = false;
    Sweep();
    ArmSweep();
  });
}

}  // namespace btsim::instance
