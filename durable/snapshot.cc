#include "durable/snapshot.h"

#include <algorithm>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "cluster/image.h"
#include "durable/codec.h"

namespace btsim::durable {

namespace {

// Rows of one table are written in records of about this many bytes.
constexpr size_t kRowsRecordBytes = 1 << 20;

sim::Time TimeOf(cluster::Version version) {
  return sim::Time(cluster::VersionTime(version).time_since_epoch());
}

std::string ClusterList(const v1::Metadata& meta) {
  std::string out;
  for (const v1::Cluster& c : meta.clusters()) {
    out += (out.empty() ? "" : ",") + c.id() + "=" + c.zone();
  }
  return out;
}

std::string ClusterList(const std::vector<instance::ClusterConfig>& clusters) {
  std::string out;
  for (const instance::ClusterConfig& c : clusters) {
    out += (out.empty() ? "" : ",") + c.id + "=" + c.zone;
  }
  return out;
}

Status Add(const v1::SnapshotRecord& record, FrameFileWriter& out) {
  std::string payload;
  record.SerializeToString(&payload);
  return out.Add(kSnapshotRecordType, payload);
}

// Receives one cluster's image and writes it as snapshot records: the
// cluster (with its replication state) and its log's entries, then its
// tables and rows.
class ClusterWriter : public cluster::ImageWriter {
 public:
  ClusterWriter(const replication::ReplicaState& state,
                std::vector<const replication::LogEntry*> entries,
                FrameFileWriter& out)
      : state_(state), entries_(std::move(entries)), out_(out) {}

  void Cluster(const cluster::ClusterImage& image) override {
    v1::SnapshotRecord record;
    EncodeSnapshotCluster(image, state_, record.mutable_cluster());
    Write(record);
    for (const replication::LogEntry* entry : entries_) {
      record.Clear();
      EncodeLogEntry(*entry, record.mutable_log_entry());
      Write(record);
    }
  }
  void Table(const cluster::TableImage& image) override {
    FlushRows();
    v1::SnapshotRecord record;
    EncodeTableImage(image, record.mutable_table());
    Write(record);
  }
  void Row(std::string_view key, std::string_view encoded) override {
    v1::Rows* rows = rows_.mutable_rows();
    rows->add_keys(std::string(key));
    rows->add_encoded(std::string(encoded));
    rows_bytes_ += key.size() + encoded.size();
    if (rows_bytes_ >= kRowsRecordBytes) FlushRows();
  }
  Status Finish() {
    FlushRows();
    return status_;
  }

 private:
  void FlushRows() {
    if (rows_bytes_ == 0 && rows_.rows().keys_size() == 0) return;
    Write(rows_);
    rows_.Clear();
    rows_bytes_ = 0;
  }
  void Write(const v1::SnapshotRecord& record) {
    if (status_.ok()) status_ = Add(record, out_);
  }

