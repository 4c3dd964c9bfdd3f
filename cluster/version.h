// Commit versions. Every committed mutation gets a Version, unique and totally
// ordered across an instance: the commit time in microseconds shifted left by
// 8 bits, with the origin cluster's index (0-255) in the low bits. Comparing
// two versions therefore compares commit time, then origin: the
// last-writer-wins order used for conflicting cells and for tombstones.
#ifndef BTSIM_CLUSTER_VERSION_H_
#define BTSIM_CLUSTER_VERSION_H_

#include <cstdint>

namespace btsim::cluster {

using Version = uint64_t;

inline constexpr int kOriginBits = 8;
inline constexpr Version kNoVersion = 0;  // "no tombstone"

inline Version MakeVersion(int64_t commit_micros, uint32_t origin) {
  return (static_cast<Version>(commit_micros) << kOriginBits) | origin;
}
inline int64_t VersionMicros(Version v) {
  return static_cast<int64_t>(v >> kOriginBits);
}
inline uint32_t VersionOrigin(Version v) {
  return static_cast<uint32_t>(v & ((1u << kOriginBits) - 1));
}

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_VERSION_H_
