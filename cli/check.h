// `btsim check HISTORY.jsonl [--scenario FILE] [--out DIR] [--export F]`:
// judges a recorded run again, offline. HISTORY.jsonl is the history.jsonl
// that `btsim run --out` or `btsim serve --scenario --out` wrote
// (scenarios/history_file.h): it carries the scenario as played, every
// operation and event, and each cluster's final state. The checks and the
// expectations run on it as they ran at the end of the run, so the summary
// and report.json are those of the run (the fingerprint is the recorded
// one).
//
// --scenario FILE judges against FILE's expectations instead (and names the
// report after it): e.g. a stricter error budget on yesterday's session.
// It is loaded as the recorded run was (for `serve` when the history is a
// live session's).
//
// --out DIR writes report.json, history.jsonl, report.html and the
// --export formats; not metrics.om, which samples the instance itself and
// is not in the history. Exit codes as `btsim run`: 0 every expectation
// holds, 1 one fails (or replication did not settle), 2 invalid input
// (naming the file, line and field).
#ifndef BTSIM_CLI_CHECK_H_
#define BTSIM_CLI_CHECK_H_

#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace btsim::cli {

struct CheckArgs {
  std::string history;
  std::string scenario;  // empty: the one recorded in the history
  std::string out_dir;
  std::vector<std::string> exports;
  bool quiet = false;  // only the fingerprint line
};

CLI::App* AddCheckCommand(CLI::App& app, CheckArgs& args);
// Returns the exit code.
int RunCheck(const CheckArgs& args, std::ostream& out, std::ostream& err);

}  // namespace btsim::cli

#endif  // BTSIM_CLI_CHECK_H_
