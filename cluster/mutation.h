// Engine-level mutations and read-modify-write rules, independent of the wire
// format. Strings are owned; the engine keeps views into them only for the
// duration of one call.
#ifndef BTSIM_CLUSTER_MUTATION_H_
#define BTSIM_CLUSTER_MUTATION_H_

#include <chrono>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "cluster/timestamp.h"

namespace btsim::cluster {

struct SetCell {
  std::string family;
  std::string qualifier;
  Timestamp timestamp = kServerTimestamp;
  std::string value;
};

// Deletes cells of one column with start <= timestamp < end; an end of
// Timestamp{} (the epoch, 0 on the wire) means no end.
struct DeleteFromColumn {
  std::string family;
  std::string qualifier;
  Timestamp start;
  Timestamp end;
};

struct DeleteFromFamily {
  std::string family;
};

struct DeleteFromRow {};

// AddToCell or MergeToCell (`merge`) into a family with an Aggregate:
// combines `input`, a 64-bit integer as eight big-endian bytes, into the
// cell at `timestamp` (kServerTimestamp: the commit's server time). For
// Sum, Min and Max both forms combine the same way; `merge` only names the
// field an error reports.
struct AddToCell {
  std::string family;
  std::string qualifier;
  Timestamp timestamp = kServerTimestamp;
  std::string input;
  bool merge = false;
};

using Mutation = std::variant<SetCell, DeleteFromColumn, DeleteFromFamily,
                              DeleteFromRow, AddToCell>;

// Makes a retried row write apply at most once (Bigtable's Idempotency):
// a cluster that has applied a write of `token` to the same row, within
// kIdempotencyWindow of that write's commit, acknowledges a replay without
// applying it. An empty token: none. `start_time`, when after the epoch,
// is when the client sent the first attempt: a replay arriving more than
// the window after it is refused, since the protection may have expired.
struct Idempotency {
  std::string token;
  Timestamp start_time;
};
inline constexpr std::chrono::minutes kIdempotencyWindow{15};

struct RowMutations {
  std::string key;
  std::vector<Mutation> mutations;
  Idempotency idempotency = {};
};

struct ReadModifyWriteRule {
  enum class Kind { kAppend, kIncrement };
  std::string family;
  std::string qualifier;
  Kind kind = Kind::kAppend;
  std::string append_value;      // kAppend
  int64_t increment_amount = 0;  // kIncrement
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_MUTATION_H_
