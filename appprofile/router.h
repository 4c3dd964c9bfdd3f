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

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "appprofile/app_profile.h"
#include "base/result.h"
#include "sim/rng.h"

namespace btsim::appprofile {

struct ClusterPlace {
  std::string id;
  std::string zone;
  bool available = true;
};

enum class RequestKind { kSingleRow, kMultiRow, kTransaction };

struct RouteRequest {
  RequestKind kind = RequestKind::kSingleRow;
  std::string_view row_key;  // single-row requests and transactions
  std::string_view client_zone;
};

// The clusters to try, in order: the first is the choice, the others the
// failover sequence. Never empty on success. UNAVAILABLE when no candidate
// is available (multi-cluster), FAILED_PRECONDITION for a refused
// transaction, NOT_FOUND when the profile names a cluster that is gone.
// For single-cluster routing the list has exactly one cluster, available or
// not (the caller decides what an unavailable one answers).
Result<std::vector<std::string>> Route(
    const AppProfile& profile, const RouteRequest& request,
    const std::vector<ClusterPlace>& clusters, sim::Rng& rng);

// A cluster as RouteFirst sees it (views; valid during the call).
// `distance`, when not -1, must be Distance(request.client_zone, zone): a
// caller that routes many requests from one zone computes it once.
struct ClusterView {
  std::string_view id;
  std::string_view zone;
  bool available = true;
  int distance = -1;
};

// What Route chooses, without building the failover list: `chosen` is the
// first cluster of Route's list, and `nearest` the first cluster Route
// would list were every cluster available (they differ only by
// availability). Views into `clusters`. The same errors as Route, and the
// same draws from `rng` (so calling it instead of Route, or instead of
// Route on `rng` plus Route on a copy of `rng` with every cluster
// available, leaves the same Rng state).
struct RouteChoice {
  std::string_view chosen;
  std::string_view nearest;
};
Result<RouteChoice> RouteFirst(const AppProfile& profile,
                               const RouteRequest& request,
                               std::span<const ClusterView> clusters,
                               sim::Rng& rng);

// 0 same zone, 1 same region, 2 different regions.
int Distance(std::string_view zone_a, std::string_view zone_b);

}  // namespace btsim::appprofile

#endif  // BTSIM_APPPROFILE_ROUTER_H_
