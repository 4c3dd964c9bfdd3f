// Transparent huge pages for the virtual-time commands.
//
// A large scenario holds gigabytes in millions of small allocations (rows,
// history, snapshots); with 4 KiB pages it spends a tenth of its time in
// page faults and more in TLB misses. glibc's malloc asks the kernel for
// transparent huge pages when the tunable glibc.malloc.hugetlb=1 is set,
// but glibc reads GLIBC_TUNABLES only when a process starts.
#ifndef BTSIM_CLI_HUGE_PAGES_H_
#define BTSIM_CLI_HUGE_PAGES_H_

namespace btsim::cli {

// When GLIBC_TUNABLES is unset, re-executes this binary (/proc/self/exe,
// same pid, arguments and descriptors) with GLIBC_TUNABLES set to
// glibc.malloc.hugetlb=1, and does not return. Returns when GLIBC_TUNABLES
// is set (to anything, even empty: that is how a user opts out, e.g. under
// valgrind, whose tools an exec would leave) or when the exec fails. Call
// it after argument parsing succeeded and before any work or output, from
// the only thread. Changes only speed: nothing depends on page size.
void ReexecWithHugePages(char** argv);

}  // namespace btsim::cli

#endif  // BTSIM_CLI_HUGE_PAGES_H_
