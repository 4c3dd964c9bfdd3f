// Backups: an operator backs a table up on one cluster (create_backup) or
// restores a backup to a new table (restore_table). A backup holds what
// its cluster had applied, so one taken on a lagging cluster lacks writes
// the others have; the create_backup event's label counts the rows on each
// cluster at that moment.
#include <chrono>
#include <string>

#include "cluster/cluster.h"
#include "instance/backups.h"
#include "scenarios/instance_config.h"
#include "scenarios/scenario_fields.h"
#include "scenarios/steps.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::scenario::v1;

constexpr sim::Duration kDefaultExpireAfter = std::chrono::hours(24 * 7);

// The number of rows of `table` on `cluster` with a live cell (0 when the
// table is missing).
int64_t LiveRows(cluster::Cluster& cluster, const std::string& table) {
  int64_t rows = 0;
  Status s = cluster.ReadRows(table, {}, [&](std::string_view, auto) {
    ++rows;
    return true;
  });
  return s.ok() ? rows : 0;
}

// ---- create_backup ----

Status ValidateCreateBackup(const v1::Step& step, const std::string& field,
                            StepScope& scope) {
  const v1::CreateBackup& b = step.create_backup();
  const std::string f = field + ".create_backup";
  BTSIM_RETURN_IF_ERROR(scope.ClusterNow(b.cluster(), f + ".cluster"));
  BTSIM_RETURN_IF_ERROR(scope.TableKnown(b.table(), f + ".table"));
  BTSIM_RETURN_IF_ERROR(cluster::ValidateBackupId(b.backup(), f + ".backup"));
  BTSIM_ASSIGN_OR_RETURN(sim::Duration expire,
                         ConfigDuration(b.expire_after(), f + ".expire_after"));
  if (b.has_expire_after() && (expire < instance::kMinBackupRetention ||
                               expire > instance::kMaxBackupRetention)) {
    return InvalidArgument(f +
                           ".expire_after: must be at least 6 hours and at "
                           "most 90 days");
  }
  return OkStatus();
}

void ApplyCreateBackup(const v1::Step& step, Event event, StepRun& run) {
  const v1::CreateBackup& b = step.create_backup();
  instance::Instance& instance = *run.context->instance;
  event.kind = EventKind::kCreateBackup;
  event.cluster = b.cluster();
  event.table = b.table();
  event.detail = b.backup();
  const sim::Duration expire_after =
      b.has_expire_after() ? ToDuration(b.expire_after()) : kDefaultExpireAfter;
  auto made = instance.backups().Create(
      b.cluster(), b.backup(), b.table(), instance.Now() + expire_after,
      "create_backup.backup", "create_backup.expire_after");
  // What each cluster holds now: the backup has its cluster's rows.
  std::string counts;
  for (const std::string& id : instance.replicas().ClusterIds()) {
    if (!counts.empty()) counts += ", ";
    counts +=
        id + " " +
        std::to_string(LiveRows(*instance.replicas().Find(id), b.table()));
  }
  Describe(event, "backup " + b.backup() + " of " + b.table() + " on " +
                      b.cluster() + " (rows: " + counts + ")");
  if (!made.ok()) Refused(event, made.status());
  run.AddEvent(std::move(event));
}

// ---- restore_table ----

Status ValidateRestoreTable(const v1::Step& step, const std::string& field,
                            StepScope& scope) {
  const v1::RestoreTable& r = step.restore_table();
  const std::string f = field + ".restore_table";
  BTSIM_RETURN_IF_ERROR(scope.ClusterNow(r.cluster(), f + ".cluster"));
  BTSIM_RETURN_IF_ERROR(cluster::ValidateBackupId(r.backup(), f + ".backup"));
  BTSIM_RETURN_IF_ERROR(cluster::ValidateTableId(r.table(), f + ".table"));
  if (scope.families.contains(r.table())) {
    return InvalidArgument(f + ".table: table '" + r.table() +
                           "' already exists");
  }
  return OkStatus();
}

void ApplyRestoreTable(const v1::Step& step, Event event, StepRun& run) {
  const v1::RestoreTable& r = step.restore_table();
  instance::Instance& instance = *run.context->instance;
  event.kind = EventKind::kRestoreTable;
  event.cluster = r.cluster();
  event.table = r.table();
  event.detail = r.backup();
  Status s = instance.backups().Restore(r.cluster(), r.backup(), r.table());
  std::string rows;
  if (s.ok()) {
    rows = " (" +
           std::to_string(LiveRows(
               *instance.replicas().Find(instance.replicas().ClusterIds()[0]),
               r.table())) +
           " rows)";
  }
  Describe(event, "restore " + r.table() + " from backup " + r.backup() +
                      " of " + r.cluster() + rows);
  if (!s.ok()) Refused(event, s);
  run.AddEvent(std::move(event));
}

constexpr StepKind kKinds[] = {
    {v1::Step::kCreateBackup, ValidateCreateBackup, ApplyCreateBackup, nullptr},
    {v1::Step::kRestoreTable, ValidateRestoreTable, ApplyRestoreTable, nullptr},
};

}  // namespace

std::span<const StepKind> BackupStepKinds() { return kKinds; }

}  // namespace btsim::scenarios
