#include "durable/store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <utility>
#include <vector>

#include "btsim/durable/v1/journal.pb.h"
#include "durable/codec.h"
#include "durable/files.h"

namespace btsim::durable {

// One instance's journal: its records, tagged with its number.
class Store::InstanceLog : public instance::InstanceJournal {
 public:
  InstanceLog(Store& store, uint32_t number, v1::Metadata created_with)
      : store_(store),
        number_(number),
        created_with_(std::move(created_with)) {}
  uint32_t number() const { return number_; }
  // The clusters the instance was created with (snapshots keep them).
  const v1::Metadata& created_with() const { return created_with_; }

  void OnCommit(uint32_t origin, uint64_t position,
                const cluster::CommitRecord& record) override {
    record_.Clear();
    record_.set_instance(number_);
    v1::Commit* commit = record_.mutable_commit();
    commit->set_origin(origin);
    commit->set_position(position);
    EncodeRecord(record, commit->mutable_record());
    Write();
  }
  void OnApplied(uint32_t origin, uint32_t peer, uint64_t position) override {
    record_.Clear();
    record_.set_instance(number_);
    v1::Applied* applied = record_.mutable_applied();
    applied->set_origin(origin);
    applied->set_peer(peer);
    applied->set_position(position);
    Write();
  }
  void OnMetadataChanged(const instance::Instance& instance) override {
    record_.Clear();
    record_.set_instance(number_);
    EncodeMetadata(instance, record_.mutable_metadata());
    Write();
  }
  void OnBackupChanged(const instance::Backup& backup,
                       instance::BackupChange change) override {
    record_.Clear();
    record_.set_instance(number_);
    v1::BackupChanged* changed = record_.mutable_backup_changed();
    changed->set_change(static_cast<int32_t>(change));
    EncodeBackup(backup, changed->mutable_backup());
    Write();
  }
  void OnBackupDeleted(std::string_view cluster, std::string_view id) override {
    record_.Clear();
    record_.set_instance(number_);
    v1::BackupDeleted* deleted = record_.mutable_backup_deleted();
    deleted->set_cluster(std::string(cluster));
    deleted->set_id(std::string(id));
    Write();
  }
  void OnTableRestored(std::string_view cluster, std::string_view id,
                       const std::string& table,
                       cluster::Version version) override {
    record_.Clear();
    record_.set_instance(number_);
    v1::TableRestored* restored = record_.mutable_table_restored();
    restored->set_cluster(std::string(cluster));
    restored->set_id(std::string(id));
    restored->set_table(table);
    restored->set_version(version);
    Write();
  }
  void WriteName(const std::string& name) {
    record_.Clear();
    record_.set_instance(number_);
    record_.set_name(name);
    Write();
  }

 private:
  void Write() {
    record_.SerializeToString(&payload_);
    store_.Append(payload_);
  }
  Store& store_;
  const uint32_t number_;
  const v1::Metadata created_with_;
  // Scratch, reused (the instance's lock serialises the calls).
  v1::JournalRecord record_;
  std::string payload_;
};

Result<std::unique_ptr<Store>> Store::Open(const std::string& dir,
                                           StoreOptions options) {
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0) {
    return FailedPrecondition("--data-dir " + dir + ": " +
                              std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode)) {
    return FailedPrecondition("--data-dir " + dir + ": not a directory");
  }
  if (::access(dir.c_str(), W_OK | X_OK) != 0) {
    return FailedPrecondition("--data-dir " + dir + ": not writable (" +
                              std::strerror(errno) + ")");
  }
  const std::string lock_path = dir + "/LOCK";
  const int fd = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) {
    return FailedPrecondition("--data-dir " + dir + ": cannot open " +
                              lock_path + ": " + std::strerror(errno));
  }
  if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
    const int error = errno;
    ::close(fd);
    return FailedPrecondition(
        "--data-dir " + dir + ": " +
        (error == EWOULDBLOCK
             ? std::string("locked by another running btsim (") + lock_path +
                   ")"
             : std::string("cannot lock ") + lock_path + ": " +
                   std::strerror(error)));
  }
  return std::unique_ptr<Store>(new Store(dir, fd, options));
}

Store::Store(std::string dir, int lock_fd, StoreOptions options)
    : dir_(std::move(dir)), lock_fd_(lock_fd), options_(options) {}

Store::~Store() {
  StopSnapshots();
  writer_.reset();    // syncs what is queued
  ::close(lock_fd_);  // releases the lock
}

std::string Store::journal_path() const {
  std::lock_guard<std::mutex> lock(mu_);
  return JournalPath(dir_, generation_);
}

uint64_t Store::generation() const {
  std::lock_guard<std::mutex> lock(mu_);
  return generation_;
}

uint64_t Store::snapshots() const {
  std::lock_guard<std::mutex> lock(mu_);
  return snapshots_;
}

uint64_t Store::syncs() const {
  return writer_ == nullptr ? 0 : writer_->syncs();
}

