// CellView: a read-only view of one cell as the read path and filters see it.
// The views point into storage and into the Filter that labelled the cell;
// they are valid only while the table is not modified and the filter lives.
#ifndef BTSIM_CLUSTER_CELL_VIEW_H_
#define BTSIM_CLUSTER_CELL_VIEW_H_

#include <string>
#include <string_view>

#include "cluster/timestamp.h"

namespace btsim::cluster {

struct CellView {
  std::string_view family;
  std::string_view qualifier;
  Timestamp timestamp;
  std::string_view value;
  const std::string* label = nullptr;  // set by apply_label; never owned
};

// Canonical order of cells in a row: family name ascending, then qualifier
// ascending (unsigned bytes), then timestamp descending.
inline bool CanonicalLess(const CellView& a, const CellView& b) {
  if (int c = a.family.compare(b.family); c != 0) return c < 0;
  if (int c = a.qualifier.compare(b.qualifier); c != 0) return c < 0;
  return a.timestamp > b.timestamp;
}

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_CELL_VIEW_H_
