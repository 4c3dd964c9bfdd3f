#include "cluster/cluster.h"

#include <algorithm>
#include <chrono>

#include "base/bytes.h"
#include "cluster/aggregate.h"
#include "cluster/limits.h"
#include "cluster/timestamp.h"

namespace btsim::cluster {
namespace {

bool IdChar(char c, bool first) {
  if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
      (c >= '0' && c <= '9') || c == '_') {
    return true;
  }
  return !first && (c == '-' || c == '.');
}

bool ValidId(std::string_view id) {
  if (id.empty()) return false;
  for (size_t i = 0; i < id.size(); ++i) {
    if (!IdChar(id[i], i == 0)) return false;
  }
  return true;
}

}  // namespace

namespace {

// Table and backup ids share one rule; `kind` names which the id is.
Status ValidateId(std::string_view id, std::string_view field,
                  std::string_view kind) {
  if (!ValidId(id) || static_cast<int64_t>(id.size()) > kMaxIdLength) {
    return InvalidArgument(std::string(field) + ": " + QuoteForError(id) +
                           " is not a valid " + std::string(kind) +
                           " id; it must match [_a-zA-Z0-9][-_.a-zA-Z0-9]* "
                           "and be at most 50 characters");
  }
  return OkStatus();
}

}  // namespace

Status ValidateTableId(std::string_view id, std::string_view field) {
  return ValidateId(id, field, "table");
}

Status ValidateBackupId(std::string_view id, std::string_view field) {
  return ValidateId(id, field, "backup");
}

Status ValidateFamilyName(std::string_view name, const std::string& field) {
  if (!ValidId(name) ||
      static_cast<int64_t>(name.size()) > kMaxFamilyNameLength) {
    return InvalidArgument(field + ": " + QuoteForError(name) +
                           " is not a valid column family name; it must "
                           "match [_a-zA-Z0-9][-_.a-zA-Z0-9]* and be at most "
                           "64 characters");
  }
  return OkStatus();
}

Cluster::Cluster(const sim::Clock& clock, sim::Rng rng, ClusterOptions options)
    : clock_(clock), rng_(rng), options_(options) {}

CommitContext Cluster::Commit() {
  Version v = MakeVersion(TimestampOf(clock_.Now()), options_.origin);
  if (v <= last_version_) {
    v = MakeVersion(VersionTime(last_version_) + std::chrono::microseconds(1),
                    options_.origin);
  }
  last_version_ = v;
  return CommitContext{v, TruncateToMillis(VersionTime(v))};
}

namespace {

// Whether a table `id` may join a cluster holding `tables` tables, `exists`
// telling whether one of that id is among them.
Status CanAddTable(const std::string& id, bool exists, size_t tables) {
  BTSIM_RETURN_IF_ERROR(ValidateTableId(id));
  if (exists) return AlreadyExists("table '" + id + "' already exists");
  if (static_cast<int64_t>(tables) >= kMaxTablesPerInstance) {
    return Status(StatusCode::kResourceExhausted,
                  "an instance holds at most 1000 tables");
  }
  return OkStatus();
}

}  // namespace

Status Cluster::CanRestoreTable(const std::string& id) const {
  return CanAddTable(id, tables_.contains(id), tables_.size());
}

Result<Version> Cluster::RestoreTable(const std::string& id,
                                      const Table& source, Version version) {
  BTSIM_RETURN_IF_ERROR(CanAddTable(id, tables_.contains(id), tables_.size()));
  if (version == 0) {
    version = Commit().version;
  } else {
    Observe(version);
  }
  auto table = source.Snapshot(id);
  table->set_created_version(version);
  HookTable(*table);
  tables_[id] = std::move(table);
  ++tables_version_;
  return version;
}

Status Cluster::CreateTable(const std::string& id,
                            std::span<const FamilyModification> families,
                            const std::vector<std::string>& splits) {
  BTSIM_RETURN_IF_ERROR(CanAddTable(id, tables_.contains(id), tables_.size()));
  for (size_t i = 0; i < splits.size(); ++i) {
    if (splits[i].empty()) {
      return InvalidArgument("initial_splits[" + std::to_string(i) +
                             "].key: must not be empty");
    }
    if (static_cast<int64_t>(splits[i].size()) > kMaxRowKeyBytes) {
      return InvalidArgument("initial_splits[" + std::to_string(i) +
                             "].key: longer than the 4 KiB row key limit");
    }
  }
  for (const FamilyModification& f : families) {
    BTSIM_RETURN_IF_ERROR(
        ValidateFamilyName(f.name, "table.column_families['" + f.name + "']"));
  }
  auto table = std::make_unique<Table>(id, options_.table, splits);
  const Version version = Commit().version;
  BTSIM_RETURN_IF_ERROR(table->ModifyColumnFamilies(families, version));
  table->set_created_version(version);
  HookTable(*table);
  tables_[id] = std::move(table);
  ++tables_version_;
  CommitRecord record;
  record.kind = CommitRecord::Kind::kCreateTable;
  record.table = id;
  record.version = version;
  record.families.assign(families.begin(), families.end());
  record.splits = splits;
  Report(std::move(record));
  return OkStatus();
}

