#include "cli/serve.h"

#include <pthread.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <memory>
#include <mutex>
#include <thread>
#include <utility>

#include <spdlog/spdlog.h>

#include "api/control_service.h"
#include "api/instance_registry.h"
#include "cli/run_outputs.h"
#include "cli/serve_metrics.h"
#include "durable/store.h"
#include "scenarios/live_session.h"
#include "scenarios/report.h"
#include "scenarios/scenario_fields.h"

namespace btsim::cli {

namespace {

using std::chrono::milliseconds;

constexpr milliseconds kPollInterval(100);
constexpr std::chrono::seconds kScrapeInterval(1);
constexpr std::chrono::minutes kDefaultSettle(10);

// Stop signals (SIGINT, SIGTERM), blocked in every thread and counted by
// one waiter thread; `btsim ctl finish` counts as one.
class Stops : public api::ScenarioControl {
 public:
  Stops() {
    sigemptyset(&signals_);
    sigaddset(&signals_, SIGINT);
    sigaddset(&signals_, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &signals_, nullptr);
  }
  ~Stops() override { Unwatch(); }
  // Stops the waiter (before what its callback uses goes). Idempotent.
  void Unwatch() {
    if (waiter_.joinable()) {
      done_ = true;
      pthread_kill(waiter_.native_handle(), SIGTERM);
      waiter_.join();
    }
  }
  // Starts waiting for signals; `on_signal` runs on the waiter's thread.
  void Watch(std::function<void(int)> on_signal) {
    waiter_ = std::thread([this, on_signal = std::move(on_signal)] {
      while (true) {
        int sig = 0;
        sigwait(&signals_, &sig);
        if (done_) return;
        Add();
        if (on_signal) on_signal(sig);
      }
    });
  }
  // How many stops so far; waits up to `timeout` for the count to exceed
  // `seen`.
  int WaitBeyond(int seen, milliseconds timeout) {
    std::unique_lock<std::mutex> lock(mu_);
    cv_.wait_for(lock, timeout, [&] { return count_ > seen; });
    return count_;
  }

  // ScenarioControl.
  Status Start() override {
    std::lock_guard<std::mutex> lock(mu_);
    if (!start_) return FailedPrecondition("the scenario is not ready yet");
    return start_();
  }
  Status Finish() override {
    Add();
    return OkStatus();
  }
  void set_start(std::function<Status()> start) {
    std::lock_guard<std::mutex> lock(mu_);
    start_ = std::move(start);
  }

 private:
  void Add() {
    std::lock_guard<std::mutex> lock(mu_);
    ++count_;
    cv_.notify_all();
  }