  const replication::ReplicaState& state_;
  const std::vector<const replication::LogEntry*> entries_;
  FrameFileWriter& out_;
  v1::SnapshotRecord rows_;
  size_t rows_bytes_ = 0;
  Status status_;
};

// Gives `instance` the clusters `meta` lists with their origin numbers
// (a cluster whose number differs was removed and added again since):
// during a replay an instance may lose its last cluster for a moment.
Status LineUpClusters(instance::Instance& instance, const v1::Metadata& meta,
                      uint32_t next_origin) {
  replication::Replicas& replicas = instance.replicas();
  std::set<std::pair<std::string, uint32_t>> wanted;
  for (const v1::Cluster& c : meta.clusters()) {
    wanted.insert({c.id(), c.origin()});
  }
  for (const instance::ClusterConfig& c : instance.Clusters()) {
    if (!wanted.contains({c.id, replicas.OriginOf(c.id).value_or(0)})) {
      BTSIM_RETURN_IF_ERROR(instance.RemoveCluster(c.id));
    }
  }
  for (const v1::Cluster& c : meta.clusters()) {
    if (replicas.OriginOf(c.id()).has_value()) continue;
    BTSIM_RETURN_IF_ERROR(replicas.ReplayNextOrigin(c.origin()));
    BTSIM_RETURN_IF_ERROR(
        instance.AddCluster({c.id(), c.zone(), std::max(1, c.nodes())}));
  }
  return replicas.ReplayNextOrigin(next_origin);
}

}  // namespace

Status CheckCreatedWith(const instance::Instance& instance,
                        const v1::Metadata& created_with) {
  const std::string want = ClusterList(created_with);
  const std::string have = ClusterList(instance.Clusters());
  if (want != have) {
    return FailedPrecondition(
        "instance " + instance.name() + " was created with clusters " + want +
        ", but this configuration gives it " + have +
        "; start with the configuration the data was written with");
  }
  return OkStatus();
}

Status ApplyMetadata(instance::Instance& instance, const v1::Metadata& meta,
                     const v1::Metadata* created_with) {
  if (created_with != nullptr) {
    BTSIM_RETURN_IF_ERROR(CheckCreatedWith(instance, *created_with));
  }
  std::set<std::string> listed;
  for (const v1::Cluster& c : meta.clusters()) listed.insert(c.id());
  for (const instance::ClusterConfig& c : instance.Clusters()) {
    if (!listed.contains(c.id)) {
      BTSIM_RETURN_IF_ERROR(instance.RemoveCluster(c.id));
    }
  }
  for (const v1::Cluster& c : meta.clusters()) {
    bool found = false;
    for (const instance::ClusterConfig& have : instance.Clusters()) {
      if (have.id != c.id()) continue;
      found = true;
      if (have.nodes != c.nodes()) {
        BTSIM_RETURN_IF_ERROR(instance.SetNodes(c.id(), c.nodes()));
      }
    }
    if (!found) {
      BTSIM_RETURN_IF_ERROR(
          instance.AddCluster({c.id(), c.zone(), std::max(1, c.nodes())}));
    }
  }
  instance.profiles().Restore(DecodeProfiles(meta), meta.etag_counter());
  std::set<std::string> protect(meta.protected_tables().begin(),
                                meta.protected_tables().end());
  for (const std::string& table : instance.ProtectedTables()) {
    if (!protect.contains(table)) instance.SetDeletionProtection(table, false);
  }
  for (const std::string& table : protect) {
    instance.SetDeletionProtection(table, true);
  }
  return OkStatus();
}

Status WriteSnapshotHeader(uint64_t generation, FrameFileWriter& out) {
  v1::SnapshotRecord record;
  record.mutable_header()->set_image_format(cluster::kImageFormat);
  record.mutable_header()->set_generation(generation);
  return Add(record, out);
}

Status WriteInstanceSnapshot(instance::Instance& instance, uint32_t number,
                             const InstanceEntry& entry, FrameFileWriter& out) {
  v1::SnapshotRecord record;
  v1::SnapshotInstance* header = record.mutable_instance();
  header->set_number(number);
  header->set_name(instance.name());
  EncodeMetadata(instance, header->mutable_metadata());
  header->set_next_origin(instance.replicas().next_origin());
  *header->mutable_created_with() = entry.created_with;
  BTSIM_RETURN_IF_ERROR(Add(record, out));
  replication::Replicas& replicas = instance.replicas();
  for (const replication::ReplicaState& state : replicas.States()) {
    ClusterWriter writer(state, replicas.LogEntries(state.origin), out);
    replicas.Find(state.id)->WriteImage(writer);
    BTSIM_RETURN_IF_ERROR(writer.Finish());
  }
  return OkStatus();
}

Status WriteSnapshotEnd(uint32_t instances, FrameFileWriter& out) {
  v1::SnapshotRecord record;
  record.mutable_end()->set_instances(instances);
  return Add(record, out);
}

Result<LoadedSnapshot> LoadSnapshot(const std::string& path,
                                    InstanceAccess& access) {
  BTSIM_ASSIGN_OR_RETURN(std::unique_ptr<LogReader> reader,
                         LogReader::Open(path, kSnapshotMagic));
  LoadedSnapshot loaded;
  bool header = false, end = false;
  const InstanceEntry* instance = nullptr;  // the current instance
  // The current cluster: its origin, id and where its log must end.
  std::optional<replication::ReplicaState> cluster;
  std::string table;  // the current table's id
  auto log_complete = [&](instance::Instance& i) -> Status {
    if (cluster &&
        i.replicas().LogPosition(cluster->id) != cluster->last_position) {
      return InvalidArgument("the log of cluster '" + cluster->id +
                             "' is incomplete");
    }
    return OkStatus();
  };
  Frame frame;
  while (true) {
    BTSIM_ASSIGN_OR_RETURN(bool more, reader->Next(&frame));
    if (!more) break;
    auto at = [&](StatusCode code, const std::string& why) {
      return Status(code, path + ": record at offset " +
                              std::to_string(frame.offset) + ": " + why);
    };
    v1::SnapshotRecord record;
    if (frame.type != kSnapshotRecordType ||
        !record.ParseFromString(frame.payload)) {
      return at(StatusCode::kDataLoss, "not a snapshot record");
    }
    if (end) return at(StatusCode::kDataLoss, "a record after the end");
    if (!header && record.part_case() != v1::SnapshotRecord::kHeader) {
      return at(StatusCode::kDataLoss, "no header");
    }
    ++loaded.records;
    Status s;
    switch (record.part_case()) {
      case v1::SnapshotRecord::kHeader:
        if (header) return at(StatusCode::kDataLoss, "a second header");
        if (record.header().image_format() != cluster::kImageFormat) {
          return at(StatusCode::kFailedPrecondition,
                    "written in image format " +
                        std::to_string(record.header().image_format()) +
                        ", which this btsim does not read (it reads " +
                        std::to_string(cluster::kImageFormat) + ")");
        }
        header = true;
        loaded.generation = record.header().generation();
        continue;
      case v1::SnapshotRecord::kInstance: {
        const v1::SnapshotInstance& in = record.instance();
        if (instance != nullptr) {
          s = access.With(instance->name, log_complete);
          if (!s.ok()) return at(StatusCode::kDataLoss, s.message());
        }
        if (loaded.instances.contains(in.number())) {
          return at(StatusCode::kDataLoss, "instance number declared twice");
        }
        InstanceEntry& entry = loaded.instances[in.number()];
        entry.name = in.name();
        entry.created_with = in.created_with();
        instance = &entry;
        cluster.reset();
        bool configured = true;
        s = access.With(in.name(), [&](instance::Instance& i) -> Status {
          i.replicas().BeginReplay();
          Status fits = CheckCreatedWith(i, entry.created_with);
          if (!fits.ok()) {
            configured = false;
            return fits;
          }
          BTSIM_RETURN_IF_ERROR(
              LineUpClusters(i, in.metadata(), in.next_origin()));
          return ApplyMetadata(i, in.metadata(), nullptr);
        });
        // A configuration that does not fit is the user's to fix.
        if (!configured) return at(s.code(), s.message());
        break;
      }
      case v1::SnapshotRecord::kCluster: {
        if (instance == nullptr) {
          return at(StatusCode::kDataLoss, "a cluster outside an instance");
        }
        auto state = DecodeReplicaState(record.cluster());
        if (!state.ok())
          return at(StatusCode::kDataLoss, state.status().message());
        s = access.With(instance->name, [&](instance::Instance& i) -> Status {
          BTSIM_RETURN_IF_ERROR(log_complete(i));
          BTSIM_RETURN_IF_ERROR(i.replicas().ReplayState(*state));
          cluster::Cluster* c = i.replicas().Find(state->id);
          return c->LoadImage(DecodeClusterImage(record.cluster()));
        });
        cluster = std::move(*state);
        loaded.high_water = std::max(loaded.high_water,
                                     TimeOf(record.cluster().last_version()));
        table.clear();
        break;
      }
      case v1::SnapshotRecord::kLogEntry: {
        if (!cluster)
          return at(StatusCode::kDataLoss, "an entry outside a cluster");
        auto entry = DecodeLogEntry(record.log_entry());
        if (!entry.ok())
          return at(StatusCode::kDataLoss, entry.status().message());
        s = access.With(instance->name, [&](instance::Instance& i) {
          return i.replicas().ReplayLogEntry(cluster->origin,
                                             std::move(*entry));
        });
        break;
      }
      case v1::SnapshotRecord::kTable: {
        if (!cluster)
          return at(StatusCode::kDataLoss, "a table outside a cluster");
        auto image = DecodeTableImage(record.table());
        if (!image.ok())
          return at(StatusCode::kDataLoss, image.status().message());
        table = image->id;
        s = access.With(instance->name, [&](instance::Instance& i) {
          return i.replicas().Find(cluster->id)->LoadTable(*image);
        });
        break;
      }
      case v1::SnapshotRecord::kRows: {
        const v1::Rows& rows = record.rows();
        if (table.empty() || rows.keys_size() != rows.encoded_size()) {
          return at(StatusCode::kDataLoss, "rows outside a table");
        }
        s = access.With(instance->name, [&](instance::Instance& i) -> Status {
          cluster::Cluster* c = i.replicas().Find(cluster->id);
          for (int k = 0; k < rows.keys_size(); ++k) {
            BTSIM_RETURN_IF_ERROR(
                c->LoadRow(table, rows.keys(k), rows.encoded(k)));
          }
          return OkStatus();
        });
        break;
      }
      case v1::SnapshotRecord::kEnd:
        if (instance != nullptr) {
          s = access.With(instance->name, log_complete);
        }
        if (s.ok() && record.end().instances() != loaded.instances.size()) {
          s = InvalidArgument("the end record counts " +
                              std::to_string(record.end().instances()) +
                              " instances, the snapshot holds " +
                              std::to_string(loaded.instances.size()));
        }
        end = true;
        break;
      default:
        return at(StatusCode::kDataLoss, "an empty record");
    }
    if (!s.ok()) return at(StatusCode::kDataLoss, s.message());
  }
  if (!end) {
    return Status(StatusCode::kDataLoss,
                  path + ": incomplete snapshot (it ends at offset " +
                      std::to_string(reader->end()) +
                      " without its end record)");
  }
  return loaded;
}

}  // namespace btsim::durable
