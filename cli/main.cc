// btsim: the command-line entry point. Subcommands:
//   serve   run the Bigtable-compatible gRPC server on the wall clock.
//   ctl     live faults and status of a running server (cli/ctl.h).
//   run     play a scenario in virtual time (cli/run.h).
//   check   judge a recorded run's history.jsonl again (cli/check.h).
//   sweep   run a scenario over a grid of parameters and seeds (cli/sweep.h).
//   load    drive any Bigtable endpoint with benchmark workloads (cli/load.h).
#include <cstdio>
#include <iostream>
#include <limits>
#include <optional>
#include <string>
#include <utility>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "api/server.h"
#include "cli/check.h"
#include "cli/cluster_flags.h"
#include "cli/ctl.h"
#include "cli/duration.h"
#include "cli/load.h"
#include "cli/run.h"
#include "cli/run_outputs.h"
#include "cli/serve.h"
#include "cli/sweep.h"
#include "scenarios/instance_config.h"
#include "sim/virtual_scheduler.h"

namespace {
using btsim::cli::kServeUsageError;
}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "btsim: a simulator and emulator of a replicated Cloud Bigtable "
      "instance"};
  app.require_subcommand(1);
  // Top-level --help lists every subcommand with all of its flags.
  app.set_help_flag();
  app.set_help_all_flag("-h,--help",
                        "Print help for every subcommand and exit");

  btsim::api::ServerOptions serve_options;
  std::string compaction = "5s";
  CLI::App* serve = app.add_subcommand(
      "serve",
      "Serve the Bigtable gRPC API (a drop-in for the official emulator; "
      "point clients at it with BIGTABLE_EMULATOR_HOST=HOST:PORT)");
  serve
      ->add_option("--host", serve_options.host,
                   "Address to listen on (default 127.0.0.1: loopback only)")
      ->capture_default_str();
  serve
      ->add_option("--port", serve_options.port,
                   "Port to listen on; 0 picks a free port")
      ->capture_default_str()
      ->check(CLI::Range(0, 65535));
  int metrics_port = -1;  // -1: no metrics endpoint
  serve
      ->add_option("--metrics-port", metrics_port,
                   "Also serve Prometheus metrics at "
                   "http://HOST:PORT/metrics on this port (e.g. 9464; 0 "
                   "picks a free port, logged at start); off by default")
      ->check(CLI::Range(0, 65535));
  serve
      ->add_option("--compaction-interval", compaction,
                   "How often compaction applies GC rules and removes "
                   "deleted data, e.g. 500ms, 5s, 1m; 0 disables it")
      ->capture_default_str();
  serve
      ->add_option("--seed", serve_options.seed,
                   "Seed for routing choices and row_sample filters")
      ->capture_default_str();
  std::string clusters;
  serve->add_option(
      "--clusters", clusters,
      "Serve a replicated instance: ID=ZONE[:NODES][,ID=ZONE[:NODES]...], "
      "up to 4 clusters in distinct zones, e.g. "
      "c1=us-east1-b,c2=us-east1-c,c3=europe-west1-d (default: one "
      "cluster per instance)");
  std::string replication_latency;
  serve->add_option("--replication-latency", replication_latency,
                    "A fixed one-way delay between every pair of clusters, "
                    "overriding the latency model, e.g. 3s or 200ms");
  serve
      ->add_option("--max-instances", serve_options.max_instances,
                   "Instances served at most; a call naming one more is "
                   "refused with RESOURCE_EXHAUSTED")
      ->capture_default_str()
      ->check(CLI::Range(size_t{1}, size_t{100000}));
  serve
      ->add_option("--max-request-bytes", serve_options.max_request_bytes,
                   "The largest request accepted, in bytes; a larger one is "
                   "refused with RESOURCE_EXHAUSTED")
      ->capture_default_str()
      ->check(CLI::Range(1024, std::numeric_limits<int>::max()));
  serve
      ->add_option("--max-concurrent-streams",
                   serve_options.max_concurrent_streams,
                   "Calls in flight at once on one connection (HTTP/2 "
                   "streams); a client's next call waits for one to end")
      ->capture_default_str()
      ->check(CLI::Range(1, 1000000));
  serve->add_option("--client-zone", serve_options.instance.client_zone,
                    "Zone that external clients are assumed to be in "
                    "(default: the first cluster's zone)");
  btsim::cli::DataDirArgs data_dir;
  serve->add_option(
      "--data-dir", data_dir.dir,
      "Keep the served state (tables, data, app profiles, clusters, "
      "replication positions) in the existing directory DIR: it survives a "
      "restart, and every call is answered only once what it changed is "
      "on disk (docs/durability.md). Restart with the same --config or "
      "--clusters");
  serve
      ->add_option(
          "--snapshot-journal-bytes", data_dir.store.snapshot_journal_bytes,
          "With --data-dir: take a snapshot of the served state, and start "
          "a new journal, once the journal holds more than this many bytes "
          "and more than the last snapshot (0: never)")
      ->capture_default_str();
  std::string config_path;
  serve->add_option(
      "--config", config_path,
      "Serve the instance described by FILE.textproto (a "
      "btsim.config.v1.InstanceConfig: clusters, nodes, storage type, link "
      "latencies, app profiles; see examples/three-clusters.textproto). "
      "Cannot be combined with --clusters; --replication-latency and "
      "--client-zone override the file");
  btsim::cli::ServeScenarioArgs scenario_args;
  serve->add_option(
      "--scenario", scenario_args.file,
      "Play FILE (a scenario, as for `btsim run`) against live traffic: "
      "serve its instance and tables, play its timeline on the wall clock, "
      "run its simulated clients, record every call, and at the end (its "
      "duration, `btsim ctl finish`, or SIGINT/SIGTERM) judge it, print the "
      "summary and exit 0/1/2 as `btsim run` does. Cannot be combined with "
      "--config or --clusters");
  serve->add_option("--set", scenario_args.sets,
                    "With --scenario: override a field, path=value (as for "
                    "`btsim run --set`); repeatable");
  serve->add_option("--out", scenario_args.out_dir,
                    "With --scenario: write report.json, history.jsonl, "
                    "metrics.om and report.html into DIR at the end");
  serve
      ->add_option("--instance", scenario_args.instance,
                   "With --scenario: the instance the scenario plays on, "
                   "projects/P/instances/I")
      ->capture_default_str();
  serve
      ->add_option("--export", scenario_args.exports,
                   "With --scenario and --out: also write the history in "
                   "these formats: jepsen, jepsen-edn, elle-rw-register, "
                   "elle-list-append, porcupine (comma-separated or repeated)")
      ->delimiter(',');
  serve->add_flag("--wait-for-start", scenario_args.wait_for_start,
                  "With --scenario: start the timeline and the clients at "
                  "`btsim ctl start` rather than at once");

  btsim::cli::CtlArgs ctl_args;
  CLI::App* ctl = btsim::cli::AddCtlCommand(app, ctl_args);
  btsim::cli::RunArgs run_args;
  CLI::App* run = btsim::cli::AddRunCommand(app, run_args);
  btsim::cli::CheckArgs check_args;
  CLI::App* check = btsim::cli::AddCheckCommand(app, check_args);
  btsim::cli::SweepArgs sweep_args;
  CLI::App* sweep = btsim::cli::AddSweepCommand(app, sweep_args);
  btsim::cli::LoadArgs load_args;
  CLI::App* load = btsim::cli::AddLoadCommand(app, load_args);

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    // Every subcommand documents exit code 2 for usage errors.
    if (code != 0 && ctl->parsed()) return btsim::cli::kCtlUsageError;
    if (code != 0 && run->parsed()) return btsim::cli::kRunInvalid;
    if (code != 0 && check->parsed()) return btsim::cli::kRunInvalid;
    if (code != 0 && sweep->parsed()) return btsim::cli::kSweepInvalid;
    if (code != 0 && load->parsed()) return btsim::cli::kLoadUsageError;
    if (code != 0 && serve->parsed()) return kServeUsageError;
    return code;
  }

  if (*run) return btsim::cli::RunRun(run_args, std::cout, std::cerr);
  if (*check) return btsim::cli::RunCheck(check_args, std::cout, std::cerr);
  if (*sweep) return btsim::cli::RunSweep(sweep_args, std::cout, std::cerr);
  if (*load) return btsim::cli::RunLoad(load_args, std::cout, std::cerr);

  if (*ctl) return btsim::cli::RunCtl(ctl_args, std::cout, std::cerr);
  if (*serve) {
    auto interval = btsim::cli::ParseDuration(compaction);
    if (!interval.ok()) {
      std::fprintf(stderr, "--compaction-interval: %s\n",
                   interval.status().message().c_str());
      return kServeUsageError;
    }
    serve_options.compaction_interval = *interval;
    auto exports = btsim::cli::ParseExports(scenario_args.exports);
    if (!exports.ok() ||
        (!scenario_args.exports.empty() && scenario_args.out_dir.empty())) {
      std::fprintf(stderr, "%s\n",
                   exports.ok() ? "--export needs --out"
                                : exports.status().message().c_str());
      return kServeUsageError;
    }
    scenario_args.formats = std::move(exports).value();
    std::optional<btsim::scenarios::LoadedScenario> scenario;
    if (!scenario_args.file.empty()) {
      if (!config_path.empty() || !clusters.empty()) {
        std::fprintf(stderr,
                     "--scenario cannot be combined with --config or "
                     "--clusters (the scenario describes the instance)\n");
        return kServeUsageError;
      }
      if (!data_dir.dir.empty()) {
        std::fprintf(stderr,
                     "--data-dir cannot be combined with --scenario (a "
                     "scenario's run starts from its own description)\n");
        return kServeUsageError;
      }
      auto loaded = btsim::cli::LoadServeScenario(scenario_args);
      if (!loaded.ok()) {
        std::fprintf(stderr, "btsim serve: %s\n",
                     loaded.status().message().c_str());
        return kServeUsageError;
      }
      scenario.emplace(std::move(loaded).value());
      // --client-zone on the command line wins over the file.
      std::string client_zone = serve_options.instance.client_zone;
      serve_options.instance = scenario->instance.config;
      if (!client_zone.empty()) {
        serve_options.instance.client_zone = client_zone;
      }
    } else if (!scenario_args.out_dir.empty() || !scenario_args.sets.empty() ||
               scenario_args.wait_for_start || !scenario_args.exports.empty()) {
      std::fprintf(stderr,
                   "--out, --set, --export and --wait-for-start need "
                   "--scenario\n");
      return kServeUsageError;
    }
    if (!config_path.empty()) {
      if (!clusters.empty()) {
        std::fprintf(stderr, "--config cannot be combined with --clusters\n");
        return kServeUsageError;
      }
      auto loaded = btsim::scenarios::LoadInstanceConfig(config_path);
      if (!loaded.ok()) {
        std::fprintf(stderr, "--config: %s\n",
                     loaded.status().message().c_str());
        return kServeUsageError;
      }
      // --client-zone on the command line wins over the file.
      std::string client_zone = serve_options.instance.client_zone;
      serve_options.instance = std::move(loaded->config);
      if (!client_zone.empty()) {
        serve_options.instance.client_zone = client_zone;
      }
    }
    if (!clusters.empty()) {
      auto parsed = btsim::cli::ParseClusters(clusters);
      if (!parsed.ok()) {
        std::fprintf(stderr, "%s\n", parsed.status().message().c_str());
        return kServeUsageError;
      }
      serve_options.instance.clusters = *parsed;
    }
    if (!replication_latency.empty()) {
      auto latency = btsim::cli::ParseDuration(replication_latency);
      if (!latency.ok()) {
        std::fprintf(stderr, "--replication-latency: %s\n",
                     latency.status().message().c_str());
        return kServeUsageError;
      }
      serve_options.instance.replication_latency = *latency;
      // It overrides the whole latency model of a --config file, including
      // its per-link overrides.
      if (!serve_options.instance.link_overrides.empty()) {
        spdlog::info(
            "btsim serve: --replication-latency replaces the {} link "
            "override(s) of --config",
            serve_options.instance.link_overrides.size());
        serve_options.instance.link_overrides.clear();
      }
    }
    if (!serve_options.instance.clusters.empty()) {
      // Check the configuration now rather than on the first request.
      btsim::sim::VirtualScheduler probe{btsim::sim::Time()};
      auto checked = btsim::instance::Instance::Create(
          "projects/p/instances/i", probe, btsim::sim::Rng(0),
          serve_options.instance);
      if (!checked.ok()) {
        std::fprintf(stderr, "%s: %s\n",
                     config_path.empty() ? "--clusters" : "--config",
                     checked.status().message().c_str());
        return kServeUsageError;
      }
    }
    return btsim::cli::RunServe(serve_options, metrics_port, scenario_args,
                                scenario ? &*scenario : nullptr, std::cout,
                                std::cerr, data_dir);
  }
  return 0;
}
