#include "scenarios/row_reader.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>  // btsim: order-independent (lookups only)
#include <utility>
#include <vector>

#include "base/check.h"
#include "cluster/row_set.h"
#include "scenarios/tag_map.h"

namespace btsim::scenarios {

Status ReadRowStates(
    cluster::Cluster& cluster, std::string_view table, std::string_view family,
    const cluster::RowSet* rows,
    const std::function<bool(std::string_view, const RowRead&)>& visit) {
  // No filter: RowStateOf picks the newest cell of each column itself
  // (cheaper than a CellsPerColumnLimit(1) filter, and the same rows: that
  // filter never empties a row).
  cluster::ReadOptions options;
  options.rows = rows;
  return cluster.ReadRows(
      table, options,
      [&](std::string_view key, std::span<const cluster::CellView> cells) {
        return visit(key, RowStateOf(family, cells));
      });
}

RowRead RowStateOf(std::string_view family,
                   std::span<const cluster::CellView> cells) {
  RowRead row;
  bool have_value = false;
  bool have_counter = false;
  // Canonical order: a column's cells are adjacent, newest first, so the
  // first cell seen of a column is its newest.
  for (const cluster::CellView& cell : cells) {
    if (cell.family != family) continue;
    if (!have_value && cell.qualifier == kValueColumn) {
      row.tag = TagOf(cell.value);
      row.timestamp = cell.timestamp;
      have_value = true;
    } else if (!have_counter && cell.qualifier == kCounterColumn) {
      row.counter = DecodeCounter(cell.value);
      have_counter = true;
    }
    if (have_value && have_counter) break;
  }
  return row;
}

namespace {

// The final rows with a tag: (cluster, row index in its rows).
struct TaggedRow {
  size_t cluster;
  uint32_t row;
};

// Sets the version of each tagged row to that of the operation that
// committed its tag (the newest version when several did; the tag stays
// unless none did): one pass over the operations, with an index as large as
// the final rows, whatever the history's length.
void FillWriters(const std::vector<TaggedRow>& tagged, History* history) {
  constexpr uint32_t kEnd = std::numeric_limits<uint32_t>::max();
  // Tag -> the first of its rows in `tagged`; `next` chains the others.
  std::unordered_map<Tag, uint32_t, TagHash> first;  // btsim: order-independent
  std::vector<uint32_t> next(tagged.size(), kEnd);
  auto state_of = [&](const TaggedRow& t) -> RowState& {
    return history->final_state[t.cluster].rows.at(t.row);
  };
  for (uint32_t i = 0; i < tagged.size(); ++i) {
    auto [it, added] = first.try_emplace(state_of(tagged[i]).tag, i);
    if (!added) {
      next[i] = it->second;
      it->second = i;
    }
  }
  if (first.empty()) return;
  for (const Operation& op : history->operations) {
    if (op.written().empty() || op.version == 0) continue;
    auto it = first.find(op.written());
    if (it == first.end()) continue;
    for (uint32_t i = it->second; i != kEnd; i = next[i]) {
      RowState& state = state_of(tagged[i]);
      state.version = std::max(state.version, op.version);
    }
  }
}

}  // namespace

void ReadFinalState(replication::Replicas& replicas,
                    const std::map<std::string, std::string>& family_of,
                    History* history, sim::Fingerprint* fingerprint) {
  BTSIM_CHECK(history->final_state.empty());
  NamePool& names = *history->names;
  std::vector<TaggedRow> tagged;
  for (const std::string& id : replicas.ClusterIds()) {
    cluster::Cluster* cluster = replicas.Find(id);
    ClusterState state;
    state.id = id;
    // Reserves room in state.rows for every row of the scenario's tables.
    auto reserve_rows = [&] {
      size_t rows = 0;
      for (const auto& [table, family] : family_of) {
        if (auto t = cluster->GetTable(table); t.ok()) {
          rows += static_cast<size_t>((*t)->Stats().rows);
        }
      }
      state.rows.reserve(rows);
    };
    // Tables in id order, rows in key order (AddContents' and
    // ReadRowStates' order). A row with a tag takes the version of the
    // operation that wrote it later, in FillWriters.
    auto append = [&](Name table, std::string_view key, const RowRead& read) {
      RowState row{Tag(), read.timestamp, 0, read.counter};
      if (!read.tag.empty()) {
        row.tag = names.MakeTag(read.tag);
        tagged.push_back({history->final_state.size(),
                          static_cast<uint32_t>(state.rows.size())});
      }
      state.rows.Append({table, names.Store(key)}, row);
    };
    // The first earlier cluster with row states of its own that `same`
    // accepts.
    auto earlier_where = [&](auto same) -> std::optional<size_t> {
      for (size_t c = 0; c < history->final_state.size(); ++c) {
        const ClusterState& earlier = history->final_state[c];
        if (!earlier.same_as && same(earlier)) return c;
      }
      return std::nullopt;
    };
    // A cluster usually holds what an earlier one does, mostly in the same
    // row versions: then it takes that cluster's digest and row states
    // without reading a cell.
    state.same_as = earlier_where([&](const ClusterState& earlier) {
      return cluster->SameContents(*replicas.Find(earlier.id));
    });
    if (state.same_as) {
      state.digest = history->final_state[*state.same_as].digest;
    }
    // The first cluster always keeps its rows (nothing earlier to share
    // with): read them in the digest's pass. Later ones that differ in
    // storage may still hold equal contents (same digest), so they are
    // read separately, only when the digests differ.
    const bool first = history->final_state.empty();
    if (first) {
      reserve_rows();
      // The table being visited and its scenario entry (null: not a
      // scenario table, skipped).
      std::optional<std::string_view> table_seen;
      const std::pair<const std::string, std::string>* entry = nullptr;
      Name table_name;  // entry's table, interned
      sim::Fingerprint digest;
      cluster->AddContents(
          &digest, [&](std::string_view table, std::string_view key,
                       std::span<const cluster::CellView> cells) {
            if (table_seen != table) {
              table_seen = table;
              auto it = family_of.find(std::string(table));
              entry = it == family_of.end() ? nullptr : &*it;
              if (entry != nullptr) table_name = names.Intern(entry->first);
            }
            if (entry == nullptr) return;
            append(table_name, key, RowStateOf(entry->second, cells));
          });
      state.digest = digest.Hex();
    } else if (!state.same_as) {
      sim::Fingerprint digest;
      cluster->AddContents(&digest);
      state.digest = digest.Hex();
      state.same_as = earlier_where([&](const ClusterState& earlier) {
        return earlier.digest == state.digest;
      });
    }
    for (const std::string& origin : replicas.ClusterIds()) {
      if (origin != id) state.applied[origin] = replicas.Applied(origin, id);
    }
    fingerprint->Add(id);
    fingerprint->Add(state.digest);
    if (!first && !state.same_as) {
      reserve_rows();
      for (const auto& [table, family] : family_of) {
        const Name table_name = names.Intern(table);
        const Status read =
            ReadRowStates(*cluster, table, family, /*rows=*/nullptr,
                          [&](std::string_view key, const RowRead& read) {
                            append(table_name, key, read);
                            return true;
                          });
        // Only an unknown table fails: a cluster without it has no rows of
        // it, as in the first cluster's pass (AddContents).
        BTSIM_CHECK_MSG(read.ok() || read.code() == StatusCode::kNotFound,
                        read.message());
      }
    }
    history->final_state.push_back(std::move(state));
  }
  FillWriters(tagged, history);
}

int64_t DecodeCounter(std::string_view value) {
  if (value.size() != 8) return 0;
  uint64_t v = 0;
  for (unsigned char c : value) v = v << 8 | c;
  return static_cast<int64_t>(v);
}

}  // namespace btsim::scenarios
