// LiveMetrics: the Prometheus endpoint of `btsim serve --metrics-port P`.
//
// Every instance the server creates gets a metrics::InstanceMetrics,
// registered as its observer by OnInstanceCreated (pass it as
// api::ServerOptions::on_instance_created). Start serves them at
// http://HOST:PORT/metrics with prometheus-cpp's Exposer; each scrape first
// samples every served instance's gauges (taking that instance's lock in
// turn), so gauges are as fresh as the scrape.
//
// Lifetime: construct LiveMetrics before the api::Server (the instances
// keep pointers to their observers, so it must outlive them) and call Stop
// before the server's registry goes (scrapes read it). OnInstanceCreated
// and scrapes may run on any thread; Start and Stop on one thread.
#ifndef BTSIM_CLI_SERVE_METRICS_H_
#define BTSIM_CLI_SERVE_METRICS_H_

#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include <prometheus/registry.h>

#include "api/instance_registry.h"
#include "base/result.h"
#include "instance/instance.h"
#include "metrics/instance_metrics.h"

namespace prometheus {
class Exposer;
}  // namespace prometheus

namespace btsim::cli {

class LiveMetrics {
 public:
  LiveMetrics();
  ~LiveMetrics();  // Stops.
  LiveMetrics(const LiveMetrics&) = delete;
  LiveMetrics& operator=(const LiveMetrics&) = delete;

  // Attaches an InstanceMetrics to `instance`. Called with the instance's
  // lock held (the registry's creation hook), once per instance.
  void OnInstanceCreated(instance::Instance& instance);

  // Serves /metrics on `host`:`port` (port 0: a free one) for the
  // instances of `registry`, which must stay valid until Stop. Returns the
  // bound port; UNAVAILABLE (with the reason) when the address cannot be
  // bound, FAILED_PRECONDITION when already started.
  Result<int> Start(const std::string& host, int port,
                    api::InstanceRegistry& registry);
  // Stops serving; waits for a scrape in progress. Idempotent.
  void Stop();

  // The text exposition a scrape of `registry`'s instances returns now
  // (samples them first). For tests; needs no Start.
  std::string Scrape(api::InstanceRegistry& registry);

 private:
  class SamplingCollectable;

  // Samples the gauges of every instance of `registry`.
  void SampleAll(api::InstanceRegistry& registry);

  std::shared_ptr<prometheus::Registry> registry_;
  std::mutex mu_;  // guards metrics_
  // By instance name.
  std::map<std::string, std::unique_ptr<metrics::InstanceMetrics>, std::less<>>
      metrics_;
  std::shared_ptr<SamplingCollectable> collectable_;
  std::unique_ptr<prometheus::Exposer> exposer_;
};

}  // namespace btsim::cli

#endif  // BTSIM_CLI_SERVE_METRICS_H_
