// Conversions between the engine's types and the journal's protobuf
// records (proto/btsim/durable/v1/journal.proto). Exact both ways: a
// record decoded from its encoding equals the original (its RowShare, a
// memory-sharing hint, is not kept).
#ifndef BTSIM_DURABLE_CODEC_H_
#define BTSIM_DURABLE_CODEC_H_

#include <string>
#include <vector>

#include "appprofile/app_profile.h"
#include "base/result.h"
#include "btsim/durable/v1/journal.pb.h"
#include "cluster/commit_record.h"
#include "cluster/image.h"
#include "instance/backups.h"
#include "instance/instance.h"
#include "replication/journal.h"
#include "replication/log.h"
#include "sim/time.h"

namespace btsim::durable {

// The clock reading a commit version was made at.
inline sim::Time CommitTime(cluster::Version version) {
  return sim::Time(cluster::VersionTime(version).time_since_epoch());
}

void EncodeRecord(const cluster::CommitRecord& record, v1::CommitRecord* out);
// INVALID_ARGUMENT for a kind or mutation type out of range.
Result<cluster::CommitRecord> DecodeRecord(const v1::CommitRecord& in);

// The instance's clusters (with their origin numbers), profiles and
// protected tables.
void EncodeMetadata(const instance::Instance& instance, v1::Metadata* out);
std::vector<appprofile::AppProfile> DecodeProfiles(const v1::Metadata& in);

// A backup's description (not its data).
void EncodeBackup(const instance::Backup& backup, v1::Backup* out);
instance::Backup DecodeBackup(const v1::Backup& in);

// ---- Snapshots (image_codec.cc) ----
// INVALID_ARGUMENT for a value out of range.
void EncodeGcRule(const cluster::GcRule& rule, v1::GcRule* out);
Result<cluster::GcRule> DecodeGcRule(const v1::GcRule& in);
void EncodeTableImage(const cluster::TableImage& image, v1::TableImage* out);
Result<cluster::TableImage> DecodeTableImage(const v1::TableImage& in);
// A cluster's engine state and replication state in one record.
void EncodeSnapshotCluster(const cluster::ClusterImage& image,
                           const replication::ReplicaState& state,
                           v1::SnapshotCluster* out);
cluster::ClusterImage DecodeClusterImage(const v1::SnapshotCluster& in);
// INVALID_ARGUMENT when the relayed runs do not pair up.
Result<replication::ReplicaState> DecodeReplicaState(
    const v1::SnapshotCluster& in);
void EncodeLogEntry(const replication::LogEntry& entry, v1::LogEntry* out);
Result<replication::LogEntry> DecodeLogEntry(const v1::LogEntry& in);

}  // namespace btsim::durable

#endif  // BTSIM_DURABLE_CODEC_H_
