// The complete stored state of one cluster, as plain values, for a
// persistent store to save and load exactly (the snapshots of `btsim serve
// --data-dir`, docs/durability.md). Loading an image gives a cluster that
// answers every read, applies every later write, replicated change and
// compaction exactly as the cluster it was taken from. Rows travel in their
// stored encoding (cluster/row_codec.h): an image is only loadable by a
// btsim whose kImageFormat is the same.
#ifndef BTSIM_CLUSTER_IMAGE_H_
#define BTSIM_CLUSTER_IMAGE_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "cluster/gc_rule.h"
#include "cluster/schema.h"
#include "cluster/timestamp.h"
#include "cluster/version.h"

namespace btsim::cluster {

// Changes whenever the row encoding or the fields below change meaning.
inline constexpr uint32_t kImageFormat = 1;

struct FamilyImage {
  std::string name;
  uint32_t id = 0;
  GcRule gc_rule;
  Aggregate aggregate = Aggregate::kNone;
  Version created = 0;
  Version changed = 0;
  // The rules in effect before `changed`, oldest first: (since, rule).
  std::vector<std::pair<Version, GcRule>> past_rules;
};

// A cell another version of the same timestamp replaced (see Table).
struct SupersededImage {
  std::string row_key;
  uint32_t family_id = 0;
  std::string qualifier;
  Timestamp timestamp;
  Version version = 0;
  Version until = 0;
  bool garbage = false;
};

struct TabletImage {
  std::string start;  // "" for the first; each ends where the next starts
  bool pinned = false;  // a user-requested split
};

// One table without its rows (they follow it, ImageWriter::Row).
struct TableImage {
  std::string id;
  std::vector<FamilyImage> families;  // the present ones, by name
  uint32_t family_ids = 0;            // ids handed out so far (next id)
  bool has_aggregates = false;
  std::vector<std::pair<std::string, Version>> dropped_families;
  Version created_version = 0;
  std::vector<SupersededImage> superseded;  // by row key
  std::vector<std::pair<std::string, Version>> range_tombstones;  // prefix
  std::vector<TabletImage> tablets;  // in key order
};

// An idempotency token the cluster remembers (cluster/idempotency.h).
struct TokenImage {
  std::string table;
  std::string row_key;
  std::string token;
  Timestamp committed;
};

// The cluster's own state, without its tables.
struct ClusterImage {
  Version last_version = 0;
  std::vector<std::pair<std::string, Version>> deleted_tables;
  std::vector<TokenImage> tokens;
};

// Receives a cluster's image (Cluster::WriteImage): Cluster once, then
// each table in id order, each followed by its stored rows in key order
// (tombstone-only rows included). Views are valid only during the call.
class ImageWriter {
 public:
  virtual ~ImageWriter() = default;
  virtual void Cluster(const ClusterImage& cluster) = 0;
  virtual void Table(const TableImage& table) = 0;
  virtual void Row(std::string_view key, std::string_view encoded) = 0;
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_IMAGE_H_
