#include "base/check.h"

#include <cstdio>
#include <cstdlib>

namespace btsim {
namespace {
thread_local std::function<std::string()> crash_context;
}  // namespace

void SetCrashContext(std::function<std::string()> describe) {
  crash_context = std::move(describe);
}

void CheckFailed(const char* condition, const char* file, int line,
                 const std::string& detail) {
  std::fprintf(stderr, "btsim: invariant failed at %s:%d: %s", file, line,
               condition);
  if (!detail.empty()) std::fprintf(stderr, " (%s)", detail.c_str());
  std::fprintf(stderr, "\n");
  if (crash_context) {
    std::fprintf(stderr, "btsim: context: %s\n", crash_context().c_str());
  }
  std::fflush(stderr);
  std::abort();
}

}  // namespace btsim
