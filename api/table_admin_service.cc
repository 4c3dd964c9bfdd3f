#include "api/table_admin_service.h"

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "api/convert.h"
#include "api/raw_messages.h"
#include "api/resource_names.h"
#include "replication/consistency_token.h"

namespace btsim::api {

namespace admin = ::google::bigtable::admin::v2;

namespace {

constexpr std::string_view kPageTokenPrefix = "btsim-tables-after:";

// How deep CreateTable and ModifyColumnFamilies requests may nest messages
// when parsed: past protobuf's default of 100, so that GcRuleFromProto sees
// a rule nested deeper than it takes and names its field.
constexpr int kMaxRequestDepth = 1000;

// Fills `out` with the parts of `table` that `view` selects. Caller holds
// the instance lock.
void FillTable(instance::Instance& instance, const cluster::Table& table,
               admin::Table::View view, admin::Table* out) {
  out->set_name(instance.name() + "/tables/" + table.id());
  const bool schema =
      view == admin::Table::SCHEMA_VIEW || view == admin::Table::FULL;
  const bool replication = view == admin::Table::REPLICATION_VIEW ||
                           view == admin::Table::ENCRYPTION_VIEW ||
                           view == admin::Table::FULL;
  if (schema) {
    for (const cluster::ColumnFamily& f : table.Families()) {
      admin::ColumnFamily& family = (*out->mutable_column_families())[f.name];
      GcRuleToProto(f.gc_rule, family.mutable_gc_rule());
      if (f.aggregate != cluster::Aggregate::kNone) {
        AggregateToProto(f.aggregate, family.mutable_value_type());
      }
    }
    out->set_granularity(admin::Table::MILLIS);
    out->set_deletion_protection(instance.DeletionProtected(table.id()));
  }
  if (replication) {
    for (const instance::ClusterConfig& c : instance.Clusters()) {
      (*out->mutable_cluster_states())[c.id].set_replication_state(
          instance.replicas().IsDown(c.id)
              ? admin::Table::ClusterState::UNPLANNED_MAINTENANCE
              : admin::Table::ClusterState::READY);
    }
  }
}

// What a table admin handler works on: the instance, locked, and one of
// its live clusters (schema changes made there replicate to the others).
struct LockedInstance {
  std::unique_lock<std::mutex> lock;
  instance::Instance* instance;
  cluster::Cluster* cluster;
  std::string cluster_id;

