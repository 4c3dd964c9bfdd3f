// Page-size hints for large arrays that are written once in order and read
// later (the history of a run). On the development VM a fresh 4 KiB page is
// faulted in about four times faster per byte than a fresh transparent huge
// page, whose host backing is lazy (docs/PERFORMANCE.md); an array whose
// later reads are few or prefetched gains more from the cheap faults than it
// loses in TLB misses. A hint only: it changes no memory, and results never
// depend on it.
#ifndef BTSIM_BASE_PAGES_H_
#define BTSIM_BASE_PAGES_H_

#include <cstddef>

namespace btsim {

// glibc serves an allocation larger than this with a mapping of its own,
// unmapped when it is freed (its mmap threshold cannot be set higher).
inline constexpr size_t kOwnMappingBytes = size_t{32} << 20;

// Asks the kernel to back the whole 4 KiB pages inside [data, data + size)
// with 4 KiB pages, not transparent huge pages (madvise MADV_NOHUGEPAGE);
// the partial pages at either end, which other objects may share, keep
// their policy. Huge pages already there stay until the memory is unmapped.
// The range must be mapped memory this process owns. The hint outlives the
// object: memory malloc hands out again keeps it, so hint only allocations
// larger than kOwnMappingBytes. False when the range holds no whole page or
// the kernel refuses (nothing changed then).
bool PreferSmallPages(const void* data, size_t size);

}  // namespace btsim

#endif  // BTSIM_BASE_PAGES_H_