void Cluster::HookTable(Table& table) {
  table.set_commit_hook(
      [this, id = table.id()](std::string_view key, std::span<const Mutation> m,
                              Timestamp server_time, Version version,
                              RowShare share, std::string_view token) {
        if (!token.empty()) {
          idempotency_.Remember(id, key, token, VersionTime(version));
        }
        if (observer_ == nullptr) return;
        if (!observer_->WantsRowRecords()) {
          observer_->OnRowCommitSkipped();
          return;
        }
        observer_->OnRowCommit(RowCommit{id, key, m, server_time, version,
                                         std::move(share), token});
      });
}

void Cluster::Report(CommitRecord record) {
  if (observer_ == nullptr) return;
  if (record.version == 0) record.version = Commit().version;
  observer_->OnCommit(std::move(record));
}

Status Cluster::ModifyColumnFamilies(std::string_view table,
                                     std::span<const FamilyModification> mods) {
  BTSIM_ASSIGN_OR_RETURN(Table * t, GetTable(table));
  const Version version = Commit().version;
  BTSIM_RETURN_IF_ERROR(t->ModifyColumnFamilies(mods, version));
  CommitRecord record;
  record.kind = CommitRecord::Kind::kModifyFamilies;
  record.table = std::string(table);
  record.version = version;
  record.families.assign(mods.begin(), mods.end());
  Report(std::move(record));
  return OkStatus();
}

void Cluster::ApplyReplicatedBatch(std::span<const CommitRecord* const> records,
                                   const std::function<void(size_t)>& applied) {
  size_t i = 0;
  while (i < records.size()) {
    const CommitRecord& first = *records[i];
    auto it = tables_.find(first.table);
    if (first.kind != CommitRecord::Kind::kMutateRow || it == tables_.end()) {
      ApplyReplicated(first);
      applied(i++);
      continue;
    }
    size_t end = i + 1;
    while (end < records.size() &&
           records[end]->kind == CommitRecord::Kind::kMutateRow &&
           SameBytes(records[end]->table, first.table)) {
      ++end;
    }
    // Row writes leave the tables as they are: `it` stays valid.
    const size_t start = i;
    it->second->ApplyReplicated(records.subspan(start, end - start),
                                [&](size_t k) {
                                  RememberToken(*records[start + k]);
                                  Observe(records[start + k]->version);
                                  applied(start + k);
                                });
    i = end;
  }
}

void Cluster::RememberToken(const CommitRecord& record) {
  if (record.kind == CommitRecord::Kind::kMutateRow &&
      !record.idempotency_token.empty()) {
    idempotency_.Remember(record.table, record.row_key,
                          record.idempotency_token,
                          VersionTime(record.version));
  }
}

void Cluster::Observe(Version version) {
  // A change seen from another cluster moves this cluster's commit clock
  // past it, so that a write made after reading it wins over it even if
  // that cluster's clock ran ahead.
  if (VersionTime(version) >= VersionTime(last_version_)) {
    last_version_ = MakeVersion(VersionTime(version), options_.origin);
  }
}

