// `btsim serve`: the Bigtable-compatible gRPC server on the wall clock,
// until SIGINT or SIGTERM.
//
// With a scenario (`--scenario FILE`, the format `btsim run` plays), the
// server serves the scenario's instance (clusters, app profiles and tables
// from the file) under one name, plays its timeline on the wall clock from
// the start (or from `btsim ctl start` with --wait-for-start), runs its
// simulated clients as background load, and records every data call it
// serves (scenarios/live_session.h). The run ends when the duration has
// passed, at `btsim ctl finish`, or on SIGINT/SIGTERM (a second signal
// stops waiting for replication to settle); then it judges what it
// recorded, prints the summary, writes the outputs of `btsim run --out`
// with --out, and exits as `btsim run` does: 0 every expectation holds, 1
// one fails, 2 invalid input.
#ifndef BTSIM_CLI_SERVE_H_
#define BTSIM_CLI_SERVE_H_

#include <ostream>
#include <string>
#include <vector>

#include "api/server.h"
#include "base/result.h"
#include "durable/store.h"
#include "scenarios/history_export.h"
#include "scenarios/loader.h"

namespace btsim::cli {

inline constexpr int kServeFailed = 1;
inline constexpr int kServeUsageError = 2;

struct ServeScenarioArgs {
  std::string file;               // empty: no scenario
  std::vector<std::string> sets;  // --set path=value
  std::string out_dir;
  std::vector<std::string> exports;  // --export, as for `btsim run`
  // `exports` parsed (ParseExports), by the caller of RunServe.
  std::vector<scenarios::HistoryFormat> formats;
  std::string instance = "projects/p/instances/i";
  bool wait_for_start = false;
};

// Loads args.file with its --set overrides; INVALID_ARGUMENT naming the
// file, line and field (NOT_FOUND for a missing file).
Result<scenarios::LoadedScenario> LoadServeScenario(
    const ServeScenarioArgs& args);

// `btsim serve --data-dir`: where the served state is kept, and when it
// takes snapshots (durable/store.h).
struct DataDirArgs {
  std::string dir;  // empty: in memory only
  durable::StoreOptions store;
};

// Serves until a stop signal, or plays `scenario` (null: none; its
// instance description must be options.instance) to its end; returns the
// exit code. With `metrics_port` >= 0 (0: a free port), also serves
// Prometheus metrics at http://HOST:PORT/metrics. With a `data.dir`, the
// served state is recovered from it and kept there (durable/store.h):
// exit 2 naming it when it cannot be used, 1 when its files cannot be
// loaded.
int RunServe(api::ServerOptions options, int metrics_port,
             const ServeScenarioArgs& args,
             const scenarios::LoadedScenario* scenario, std::ostream& out,
             std::ostream& err, const DataDirArgs& data = {});

}  // namespace btsim::cli

#endif  // BTSIM_CLI_SERVE_H_
