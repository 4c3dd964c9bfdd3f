// InstanceRegistry: the instances a server knows, created on first use with
// one cluster each (as the official emulator does). Thread-safe; each
// instance has its own mutex that callers hold while touching its cluster.
#ifndef BTSIM_API_INSTANCE_REGISTRY_H_
#define BTSIM_API_INSTANCE_REGISTRY_H_

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "cluster/cluster.h"
#include "sim/clock.h"

namespace btsim::api {

struct Instance {
  Instance(std::string name, std::string cluster_id, const sim::Clock& clock,
           uint64_t seed, cluster::ClusterOptions options)
      : name(std::move(name)),
        cluster_id(std::move(cluster_id)),
        cluster(clock, sim::Rng(seed), options) {}

  const std::string name;        // "projects/P/instances/I"
  const std::string cluster_id;  // "I-c1"
  std::mutex mu;                 // guards cluster
  cluster::Cluster cluster;
};

class InstanceRegistry {
 public:
  // `clock` must outlive the registry.
  InstanceRegistry(const sim::Clock& clock, uint64_t seed,
                   cluster::ClusterOptions options);

  // Returns the instance named `name` ("projects/P/instances/I"), creating it
  // if needed. The reference stays valid for the registry's lifetime.
  Instance& GetOrCreate(const std::string& name);

  // Compacts every instance's cluster, one instance at a time.
  void CompactAll();

 private:
  const sim::Clock& clock_;
  const uint64_t seed_;
  const cluster::ClusterOptions options_;
  std::mutex mu_;  // guards instances_
  std::map<std::string, std::unique_ptr<Instance>> instances_;
};

}  // namespace btsim::api

#endif  // BTSIM_API_INSTANCE_REGISTRY_H_
