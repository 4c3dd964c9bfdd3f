// Store's journal replay (durable/store.h): the records after the loaded
// snapshot, repeated through the instances' replay calls.
#include <algorithm>
#include <set>
#include <string>

#include "btsim/durable/v1/journal.pb.h"
#include "durable/codec.h"
#include "durable/files.h"
#include "durable/store.h"

namespace btsim::durable {

namespace {

Status ReplayBackupChange(instance::Instance& i, const v1::BackupChanged& c) {
  const instance::Backup backup = DecodeBackup(c.backup());
  switch (c.change()) {
    case static_cast<int32_t>(instance::BackupChange::kCreated):
      return i.backups().ReplayCreate(backup);
    case static_cast<int32_t>(instance::BackupChange::kCopied):
      return i.backups().ReplayCopy(backup);
    case static_cast<int32_t>(instance::BackupChange::kExpireTimeChanged):
      return i.backups().ReplayExpireTime(backup.cluster, backup.id,
                                          backup.expire_time);
    default:
      return InvalidArgument("backup change " + std::to_string(c.change()));
  }
}

}  // namespace

Status Store::ReplayJournal(InstanceAccess& access,
                            std::map<uint32_t, InstanceEntry>& instances,
                            Recovery& recovery, uint64_t* end) {
  const std::string path = JournalPath(dir_, generation_);
  auto opened = LogReader::Open(path, kLogMagic);
  if (!opened.ok()) {
    // A snapshot's journal is in place before the snapshot is.
    if (opened.status().code() == StatusCode::kNotFound && generation_ == 0) {
      return OkStatus();
    }
    return Status(opened.status().code() == StatusCode::kNotFound
                      ? StatusCode::kDataLoss
                      : opened.status().code(),
                  opened.status().message());
  }
  LogReader& reader = **opened;
  // Instances whose first metadata (the clusters they were created with)
  // is yet to come: those the journal declares.
  std::set<uint32_t> awaiting_metadata;
  Frame frame;
  while (true) {
    BTSIM_ASSIGN_OR_RETURN(bool more, reader.Next(&frame));
    if (!more) break;
    auto at = [&](StatusCode code, const std::string& why) {
      return Status(code, path + ": record at offset " +
                              std::to_string(frame.offset) + ": " + why);
    };
    v1::JournalRecord record;
    if (frame.type != kJournalRecordType ||
        !record.ParseFromString(frame.payload)) {
      return at(StatusCode::kDataLoss, "not a journal record");
    }
    const uint32_t number = record.instance();
    if (record.change_case() == v1::JournalRecord::kName) {
      if (instances.contains(number)) {
        return at(StatusCode::kDataLoss, "instance number declared twice");
      }
      instances[number].name = record.name();
      awaiting_metadata.insert(number);
      Status s = access.With(record.name(), [](instance::Instance& i) {
        i.replicas().BeginReplay();
        return OkStatus();
      });
      if (!s.ok()) return at(s.code(), s.message());
      continue;
    }
    auto entry = instances.find(number);
    if (entry == instances.end()) {
      return at(StatusCode::kDataLoss,
                "unknown instance number " + std::to_string(number));
    }
    Status s =
        access.With(entry->second.name, [&](instance::Instance& i) -> Status {
          switch (record.change_case()) {
            case v1::JournalRecord::kCommit: {
              const v1::Commit& c = record.commit();
              BTSIM_ASSIGN_OR_RETURN(cluster::CommitRecord r,
                                     DecodeRecord(c.record()));
              recovery.high_water =
                  std::max(recovery.high_water, CommitTime(r.version));
              return i.replicas().ReplayCommit(c.origin(), c.position(), r);
            }
            case v1::JournalRecord::kApplied: {
              const v1::Applied& a = record.applied();
              return i.replicas().ReplayApplied(a.origin(), a.peer(),
                                                a.position());
            }
            case v1::JournalRecord::kMetadata: {
              if (awaiting_metadata.erase(number) > 0) {
                *entry->second.created_with.mutable_clusters() =
                    record.metadata().clusters();
                return ApplyMetadata(i, record.metadata(),
                                     &entry->second.created_with);
              }
              return ApplyMetadata(i, record.metadata(), nullptr);
            }
            case v1::JournalRecord::kBackupChanged:
              return ReplayBackupChange(i, record.backup_changed());
            case v1::JournalRecord::kBackupDeleted: {
              const v1::BackupDeleted& d = record.backup_deleted();
              return i.backups().Delete(d.cluster(), d.id());
            }
            case v1::JournalRecord::kTableRestored: {
              const v1::TableRestored& t = record.table_restored();
              recovery.high_water =
                  std::max(recovery.high_water, CommitTime(t.version()));
              return i.backups().ReplayRestore(t.cluster(), t.id(), t.table(),
                                               t.version());
            }
            default:
              return Status(StatusCode::kDataLoss, "empty record");
          }
        });
    if (!s.ok()) return at(s.code(), s.message());
    ++recovery.records;
  }
  recovery.torn_tail = reader.torn_tail();
  recovery.torn_offset = reader.end();
  *end = reader.end();
  return OkStatus();
}

}  // namespace btsim::durable