  sigset_t signals_;
  std::thread waiter_;
  std::atomic<bool> done_{false};
  std::mutex mu_;
  std::condition_variable cv_;
  int count_ = 0;
  std::function<Status()> start_;
};

// Plays `scenario` on the server's instance args.instance until its end;
// returns the exit code.
int PlayScenario(api::Server& server, Stops& stops,
                 const ServeScenarioArgs& args,
                 const scenarios::LoadedScenario& scenario, std::ostream& out,
                 std::ostream& err) {
  auto served = server.registry().GetOrCreate(args.instance);
  if (!served.ok()) {
    err << "btsim serve: --instance: " << served.status().message() << "\n";
    return kServeUsageError;
  }
  api::ServedInstance& instance = **served;
  std::unique_ptr<scenarios::LiveSession> session;
  RunMetrics metrics(scenario.name);
  const auto started = std::chrono::steady_clock::now();
  {
    std::lock_guard<std::mutex> lock(instance.mu);
    auto created = scenarios::LiveSession::Create(scenario, *instance.instance,
                                                  instance.scheduler);
    if (!created.ok()) {
      err << "btsim serve: " << scenario.path << ": "
          << created.status().message() << "\n";
      return kServeUsageError;
    }
    session = std::move(created).value();
    instance.instance->AddObserver(&metrics.instance);
    if (!args.wait_for_start) session->Start();
  }
  stops.set_start([&]() -> Status {
    std::lock_guard<std::mutex> lock(instance.mu);
    if (session->started()) {
      return FailedPrecondition("the scenario has already started");
    }
    session->Start();
    spdlog::info("btsim serve: scenario '{}' started", scenario.name);
    return OkStatus();
  });
  spdlog::info(
      "btsim serve: scenario '{}' on instance {} ({}); {}", scenario.name,
      args.instance, scenario.path,
      args.wait_for_start ? "waiting for `btsim ctl start`" : "started");

  // metrics.om: a sample every second until the end of settling. Call
  // under the instance's lock.
  auto next_scrape = std::chrono::steady_clock::now();
  auto sample_when_due = [&] {
    if (std::chrono::steady_clock::now() >= next_scrape) {
      metrics.Sample(instance.instance->Now(), *instance.instance);
      next_scrape += kScrapeInterval;
    }
  };

  // The client phase: until the duration has passed or a stop.
  int stops_seen = 0;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(instance.mu);
      sample_when_due();
      if (session->DurationOver()) {
        spdlog::info("btsim serve: the scenario's duration has passed");
        break;
      }
    }
    if (const int now = stops.WaitBeyond(stops_seen, kPollInterval);
        now > stops_seen) {
      stops_seen = now;
      spdlog::info("btsim serve: ending the scenario early");
      break;
    }
  }
  stops.set_start(nullptr);
  const milliseconds settle_limit =
      scenario.proto.settle().has_max()
          ? std::chrono::duration_cast<milliseconds>(
                scenarios::ToDuration(scenario.proto.settle().max()))
          : milliseconds(kDefaultSettle);
  {
    std::lock_guard<std::mutex> lock(instance.mu);
    session->EndClientPhase();
    instance.settling = true;
  }
  spdlog::info(
      "btsim serve: the client phase is over: recording stopped; calls are "
      "refused while replication settles");
  // Settling: replication drains (another stop gives up).
  const auto settle_end = std::chrono::steady_clock::now() + settle_limit;
  while (true) {
    {
      std::lock_guard<std::mutex> lock(instance.mu);
      sample_when_due();
      if (session->Settled()) break;
    }
    if (std::chrono::steady_clock::now() >= settle_end) {
      spdlog::warn("btsim serve: replication did not settle in time");
      break;
    }
    if (stops.WaitBeyond(stops_seen, kPollInterval) > stops_seen) {
      spdlog::warn("btsim serve: stopped waiting for replication to settle");
      break;
    }
  }
  {
    std::lock_guard<std::mutex> lock(instance.mu);
    metrics.Sample(instance.instance->Now(), *instance.instance);
  }
  // The server stops before the session finishes: no task of the session
  // (a step's polling, a simulated client) runs once its history is taken,
  // and no call waits while the checks run.
  server.Shutdown();
  scenarios::RunOutcome outcome;
  {
    std::lock_guard<std::mutex> lock(instance.mu);
    outcome = session->Finish();
  }
  outcome.wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - started)
          .count();
  scenarios::PrintSummary(scenario, outcome, out);
  int code = outcome.passed ? 0 : kServeFailed;
  if (!args.out_dir.empty()) {
    Status s = WriteRunOutputs(scenario, outcome, &metrics, args.out_dir,
                               args.formats);
    if (!s.ok()) {
      err << "btsim serve: " << s.message() << "\n";
      code = kServeUsageError;
    }
  }
  {
    std::lock_guard<std::mutex> lock(instance.mu);
    instance.instance->RemoveObserver(&metrics.instance);
    session.reset();
  }
  return code;
}

}  // namespace

Result<scenarios::LoadedScenario> LoadServeScenario(
    const ServeScenarioArgs& args) {
  std::vector<scenarios::Override> overrides;
  for (const std::string& text : args.sets) {
    BTSIM_ASSIGN_OR_RETURN(scenarios::Override parsed,
                           scenarios::ParseOverride(text));
    overrides.push_back(std::move(parsed));
  }
  return scenarios::LoadScenario(args.file, overrides,
                                 scenarios::ScenarioUse::kServe);
}

// The served instances, each under its lock, for the store's recovery.
class RegistryAccess : public durable::InstanceAccess {
 public:
  explicit RegistryAccess(api::InstanceRegistry& registry)
      : registry_(registry) {}
  Status With(const std::string& name,
              const std::function<Status(instance::Instance&)>& fn) override {
    BTSIM_ASSIGN_OR_RETURN(api::InstanceRegistry::Locked locked,
                           registry_.Lock(name));
    return fn(*locked.instance);
  }
  Status WithAll(
      const std::function<Status(const std::vector<instance::Instance*>&)>& fn)
      override {
    std::vector<api::ServedInstance*> served = registry_.All();  // by name
    std::vector<std::unique_lock<std::mutex>> locks;
    std::vector<instance::Instance*> instances;
    for (api::ServedInstance* s : served) {
      locks.emplace_back(s->mu);
      instances.push_back(s->instance.get());
    }
    return fn(instances);
  }

 private:
  api::InstanceRegistry& registry_;
};

