#include "cli/huge_pages.h"

#include <cstdlib>

#include <unistd.h>

namespace btsim::cli {

void ReexecWithHugePages(char** argv) {
  if (std::getenv("GLIBC_TUNABLES") != nullptr) return;
  if (setenv("GLIBC_TUNABLES", "glibc.malloc.hugetlb=1", 1) != 0) return;
  execv("/proc/self/exe", argv);
  // The exec failed (no /proc?): carry on with ordinary pages.
  unsetenv("GLIBC_TUNABLES");
}

}  // namespace btsim::cli
