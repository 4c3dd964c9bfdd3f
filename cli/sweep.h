// `btsim sweep`: runs a scenario over a grid of parameters and seeds in
// local child processes, and tabulates the results.
//
//   btsim sweep FILE --seeds A..B [--vary path=v1,v2,...]... [--set p=v]...
//               [--duration D] [--jobs N] [--shard K/N] --out DIR
//   btsim sweep --merge DIR... --out DIR
//
// The grid is the cartesian product of the --vary values (each applied as a
// `--set path=value` override, after the plain --set ones) times the seeds;
// runs are numbered grid point major, seed minor (cli/sweep_table.h). Before
// anything runs, the scenario is loaded and its instance built once per
// grid point; any error exits 2 naming the file, line and field.
//
// With --shard K/N only the runs whose index % N == K run, so a batch system
// can spread one sweep over machines; `--merge` then combines the shards'
// results.csv files (identical headers required; a run present twice must
// be identical). A shard writes DIR/shard.txt (cli/sweep_table.h) once all
// its runs completed, and removes it when it starts; given shards with
// records, `--merge` accepts only every shard of one sweep, each finished.
//
// Writes DIR/results.csv (one row per run, by run index) and
// DIR/summary.csv, and prints the summary table. Exit codes: 0 when every
// run passed, 1 when an expectation failed in some run, 2 for invalid input
// or when a run could not complete (a crashed child: the other rows are
// still written).
#ifndef BTSIM_CLI_SWEEP_H_
#define BTSIM_CLI_SWEEP_H_

#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace btsim::cli {

inline constexpr int kSweepFailed = 1;
inline constexpr int kSweepInvalid = 2;

struct SweepArgs {
  std::string file;
  std::string seeds;
  std::vector<std::string> varies;
  std::vector<std::string> sets;
  std::string duration;
  int jobs = 0;  // 0: one per CPU
  std::string shard;
  std::vector<std::string> merge;  // directories holding results.csv
  std::string out_dir;
};

CLI::App* AddSweepCommand(CLI::App& app, SweepArgs& args);
// Forks children: the calling process must be single-threaded.
int RunSweep(const SweepArgs& args, std::ostream& out, std::ostream& err);

}  // namespace btsim::cli

#endif  // BTSIM_CLI_SWEEP_H_
