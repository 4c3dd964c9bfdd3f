// `btsim ctl`: live faults for a running `btsim serve`, through btsim's own
// control service (btsim.control.v1.Control) on the server's port:
//   btsim ctl --target HOST:PORT [--instance projects/P/instances/I] COMMAND
// with COMMAND one of
//   cluster-down ID [--blackhole] | cluster-up ID
//   partition A B [--one-way] | heal A B [--one-way]
//   latency A B DURATION [--one-way]   (DURATION 0 resets the link)
//   slow ID DURATION                   (DURATION 0 restores full speed)
//   errors ID FRACTION [--code CODE] [--method RPC]   (FRACTION 0 stops)
//   cut-clients ID [--requests-only | --replies-only] | mend-clients ID
//   stall-replication ID | resume-replication ID
//   clock-skew ID OFFSET               (e.g. -2s; 0 ends it)
//   start | finish                     (btsim serve --scenario)
//   status
#ifndef BTSIM_CLI_CTL_H_
#define BTSIM_CLI_CTL_H_

#include <ostream>
#include <string>

#include <CLI/CLI.hpp>

#include "btsim/control/v1/control.pb.h"

namespace btsim::cli {

// The parsed command line of `btsim ctl`.
struct CtlArgs {
  std::string target;     // HOST:PORT
  std::string instance;   // empty: every instance the server has
  std::string command;    // "cluster-down", "status", ...
  std::string cluster_a;  // ID, or A
  std::string cluster_b;  // B
  std::string duration;   // latency's and slow's DURATION, clock-skew's OFFSET
  bool one_way = false;
  bool blackhole = false;      // cluster-down
  double fraction = 0;         // errors
  std::string code;            // errors
  std::string method;          // errors
  bool requests_only = false;  // cut-clients
  bool replies_only = false;   // cut-clients
};

// Exit codes of `btsim ctl`.
inline constexpr int kCtlRpcError = 1;
inline constexpr int kCtlUsageError = 2;

// Adds the `ctl` subcommand and its own subcommands to `app`, filling
// `args` when parsed (`args` must outlive the parse). --target defaults to
// $BIGTABLE_EMULATOR_HOST.
CLI::App* AddCtlCommand(CLI::App& app, CtlArgs& args);

// Runs the parsed command: one RPC over a plaintext channel with a 10 s
// deadline. Prints the result on `out` and errors on `err` as
// "btsim ctl: <CODE>: <message>". Returns 0, kCtlRpcError when the RPC
// fails, or kCtlUsageError for a bad argument (e.g. a malformed DURATION).
int RunCtl(const CtlArgs& args, std::ostream& out, std::ostream& err);

// The readable table `btsim ctl status` prints: per instance its clusters
// (zone, up/down, nodes), their faults and the routing front end's view
// (admitted or ejected, and since when), their capacity (storage type, average
// and hottest node CPU as percentages clamped at 100 %), the replication links
// and the app profiles.
std::string FormatStatus(const btsim::control::v1::GetStatusResponse& status);

}  // namespace btsim::cli

#endif  // BTSIM_CLI_CTL_H_
