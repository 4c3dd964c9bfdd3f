// `btsim load --target HOST:PORT [--workload NAME|all] [--duration D | --ops N]
//             [--threads N] [--rows N] [--write-keys N] [--batch N]
//             [--seed N]
//             [--project P --instance I --table T] [--app-profile ID]
//             [--keep-table] [--skip-load] [--json | --csv]`
// A load driver for any Bigtable endpoint (cbtemulator, `btsim serve`):
// plaintext gRPC to google.bigtable.v2.Bigtable and the table admin
// service. It creates the table (family cf) if missing, loads --rows rows
// for the read workloads, runs the workloads (cli/load_workloads.h) one
// after another, prints one line per workload, and deletes the table at the
// end unless --keep-table.
//
// Workloads: mutate_row, mutate_rows (100 entries a request; `all` runs it
// with 1 and with 4 threads unless --threads is given), scan (full-table
// ReadRows), point_read, rmw_hot (ReadModifyWriteRow on one row),
// check_and_mutate. --ops counts requests per workload (a MutateRows batch
// or a whole scan is one request).
//
// Exit codes: 0 when every request succeeded, 1 when any failed (the first
// message of each failing workload goes to `err`) or the server cannot be
// reached, 2 for a usage error, which names the flag.
#ifndef BTSIM_CLI_LOAD_H_
#define BTSIM_CLI_LOAD_H_

#include <cstdint>
#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

namespace btsim::cli {

inline constexpr int kLoadFailed = 1;
inline constexpr int kLoadUsageError = 2;

// The parsed command line of `btsim load`.
struct LoadArgs {
  std::string target;  // HOST:PORT
  std::string workload = "all";
  std::string duration;  // empty: 5s unless ops > 0
  int64_t ops = 0;
  double rate = 0;  // requests per second in all; 0: closed loop
  int threads = 0;  // 0: each workload's default
  int64_t rows = 100'000;
  int64_t write_keys = 0;
  int batch = 100;
  uint64_t seed = 1;
  std::string project = "p";
  std::string instance = "i";
  std::string table = "load";
  std::string app_profile;
  bool keep_table = false;
  bool skip_load = false;
  bool json = false;
  bool csv = false;
};

// Adds the `load` subcommand to `app`, filling `args` when parsed (`args`
// must outlive the parse). --target defaults to $BIGTABLE_EMULATOR_HOST;
// an unknown --workload is a parse error naming the flag.
CLI::App* AddLoadCommand(CLI::App& app, LoadArgs& args);

// Runs the parsed command; results on `out`, diagnostics on `err`.
int RunLoad(const LoadArgs& args, std::ostream& out, std::ostream& err);

}  // namespace btsim::cli

#endif  // BTSIM_CLI_LOAD_H_