void Cluster::ApplyReplicated(const CommitRecord& record) {
  auto it = tables_.find(record.table);
  Table* table = it == tables_.end() ? nullptr : it->second.get();
  RememberToken(record);
  switch (record.kind) {
    case CommitRecord::Kind::kMutateRow:
      if (table) {
        const CommitRecord* one = &record;
        table->ApplyReplicated({&one, 1}, [](size_t) {});
      }
      break;
    case CommitRecord::Kind::kDropRowRange:
      if (table) table->DropRowRangeAt(record.prefix, record.version);
      break;
    case CommitRecord::Kind::kCreateTable: {
      // Last-writer-wins with deletes: a table deleted after this creation
      // stays deleted (or is a later table).
      auto deleted = deleted_tables_.find(record.table);
      if (deleted != deleted_tables_.end() &&
          deleted->second >= record.version) {
        break;
      }
      if (table == nullptr) {
        auto created = std::make_unique<Table>(record.table, options_.table,
                                               record.splits);
        table = created.get();
        table->set_created_version(record.version);
        HookTable(*table);
        tables_[record.table] = std::move(created);
        ++tables_version_;
      } else if (record.version < table->created_version()) {
        // Created concurrently elsewhere, earlier: one table, as old as
        // the oldest creation.
        table->set_created_version(record.version);
      }
      table->ApplyReplicatedFamilies(record.families, record.version);
      break;
    }
    case CommitRecord::Kind::kModifyFamilies:
      if (table)
        table->ApplyReplicatedFamilies(record.families, record.version);
      break;
    case CommitRecord::Kind::kDeleteTable: {
      Version& deleted = deleted_tables_[record.table];
      deleted = std::max(deleted, record.version);
      if (table && table->created_version() < record.version) {
        tables_.erase(it);
        ++tables_version_;
      }
      break;
    }
  }
  Observe(record.version);
}

void Cluster::CopyDataFrom(const Cluster& source) {
  tables_.clear();
  ++tables_version_;
  deleted_tables_ = source.deleted_tables_;
  // Commits made here from now on come after everything the copy holds.
  Observe(source.last_version_);
  idempotency_ = source.idempotency_;
  for (const auto& [id, table] : source.tables_) {
    auto copy = table->Clone();
    HookTable(*copy);
    tables_[id] = std::move(copy);
  }
}

void Cluster::AddContents(sim::Fingerprint* out,
                          const ContentsVisitor& visit) const {
  sim::Rng unused(0);
  for (const auto& entry : tables_) {
    const std::string& id = entry.first;
    const auto& table = entry.second;
    out->Add("table");
    out->Add(id);
    for (const ColumnFamily& f : table->Families()) {
      out->Add(f.name);
      out->Add(f.gc_rule.ToString());
      // Added only for aggregate families: the fingerprints of tables
      // without any stay what they were.
      if (f.aggregate != Aggregate::kNone) {
        out->Add(std::string("aggregate:") + AggregateName(f.aggregate));
      }
    }
    table->Read(ReadOptions{}, unused,
                [&](std::string_view key, std::span<const CellView> cells) {
                  out->Add(key);
                  out->AddInt(static_cast<int64_t>(cells.size()));
                  for (const CellView& c : cells) {
                    out->Add(c.family);
                    out->Add(c.qualifier);
                    out->AddInt(Micros(c.timestamp));
                    out->Add(c.value);
                  }
                  if (visit) visit(id, key, cells);
                  return true;
                });
  }
}

bool Cluster::SameContents(const Cluster& other) const {
  if (tables_.size() != other.tables_.size()) return false;
  for (auto a = tables_.begin(), b = other.tables_.begin(); a != tables_.end();
       ++a, ++b) {
    if (!a->second->SameContents(*b->second)) return false;
  }
  return true;
}

Status Cluster::DeleteTable(std::string_view id) {
  auto it = tables_.find(id);
  if (it == tables_.end()) {
    return NotFound("table '" + std::string(id) + "' not found");
  }
  tables_.erase(it);
  ++tables_version_;
  const Version version = Commit().version;
  deleted_tables_[std::string(id)] = version;
  CommitRecord record;
  record.kind = CommitRecord::Kind::kDeleteTable;
  record.table = std::string(id);
  record.version = version;
  Report(std::move(record));
  return OkStatus();
}

Result<Table*> Cluster::GetTable(std::string_view id) {
  auto it = tables_.find(id);
  if (it == tables_.end()) {
    return NotFound("table '" + std::string(id) + "' not found");
  }
  return it->second.get();
}

Result<const Table*> Cluster::GetTable(std::string_view id) const {
  auto it = tables_.find(id);
  if (it == tables_.end()) {
    return NotFound("table '" + std::string(id) + "' not found");
  }
  return static_cast<const Table*>(it->second.get());
}

std::vector<std::string> Cluster::ListTables() const {
  std::vector<std::string> out;
  for (const auto& [id, table] : tables_) out.push_back(id);
  return out;
}

Status Cluster::MutateRow(std::string_view table, std::string_view key,
                          std::span<const Mutation> mutations,
                          const Idempotency& idempotency) {
  BTSIM_ASSIGN_OR_RETURN(Table * t, GetTable(table));
  if (!idempotency.token.empty()) {
    const Timestamp now = TimestampOf(clock_.Now());
    BTSIM_RETURN_IF_ERROR(
        IdempotencyMemory::Validate(idempotency, now, "idempotency"));
    // A replay of a write applied here: acknowledged, not applied again.
    if (idempotency_.Seen(table, key, idempotency.token, now)) {
      return OkStatus();
    }
  }
  return t->MutateRow(key, mutations, Commit(), idempotency.token);
}

