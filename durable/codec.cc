#include "durable/codec.h"

#include <utility>
#include <variant>

namespace btsim::durable {

namespace {

using cluster::CommitRecord;
using cluster::Mutation;

int64_t MicrosOf(cluster::Timestamp t) { return cluster::Micros(t); }
cluster::Timestamp At(int64_t micros) {
  return cluster::TimestampFromMicros(micros);
}

void EncodeMutation(const Mutation& mutation, v1::Mutation* out) {
  out->set_type(static_cast<int32_t>(mutation.index()));
  std::visit(
      [&](const auto& m) {
        using T = std::decay_t<decltype(m)>;
        if constexpr (std::is_same_v<T, cluster::SetCell>) {
          out->set_family(m.family);
          out->set_qualifier(m.qualifier);
          out->set_timestamp_micros(MicrosOf(m.timestamp));
          out->set_value(m.value);
        } else if constexpr (std::is_same_v<T, cluster::DeleteFromColumn>) {
          out->set_family(m.family);
          out->set_qualifier(m.qualifier);
          out->set_timestamp_micros(MicrosOf(m.start));
          out->set_end_micros(MicrosOf(m.end));
        } else if constexpr (std::is_same_v<T, cluster::DeleteFromFamily>) {
          out->set_family(m.family);
        } else if constexpr (std::is_same_v<T, cluster::AddToCell>) {
          out->set_family(m.family);
          out->set_qualifier(m.qualifier);
          out->set_timestamp_micros(MicrosOf(m.timestamp));
          out->set_value(m.input);
          out->set_merge(m.merge);
        }
      },
      mutation);
}

Result<Mutation> DecodeMutation(const v1::Mutation& in) {
  switch (in.type()) {
    case 0:
      return Mutation(cluster::SetCell{in.family(), in.qualifier(),
                                       At(in.timestamp_micros()), in.value()});
    case 1:
      return Mutation(cluster::DeleteFromColumn{in.family(), in.qualifier(),
                                                At(in.timestamp_micros()),
                                                At(in.end_micros())});
    case 2:
      return Mutation(cluster::DeleteFromFamily{in.family()});
    case 3:
      return Mutation(cluster::DeleteFromRow{});
    case 4:
      return Mutation(cluster::AddToCell{in.family(), in.qualifier(),
                                         At(in.timestamp_micros()), in.value(),
                                         in.merge()});
    default:
      return InvalidArgument("mutation type " + std::to_string(in.type()));
  }
}

}  // namespace

void EncodeGcRule(const cluster::GcRule& rule, v1::GcRule* out) {
  out->set_kind(static_cast<int32_t>(rule.kind));
  out->set_max_versions(rule.max_versions);
  out->set_max_age_micros(rule.max_age.count());
  for (const cluster::GcRule& r : rule.rules) EncodeGcRule(r, out->add_rules());
}

Result<cluster::GcRule> DecodeGcRule(const v1::GcRule& in) {
  if (in.kind() < 0 ||
      in.kind() > static_cast<int32_t>(cluster::GcRule::Kind::kUnion)) {
    return InvalidArgument("GC rule kind " + std::to_string(in.kind()));
  }
  cluster::GcRule rule;
  rule.kind = static_cast<cluster::GcRule::Kind>(in.kind());
  rule.max_versions = in.max_versions();
  rule.max_age = std::chrono::microseconds(in.max_age_micros());
  for (const v1::GcRule& r : in.rules()) {
    BTSIM_ASSIGN_OR_RETURN(cluster::GcRule sub, DecodeGcRule(r));
    rule.rules.push_back(std::move(sub));
  }
  return rule;
}

void EncodeRecord(const CommitRecord& record, v1::CommitRecord* out) {
  out->set_kind(static_cast<int32_t>(record.kind));
  out->set_table(record.table);
  out->set_version(record.version);
  out->set_row_key(record.row_key);
  for (const Mutation& m : record.mutations) {
    EncodeMutation(m, out->add_mutations());
  }
  out->set_prefix(record.prefix);
  for (const cluster::FamilyModification& f : record.families) {
    v1::FamilyModification* family = out->add_families();
    family->set_name(f.name);
    family->set_kind(static_cast<int32_t>(f.kind));
    EncodeGcRule(f.gc_rule, family->mutable_gc_rule());
    family->set_aggregate(static_cast<int32_t>(f.aggregate));
  }
  for (const std::string& split : record.splits) out->add_splits(split);
  out->set_idempotency_token(record.idempotency_token);
}

Result<CommitRecord> DecodeRecord(const v1::CommitRecord& in) {
  if (in.kind() < 0 ||
      in.kind() > static_cast<int32_t>(CommitRecord::Kind::kModifyFamilies)) {
    return InvalidArgument("commit kind " + std::to_string(in.kind()));
  }
  CommitRecord record;
  record.kind = static_cast<CommitRecord::Kind>(in.kind());
  record.table = in.table();
  record.version = in.version();
  record.row_key = in.row_key();
  for (const v1::Mutation& m : in.mutations()) {
    BTSIM_ASSIGN_OR_RETURN(Mutation mutation, DecodeMutation(m));
    record.mutations.push_back(std::move(mutation));
  }
  record.prefix = in.prefix();
  for (const v1::FamilyModification& f : in.families()) {
    cluster::FamilyModification family;
    family.name = f.name();
    if (f.kind() < 0 ||
        f.kind() >
            static_cast<int32_t>(cluster::FamilyModification::Kind::kDrop) ||
        f.aggregate() < 0 ||
        f.aggregate() > static_cast<int32_t>(cluster::Aggregate::kMax)) {
      return InvalidArgument("family modification of '" + f.name() + "'");
    }
    family.kind = static_cast<cluster::FamilyModification::Kind>(f.kind());
    BTSIM_ASSIGN_OR_RETURN(family.gc_rule, DecodeGcRule(f.gc_rule()));
    family.aggregate = static_cast<cluster::Aggregate>(f.aggregate());
    record.families.push_back(std::move(family));
  }
  record.splits.assign(in.splits().begin(), in.splits().end());
  record.idempotency_token = in.idempotency_token();
  return record;
}

void EncodeMetadata(const instance::Instance& instance, v1::Metadata* out) {
  for (const instance::ClusterConfig& c : instance.Clusters()) {
    v1::Cluster* cluster = out->add_clusters();
    cluster->set_id(c.id);
    cluster->set_zone(c.zone);
    cluster->set_nodes(c.nodes);
    cluster->set_origin(instance.replicas().OriginOf(c.id).value_or(0));
  }
  for (const appprofile::AppProfile& p : instance.profiles().List()) {
    v1::AppProfile* profile = out->add_profiles();
    profile->set_id(p.id);
    profile->set_description(p.description);
    profile->set_etag(p.etag);
    profile->set_single_cluster(
        p.routing == appprofile::AppProfile::Routing::kSingleCluster);
    profile->set_cluster_id(p.cluster_id);
    profile->set_allow_transactional_writes(p.allow_transactional_writes);
    for (const std::string& id : p.cluster_ids) profile->add_cluster_ids(id);
    profile->set_row_affinity(p.row_affinity);
    profile->set_priority(static_cast<int32_t>(p.priority));
  }
  out->set_etag_counter(instance.profiles().etag_counter());
  for (const std::string& table : instance.ProtectedTables()) {
    out->add_protected_tables(table);
  }
}

void EncodeBackup(const instance::Backup& backup, v1::Backup* out) {
  out->set_cluster(backup.cluster);
  out->set_id(backup.id);
  out->set_source_table(backup.source_table);
  out->set_source_cluster(backup.source_cluster);
  out->set_source_backup(backup.source_backup);
  out->set_start_nanos(sim::NanosSinceEpoch(backup.start_time));
  out->set_end_nanos(sim::NanosSinceEpoch(backup.end_time));
  out->set_expire_nanos(sim::NanosSinceEpoch(backup.expire_time));
  out->set_size_bytes(backup.size_bytes);
}

instance::Backup DecodeBackup(const v1::Backup& in) {
  auto at = [](int64_t nanos) {
    return sim::Time(std::chrono::nanoseconds(nanos));
  };
  instance::Backup backup;
  backup.cluster = in.cluster();
  backup.id = in.id();
  backup.source_table = in.source_table();
  backup.source_cluster = in.source_cluster();
  backup.source_backup = in.source_backup();
  backup.start_time = at(in.start_nanos());
  backup.end_time = at(in.end_nanos());
  backup.expire_time = at(in.expire_nanos());
  backup.size_bytes = in.size_bytes();
  return backup;
}

std::vector<appprofile::AppProfile> DecodeProfiles(const v1::Metadata& in) {
  std::vector<appprofile::AppProfile> profiles;
  for (const v1::AppProfile& p : in.profiles()) {
    appprofile::AppProfile profile;
    profile.id = p.id();
    profile.description = p.description();
    profile.etag = p.etag();
    profile.routing = p.single_cluster()
                          ? appprofile::AppProfile::Routing::kSingleCluster
                          : appprofile::AppProfile::Routing::kMultiCluster;
    profile.cluster_id = p.cluster_id();
    profile.allow_transactional_writes = p.allow_transactional_writes();
    profile.cluster_ids.assign(p.cluster_ids().begin(), p.cluster_ids().end());
    profile.row_affinity = p.row_affinity();
    if (p.priority() >= 0 &&
        p.priority() <= static_cast<int32_t>(appprofile::Priority::kHigh)) {
      profile.priority = static_cast<appprofile::Priority>(p.priority());
    }
    profiles.push_back(std::move(profile));
  }
  return profiles;
}

}  // namespace btsim::durable
