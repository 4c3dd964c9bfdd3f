#include "cli/malloc_tunables.h"

#include <cstdlib>

#include <sys/prctl.h>
#include <unistd.h>

namespace btsim::cli {

void ReexecWithMallocTunables(char** argv) {
  if (std::getenv("GLIBC_TUNABLES") != nullptr) return;
  if (setenv("GLIBC_TUNABLES", kMallocTunables, 1) != 0) return;
  execv("/proc/self/exe", argv);
  // The exec failed (no /proc?): carry on with glibc's defaults.
  unsetenv("GLIBC_TUNABLES");
}

bool StopHugePages() { return prctl(PR_SET_THP_DISABLE, 1, 0, 0, 0) == 0; }

}  // namespace btsim::cli
