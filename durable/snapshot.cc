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

// Writes snapshot records, gathering rows into `rows` records of about
// kRowsRecordBytes; keeps the first error.
class RecordWriter {
 public:
  explicit RecordWriter(FrameFileWriter& out) : out_(out) {}
  void Write(const v1::SnapshotRecord& record) {
    FlushRows();
    Add(record);
  }
  void Row(std::string_view key, std::string_view encoded) {
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
    if (!rows_.has_rows()) return;
    Add(rows_);
    rows_.Clear();
    rows_bytes_ = 0;
  }
  void Add(const v1::SnapshotRecord& record) {
    if (status_.ok()) status_ = durable::Add(record, out_);
  }

  FrameFileWriter& out_;
  v1::SnapshotRecord rows_;
  size_t rows_bytes_ = 0;
  Status status_;
};

// Receives one cluster's image and writes it as snapshot records: the
// cluster (with its replication state) and its log's entries, then its
// tables and rows.
class ClusterWriter : public cluster::ImageWriter {
 public:
  ClusterWriter(const replication::ReplicaState& state,
                std::vector<const replication::LogEntry*> entries,
                RecordWriter& out)
      : state_(state), entries_(std::move(entries)), out_(out) {}

  void Cluster(const cluster::ClusterImage& image) override {
    v1::SnapshotRecord record;
    EncodeSnapshotCluster(image, state_, record.mutable_cluster());
    out_.Write(record);
    for (const replication::LogEntry* entry : entries_) {
      record.Clear();
      EncodeLogEntry(*entry, record.mutable_log_entry());
      out_.Write(record);
    }
  }
  void Table(const cluster::TableImage& image) override {
    v1::SnapshotRecord record;
    EncodeTableImage(image, record.mutable_table());
    out_.Write(record);
  }
  void Row(std::string_view key, std::string_view encoded) override {
    out_.Row(key, encoded);
  }

 private:
  const replication::ReplicaState& state_;
  const std::vector<const replication::LogEntry*> entries_;
  RecordWriter& out_;
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
  RecordWriter writer(out);
  writer.Write(record);
  replication::Replicas& replicas = instance.replicas();
  for (const replication::ReplicaState& state : replicas.States()) {
    ClusterWriter cluster(state, replicas.LogEntries(state.origin), writer);
    replicas.Find(state.id)->WriteImage(cluster);
  }
  for (const instance::Backup* backup : instance.backups().List("")) {
    record.Clear();
    EncodeBackup(*backup, record.mutable_backup()->mutable_backup());
    EncodeTableImage(backup->data->Image(),
                     record.mutable_backup()->mutable_data());
    writer.Write(record);
    backup->data->ForEachStoredRow(
        [&](std::string_view key, std::string_view encoded) {
          writer.Row(key, encoded);
        });
  }
  return writer.Finish();
}

Status WriteSnapshotEnd(uint32_t instances, FrameFileWriter& out) {
  v1::SnapshotRecord record;
  record.mutable_end()->set_instances(instances);
  return Add(record, out);
}

namespace {

// Applies a snapshot's records, in order, to the instances.
class SnapshotLoader {
 public:
  explicit SnapshotLoader(InstanceAccess& access) : access_(access) {}

  // DATA_LOSS for a record that does not fit (the caller adds where);
  // FAILED_PRECONDITION for another image format or cluster configuration.
  Status Apply(const v1::SnapshotRecord& record) {
    if (end_) return DataLoss("a record after the end");
    if (!header_ && record.part_case() != v1::SnapshotRecord::kHeader) {
      return DataLoss("no header");
    }
    if (record.part_case() != v1::SnapshotRecord::kRows) {
      BTSIM_RETURN_IF_ERROR(Fit(FinishBackup()));
    }
    switch (record.part_case()) {
      case v1::SnapshotRecord::kHeader:
        return Header(record.header());
      case v1::SnapshotRecord::kInstance:
        return Instance(record.instance());
      case v1::SnapshotRecord::kCluster:
        return Cluster(record.cluster());
      case v1::SnapshotRecord::kLogEntry:
        return Fit(LogEntry(record.log_entry()));
      case v1::SnapshotRecord::kTable:
        return Fit(Table(record.table()));
      case v1::SnapshotRecord::kRows:
        return Fit(Rows(record.rows()));
      case v1::SnapshotRecord::kBackup:
        return Fit(Backup(record.backup()));
      case v1::SnapshotRecord::kEnd:
        return Fit(End(record.end()));
      default:
        return DataLoss("an empty record");
    }
  }
  bool ended() const { return end_; }
  LoadedSnapshot& loaded() { return loaded_; }

