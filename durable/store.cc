#include "durable/store.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <set>
#include <utility>
#include <vector>

#include "btsim/durable/v1/journal.pb.h"
#include "durable/codec.h"

namespace btsim::durable {

namespace {

constexpr uint8_t kRecordType = 1;  // a v1::JournalRecord

sim::Time TimeOf(cluster::Version version) {
  return sim::Time(cluster::VersionTime(version).time_since_epoch());
}

// Makes `instance`'s metadata what `meta` says. The first metadata of an
// instance is the one it was created with: its clusters must be the ones
// this configuration gives it.
Status ApplyMetadata(instance::Instance& instance, const v1::Metadata& meta,
                     bool first) {
  std::vector<instance::ClusterConfig> now = instance.Clusters();
  if (first) {
    std::string want, have;
    for (const v1::Cluster& c : meta.clusters()) {
      want += (want.empty() ? "" : ",") + c.id() + "=" + c.zone();
    }
    for (const instance::ClusterConfig& c : now) {
      have += (have.empty() ? "" : ",") + c.id + "=" + c.zone;
    }
    if (want != have) {
      return FailedPrecondition(
          "instance " + instance.name() + " was created with clusters " + want +
          ", but this configuration gives it " + have +
          "; start with the configuration the data was written with");
    }
  }
  std::set<std::string> listed;
  for (const v1::Cluster& c : meta.clusters()) listed.insert(c.id());
  for (const instance::ClusterConfig& c : now) {
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

}  // namespace

// One instance's journal: its records, tagged with its number.
class Store::InstanceLog : public instance::InstanceJournal {
 public:
  InstanceLog(Store& store, uint32_t number) : store_(store), number_(number) {}
  uint32_t number() const { return number_; }

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
  // Scratch, reused (the instance's lock serialises the calls).
  v1::JournalRecord record_;
  std::string payload_;
};

Result<std::unique_ptr<Store>> Store::Open(const std::string& dir) {
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
  return std::unique_ptr<Store>(new Store(dir, fd));
}

Store::Store(std::string dir, int lock_fd)
    : dir_(std::move(dir)),
      journal_path_(dir_ + "/journal.log"),
      lock_fd_(lock_fd) {}

Store::~Store() {
  writer_.reset();    // syncs what is queued
  ::close(lock_fd_);  // releases the lock
}

uint64_t Store::syncs() const {
  return writer_ == nullptr ? 0 : writer_->syncs();
}

void Store::Append(const std::string& payload) {
  writer_->Append(kRecordType, payload);
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

void Store::Attach(instance::Instance& instance,
                   std::optional<uint32_t> number) {
  std::unique_ptr<InstanceLog> log;
  {
    std::lock_guard<std::mutex> lock(mu_);
    const uint32_t n = number.value_or(next_number_);
    next_number_ = std::max(next_number_, n + 1);
    log = std::make_unique<InstanceLog>(*this, n);
  }
  if (!number) {
    log->WriteName(instance.name());
    log->OnMetadataChanged(instance);
  }
  instance.set_journal(log.get());
  std::lock_guard<std::mutex> lock(mu_);
  logs_[instance.name()] = std::move(log);
}

void Store::OnInstanceCreated(instance::Instance& instance) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (recovering_ || writer_ == nullptr) return;
  }
  Attach(instance, std::nullopt);
}

Result<Recovery> Store::Recover(InstanceAccess& access) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    recovering_ = true;
  }
  BTSIM_ASSIGN_OR_RETURN(Scan scan, ScanLog(journal_path_));
  Recovery recovery;
  recovery.torn_tail = scan.torn_tail;
  recovery.torn_offset = scan.end;
  std::map<uint32_t, std::string> names;  // by number
  std::set<uint32_t> with_metadata;
  for (const Frame& frame : scan.frames) {
    auto at = [&](StatusCode code, const std::string& why) {
      return Status(code, journal_path_ + ": record at offset " +
                              std::to_string(frame.offset) + ": " + why);
    };
    v1::JournalRecord record;
    if (frame.type != kRecordType || !record.ParseFromString(frame.payload)) {
      return at(StatusCode::kDataLoss, "not a journal record");
    }
    const uint32_t number = record.instance();
    if (record.change_case() == v1::JournalRecord::kName) {
      if (names.contains(number)) {
        return at(StatusCode::kDataLoss, "instance number declared twice");
      }
      names[number] = record.name();
      ++recovery.instances;
      Status s = access.With(record.name(), [](instance::Instance& i) {
        i.replicas().BeginReplay();
        return OkStatus();
      });
      if (!s.ok()) return at(s.code(), s.message());
      continue;
    }
    auto name = names.find(number);
    if (name == names.end()) {
      return at(StatusCode::kDataLoss,
                "unknown instance number " + std::to_string(number));
    }
    Status s = access.With(name->second, [&](instance::Instance& i) -> Status {
      switch (record.change_case()) {
        case v1::JournalRecord::kCommit: {
          const v1::Commit& c = record.commit();
          BTSIM_ASSIGN_OR_RETURN(cluster::CommitRecord r,
                                 DecodeRecord(c.record()));
          recovery.high_water =
              std::max(recovery.high_water, TimeOf(r.version));
          return i.replicas().ReplayCommit(c.origin(), c.position(), r);
        }
        case v1::JournalRecord::kApplied: {
          const v1::Applied& a = record.applied();
          return i.replicas().ReplayApplied(a.origin(), a.peer(), a.position());
        }
        case v1::JournalRecord::kMetadata: {
          const bool first = with_metadata.insert(number).second;
          return ApplyMetadata(i, record.metadata(), first);
        }
        default:
          return Status(StatusCode::kDataLoss, "empty record");
      }
    });
    if (!s.ok()) return at(s.code(), s.message());
    ++recovery.records;
  }
  BTSIM_ASSIGN_OR_RETURN(writer_, LogWriter::Open(journal_path_, scan.end));
  for (const auto& [number, name] : names) {
    Status s = access.With(name, [&, n = number](instance::Instance& i) {
      i.replicas().EndReplay();
      Attach(i, n);
      return OkStatus();
    });
    if (!s.ok()) return s;
  }
  {
    std::lock_guard<std::mutex> lock(mu_);
    recovering_ = false;
  }
  return recovery;
}

}  // namespace btsim::durable
