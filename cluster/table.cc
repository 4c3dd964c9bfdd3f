#include "cluster/table.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "base/bytes.h"
#include "base/check.h"
#include "cluster/aggregate.h"
#include "cluster/cluster.h"  // ValidateFamilyName
#include "cluster/internal/key_heads.h"
#include "cluster/internal/row_apply.h"
#include "cluster/internal/row_probes.h"
#include "cluster/internal/tablet.h"
#include "cluster/limits.h"

namespace btsim::cluster {

namespace {

// UNIMPLEMENTED for a GC rule on aggregate family `family`.
Status AggregateGcRule(const std::string& field, std::string_view family) {
  return Unimplemented(field + ": column family " + QuoteForError(family) +
                       " is an aggregate family; btsim supports no garbage "
                       "collection rule on aggregate families (leave gc_rule "
                       "empty)");
}

}  // namespace

using internal::CommonPrefixLength;
using internal::FamilyIds;
using internal::HeadsBound;
using internal::KeyHead;
using internal::RowProbes;
using internal::RowSlot;
using internal::Tablet;

Table::Table(std::string id, TableOptions options,
             const std::vector<std::string>& splits)
    : id_(std::move(id)), options_(options) {
  std::set<std::string> keys(splits.begin(), splits.end());
  keys.erase("");
  std::string start;
  bool pinned = false;
  for (const std::string& k : keys) {
    tablets_.push_back(std::make_unique<Tablet>(start, k, pinned));
    start = k;
    pinned = true;
  }
  tablets_.push_back(std::make_unique<Tablet>(start, "", pinned));
  IndexTablets();
  probes_ = std::make_unique<RowProbes>();
}

Table::~Table() = default;

std::unique_ptr<Table> Table::Clone() const { return Copy(id_, false); }

std::unique_ptr<Table> Table::Snapshot(std::string id) const {
  return Copy(std::move(id), true);
}

std::unique_ptr<Table> Table::Copy(std::string id, bool share_rows) const {
  auto copy = std::make_unique<Table>(std::move(id), options_,
                                      std::vector<std::string>{});
  copy->families_by_id_.assign(families_by_id_.size(), nullptr);
  for (const auto& [name, entry] : families_) {
    auto e = std::make_unique<FamilyEntry>(*entry);
    copy->families_by_id_[e->id] = e.get();
    copy->families_[name] = std::move(e);
  }
  copy->tablets_.clear();
  for (const auto& t : tablets_) {
    copy->tablets_.push_back(std::make_unique<Tablet>(t->Clone(share_rows)));
  }
  copy->IndexTablets();
  copy->range_tombstones_ = range_tombstones_;
  copy->dropped_families_ = dropped_families_;
  copy->created_version_ = created_version_;
  copy->superseded_ = superseded_;
  copy->has_aggregates_ = has_aggregates_;
  copy->schema_dirty_ = true;
  return copy;
}

// ---------------------------------------------------------------- Schema

std::vector<ColumnFamily> Table::Families() const {
  std::vector<ColumnFamily> out;
  for (const auto& [name, entry] : families_) {
    out.push_back(ColumnFamily{name, entry->gc_rule, entry->aggregate});
  }
  return out;
}

bool Table::HasFamily(std::string_view name) const {
  return FindFamily(name) != nullptr;
}

const Table::FamilyEntry* Table::FindFamily(std::string_view name) const {
  if (last_family_ != nullptr && SameBytes(last_family_->name, name)) {
    return last_family_;
  }
  auto it = families_.find(name);
  if (it == families_.end()) return nullptr;
  last_family_ = it->second.get();
  return last_family_;
}

const std::string* Table::FamilyNameById(uint32_t id) const {
  if (id >= families_by_id_.size() || families_by_id_[id] == nullptr) {
    return nullptr;
  }
  return &families_by_id_[id]->name;
}

Status Table::ModifyColumnFamilies(std::span<const FamilyModification> mods,
                                   Version version) {
  // Validate against a simulated schema first, so the change is atomic.
  std::map<std::string, bool, std::less<>> exists;
  std::map<std::string, Aggregate, std::less<>> aggregate;
  for (const auto& [name, entry] : families_) {
    exists[name] = true;
    aggregate[name] = entry->aggregate;
  }
  for (size_t i = 0; i < mods.size(); ++i) {
    const FamilyModification& m = mods[i];
    const std::string field = "modifications[" + std::to_string(i) + "]";
    const bool present = exists.count(m.name) > 0 && exists[m.name];
    switch (m.kind) {
      case FamilyModification::Kind::kCreate:
        BTSIM_RETURN_IF_ERROR(ValidateFamilyName(m.name, field + ".id"));
        if (present) {
          return AlreadyExists(field + ": column family '" + m.name +
                               "' already exists in table '" + id_ + "'");
        }
        BTSIM_RETURN_IF_ERROR(m.gc_rule.Validate(field + ".create.gc_rule"));
        if (m.aggregate != Aggregate::kNone &&
            m.gc_rule.kind != GcRule::Kind::kNone) {
          return AggregateGcRule(field + ".create.gc_rule", m.name);
        }
        exists[m.name] = true;
        aggregate[m.name] = m.aggregate;
        break;
      case FamilyModification::Kind::kUpdate:
        if (!present) {
          return NotFound(field + ": column family '" + m.name +
                          "' does not exist in table '" + id_ + "'");
        }
        BTSIM_RETURN_IF_ERROR(m.gc_rule.Validate(field + ".update.gc_rule"));
        if (aggregate[m.name] != Aggregate::kNone &&
            m.gc_rule.kind != GcRule::Kind::kNone) {
          return AggregateGcRule(field + ".update.gc_rule", m.name);
        }
        break;
      case FamilyModification::Kind::kDrop:
        if (!present) {
          return NotFound(field + ": column family '" + m.name +
                          "' does not exist in table '" + id_ + "'");
        }
        exists[m.name] = false;
        break;
    }
  }
  schema_dirty_ = true;
  for (const FamilyModification& m : mods) ApplyFamilyModification(m, version);
  return OkStatus();
}

void Table::ApplyFamilyModification(const FamilyModification& m,
                                    Version version) {
  schema_dirty_ = true;
  switch (m.kind) {
    case FamilyModification::Kind::kCreate: {
      auto entry = std::make_unique<FamilyEntry>(
          FamilyEntry{.name = m.name,
                      .id = static_cast<uint32_t>(families_by_id_.size()),
                      .gc_rule = m.gc_rule,
                      .aggregate = m.aggregate,
                      .created = version,
                      .changed = version,
                      .past_rules = {}});
      families_by_id_.push_back(entry.get());
      families_[m.name] = std::move(entry);
      has_aggregates_ = has_aggregates_ || m.aggregate != Aggregate::kNone;
      return;
    }
    case FamilyModification::Kind::kUpdate: {
      FamilyEntry& entry = *families_[m.name];
      if (version > entry.changed) {  // else the old rule never governed
        entry.past_rules.push_back({entry.changed, std::move(entry.gc_rule)});
      }
      entry.gc_rule = m.gc_rule;
      entry.changed = version;
      return;
    }
    case FamilyModification::Kind::kDrop: {
      dropped_families_[m.name] = version;
      // The data stays until compaction, but is unreachable: family ids
      // are never reused.
      auto it = families_.find(m.name);
      families_by_id_[it->second->id] = nullptr;
      if (last_family_ == it->second.get()) last_family_ = nullptr;
      families_.erase(it);
      return;
    }
  }
}

// ---------------------------------------------------------------- Writes

namespace {

Status RowTooLarge(std::string_view key, size_t size) {
  return InvalidArgument("row '" + std::string(key.substr(0, 64)) +
                         "' would be " + std::to_string(size) +
                         " bytes; the row limit is 256 MiB");
}

Status ValidRowKey(std::string_view key) {
  if (key.empty()) {
    return InvalidArgument("row_key: row keys must not be empty");
  }
  if (static_cast<int64_t>(key.size()) > kMaxRowKeyBytes) {
    return InvalidArgument("row_key: row key is " + std::to_string(key.size()) +
                           " bytes; the limit is 4 KiB (4096 bytes)");
  }
  return OkStatus();
}

}  // namespace

std::optional<uint32_t> Table::ReplicatedFamilyIdOf(const Mutation& m,
                                                    Version version) const {
  const std::optional<uint32_t> id = FamilyIdOf(m);
  if (!id || *id == kNoFamily || families_by_id_[*id]->created < version) {
    return id;
  }
  return std::nullopt;
}

std::optional<uint32_t> Table::FamilyIdOf(const Mutation& m) const {
  const std::string* name = nullptr;
  if (const auto* set = std::get_if<SetCell>(&m)) name = &set->family;
  if (const auto* add = std::get_if<AddToCell>(&m)) name = &add->family;
  if (const auto* col = std::get_if<DeleteFromColumn>(&m)) name = &col->family;
  if (const auto* fam = std::get_if<DeleteFromFamily>(&m)) name = &fam->family;
  if (name == nullptr) return kNoFamily;
  const FamilyEntry* family = FindFamily(*name);
  if (family == nullptr) return std::nullopt;
  return family->id;
}

void Table::Locate(std::string_view key, size_t probe, size_t* tablet,
                   RowSlot* slot) const {
  if (probe != kNoProbe) {
    if (const auto found = probes_->Find(tablets_, probe, key)) {
      *tablet = found->first;
      *slot = found->second;
      return;
    }
  }
  *tablet = TabletIndex(key);
  *slot = tablets_[*tablet]->Seek(key);
}

Status Table::ApplyToRow(std::string_view key,
                         std::span<const Mutation> mutations,
                         const CommitContext& commit, size_t probe,
                         std::string_view idempotency_token) {
  FamilyIds ids;
  for (const Mutation& m : mutations) ids.Add(*FamilyIdOf(m));  // validated
  std::vector<Aggregate> aggregates;
  AggregatesOf(mutations, ids.ids(), &aggregates);
  size_t ti = 0;
  RowSlot slot;
  Locate(key, probe, &ti, &slot);
  internal::WrittenRow written = internal::ApplyRequest(
      key, slot.row,
      {mutations, ids.ids(), commit.version, commit.server_time, aggregates},
      kMaxRowBytes);
  if (!written.row.valid()) return RowTooLarge(key, written.size);
  RowShare share;
  // A replica taking a shared result would not learn what it superseded.
  if (commit_hook_ && mutations.size() == 1 && written.superseded.empty()) {
    share = RowShare(slot.row, written.row, written.dirty, ids.ids()[0]);
  }
  RecordSuperseded(key, written.superseded);
  tablets_[ti]->Put(slot, std::move(written.row), written.dirty);
  AfterWrite(ti);
  if (commit_hook_) {
    commit_hook_(key, mutations, commit.server_time, commit.version,
                 std::move(share), idempotency_token);
  }
  return OkStatus();
}

void Table::AggregatesOf(std::span<const Mutation> mutations,
                         std::span<const uint32_t> family_ids,
                         std::vector<Aggregate>* out) const {
  out->clear();
  if (!has_aggregates_) return;
  for (size_t i = 0; i < mutations.size(); ++i) {
    const uint32_t id = family_ids[i];
    out->push_back(id < families_by_id_.size() && families_by_id_[id] != nullptr
                       ? families_by_id_[id]->aggregate
                       : Aggregate::kNone);
  }
}

void Table::RecordSuperseded(
    std::string_view key,
    std::span<const internal::SupersededCell> superseded) {
  if (superseded.empty()) return;
  auto it = superseded_.find(key);
  if (it == superseded_.end()) {
    it = superseded_.try_emplace(std::string(key)).first;
  }
  for (const internal::SupersededCell& c : superseded) {
    const bool known = std::any_of(
        it->second.begin(), it->second.end(), [&](const Superseded& s) {
          return s.family_id == c.family_id && s.qualifier == c.qualifier &&
                 s.timestamp == c.timestamp && s.version == c.version;
        });
    if (known) continue;
    it->second.push_back(Superseded{.family_id = c.family_id,
                                    .qualifier = std::string(c.qualifier),
                                    .timestamp = c.timestamp,
                                    .version = c.version,
                                    .until = c.until});
  }
}

void Table::AfterWrite(size_t ti) {
  written_tablet_ = ti;
  MaybeSplit(ti);
}

Status Table::Mutate(std::string_view key, std::span<const Mutation> mutations,
                     const CommitContext& commit, size_t probe,
                     std::string_view idempotency_token) {
  BTSIM_RETURN_IF_ERROR(ValidRowKey(key));
  if (mutations.empty()) {
    return InvalidArgument("mutations: at least one mutation is required");
  }
  BTSIM_RETURN_IF_ERROR(ValidateMutations(mutations));
  return ApplyToRow(key, mutations, commit, probe, idempotency_token);
}

Status Table::MutateRow(std::string_view key,
                        std::span<const Mutation> mutations,
                        const CommitContext& commit,
                        std::string_view idempotency_token) {
  return Mutate(key, mutations, commit, kNoProbe, idempotency_token);
}

std::vector<Status> Table::MutateRows(std::span<const RowMutations> rows,
                                      const CommitContext& commit) {
  probe_keys_.clear();
  for (const RowMutations& r : rows) probe_keys_.push_back(r.key);
  ProbeRows(probe_keys_);
  std::vector<Status> out;
  out.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    out.push_back(Mutate(rows[i].key, rows[i].mutations, commit, i,
                         rows[i].idempotency.token));
  }
  return out;
}

