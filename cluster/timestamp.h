// Cell timestamps as Bigtable keeps them: a point in time in whole
// microseconds since the Unix epoch, stored at millisecond granularity (a
// multiple of 1000). A length of time between two timestamps, such as a GC
// rule's maximum age, is a std::chrono::microseconds.
// Timestamp{} is the Unix epoch.
#ifndef BTSIM_CLUSTER_TIMESTAMP_H_
#define BTSIM_CLUSTER_TIMESTAMP_H_

#include <chrono>
#include <cstdint>

#include "sim/time.h"

namespace btsim::cluster {

// The clock cell timestamps belong to. Like sim::SimClock it has no now(): a
// cluster stamps cells with its injected clock's time (TimestampOf), and
// clients may choose any timestamp.
struct CellClock {
  using duration = std::chrono::microseconds;
  using rep = duration::rep;
  using period = duration::period;
  using time_point = std::chrono::time_point<CellClock, duration>;
  static constexpr bool is_steady = false;
};

using Timestamp = CellClock::time_point;

constexpr Timestamp TimestampFromMicros(int64_t micros) {
  return Timestamp(std::chrono::microseconds(micros));
}
// Microseconds since the Unix epoch: for the wire, output and encodings.
constexpr int64_t Micros(Timestamp t) { return t.time_since_epoch().count(); }

// The timestamp of simulator time `t`: whole microseconds since the epoch,
// rounded towards zero (sim::MicrosSinceEpoch).
constexpr Timestamp TimestampOf(sim::Time t) {
  return TimestampFromMicros(sim::MicrosSinceEpoch(t));
}

// `t` at Bigtable's millisecond granularity, rounded towards zero.
constexpr Timestamp TruncateToMillis(Timestamp t) {
  return std::chrono::time_point_cast<std::chrono::milliseconds>(t);
}

// Whether `t` is in the range [start, end) of a DeleteFromColumn, a
// timestamp range filter or a column tombstone, where an end of Timestamp{}
// (the epoch, 0 on the wire) means no end.
constexpr bool InTimestampRange(Timestamp t, Timestamp start, Timestamp end) {
  return t >= start && (end == Timestamp{} || t < end);
}

// The timestamp a SetCell carries to ask for the server's commit time (-1 on
// the wire). Never stored: the commit resolves it.
inline constexpr Timestamp kServerTimestamp = TimestampFromMicros(-1);

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_TIMESTAMP_H_