 private:
  static Status DataLoss(const std::string& why) {
    return Status(StatusCode::kDataLoss, why);
  }
  // Whatever does not fit is damage to the snapshot.
  static Status Fit(Status s) { return s.ok() ? s : DataLoss(s.message()); }
  Status With(const std::function<Status(instance::Instance&)>& fn) {
    if (instance_ == nullptr) return DataLoss("no instance record before");
    return access_.With(instance_->name, fn);
  }
  // The last instance had a record for each of its clusters, and the last
  // cluster's log holds what its record said.
  Status InstanceComplete() {
    if (!missing_clusters_.empty()) {
      return DataLoss("no record of cluster '" + *missing_clusters_.begin() +
                      "'");
    }
    return LogComplete();
  }
  Status LogComplete() {
    if (!cluster_) return OkStatus();
    return With([&](instance::Instance& i) -> Status {
      if (i.replicas().LogPosition(cluster_->id) != cluster_->last_position) {
        return DataLoss("the log of cluster '" + cluster_->id +
                        "' is incomplete");
      }
      return OkStatus();
    });
  }

  Status Header(const v1::SnapshotHeader& h) {
    if (header_) return DataLoss("a second header");
    if (h.image_format() != cluster::kImageFormat) {
      return FailedPrecondition("written in image format " +
                                std::to_string(h.image_format()) +
                                ", which this btsim does not read (it reads " +
                                std::to_string(cluster::kImageFormat) + ")");
    }
    header_ = true;
    loaded_.generation = h.generation();
    return OkStatus();
  }

  Status Instance(const v1::SnapshotInstance& in) {
    BTSIM_RETURN_IF_ERROR(Fit(InstanceComplete()));
    for (const v1::Cluster& c : in.metadata().clusters()) {
      missing_clusters_.insert(c.id());
    }
    if (loaded_.instances.contains(in.number())) {
      return DataLoss("instance number declared twice");
    }
    InstanceEntry& entry = loaded_.instances[in.number()];
    entry.name = in.name();
    entry.created_with = in.created_with();
    instance_ = &entry;
    cluster_.reset();
    rows_to_table_ = false;
    bool configured = true;
    Status s = With([&](instance::Instance& i) -> Status {
      i.replicas().BeginReplay();
      Status fits = CheckCreatedWith(i, entry.created_with);
      if (!fits.ok()) {
        configured = false;
        return fits;
      }
      BTSIM_RETURN_IF_ERROR(LineUpClusters(i, in.metadata(), in.next_origin()));
      return ApplyMetadata(i, in.metadata(), nullptr);
    });
    // A configuration that does not fit is the user's to fix.
    return configured ? Fit(s) : s;
  }

  Status Cluster(const v1::SnapshotCluster& c) {
    BTSIM_RETURN_IF_ERROR(Fit(LogComplete()));
    auto decoded = DecodeReplicaState(c);
    if (!decoded.ok()) return DataLoss(decoded.status().message());
    replication::ReplicaState state = std::move(decoded).value();
    BTSIM_RETURN_IF_ERROR(Fit(With([&](instance::Instance& i) -> Status {
      BTSIM_RETURN_IF_ERROR(i.replicas().ReplayState(state));
      return i.replicas().Find(state.id)->LoadImage(DecodeClusterImage(c));
    })));
    if (missing_clusters_.erase(state.id) == 0) {
      return DataLoss("a second record of cluster '" + state.id + "'");
    }
    cluster_ = std::move(state);
    rows_to_table_ = false;
    loaded_.high_water =
        std::max(loaded_.high_water, CommitTime(c.last_version()));
    return OkStatus();
  }

  Status LogEntry(const v1::LogEntry& e) {
    if (!cluster_) return DataLoss("an entry outside a cluster");
    BTSIM_ASSIGN_OR_RETURN(replication::LogEntry entry, DecodeLogEntry(e));
    return With([&](instance::Instance& i) {
      return i.replicas().ReplayLogEntry(cluster_->origin, std::move(entry));
    });
  }

  Status Table(const v1::TableImage& t) {
    if (!cluster_) return DataLoss("a table outside a cluster");
    BTSIM_ASSIGN_OR_RETURN(cluster::TableImage image, DecodeTableImage(t));
    table_ = image.id;
    rows_to_table_ = true;
    return With([&](instance::Instance& i) {
      return i.replicas().Find(cluster_->id)->LoadTable(image);
    });
  }

