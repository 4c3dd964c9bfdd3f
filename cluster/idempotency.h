// What one cluster remembers of idempotent row writes (cluster/mutation.h,
// Idempotency): the (table, row, token) of every write it committed or
// applied from another cluster's log, until kIdempotencyWindow after that
// write's commit. A token therefore protects a replay on any cluster the
// original has reached, and on no other: a replay that arrives on a cluster
// before the original has replicated there applies again.
#ifndef BTSIM_CLUSTER_IDEMPOTENCY_H_
#define BTSIM_CLUSTER_IDEMPOTENCY_H_

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <tuple>

#include "base/status.h"
#include "cluster/mutation.h"
#include "cluster/timestamp.h"

namespace btsim::cluster {

class IdempotencyMemory {
 public:
  // INVALID_ARGUMENT for a token under 8 bytes; FAILED_PRECONDITION when
  // the first attempt (start_time) is more than the window before `now`.
  // Names `field` (the request's idempotency field).
  static Status Validate(const Idempotency& idempotency, Timestamp now,
                         const std::string& field);

  // Whether a write of `token` to (table, key) is remembered at `now`.
  bool Seen(std::string_view table, std::string_view key,
            std::string_view token, Timestamp now);
  // Remembers a write of `token` to (table, key) committed at `committed`.
  void Remember(std::string_view table, std::string_view key,
                std::string_view token, Timestamp committed);
  size_t size() const { return expires_.size(); }
  // Calls visit(table, key, token, committed) for every write remembered
  // (some may have expired since: Seen forgets them), by (table, key,
  // token): Remember with the same arguments, in any order, restores what
  // this memory holds. Views are valid only during the call.
  void ForEach(
      const std::function<void(std::string_view table, std::string_view key,
                               std::string_view token, Timestamp committed)>&
          visit) const;

 private:
  using Key = std::tuple<std::string, std::string, std::string>;
  // Forgets what expired before `now`.
  void Forget(Timestamp now);

  std::map<Key, Timestamp, std::less<>> expires_;
  std::multimap<Timestamp, Key> by_expiry_;
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_IDEMPOTENCY_H_
