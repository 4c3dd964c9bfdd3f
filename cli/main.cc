// btsim: the command-line entry point. Subcommands:
//   serve   run the Bigtable-compatible gRPC server on the wall clock.
#include <csignal>
#include <cstdio>
#include <string>
#include <thread>

#include <spdlog/spdlog.h>
#include <CLI/CLI.hpp>

#include "api/server.h"
#include "cli/duration.h"

namespace {

int RunServe(const btsim::api::ServerOptions& options) {
  // Block the stop signals in every thread; one thread waits for them.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  btsim::api::Server server(options);
  auto port = server.Start();
  if (!port.ok()) {
    spdlog::error("btsim serve: {}", port.status().message());
    return 1;
  }
  spdlog::info("btsim serve: listening on {}:{} (compaction every {} ms)",
               options.host, *port, options.compaction_interval.count());
  std::thread waiter([&server, signals] {
    int sig = 0;
    sigwait(&signals, &sig);
    spdlog::info("btsim serve: received {}, shutting down",
                 sig == SIGINT ? "SIGINT" : "SIGTERM");
    server.Shutdown();
  });
  server.Wait();
  // Wake the waiter if shutdown came from elsewhere.
  pthread_kill(waiter.native_handle(), SIGTERM);
  waiter.join();
  spdlog::info("btsim serve: stopped");
  return 0;
}

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
  serve
      ->add_option("--compaction-interval", compaction,
                   "How often compaction applies GC rules and removes "
                   "deleted data, e.g. 500ms, 5s, 1m; 0 disables it")
      ->capture_default_str();
  serve
      ->add_option("--seed", serve_options.seed,
                   "Seed for the random choices of row_sample filters")
      ->capture_default_str();

  CLI11_PARSE(app, argc, argv);

  if (*serve) {
    auto interval = btsim::cli::ParseDuration(compaction);
    if (!interval.ok()) {
      std::fprintf(stderr, "--compaction-interval: %s\n",
                   interval.status().message().c_str());
      return 2;
    }
    serve_options.compaction_interval = *interval;
    return RunServe(serve_options);
  }
  return 0;
}
