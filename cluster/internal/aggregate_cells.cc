#include "cluster/internal/aggregate_cells.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "cluster/aggregate.h"

namespace btsim::cluster::internal {

void NormalizeContributions(ColumnData& column) {
  std::stable_sort(column.cells.begin(), column.cells.end(),
                   [](const CellData& a, const CellData& b) {
                     return a.timestamp != b.timestamp
                                ? a.timestamp > b.timestamp
                                : a.version > b.version;
                   });
}

bool FoldContributions(Aggregate aggregate, Version horizon, ColumnData* column,
                       std::list<std::string>* folded) {
  std::vector<CellData>& cells = column->cells;
  bool changed = false;
  std::vector<CellData> out;
  out.reserve(cells.size());
  for (size_t i = 0; i < cells.size();) {
    size_t j = i;
    // Cells of one timestamp, newest version first: those above the
    // horizon stay as they are; those at or below it become one.
    while (j < cells.size() && cells[j].timestamp == cells[i].timestamp &&
           cells[j].version > horizon) {
      out.push_back(cells[j++]);
    }
    size_t k = j;
    int64_t combined = 0;
    for (; k < cells.size() && cells[k].timestamp == cells[i].timestamp; ++k) {
      combined =
          k == j ? DecodeInt64(cells[k].value)
                 : Combine(aggregate, combined, DecodeInt64(cells[k].value));
    }
    if (k - j == 1) {
      out.push_back(cells[j]);
    } else if (k - j > 1) {
      folded->push_back(EncodeInt64(combined));
      out.push_back(
          CellData{cells[j].timestamp, cells[j].version, folded->back()});
      changed = true;
    }
    i = k;
  }
  cells = std::move(out);
  return changed;
}

}  // namespace btsim::cluster::internal