void Store::Append(const std::string& payload) {
  const uint64_t end = writer_->Append(kJournalRecordType, payload);
  if (options_.snapshot_journal_bytes == 0) return;
  bool wake = false;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uint64_t limit =
        std::max(options_.snapshot_journal_bytes, snapshot_bytes_);
    if (!snapshot_wanted_ && end - journal_start_ > limit) {
      snapshot_wanted_ = wake = true;
    }
  }
  if (wake) snapshot_cv_.notify_one();
}

void Store::Sync() {
  if (writer_ != nullptr) writer_->Sync();
}

void Store::AfterSync(std::function<void()> done) {
  if (writer_ == nullptr) {
    done();
    return;
  }
  writer_->AfterSync(std::move(done));
}

void Store::Attach(instance::Instance& instance, std::optional<uint32_t> number,
                   const v1::Metadata* created_with) {
  v1::Metadata clusters;
  if (created_with != nullptr) {
    *clusters.mutable_clusters() = created_with->clusters();
  } else {
    EncodeMetadata(instance, &clusters);
    clusters.clear_profiles();
    clusters.clear_protected_tables();
  }
  std::unique_ptr<InstanceLog> log;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uint32_t n = number.value_or(next_number_);
    next_number_ = std::max(next_number_, n + 1);
    log = std::make_unique<InstanceLog>(*this, n, std::move(clusters));
  }
  if (!number) {
    log->WriteName(instance.name());
    log->OnMetadataChanged(instance);
  } else if (created_with == nullptr) {
    // Its name was journaled but not its first metadata (a crash in
    // between): that record is written now.
    log->OnMetadataChanged(instance);
  }
  instance.set_journal(log.get());
  std::lock_guard<std::mutex> lock(mu_);
  logs_[instance.name()] = std::move(log);
}

void Store::OnInstanceCreated(instance::Instance& instance) {
  // Not while a snapshot is written: its record goes to the next journal.
  std::lock_guard<std::mutex> snapshot(snapshot_mu_);
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (recovering_ || writer_ == nullptr) return;
  }
  Attach(instance, std::nullopt, nullptr);
}

Result<Recovery> Store::Recover(InstanceAccess& access) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    recovering_ = true;
  }
  BTSIM_ASSIGN_OR_RETURN(Files files, ListFiles(dir_));
  const uint64_t g = files.snapshots.empty() ? 0 : *files.snapshots.rbegin();
  // A journal after the newest snapshot can only be one a snapshot was
  // starting when the server stopped: empty. Records in it mean its
  // snapshot went missing.
  for (auto it = files.journals.upper_bound(g); it != files.journals.end();
       ++it) {
    const std::string path = JournalPath(dir_, *it);
    BTSIM_ASSIGN_OR_RETURN(std::unique_ptr<LogReader> reader,
                           LogReader::Open(path, kLogMagic));
    Frame first;
    BTSIM_ASSIGN_OR_RETURN(bool holds_records, reader->Next(&first));
    if (holds_records) {
      return Status(StatusCode::kDataLoss,
                    path + " holds records, but its snapshot " +
                        SnapshotPath(dir_, *it) + " is missing");
    }
  }
  Recovery recovery;
  recovery.generation = g;
  std::map<uint32_t, InstanceEntry> instances;
  uint64_t snapshot_size = 0;
  if (g > 0) {
    const std::string path = SnapshotPath(dir_, g);
    BTSIM_ASSIGN_OR_RETURN(LoadedSnapshot loaded, LoadSnapshot(path, access));
    if (loaded.generation != g) {
      return Status(StatusCode::kDataLoss,
                    path + ": its header names generation " +
                        std::to_string(loaded.generation));
    }
    instances = std::move(loaded.instances);
    recovery.snapshot_records = loaded.records;
    recovery.high_water = loaded.high_water;
    std::error_code error;
    snapshot_size = std::filesystem::file_size(path, error);
    if (error) return Unavailable(path + ": " + error.message());
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    generation_ = g;
    snapshot_bytes_ = snapshot_size;
  }
  uint64_t end = 0;
  BTSIM_RETURN_IF_ERROR(ReplayJournal(access, instances, recovery, &end));
  recovery.instances = instances.size();
  BTSIM_ASSIGN_OR_RETURN(writer_, LogWriter::Open(JournalPath(dir_, g), end));
  for (const auto& [number, entry] : instances) {
    Status s = access.With(entry.name, [&, n = number](instance::Instance& i) {
      i.replicas().EndReplay();
      // No clusters: the journal ended between its name and its metadata.
      Attach(i, n,
             entry.created_with.clusters().empty() ? nullptr
                                                   : &entry.created_with);
      return OkStatus();
    });
    if (!s.ok()) return s;
  }
  RemoveOtherGenerations();
  {
    std::lock_guard<std::mutex> lock(mu_);
    recovering_ = false;
    access_ = &access;
  }
  if (options_.snapshot_journal_bytes > 0) {
    snapshotter_ = std::thread([this] { SnapshotLoop(); });
  }
  return recovery;
}

