// Engine-level mutations and read-modify-write rules, independent of the wire
// format. Strings are owned; the engine keeps views into them only for the
// duration of one call.
#ifndef BTSIM_CLUSTER_MUTATION_H_
#define BTSIM_CLUSTER_MUTATION_H_

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

using Mutation =
    std::variant<SetCell, DeleteFromColumn, DeleteFromFamily, DeleteFromRow>;

struct RowMutations {
  std::string key;
  std::vector<Mutation> mutations;
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
