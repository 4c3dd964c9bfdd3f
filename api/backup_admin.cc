// TableAdminService's backup methods: CreateBackup, GetBackup, ListBackups,
// UpdateBackup, DeleteBackup, RestoreTable and CopyBackup, over the
// instance's Backups (instance/backups.h). Every operation finishes before
// its call returns and is recorded in the OperationsService.
#include <string>
#include <utility>

#include "api/backup_filter.h"
#include "api/convert.h"
#include "api/resource_names.h"
#include "api/table_admin_service.h"

namespace btsim::api {

namespace admin = ::google::bigtable::admin::v2;

namespace {

constexpr std::string_view kBackupPageTokenPrefix = "btsim-backups-after:";

google::protobuf::Timestamp ToProto(sim::Time t) {
  const int64_t nanos = t.time_since_epoch().count();
  google::protobuf::Timestamp out;
  int64_t seconds = nanos / 1000000000;
  int64_t rest = nanos % 1000000000;
  if (rest < 0) {
    rest += 1000000000;
    --seconds;
  }
  out.set_seconds(seconds);
  out.set_nanos(static_cast<int32_t>(rest));
  return out;
}

Result<sim::Time> FromProto(const google::protobuf::Timestamp& t,
                            std::string_view field) {
  if (t.nanos() < 0 || t.nanos() > 999999999) {
    return InvalidArgument(std::string(field) + ": nanos out of range");
  }
  return sim::Time(sim::Duration(t.seconds() * 1000000000 + t.nanos()));
}

void FillBackup(const std::string& instance, const instance::Backup& b,
                admin::Backup* out) {
  out->set_name(instance + "/clusters/" + b.cluster + "/backups/" + b.id);
  out->set_source_table(instance + "/tables/" + b.source_table);
  if (!b.source_backup.empty()) {
    out->set_source_backup(instance + "/clusters/" + b.source_cluster +
                           "/backups/" + b.source_backup);
  }
  *out->mutable_expire_time() = ToProto(b.expire_time);
  *out->mutable_start_time() = ToProto(b.start_time);
  *out->mutable_end_time() = ToProto(b.end_time);
  out->set_size_bytes(b.size_bytes);
  out->set_state(admin::Backup::READY);
  out->set_backup_type(admin::Backup::STANDARD);
}

void FillBackupInfo(const admin::Backup& b, admin::BackupInfo* out) {
  out->set_backup(b.name());
  *out->mutable_start_time() = b.start_time();
  *out->mutable_end_time() = b.end_time();
  out->set_source_table(b.source_table());
  out->set_source_backup(b.source_backup());
}

// A request's Backup.backup_type: btsim makes standard backups only.
Status StandardOnly(const admin::Backup& backup, std::string_view field) {
  if (backup.backup_type() == admin::Backup::HOT) {
    return Unimplemented(std::string(field) +
                         ": HOT backups are not supported by btsim");
  }
  return OkStatus();
}

admin::OperationProgress Done(const google::protobuf::Timestamp& start) {
  admin::OperationProgress progress;
  progress.set_progress_percent(100);
  *progress.mutable_start_time() = start;
  *progress.mutable_end_time() = OperationTime();
  return progress;
}

}  // namespace

grpc::Status TableAdminService::CreateBackup(
    grpc::ServerContext*, const admin::CreateBackupRequest* request,
    google::longrunning::Operation* response) {
  auto parent = ParseClusterName(request->parent(), "parent");
  if (!parent.ok()) return ToGrpc(parent.status());
  if (!request->has_backup()) {
    return ToGrpc(InvalidArgument("backup: required"));
  }
  if (Status s = StandardOnly(request->backup(), "backup.backup_type");
      !s.ok()) {
    return ToGrpc(s);
  }
  auto source =
      ParseTableName(request->backup().source_table(), "backup.source_table");
  if (!source.ok()) return ToGrpc(source.status());
  if (source->instance != parent->instance) {
    return ToGrpc(InvalidArgument(
        "backup.source_table: must be a table of the cluster's instance"));
  }
  if (!request->backup().has_expire_time()) {
    return ToGrpc(InvalidArgument("backup.expire_time: required"));
  }
  auto expire =
      FromProto(request->backup().expire_time(), "backup.expire_time");
  if (!expire.ok()) return ToGrpc(expire.status());
  admin::Backup backup;
  {
    auto locked = registry_.Lock(parent->instance);
    if (!locked.ok()) return ToGrpc(locked.status());
    auto made = locked->instance->backups().Create(
        parent->id, request->backup_id(), source->table_id, *expire,
        "backup_id", "backup.expire_time");
    if (!made.ok()) return ToGrpc(made.status());
    FillBackup(parent->instance, **made, &backup);
  }
  admin::CreateBackupMetadata metadata;
  metadata.set_name(backup.name());
  metadata.set_source_table(backup.source_table());
  *metadata.mutable_start_time() = backup.start_time();
  *metadata.mutable_end_time() = backup.end_time();
  *response = operations_.Finish(backup.name(), backup, &metadata);
  return grpc::Status::OK;
}

grpc::Status TableAdminService::GetBackup(
    grpc::ServerContext*, const admin::GetBackupRequest* request,
    admin::Backup* response) {
  auto name = ParseBackupName(request->name(), "name");
  if (!name.ok()) return ToGrpc(name.status());
  auto locked = registry_.Lock(name->instance);
  if (!locked.ok()) return ToGrpc(locked.status());
  auto found = locked->instance->backups().Get(name->cluster, name->backup);
  if (!found.ok()) return ToGrpc(found.status());
  FillBackup(name->instance, **found, response);
  return grpc::Status::OK;
}

grpc::Status TableAdminService::ListBackups(
    grpc::ServerContext*, const admin::ListBackupsRequest* request,
    admin::ListBackupsResponse* response) {
  auto parent = ParseClusterNameOrAll(request->parent(), "parent");
  if (!parent.ok()) return ToGrpc(parent.status());
  if (request->page_size() < 0) {
    return ToGrpc(InvalidArgument("page_size: must not be negative"));
  }
  const std::string& order = request->order_by();
  if (!order.empty() && order != "name" && order != "name asc") {
    return ToGrpc(InvalidArgument(
        "order_by: btsim lists backups by name only (\"name\" or "
        "\"name asc\")"));
  }
  auto filter = BackupFilter::Parse(request->filter());
  if (!filter.ok()) return ToGrpc(filter.status());
  // A page token is kBackupPageTokenPrefix + the name of the last backup
  // returned.
  std::string after;
  if (!request->page_token().empty()) {
    if (!request->page_token().starts_with(kBackupPageTokenPrefix)) {
      return ToGrpc(
          InvalidArgument("page_token: not a token returned by ListBackups"));
    }
    after = request->page_token().substr(kBackupPageTokenPrefix.size());
  }
  auto locked = registry_.Lock(parent->instance);
  if (!locked.ok()) return ToGrpc(locked.status());
  instance::Instance& instance = *locked->instance;
  const bool all = parent->id == kAllClusters;
  if (!all && instance.replicas().Find(parent->id) == nullptr) {
    return ToGrpc(NotFound("parent: cluster " + QuoteForError(parent->id) +
                           " not found"));
  }
  int count = 0;
  std::string last;
  for (const instance::Backup* b :
       instance.backups().List(all ? std::string_view() : parent->id)) {
    admin::Backup backup;
    FillBackup(parent->instance, *b, &backup);
    if (!after.empty() && backup.name() <= after) continue;
    if (!filter->Matches(backup)) continue;
    if (request->page_size() > 0 && count == request->page_size()) {
      response->set_next_page_token(std::string(kBackupPageTokenPrefix) + last);
      break;
    }
    last = backup.name();
    *response->add_backups() = std::move(backup);
    ++count;
  }
  return grpc::Status::OK;
}

grpc::Status TableAdminService::UpdateBackup(
    grpc::ServerContext*, const admin::UpdateBackupRequest* request,
    admin::Backup* response) {
  auto name = ParseBackupName(request->backup().name(), "backup.name");
  if (!name.ok()) return ToGrpc(name.status());
  if (request->update_mask().paths().empty()) {
    return ToGrpc(InvalidArgument(
        "update_mask: required; only 'expire_time' can be updated"));
  }
  for (const std::string& path : request->update_mask().paths()) {
    if (path != "expire_time") {
      return ToGrpc(InvalidArgument("update_mask: " + QuoteForError(path) +
                                    " cannot be updated; only "
                                    "'expire_time' can"));
    }
  }
  auto expire =
      FromProto(request->backup().expire_time(), "backup.expire_time");
  if (!expire.ok()) return ToGrpc(expire.status());
  auto locked = registry_.Lock(name->instance);
  if (!locked.ok()) return ToGrpc(locked.status());
  auto updated = locked->instance->backups().UpdateExpireTime(
      name->cluster, name->backup, *expire, "backup.expire_time");
  if (!updated.ok()) return ToGrpc(updated.status());
  FillBackup(name->instance, **updated, response);
  return grpc::Status::OK;
}

grpc::Status TableAdminService::DeleteBackup(
    grpc::ServerContext*, const admin::DeleteBackupRequest* request,
    google::protobuf::Empty*) {
  auto name = ParseBackupName(request->name(), "name");
  if (!name.ok()) return ToGrpc(name.status());
  auto locked = registry_.Lock(name->instance);
  if (!locked.ok()) return ToGrpc(locked.status());
  return ToGrpc(
      locked->instance->backups().Delete(name->cluster, name->backup));
}

grpc::Status TableAdminService::RestoreTable(
    grpc::ServerContext*, const admin::RestoreTableRequest* request,
    google::longrunning::Operation* response) {
  const google::protobuf::Timestamp start = OperationTime();
  auto parent = ParseInstanceName(request->parent(), "parent");
  if (!parent.ok()) return ToGrpc(parent.status());
  if (Status s = cluster::ValidateTableId(request->table_id()); !s.ok()) {
    return ToGrpc(s);
  }
  if (request->source_case() != admin::RestoreTableRequest::kBackup) {
    return ToGrpc(InvalidArgument("backup: required"));
  }
  auto backup_name = ParseBackupName(request->backup(), "backup");
  if (!backup_name.ok()) return ToGrpc(backup_name.status());
  if (backup_name->instance != *parent) {
    return ToGrpc(Unimplemented(
        "backup: btsim restores a backup only into its own instance"));
  }
  const std::string table_name = *parent + "/tables/" + request->table_id();
  admin::Table table;
  admin::Backup backup;
  {
    auto locked = registry_.Lock(*parent);
    if (!locked.ok()) return ToGrpc(locked.status());
    instance::Backups& backups = locked->instance->backups();
    auto found = backups.Get(backup_name->cluster, backup_name->backup);
    if (!found.ok()) return ToGrpc(found.status());
    FillBackup(*parent, **found, &backup);
    if (Status s = backups.Restore(backup_name->cluster, backup_name->backup,
                                   request->table_id());
        !s.ok()) {
      return ToGrpc(s);
    }
  }
  table.set_name(table_name);
  table.mutable_restore_info()->set_source_type(admin::BACKUP);
  FillBackupInfo(backup, table.mutable_restore_info()->mutable_backup_info());
  admin::RestoreTableMetadata metadata;
  metadata.set_name(table_name);
  metadata.set_source_type(admin::BACKUP);
  FillBackupInfo(backup, metadata.mutable_backup_info());
  *metadata.mutable_progress() = Done(start);
  *response = operations_.Finish(table_name, table, &metadata);
  return grpc::Status::OK;
}

grpc::Status TableAdminService::CopyBackup(
    grpc::ServerContext*, const admin::CopyBackupRequest* request,
    google::longrunning::Operation* response) {
  const google::protobuf::Timestamp start = OperationTime();
  auto parent = ParseClusterName(request->parent(), "parent");
  if (!parent.ok()) return ToGrpc(parent.status());
  auto source = ParseBackupName(request->source_backup(), "source_backup");
  if (!source.ok()) return ToGrpc(source.status());
  if (source->instance != parent->instance) {
    return ToGrpc(Unimplemented(
        "source_backup: btsim copies backups only within one instance"));
  }
  if (!request->has_expire_time()) {
    return ToGrpc(InvalidArgument("expire_time: required"));
  }
  auto expire = FromProto(request->expire_time(), "expire_time");
  if (!expire.ok()) return ToGrpc(expire.status());
  admin::Backup copy;
  admin::Backup original;
  {
    auto locked = registry_.Lock(parent->instance);
    if (!locked.ok()) return ToGrpc(locked.status());
    instance::Backups& backups = locked->instance->backups();
    auto made =
        backups.Copy(source->cluster, source->backup, parent->id,
                     request->backup_id(), *expire, "backup_id", "expire_time");
    if (!made.ok()) return ToGrpc(made.status());
    FillBackup(parent->instance, **made, &copy);
    FillBackup(parent->instance, **backups.Get(source->cluster, source->backup),
               &original);
  }
  admin::CopyBackupMetadata metadata;
  metadata.set_name(copy.name());
  FillBackupInfo(original, metadata.mutable_source_backup_info());
  *metadata.mutable_progress() = Done(start);
  *response = operations_.Finish(copy.name(), copy, &metadata);
  return grpc::Status::OK;
}

}  // namespace btsim::api
