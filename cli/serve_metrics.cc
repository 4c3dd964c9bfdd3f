#include "cli/serve_metrics.h"

#include <exception>
#include <utility>
#include <vector>

#include <prometheus/collectable.h>
#include <prometheus/exposer.h>
#include <prometheus/metric_family.h>
#include <prometheus/text_serializer.h>

namespace btsim::cli {

// What the exposer collects: every instance sampled, then the registry.
// Runs on the exposer's threads.
class LiveMetrics::SamplingCollectable : public prometheus::Collectable {
 public:
  SamplingCollectable(LiveMetrics& owner, api::InstanceRegistry& registry)
      : owner_(owner), registry_(registry) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    owner_.SampleAll(registry_);
    return owner_.registry_->Collect();
  }

 private:
  LiveMetrics& owner_;
  api::InstanceRegistry& registry_;
};

LiveMetrics::LiveMetrics()
    : registry_(std::make_shared<prometheus::Registry>()) {}

LiveMetrics::~LiveMetrics() { Stop(); }

void LiveMetrics::OnInstanceCreated(instance::Instance& instance) {
  std::lock_guard<std::mutex> lock(mu_);
  auto& slot = metrics_[instance.name()];
  if (slot) return;  // the registry creates each name once
  slot =
      std::make_unique<metrics::InstanceMetrics>(*registry_, instance.name());
  instance.AddObserver(slot.get());
}

void LiveMetrics::SampleAll(api::InstanceRegistry& registry) {
  // Lock order, as in the registry's creation hook: the instance's lock,
  // then mu_.
  for (api::ServedInstance* served : registry.All()) {
    std::lock_guard<std::mutex> instance_lock(served->mu);
    metrics::InstanceMetrics* metrics = nullptr;
    {
      std::lock_guard<std::mutex> lock(mu_);
      auto it = metrics_.find(served->instance->name());
      if (it != metrics_.end()) metrics = it->second.get();
    }
    if (metrics != nullptr) metrics->Sample(*served->instance);
  }
}

Result<int> LiveMetrics::Start(const std::string& host, int port,
                               api::InstanceRegistry& registry) {
  if (exposer_) return FailedPrecondition("metrics are already served");
  // IPv6 literals need brackets in a civetweb address.
  const std::string address =
      (host.find(':') != std::string::npos && host.front() != '['
           ? "[" + host + "]"
           : host) +
      ":" + std::to_string(port);
  // prometheus-cpp (civetweb) reports a failed bind by throwing; nothing
  // beyond this boundary sees the exception.
  try {
    auto exposer = std::make_unique<prometheus::Exposer>(address, 2);
    const std::vector<int> ports = exposer->GetListeningPorts();
    if (ports.empty() || ports.front() <= 0) {
      return Unavailable("cannot listen on " + address);
    }
    collectable_ = std::make_shared<SamplingCollectable>(*this, registry);
    exposer->RegisterCollectable(collectable_);
    exposer_ = std::move(exposer);
    return ports.front();
  } catch (const std::exception& e) {
    return Unavailable("cannot listen on " + address +
                       " (address in use or not available?): " + e.what());
  }
}

void LiveMetrics::Stop() {
  // The exposer's destructor stops civetweb and waits for its threads.
  exposer_.reset();
  collectable_.reset();
}

std::string LiveMetrics::Scrape(api::InstanceRegistry& registry) {
  SampleAll(registry);
  return prometheus::TextSerializer().Serialize(registry_->Collect());
}

}  // namespace btsim::cli
