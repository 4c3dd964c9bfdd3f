// The values of aggregate families (cluster/schema.h, Aggregate): 64-bit
// signed integers stored as eight big-endian bytes, and how two of them
// combine.
#ifndef BTSIM_CLUSTER_AGGREGATE_H_
#define BTSIM_CLUSTER_AGGREGATE_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "cluster/schema.h"

namespace btsim::cluster {

// `v` as eight big-endian bytes (two's complement).
std::string EncodeInt64(int64_t v);
// The integer of eight big-endian bytes. Other lengths (which no aggregate
// cell has) read as the big-endian number of their last eight bytes at
// most, so that a stray value never stops a read.
int64_t DecodeInt64(std::string_view bytes);

// `a` combined with `b` by `aggregate` (Sum wraps around on overflow).
// Commutative and associative, so contributions may combine in any order.
// Requires aggregate != kNone.
int64_t Combine(Aggregate aggregate, int64_t a, int64_t b);

// "sum", "min", "max" (and "none"): for messages.
const char* AggregateName(Aggregate aggregate);

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_AGGREGATE_H_
