#include "api/instance_registry.h"

#include "api/resource_names.h"
#include "sim/rng.h"

namespace btsim::api {

std::string DefaultClusterId(std::string_view instance_id) {
  std::string id;
  for (char c : instance_id) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
    const bool ok = (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
    id += ok ? c : '-';
  }
  if (id.empty() || !(id[0] >= 'a' && id[0] <= 'z')) id = "i" + id;
  if (id.size() > 27) id.resize(27);
  return id + "-c1";
}

InstanceRegistry::InstanceRegistry(sim::Scheduler& scheduler, uint64_t seed,
                                   instance::InstanceConfig config,
                                   InstanceCreatedHook on_created,
                                   size_t max_instances)
    : scheduler_(scheduler),
      seed_(seed),
      config_(std::move(config)),
      on_created_(std::move(on_created)),
      max_instances_(max_instances) {}

instance::InstanceConfig InstanceRegistry::ConfigFor(
    const std::string& name) const {
  instance::InstanceConfig config = config_;
  if (config.clusters.empty()) {
    config.clusters.push_back(instance::ClusterConfig{
        DefaultClusterId(LastSegment(name)), "us-central1-b", 1});
  }
  return config;
}

Result<ServedInstance*> InstanceRegistry::GetOrCreate(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = instances_.find(name); it != instances_.end()) {
    return it->second.get();
  }
  if (instances_.size() >= max_instances_) {
    return ResourceExhausted(
        "instance " + QuoteForError(name) + ": this server already serves " +
        std::to_string(max_instances_) +
        " instances, its limit (btsim serve --max-instances)");
  }
  auto& slot = instances_[name];
  if (!slot) {
    auto served = std::make_unique<ServedInstance>(scheduler_);
    std::lock_guard<std::mutex> instance_lock(served->mu);
    auto created = instance::Instance::Create(
        name, served->scheduler, sim::Rng(sim::StableHash(name, seed_)),
        ConfigFor(name));
    if (!created.ok()) {
      instances_.erase(name);
      return created.status();
    }
    served->instance = std::move(created).value();
    if (on_created_) on_created_(*served->instance);
    slot = std::move(served);
  }
  return slot.get();
}

Result<InstanceRegistry::Locked> InstanceRegistry::Lock(
    const std::string& name) {
  BTSIM_ASSIGN_OR_RETURN(ServedInstance * served, GetOrCreate(name));
  return Locked{std::unique_lock<std::mutex>(served->mu),
                served->instance.get()};
}

std::vector<ServedInstance*> InstanceRegistry::All() {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<ServedInstance*> out;
  for (auto& [name, served] : instances_) out.push_back(served.get());
  return out;
}

void InstanceRegistry::CompactAll() {
  for (ServedInstance* served : All()) {
    std::lock_guard<std::mutex> lock(served->mu);
    served->instance->replicas().CompactAll();
  }
}

}  // namespace btsim::api
