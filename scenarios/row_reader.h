// Reading what simulated clients wrote: the newest value cell and the
// counter of each row (see history.h for the columns). Shared by the
// simulated reads, the consistency-token check and the final snapshot
// (ReadFinalState).
#ifndef BTSIM_SCENARIOS_ROW_READER_H_
#define BTSIM_SCENARIOS_ROW_READER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <span>
#include <string>
#include <string_view>

#include "base/status.h"
#include "cluster/cell_view.h"
#include "cluster/cluster.h"
#include "replication/replicas.h"
#include "scenarios/history.h"
#include "sim/fingerprint.h"

namespace btsim::scenarios {

// What a read finds of one row: the newest value cell's tag ("" when there
// is none; a view of the cell, valid as long as the cells read) and
// timestamp, and the counter (0 when absent).
struct RowRead {
  std::string_view tag;
  cluster::Timestamp timestamp;
  int64_t counter = 0;
};

// Calls `visit` with the key and state of each row of `table` on `cluster`
// that `rows` selects (every row when null): the tag, timestamp and counter
// of `family`, valid during the call. `visit` returns false to stop.
Status ReadRowStates(
    cluster::Cluster& cluster, std::string_view table, std::string_view family,
    const cluster::RowSet* rows,
    const std::function<bool(std::string_view, const RowRead&)>& visit);

// The state of one row from all its live cells in canonical order (as an
// unfiltered read returns them): the tag and timestamp of the newest cell
// of family:kValueColumn and the counter of the newest cell of
// family:kCounterColumn (what a read with CellsPerColumnLimit(1) sees).
RowRead RowStateOf(std::string_view family,
                   std::span<const cluster::CellView> cells);

// Appends to history->final_state each cluster's id, digest (a hash of its
// whole contents, Cluster::AddContents) and row states, in the Replicas'
// order: for each table of `family_of` (table id -> the family clients
// write), every row's RowRead, with the Name and commit version of the
// operation that wrote its tag (texts in history->names). A cluster that
// holds what an earlier one holds (Cluster::SameContents, else equal
// digests) refers to it (ClusterState::same_as) instead of keeping rows of
// its own. Adds each cluster's id and digest to `fingerprint`. Requires
// history->final_state to be empty.
void ReadFinalState(replication::Replicas& replicas,
                    const std::map<std::string, std::string>& family_of,
                    History* history, sim::Fingerprint* fingerprint);

// An 8-byte big-endian counter; 0 for a value of another size.
int64_t DecodeCounter(std::string_view value);

}  // namespace btsim::scenarios

#endif  // BTSIM_SCENARIOS_ROW_READER_H_