void Table::ProbeRows(std::span<const std::string_view> keys) {
  probes_->Start(tablets_, keys,
                 [this](std::string_view key) { return TabletIndex(key); });
}

Result<bool> Table::CheckAndMutateRow(std::string_view key,
                                      const Filter* predicate,
                                      std::span<const Mutation> if_true,
                                      std::span<const Mutation> if_false,
                                      const CommitContext& commit,
                                      sim::Rng& rng) {
  BTSIM_RETURN_IF_ERROR(ValidRowKey(key));
  if (if_true.empty() && if_false.empty()) {
    return InvalidArgument(
        "true_mutations, false_mutations: at least one of them must hold a "
        "mutation");
  }
  if (Status s = ValidateMutations(if_true); !s.ok()) {
    return Status(s.code(), "true_" + s.message());
  }
  if (Status s = ValidateMutations(if_false); !s.ok()) {
    return Status(s.code(), "false_" + s.message());
  }
  bool matched = false;
  if (const RowRecord* record = FindRow(key)) {
    std::vector<LiveCell> scratch;
    std::vector<CellView> cells;
    std::string folded;
    LiveCells(*record, &scratch, &cells, &folded);
    if (predicate == nullptr) {
      matched = !cells.empty();
    } else {
      std::vector<CellView> out;
      predicate->Apply(key, cells, rng, &out);
      matched = !out.empty();
    }
  }
  std::span<const Mutation> chosen = matched ? if_true : if_false;
  if (!chosen.empty()) {
    BTSIM_RETURN_IF_ERROR(ApplyToRow(key, chosen, commit, kNoProbe));
  }
  return matched;
}