  // Makes the schema change just committed on `cluster` visible on every
  // cluster at once, as table admin changes are in Bigtable.
  void ApplySchemaEverywhere() {
    instance->replicas().ApplyNewestEverywhere(cluster_id);
  }
};

Result<LockedInstance> LockLiveCluster(InstanceRegistry& registry,
                                       const std::string& instance_name) {
  BTSIM_ASSIGN_OR_RETURN(InstanceRegistry::Locked locked,
                         registry.Lock(instance_name));
  BTSIM_ASSIGN_OR_RETURN(std::string id, locked.instance->AnyLiveClusterId());
  cluster::Cluster* cluster = locked.instance->replicas().Find(id);
  // A schema change made there orders after every write made anywhere.
  locked.instance->replicas().OrderAfterEverything(id);
  return LockedInstance{std::move(locked.lock), locked.instance, cluster,
                        std::move(id)};
}

// Fields of the public API that btsim does not declare (change streams,
// backup policies, ...) arrive as unknown
// fields. Refuse them rather than silently ignore them.
Status NoUnsupportedFields(const google::protobuf::Message& message,
                           const std::string& field) {
  const auto& unknown = message.GetReflection()->GetUnknownFields(message);
  if (unknown.empty()) return OkStatus();
  std::string numbers;
  for (int i = 0; i < unknown.field_count(); ++i) {
    if (i > 0) numbers += ", ";
    numbers += std::to_string(unknown.field(i).number());
  }
  return Unimplemented(field + ": field number(s) " + numbers +
                       " of this message are not supported by btsim");
}

// FAILED_PRECONDITION for deleting protected `table` (or part of it)
// through `field`.
Status Protected(const std::string& table, const std::string& field) {
  return FailedPrecondition(field + ": table '" + table +
                            "' is protected from deletion "
                            "(deletion_protection); turn it off with "
                            "UpdateTable first");
}

Status ValidView(admin::Table::View view, const char* field) {
  if (!admin::Table::View_IsValid(view)) {
    return InvalidArgument(std::string(field) + ": unknown view " +
                           std::to_string(static_cast<int>(view)));
  }
  return OkStatus();
}

}  // namespace

Status TableAdminService::DoCreateTable(
    const admin::CreateTableRequest* request, admin::Table* response) {
  auto parent = ParseInstanceName(request->parent(), "parent");
  if (!parent.ok()) return parent.status();
  // Everything that can be checked without the instance is, before it is
  // created on first use.
  BTSIM_RETURN_IF_ERROR(cluster::ValidateTableId(request->table_id()));
  if (Status s = NoUnsupportedFields(request->table(), "table"); !s.ok()) {
    return s;
  }
  if (request->table().granularity() == admin::Table::MICROS) {
    return InvalidArgument(
        "table.granularity: only MILLIS timestamp granularity is supported");
  }
  // Protobuf map order is unspecified: sort families by name.
  std::vector<std::string> names;
  for (const auto& [family, unused] : request->table().column_families()) {
    names.push_back(family);
  }
  std::sort(names.begin(), names.end());
  std::vector<cluster::FamilyModification> families;
  for (const std::string& family : names) {
    BTSIM_RETURN_IF_ERROR(
        cluster::ValidateFamilyName(family, "table.column_families"));
    if (Status s =
            NoUnsupportedFields(request->table().column_families().at(family),
                                "table.column_families['" + family + "']");
        !s.ok()) {
      return s;
    }
    const admin::ColumnFamily& proto =
        request->table().column_families().at(family);
    const std::string field = "table.column_families['" + family + "']";
    auto rule = GcRuleFromProto(proto.gc_rule(), field + ".gc_rule");
    if (!rule.ok()) return rule.status();
    auto aggregate =
        AggregateFromProto(proto.value_type(), field + ".value_type");
    if (!aggregate.ok()) return aggregate.status();
    if (*aggregate != cluster::Aggregate::kNone &&
        rule->kind != cluster::GcRule::Kind::kNone) {
      return Unimplemented(field +
                           ".gc_rule: btsim supports no garbage collection "
                           "rule on aggregate families (leave gc_rule empty)");
    }
    families.push_back(cluster::FamilyModification{
        family, cluster::FamilyModification::Kind::kCreate, *rule, *aggregate});
  }
  std::vector<std::string> splits;
  for (const auto& split : request->initial_splits()) {
    splits.push_back(split.key());
  }
  auto locked = LockLiveCluster(registry_, *parent);
  if (!locked.ok()) return locked.status();
  instance::Instance& instance = *locked->instance;
  cluster::Cluster& cluster = *locked->cluster;
  Status s = cluster.CreateTable(request->table_id(), families, splits);
  if (!s.ok()) return s;
  locked->ApplySchemaEverywhere();
  instance.SetDeletionProtection(request->table_id(),
                                 request->table().deletion_protection());
  FillTable(instance, **cluster.GetTable(request->table_id()),
            admin::Table::SCHEMA_VIEW, response);
  return OkStatus();
}

grpc::Status TableAdminService::ListTables(
    grpc::ServerContext*, const admin::ListTablesRequest* request,
    admin::ListTablesResponse* response) {
  auto parent = ParseInstanceName(request->parent(), "parent");
  if (!parent.ok()) return ToGrpc(parent.status());
  if (Status s = ValidView(request->view(), "view"); !s.ok()) return ToGrpc(s);
  if (request->page_size() < 0) {
    return ToGrpc(InvalidArgument("page_size: must not be negative"));
  }
  const admin::Table::View view =
      request->view() == admin::Table::VIEW_UNSPECIFIED
          ? admin::Table::NAME_ONLY
          : request->view();
  auto locked = LockLiveCluster(registry_, *parent);
  if (!locked.ok()) return ToGrpc(locked.status());
  instance::Instance& instance = *locked->instance;
  cluster::Cluster& cluster = *locked->cluster;
  // A page token is kPageTokenPrefix + the id of the last table returned.
  std::string after;
  if (!request->page_token().empty()) {
    if (request->page_token().rfind(kPageTokenPrefix, 0) != 0) {
      return ToGrpc(
          InvalidArgument("page_token: not a token returned by ListTables"));
    }
    after = request->page_token().substr(kPageTokenPrefix.size());
  }
  int count = 0;
  std::string last;
  for (const std::string& id : cluster.ListTables()) {
    if (!after.empty() && id <= after) continue;
    if (request->page_size() > 0 && count == request->page_size()) {
      response->set_next_page_token(std::string(kPageTokenPrefix) + last);
      break;
    }
    last = id;
    FillTable(instance, **cluster.GetTable(id), view, response->add_tables());
    ++count;
  }
  return grpc::Status::OK;
}

grpc::Status TableAdminService::GetTable(grpc::ServerContext*,
                                         const admin::GetTableRequest* request,
                                         admin::Table* response) {
  auto name = ParseTableName(request->name(), "name");
  if (!name.ok()) return ToGrpc(name.status());
  if (Status s = ValidView(request->view(), "view"); !s.ok()) return ToGrpc(s);
  const admin::Table::View view =
      request->view() == admin::Table::VIEW_UNSPECIFIED
          ? admin::Table::SCHEMA_VIEW
          : request->view();
  auto locked = LockLiveCluster(registry_, name->instance);
  if (!locked.ok()) return ToGrpc(locked.status());
  instance::Instance& instance = *locked->instance;
  cluster::Cluster& cluster = *locked->cluster;
  auto table = cluster.GetTable(name->table_id);
  if (!table.ok()) return ToGrpc(table.status());
  FillTable(instance, **table, view, response);
  return grpc::Status::OK;
}

grpc::Status TableAdminService::DeleteTable(
    grpc::ServerContext*, const admin::DeleteTableRequest* request,
    google::protobuf::Empty*) {
  auto name = ParseTableName(request->name(), "name");
  if (!name.ok()) return ToGrpc(name.status());
  auto locked = LockLiveCluster(registry_, name->instance);
  if (!locked.ok()) return ToGrpc(locked.status());
  if (locked->instance->DeletionProtected(name->table_id)) {
    return ToGrpc(Protected(name->full(), "name"));
  }
  Status s = locked->cluster->DeleteTable(name->table_id);
  if (s.ok()) locked->ApplySchemaEverywhere();
  return ToGrpc(s);
}

Status TableAdminService::DoModifyColumnFamilies(
    const admin::ModifyColumnFamiliesRequest* request, admin::Table* response) {
  auto name = ParseTableName(request->name(), "name");
  if (!name.ok()) return name.status();
  if (request->modifications_size() == 0) {
    return InvalidArgument(
        "modifications: at least one modification is required");
  }
  std::vector<cluster::FamilyModification> mods;
  for (int i = 0; i < request->modifications_size(); ++i) {
    const auto& m = request->modifications(i);
    const std::string field = "modifications[" + std::to_string(i) + "]";
    if (Status s = cluster::ValidateFamilyName(m.id(), field + ".id");
        !s.ok()) {
      return s;
    }
    cluster::FamilyModification mod;
    mod.name = m.id();
    switch (m.mod_case()) {
      case admin::ModifyColumnFamiliesRequest::Modification::kCreate: {
        if (Status s = NoUnsupportedFields(m.create(), field + ".create");
            !s.ok()) {
          return s;
        }
        auto rule =
            GcRuleFromProto(m.create().gc_rule(), field + ".create.gc_rule");
        if (!rule.ok()) return rule.status();
        auto aggregate = AggregateFromProto(m.create().value_type(),
                                            field + ".create.value_type");
        if (!aggregate.ok()) return aggregate.status();
        mod.kind = cluster::FamilyModification::Kind::kCreate;
        mod.gc_rule = *rule;
        mod.aggregate = *aggregate;
        break;
      }
      case admin::ModifyColumnFamiliesRequest::Modification::kUpdate: {
        if (Status s = NoUnsupportedFields(m.update(), field + ".update");
            !s.ok()) {
          return s;
        }
        // Only gc_rule is updatable; an empty mask means every field.
        if (m.update().has_value_type()) {
          return InvalidArgument(field +
                                 ".update.value_type: the value type of a "
                                 "column family is fixed when it is created");
        }
        for (const std::string& path : m.update_mask().paths()) {
          if (path != "gc_rule") {
            return InvalidArgument(field + ".update_mask: unsupported path '" +
                                   path + "'; only 'gc_rule' can be updated");
          }
        }
        auto rule =
            GcRuleFromProto(m.update().gc_rule(), field + ".update.gc_rule");
        if (!rule.ok()) return rule.status();
        mod.kind = cluster::FamilyModification::Kind::kUpdate;
        mod.gc_rule = *rule;
        break;
      }
      case admin::ModifyColumnFamiliesRequest::Modification::kDrop:
        if (!m.drop()) {
          return InvalidArgument(field + ".drop: must be true when set");
        }
        mod.kind = cluster::FamilyModification::Kind::kDrop;
        break;
      case admin::ModifyColumnFamiliesRequest::Modification::MOD_NOT_SET:
        return InvalidArgument(field +
                               ": one of create, update or drop is required");
    }
    mods.push_back(std::move(mod));
  }
  auto locked = LockLiveCluster(registry_, name->instance);
  if (!locked.ok()) return locked.status();
  instance::Instance& instance = *locked->instance;
  cluster::Cluster& cluster = *locked->cluster;
  if (instance.DeletionProtected(name->table_id)) {
    for (size_t i = 0; i < mods.size(); ++i) {
      if (mods[i].kind == cluster::FamilyModification::Kind::kDrop) {
        return Protected(name->full(),
                         "modifications[" + std::to_string(i) + "].drop");
      }
    }
  }
  if (Status s = cluster.ModifyColumnFamilies(name->table_id, mods); !s.ok()) {
    return s;
  }
  locked->ApplySchemaEverywhere();
  FillTable(instance, **cluster.GetTable(name->table_id),
            admin::Table::SCHEMA_VIEW, response);
  return OkStatus();
}

grpc::Status TableAdminService::UpdateTable(
    grpc::ServerContext*, const admin::UpdateTableRequest* request,
    google::longrunning::Operation* response) {
  const google::protobuf::Timestamp start = OperationTime();
  auto name = ParseTableName(request->table().name(), "table.name");
  if (!name.ok()) return ToGrpc(name.status());
  if (request->update_mask().paths().empty()) {
    return ToGrpc(InvalidArgument(
        "update_mask: required; btsim updates 'deletion_protection'"));
  }
  for (const std::string& path : request->update_mask().paths()) {
    if (path == "deletion_protection") continue;
    if (path == "change_stream_config" ||
        path == "change_stream_config.retention_period" ||
        path == "automated_backup_policy" ||
        path == "automated_backup_policy.retention_period" ||
        path == "automated_backup_policy.frequency" ||
        path == "row_key_schema" || path == "column_families") {
      return ToGrpc(Unimplemented("update_mask: updating '" + path +
                                  "' is not supported by btsim"));
    }
    return ToGrpc(InvalidArgument("update_mask: " + QuoteForError(path) +
                                  " is not a field UpdateTable can change"));
  }
  admin::Table table;
  {
    auto locked = LockLiveCluster(registry_, name->instance);
    if (!locked.ok()) return ToGrpc(locked.status());
    auto found = locked->cluster->GetTable(name->table_id);
    if (!found.ok()) return ToGrpc(found.status());
    locked->instance->SetDeletionProtection(
        name->table_id, request->table().deletion_protection());
    FillTable(*locked->instance, **found, admin::Table::SCHEMA_VIEW, &table);
  }
  admin::UpdateTableMetadata metadata;
  metadata.set_name(name->full());
  *metadata.mutable_start_time() = start;
  *metadata.mutable_end_time() = OperationTime();
  *response = operations_.Finish(name->full(), table, &metadata);
  return grpc::Status::OK;
}

grpc::Status TableAdminService::DropRowRange(
    grpc::ServerContext*, const admin::DropRowRangeRequest* request,
    google::protobuf::Empty*) {
  auto name = ParseTableName(request->name(), "name");
  if (!name.ok()) return ToGrpc(name.status());
  std::string prefix;
  switch (request->target_case()) {
    case admin::DropRowRangeRequest::kRowKeyPrefix:
      if (request->row_key_prefix().empty()) {
        return ToGrpc(
            InvalidArgument("row_key_prefix: must not be empty; use "
                            "delete_all_data_from_table to drop every row"));
      }
      prefix = request->row_key_prefix();
      break;
    case admin::DropRowRangeRequest::kDeleteAllDataFromTable:
      if (!request->delete_all_data_from_table()) {
        return ToGrpc(InvalidArgument(
            "delete_all_data_from_table: must be true when set"));
      }
      break;
    case admin::DropRowRangeRequest::TARGET_NOT_SET:
      return ToGrpc(InvalidArgument(
          "target: set row_key_prefix or delete_all_data_from_table"));
  }
  auto locked = LockLiveCluster(registry_, name->instance);
  if (!locked.ok()) return ToGrpc(locked.status());
  instance::Instance& instance = *locked->instance;
  cluster::Cluster& cluster = *locked->cluster;
  if (!cluster.GetTable(name->table_id).ok()) {
    return ToGrpc(cluster.GetTable(name->table_id).status());
  }
  return ToGrpc(instance.DropRowRange(name->table_id, prefix));
}

grpc::Status TableAdminService::GenerateConsistencyToken(
    grpc::ServerContext*, const admin::GenerateConsistencyTokenRequest* request,
    admin::GenerateConsistencyTokenResponse* response) {
  auto name = ParseTableName(request->name(), "name");
  if (!name.ok()) return ToGrpc(name.status());
  auto locked = LockLiveCluster(registry_, name->instance);
  if (!locked.ok()) return ToGrpc(locked.status());
  instance::Instance& instance = *locked->instance;
  cluster::Cluster& cluster = *locked->cluster;
  auto table = cluster.GetTable(name->table_id);
  if (!table.ok()) return ToGrpc(table.status());
  const replication::LogPositions positions =
      instance.replicas().LogPositions();
  response->set_consistency_token(
      replication::EncodeConsistencyToken(name->full(), positions));
  return grpc::Status::OK;
}

grpc::Status TableAdminService::CheckConsistency(
    grpc::ServerContext*, const admin::CheckConsistencyRequest* request,
    admin::CheckConsistencyResponse* response) {
  auto name = ParseTableName(request->name(), "name");
  if (!name.ok()) return ToGrpc(name.status());
  auto locked = LockLiveCluster(registry_, name->instance);
  if (!locked.ok()) return ToGrpc(locked.status());
  instance::Instance& instance = *locked->instance;
  cluster::Cluster& cluster = *locked->cluster;
  auto table = cluster.GetTable(name->table_id);
  if (!table.ok()) return ToGrpc(table.status());
  auto positions = replication::DecodeConsistencyToken(
      request->consistency_token(), name->full());
  if (!positions.ok()) return ToGrpc(positions.status());
  const replication::LogPositions now = instance.replicas().LogPositions();
  for (const auto& [cluster_id, position] : *positions) {
    auto it = now.find(cluster_id);
    if (it == now.end()) {
      return ToGrpc(InvalidArgument("consistency_token: names cluster '" +
                                    cluster_id +
                                    "', which this instance does not have"));
    }
    if (position > it->second) {
      return ToGrpc(InvalidArgument(
          "consistency_token: records a log position cluster '" + cluster_id +
          "' never reached"));
    }
  }
  // True once every cluster has applied every write the token covers.
  response->set_consistent(instance.replicas().HasApplied(*positions));
  return grpc::Status::OK;
}

namespace {

// Parses the raw request, runs `work` on it and answers with its status
// (and, when OK, its response).
template <typename Request, typename Response, typename Work>
grpc::ServerUnaryReactor* RawUnary(grpc::CallbackServerContext* context,
                                   const grpc::ByteBuffer& raw,
                                   grpc::ByteBuffer* out, Work&& work) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  Request request;
  Response response;
  Status s = ParseRaw(raw, &request, kMaxRequestDepth);
  if (s.ok()) s = work(request, &response);
  grpc::Status status = ToGrpc(s);
  if (status.ok()) status = SerializeResponse(response, out);
  reactor->Finish(std::move(status));
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* TableAdminService::CreateTable(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return RawUnary<admin::CreateTableRequest, admin::Table>(
      context, *request, response,
      [this](const admin::CreateTableRequest& r, admin::Table* out) {
        return DoCreateTable(&r, out);
      });
}

grpc::ServerUnaryReactor* TableAdminService::ModifyColumnFamilies(
    grpc::CallbackServerContext* context, const grpc::ByteBuffer* request,
    grpc::ByteBuffer* response) {
  return RawUnary<admin::ModifyColumnFamiliesRequest, admin::Table>(
      context, *request, response,
      [this](const admin::ModifyColumnFamiliesRequest& r, admin::Table* out) {
        return DoModifyColumnFamilies(&r, out);
      });
}

}  // namespace btsim::api
