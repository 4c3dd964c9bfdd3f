// Table's replication and maintenance: applying changes committed on other
// clusters, versioned row-range drops, compaction, tablet splits and
// merging, and comparing replicas' contents. The rest of Table is in table.cc
// and table_read.cc.
#include <algorithm>
#include <array>
#include <functional>
#include <limits>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "base/check.h"
#include "cluster/aggregate.h"
#include "cluster/internal/aggregate_cells.h"
#include "cluster/internal/column_gc.h"
#include "cluster/internal/row_apply.h"
#include "cluster/internal/row_edits.h"
#include "cluster/internal/tablet.h"
#include "cluster/table.h"

namespace btsim::cluster {

using internal::FamilyIds;
using internal::FindGarbage;
using internal::FoldContributions;
using internal::GcCell;
using internal::GcPeriod;
using internal::KeepNewestCells;
using internal::kNeverHidden;
using internal::LoneColumn;
using internal::ReadLoneColumn;
using internal::RowEdit;
using internal::RowEditor;
using internal::RowSlot;
using internal::Tablet;

void Table::ApplyReplicated(std::span<const CommitRecord* const> records,
                            const std::function<void(size_t)>& applied) {
  // The rows of a batch are searched for together first (their cache
  // misses overlap), and the origin's results fetched: a taken result's
  // reference count changes.
  const bool batch = records.size() > 1;
  if (batch) {
    probe_keys_.clear();
    for (const CommitRecord* record : records) {
      probe_keys_.push_back(record->row_key);
      record->share.PrefetchForTake();
    }
    ProbeRows(probe_keys_);
  }
  for (size_t i = 0; i < records.size(); ++i) {
    const CommitRecord& record = *records[i];
    BTSIM_CHECK(record.kind == CommitRecord::Kind::kMutateRow);
    ApplyReplicatedRow(record, batch ? i : kNoProbe);
    applied(i);
  }
}

void Table::ApplyReplicatedFamilies(std::span<const FamilyModification> mods,
                                    Version version) {
  for (const FamilyModification& m : mods) {
    auto present = families_.find(m.name);
    auto dropped = dropped_families_.find(m.name);
    const Version drop =
        dropped == dropped_families_.end() ? 0 : dropped->second;
    if (present != families_.end() &&
        m.kind == FamilyModification::Kind::kCreate && version > drop &&
        version < present->second->created) {
      // The same family created concurrently elsewhere, earlier: one
      // family, as old as the oldest creation (their writes all count),
      // of the oldest creation's aggregate.
      present->second->created = version;
      present->second->aggregate = m.aggregate;
      has_aggregates_ = has_aggregates_ || m.aggregate != Aggregate::kNone;
    }
    const Version newest =
        std::max(drop, present == families_.end() ? Version{0}
                                                  : present->second->changed);
    if (version <= newest) {
      // A newer change won; this one's rule still governed the versions
      // until the next change.
      // (A change from before the family's creation is harmless: no cell
      // is older than the creation. Keeping it matters when an earlier
      // creation arrives later.)
      if (present != families_.end() &&
          m.kind != FamilyModification::Kind::kDrop && version > drop) {
        FamilyEntry& entry = *present->second;
        auto at = std::lower_bound(entry.past_rules.begin(),
                                   entry.past_rules.end(), version,
                                   [](const FamilyEntry::PastRule& r,
                                      Version v) { return r.since < v; });
        if (version != entry.changed &&
            (at == entry.past_rules.end() || at->since != version)) {
          entry.past_rules.insert(at, {version, m.gc_rule});
        }
      }
      continue;
    }
    FamilyModification mod = m;
    if (m.kind == FamilyModification::Kind::kDrop &&
        present == families_.end()) {
      dropped_families_[m.name] = version;
      continue;
    }
    if (m.kind == FamilyModification::Kind::kCreate &&
        present != families_.end()) {
      mod.kind = FamilyModification::Kind::kUpdate;
    }
    if (m.kind == FamilyModification::Kind::kUpdate &&
        present == families_.end()) {
      mod.kind = FamilyModification::Kind::kCreate;
    }
    ApplyFamilyModification(mod, version);
  }
}

void Table::ApplyReplicatedRow(const CommitRecord& record, size_t probe) {
  const std::string_view key = record.row_key;
  const Version version = record.version;
  if (version < created_version_) return;  // for an earlier table
  for (const RangeTombstone& r : range_tombstones_) {
    if (version < r.version && key.starts_with(r.prefix)) return;
  }
  // A mutation applies unless it names a family this table lacks, or one
  // created after it (usually every one applies: then no copy is made).
  std::span<const Mutation> mutations = record.mutations;
  FamilyIds ids;
  for (const Mutation& m : mutations) {
    if (const std::optional<uint32_t> id = ReplicatedFamilyIdOf(m, version)) {
      ids.Add(*id);
    }
  }
  std::vector<Mutation> applicable;
  if (ids.size() < mutations.size()) {
    for (const Mutation& m : mutations) {
      if (ReplicatedFamilyIdOf(m, version)) applicable.push_back(m);
    }
    mutations = applicable;
  }
  if (mutations.empty()) return;
  std::vector<Aggregate> aggregates;
  AggregatesOf(mutations, ids.ids(), &aggregates);
  size_t ti = 0;
  RowSlot slot;
  Locate(key, probe, &ti, &slot);
  Tablet& tablet = *tablets_[ti];
  const RowRecord* taken = mutations.size() == 1
                               ? record.share.ResultFor(slot.row, ids.ids()[0])
                               : nullptr;
  if (taken != nullptr) {
    tablet.Put(slot, taken->Share(), record.share.dirty());
  } else {
    internal::WrittenRow written = internal::ApplyRequest(
        key, slot.row,
        {mutations, ids.ids(), version, TruncateToMillis(VersionTime(version)),
         aggregates},
        std::numeric_limits<int64_t>::max());
    RecordSuperseded(key, written.superseded);
    tablet.Put(slot, std::move(written.row), written.dirty);
  }
  AfterWrite(ti);
}

void Table::DropRowRangeAt(std::string_view prefix, Version version) {
  range_tombstones_.push_back(RangeTombstone{std::string(prefix), version});
  // Every row in the range keeps only what is newer than the drop; one
  // left with nothing goes.
  const RowEditor edit = [version](const RowRecord& record) {
    RowData row = DecodeRow(record.encoded());
    RowData kept;
    kept.tombstone = row.tombstone >= version ? row.tombstone : kNoVersion;
    for (FamilyData& f : row.families) {
      FamilyData nf{
          f.id, f.tombstone >= version ? f.tombstone : kNoVersion, {}};
      for (ColumnData& c : f.columns) {
        ColumnData nc{c.qualifier, {}, {}};
        for (const ColumnTombstone& t : c.tombstones) {
          if (t.version >= version) nc.tombstones.push_back(t);
        }
        for (const CellData& cell : c.cells) {
          if (cell.version >= version) nc.cells.push_back(cell);
        }
        if (!nc.cells.empty() || !nc.tombstones.empty()) {
          nf.columns.push_back(std::move(nc));
        }
      }
      if (!nf.columns.empty() || nf.tombstone != kNoVersion) {
        kept.families.push_back(std::move(nf));
      }
    }
    RowEdit out;
    if (kept.empty()) {
      out.erase = true;
    } else {
      out.replacement = RowRecord(record.key(), kept);
      out.mark = true;
    }
    return out;
  };
  const std::string end = PrefixSuccessor(prefix);
  for (auto& tablet : tablets_) tablet->EditRange(prefix, end, edit);
  // Superseded cells it removes no longer count for anything that stays.
  for (auto it = superseded_.lower_bound(prefix);
       it != superseded_.end() && it->first.starts_with(prefix);) {
    std::erase_if(it->second,
                  [&](const Superseded& c) { return c.version < version; });
    it = it->second.empty() ? superseded_.erase(it) : std::next(it);
  }
}

void Table::MaybeSplit(size_t ti) {
  Tablet& t = *tablets_[ti];
  if (t.size() < 2) return;
  if (t.bytes() <= options_.split_bytes &&
      static_cast<int64_t>(t.size()) <= options_.split_rows) {
    return;
  }
  tablets_.insert(tablets_.begin() + static_cast<ptrdiff_t>(ti) + 1,
                  std::make_unique<Tablet>(t.SplitInHalf()));
  IndexTablets();
}

void Table::MergeSmallTablets() {
  const int64_t max_bytes = options_.split_bytes / options_.merge_divisor;
  const int64_t max_rows = options_.split_rows / options_.merge_divisor;
  size_t i = 0;
  bool merged = false;
  while (i + 1 < tablets_.size()) {
    Tablet& a = *tablets_[i];
    Tablet& b = *tablets_[i + 1];
    if (!b.pinned() && a.bytes() + b.bytes() < max_bytes &&
        static_cast<int64_t>(a.size() + b.size()) < max_rows) {
      a.Absorb(std::move(b));
      tablets_.erase(tablets_.begin() + static_cast<ptrdiff_t>(i) + 1);
      merged = true;
    } else {
      ++i;
    }
  }
  if (merged) IndexTablets();
}

// ---------------------------------------------------------------- Compaction

void Table::Compact(Timestamp now, Version tombstone_horizon,
                    CompactionShares* shares) {
  // Age rules can change any row, and so can a rule change the horizon
  // passes now: every row is judged by it (rows with versions above the
  // horizon are revisited anyway).
  bool every_row = schema_dirty_;
  auto passes = [&](Version since) {
    return since > judged_through_ && since <= tombstone_horizon;
  };
  for (const auto& [name, entry] : families_) {
    every_row =
        every_row || entry->gc_rule.LimitsAge() || passes(entry->changed) ||
        std::any_of(
            entry->past_rules.begin(), entry->past_rules.end(),
            [&](const FamilyEntry::PastRule& r) { return passes(r.since); });
  }
  const RowEditor edit = [&](const RowRecord& row) {
    return CompactRow(row, every_row, now, tombstone_horizon, shares);
  };
  Tablet::Ahead ahead;
  if (shares != nullptr) {
    ahead = [shares](const RowRecord& row, bool near) {
      shares->Prefetch(row, near);
    };
  }
  for (auto& tablet : tablets_) tablet->EditDue(every_row, edit, ahead);
  schema_dirty_ = false;
  judged_through_ = std::max(judged_through_, tombstone_horizon);
  // Superseded cells are judged for good once their successor is at or
  // below the horizon, or their family is gone.
  for (auto it = superseded_.begin(); it != superseded_.end();) {
    std::erase_if(it->second, [&](const Superseded& c) {
      return c.until <= tombstone_horizon ||
             c.family_id >= families_by_id_.size() ||
             families_by_id_[c.family_id] == nullptr;
    });
    it = it->second.empty() ? superseded_.erase(it) : std::next(it);
  }
  for (auto& [name, entry] : families_) {
    // Every version a forgotten rule governed has now been judged.
    std::vector<FamilyEntry::PastRule>& past = entry->past_rules;
    size_t judged = 0;
    while (judged < past.size() &&
           (judged + 1 < past.size() ? past[judged + 1].since
                                     : entry->changed) <= tombstone_horizon) {
      ++judged;
    }
    past.erase(past.begin(), past.begin() + static_cast<ptrdiff_t>(judged));
  }
  std::erase_if(range_tombstones_, [&](const RangeTombstone& r) {
    return r.version <= tombstone_horizon;
  });
  MergeSmallTablets();
  for (size_t i = 0; i < tablets_.size(); ++i) MaybeSplit(i);
}

RowEdit Table::CompactRow(const RowRecord& record, bool every_row,
                          Timestamp now, Version tombstone_horizon,
                          CompactionShares* shares) {
  RowEdit out;
  std::vector<Superseded>* superseded = nullptr;
  if (!superseded_.empty()) {
    auto it = superseded_.find(record.key());
    if (it != superseded_.end()) superseded = &it->second;
  }
  // Rows with superseded cells take the general path below.
  if (superseded == nullptr && shares != nullptr) {
    // Another cluster compacted this very row version already: its result
    // is ours when our GC rule for the row's family is the same and
    // settled, and the horizon does not matter to it.
    const CompactionShares::Recorded known = shares->Find(record, now);
    if (known.result != nullptr && known.family_id < families_by_id_.size() &&
        families_by_id_[known.family_id] != nullptr &&
        RuleSettled(*families_by_id_[known.family_id], tombstone_horizon) &&
        families_by_id_[known.family_id]->gc_rule == *known.rule &&
        known.newest_version <= tombstone_horizon) {
      out.replacement = known.result->Share();
      return out;
    }
  }
  if (superseded == nullptr && !every_row &&
      !MayNeedCompaction(record.encoded())) {
    return out;
  }
  // The commonest case, on the encoding: one column and no tombstone, whose
  // GC rule drops its oldest cells (or none, or all).
  LoneColumn lone;
  if (superseded == nullptr && ReadLoneColumn(record.encoded(), &lone) &&
      lone.family_id < families_by_id_.size() &&
      families_by_id_[lone.family_id] != nullptr &&
      families_by_id_[lone.family_id]->aggregate == Aggregate::kNone) {
    const FamilyEntry& entry = *families_by_id_[lone.family_id];
    GcPeriod one;
    std::vector<GcPeriod> many;
    std::array<GcCell, LoneColumn::kMaxCells> cells;
    Version newest_version = 0;
    for (size_t k = 0; k < lone.cells; ++k) {
      cells[k] = {lone.timestamps[k], lone.versions[k]};
      newest_version = std::max(newest_version, lone.versions[k]);
    }
    FindGarbage(std::span(cells.data(), lone.cells),
                PeriodsOf(entry, &one, &many), tombstone_horizon);
    size_t keep = 0;
    while (keep < lone.cells && !cells[keep].garbage) ++keep;
    size_t k = keep;
    while (k < lone.cells && cells[k].garbage) ++k;
    if (k == lone.cells) {  // the kept cells are the newest ones
      // Cells above the horizon may still become garbage.
      out.mark = newest_version > tombstone_horizon && keep > 1;
      if (keep == 0) {
        out.erase = true;
      } else if (keep < lone.cells) {
        out.replacement = KeepNewestCells(record, lone, keep);
        if (shares != nullptr && record.shared() &&
            newest_version <= tombstone_horizon && !entry.gc_rule.LimitsAge() &&
            RuleSettled(entry, tombstone_horizon)) {
          shares->Add(record, lone.family_id, entry.gc_rule, now,
                      newest_version, out.replacement);
        }
      }
      return out;
    }
  }
  RowData row = DecodeRow(record.encoded());
  // Combined values kept (a list: constructing one allocates nothing).
  std::list<std::string> folded;
  std::vector<GcCell> cells;
  std::vector<ptrdiff_t> from;
  RowData kept;
  kept.tombstone =
      row.tombstone > tombstone_horizon ? row.tombstone : kNoVersion;
  bool revisit = kept.tombstone != kNoVersion;
  bool changed = kept.tombstone != row.tombstone;
  for (FamilyData& f : row.families) {
    const FamilyEntry* entry =
        f.id < families_by_id_.size() ? families_by_id_[f.id] : nullptr;
    if (entry == nullptr) {
      changed = true;
      continue;
    }
    GcPeriod one;
    std::vector<GcPeriod> many;
    const std::span<const GcPeriod> periods = PeriodsOf(*entry, &one, &many);
    FamilyData nf{
        f.id, f.tombstone > tombstone_horizon ? f.tombstone : kNoVersion, {}};
    changed |= nf.tombstone != f.tombstone;
    revisit = revisit || nf.tombstone != kNoVersion;
    for (ColumnData& c : f.columns) {
      ColumnData nc{c.qualifier, {}, {}};
      // The column's cells, with its superseded ones (at their place in
      // timestamp order): `from` is a cell's index in c.cells, or -1 - k
      // for (*superseded)[k].
      cells.clear();
      from.clear();
      for (size_t i = 0; i < c.cells.size(); ++i) {
        const Version hidden = HiddenAt(row, f, c, c.cells[i]);
        cells.push_back({c.cells[i].timestamp, c.cells[i].version,
                         hidden == kNoVersion ? kNeverHidden : hidden});
        from.push_back(static_cast<ptrdiff_t>(i));
      }
      if (superseded != nullptr) {
        AddSuperseded(row, f, c, *superseded, &cells, &from);
      }
      FindGarbage(cells, periods, tombstone_horizon);
      for (size_t i = 0; i < cells.size(); ++i) {
        if (from[i] < 0) {
          if (cells[i].garbage) (*superseded)[-1 - from[i]].garbage = true;
          continue;
        }
        const CellData& cell = c.cells[from[i]];
        if (cells[i].garbage) {
          changed = true;
        } else {
          nc.cells.push_back(cell);
          // Cells above the horizon may still become garbage.
          revisit = revisit || cell.version > tombstone_horizon;
        }
      }
      if (entry->aggregate != Aggregate::kNone &&
          FoldContributions(entry->aggregate, tombstone_horizon, &nc,
                            &folded)) {
        changed = true;
      }
      for (const ColumnTombstone& t : c.tombstones) {
        if (t.version > tombstone_horizon) {
          nc.tombstones.push_back(t);
          revisit = true;
        } else {
          changed = true;
        }
      }
      if (!nc.cells.empty() || !nc.tombstones.empty()) {
        nf.columns.push_back(std::move(nc));
      }
    }
    if (!nf.columns.empty() || nf.tombstone != kNoVersion) {
      kept.families.push_back(std::move(nf));
    } else if (!f.columns.empty() || f.tombstone != kNoVersion) {
      changed = true;
    }
  }
  if (superseded != nullptr) {
    // Those found garbage are judged for good.
    std::erase_if(*superseded, [](const Superseded& c) { return c.garbage; });
    revisit = revisit || !superseded->empty();
  }
  if (kept.empty()) {
    out.erase = true;
    return out;
  }
  if (changed) out.replacement = RowRecord(record.key(), kept);
  // Tombstones above the horizon must be revisited once it moves.
  out.mark = revisit;
  return out;
}

void Table::AddSuperseded(const RowData& row, const FamilyData& family,
                          const ColumnData& column,
                          const std::vector<Superseded>& superseded,
                          std::vector<GcCell>* cells,
                          std::vector<ptrdiff_t>* from) {
  for (size_t k = 0; k < superseded.size(); ++k) {
    const Superseded& s = superseded[k];
    if (s.garbage || s.family_id != family.id ||
        s.qualifier != column.qualifier) {
      continue;
    }
    // The cell at its timestamp until the next version written there that
    // this cluster has seen (arrival order does not matter).
    Version until = s.until;
    for (const Superseded& t : superseded) {
      if (!t.garbage && t.family_id == s.family_id &&
          t.timestamp == s.timestamp && t.qualifier == s.qualifier &&
          t.version > s.version && t.version < until) {
        until = t.version;
      }
    }
    for (const CellData& c : column.cells) {
      if (c.timestamp == s.timestamp && c.version > s.version &&
          c.version < until) {
        until = c.version;
      }
    }
    const Version hidden =
        HiddenAt(row, family, column, CellData{s.timestamp, s.version, {}});
    GcCell cell{s.timestamp, s.version,
                hidden == kNoVersion ? until : std::min(until, hidden)};
    // After the cells with a timestamp at least as new.
    size_t at = 0;
    while (at < cells->size() && (*cells)[at].timestamp >= s.timestamp) ++at;
    cells->insert(cells->begin() + static_cast<ptrdiff_t>(at), cell);
    from->insert(from->begin() + static_cast<ptrdiff_t>(at),
                 -1 - static_cast<ptrdiff_t>(k));
  }
}

bool Table::RuleSettled(const FamilyEntry& entry, Version horizon) {
  return entry.past_rules.empty() && entry.changed <= horizon;
}

std::span<const GcPeriod> Table::PeriodsOf(const FamilyEntry& entry,
                                           GcPeriod* one,
                                           std::vector<GcPeriod>* many) {
  *one = {entry.changed, &entry.gc_rule};
  if (entry.past_rules.empty()) return std::span(one, 1);
  for (const FamilyEntry::PastRule& r : entry.past_rules) {
    many->push_back({r.since, &r.rule});
  }
  many->push_back(*one);
  return *many;
}

namespace {

// Walks a table's rows in key order, a tablet at a time.
class RowCursor {
 public:
  explicit RowCursor(std::span<const std::unique_ptr<Tablet>> tablets)
      : tablets_(tablets) {}

