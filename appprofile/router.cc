#include "appprofile/router.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

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

// The number of orders of n items; n <= kMaxRouteCandidates.
uint64_t Factorial(size_t n) {
  uint64_t f = 1;
  for (size_t i = 2; i <= n; ++i) f *= i;
  return f;
}

}  // namespace

int Distance(std::string_view zone_a, std::string_view zone_b) {
  if (zone_a == zone_b) return 0;
  if (sim::RegionOf(zone_a) == sim::RegionOf(zone_b)) return 1;
  return 2;
}

Result<RouteChoice> Route(const AppProfile& profile,
                          const RouteRequest& request,
                          std::span<const RouteCandidate> clusters,
                          sim::Rng& rng) {
  if (request.kind == RequestKind::kTransaction && !profile.transactional()) {
    return FailedPrecondition(
        "Single-row transactions are not allowed by this app profile");
  }
  if (clusters.size() > kMaxRouteCandidates) {
    return InvalidArgument(
        "routing: " + std::to_string(clusters.size()) + " clusters; at most " +
        std::to_string(kMaxRouteCandidates) + " can be routed to");
  }
  RouteChoice choice;
  if (profile.routing == AppProfile::Routing::kSingleCluster) {
    for (const RouteCandidate& c : clusters) {
      if (c.id == profile.cluster_id) {
        choice.order[choice.size++] = c.id;
        choice.nearest = c.id;
        return choice;
      }
    }
    return NotFound("App profile '" + profile.id + "' routes to cluster '" +
                    profile.cluster_id + "', which is not in the instance");
  }
  // Candidates in the instance's cluster order; ids of the group that are
  // no longer in the instance are ignored.
  struct Candidate {
    const RouteCandidate* cluster;
    int distance;
  };
  std::array<Candidate, kMaxRouteCandidates> candidates;
  size_t n = 0;
  for (const RouteCandidate& c : clusters) {
    if (profile.cluster_ids.empty() ||
        std::find(profile.cluster_ids.begin(), profile.cluster_ids.end(),
                  c.id) != profile.cluster_ids.end()) {
      candidates[n++] = {&c, c.distance >= 0
                                 ? c.distance
                                 : Distance(request.client_zone, c.zone)};
    }
  }
  // By distance, keeping the instance's order among equals (an insertion
  // sort: std::stable_sort would allocate a buffer on every request).
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
  for (size_t begin = 0; begin < n;) {
    const int d = candidates[begin].distance;
    size_t end = begin + 1;
    while (end < n && candidates[end].distance == d) ++end;
    if (end - begin > 1) {
      // Permutation number `index` of the tie group (a Lehmer code, so
      // every index below size! gives a distinct order): position k takes
      // the pick-th of the clusters not placed yet.
      const uint64_t count = Factorial(end - begin);
      uint64_t index = affinity
                           ? Mix64(sim::StableHash(request.row_key,
                                                   static_cast<uint64_t>(d))) %
                                 count
                           : rng.Uniform(count);
      for (size_t k = begin; k < end; ++k) {
        const uint64_t f = Factorial(end - k - 1);
        const size_t pick = static_cast<size_t>(index / f);
        index %= f;
        std::rotate(candidates.begin() + k, candidates.begin() + k + pick,
                    candidates.begin() + k + pick + 1);
      }
    }
    begin = end;
  }
  if (n > 0) choice.nearest = candidates[0].cluster->id;
  for (size_t k = 0; k < n; ++k) {
    if (candidates[k].cluster->available) {
      choice.order[choice.size++] = candidates[k].cluster->id;
    }
  }
  if (choice.size == 0) {
    return Unavailable("No cluster of this app profile is available");
  }
  return choice;
}

}  // namespace btsim::appprofile