void Store::RemoveOtherGenerations() {
  const uint64_t g = generation();
  auto files = ListFiles(dir_);
  if (!files.ok()) return;  // left for the next start
  std::error_code ignored;
  for (uint64_t s : files->snapshots) {
    if (s != g) std::filesystem::remove(SnapshotPath(dir_, s), ignored);
  }
  for (uint64_t j : files->journals) {
    if (j != g) std::filesystem::remove(JournalPath(dir_, j), ignored);
  }
  std::filesystem::remove(SnapshotTempPath(dir_), ignored);
}

Status Store::Snapshot() {
  std::lock_guard<std::mutex> one_at_a_time(snapshot_run_mu_);
  InstanceAccess* access;
  {
    std::lock_guard<std::mutex> lock(mu_);
    access = access_;
  }
  if (access == nullptr || writer_ == nullptr) {
    return FailedPrecondition("the store has not recovered yet");
  }
  const std::string temp = SnapshotTempPath(dir_);
  // An instance created after WithAll listed the instances and before it
  // took snapshot_mu_ is journaled but not locked: try again with it.
  constexpr int kAttempts = 20;
  Status s;
  SnapshotReport report;
  for (int attempt = 0; attempt < kAttempts; ++attempt) {
    s = access->WithAll(
        [&](const std::vector<instance::Instance*>& all) -> Status {
          // Every instance is locked and no new one is attached: nothing is
          // journaled until this returns.
          std::lock_guard<std::mutex> snapshot(snapshot_mu_);
          {
            std::lock_guard<std::mutex> lock(mu_);
            if (logs_.size() != all.size()) {
              return Aborted("an instance was created meanwhile");
            }
          }
          // Wall time, for the report only (calls waited for it).
          const auto started = std::chrono::steady_clock::now();
          const uint64_t next = generation() + 1;
          BTSIM_ASSIGN_OR_RETURN(std::unique_ptr<FrameFileWriter> out,
                                 FrameFileWriter::Create(temp, kSnapshotMagic));
          BTSIM_RETURN_IF_ERROR(WriteSnapshotHeader(next, *out));
          for (instance::Instance* i : all) {
            const InstanceLog* log;
            {
              std::lock_guard<std::mutex> lock(mu_);
              auto it = logs_.find(i->name());
              log = it == logs_.end() ? nullptr : it->second.get();
            }
            if (log == nullptr) {
              return Internal("instance " + i->name() + " is not journaled");
            }
            InstanceEntry entry{i->name(), log->created_with()};
            BTSIM_RETURN_IF_ERROR(
                WriteInstanceSnapshot(*i, log->number(), entry, *out));
          }
          BTSIM_RETURN_IF_ERROR(
              WriteSnapshotEnd(static_cast<uint32_t>(all.size()), *out));
          const uint64_t size = out->size();
          BTSIM_RETURN_IF_ERROR(out->Finish());
          // The new journal exists (empty, synced) before the snapshot is in
          // place; the old one is complete and synced.
          BTSIM_RETURN_IF_ERROR(writer_->Switch(JournalPath(dir_, next)));
          const std::string path = SnapshotPath(dir_, next);
          Status placed = std::rename(temp.c_str(), path.c_str()) == 0
                              ? SyncDirectory(dir_)
                              : Unavailable(path + ": " + std::strerror(errno));
          if (!placed.ok()) {
            // Later records would go to a journal whose snapshot may not be
            // there after a crash: stop before any does (a restart resumes
            // from the previous snapshot and journal, both complete).
            std::fprintf(stderr,
                         "btsim: --data-dir %s: cannot put snapshot %s in "
                         "place: %s; stopping\n",
                         dir_.c_str(), path.c_str(), placed.message().c_str());
            std::fflush(stderr);
            std::_Exit(1);
          }
          std::lock_guard<std::mutex> lock(mu_);
          generation_ = next;
          journal_start_ = writer_->appended_end() - kLogMagic.size();
          snapshot_bytes_ = size;
          ++snapshots_;
          report = SnapshotReport{next, size, all.size(),
                                  std::chrono::steady_clock::now() - started};
          return OkStatus();
        });
    if (s.code() != StatusCode::kAborted) break;
  }
  if (!s.ok()) {
    std::error_code ignored;
    std::filesystem::remove(temp, ignored);
    return Status(s.code(), "snapshot: " + s.message());
  }
  RemoveOtherGenerations();
  if (options_.on_snapshot) options_.on_snapshot(report);
  return OkStatus();
}

void Store::SnapshotLoop() {
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mu_);
      snapshot_cv_.wait(lock, [&] { return stopping_ || snapshot_wanted_; });
      if (stopping_) return;
    }
    Status s = Snapshot();
    std::lock_guard<std::mutex> lock(mu_);
    if (!s.ok()) {
      std::fprintf(stderr, "btsim: --data-dir %s: %s (the journal goes on)\n",
                   dir_.c_str(), s.message().c_str());
      // Try again once the journal has grown as much again.
      journal_start_ = writer_->appended_end();
    }
    snapshot_wanted_ = false;
  }
}

void Store::StopSnapshots() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  snapshot_cv_.notify_all();
  if (snapshotter_.joinable()) snapshotter_.join();
}

}  // namespace btsim::durable