  // The next row; null after the last.
  const RowRecord* Next() {
    while (next_ == rows_.size()) {
      if (tablet_ == tablets_.size()) return nullptr;
      rows_.clear();
      next_ = 0;
      tablets_[tablet_++]->Scan(Interval{}, /*reversed=*/false,
                                [this](const RowRecord& row) {
                                  rows_.push_back(&row);
                                  return true;
                                });
    }
    return rows_[next_++];
  }

 private:
  std::span<const std::unique_ptr<Tablet>> tablets_;
  size_t tablet_ = 0;
  std::vector<const RowRecord*> rows_;  // the current tablet's
  size_t next_ = 0;
};

}  // namespace

bool Table::SameContents(const Table& other) const {
  if (id_ != other.id_ || families_.size() != other.families_.size()) {
    return false;
  }
  for (auto a = families_.begin(), b = other.families_.begin();
       a != families_.end(); ++a, ++b) {
    if (a->first != b->first || a->second->id != b->second->id ||
        a->second->gc_rule != b->second->gc_rule ||
        a->second->aggregate != b->second->aggregate) {
      return false;
    }
  }
  // Replicas holding one allocation of a row compare it without reading it
  // (RowRecord::SameRow).
  RowCursor mine(tablets_);
  RowCursor theirs(other.tablets_);
  while (true) {
    const RowRecord* a = mine.Next();
    const RowRecord* b = theirs.Next();
    if (a == nullptr || b == nullptr) return a == b;
    if (!a->SameRow(*b)) return false;
  }
}

}  // namespace btsim::cluster
