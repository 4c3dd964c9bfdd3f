#include "scenarios/row_reader.h"

#include "cluster/filter.h"
#include "cluster/row_set.h"

namespace btsim::scenarios {

Status ReadRowStates(
    cluster::Cluster& cluster, std::string_view table, std::string_view family,
    const cluster::RowSet* rows,
    const std::function<bool(std::string_view, const RowState&)>& visit) {
  auto newest_only = cluster::Filter::CellsPerColumnLimit(1);
  cluster::ReadOptions options;
  options.rows = rows;
  options.filter = &*newest_only;
  return cluster.ReadRows(
      table, options,
      [&](std::string_view key, std::span<const cluster::CellView> cells) {
        RowState row;
        for (const cluster::CellView& cell : cells) {
          if (cell.family != family) continue;
          if (cell.qualifier == kValueColumn) {
            row.tag = std::string(TagOf(cell.value));
            row.timestamp_micros = cell.timestamp_micros;
          } else if (cell.qualifier == kCounterColumn) {
            row.counter = DecodeCounter(cell.value);
          }
        }
        return visit(key, row);
      });
}

int64_t DecodeCounter(std::string_view value) {
  if (value.size() != 8) return 0;
  uint64_t v = 0;
  for (unsigned char c : value) v = v << 8 | c;
  return static_cast<int64_t>(v);
}

}  // namespace btsim::scenarios
