// Table's replication and maintenance: applying changes committed on other
// clusters, versioned row-range drops, compaction, tablet splits and
// merging, and comparing replicas' contents. The rest of Table is in table.cc
// and table_read.cc.
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "base/bytes.h"
#include "cluster/row_edits.h"
#include "cluster/table.h"

namespace btsim::cluster {

void Table::PrefetchRows(std::span<const std::string_view> keys) {
  probes_.clear();
  // The chunk indexes first (each search waits for its own loads, not for
  // the chunk entry of the key before), then the chunks they found.
  for (std::string_view key : keys) {
    const size_t ti = TabletIndex(key);
    const Tablet* tablet = tablets_[ti].get();
    probes_.push_back(RowProbe{tablet, ti, {}});
    probes_.back().probe.index = tablet->FindChunk(key);
  }
  // Then each chunk's header, read (by ProbeHeads) kSkew keys after it was
  // requested: requesting every key's before reading any would find the
  // first ones not yet arrived.
  constexpr size_t kSkew = 8;
  for (size_t i = 0; i < keys.size() + kSkew; ++i) {
    if (i < keys.size()) {
      RowProbe& p = probes_[i];
      p.probe = p.tablet->ProbeChunkAt(p.probe.index);
    }
    if (i >= kSkew) {
      const size_t j = i - kSkew;
      probes_[j].tablet->ProbeHeads(keys[j], probes_[j].probe);
    }
  }
  for (size_t i = 0; i < keys.size(); ++i) {
    probes_[i].tablet->ProbeRow(keys[i], &probes_[i].probe);
  }
}

std::pair<size_t, Tablet::Slot> Table::Locate(std::string_view key,
                                              const RowProbe* probe) const {
  if (probe != nullptr) {
    const RowProbe& p = *probe;
    if (Current(p)) {
      if (std::optional<Tablet::Slot> slot =
              p.tablet->SeekProbed(key, p.probe)) {
        return {p.index, *slot};
      }
    }
  }
  const size_t ti = TabletIndex(key);
  return {ti, tablets_[ti]->Seek(key)};
}

void Table::ApplyReplicated(std::string_view key,
                            std::span<const Mutation> mutations,
                            Version version, const RowShare* share,
                            size_t probe) {
  for (const RangeTombstone& r : range_tombstones_) {
    if (version < r.version && key.starts_with(r.prefix)) return;
  }
  // A mutation applies unless it names a family this table lacks.
  auto applies = [this](const Mutation& m) {
    return FamilyIdOf(m).has_value();
  };
  const int64_t micros = VersionMicros(version);
  const CommitContext commit{version, micros - micros % 1000};
  if (mutations.size() == 1) {
    // The commonest record, the only one that carries a share: its family
    // found once, both to apply and to check the share's family id.
    const std::optional<uint32_t> family_id = FamilyIdOf(mutations[0]);
    if (!family_id) return;
    const bool same_id = share != nullptr && share->family_id == *family_id;
    (void)ApplyToRow(key, mutations, commit, /*local=*/false,
                     same_id ? share : nullptr, probe);
    return;
  }
  // Usually every mutation applies: then no copy is made.
  if (std::all_of(mutations.begin(), mutations.end(), applies)) {
    if (!mutations.empty()) {
      (void)ApplyToRow(key, mutations, commit, /*local=*/false,
                       /*share=*/nullptr, probe);
    }
    return;
  }
  std::vector<Mutation> applicable;
  for (const Mutation& m : mutations) {
    if (applies(m)) applicable.push_back(m);
  }
  if (applicable.empty()) return;
  (void)ApplyToRow(key, applicable, commit, /*local=*/false,
                   /*share=*/nullptr, probe);
}

std::optional<uint32_t> Table::FamilyIdOf(const Mutation& m) const {
  const std::string* name = nullptr;
  if (const auto* set = std::get_if<SetCell>(&m)) name = &set->family;
  if (const auto* col = std::get_if<DeleteFromColumn>(&m)) name = &col->family;
  if (const auto* fam = std::get_if<DeleteFromFamily>(&m)) name = &fam->family;
  if (name == nullptr) return RowShare::kNoFamily;
  const FamilyEntry* family = FindFamily(*name);
  if (family == nullptr) return std::nullopt;
  return family->id;
}

bool Table::CanTake(const RowShare& share, const RowRecord* row,
                    std::span<const Mutation> mutations) const {
  if (!share.valid() || mutations.size() != 1) return false;
  return row == nullptr ? !share.before.valid() : row->SameRow(share.before);
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
        tablet->Mark(tablet->SlotAt(i));
      }
    }
    if (any_removed) tablet->DropInvalid();
  }
}

