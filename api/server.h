// Server: the gRPC server behind `btsim serve`. Serves the Bigtable data and
// table admin services over one InstanceRegistry, on the wall clock, and runs
// compaction (GC rules, tombstone removal) every `compaction_interval` on a
// background thread. Every method it does not implement answers
// UNIMPLEMENTED. Thread-safe.
#ifndef BTSIM_API_SERVER_H_
#define BTSIM_API_SERVER_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "api/instance_registry.h"
#include "base/result.h"
#include "instance/instance.h"
#include "sim/time.h"

namespace btsim::api {

class ScenarioControl;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8086;                                      // 0 picks a free port
  std::chrono::milliseconds compaction_interval{5000};  // 0 disables it
  uint64_t seed = 1;  // seeds routing choices and row_sample filters
  // The configuration of every instance clients name. No clusters: one
  // cluster "<instance id>-c1", as the official emulator has.
  instance::InstanceConfig instance;
  // Called for every instance when it is created (see InstanceRegistry):
  // e.g. to attach metrics observers. Optional.
  std::function<void(instance::Instance&)> on_instance_created;
  // Instances created at most; a call naming one more is refused with
  // RESOURCE_EXHAUSTED.
  size_t max_instances = InstanceRegistry::kDefaultMaxInstances;
  // The largest request accepted, in bytes: gRPC refuses a larger one with
  // RESOURCE_EXHAUSTED before btsim parses it. The default leaves the
  // engine to enforce Bigtable's 256 MiB row limit with its own error.
  int max_request_bytes = 512 << 20;
  // Calls in flight at once on one connection (HTTP/2 streams); a client
  // opening more waits for one to end.
  int max_concurrent_streams = 1000;
  // `btsim serve --scenario`: what the Control service's StartScenario and
  // FinishScenario do (null: they answer FAILED_PRECONDITION). Must
  // outlive the server.
  ScenarioControl* scenario = nullptr;
  // Called before every response message and every final status goes
  // out, with `release`, which lets it go: at once, or later from another
  // thread (exactly once). `btsim serve --data-dir` releases it once what
  // was journaled is on disk, so no call is answered before the changes
  // it made or saw are durable, and no gRPC thread waits meanwhile.
  // Empty: none.
  std::function<void(std::function<void()> release)> before_reply;
};

class Server {
 public:
  explicit Server(ServerOptions options);
  ~Server();  // Shuts down.

  // Binds and starts serving. Returns the bound port, or UNAVAILABLE when
  // the address cannot be bound.
  Result<int> Start();
  // Stops accepting calls, cancels in-flight ones after a short grace
  // period, and stops compaction. Idempotent.
  void Shutdown();
  // Blocks until Shutdown has completed.
  void Wait();

  // A channel to this server that skips the network (for tests).
  std::shared_ptr<grpc::Channel> InProcessChannel();

  // The server's clock never reads less than `floor` from now on (after a
  // restart from persisted state: see sim::WallClock::AdvanceTo).
  void AdvanceClockTo(sim::Time floor);

  // Runs one compaction pass now (for tests and the control plane).
  void CompactNow();

  // The instances served (for tests: e.g. to create app profiles without
  // the instance admin API). Valid for the server's lifetime.
  InstanceRegistry& registry();

 private:
  struct State;
  void CompactionLoop();

  ServerOptions options_;
  std::unique_ptr<State> state_;
};

}  // namespace btsim::api

#endif  // BTSIM_API_SERVER_H_
