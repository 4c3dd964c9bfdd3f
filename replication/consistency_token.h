// Consistency tokens: an opaque string that records, for one table, the
// replication log position of every cluster when the token was generated.
// CheckConsistency decodes it and compares the positions with what every
// cluster has applied. The encoding carries the table name's hash and a
// checksum, so a malformed token or one generated for another table is
// rejected with INVALID_ARGUMENT.
#ifndef BTSIM_REPLICATION_CONSISTENCY_TOKEN_H_
#define BTSIM_REPLICATION_CONSISTENCY_TOKEN_H_

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "base/result.h"

namespace btsim::replication {

// `table_name` is the full resource name
// ("projects/P/instances/I/tables/T"); `positions` one per cluster.
std::string EncodeConsistencyToken(std::string_view table_name,
                                   std::span<const uint64_t> positions);

// The positions recorded in `token`, or INVALID_ARGUMENT naming
// consistency_token.
Result<std::vector<uint64_t>> DecodeConsistencyToken(
    std::string_view token, std::string_view table_name);

}  // namespace btsim::replication

#endif  // BTSIM_REPLICATION_CONSISTENCY_TOKEN_H_
