// Router: which cluster serves a request, given its app profile, the
// client's zone and which clusters are available. Pure and deterministic:
// random choices use the Rng passed in.
//
// - Single-cluster routing: the profile's cluster, whether or not it is
//   available (it never fails over by itself; the caller then answers
//   UNAVAILABLE).
// - Multi-cluster routing: the candidates (the profile's cluster group, or
//   every cluster) ordered by distance from the client's zone: same zone,
//   then same region, then other regions. Equidistant clusters are tried in
//   a random order (one Rng draw per tie group), or, with row affinity and a
//   single-row request, in an order picked by a stable hash of the row key,
//   so one key keeps going to one cluster while it is available. Unavailable
//   clusters are skipped; the rest of the list is the failover order.
// - Transactions (CheckAndMutateRow, ReadModifyWriteRow) are refused with
//   FAILED_PRECONDITION "Single-row transactions are not allowed by this
//   app profile" unless the profile is single-cluster with transactional
//   writes allowed.
#ifndef BTSIM_APPPROFILE_ROUTER_H_
#define BTSIM_APPPROFILE_ROUTER_H_

#include <array>
#include <cstddef>
#include <span>
#include <string_view>

#include "appprofile/app_profile.h"
#include "base/result.h"
#include "sim/rng.h"

namespace btsim::appprofile {

// A cluster as routing sees it. Views, valid during the call.
struct RouteCandidate {
  std::string_view id;
  std::string_view zone;
  bool available = true;
  // When not -1, must be Distance(request.client_zone, zone): a caller that
  // routes many requests from one zone computes it once.
  int distance = -1;
};

enum class RequestKind { kSingleRow, kMultiRow, kTransaction };

struct RouteRequest {
  RequestKind kind = RequestKind::kSingleRow;
  std::string_view row_key;  // single-row requests and transactions
  std::string_view client_zone;
};

// More candidates than an instance can have clusters (4) and then some.
inline constexpr size_t kMaxRouteCandidates = 8;

// Where a request goes. Views into the candidates passed to Route.
struct RouteChoice {
  // The clusters to try, in order: order[0] is the choice, the rest the
  // failover sequence. Never empty. Single-cluster routing: exactly the
  // profile's cluster, available or not (the caller decides what an
  // unavailable one answers).
  std::array<std::string_view, kMaxRouteCandidates> order;
  size_t size = 0;
  // The first cluster the order would hold were every candidate
  // available: differs from chosen() only by availability.
  std::string_view nearest;

  std::string_view chosen() const { return order[0]; }
  std::span<const std::string_view> clusters() const {
    return {order.data(), size};
  }
};

// UNAVAILABLE when no candidate is available (multi-cluster),
// FAILED_PRECONDITION for a refused transaction, NOT_FOUND when the profile
// names a cluster that is gone, INVALID_ARGUMENT for more than
// kMaxRouteCandidates candidates. Each tie group of more than one cluster
// takes one draw from `rng` (none with row affinity), whatever the
// clusters' availability.
Result<RouteChoice> Route(const AppProfile& profile,
                          const RouteRequest& request,
                          std::span<const RouteCandidate> clusters,
                          sim::Rng& rng);

// 0 same zone, 1 same region, 2 different regions.
int Distance(std::string_view zone_a, std::string_view zone_b);

}  // namespace btsim::appprofile

#endif  // BTSIM_APPPROFILE_ROUTER_H_
