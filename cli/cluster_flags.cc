#include "cli/cluster_flags.h"

#include <string>

namespace btsim::cli {

Result<std::vector<instance::ClusterConfig>> ParseClusters(
    std::string_view text) {
  std::vector<instance::ClusterConfig> out;
  auto bad = [&](std::string_view item, const char* why) {
    return InvalidArgument("--clusters: '" + std::string(item) + "' " + why +
                           "; expected ID=ZONE[:NODES], e.g. "
                           "c1=us-east1-b,c2=europe-west1-d:3");
  };
  size_t start = 0;
  while (start <= text.size()) {
    const size_t comma = text.find(',', start);
    const std::string_view item = text.substr(start, comma - start);
    const size_t eq = item.find('=');
    if (eq == std::string_view::npos || eq == 0 || eq + 1 == item.size()) {
      return bad(item, "is not ID=ZONE");
    }
    instance::ClusterConfig c;
    c.id = std::string(item.substr(0, eq));
    std::string_view zone = item.substr(eq + 1);
    if (const size_t colon = zone.find(':'); colon != std::string_view::npos) {
      const std::string_view nodes = zone.substr(colon + 1);
      int n = 0;
      if (nodes.empty() || nodes.size() > 4)
        return bad(item, "has a bad node count");
      for (char ch : nodes) {
        if (ch < '0' || ch > '9') return bad(item, "has a bad node count");
        n = n * 10 + (ch - '0');
      }
      c.nodes = n;
      zone = zone.substr(0, colon);
    }
    c.zone = std::string(zone);
    out.push_back(std::move(c));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return out;
}

}  // namespace btsim::cli