Result<std::vector<Status>> Cluster::MutateRows(
    std::string_view table, std::span<const RowMutations> rows,
    std::vector<bool>* applied) {
  BTSIM_ASSIGN_OR_RETURN(Table * t, GetTable(table));
  if (rows.empty()) {
    return InvalidArgument("entries: at least one entry is required");
  }
  size_t total = 0;
  for (const RowMutations& r : rows) total += r.mutations.size();
  if (static_cast<int64_t>(total) > kMaxMutationsPerRequest) {
    return InvalidArgument("entries: " + std::to_string(total) +
                           " mutations in total; the limit is 100000 per "
                           "request");
  }
  // Entries with an idempotency token: refused when too old, acknowledged
  // without applying when a replay of a write applied here.
  std::vector<Status> early(rows.size());
  std::vector<bool> skip(rows.size(), false);
  bool any_skipped = false;
  const Timestamp now = TimestampOf(clock_.Now());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Idempotency& idempotency = rows[i].idempotency;
    if (idempotency.token.empty()) continue;
    early[i] = IdempotencyMemory::Validate(idempotency, now, "idempotency");
    skip[i] = !early[i].ok() ||
              idempotency_.Seen(table, rows[i].key, idempotency.token, now);
    any_skipped = any_skipped || skip[i];
  }
  // One commit for the whole batch: entries for the same row still apply
  // in order (see CommitContext).
  std::vector<Status> results;
  if (!any_skipped) {
    results = t->MutateRows(rows, Commit());
  } else {
    std::vector<RowMutations> to_apply;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!skip[i]) to_apply.push_back(rows[i]);
    }
    std::vector<Status> applied_results;
    if (!to_apply.empty()) applied_results = t->MutateRows(to_apply, Commit());
    size_t k = 0;
    for (size_t i = 0; i < rows.size(); ++i) {
      if (!skip[i]) early[i] = std::move(applied_results[k++]);
    }
    results = std::move(early);
  }
  if (applied != nullptr) {
    applied->assign(rows.size(), false);
    for (size_t i = 0; i < rows.size(); ++i) {
      (*applied)[i] = !skip[i] && results[i].ok();
    }
  }
  return results;
}

Result<bool> Cluster::CheckAndMutateRow(std::string_view table,
                                        std::string_view key,
                                        const Filter* predicate,
                                        std::span<const Mutation> if_true,
                                        std::span<const Mutation> if_false) {
  BTSIM_ASSIGN_OR_RETURN(Table * t, GetTable(table));
  return t->CheckAndMutateRow(key, predicate, if_true, if_false, Commit(),
                              rng_);
}

Result<std::vector<ModifiedCell>> Cluster::ReadModifyWriteRow(
    std::string_view table, std::string_view key,
    std::span<const ReadModifyWriteRule> rules) {
  BTSIM_ASSIGN_OR_RETURN(Table * t, GetTable(table));
  return t->ReadModifyWriteRow(key, rules, Commit());
}

Status Cluster::DropRowRange(std::string_view table, std::string_view prefix) {
  BTSIM_ASSIGN_OR_RETURN(Table * t, GetTable(table));
  const Version version = Commit().version;
  t->DropRowRangeAt(prefix, version);
  CommitRecord record;
  record.kind = CommitRecord::Kind::kDropRowRange;
  record.table = std::string(table);
  record.version = version;
  record.prefix = std::string(prefix);
  Report(std::move(record));
  return OkStatus();
}

Status Cluster::ReadRows(std::string_view table, const ReadOptions& options,
                         const RowVisitor& visit) {
  BTSIM_ASSIGN_OR_RETURN(const Table* t, GetTable(table));
  t->Read(options, rng_, visit);
  return OkStatus();
}

void Cluster::Compact() {
  // A lone cluster has applied every change, and commits nothing older
  // than now from here on.
  Compact(std::max(last_version_, MakeVersion(TimestampOf(clock_.Now()), 0)));
}

void Cluster::Compact(Version tombstone_horizon, CompactionShares* shares) {
  const Timestamp now = TimestampOf(clock_.Now());
  for (auto& [id, table] : tables_) {
    table->Compact(now, tombstone_horizon, shares);
  }
}

}  // namespace btsim::cluster
