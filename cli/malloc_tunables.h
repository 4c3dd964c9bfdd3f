// glibc malloc tunables and the huge-page policy for the virtual-time
// commands.
//
// A large scenario holds gigabytes in millions of small allocations (rows,
// history, replication log entries) and frees and allocates rows of the same
// few sizes on every write. Two glibc tunables help, and glibc reads them
// (GLIBC_TUNABLES) only when a process starts:
// - glibc.malloc.hugetlb=1: malloc asks the kernel for transparent huge
//   pages (with 4 KiB pages the simulator spends a tenth of its time in page
//   faults and more in TLB misses);
// - glibc.malloc.tcache_count=65535: the per-thread cache keeps up to that
//   many freed blocks per size class instead of 7, so a row freed by one
//   write is handed to the next without going through the bins (coalescing
//   and unlinking free chunks touched cold memory on every free);
// - glibc.malloc.mmap_threshold=33554432 and trim_threshold=4294967295:
//   blocks up to 32 MiB come from the heap, and the heap is never given
//   back to the kernel. Otherwise every growth of a large vector maps fresh
//   pages and unmaps the old ones, and freed heap tops are returned: memory
//   the kernel must zero again when it is touched anew (~150 MB of the
//   benchmark's ~900 MB of page faults, at ~2-3 ms per MB on the
//   development VM).
#ifndef BTSIM_CLI_MALLOC_TUNABLES_H_
#define BTSIM_CLI_MALLOC_TUNABLES_H_

namespace btsim::cli {

// The value ReexecWithMallocTunables sets.
inline constexpr char kMallocTunables[] =
    "glibc.malloc.hugetlb=1:glibc.malloc.tcache_count=65535:"
    "glibc.malloc.mmap_threshold=33554432:"
    "glibc.malloc.trim_threshold=4294967295";

// When GLIBC_TUNABLES is unset, re-executes this binary (/proc/self/exe,
// same pid, arguments and descriptors) with GLIBC_TUNABLES set to
// kMallocTunables, and does not return. Returns when GLIBC_TUNABLES is set
// (to anything, even empty: that is how a user opts out, e.g. under
// valgrind, whose tools an exec would leave) or when the exec fails. Call
// it after argument parsing succeeded and before any work or output, from
// the only thread. Changes only speed and memory use: nothing depends on
// page size or on which freed block malloc reuses.
void ReexecWithMallocTunables(char** argv);

// Asks the kernel to back this process's later page faults with 4 KiB
// pages only (prctl PR_SET_THP_DISABLE); transparent huge pages already
// mapped stay. `btsim run` calls it once the simulation is over: the final
// snapshot and the checks then fault in their fresh memory (~150 MB on the
// benchmark) in small pages, which a VM whose host backs memory lazily
// serves several times faster per byte than huge pages, while the run's
// rows and chunks keep theirs (the history's array is on small pages from
// the start, see scenarios/runner.cc). Changes only speed. False when the
// kernel refuses (nothing changed).
bool StopHugePages();

}  // namespace btsim::cli

#endif  // BTSIM_CLI_MALLOC_TUNABLES_H_