Result<std::vector<ModifiedCell>> Table::ReadModifyWriteRow(
    std::string_view key, std::span<const ReadModifyWriteRule> rules,
    const CommitContext& commit) {
  BTSIM_RETURN_IF_ERROR(ValidRowKey(key));
  if (rules.empty()) {
    return InvalidArgument("rules: at least one rule is required");
  }
  if (static_cast<int64_t>(rules.size()) > kMaxMutationsPerRequest) {
    return InvalidArgument("rules: more than 100000 rules in one request");
  }
  BTSIM_RETURN_IF_ERROR(ValidateRules(rules));
  // Only the newest live cell of each column a rule names is read: a hot
  // counter row may hold thousands of versions (one per millisecond).
  const RowRecord* record = FindRow(key);
  struct Current {
    Timestamp timestamp;
    std::string value;
    bool present;
  };
  // Ordered by (family, qualifier): the canonical output order.
  std::map<std::pair<std::string, std::string>, Current> current;
  for (size_t i = 0; i < rules.size(); ++i) {
    const ReadModifyWriteRule& rule = rules[i];
    auto [it, inserted] =
        current.try_emplace({rule.family, rule.qualifier}, Current{});
    Current& c = it->second;
    if (inserted) {
      c.timestamp = commit.server_time;
      c.present = false;
      const std::optional<LiveCell> cell =
          record == nullptr
              ? std::nullopt
              : NewestLiveCell(record->encoded(), FindFamily(rule.family)->id,
                               rule.qualifier);
      if (cell) {
        c.timestamp = std::max(c.timestamp, cell->timestamp);
        c.value = std::string(cell->value);
        c.present = true;
      }
    }
    if (rule.kind == ReadModifyWriteRule::Kind::kAppend) {
      c.value += rule.append_value;
      if (static_cast<int64_t>(c.value.size()) > kMaxCellValueBytes) {
        return InvalidArgument("rules[" + std::to_string(i) +
                               "].append_value: the result would exceed the "
                               "100 MiB cell limit");
      }
    } else {
      if (c.present && c.value.size() != 8) {
        return InvalidArgument(
            "rules[" + std::to_string(i) +
            "].increment_amount: cannot increment a " +
            std::to_string(c.value.size()) +
            "-byte value; increments need an 8-byte big-endian int64");
      }
      const int64_t base = c.present ? DecodeInt64(c.value) : 0;
      c.value =
          EncodeInt64(Combine(Aggregate::kSum, base, rule.increment_amount));
    }
    c.present = true;
  }
  std::vector<Mutation> writes;
  std::vector<ModifiedCell> result;
  for (auto& [column, c] : current) {
    writes.push_back(
        SetCell{column.first, column.second, c.timestamp, c.value});
    result.push_back(
        ModifiedCell{column.first, column.second, c.timestamp, c.value});
  }
  BTSIM_RETURN_IF_ERROR(ApplyToRow(key, writes, commit, kNoProbe));
  return result;
}

