// `btsim run FILE [--seed N] [--out DIR] [--duration D] [--set path=value]
// [--scrape-interval D]`: plays a scenario in virtual time and prints its
// summary (the last line is "fingerprint: <hex>"). With --out DIR it also
// writes report.json and history.jsonl (scenarios::WriteOutputs),
// report.html and metrics.om: the instance's Prometheus series
// (metrics::InstanceMetrics, bigtable_instance = the scenario's name)
// sampled every scrape interval of virtual time from the run's epoch, as
// OpenMetrics text with timestamps (metrics::OpenMetricsRecorder); the
// same scenario and seed give the same bytes. Without --out nothing is
// sampled. Exit codes: 0 when every expectation holds, 1 when
// one fails, 2 for invalid input (a bad file, flag or --set), which names
// the file, the line and the field.
#ifndef BTSIM_CLI_RUN_H_
#define BTSIM_CLI_RUN_H_

#include <cstdint>
#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace btsim::cli {

inline constexpr int kRunFailed = 1;
inline constexpr int kRunInvalid = 2;

struct RunArgs {
  std::string file;
  std::optional<uint64_t> seed;
  std::string out_dir;
  std::string duration;
  std::vector<std::string> sets;
  // --export: history formats (scenarios/history_export.h) for --out.
  std::vector<std::string> exports;
  // Virtual time between two samples of metrics.om; > 0 and <= 1h.
  std::string scrape_interval = "1s";
  bool quiet = false;  // only the fingerprint line
};

CLI::App* AddRunCommand(CLI::App& app, RunArgs& args);
// Returns the exit code.
int RunRun(const RunArgs& args, std::ostream& out, std::ostream& err);

}  // namespace btsim::cli

#endif  // BTSIM_CLI_RUN_H_