  Status Rows(const v1::Rows& rows) {
    if (rows.keys_size() != rows.encoded_size()) {
      return DataLoss("keys and rows do not pair up");
    }
    if (backup_data_ != nullptr) {
      for (int k = 0; k < rows.keys_size(); ++k) {
        BTSIM_RETURN_IF_ERROR(
            backup_data_->LoadRow(rows.keys(k), rows.encoded(k)));
      }
      return OkStatus();
    }
    if (!rows_to_table_) return DataLoss("rows outside a table or backup");
    return With([&](instance::Instance& i) -> Status {
      cluster::Cluster* c = i.replicas().Find(cluster_->id);
      for (int k = 0; k < rows.keys_size(); ++k) {
        BTSIM_RETURN_IF_ERROR(
            c->LoadRow(table_, rows.keys(k), rows.encoded(k)));
      }
      return OkStatus();
    });
  }

  Status Backup(const v1::SnapshotBackup& b) {
    rows_to_table_ = false;
    backup_ = DecodeBackup(b.backup());
    BTSIM_ASSIGN_OR_RETURN(cluster::TableImage image,
                           DecodeTableImage(b.data()));
    cluster::TableOptions options;
    BTSIM_RETURN_IF_ERROR(With([&](instance::Instance& i) -> Status {
      const cluster::Cluster* c = i.replicas().Find(backup_.cluster);
      if (c == nullptr) {
        return DataLoss("a backup of unknown cluster '" + backup_.cluster +
                        "'");
      }
      options = c->table_options();
      return OkStatus();
    }));
    BTSIM_ASSIGN_OR_RETURN(backup_data_,
                           cluster::Table::FromImage(image, options));
    return OkStatus();
  }

  // Adds the backup whose rows were being loaded, if any.
  Status FinishBackup() {
    if (backup_data_ == nullptr) return OkStatus();
    backup_.data = std::move(backup_data_);
    return With([&](instance::Instance& i) {
      return i.backups().ReplayAdd(std::move(backup_));
    });
  }

  Status End(const v1::SnapshotEnd& e) {
    BTSIM_RETURN_IF_ERROR(InstanceComplete());
    if (e.instances() != loaded_.instances.size()) {
      return DataLoss("the end record counts " + std::to_string(e.instances()) +
                      " instances, the snapshot holds " +
                      std::to_string(loaded_.instances.size()));
    }
    end_ = true;
    return OkStatus();
  }

  InstanceAccess& access_;
  LoadedSnapshot loaded_;
  bool header_ = false;
  bool end_ = false;
  const InstanceEntry* instance_ = nullptr;  // the current instance
  // The current cluster's replication state (its log must end where it
  // says), and whether rows go to its table `table_`.
  std::optional<replication::ReplicaState> cluster_;
  std::set<std::string> missing_clusters_;  // of the current instance
  std::string table_;
  bool rows_to_table_ = false;
  // The backup whose rows are being loaded (data set: one is).
  instance::Backup backup_;
  std::unique_ptr<cluster::Table> backup_data_;
};

}  // namespace

Result<LoadedSnapshot> LoadSnapshot(const std::string& path,
                                    InstanceAccess& access) {
  BTSIM_ASSIGN_OR_RETURN(
      std::unique_ptr<LogReader> reader,
      LogReader::Open(path, kSnapshotMagic, /*torn_tails=*/false));
  SnapshotLoader loader(access);
  Frame frame;
  while (true) {
    BTSIM_ASSIGN_OR_RETURN(bool more, reader->Next(&frame));
    if (!more) break;
    v1::SnapshotRecord record;
    Status s = frame.type == kSnapshotRecordType &&
                       record.ParseFromString(frame.payload)
                   ? loader.Apply(record)
                   : Status(StatusCode::kDataLoss, "not a snapshot record");
    if (!s.ok()) {
      return Status(s.code(), path + ": record at offset " +
                                  std::to_string(frame.offset) + ": " +
                                  s.message());
    }
    ++loader.loaded().records;
  }
  if (!loader.ended()) {
    return Status(StatusCode::kDataLoss,
                  path + ": incomplete snapshot (it ends at offset " +
                      std::to_string(reader->end()) +
                      " without its end record)");
  }
  return std::move(loader.loaded());
}

}  // namespace btsim::durable
