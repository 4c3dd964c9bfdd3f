// Conversions between cluster images, replication states and the
// snapshot's protobuf records (durable/codec.h).
#include <string>
#include <utility>

#include "durable/codec.h"

namespace btsim::durable {

namespace {

using cluster::Version;

void EncodeNames(const std::vector<std::pair<std::string, Version>>& in,
                 google::protobuf::RepeatedPtrField<v1::VersionedName>* out) {
  for (const auto& [name, version] : in) {
    v1::VersionedName* v = out->Add();
    v->set_name(name);
    v->set_version(version);
  }
}

std::vector<std::pair<std::string, Version>> DecodeNames(
    const google::protobuf::RepeatedPtrField<v1::VersionedName>& in) {
  std::vector<std::pair<std::string, Version>> out;
  out.reserve(in.size());
  for (const v1::VersionedName& v : in) out.emplace_back(v.name(), v.version());
  return out;
}

}  // namespace

void EncodeTableImage(const cluster::TableImage& image, v1::TableImage* out) {
  out->set_id(image.id);
  for (const cluster::FamilyImage& f : image.families) {
    v1::FamilyImage* family = out->add_families();
    family->set_name(f.name);
    family->set_id(f.id);
    EncodeGcRule(f.gc_rule, family->mutable_gc_rule());
    family->set_aggregate(static_cast<int32_t>(f.aggregate));
    family->set_created(f.created);
    family->set_changed(f.changed);
    for (const auto& [since, rule] : f.past_rules) {
      v1::PastRule* past = family->add_past_rules();
      past->set_since(since);
      EncodeGcRule(rule, past->mutable_rule());
    }
  }
  out->set_family_ids(image.family_ids);
  out->set_has_aggregates(image.has_aggregates);
  EncodeNames(image.dropped_families, out->mutable_dropped_families());
  out->set_created_version(image.created_version);
  for (const cluster::SupersededImage& c : image.superseded) {
    v1::SupersededCell* cell = out->add_superseded();
    cell->set_row_key(c.row_key);
    cell->set_family_id(c.family_id);
    cell->set_qualifier(c.qualifier);
    cell->set_timestamp_micros(cluster::Micros(c.timestamp));
    cell->set_version(c.version);
    cell->set_until(c.until);
    cell->set_garbage(c.garbage);
  }
  EncodeNames(image.range_tombstones, out->mutable_range_tombstones());
  for (const cluster::TabletImage& t : image.tablets) {
    v1::Tablet* tablet = out->add_tablets();
    tablet->set_start(t.start);
    tablet->set_pinned(t.pinned);
  }
}

Result<cluster::TableImage> DecodeTableImage(const v1::TableImage& in) {
  cluster::TableImage image;
  image.id = in.id();
  for (const v1::FamilyImage& f : in.families()) {
    cluster::FamilyImage family;
    family.name = f.name();
    family.id = f.id();
    BTSIM_ASSIGN_OR_RETURN(family.gc_rule, DecodeGcRule(f.gc_rule()));
    if (f.aggregate() < 0 ||
        f.aggregate() > static_cast<int32_t>(cluster::Aggregate::kMax)) {
      return InvalidArgument("family '" + f.name() + "': aggregate " +
                             std::to_string(f.aggregate()));
    }
    family.aggregate = static_cast<cluster::Aggregate>(f.aggregate());
    family.created = f.created();
    family.changed = f.changed();
    for (const v1::PastRule& past : f.past_rules()) {
      BTSIM_ASSIGN_OR_RETURN(cluster::GcRule rule, DecodeGcRule(past.rule()));
      family.past_rules.emplace_back(past.since(), std::move(rule));
    }
    image.families.push_back(std::move(family));
  }
  image.family_ids = in.family_ids();
  image.has_aggregates = in.has_aggregates();
  image.dropped_families = DecodeNames(in.dropped_families());
  image.created_version = in.created_version();
  for (const v1::SupersededCell& c : in.superseded()) {
    image.superseded.push_back(cluster::SupersededImage{
        c.row_key(), c.family_id(), c.qualifier(),
        cluster::TimestampFromMicros(c.timestamp_micros()), c.version(),
        c.until(), c.garbage()});
  }
  image.range_tombstones = DecodeNames(in.range_tombstones());
  for (const v1::Tablet& t : in.tablets()) {
    image.tablets.push_back(cluster::TabletImage{t.start(), t.pinned()});
  }
  return image;
}

void EncodeSnapshotCluster(const cluster::ClusterImage& image,
                           const replication::ReplicaState& state,
                           v1::SnapshotCluster* out) {
  out->set_id(state.id);
  out->set_origin(state.origin);
  out->set_truncated_through(state.truncated_through);
  out->set_last_position(state.last_position);
  for (const auto& [origin, position] : state.applied) {
    (*out->mutable_applied())[origin] = position;
  }
  for (const auto& [origin, position] : state.retired) {
    (*out->mutable_retired())[origin] = position;
  }
  for (const auto& [last, oldest] : state.relayed) {
    out->add_relayed_last(last);
    out->add_relayed_oldest(oldest);
  }
  out->set_last_version(image.last_version);
  EncodeNames(image.deleted_tables, out->mutable_deleted_tables());
  for (const cluster::TokenImage& t : image.tokens) {
    v1::IdempotencyToken* token = out->add_tokens();
    token->set_table(t.table);
    token->set_row_key(t.row_key);
    token->set_token(t.token);
    token->set_committed_micros(cluster::Micros(t.committed));
  }
}

cluster::ClusterImage DecodeClusterImage(const v1::SnapshotCluster& in) {
  cluster::ClusterImage image;
  image.last_version = in.last_version();
  image.deleted_tables = DecodeNames(in.deleted_tables());
  for (const v1::IdempotencyToken& t : in.tokens()) {
    image.tokens.push_back(cluster::TokenImage{
        t.table(), t.row_key(), t.token(),
        cluster::TimestampFromMicros(t.committed_micros())});
  }
  return image;
}

Result<replication::ReplicaState> DecodeReplicaState(
    const v1::SnapshotCluster& in) {
  replication::ReplicaState state;
  state.id = in.id();
  state.origin = in.origin();
  state.truncated_through = in.truncated_through();
  state.last_position = in.last_position();
  state.applied.insert(in.applied().begin(), in.applied().end());
  state.retired.insert(in.retired().begin(), in.retired().end());
  if (in.relayed_last_size() != in.relayed_oldest_size()) {
    return InvalidArgument("cluster '" + in.id() +
                           "': relayed runs do not pair up");
  }
  for (int i = 0; i < in.relayed_last_size(); ++i) {
    state.relayed.emplace_back(in.relayed_last(i), in.relayed_oldest(i));
  }
  return state;
}

void EncodeLogEntry(const replication::LogEntry& entry, v1::LogEntry* out) {
  out->set_position(entry.position);
  EncodeRecord(entry.record, out->mutable_record());
  out->set_source_origin(entry.source_origin);
  out->set_source_position(entry.source_position);
}

Result<replication::LogEntry> DecodeLogEntry(const v1::LogEntry& in) {
  replication::LogEntry entry;
  entry.position = in.position();
  BTSIM_ASSIGN_OR_RETURN(entry.record, DecodeRecord(in.record()));
  entry.source_origin = in.source_origin();
  entry.source_position = in.source_position();
  return entry;
}

}  // namespace btsim::durable
