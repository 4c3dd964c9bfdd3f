// Parsing of `btsim serve --clusters ID=ZONE[:NODES][,ID=ZONE[:NODES]...]`.
#ifndef BTSIM_CLI_CLUSTER_FLAGS_H_
#define BTSIM_CLI_CLUSTER_FLAGS_H_

#include <string_view>
#include <vector>

#include "base/result.h"
#include "instance/instance.h"

namespace btsim::cli {

// INVALID_ARGUMENT naming --clusters for malformed text. Ids, zones and
// node counts are validated later, by instance::Instance::Create.
Result<std::vector<instance::ClusterConfig>> ParseClusters(
    std::string_view text);

}  // namespace btsim::cli

#endif  // BTSIM_CLI_CLUSTER_FLAGS_H_
