// A table's schema as the engine takes it: column families and their GC
// rules, and the changes ModifyColumnFamilies makes.
#ifndef BTSIM_CLUSTER_SCHEMA_H_
#define BTSIM_CLUSTER_SCHEMA_H_

#include <string>

#include "cluster/gc_rule.h"

namespace btsim::cluster {

struct ColumnFamily {
  std::string name;
  GcRule gc_rule;
};

// One step of ModifyColumnFamilies.
struct FamilyModification {
  enum class Kind { kCreate, kUpdate, kDrop };
  std::string name;
  Kind kind = Kind::kCreate;
  GcRule gc_rule;  // kCreate, kUpdate
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_SCHEMA_H_
