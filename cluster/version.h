// Commit versions. Every committed mutation gets a Version, unique and totally
// ordered across an instance: the commit time (a Timestamp in whole
// microseconds, not rounded to the millisecond) shifted left by 8 bits, with
// the origin cluster's index (0-255) in the low bits. Comparing two versions
// therefore compares commit time, then origin: the last-writer-wins order
// used for conflicting cells and for tombstones.
#ifndef BTSIM_CLUSTER_VERSION_H_
#define BTSIM_CLUSTER_VERSION_H_

#include <cstdint>

#include "cluster/timestamp.h"

namespace btsim::cluster {

using Version = uint64_t;

inline constexpr int kOriginBits = 8;
inline constexpr Version kNoVersion = 0;  // "no tombstone"

inline Version MakeVersion(Timestamp commit_time, uint32_t origin) {
  return (static_cast<Version>(Micros(commit_time)) << kOriginBits) | origin;
}
inline Timestamp VersionTime(Version v) {
  return TimestampFromMicros(static_cast<int64_t>(v >> kOriginBits));
}
inline uint32_t VersionOrigin(Version v) {
  return static_cast<uint32_t>(v & ((1u << kOriginBits) - 1));
}

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_VERSION_H_
