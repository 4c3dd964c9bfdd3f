#include "scenarios/offered_load.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <string>
#include <utility>

#include "scenarios/scenario_fields.h"

namespace btsim::scenarios {
namespace {

namespace v1 = ::btsim::scenario::v1;

// A run's settled operations go to a temporary file, 96 bytes each
// (scenarios/operation_log.h): 500M operations is about 48 GB of disk, and
// operation ids are 32 bits. A sanity bound, not a Bigtable figure.
constexpr double kMaxProjectedOperations = 500'000'000;
constexpr int kBytesPerOperation = 96;

}  // namespace

Status CheckOfferedLoad(const v1::Scenario& scenario, sim::Duration duration,
                        std::span<const int> order,
                        std::span<const sim::Duration> at) {
  struct Load {
    int count = 1;
    double rate = 0;  // operations per second, all of the entry's clients
    bool active = false;
    sim::Duration since{0};
    double operations = 0;
    std::string field;  // where its largest rate was set
    double largest = 0;
  };
  auto rate_of = [](const v1::Workload& w, int count) {
    return w.rate_case() == v1::Workload::kOpsPerSecond
               ? w.ops_per_second() * count
               : 0.0;
  };
  auto set_rate = [](Load& load, double rate, std::string field) {
    load.rate = rate;
    if (rate > load.largest) {
      load.largest = rate;
      load.field = std::move(field);
    }
  };
  auto advance = [duration](Load& load, sim::Duration t) {
    t = std::min(t, duration);  // steps after a shortened run's end
    if (load.active && t > load.since) {
      load.operations +=
          load.rate * std::chrono::duration<double>(t - load.since).count();
    }
    load.since = t;
  };
  std::map<std::string, Load> loads;  // by `clients` name
  for (int i = 0; i < scenario.clients_size(); ++i) {
    const v1::Client& c = scenario.clients(i);
    Load& load = loads[c.name()];
    load.count = c.count() == 0 ? 1 : c.count();
    load.active = !c.start_stopped();
    set_rate(load, rate_of(c.workload(), load.count),
             Indexed("clients", i) + ".workload.ops_per_second");
  }
  for (int i : order) {
    const v1::Step& step = scenario.timeline(i);
    if (step.has_start_client() || step.has_stop_client()) {
      Load& load = loads[step.has_start_client() ? step.start_client().client()
                                                 : step.stop_client().client()];
      advance(load, at[i]);
      load.active = step.has_start_client();
    } else if (step.has_change_workload()) {
      Load& load = loads[step.change_workload().client()];
      advance(load, at[i]);
      set_rate(
          load, rate_of(step.change_workload().workload(), load.count),
          Indexed("timeline", i) + ".change_workload.workload.ops_per_second");
    }
  }
  double total = 0;
  const Load* most = nullptr;
  for (auto& [name, load] : loads) {
    advance(load, duration);
    total += load.operations;
    if (most == nullptr || load.operations > most->operations) most = &load;
  }
  if (total <= kMaxProjectedOperations) return OkStatus();
  auto whole = [](double n) { return std::to_string(std::llround(n)); };
  return InvalidArgument(
      most->field + ": the open-loop clients would offer about " +
      whole(total) + " operations in " +
      whole(std::chrono::duration<double>(duration).count()) + " s (this one " +
      whole(most->operations) + "), more than the " +
      whole(kMaxProjectedOperations) + " a run can record (about " +
      std::to_string(kBytesPerOperation) +
      " bytes each in a temporary file); lower the rates, the client counts "
      "or the duration");
}

}  // namespace btsim::scenarios
