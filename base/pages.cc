#include "base/pages.h"

#include <sys/mman.h>

#include <cstdint>

namespace btsim {

bool PreferSmallPages(const void* data, size_t size) {
  constexpr uintptr_t kPage = 4096;
  const uintptr_t begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + kPage - 1) & ~(kPage - 1);
  const uintptr_t last = (begin + size) & ~(kPage - 1);
  if (size == 0 || last <= first) return false;
  return madvise(reinterpret_cast<void*>(first), last - first,
                 MADV_NOHUGEPAGE) == 0;
}

}  // namespace btsim
