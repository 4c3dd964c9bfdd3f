#include "cluster/table.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <set>
#include <utility>

#include "base/bytes.h"
#include "base/check.h"
#include "cluster/cluster.h"  // ValidateFamilyName
#include "cluster/key_heads.h"
#include "cluster/limits.h"
#include "cluster/row_edits.h"

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

FamilyData& FindOrAddFamily(RowData& row, uint32_t id) {
  auto it = std::lower_bound(
      row.families.begin(), row.families.end(), id,
      [](const FamilyData& f, uint32_t i) { return f.id < i; });
  if (it == row.families.end() || it->id != id) {
    it = row.families.insert(it, FamilyData{id, kNoVersion, {}});
  }
  return *it;
}

FamilyData& FindFamilyData(RowData& row, uint32_t id) {
  auto it = std::lower_bound(
      row.families.begin(), row.families.end(), id,
      [](const FamilyData& f, uint32_t i) { return f.id < i; });
  BTSIM_CHECK(it != row.families.end() && it->id == id);
  return *it;
}

ColumnData& FindColumn(FamilyData& family, std::string_view qualifier) {
  auto it = std::lower_bound(
      family.columns.begin(), family.columns.end(), qualifier,
      [](const ColumnData& c, std::string_view q) { return c.qualifier < q; });
  BTSIM_CHECK(it != family.columns.end() && it->qualifier == qualifier);
  return *it;
}

// Adds the (absent) `qualifiers`, sorted and unique, to `family` in one
// merge, so a request touching many columns costs O(n log n), not O(n^2).
void AddColumns(FamilyData& family, std::vector<std::string_view> qualifiers) {
  std::vector<ColumnData> merged;
  merged.reserve(family.columns.size() + qualifiers.size());
  size_t k = 0;
  for (ColumnData& c : family.columns) {
    while (k < qualifiers.size() && qualifiers[k] < c.qualifier) {
      merged.push_back(ColumnData{qualifiers[k++], {}, {}});
    }
    if (k < qualifiers.size() && qualifiers[k] == c.qualifier) ++k;
    merged.push_back(std::move(c));
  }
  while (k < qualifiers.size()) {
    merged.push_back(ColumnData{qualifiers[k++], {}, {}});
  }
  family.columns = std::move(merged);
}

// Restores a column's invariant (timestamps descending and unique) after
// cells were appended: of cells with one timestamp the newest version wins,
// and of equal versions (one request) the one appended last.
void NormalizeCells(ColumnData& column) {
  auto& cells = column.cells;
  // Usually one cell was appended to a column in order: it is then already
  // in place, or (a new version of a many-version column, as
  // ReadModifyWriteRow writes) only the last cell is out of place, and it
  // moves into place without a sort.
  auto out_of_order = [](const CellData& a, const CellData& b) {
    return a.timestamp_micros <= b.timestamp_micros;
  };
  if (std::adjacent_find(cells.begin(), cells.end(), out_of_order) ==
      cells.end()) {
    return;
  }
  if (cells.size() >= 2 &&
      std::adjacent_find(cells.begin(), cells.end() - 1, out_of_order) ==
          cells.end() - 1) {
    const CellData last = cells.back();
    auto pos = std::lower_bound(
        cells.begin(), cells.end() - 1, last.timestamp_micros,
        [](const CellData& c, int64_t ts) { return c.timestamp_micros > ts; });
    if (pos->timestamp_micros == last.timestamp_micros) {
      // Of one timestamp the newest version wins; the later one on a tie.
      if (last.version >= pos->version) *pos = last;
      cells.pop_back();
    } else {
      std::rotate(pos, cells.end() - 1, cells.end());
    }
    return;
  }
  std::stable_sort(cells.begin(), cells.end(),
                   [](const CellData& a, const CellData& b) {
                     return a.timestamp_micros > b.timestamp_micros;
                   });
  size_t out = 0;
  for (size_t i = 0; i < cells.size();) {
    size_t best = i;
    size_t j = i;
    for (; j < cells.size() &&
           cells[j].timestamp_micros == cells[i].timestamp_micros;
         ++j) {
      if (cells[j].version >= cells[best].version) best = j;
    }
    cells[out++] = cells[best];
    i = j;
  }
  cells.resize(out);
}

