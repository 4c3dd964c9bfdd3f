// Consistency tokens: an opaque string that records, for one table, the
// replication log position of every cluster (by cluster id) when the token
// was generated. CheckConsistency decodes it and asks whether every cluster
// has applied every other cluster's entries up to those positions. The
// encoding carries the table name's hash and a checksum, so a malformed
// token, or one generated for another table, is rejected with
// INVALID_ARGUMENT.
#ifndef BTSIM_REPLICATION_CONSISTENCY_TOKEN_H_
#define BTSIM_REPLICATION_CONSISTENCY_TOKEN_H_

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "base/result.h"

namespace btsim::replication {

using LogPositions = std::map<std::string, uint64_t>;  // cluster id -> position

// `table_name` is the full resource name
// ("projects/P/instances/I/tables/T"). Cluster ids must match
// [a-z][-a-z0-9]*.
std::string EncodeConsistencyToken(std::string_view table_name,
                                   const LogPositions& positions);

// The positions recorded in `token`, or INVALID_ARGUMENT naming
// consistency_token.
Result<LogPositions> DecodeConsistencyToken(std::string_view token,
                                            std::string_view table_name);

}  // namespace btsim::replication

#endif  // BTSIM_REPLICATION_CONSISTENCY_TOKEN_H_
