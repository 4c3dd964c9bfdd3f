// RequestReport: one request as its server saw it, passed to the
// instance's observers (Instance::ReportRequest). Every server fills the
// summary; a server that records calls (`btsim serve --scenario`) also says
// who sent the request, when, and what it did to each row.
//
// Plain data. Views (and spans) are valid during the report only.
#ifndef BTSIM_INSTANCE_REQUEST_REPORT_H_
#define BTSIM_INSTANCE_REQUEST_REPORT_H_

#include <cstdint>
#include <span>
#include <string_view>

#include "base/status.h"
#include "cluster/cell_view.h"
#include "cluster/mutation.h"
#include "sim/time.h"

namespace btsim::instance {

// What one request did to one row, in Bigtable's terms.
struct RowOutcome {
  std::string_view key;
  // The mutations it asked for (MutateRow, one MutateRows entry, the
  // branch of CheckAndMutateRow that ran; empty for reads).
  std::span<const cluster::Mutation> mutations;
  // The row as the reply carried it: a ReadRows of this one key (no cells:
  // the row was absent or filtered out), or the cells ReadModifyWriteRow
  // wrote.
  std::span<const cluster::CellView> cells;
  // The row's outcome: a MutateRows entry has its own.
  StatusCode code = StatusCode::kOk;
  std::string_view message;
  // Where the change committed: the serving cluster's commit version and
  // its replication log position after it. 0: nothing committed.
  uint64_t version = 0;
  uint64_t log_position = 0;
};

struct RequestReport {
  std::string_view cluster;      // the serving cluster; "" if none was chosen
  std::string_view app_profile;  // as requested ("" means "default")
  std::string_view method;       // the RPC, e.g. "MutateRows", "ReadRows"
  StatusCode code = StatusCode::kOk;
  std::string_view message;  // the error, if any (recorded calls only)
  sim::Duration latency{0};  // server-side, from arrival to the reply
  int64_t modified_rows = 0;
  int64_t returned_rows = 0;
  // Routing refused the request: a transaction through a profile without
  // single-row transactions (FAILED_PRECONDITION).
  bool refused = false;

  // Recorded calls only (`recorded` true): who sent it (the caller's
  // x-btsim-client header, else its gRPC peer), the table (its id), the
  // kind of read (a ReadRows of exactly one row key is a point read, with
  // or without a filter), and what it did to each row it named (a scan
  // names none).
  bool recorded = false;
  std::string_view client;
  std::string_view table;
  bool point_read = false;
  bool filtered = false;  // ReadRows with a filter
  std::span<const RowOutcome> rows;
};

}  // namespace btsim::instance

#endif  // BTSIM_INSTANCE_REQUEST_REPORT_H_