void AddColumnTombstone(ColumnData& column, int64_t start, int64_t end,
                        Version version) {
  for (ColumnTombstone& t : column.tombstones) {
    if (t.start_micros == start && t.end_micros == end) {
      t.version = std::max(t.version, version);
      return;
    }
  }
  column.tombstones.push_back(ColumnTombstone{start, end, version});
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

Status Table::ModifyColumnFamilies(std::span<const FamilyModification> mods) {
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
  for (const FamilyModification& m : mods) {
    switch (m.kind) {
      case FamilyModification::Kind::kCreate: {
        auto entry = std::make_unique<FamilyEntry>(FamilyEntry{
            m.name, static_cast<uint32_t>(families_by_id_.size()), m.gc_rule});
        families_by_id_.push_back(entry.get());
        families_[m.name] = std::move(entry);
        break;
      }
      case FamilyModification::Kind::kUpdate:
        families_[m.name]->gc_rule = m.gc_rule;
        break;
      case FamilyModification::Kind::kDrop: {
        // The data stays until compaction, but is unreachable: family ids
        // are never reused.
        auto it = families_.find(m.name);
        families_by_id_[it->second->id] = nullptr;
        if (last_family_ == it->second.get()) last_family_ = nullptr;
        families_.erase(it);
        break;
      }
    }
  }
  return OkStatus();
}

// ---------------------------------------------------------------- Writes

Status Table::ValidateMutations(std::span<const Mutation> mutations) const {
  if (static_cast<int64_t>(mutations.size()) > kMaxMutationsPerRequest) {
    return InvalidArgument("mutations: " + std::to_string(mutations.size()) +
                           " mutations; the limit is 100000 per request");
  }
  for (size_t i = 0; i < mutations.size(); ++i) {
    const Mutation& m = mutations[i];
    auto family_missing = [&](const std::string& family, const char* rest) {
      return NotFound(Field(i, rest) + ": column family '" + family +
                      "' does not exist in table '" + id_ + "'");
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
      const int64_t ts = set->timestamp_micros;
      if (ts != kServerTimestamp && (ts < 0 || ts % 1000 != 0)) {
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
      if (col->start_micros < 0 || col->end_micros < 0) {
        return InvalidArgument(Field(i, ".delete_from_column.time_range") +
                               ": timestamps must not be negative");
      }
      if (col->end_micros != 0 && col->end_micros < col->start_micros) {
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

Status Table::ApplyToRow(std::string_view key,
                         std::span<const Mutation> mutations,
                         const CommitContext& commit, bool local,
                         const RowShare* share, size_t probe) {
  const auto [ti, slot] =
      Locate(key, probe < probes_.size() ? &probes_[probe] : nullptr);
  Tablet& tablet = *tablets_[ti];
  const RowRecord* old = tablet.At(slot);
  if (share != nullptr && CanTake(*share, old, mutations)) {
    tablet.Put(share->after.Share(), share->dirty, slot);
    AfterWrite(ti, key, mutations, commit, local, RowShare());
    return OkStatus();
  }
  // What replicas of a local commit may take (see cluster/row_share.h).
  auto share_for = [&](const RowRecord& after, bool dirty) {
    RowShare made;
    if (!local || !commit_hook_ || mutations.size() != 1) return made;
    const std::optional<uint32_t> family_id = FamilyIdOf(mutations[0]);
    if (!family_id) return made;  // validated writes name known families
    if (old != nullptr) made.before = old->Share();
    made.after = after.Share();
    made.dirty = dirty;
    made.family_id = *family_id;
    return made;
  };
  // Every mutation commits at commit.version. A tombstone covers only older
  // versions, so a delete also erases the cells that earlier mutations of
  // this request wrote: the request then takes effect in order, and a
  // replica replaying the same list gets the same result.
  const Version version = commit.version;
  const auto* single =
      mutations.size() == 1 ? std::get_if<SetCell>(&mutations[0]) : nullptr;
  if (single != nullptr) {
    // The commonest writes of all, made on the encoding: a row's first cell
    // (which compaction leaves alone), a newer cell in an existing column
    // (two cells in a column: compaction may have something to drop), or
    // the column's newest cell rewritten in its millisecond (a hot row's
    // ReadModifyWriteRow: as many cells as before).
    const uint32_t family_id = FindFamily(single->family)->id;
    const int64_t ts = single->timestamp_micros == kServerTimestamp
                           ? commit.server_time_micros
                           : single->timestamp_micros;
    RowRecord record = old == nullptr
                           ? SingleCellRow(key, family_id, single->qualifier,
                                           ts, version, single->value)
                           : WithNewestCell(*old, family_id, single->qualifier,
                                            ts, version, single->value);
    bool dirty = old != nullptr;
    if (!record.valid() && old != nullptr) {
      record = WithNewestCellReplaced(*old, family_id, single->qualifier, ts,
                                      version, single->value);
      dirty = record.valid() && MayNeedCompaction(record.encoded());
    }
    if (record.valid()) {
      const size_t size = record.encoded().size() + key.size();
      if (local && static_cast<int64_t>(size) > kMaxRowBytes) {
        return RowTooLarge(key, size);
      }
      RowShare made = share_for(record, dirty);
      tablet.Put(std::move(record), dirty, slot);
      AfterWrite(ti, key, mutations, commit, local, std::move(made));
      return OkStatus();
    }
  }
  RowData row = old ? DecodeRow(old->encoded()) : RowData{};

  if (single != nullptr) {
    // The common request, one SetCell, without the general path's
    // bookkeeping (the same result).
    FamilyData& f = FindOrAddFamily(row, FindFamily(single->family)->id);
    auto it =
        std::lower_bound(f.columns.begin(), f.columns.end(), single->qualifier,
                         [](const ColumnData& c, std::string_view q) {
                           return c.qualifier < q;
                         });
    if (it == f.columns.end() || it->qualifier != single->qualifier) {
      it = f.columns.insert(it, ColumnData{single->qualifier, {}, {}});
    }
    it->cells.push_back(CellData{single->timestamp_micros == kServerTimestamp
                                     ? commit.server_time_micros
                                     : single->timestamp_micros,
                                 version, single->value});
    NormalizeCells(*it);
  } else {
    // First create every family and column the request touches, so that the
    // loop below only looks them up and references into `row` stay valid.
    // One sorted list of (family id, column); a family-wide delete adds its
    // family with no column (nullopt).
    std::vector<std::pair<uint32_t, std::optional<std::string_view>>> wanted;
    wanted.reserve(mutations.size());
    for (const Mutation& m : mutations) {
      if (const auto* set = std::get_if<SetCell>(&m)) {
        wanted.emplace_back(FindFamily(set->family)->id, set->qualifier);
      } else if (const auto* col = std::get_if<DeleteFromColumn>(&m)) {
        wanted.emplace_back(FindFamily(col->family)->id, col->qualifier);
      } else if (const auto* fam = std::get_if<DeleteFromFamily>(&m)) {
        wanted.emplace_back(FindFamily(fam->family)->id, std::nullopt);
      }
    }
    std::sort(wanted.begin(), wanted.end());
    wanted.erase(std::unique(wanted.begin(), wanted.end()), wanted.end());
    for (size_t i = 0; i < wanted.size(); ++i) {
      if (i == 0 || wanted[i].first != wanted[i - 1].first) {
        FindOrAddFamily(row, wanted[i].first);
      }
    }
    for (size_t i = 0; i < wanted.size();) {
      size_t j = i;
      std::vector<std::string_view> qualifiers;
      for (; j < wanted.size() && wanted[j].first == wanted[i].first; ++j) {
        if (wanted[j].second) qualifiers.push_back(*wanted[j].second);
      }
      if (!qualifiers.empty()) {
        AddColumns(FindFamilyData(row, wanted[i].first), std::move(qualifiers));
      }
      i = j;
    }

    auto erase_same_request = [version](ColumnData& c, int64_t start,
                                        int64_t end) {
      std::erase_if(c.cells, [&](const CellData& cell) {
        return cell.version == version && cell.timestamp_micros >= start &&
               (end == 0 || cell.timestamp_micros < end);
      });
    };
    std::vector<ColumnData*> appended;
    for (const Mutation& m : mutations) {
      if (const auto* set = std::get_if<SetCell>(&m)) {
        const int64_t ts = set->timestamp_micros == kServerTimestamp
                               ? commit.server_time_micros
                               : set->timestamp_micros;
        ColumnData& c = FindColumn(
            FindFamilyData(row, FindFamily(set->family)->id), set->qualifier);
        c.cells.push_back(CellData{ts, version, set->value});
        appended.push_back(&c);
      } else if (const auto* col = std::get_if<DeleteFromColumn>(&m)) {
        ColumnData& c = FindColumn(
            FindFamilyData(row, FindFamily(col->family)->id), col->qualifier);
        AddColumnTombstone(c, col->start_micros, col->end_micros, version);
        erase_same_request(c, col->start_micros, col->end_micros);
      } else if (const auto* fam = std::get_if<DeleteFromFamily>(&m)) {
        FamilyData& f = FindFamilyData(row, FindFamily(fam->family)->id);
        f.tombstone = std::max(f.tombstone, version);
        for (ColumnData& c : f.columns) erase_same_request(c, 0, 0);
      } else {
        row.tombstone = std::max(row.tombstone, version);
        for (FamilyData& f : row.families) {
          for (ColumnData& c : f.columns) erase_same_request(c, 0, 0);
        }
      }
    }
    std::sort(appended.begin(), appended.end());
    appended.erase(std::unique(appended.begin(), appended.end()),
                   appended.end());
    for (ColumnData* c : appended) NormalizeCells(*c);
  }
  if (local) {
    const size_t size = EncodedSize(row) + key.size();
    if (static_cast<int64_t>(size) > kMaxRowBytes) {
      return RowTooLarge(key, size);
    }
  }
  RowRecord record(key, row);
  const bool dirty = MayNeedCompaction(row);
  RowShare made = share_for(record, dirty);
  tablet.Put(std::move(record), dirty, slot);
  AfterWrite(ti, key, mutations, commit, local, std::move(made));
  return OkStatus();
}

void Table::AfterWrite(size_t ti, std::string_view key,
                       std::span<const Mutation> mutations,
                       const CommitContext& commit, bool local,
                       RowShare share) {
  written_tablet_ = ti;
  MaybeSplit(ti);
  if (local && commit_hook_) {
    commit_hook_(key, mutations, commit.server_time_micros, commit.version,
                 std::move(share));
  }
}

Status Table::MutateRow(std::string_view key,
                        std::span<const Mutation> mutations,
                        const CommitContext& commit, size_t probe) {
  BTSIM_RETURN_IF_ERROR(ValidRowKey(key));
  if (mutations.empty()) {
    return InvalidArgument("mutations: at least one mutation is required");
  }
  BTSIM_RETURN_IF_ERROR(ValidateMutations(mutations));
  return ApplyToRow(key, mutations, commit, /*local=*/true,
                    /*share=*/nullptr, probe);
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
  if (const RowRecord* record = TabletFor(key).Find(key)) {
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
  if (!chosen.empty()) BTSIM_RETURN_IF_ERROR(ApplyToRow(key, chosen, commit));
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
      return NotFound(field + ".family_name: column family '" +
                      rules[i].family + "' does not exist in table '" + id_ +
                      "'");
    }
    BTSIM_RETURN_IF_ERROR(ValidQualifier(
        rules[i].qualifier, [&] { return field + ".column_qualifier"; }));
  }
  // Only the newest live cell of each column a rule names is read: a hot
  // counter row may hold thousands of versions (one per millisecond).
  const RowRecord* record = TabletFor(key).Find(key);
  struct Current {
    int64_t timestamp;
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
      c.timestamp = commit.server_time_micros;
      c.present = false;
      const std::optional<LiveCell> cell =
          record == nullptr
              ? std::nullopt
              : NewestLiveCell(record->encoded(), FindFamily(rule.family)->id,
                               rule.qualifier);
      if (cell) {
        c.timestamp = std::max(c.timestamp, cell->timestamp_micros);
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
  BTSIM_RETURN_IF_ERROR(ApplyToRow(key, writes, commit));
  return result;
}

void Table::DropRowRange(std::string_view prefix) {
  const std::string end = PrefixSuccessor(prefix);
  for (auto& tablet : tablets_) {
    const size_t first = tablet->LowerBound(prefix);
    const size_t last = end.empty() ? tablet->size() : tablet->LowerBound(end);
    if (first < last) tablet->EraseRange(first, last);
  }
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

Tablet& Table::TabletFor(std::string_view key) {
  return *tablets_[TabletIndex(key)];
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
