#include "scenarios/row_reader.h"

#include "cluster/row_set.h"

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
      row.timestamp_micros = cell.timestamp_micros;
      have_value = true;
    } else if (!have_counter && cell.qualifier == kCounterColumn) {
      row.counter = DecodeCounter(cell.value);
      have_counter = true;
    }
    if (have_value && have_counter) break;
  }
  return row;
}

int64_t DecodeCounter(std::string_view value) {
  if (value.size() != 8) return 0;
  uint64_t v = 0;
  for (unsigned char c : value) v = v << 8 | c;
  return static_cast<int64_t>(v);
}

}  // namespace btsim::scenarios