int RunServe(api::ServerOptions options, int metrics_port,
             const ServeScenarioArgs& args,
             const scenarios::LoadedScenario* scenario, std::ostream& out,
             std::ostream& err, const DataDirArgs& data) {
  const std::string& data_dir = data.dir;
  // Declared before the server, which keeps pointers to its journals.
  std::unique_ptr<durable::Store> store;
  if (!data_dir.empty()) {
    durable::StoreOptions store_options = data.store;
    store_options.on_snapshot = [data_dir](
                                    const durable::SnapshotReport& report) {
      spdlog::info(
          "btsim serve: --data-dir {}: snapshot {} written ({} bytes, {} "
          "instance(s)); calls waited {} ms",
          data_dir, report.generation, report.bytes, report.instances,
          std::chrono::duration_cast<std::chrono::milliseconds>(report.paused)
              .count());
    };
    auto opened = durable::Store::Open(data_dir, store_options);
    if (!opened.ok()) {
      err << "btsim serve: " << opened.status().message() << "\n";
      return kServeUsageError;
    }
    store = std::move(opened).value();
  }
  Stops stops;
  if (scenario != nullptr) options.scenario = &stops;
  // Declared before the server: the instances keep pointers to its
  // observers. Stopped before the server goes: scrapes read its registry.
  LiveMetrics live_metrics;
  if (metrics_port >= 0) {
    options.on_instance_created =
        [&live_metrics](instance::Instance& instance) {
          live_metrics.OnInstanceCreated(instance);
        };
  }
  if (store != nullptr) {
    durable::Store* journal = store.get();
    options.before_reply = [journal](std::function<void()> release) {
      journal->AfterSync(std::move(release));
    };
    options.on_instance_created =
        [journal, previous = std::move(options.on_instance_created)](
            instance::Instance& instance) {
          if (previous) previous(instance);
          journal->OnInstanceCreated(instance);
        };
  }
  api::Server server(options);
  RegistryAccess access(server.registry());
  // Snapshots stop before `access` and the server go (declared after them).
  struct StopSnapshots {
    durable::Store* store;
    ~StopSnapshots() {
      if (store != nullptr) store->StopSnapshots();
    }
  } stop_snapshots{store.get()};
  if (store != nullptr) {
    auto recovered = store->Recover(access);
    if (!recovered.ok()) {
      err << "btsim serve: --data-dir " << data_dir << ": "
          << recovered.status().message() << "\n";
      return kServeFailed;
    }
    // New commits order after every persisted one.
    server.AdvanceClockTo(recovered->high_water + std::chrono::microseconds(1));
    spdlog::info(
        "btsim serve: --data-dir {}: {}replayed {} records of {} "
        "instance(s){}",
        data_dir,
        recovered->generation == 0
            ? std::string()
            : "loaded snapshot " + std::to_string(recovered->generation) +
                  " (" + std::to_string(recovered->snapshot_records) +
                  " records), ",
        recovered->records, recovered->instances,
        recovered->torn_tail ? " (dropped a torn final record at offset " +
                                   std::to_string(recovered->torn_offset) + ")"
                             : std::string());
  }
  if (metrics_port >= 0) {
    auto bound =
        live_metrics.Start(options.host, metrics_port, server.registry());
    if (!bound.ok()) {
      spdlog::error("btsim serve: --metrics-port: {}",
                    bound.status().message());
      return 1;
    }
    spdlog::info("btsim serve: metrics on http://{}:{}/metrics", options.host,
                 *bound);
  }
  auto port = server.Start();
  if (!port.ok()) {
    spdlog::error("btsim serve: {}", port.status().message());
    live_metrics.Stop();
    return 1;
  }
  std::string clusters;
  for (const auto& c : options.instance.clusters) {
    clusters += (clusters.empty() ? "" : ",") + c.id + "=" + c.zone;
  }
  spdlog::info(
      "btsim serve: listening on {}:{} (compaction every {} ms, clusters: {})",
      options.host, *port, options.compaction_interval.count(),
      clusters.empty() ? "one per instance" : clusters);
  int code = 0;
  if (scenario != nullptr) {
    stops.Watch([](int sig) {
      spdlog::info("btsim serve: received {}",
                   sig == SIGINT ? "SIGINT" : "SIGTERM");
    });
    code = PlayScenario(server, stops, args, *scenario, out, err);
  } else {
    stops.Watch([&server](int sig) {
      spdlog::info("btsim serve: received {}, shutting down",
                   sig == SIGINT ? "SIGINT" : "SIGTERM");
      server.Shutdown();
    });
    server.Wait();
  }
  stops.Unwatch();
  live_metrics.Stop();
  spdlog::info("btsim serve: stopped");
  return code;
}

}  // namespace btsim::cli
