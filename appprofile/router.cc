#include "appprofile/router.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <utility>

#include "sim/transport.h"

namespace btsim::appprofile {
namespace {

// SplitMix64's finaliser: FNV-1a alone leaves the low bits (which pick among
// a handful of clusters) poorly mixed.
uint64_t Mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// Number of orders of n items when it fits in 64 bits (n <= 20), else 0.
uint64_t Factorial(size_t n) {
  if (n > 20) return 0;
  uint64_t f = 1;
  for (size_t i = 2; i <= n; ++i) f *= i;
  return f;
}

// Reorders `items` into permutation number `index` (a Lehmer code, so every
// index below n! gives a distinct order). Groups too large for a 64-bit
// index (never the case with Bigtable's few clusters) are rotated instead.
void Permute(std::vector<const ClusterPlace*>& items, uint64_t index) {
  const size_t n = items.size();
  if (Factorial(n) == 0) {
    std::rotate(items.begin(), items.begin() + index % n, items.end());
    return;
  }
  std::vector<const ClusterPlace*> pool = std::move(items);
  items.clear();
  for (size_t left = n; left > 0; --left) {
    const uint64_t f = Factorial(left - 1);
    const size_t pick = static_cast<size_t>(index / f);
    index %= f;
    items.push_back(pool[pick]);
    pool.erase(pool.begin() + static_cast<std::ptrdiff_t>(pick));
  }
}

uint64_t PermutationCount(size_t n) {
  const uint64_t f = Factorial(n);
  return f == 0 ? n : f;
}

}  // namespace

int Distance(std::string_view zone_a, std::string_view zone_b) {
  if (zone_a == zone_b) return 0;
  if (sim::RegionOf(zone_a) == sim::RegionOf(zone_b)) return 1;
  return 2;
}

Result<std::vector<std::string>> Route(
    const AppProfile& profile, const RouteRequest& request,
    const std::vector<ClusterPlace>& clusters, sim::Rng& rng) {
  if (request.kind == RequestKind::kTransaction && !profile.transactional()) {
    return FailedPrecondition(
        "Single-row transactions are not allowed by this app profile");
  }

  if (profile.routing == AppProfile::Routing::kSingleCluster) {
    for (const ClusterPlace& c : clusters) {
      if (c.id == profile.cluster_id) return std::vector<std::string>{c.id};
    }
    return NotFound("App profile '" + profile.id + "' routes to cluster '" +
                    profile.cluster_id + "', which is not in the instance");
  }

  // Candidates in the instance's cluster order; ids of the group that are no
  // longer in the instance are ignored.
  std::vector<const ClusterPlace*> candidates;
  for (const ClusterPlace& c : clusters) {
    if (profile.cluster_ids.empty() ||
        std::find(profile.cluster_ids.begin(), profile.cluster_ids.end(),
                  c.id) != profile.cluster_ids.end()) {
      candidates.push_back(&c);
    }
  }
  auto distance = [&](const ClusterPlace* c) {
    return Distance(request.client_zone, c->zone);
  };
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](const ClusterPlace* a, const ClusterPlace* b) {
                     return distance(a) < distance(b);
                   });

  const bool affinity =
      profile.row_affinity && request.kind == RequestKind::kSingleRow;
  std::vector<std::string> order;
  for (size_t begin = 0; begin < candidates.size();) {
    const int d = distance(candidates[begin]);
    size_t end = begin + 1;
    while (end < candidates.size() && distance(candidates[end]) == d) ++end;
    std::vector<const ClusterPlace*> group(candidates.begin() + begin,
                                           candidates.begin() + end);
    if (group.size() > 1) {
      const uint64_t count = PermutationCount(group.size());
      const uint64_t index =
          affinity ? Mix64(sim::StableHash(request.row_key,
                                           static_cast<uint64_t>(d))) %
                         count
                   : rng.Uniform(count);
      Permute(group, index);
    }
    for (const ClusterPlace* c : group) {
      if (c->available) order.push_back(c->id);
    }
    begin = end;
  }
  if (order.empty()) {
    return Unavailable("No cluster of this app profile is available");
  }
  return order;
}

