// The workloads of `btsim load` (cli/load.h): closed-loop gRPC clients of
// google.bigtable.v2.Bigtable that measure throughput and per-request
// latency against any endpoint (cbtemulator, `btsim serve`, ...).
//
// Every workload runs on `threads` client threads, each with a channel (and
// so a TCP connection) of its own. A thread issues one request at a time and
// records its latency on a steady clock. Keys and values are derived from
// the seed and the request index only, so two runs with the same flags send
// the same bytes.
#ifndef BTSIM_CLI_LOAD_WORKLOADS_H_
#define BTSIM_CLI_LOAD_WORKLOADS_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <grpcpp/grpcpp.h>

#include "base/result.h"

namespace btsim::cli {

// Workload names (`--workload all` runs the readers first, on a table
// holding only the loaded rows, then the writers).
inline constexpr std::string_view kWorkloadMutateRow = "mutate_row";
inline constexpr std::string_view kWorkloadMutateRows = "mutate_rows";
inline constexpr std::string_view kWorkloadScan = "scan";
inline constexpr std::string_view kWorkloadPointRead = "point_read";
inline constexpr std::string_view kWorkloadRmwHot = "rmw_hot";
inline constexpr std::string_view kWorkloadCheckAndMutate = "check_and_mutate";
const std::vector<std::string>& WorkloadNames();

// True for the workloads that read the rows LoadRows writes.
bool NeedsLoadedRows(std::string_view workload);

// What every workload needs to know.
struct LoadConfig {
  std::string target;       // HOST:PORT
  std::string table_name;   // projects/P/instances/I/tables/T
  std::string app_profile;  // empty: the server's default profile
  // > 0: stop after this many requests (split across the threads);
  // otherwise run for `duration`.
  int64_t ops = 0;
  std::chrono::nanoseconds duration{std::chrono::seconds(5)};
  // > 0: open loop, this many requests per second over all the threads:
  // request i is due at start + i / rate (a request late for its slot is
  // sent at once, so a server slower than the rate gets a closed loop);
  // 0: closed loop.
  double rate = 0;
  int64_t rows = 0;  // rows LoadRows writes and the readers use
  // > 0: mutate_row and mutate_rows write rows among this many keys (the
  // request's row index modulo write_keys), overwriting them; 0: a new row
  // for every row written.
  int64_t write_keys = 0;
  int batch = 100;  // MutateRows entries per request
  uint64_t seed = 1;
};

// The measurement of one workload run.
struct WorkloadResult {
  std::string label;  // e.g. "mutate_rows/4t"
  std::string workload;
  int threads = 1;
  int64_t requests = 0;  // requests issued (failed ones included)
  int64_t items = 0;     // rows written or read, or requests: see unit
  std::string unit;      // "rows/s" or "ops/s"
  double seconds = 0;    // wall time of the measured phase
  double rate = 0;       // items / seconds
  double p50_us = 0;     // per-request latency percentiles
  double p99_us = 0;
  int64_t errors = 0;       // failed requests (non-OK, or wrong answers)
  std::string first_error;  // the message of the first one
};

// A 16-byte row key: `prefix` then 15 hex digits of a mix of seed and
// index. Distinct indexes give distinct keys (up to a 2^-60 collision).
std::string LoadKey(char prefix, uint64_t seed, uint64_t index);
// A 20-byte value derived from seed and index.
std::string LoadValue(uint64_t seed, uint64_t index);
// The same, written into `out` (reusing its capacity: no allocation once it
// has held one), so the driver's cost per row stays small next to the
// server's.
void AssignLoadKey(std::string* out, char prefix, uint64_t seed,
                   uint64_t index);
void AssignLoadValue(std::string* out, uint64_t seed, uint64_t index);

// Nearest-rank percentile (q in (0, 1]) of `values`, which it reorders;
// 0 when empty.
int64_t Percentile(std::vector<int64_t>& values, double q);

// A plaintext channel of its own (no subchannel sharing with other
// channels of this process), unlimited receive size. `index` distinguishes
// the channels' arguments so that each gets its own connection.
std::shared_ptr<grpc::Channel> MakeLoadChannel(const std::string& target,
                                               int index);

// Writes rows [0, config.rows) (keys LoadKey('r', seed, i), one cell
// cf:c each) with MutateRows batches on `channel`. Returns the first error.
Status LoadRows(const LoadConfig& config,
                const std::shared_ptr<grpc::Channel>& channel);

// Runs one workload on `threads` threads and measures it. Errors of
// individual requests are counted in the result; a non-OK Result means the
// workload could not start (unknown name, no connection).
Result<WorkloadResult> RunWorkload(std::string_view workload, int threads,
                                   const LoadConfig& config);

// One human-readable line, e.g.
// "mutate_rows/1t       212345 rows/s  p50 0.412 ms  p99 1.203 ms  errors 0
//  (2000 requests in 0.94 s)".
std::string FormatText(const WorkloadResult& result);
// CSV: the header, and one line per result (no trailing newline).
std::string CsvHeader();
std::string FormatCsv(const WorkloadResult& result);
// One JSON object on one line: a btsim.report.v1.LoadResult (see
// proto/btsim/report/v1/report.proto). INTERNAL if it cannot be printed.
Result<std::string> FormatJson(const WorkloadResult& result);

}  // namespace btsim::cli

#endif  // BTSIM_CLI_LOAD_WORKLOADS_H_
