// GcRule: a column family's garbage-collection policy, applied by compaction
// to each column's live cells (newest first). An empty rule (kNone) keeps
// everything; an empty union or intersection keeps everything too.
#ifndef BTSIM_CLUSTER_GC_RULE_H_
#define BTSIM_CLUSTER_GC_RULE_H_

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "cluster/timestamp.h"

namespace btsim::cluster {

struct GcRule {
  enum class Kind { kNone, kMaxVersions, kMaxAge, kIntersection, kUnion };

  Kind kind = Kind::kNone;
  int64_t max_versions = 0;             // kMaxVersions: keep the newest N
  std::chrono::microseconds max_age{};  // kMaxAge: drop cells older than this
  std::vector<GcRule> rules;            // kIntersection / kUnion

  static GcRule None() { return {}; }
  static GcRule MaxVersions(int64_t n);
  static GcRule MaxAge(std::chrono::microseconds age);
  static GcRule Intersection(std::vector<GcRule> rules);
  static GcRule Union(std::vector<GcRule> rules);

  // INVALID_ARGUMENT naming `field` when a limit is not positive.
  Status Validate(const std::string& field) const;

  // True when the rule deletes a cell that is the `index`-th newest (0-based)
  // of its column and has `timestamp`, at time `now`.
  bool Deletes(int64_t index, Timestamp timestamp, Timestamp now) const;
  // The age beyond which the rule deletes a column's newest cell (nullopt:
  // never). max_num_versions keeps at least the newest, so only max_age
  // parts count: a union deletes when any part does, an intersection when
  // every part does.
  std::optional<std::chrono::microseconds> NewestCellAge() const;
  // Whether some part is a max_age limit (deletions then depend on the
  // time).
  bool LimitsAge() const;

  // Human-readable form, e.g. "(versions() > 2 || age() > 1d)".
  std::string ToString() const;

  bool operator==(const GcRule&) const = default;
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_GC_RULE_H_