Result<RouteChoice> RouteFirst(const AppProfile& profile,
                               const RouteRequest& request,
                               std::span<const ClusterView> clusters,
                               sim::Rng& rng) {
  if (request.kind == RequestKind::kTransaction && !profile.transactional()) {
    return FailedPrecondition(
        "Single-row transactions are not allowed by this app profile");
  }
  if (profile.routing == AppProfile::Routing::kSingleCluster) {
    for (const ClusterView& c : clusters) {
      if (c.id == profile.cluster_id) return RouteChoice{c.id, c.id};
    }
    return NotFound("App profile '" + profile.id + "' routes to cluster '" +
                    profile.cluster_id + "', which is not in the instance");
  }
  // Route's algorithm on a fixed array (no allocation); larger instances
  // than Bigtable's (at most four clusters) take Route's own path.
  constexpr size_t kMaxInline = 8;
  if (clusters.size() > kMaxInline) {
    std::vector<ClusterPlace> places;
    for (const ClusterView& c : clusters) {
      places.push_back({std::string(c.id), std::string(c.zone), true});
    }
    sim::Rng all_rng = rng;
    std::vector<ClusterPlace> available = places;
    for (size_t i = 0; i < clusters.size(); ++i) {
      available[i].available = clusters[i].available;
    }
    auto route = Route(profile, request, available, rng);
    if (!route.ok()) return route.status();
    auto all = Route(profile, request, places, all_rng);
    if (!all.ok()) return all.status();
    auto view_of = [&](const std::string& id) {
      for (const ClusterView& c : clusters) {
        if (c.id == id) return c.id;
      }
      return std::string_view();
    };
    return RouteChoice{view_of(route->front()), view_of(all->front())};
  }
  struct Candidate {
    const ClusterView* cluster;
    int distance;
  };
  std::array<Candidate, kMaxInline> candidates;
  size_t n = 0;
  for (const ClusterView& c : clusters) {
    if (profile.cluster_ids.empty() ||
        std::find(profile.cluster_ids.begin(), profile.cluster_ids.end(),
                  c.id) != profile.cluster_ids.end()) {
      candidates[n++] = {&c, c.distance >= 0
                                 ? c.distance
                                 : Distance(request.client_zone, c.zone)};
    }
  }
  // A stable insertion sort by distance: std::stable_sort would allocate a
  // buffer on every request.
  for (size_t i = 1; i < n; ++i) {
    const Candidate moving = candidates[i];
    size_t j = i;
    for (; j > 0 && candidates[j - 1].distance > moving.distance; --j) {
      candidates[j] = candidates[j - 1];
    }
    candidates[j] = moving;
  }
  const bool affinity =
      profile.row_affinity && request.kind == RequestKind::kSingleRow;
  RouteChoice choice;
  bool chosen = false;
  for (size_t begin = 0; begin < n;) {
    const int d = candidates[begin].distance;
    size_t end = begin + 1;
    while (end < n && candidates[end].distance == d) ++end;
    const size_t size = end - begin;
    if (size > 1) {
      const uint64_t count = PermutationCount(size);
      uint64_t index = affinity
                           ? Mix64(sim::StableHash(request.row_key,
                                                   static_cast<uint64_t>(d))) %
                                 count
                           : rng.Uniform(count);
      // Permute's Lehmer decoding in place: position k takes the pick-th
      // of the items not placed yet, the others keeping their order.
      for (size_t k = begin; k < end; ++k) {
        const uint64_t f = Factorial(end - k - 1);
        const size_t pick = static_cast<size_t>(index / f);
        index %= f;
        std::rotate(candidates.begin() + k, candidates.begin() + k + pick,
                    candidates.begin() + k + pick + 1);
      }
    }
    if (begin == 0) choice.nearest = candidates[0].cluster->id;
    for (size_t k = begin; k < end && !chosen; ++k) {
      if (candidates[k].cluster->available) {
        choice.chosen = candidates[k].cluster->id;
        chosen = true;
      }
    }
    begin = end;
  }
  if (!chosen) {
    return Unavailable("No cluster of this app profile is available");
  }
  return choice;
}

}  // namespace btsim::appprofile
