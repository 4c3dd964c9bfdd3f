#include "cli/run.h"

#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>

#include <prometheus/registry.h>

#include "cli/duration.h"
#include "cli/run_outputs.h"
#include "metrics/instance_metrics.h"
#include "metrics/openmetrics.h"
#include "metrics/report_html.h"
#include "scenarios/loader.h"
#include "scenarios/report.h"
#include "scenarios/runner.h"

namespace btsim::cli {
namespace {

constexpr std::chrono::milliseconds kMaxScrapeInterval = std::chrono::hours(1);

}  // namespace

CLI::App* AddRunCommand(CLI::App& app, RunArgs& args) {
  CLI::App* run = app.add_subcommand(
      "run",
      "Play a scenario file in virtual time, deterministically, and report "
      "what happened and whether its expectations held (exit 0: all held, "
      "1: one failed, 2: invalid input)");
  run->add_option("file", args.file,
                  "The scenario (btsim.scenario.v1.Scenario in text format; "
                  "see scenarios/examples/)")
      ->required();
  run->add_option("--seed", args.seed,
                  "Seed of every random choice (default: the file's seed)");
  run->add_option("--out", args.out_dir,
                  "Write report.json, history.jsonl, metrics.om (the "
                  "Prometheus series in virtual time, OpenMetrics) and "
                  "report.html into this directory");
  run->add_option("--duration", args.duration,
                  "Override the scenario's duration, e.g. 30s, 5m");
  run->add_option("--set", args.sets,
                  "Override one scalar field, e.g. "
                  "--set clients[0].workload.ops_per_second=500 (repeatable)");
  run->add_option("--scrape-interval", args.scrape_interval,
                  "With --out: virtual time between two samples of "
                  "metrics.om, e.g. 1s (the default), 250ms, 1m; at most 1h");
  run->add_option(
         "--export", args.exports,
         "With --out: also write the history in these formats: "
         "jepsen, jepsen-edn, elle-rw-register, elle-list-append, porcupine "
         "(comma-separated or repeated; docs/history-formats.md)")
      ->delimiter(',');
  run->add_flag("--quiet", args.quiet, "Print only the fingerprint line");
  return run;
}

int RunRun(const RunArgs& args, std::ostream& out, std::ostream& err) {
  std::vector<scenarios::Override> overrides;
  for (const std::string& text : args.sets) {
    auto parsed = scenarios::ParseOverride(text);
    if (!parsed.ok()) {
      err << "btsim run: " << parsed.status().message() << "\n";
      return kRunInvalid;
    }
    overrides.push_back(*parsed);
  }
  scenarios::RunOptions options;
  options.seed = args.seed;
  // Times the checks for the summary's run / checks split (nothing else).
  options.wall_clock = [] {
    return std::chrono::duration<double>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  };
  if (!args.duration.empty()) {
    auto duration = ParseDuration(args.duration);
    if (!duration.ok() || duration->count() <= 0) {
      err << "btsim run: --duration: "
          << (duration.ok() ? std::string("must be positive")
                            : duration.status().message())
          << "\n";
      return kRunInvalid;
    }
    options.duration = *duration;
  }
  sim::Duration scrape_interval{0};
  {
    auto interval = ParseDuration(args.scrape_interval);
    if (!interval.ok() || interval->count() <= 0 ||
        *interval > kMaxScrapeInterval) {
      err << "btsim run: --scrape-interval: "
          << (!interval.ok()           ? interval.status().message()
              : interval->count() <= 0 ? std::string("must be positive")
                                       : std::string("must be at most 1h"))
          << "\n";
      return kRunInvalid;
    }
    scrape_interval = *interval;
  }
  auto exports = ParseExports(args.exports);
  if (!exports.ok() || (!args.exports.empty() && args.out_dir.empty())) {
    err << "btsim run: "
        << (exports.ok() ? std::string("--export needs --out")
                         : exports.status().message())
        << "\n";
    return kRunInvalid;
  }
  auto loaded = scenarios::LoadScenario(args.file, overrides);
  if (!loaded.ok()) {
    err << "btsim run: " << loaded.status().message() << "\n";
    return kRunInvalid;
  }
  // The runner names the instance after the scenario.
  std::unique_ptr<RunMetrics> run_metrics;
  if (!args.out_dir.empty()) {
    run_metrics = std::make_unique<RunMetrics>(loaded->name);
    options.observers.push_back(&run_metrics->instance);
    options.sample_every = scrape_interval;
    options.on_sample = [m = run_metrics.get()](sim::Time now,
                                                instance::Instance& instance) {
      m->Sample(now, instance);
    };
  }
  // The only wall clock of a run: how long it took, for the summary.
  const auto started = std::chrono::steady_clock::now();
  auto outcome = scenarios::RunScenario(*loaded, options);
  if (!outcome.ok()) {
    err << "btsim run: " << args.file << ": " << outcome.status().message()
        << "\n";
    return kRunInvalid;
  }
  outcome->wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  if (args.quiet) {
    out << "fingerprint: " << outcome->fingerprint << "\n";
  } else {
    scenarios::PrintSummary(*loaded, *outcome, out);
  }
  if (!args.out_dir.empty()) {
    Status s = WriteRunOutputs(*loaded, *outcome, run_metrics.get(), args.out_dir,
                               *exports);
    if (!s.ok()) {
      err << "btsim run: " << s.message() << "\n";
      return kRunInvalid;
    }
  }
  return outcome->passed ? 0 : kRunFailed;
}

}  // namespace btsim::cli
