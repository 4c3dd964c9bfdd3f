// Table's replication and maintenance: applying changes committed on other
// clusters, versioned row-range drops, compaction and tablet merging. The
// rest of Table is in table.cc.
#include <algorithm>
#include <string>
#include <vector>

#include "cluster/table.h"

namespace btsim::cluster {

void Table::ApplyReplicated(std::string_view key,
                            std::span<const Mutation> mutations,
                            Version version) {
  for (const RangeTombstone& r : range_tombstones_) {
    if (version < r.version && key.starts_with(r.prefix)) return;
  }
  auto applies = [this](const Mutation& m) {
    const std::string* family = nullptr;
    if (const auto* set = std::get_if<SetCell>(&m)) family = &set->family;
    if (const auto* col = std::get_if<DeleteFromColumn>(&m)) {
      family = &col->family;
    }
    if (const auto* fam = std::get_if<DeleteFromFamily>(&m)) {
      family = &fam->family;
    }
    return family == nullptr || HasFamily(*family);
  };
  const int64_t micros = VersionMicros(version);
  const CommitContext commit{version, micros - micros % 1000};
  // Usually every mutation applies: then no copy is made.
  if (std::all_of(mutations.begin(), mutations.end(), applies)) {
    if (!mutations.empty()) {
      (void)ApplyToRow(key, mutations, commit, /*local=*/false);
    }
    return;
  }
  std::vector<Mutation> applicable;
  for (const Mutation& m : mutations) {
    if (applies(m)) applicable.push_back(m);
  }
  if (applicable.empty()) return;
  (void)ApplyToRow(key, applicable, commit, /*local=*/false);
}

void Table::DropRowRangeAt(std::string_view prefix, Version version) {
  range_tombstones_.push_back(RangeTombstone{std::string(prefix), version});
  const std::string end = PrefixSuccessor(prefix);
  for (auto& tablet : tablets_) {
    const size_t first = tablet->LowerBound(prefix);
    const size_t last = end.empty() ? tablet->size() : tablet->LowerBound(end);
    bool any_removed = false;
    for (size_t i = first; i < last; ++i) {
      const RowRecord& record = tablet->row(i);
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
      if (kept.empty()) {
        tablet->Rewrite(i, RowRecord());
        any_removed = true;
      } else {
        tablet->Rewrite(i, RowRecord(record.key(), kept));
      }
    }
    if (any_removed) tablet->DropInvalid();
    if (first < last) tablet->set_dirty(true);
  }
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

namespace {

bool HasAgeRule(const GcRule& rule) {
  if (rule.kind == GcRule::Kind::kMaxAge) return true;
  for (const GcRule& r : rule.rules) {
    if (HasAgeRule(r)) return true;
  }
  return false;
}

}  // namespace

void Table::Compact(int64_t now_micros, Version tombstone_horizon) {
  bool age_rules = false;
  for (const auto& [name, entry] : families_) {
    age_rules = age_rules || HasAgeRule(entry->gc_rule);
  }
  for (auto& tablet_ptr : tablets_) {
    Tablet& tablet = *tablet_ptr;
    if (!tablet.dirty() && !schema_dirty_ && !age_rules) continue;
    bool any_removed = false;
    bool kept_tombstones = false;
    const bool every_row = schema_dirty_ || age_rules;
    for (size_t i = 0; i < tablet.size(); ++i) {
      const RowRecord& record = tablet.row(i);
      if (!every_row && !MayNeedCompaction(record.encoded())) continue;
      RowData row = DecodeRow(record.encoded());
      bool changed = false;
      RowData out;
      out.tombstone =
          row.tombstone > tombstone_horizon ? row.tombstone : kNoVersion;
      kept_tombstones = kept_tombstones || out.tombstone != kNoVersion;
      changed |= out.tombstone != row.tombstone;
      for (FamilyData& f : row.families) {
        const FamilyEntry* entry =
            f.id < families_by_id_.size() ? families_by_id_[f.id] : nullptr;
        if (entry == nullptr) {
          changed = true;
          continue;
        }
        FamilyData nf{
            f.id,
            f.tombstone > tombstone_horizon ? f.tombstone : kNoVersion,
            {}};
        changed |= nf.tombstone != f.tombstone;
        kept_tombstones = kept_tombstones || nf.tombstone != kNoVersion;
        for (ColumnData& c : f.columns) {
          ColumnData nc{c.qualifier, {}, {}};
          int64_t index = 0;
          for (const CellData& cell : c.cells) {
            if (IsCovered(row, f, c, cell)) {
              changed = true;
              continue;
            }
            if (entry->gc_rule.Deletes(index++, cell.timestamp_micros,
                                       now_micros)) {
              changed = true;
              continue;
            }
            nc.cells.push_back(cell);
          }
          for (const ColumnTombstone& t : c.tombstones) {
            if (t.version > tombstone_horizon) {
              nc.tombstones.push_back(t);
              kept_tombstones = true;
            } else {
              changed = true;
            }
          }
          if (!nc.cells.empty() || !nc.tombstones.empty()) {
            nf.columns.push_back(std::move(nc));
          }
        }
        if (!nf.columns.empty() || nf.tombstone != kNoVersion) {
          out.families.push_back(std::move(nf));
        } else if (!f.columns.empty() || f.tombstone != kNoVersion) {
          changed = true;
        }
      }
      if (out.empty()) {
        tablet.Rewrite(i, RowRecord());
        any_removed = true;
      } else if (changed) {
        tablet.Rewrite(i, RowRecord(record.key(), out));
      }
    }
    if (any_removed) tablet.DropInvalid();
    // Tombstones above the horizon must be revisited once it moves.
    tablet.set_dirty(kept_tombstones);
  }
  schema_dirty_ = false;
  std::erase_if(range_tombstones_, [&](const RangeTombstone& r) {
    return r.version <= tombstone_horizon;
  });
  MergeSmallTablets();
  for (size_t i = 0; i < tablets_.size(); ++i) MaybeSplit(i);
}

}  // namespace btsim::cluster
