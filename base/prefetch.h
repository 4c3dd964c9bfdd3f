// Prefetch hints over byte ranges: ask the CPU to bring every 64-byte cache
// line that [data, data + size) overlaps into cache, for reading or for
// writing. Hints only: they never fault (an unmapped line is skipped),
// never change memory and may be dropped, so results never depend on them.
// For a loop that will soon touch an object or slot it last touched long
// ago (the next history record, the next log entry).
//
// GCC treats a prefetch as having no effect: it deletes a call to a
// function whose only effect is prefetching unless the call is inlined
// first. Such a helper must be small enough to inline early, or marked
// [[gnu::always_inline]] (cluster::PrefetchForDestroy).
#ifndef BTSIM_BASE_PREFETCH_H_
#define BTSIM_BASE_PREFETCH_H_

#include <cstddef>
#include <cstdint>

namespace btsim {

inline constexpr size_t kCacheLine = 64;

// Calls visit(line) with the address of every cache line [data, data +
// size) overlaps, in address order; never for size 0.
template <class Visit>
void ForEachCacheLine(const void* data, size_t size, Visit visit) {
  if (size == 0) return;
  const uintptr_t first = reinterpret_cast<uintptr_t>(data);
  const uintptr_t end = first + size;
  for (uintptr_t line = first & ~uintptr_t{kCacheLine - 1}; line < end;
       line += kCacheLine) {
    visit(line);
  }
}

inline void PrefetchForRead(const void* data, size_t size) {
  ForEachCacheLine(data, size, [](uintptr_t line) {
    __builtin_prefetch(reinterpret_cast<const void*>(line), 0);
  });
}

inline void PrefetchForWrite(const void* data, size_t size) {
  ForEachCacheLine(data, size, [](uintptr_t line) {
    __builtin_prefetch(reinterpret_cast<const void*>(line), 1);
  });
}

}  // namespace btsim

#endif  // BTSIM_BASE_PREFETCH_H_
