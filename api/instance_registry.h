// InstanceRegistry: the instances a server knows, each created on first use
// from one template configuration (by default one cluster, as the official
// emulator has). Thread-safe. Each ServedInstance has a mutex that gRPC
// handlers hold while they use it; its replication tasks run on the shared
// scheduler under the same mutex (LockingScheduler).
#ifndef BTSIM_API_INSTANCE_REGISTRY_H_
#define BTSIM_API_INSTANCE_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "api/locking_scheduler.h"
#include "base/result.h"
#include "instance/instance.h"
#include "sim/scheduler.h"

namespace btsim::api {

struct ServedInstance {
  ServedInstance(sim::Scheduler& base) : scheduler(base, mu) {}

  std::mutex mu;  // guards instance and settling
  LockingScheduler scheduler;
  std::unique_ptr<instance::Instance> instance;
  // `btsim serve --scenario` has ended its client phase and settles: data
  // calls are refused with UNAVAILABLE.
  bool settling = false;
};

// Called once for every instance the registry creates, right after its
// creation, with the registry's and the instance's locks held (so it may
// add observers, but must not call back into the registry).
using InstanceCreatedHook = std::function<void(instance::Instance&)>;

class InstanceRegistry {
 public:
  // `scheduler` (the server's asio scheduler) must outlive the registry's
  // use; shut it down before destroying the registry. With no clusters in
  // `config`, every instance gets one cluster "<instance id>-c1".
  // `on_created` (optional) sees each new instance; whatever it attaches
  // must outlive the registry or detach itself.
  // At most `max_instances` instances are created.
  InstanceRegistry(sim::Scheduler& scheduler, uint64_t seed,
                   instance::InstanceConfig config,
                   InstanceCreatedHook on_created = nullptr,
                   size_t max_instances = kDefaultMaxInstances);

  // Instances created at most, unless told otherwise: clients invent
  // instance names, and each one costs a whole instance.
  static constexpr size_t kDefaultMaxInstances = 100;

  // The instance named `name` ("projects/P/instances/I"), created on first
  // use; the pointer stays valid for the registry's lifetime.
  // INVALID_ARGUMENT when the configuration cannot make an instance;
  // RESOURCE_EXHAUSTED when it would be one more than the limit.
  Result<ServedInstance*> GetOrCreate(const std::string& name);
  // The instance named `name` (created on first use) with its lock held
  // for as long as the returned value lives: one request's view.
  struct Locked {
    std::unique_lock<std::mutex> lock;
    instance::Instance* instance;
  };
  Result<Locked> Lock(const std::string& name);
  // Every instance created so far, by name.
  std::vector<ServedInstance*> All();
  // Compacts every instance, one at a time, each under its lock.
  void CompactAll();

  // The configuration an instance named `name` gets.
  instance::InstanceConfig ConfigFor(const std::string& name) const;

 private:
  sim::Scheduler& scheduler_;
  const uint64_t seed_;
  const instance::InstanceConfig config_;
  const InstanceCreatedHook on_created_;
  const size_t max_instances_;
  std::mutex mu_;  // guards instances_
  std::map<std::string, std::unique_ptr<ServedInstance>> instances_;
};

// A valid cluster id derived from an instance id: lower case, invalid
// characters replaced by '-', at most 30 characters, ending in "-c1".
std::string DefaultClusterId(std::string_view instance_id);

}  // namespace btsim::api

#endif  // BTSIM_API_INSTANCE_REGISTRY_H_
