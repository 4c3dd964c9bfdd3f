// A table's schema as the engine takes it: column families and their GC
// rules, and the changes ModifyColumnFamilies makes.
#ifndef BTSIM_CLUSTER_SCHEMA_H_
#define BTSIM_CLUSTER_SCHEMA_H_

#include <cstdint>
#include <string>

#include "cluster/gc_rule.h"

namespace btsim::cluster {

// How the cells of an aggregate family combine what AddToCell and
// MergeToCell write into them: every input and every combined value is a
// 64-bit signed integer stored as eight big-endian bytes (Sum wraps around
// on overflow). kNone: an ordinary family, written with SetCell. Fixed when
// the family is created.
enum class Aggregate : uint8_t { kNone, kSum, kMin, kMax };

struct ColumnFamily {
  std::string name;
  GcRule gc_rule;
  Aggregate aggregate = Aggregate::kNone;
};

// One step of ModifyColumnFamilies.
struct FamilyModification {
  enum class Kind { kCreate, kUpdate, kDrop };
  std::string name;
  Kind kind = Kind::kCreate;
  GcRule gc_rule;                          // kCreate, kUpdate
  Aggregate aggregate = Aggregate::kNone;  // kCreate (an update keeps it)
};

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_SCHEMA_H_
