// Bigtable's hard limits, enforced by the engine with INVALID_ARGUMENT.
#ifndef BTSIM_CLUSTER_LIMITS_H_
#define BTSIM_CLUSTER_LIMITS_H_

#include <cstdint>

namespace btsim::cluster {

inline constexpr int64_t kMaxRowKeyBytes = 4 * 1024;
inline constexpr int64_t kMaxQualifierBytes = 16 * 1024;
inline constexpr int64_t kMaxCellValueBytes = 100 * 1024 * 1024;
inline constexpr int64_t kMaxRowBytes = 256 * 1024 * 1024;
inline constexpr int64_t kMaxMutationsPerRequest = 100'000;
inline constexpr int64_t kMaxTablesPerInstance = 1000;
inline constexpr int64_t kMaxIdLength = 50;          // table ids
inline constexpr int64_t kMaxFamilyNameLength = 64;  // family names

}  // namespace btsim::cluster

#endif  // BTSIM_CLUSTER_LIMITS_H_
