#include "cluster/internal/row_apply.h"

#include <algorithm>
#include <list>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "base/check.h"
#include "cluster/aggregate.h"
#include "cluster/internal/aggregate_cells.h"
#include "cluster/internal/row_edits.h"

namespace btsim::cluster::internal {
namespace {

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

// A cell that lost its timestamp to another version: (loser, winner's
// version).
using Loser = std::pair<CellData, Version>;

// Restores a column's invariant (timestamps descending and unique) after
// cells were appended: of cells with one timestamp the newest version wins,
// and of equal versions (one request) the one appended last. Appends each
// cell that lost to another version to *losers.
void NormalizeCells(ColumnData& column, std::vector<Loser>* losers) {
  auto& cells = column.cells;
  // Usually one cell was appended to a column in order: it is then already
  // in place, or (a new version of a many-version column, as
  // ReadModifyWriteRow writes) only the last cell is out of place, and it
  // moves into place without a sort.
  auto out_of_order = [](const CellData& a, const CellData& b) {
    return a.timestamp <= b.timestamp;
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
        cells.begin(), cells.end() - 1, last.timestamp,
        [](const CellData& c, Timestamp ts) { return c.timestamp > ts; });
    if (pos->timestamp == last.timestamp) {
      // Of one timestamp the newest version wins; the later one on a tie.
      if (last.version > pos->version) {
        losers->emplace_back(*pos, last.version);
      } else if (last.version < pos->version) {
        losers->emplace_back(last, pos->version);
      }
      if (last.version >= pos->version) *pos = last;
      cells.pop_back();
    } else {
      std::rotate(pos, cells.end() - 1, cells.end());
    }
    return;
  }
  std::stable_sort(cells.begin(), cells.end(),
                   [](const CellData& a, const CellData& b) {
                     return a.timestamp > b.timestamp;
                   });
  size_t out = 0;
  for (size_t i = 0; i < cells.size();) {
    size_t best = i;
    size_t j = i;
    for (; j < cells.size() && cells[j].timestamp == cells[i].timestamp; ++j) {
      if (cells[j].version >= cells[best].version) best = j;
    }
    for (size_t k = i; k < j; ++k) {
      if (cells[k].version != cells[best].version) {
        losers->emplace_back(cells[k], cells[best].version);
      }
    }
    cells[out++] = cells[best];
    i = j;
  }
  cells.resize(out);
}

void AddColumnTombstone(ColumnData& column, Timestamp start, Timestamp end,
                        Version version) {
  for (ColumnTombstone& t : column.tombstones) {
    if (t.start == start && t.end == end) {
      t.version = std::max(t.version, version);
      return;
    }
  }
  column.tombstones.push_back(ColumnTombstone{start, end, version});
}

Timestamp Resolved(Timestamp timestamp, const Request& request) {
  return timestamp == kServerTimestamp ? request.server_time : timestamp;
}

// Edits `row` by the request's mutations, appending the cells its writes
// superseded to *superseded. Combined values are kept in *owned.
void Apply(const Request& request, RowData& row,
           std::vector<SupersededCell>* superseded,
           std::list<std::string>* owned) {
  const std::span<const Mutation> mutations = request.mutations;
  const std::span<const uint32_t> ids = request.family_ids;
  BTSIM_CHECK(ids.size() == mutations.size());
  // First create every family and column the request touches, so that the
  // loop below only looks them up and references into `row` stay valid.
  // One sorted list of (family id, column); a family-wide delete adds its
  // family with no column (nullopt).
  std::vector<std::pair<uint32_t, std::optional<std::string_view>>> wanted;
  wanted.reserve(mutations.size());
  for (size_t i = 0; i < mutations.size(); ++i) {
    const Mutation& m = mutations[i];
    if (const auto* set = std::get_if<SetCell>(&m)) {
      wanted.emplace_back(ids[i], set->qualifier);
    } else if (const auto* add = std::get_if<AddToCell>(&m)) {
      wanted.emplace_back(ids[i], add->qualifier);
    } else if (const auto* col = std::get_if<DeleteFromColumn>(&m)) {
      wanted.emplace_back(ids[i], col->qualifier);
    } else if (std::holds_alternative<DeleteFromFamily>(m)) {
      wanted.emplace_back(ids[i], std::nullopt);
    } else {
      BTSIM_CHECK(std::holds_alternative<DeleteFromRow>(m));
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

  // Every mutation commits at request.version. A tombstone covers only
  // older versions, so a delete also erases the cells that earlier
  // mutations of this request wrote: the request then takes effect in
  // order, and a replica replaying the same list gets the same result.
  const Version version = request.version;
  auto erase_same_request = [version](ColumnData& c, Timestamp start,
                                      Timestamp end) {
    std::erase_if(c.cells, [&](const CellData& cell) {
      return cell.version == version &&
             InTimestampRange(cell.timestamp, start, end);
    });
  };
  auto aggregate_of = [&](size_t i) {
    return request.aggregates.empty() ? Aggregate::kNone
                                      : request.aggregates[i];
  };
  // The columns appended to, with their family's id and aggregate.
  std::vector<std::tuple<ColumnData*, uint32_t, Aggregate>> appended;
  for (size_t i = 0; i < mutations.size(); ++i) {
    const Mutation& m = mutations[i];
    if (const auto* set = std::get_if<SetCell>(&m)) {
      ColumnData& c = FindColumn(FindFamilyData(row, ids[i]), set->qualifier);
      c.cells.push_back(
          CellData{Resolved(set->timestamp, request), version, set->value});
      appended.emplace_back(&c, ids[i], aggregate_of(i));
    } else if (const auto* add = std::get_if<AddToCell>(&m)) {
      ColumnData& c = FindColumn(FindFamilyData(row, ids[i]), add->qualifier);
      const Timestamp ts = Resolved(add->timestamp, request);
      auto same = std::find_if(
          c.cells.begin(), c.cells.end(), [&](const CellData& cell) {
            return cell.timestamp == ts && cell.version == version;
          });
      if (same == c.cells.end()) {
        c.cells.push_back(CellData{ts, version, add->input});
        appended.emplace_back(&c, ids[i], aggregate_of(i));
      } else if (aggregate_of(i) != Aggregate::kNone) {
        // Another input of the same commit to the same cell (this request's,
        // or an earlier entry's of its MutateRows batch): one contribution.
        owned->push_back(
            EncodeInt64(Combine(aggregate_of(i), DecodeInt64(same->value),
                                DecodeInt64(add->input))));
        same->value = owned->back();
      }
    } else if (const auto* col = std::get_if<DeleteFromColumn>(&m)) {
      ColumnData& c = FindColumn(FindFamilyData(row, ids[i]), col->qualifier);
      AddColumnTombstone(c, col->start, col->end, version);
      erase_same_request(c, col->start, col->end);
    } else if (std::holds_alternative<DeleteFromFamily>(m)) {
      FamilyData& f = FindFamilyData(row, ids[i]);
      f.tombstone = std::max(f.tombstone, version);
      for (ColumnData& c : f.columns)
        erase_same_request(c, Timestamp{}, Timestamp{});
    } else {
      // The one kind left; a new kind of mutation must be handled above.
      BTSIM_CHECK(std::holds_alternative<DeleteFromRow>(m));
      row.tombstone = std::max(row.tombstone, version);
      for (FamilyData& f : row.families) {
        for (ColumnData& c : f.columns)
          erase_same_request(c, Timestamp{}, Timestamp{});
      }
    }
  }
  std::sort(appended.begin(), appended.end());
  appended.erase(std::unique(appended.begin(), appended.end()), appended.end());
  std::vector<Loser> losers;
  for (const auto& [c, family_id, aggregate] : appended) {
    if (aggregate != Aggregate::kNone) {
      NormalizeContributions(*c);
      continue;
    }
    losers.clear();
    NormalizeCells(*c, &losers);
    for (const auto& [cell, winner] : losers) {
      superseded->push_back(SupersededCell{
          family_id, c->qualifier, cell.timestamp, cell.version, winner});
    }
  }
  // In column order, not the order of the columns' addresses; a cell the
  // request wrote twice (one version) once.
  auto key = [](const SupersededCell& c) {
    return std::tie(c.family_id, c.qualifier, c.timestamp, c.version);
  };
  std::sort(superseded->begin(), superseded->end(),
            [&](const SupersededCell& a, const SupersededCell& b) {
              return key(a) < key(b);
            });
  superseded->erase(
      std::unique(superseded->begin(), superseded->end(),
                  [&](const SupersededCell& a, const SupersededCell& b) {
                    return key(a) == key(b);
                  }),
      superseded->end());
}

}  // namespace

WrittenRow ApplyMutations(std::string_view key, const RowRecord* old,
                          const Request& request, int64_t max_bytes) {
  RowData row = old != nullptr ? DecodeRow(old->encoded()) : RowData{};
  WrittenRow out;
  std::list<std::string> owned;  // allocates only when used
  Apply(request, row, &out.superseded, &owned);
  out.size = EncodedSize(row) + key.size();
  if (static_cast<int64_t>(out.size) > max_bytes) return out;
  out.row = RowRecord(key, row);
  out.dirty = MayNeedCompaction(row);
  return out;
}

WrittenRow ApplyRequest(std::string_view key, const RowRecord* old,
                        const Request& request, int64_t max_bytes) {
  if (request.mutations.size() == 1 &&
      (request.aggregates.empty() ||
       request.aggregates[0] == Aggregate::kNone)) {
    if (const auto* set = std::get_if<SetCell>(&request.mutations[0])) {
      Version superseded = kNoVersion;
      RowRecord row =
          WithCellWritten(key, old, request.family_ids[0], set->qualifier,
                          Resolved(set->timestamp, request), request.version,
                          set->value, &superseded);
      if (row.valid()) {
        WrittenRow out;
        if (superseded != kNoVersion && superseded != request.version) {
          out.superseded.push_back(SupersededCell{
              request.family_ids[0], set->qualifier,
              Resolved(set->timestamp, request), superseded, request.version});
        }
        out.size = row.encoded().size() + key.size();
        if (static_cast<int64_t>(out.size) > max_bytes) return out;
        // A new row of one cell has nothing to compact.
        out.dirty = old != nullptr && MayNeedCompaction(row.encoded());
        out.row = std::move(row);
        return out;
      }
    }
  }
  return ApplyMutations(key, old, request, max_bytes);
}

}  // namespace btsim::cluster::internal
