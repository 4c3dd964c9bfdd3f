#include "api/instance_registry.h"

#include <vector>

#include "api/resource_names.h"
#include "sim/rng.h"

namespace btsim::api {

InstanceRegistry::InstanceRegistry(const sim::Clock& clock, uint64_t seed,
                                   cluster::ClusterOptions options)
    : clock_(clock), seed_(seed), options_(options) {}

Instance& InstanceRegistry::GetOrCreate(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = instances_[name];
  if (!slot) {
    slot = std::make_unique<Instance>(
        name, std::string(LastSegment(name)) + "-c1", clock_,
        sim::StableHash(name, seed_), options_);
  }
  return *slot;
}

void InstanceRegistry::CompactAll() {
  std::vector<Instance*> all;
  {
    std::lock_guard<std::mutex> lock(mu_);
    for (auto& [name, instance] : instances_) all.push_back(instance.get());
  }
  for (Instance* instance : all) {
    std::lock_guard<std::mutex> lock(instance->mu);
    instance->cluster.Compact();
  }
}

}  // namespace btsim::api
