#include "cluster/table.h"

#include <algorithm>
#include <optional>
#include <set>
#include <utility>

#include "base/bytes.h"
#include "base/check.h"
#include "cluster/cluster.h"  // ValidateFamilyName
#include "cluster/internal/key_heads.h"
#include "cluster/internal/row_apply.h"
#include "cluster/internal/row_probes.h"
#include "cluster/internal/tablet.h"
#include "cluster/limits.h"

namespace btsim::cluster {

namespace {

std::string Field(size_t i, const char* rest) {
  return "mutations[" + std::to_string(i) + "]" + rest;
}

// `field` builds the field's name, only on error (requests are validated
// per mutation, and formatting names is most of the cost otherwise).
template <typename FieldName>
Status ValidQualifier(std::string_view q, FieldName&& field) {
  if (static_cast<int64_t>(q.size()) > kMaxQualifierBytes) {
    return InvalidArgument(field() + ": column qualifier is " +
                           std::to_string(q.size()) +
                           " bytes; the limit is 16 KiB (16384 bytes)");
  }
  return OkStatus();
}

uint64_t DecodeBigEndian(std::string_view v) {
  uint64_t x = 0;
  for (unsigned char c : v) x = (x << 8) | c;
  return x;
}

std::string EncodeBigEndian(uint64_t x) {
  std::string out(8, '\0');
  for (int i = 7; i >= 0; --i) {
    out[i] = static_cast<char>(x & 0xff);
    x >>= 8;
  }
  return out;
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

std::unique_ptr<Table> Table::Clone() const {
  auto copy =
      std::make_unique<Table>(id_, options_, std::vector<std::string>{});
  copy->families_by_id_.assign(families_by_id_.size(), nullptr);
  for (const auto& [name, entry] : families_) {
    auto e = std::make_unique<FamilyEntry>(*entry);
    copy->families_by_id_[e->id] = e.get();
    copy->families_[name] = std::move(e);
  }
  copy->tablets_.clear();
  for (const auto& t : tablets_) {
    copy->tablets_.push_back(std::make_unique<Tablet>(t->Clone()));
  }
  copy->IndexTablets();
  copy->range_tombstones_ = range_tombstones_;
  copy->dropped_families_ = dropped_families_;
  copy->created_version_ = created_version_;
  copy->superseded_ = superseded_;
  copy->schema_dirty_ = true;
  return copy;
}

// ---------------------------------------------------------------- Schema

std::vector<ColumnFamily> Table::Families() const {
  std::vector<ColumnFamily> out;
  for (const auto& [name, entry] : families_) {
    out.push_back(ColumnFamily{name, entry->gc_rule});
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
  for (const auto& [name, entry] : families_) exists[name] = true;
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
        exists[m.name] = true;
        break;
      case FamilyModification::Kind::kUpdate:
        if (!present) {
          return NotFound(field + ": column family '" + m.name +
                          "' does not exist in table '" + id_ + "'");
        }
        BTSIM_RETURN_IF_ERROR(m.gc_rule.Validate(field + ".update.gc_rule"));
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
                      .created = version,
                      .changed = version,
                      .past_rules = {}});
      families_by_id_.push_back(entry.get());
      families_[m.name] = std::move(entry);
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

Status Table::MissingFamily(const std::string& field,
                            std::string_view family) const {
  if (family.empty()) {
    return InvalidArgument(field + ": the column family name is empty");
  }
  return NotFound(field + ": column family " + QuoteForError(family) +
                  " does not exist in table '" + id_ + "'");
}

Status Table::ValidateMutations(std::span<const Mutation> mutations) const {
  if (static_cast<int64_t>(mutations.size()) > kMaxMutationsPerRequest) {
    return InvalidArgument("mutations: " + std::to_string(mutations.size()) +
                           " mutations; the limit is 100000 per request");
  }
  for (size_t i = 0; i < mutations.size(); ++i) {
    const Mutation& m = mutations[i];
    auto family_missing = [&](const std::string& family, const char* rest) {
      return MissingFamily(Field(i, rest), family);
    };
    if (const auto* set = std::get_if<SetCell>(&m)) {
      if (!HasFamily(set->family)) {
        return family_missing(set->family, ".set_cell.family_name");
      }
      BTSIM_RETURN_IF_ERROR(ValidQualifier(set->qualifier, [&] {
        return Field(i, ".set_cell.column_qualifier");
      }));
      if (static_cast<int64_t>(set->value.size()) > kMaxCellValueBytes) {
        return InvalidArgument(Field(i, ".set_cell.value") + ": value is " +
                               std::to_string(set->value.size()) +
                               " bytes; the cell limit is 100 MiB");
      }
      const int64_t ts = Micros(set->timestamp);
      if (set->timestamp != kServerTimestamp && (ts < 0 || ts % 1000 != 0)) {
        return InvalidArgument(
            Field(i, ".set_cell.timestamp_micros") + ": " + std::to_string(ts) +
            " is not a valid timestamp; use -1 (server time) or a "
            "non-negative number of microseconds divisible by 1000 "
            "(millisecond granularity)");
      }
    } else if (const auto* col = std::get_if<DeleteFromColumn>(&m)) {
      if (!HasFamily(col->family)) {
        return family_missing(col->family, ".delete_from_column.family_name");
      }
      BTSIM_RETURN_IF_ERROR(ValidQualifier(col->qualifier, [&] {
        return Field(i, ".delete_from_column.column_qualifier");
      }));
      if (col->start < Timestamp{} || col->end < Timestamp{}) {
        return InvalidArgument(Field(i, ".delete_from_column.time_range") +
                               ": timestamps must not be negative");
      }
      if (col->end != Timestamp{} && col->end < col->start) {
        return InvalidArgument(Field(i, ".delete_from_column.time_range") +
                               ": end_timestamp_micros is before "
                               "start_timestamp_micros");
      }
    } else if (const auto* fam = std::get_if<DeleteFromFamily>(&m)) {
      if (!HasFamily(fam->family)) {
        return family_missing(fam->family, ".delete_from_family.family_name");
      }
    }
  }
  return OkStatus();
}

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
                         const CommitContext& commit, size_t probe) {
  FamilyIds ids;
  for (const Mutation& m : mutations) ids.Add(*FamilyIdOf(m));  // validated
  size_t ti = 0;
  RowSlot slot;
  Locate(key, probe, &ti, &slot);
  internal::WrittenRow written = internal::ApplyRequest(
      key, slot.row, {mutations, ids.ids(), commit.version, commit.server_time},
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
                 std::move(share));
  }
  return OkStatus();
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
                     const CommitContext& commit, size_t probe) {
  BTSIM_RETURN_IF_ERROR(ValidRowKey(key));
  if (mutations.empty()) {
    return InvalidArgument("mutations: at least one mutation is required");
  }
  BTSIM_RETURN_IF_ERROR(ValidateMutations(mutations));
  return ApplyToRow(key, mutations, commit, probe);
}

Status Table::MutateRow(std::string_view key,
                        std::span<const Mutation> mutations,
                        const CommitContext& commit) {
  return Mutate(key, mutations, commit, kNoProbe);
}

std::vector<Status> Table::MutateRows(std::span<const RowMutations> rows,
                                      const CommitContext& commit) {
  probe_keys_.clear();
  for (const RowMutations& r : rows) probe_keys_.push_back(r.key);
  ProbeRows(probe_keys_);
  std::vector<Status> out;
  out.reserve(rows.size());
  for (size_t i = 0; i < rows.size(); ++i) {
    out.push_back(Mutate(rows[i].key, rows[i].mutations, commit, i));
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
    LiveCells(*record, &scratch, &cells);
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
  for (size_t i = 0; i < rules.size(); ++i) {
    const std::string field = "rules[" + std::to_string(i) + "]";
    if (!HasFamily(rules[i].family)) {
      return MissingFamily(field + ".family_name", rules[i].family);
    }
    BTSIM_RETURN_IF_ERROR(ValidQualifier(
        rules[i].qualifier, [&] { return field + ".column_qualifier"; }));
  }
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
      const uint64_t base = c.present ? DecodeBigEndian(c.value) : 0;
      c.value =
          EncodeBigEndian(base + static_cast<uint64_t>(rule.increment_amount));
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