void Table::MaybeSplit(size_t ti) {
  Tablet& t = *tablets_[ti];
  if (t.size() < 2) return;
  if (t.bytes() <= options_.split_bytes &&
      static_cast<int64_t>(t.size()) <= options_.split_rows) {
    return;
  }
  // Split where half the bytes lie on each side.
  const size_t at = std::clamp<size_t>(t.HalfBytesIndex(), 1, t.size() - 1);
  auto right = std::make_unique<Tablet>(t.SplitAt(at));
  tablets_.insert(tablets_.begin() + static_cast<ptrdiff_t>(ti) + 1,
                  std::move(right));
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

namespace {

bool HasAgeRule(const GcRule& rule) {
  if (rule.kind == GcRule::Kind::kMaxAge) return true;
  for (const GcRule& r : rule.rules) {
    if (HasAgeRule(r)) return true;
  }
  return false;
}

}  // namespace

void Table::Compact(int64_t now_micros, Version tombstone_horizon,
                    CompactionShares* shares) {
  bool age_rules = false;
  for (const auto& [name, entry] : families_) {
    age_rules = age_rules || HasAgeRule(entry->gc_rule);
  }
  for (auto& tablet : tablets_) {
    CompactTablet(*tablet, schema_dirty_ || age_rules, now_micros,
                  tombstone_horizon, shares);
  }
  schema_dirty_ = false;
  std::erase_if(range_tombstones_, [&](const RangeTombstone& r) {
    return r.version <= tombstone_horizon;
  });
  MergeSmallTablets();
  for (size_t i = 0; i < tablets_.size(); ++i) MaybeSplit(i);
}

void Table::CompactTablet(Tablet& tablet, bool every_row, int64_t now_micros,
                          Version tombstone_horizon, CompactionShares* shares) {
  if (!every_row && !tablet.dirty()) return;
  std::vector<Tablet::Slot> emptied;
  // Taken in both cases: the full walk covers the marked rows too.
  std::vector<Tablet::Slot> marked = tablet.TakeMarked();
  if (every_row || tablet.all_dirty()) {
    tablet.set_all_dirty(false);
    for (size_t i = 0; i < tablet.size(); ++i) {
      const Tablet::Slot slot = tablet.SlotAt(i);
      if (TakeCompacted(tablet, slot, now_micros, shares)) continue;
      if (every_row || MayNeedCompaction(tablet.At(slot)->encoded())) {
        CompactRow(tablet, slot, now_micros, tombstone_horizon, shares,
                   &emptied);
      }
    }
  } else {
    // The marked rows (and their entries in `shares`) are scattered over
    // the heap: each is requested a few rows ahead so that their cache
    // misses overlap (Rewrite keeps slots); half as far ahead, what those
    // lead to (the rest of a long row, the shared result's header).
    constexpr size_t kAhead = 8;
    for (size_t k = 0; k < marked.size(); ++k) {
      if (k + kAhead < marked.size()) {
        const RowRecord& ahead = *tablet.At(marked[k + kAhead]);
        ahead.Prefetch();
        if (shares != nullptr) shares->Prefetch(ahead);
      }
      if (k + kAhead / 2 < marked.size()) {
        const RowRecord& ahead = *tablet.At(marked[k + kAhead / 2]);
        ahead.PrefetchRest();
        if (shares != nullptr) shares->PrefetchResult(ahead);
      }
      const Tablet::Slot& slot = marked[k];
      if (TakeCompacted(tablet, slot, now_micros, shares)) continue;
      if (MayNeedCompaction(tablet.At(slot)->encoded())) {
        CompactRow(tablet, slot, now_micros, tombstone_horizon, shares,
                   &emptied);
      }
    }
  }
  if (emptied.empty()) return;
  for (const Tablet::Slot& slot : emptied) tablet.Rewrite(slot, RowRecord());
  tablet.DropInvalid();
}

bool Table::TakeCompacted(Tablet& tablet, const Tablet::Slot& slot,
                          int64_t now_micros, const CompactionShares* shares) {
  if (shares == nullptr) return false;
  const CompactionShares::Recorded known =
      shares->Find(*tablet.At(slot), now_micros);
  if (known.result == nullptr || known.family_id >= families_by_id_.size() ||
      families_by_id_[known.family_id] == nullptr ||
      !(families_by_id_[known.family_id]->gc_rule == *known.rule)) {
    return false;
  }
  tablet.Rewrite(slot, known.result->Share());
  return true;
}

void Table::CompactRow(Tablet& tablet, const Tablet::Slot& slot,
                       int64_t now_micros, Version tombstone_horizon,
                       CompactionShares* shares,
                       std::vector<Tablet::Slot>* emptied) {
  const RowRecord& record = *tablet.At(slot);
  // The commonest case, on the encoding: one column and no tombstone, whose
  // GC rule drops its oldest cells (or none, or all).
  LoneColumn lone;
  if (ReadLoneColumn(record.encoded(), &lone) &&
      lone.family_id < families_by_id_.size() &&
      families_by_id_[lone.family_id] != nullptr) {
    const GcRule& rule = families_by_id_[lone.family_id]->gc_rule;
    size_t keep = 0;
    bool newest_kept = true;  // the kept cells are the newest ones
    for (size_t k = 0; k < lone.cells; ++k) {
      if (rule.Deletes(static_cast<int64_t>(k), lone.timestamp_micros[k],
                       now_micros)) {
        continue;
      }
      newest_kept = newest_kept && keep == k;
      ++keep;
    }
    if (newest_kept) {
      if (keep == 0) {
        emptied->push_back(slot);
      } else if (keep < lone.cells) {
        RowRecord kept = KeepNewestCells(record, lone, keep);
        if (shares != nullptr && record.shared()) {
          shares->Add(record, lone.family_id, rule, now_micros, kept);
        }
        tablet.Rewrite(slot, std::move(kept));
      }
      return;
    }
  }
  RowData row = DecodeRow(record.encoded());
  RowData out;
  out.tombstone =
      row.tombstone > tombstone_horizon ? row.tombstone : kNoVersion;
  bool kept_tombstones = out.tombstone != kNoVersion;
  bool changed = out.tombstone != row.tombstone;
  for (FamilyData& f : row.families) {
    const FamilyEntry* entry =
        f.id < families_by_id_.size() ? families_by_id_[f.id] : nullptr;
    if (entry == nullptr) {
      changed = true;
      continue;
    }
    FamilyData nf{
        f.id, f.tombstone > tombstone_horizon ? f.tombstone : kNoVersion, {}};
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
    emptied->push_back(slot);
    return;
  }
  if (changed) tablet.Rewrite(slot, RowRecord(record.key(), out));
  // Tombstones above the horizon must be revisited once it moves.
  if (kept_tombstones) tablet.Mark(slot);
}

namespace {

// Walks a table's rows in key order, tablet by tablet and chunk by chunk.
class RowCursor {
 public:
  explicit RowCursor(const std::vector<std::unique_ptr<Tablet>>& tablets)
      : tablets_(tablets) {}

  // The next row; null after the last.
  const RowRecord* Next() {
    while (rows_.empty()) {
      if (tablet_ == tablets_.size()) return nullptr;
      const Tablet& t = *tablets_[tablet_];
      if (chunk_ < t.chunk_count()) {
        rows_ = t.ChunkRows(chunk_++);
      } else {
        ++tablet_;
        chunk_ = 0;
      }
    }
    const RowRecord* row = &rows_.front();
    rows_ = rows_.subspan(1);
    return row;
  }

 private:
  const std::vector<std::unique_ptr<Tablet>>& tablets_;
  size_t tablet_ = 0;
  size_t chunk_ = 0;
  std::span<const RowRecord> rows_;  // what is left of the current chunk
};

}  // namespace

bool Table::SameContents(const Table& other) const {
  if (id_ != other.id_ || families_.size() != other.families_.size()) {
    return false;
  }
  for (auto a = families_.begin(), b = other.families_.begin();
       a != families_.end(); ++a, ++b) {
    if (a->first != b->first || a->second->id != b->second->id ||
        a->second->gc_rule != b->second->gc_rule) {
      return false;
    }
  }
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