// ---------------------------------------------------------------- Tablets

void Table::IndexTablets() {
  start_heads_.clear();
  start_prefix_.clear();
  if (tablets_.size() < 2) return;
  const std::string& second = tablets_[1]->start();
  const size_t lcp = CommonPrefixLength(second, tablets_.back()->start());
  start_prefix_ = second.substr(0, lcp);
  for (size_t i = 1; i < tablets_.size(); ++i) {
    start_heads_.push_back(KeyHead(tablets_[i]->start(), lcp));
  }
}

size_t Table::TabletIndex(std::string_view key) const {
  // The number of tablets after the first whose start is <= key.
  return HeadsBound(start_heads_, start_prefix_, key, /*upper=*/true,
                    [this](size_t i) -> std::string_view {
                      return tablets_[i + 1]->start();
                    });
}

const Tablet& Table::TabletFor(std::string_view key) const {
  return *tablets_[TabletIndex(key)];
}

const Tablet& Table::TabletNearWrite(std::string_view key) const {
  if (written_tablet_ < tablets_.size()) {
    const Tablet& written = *tablets_[written_tablet_];
    if (written.Covers(key)) return written;
  }
  return TabletFor(key);
}

const std::string& Table::TabletStartOf(std::string_view key) const {
  return TabletNearWrite(key).start();
}

uint64_t Table::TabletStartHash(std::string_view key, uint64_t seed) const {
  return TabletNearWrite(key).StartHash(seed);
}

TableStats Table::Stats() const {
  TableStats s;
  for (const auto& t : tablets_) {
    s.rows += static_cast<int64_t>(t->size());
    s.bytes += t->bytes();
  }
  s.tablets = static_cast<int64_t>(tablets_.size());
  return s;
}

}  // namespace btsim::cluster
