#include "instance/cluster_faults.h"

#include <algorithm>
#include <utility>

namespace btsim::instance {

std::string_view DownModeName(DownMode mode) {
  return mode == DownMode::kBlackhole ? "BLACKHOLE" : "REFUSE";
}

void ClusterFaults::SetDownMode(std::string_view cluster, DownMode mode) {
  auto it = down_modes_.find(cluster);
  if (it == down_modes_.end()) {
    down_modes_.emplace(std::string(cluster), mode);
  } else {
    it->second = mode;
  }
}

DownMode ClusterFaults::down_mode(std::string_view cluster) const {
  auto it = down_modes_.find(cluster);
  return it == down_modes_.end() ? DownMode::kRefuse : it->second;
}

void ClusterFaults::SetSlowness(std::string_view cluster,
                                std::optional<sim::LatencyModel> added) {
  auto it = slowness_.find(cluster);
  if (!added) {
    if (it != slowness_.end()) slowness_.erase(it);
  } else if (it == slowness_.end()) {
    slowness_.emplace(std::string(cluster), *added);
  } else {
    it->second = *added;
  }
}

void ClusterFaults::SetErrors(std::string_view cluster,
                              std::optional<InjectedErrors> errors) {
  auto it = errors_.find(cluster);
  if (!errors) {
    if (it != errors_.end()) errors_.erase(it);
  } else if (it == errors_.end()) {
    errors_.emplace(std::string(cluster), std::move(*errors));
  } else {
    it->second = std::move(*errors);
  }
}

const ClientCut* ClusterFaults::Find(std::string_view client_zone,
                                     std::string_view client,
                                     std::string_view cluster) const {
  for (const ClientCut& cut : cuts_) {
    if (cut.client_zone == client_zone && cut.client == client &&
        cut.cluster == cluster) {
      return &cut;
    }
  }
  return nullptr;
}

void ClusterFaults::Cut(const ClientCut& cut) {
  Mend(cut.client_zone, cut.client, cut.cluster);
  cuts_.push_back(cut);
}

void ClusterFaults::Mend(std::string_view client_zone, std::string_view client,
                         std::string_view cluster) {
  std::erase_if(cuts_, [&](const ClientCut& cut) {
    return cut.client_zone == client_zone && cut.client == client &&
           cut.cluster == cluster;
  });
}

bool ClusterFaults::Lost(std::string_view client_zone, std::string_view client,
                         std::string_view cluster,
                         bool ClientCut::*direction) const {
  if (cuts_.empty()) return false;
  const ClientCut* zone = Find(client_zone, "", cluster);
  if (zone != nullptr && zone->*direction) return true;
  if (client.empty()) return false;
  const ClientCut* own = Find(client_zone, client, cluster);
  return own != nullptr && own->*direction;
}

bool ClusterFaults::RequestLost(std::string_view client_zone,
                                std::string_view client,
                                std::string_view cluster) const {
  return Lost(client_zone, client, cluster, &ClientCut::requests);
}

bool ClusterFaults::ReplyLost(std::string_view client_zone,
                              std::string_view client,
                              std::string_view cluster) const {
  return Lost(client_zone, client, cluster, &ClientCut::replies);
}

ClusterFaults::Arrival ClusterFaults::Arrive(std::string_view cluster,
                                             std::string_view method,
                                             sim::Rng& rng) const {
  Arrival arrival;
  if (auto it = errors_.find(cluster); it != errors_.end()) {
    const InjectedErrors& e = it->second;
    if ((e.method.empty() || e.method == method) && rng.Bernoulli(e.fraction)) {
      arrival.status =
          Status(e.code, "injected error on cluster '" + std::string(cluster) +
                             "' (btsim fault)");
      return arrival;
    }
  }
  if (auto it = slowness_.find(cluster); it != slowness_.end()) {
    arrival.added = it->second.Sample(rng);
  }
  return arrival;
}

void ClusterFaults::Forget(std::string_view cluster) {
  if (auto it = down_modes_.find(cluster); it != down_modes_.end()) {
    down_modes_.erase(it);
  }
  SetSlowness(cluster, std::nullopt);
  SetErrors(cluster, std::nullopt);
  std::erase_if(cuts_,
                [&](const ClientCut& cut) { return cut.cluster == cluster; });
}

void ClusterFaults::Clear() {
  down_modes_.clear();
  slowness_.clear();
  errors_.clear();
  cuts_.clear();
}

}  // namespace btsim::instance
