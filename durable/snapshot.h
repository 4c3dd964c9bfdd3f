// Snapshots of `btsim serve --data-dir` (docs/durability.md): every served
// instance's complete state in one file of frames (SnapshotRecords of
// proto/btsim/durable/v1/journal.proto), written while the instances are
// locked, after which a new journal starts empty. Also the rebuilding of
// an instance's metadata, shared with the journal's replay.
#ifndef BTSIM_DURABLE_SNAPSHOT_H_
#define BTSIM_DURABLE_SNAPSHOT_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/result.h"
#include "btsim/durable/v1/journal.pb.h"
#include "durable/framed_log.h"
#include "durable/instance_access.h"
#include "instance/instance.h"
#include "sim/time.h"

namespace btsim::durable {

inline constexpr std::string_view kSnapshotMagic = "BTSIMS1\n";
inline constexpr uint8_t kSnapshotRecordType = 2;

// What a snapshot keeps of an instance besides its state: its number in
// the journal and the clusters it was created with.
struct InstanceEntry {
  std::string name;
  v1::Metadata created_with;  // clusters only
};

// Writes the snapshot header (the generation of the journal that follows).
Status WriteSnapshotHeader(uint64_t generation, FrameFileWriter& out);
// Writes `instance` (under its lock) as journal number `number`.
Status WriteInstanceSnapshot(instance::Instance& instance, uint32_t number,
                             const InstanceEntry& entry, FrameFileWriter& out);
// Writes the final record: a snapshot without it is incomplete.
Status WriteSnapshotEnd(uint32_t instances, FrameFileWriter& out);

struct LoadedSnapshot {
  uint64_t generation = 0;
  std::map<uint32_t, InstanceEntry> instances;  // by number
  size_t records = 0;
  sim::Time high_water{};  // the newest commit time any cluster made
};

// Loads the snapshot at `path` into the instances `access` reaches, each
// left between Replicas::BeginReplay and EndReplay for the journal's
// replay. DATA_LOSS naming the file and the offset for a record that is
// corrupt or does not fit, and for an incomplete snapshot;
// FAILED_PRECONDITION when an instance was created with other clusters
// than this configuration gives it.
Result<LoadedSnapshot> LoadSnapshot(const std::string& path,
                                    InstanceAccess& access);

// FAILED_PRECONDITION naming both when this configuration creates
// `instance` (as it is now, fresh) with other clusters than
// `created_with`'s.
Status CheckCreatedWith(const instance::Instance& instance,
                        const v1::Metadata& created_with);
// Makes `instance`'s clusters, node counts, profiles and protected tables
// what `meta` says (clusters added and removed as the admin API does).
// With `created_with`, first CheckCreatedWith.
Status ApplyMetadata(instance::Instance& instance, const v1::Metadata& meta,
                     const v1::Metadata* created_with);

}  // namespace btsim::durable

#endif  // BTSIM_DURABLE_SNAPSHOT_H_
